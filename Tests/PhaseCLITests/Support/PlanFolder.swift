import CutoverTestSupport
import Foundation

/// A temporary copy of the drafts plan of SQL files (format 1, kept in
/// `Tests/Fixtures/drafts-format1` since the built-in plan became declarative), to change for
/// one test; removed with ``remove()``.
struct PlanFolder {
    let url: URL
    var path: String { url.path }

    /// Copies the format-1 drafts plan (plan.json and every SQL file) into a new temporary folder.
    static func copyOfDrafts(_ label: String) throws -> PlanFolder {
        let folder = TestScratch.url("\(label)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for file in try FileManager.default.contentsOfDirectory(atPath: source.path) where file.hasSuffix(".sql") || file == "plan.json" {
            try FileManager.default.copyItem(at: source.appendingPathComponent(file), to: folder.appendingPathComponent(file))
        }
        return PlanFolder(url: folder)
    }

    /// A new temporary folder holding `files`, each path relative to the folder.
    static func make(_ label: String, files: [String: String]) throws -> PlanFolder {
        let folder = PlanFolder(url: TestScratch.url("\(label)"))
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        for (path, text) in files { try folder.write(path, text) }
        return folder
    }

    /// Writes `text` to `file` in the folder, replacing it.
    func write(_ file: String, _ text: String) throws {
        try text.write(to: url.appendingPathComponent(file), atomically: true, encoding: .utf8)
    }

    /// The format-1 drafts plan in the source tree.
    static var source: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/drafts-format1")
    }

    /// The path of `file` in the folder.
    func path(_ file: String) -> String { url.appendingPathComponent(file).path }

    /// Rewrites plan.json with `change` applied to its text.
    func editManifest(_ change: (String) -> String) throws {
        let manifest = url.appendingPathComponent("plan.json")
        try change(try String(contentsOf: manifest, encoding: .utf8)).write(to: manifest, atomically: true, encoding: .utf8)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
