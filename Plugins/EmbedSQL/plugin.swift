import Foundation
import PackagePlugin

/// Compiles the package's `sql/` folder into the target as Swift string constants, so that a
/// built binary carries its control schema and reference plan and needs no files beside it.
@main
struct EmbedSQL: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let sqlFolder = context.package.directoryURL.appending(path: "sql")
        let files = Self.files(under: sqlFolder)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSQL.swift")
        return [
            .buildCommand(
                displayName: "Embedding sql/ into \(target.name)",
                executable: try context.tool(named: "EmbedSQLTool").url,
                arguments: [sqlFolder.path(percentEncoded: false), output.path(percentEncoded: false)]
                    + files.map { $0.path(percentEncoded: false) },
                inputFiles: files,
                outputFiles: [output]),
        ]
    }

    private static func files(under folder: URL) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [] }
        return enumerator.compactMap { $0 as? URL }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .filter { ["sql", "json", "md"].contains($0.pathExtension) }
            .sorted { $0.path < $1.path }
    }
}
