/// The SQL files of the package's `sql/` folder, compiled into the binary.
public enum SQLFiles {
    /// The text of a file, by its path under `sql/` (for example `control/schema.sql`).
    ///
    /// - Throws: ``SQLFileError`` when the build carries no such file.
    public static func text(_ path: String) throws -> String {
        guard let text = EmbeddedSQL.files[path] else { throw SQLFileError(path: path) }
        return text
    }

    /// The paths of every file carried, sorted.
    public static var paths: [String] { EmbeddedSQL.files.keys.sorted() }
}

/// A SQL file that the build does not carry.
public struct SQLFileError: Error, Sendable, CustomStringConvertible {
    /// The path asked for, under `sql/`.
    public var path: String
    public var description: String { "no file sql/\(path) in this build of Cutover" }
}
