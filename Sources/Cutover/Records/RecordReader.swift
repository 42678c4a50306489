/// Reads a stored record of an entity as one reader of the migration reads it: the codecs registry of records.
///
/// A modern reader reads the modern format and, where a row holds no modern value yet
/// (written by an old writer and not backfilled), the legacy one: new readers tolerate
/// legacy-written records. A legacy reader reads the legacy format only, the modern
/// writer's records included, since both formats are kept in step until contract; once
/// contract has removed the legacy columns it gets ``RecordReadError/formatNotStored(_:)``.
/// A row that no format it reads can read is ``RecordReadError/unreadable(_:)``, naming
/// every format tried and its column, never a value.
///
/// ```swift
/// let status = try RecordReader<Orders>(as: .modern).read(row)
/// ```
public struct RecordReader<Entity: RecordEntity>: Sendable {
    /// The reader's own format.
    public let path: SavePath

    /// A reader of `path`'s format.
    public init(as path: SavePath) {
        self.path = path
    }

    /// The formats this reader reads, in the order it tries them.
    public var formats: [SavePath] {
        path == .modern ? [.modern, .legacy] : [.legacy]
    }

    /// The content this reader sees in `row`, a stored record's columns by name.
    ///
    /// A format is tried only when the row holds all of its columns; a column that is
    /// NULL is held, and counts as no value of that format.
    public func read(_ row: [String: RecordColumnValue]) throws(RecordReadError) -> Entity.Content {
        var problems: [RecordReadError.Attempt] = []
        var stored = false
        for format in formats {
            let codec = Entity.codec(for: format)
            guard codec.columns.allSatisfy({ row[$0] != nil }) else { continue }
            stored = true
            do {
                return try codec.decode(row)
            } catch {
                problems.append(RecordReadError.Attempt(format: format, problem: error))
            }
        }
        guard stored else { throw .formatNotStored(path) }
        throw .unreadable(problems)
    }
}
