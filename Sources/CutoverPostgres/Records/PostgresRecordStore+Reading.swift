import Cutover
import PostgresClient

extension PostgresRecordStore {
    /// A record as stored now: its revision (the plan's revision column, or the row's `xmin`)
    /// and the columns of both formats that the table has at its phase; nil when there is none.
    ///
    /// Read through `cutover.read_record`, so it works at every phase and needs no grant on the
    /// control schema's tables; the role must be one that may read the plan's table itself
    /// (``RecordStoreError/notPermitted(_:)`` otherwise). A `jsonb` column reads as its JSON text.
    public func record(_ key: RecordKey) async throws -> StoredRecord? {
        let formatColumns = Set(Entity.legacy.columns + Entity.modern.columns)
        let query = PostgresQuery(unsafeSQL: """
            SELECT r.revision, e.key AS name, jsonb_typeof(e.value) AS kind, e.value #>> '{}' AS value
              FROM cutover.read_record($1, $2) AS r CROSS JOIN LATERAL jsonb_each(r.columns) AS e
            """, binds: [Entity.planName.postgresBind,
                         PostgresBind(utf8Text: RecordJSON.key(key, columns: Entity.keyColumns), type: .jsonb)])
        let rows: PostgresRows
        do {
            rows = try await pool.withConnection { try $0.query(query) }
        } catch let error as PostgresError where error.sqlState == .callerNotPermitted {
            throw RecordStoreError.notPermitted(error.message)
        }
        guard let first = rows.first else { return nil }
        var columns: [String: RecordColumnValue] = [:]
        for row in rows {
            let name = try row.decode(String.self, "name")
            guard formatColumns.contains(name) else { continue }
            columns[name] = RecordJSON.value(kind: try row.decode(String.self, "kind"), text: try row.decode(String?.self, "value"))
        }
        return StoredRecord(key: key, revision: try first.decode(Int64.self, "revision"), columns: columns)
    }

    /// A record's content and revision as a reader of `path`'s format sees it; nil when there is none.
    ///
    /// - Throws: ``RecordDecodingError`` naming the column when the row does not hold that
    ///   format (before expand for modern, after contract for legacy) or holds a value it does not define.
    public func read(_ key: RecordKey, as path: SavePath) async throws -> (content: Entity.Content, revision: Int64)? {
        guard let stored = try await record(key) else { return nil }
        return (try Entity.codec(for: path).decode(stored.columns), stored.revision)
    }
}
