import Foundation

/// A result column: its name and SQL type.
public struct PostgresColumn: Sendable, Equatable {
    /// The column's name as the query labelled it.
    public var name: String
    /// The column's SQL type.
    public var type: PostgresDataType
}

/// The rows and command tag of one statement's result, copied out of libpq.
///
/// ```swift
/// let rows = try connection.query("SELECT id, revision FROM drafts WHERE id = \(draftID)")
/// for row in rows {
///     let revision = try row.decode(Int64.self, "revision")
/// }
/// ```
public struct PostgresRows: RandomAccessCollection, Sendable {
    /// The result's columns, in order.
    public let columns: [PostgresColumn]
    /// The command tag, for example `UPDATE 1` or `SELECT 3`.
    public let commandTag: String
    /// The rows the command affected or returned, as the server counted them; nil for commands
    /// that report no count.
    public let affectedRows: Int?

    private let cells: [String?]

    init(columns: [PostgresColumn], cells: [String?], commandTag: String, affectedRows: Int?) {
        self.columns = columns
        self.cells = cells
        self.commandTag = commandTag
        self.affectedRows = affectedRows
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.isEmpty ? 0 : cells.count / columns.count }
    public subscript(position: Int) -> PostgresRow { PostgresRow(rows: self, index: position) }

    func cell(row: Int, column: Int) -> String? { cells[row * columns.count + column] }
    /// The first column with this name. A scan: results have few columns, and building an
    /// index for every result costs more than it saves.
    func position(of name: String) -> Int? { columns.firstIndex { $0.name == name } }
}

/// One row of a result.
public struct PostgresRow: Sendable {
    @usableFromInline let rows: PostgresRows
    let index: Int

    /// The text of a column, or nil when it is NULL. Prefer ``decode(_:_:)``.
    public func text(at column: Int) -> String? { rows.cell(row: index, column: column) }

    // The decoders are inlinable so that they are specialized where they are called: a
    // generic call into this module would look up `Optional<T>`'s metadata on every decode.

    /// Decodes the named column; a NULL is an error (ask for an optional to accept NULL).
    @inlinable
    public func decode<T: PostgresDecodable>(_ type: T.Type, _ column: String) throws -> T {
        try decode(type, at: try position(of: column, wanting: T.self))
    }

    /// Decodes the named column, NULL as nil.
    @inlinable
    public func decode<T: PostgresDecodable>(_ type: T?.Type, _ column: String) throws -> T? {
        try decode(type, at: try position(of: column, wanting: T?.self))
    }

    /// Decodes the column at a position; a NULL is an error.
    @inlinable
    public func decode<T: PostgresDecodable>(_ type: T.Type, at column: Int) throws -> T {
        guard let text = try text(checking: column, wanting: T.self) else {
            throw failure(column, T.self, "the value is NULL; decode an optional to accept NULL")
        }
        return try decode(T.self, text: text, at: column)
    }

    /// Decodes the column at a position, NULL as nil.
    @inlinable
    public func decode<T: PostgresDecodable>(_ type: T?.Type, at column: Int) throws -> T? {
        guard let text = try text(checking: column, wanting: T.self) else { return nil }
        return try decode(T.self, text: text, at: column)
    }

    /// The text of a column that must exist.
    @usableFromInline
    func text(checking column: Int, wanting type: Any.Type) throws -> String? {
        guard rows.columns.indices.contains(column) else {
            throw PostgresDecodingError(column: "#\(column)", sqlType: .unspecified, swiftType: "\(type)",
                                        reason: "the result has \(rows.columns.count) columns")
        }
        return text(at: column)
    }

    @inlinable
    func decode<T: PostgresDecodable>(_ type: T.Type, text: String, at column: Int) throws -> T {
        guard let value = T.decode(postgresText: text, type: rows.columns[column].type) else {
            throw failure(column, T.self, "the text is not a valid \(T.self)")
        }
        return value
    }

    /// Decodes a `json` or `jsonb` column into a `Decodable` value.
    public func decodeJSON<T: Decodable>(_ type: T.Type, _ column: String) throws -> T {
        let position = try position(of: column, wanting: T.self)
        let text = try decode(String.self, at: position)
        do {
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        } catch {
            throw failure(position, T.self, "the JSON does not match: \(Self.describe(error))")
        }
    }

    @usableFromInline
    func position(of name: String, wanting type: Any.Type) throws -> Int {
        guard let position = rows.position(of: name) else {
            throw PostgresDecodingError(
                column: name, sqlType: .unspecified, swiftType: "\(type)",
                reason: "no such column; the result has \(rows.columns.map(\.name).joined(separator: ", "))")
        }
        return position
    }

    @usableFromInline
    func failure(_ column: Int, _ type: Any.Type, _ reason: String) -> PostgresDecodingError {
        PostgresDecodingError(column: rows.columns[column].name, sqlType: rows.columns[column].type,
                              swiftType: "\(type)", reason: reason)
    }

    /// A decoding error's shape, without the values it may quote.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(type(of: error))" }
        switch error {
        case .typeMismatch(let type, let context): return "expected \(type) at \(path(context))"
        case .valueNotFound(let type, let context): return "missing \(type) at \(path(context))"
        case .keyNotFound(let key, let context): return "missing key \"\(key.stringValue)\" at \(path(context))"
        case .dataCorrupted(let context): return "malformed at \(path(context))"
        @unknown default: return "undecodable"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        return path.isEmpty ? "the top level" : path
    }
}
