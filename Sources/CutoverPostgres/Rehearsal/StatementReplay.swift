import Cutover
import Foundation
import PostgresClient

/// The applications' statements a rehearsal replays on the scratch copy: the plan's own, or a
/// built-in set for its legacy columns, and how each is run.
///
/// Each replay runs in a transaction that is rolled back, so the copy stays as the plan's steps
/// left it; when the plan keeps columns in two representations, its comparison of them runs in
/// that transaction too, after the statement.
struct StatementReplay {
    /// The statements replayed.
    let statements: [ApplicationStatement]
    let comparison: RepresentationComparison?
    let statementTimeout: Duration

    /// The built-in statements for `table` on the copy, made with the values of two of its rows
    /// written in: for each legacy column an update and a same-value update, then an insert of a
    /// new row, an upsert, a select and a delete, as an application that knows the legacy columns
    /// only sends them. Empty when the copy holds fewer than two rows.
    static func builtIn(table: String, key declaredKey: [String]?, legacyColumns declared: [String]?, copyColumns: [String],
                        on connection: PostgresConnection) throws -> [ApplicationStatement] {
        let key = try declaredKey.map { try $0.map { try identifier($0, on: connection) } } ?? primaryKey(of: table, on: connection)
        guard !key.isEmpty else { return [] }
        // A plan that moves no column (only `sql` operations) leaves the old application writing all of them.
        let named = try (declared ?? []).map { try identifier($0, on: connection) }
        let legacy = named.isEmpty ? copyColumns.filter { !key.contains($0) } : named
        let listed = copyColumns.map { "quote_nullable(t.\($0)::text)" }.joined(separator: ", ")
        let rows = try connection.query(PostgresQuery(unsafeSQL: """
            SELECT jsonb_build_array(\(listed)) AS literals FROM \(table) t ORDER BY \(key.map { "t.\($0)" }.joined(separator: ", ")) LIMIT 2
            """))
        guard rows.count == 2 else { return [] }
        let first = try literals(rows[0]), second = try literals(rows[1])
        func value(_ row: [String], _ column: String) -> String { copyColumns.firstIndex(of: column).map { row[$0] } ?? "NULL" }
        let predicate = key.map { "\($0) = \(value(first, $0))" }.joined(separator: " AND ")
        var statements: [ApplicationStatement] = []
        func add(_ name: String, _ sql: String) {
            statements.append(ApplicationStatement(name: name, application: .legacy, sql: sql, isBuiltIn: true))
        }
        for column in legacy {
            add("update of \(column)", "UPDATE \(table) SET \(column) = \(value(second, column)) WHERE \(predicate)")
            add("same-value update of \(column)", "UPDATE \(table) SET \(column) = \(column) WHERE \(predicate)")
        }
        let newKey = try key.map { column in (column, try newKeyValue(table: table, column: column, current: value(first, column), on: connection)) }
        let inserted = copyColumns.map { column in newKey.first { $0.0 == column }?.1 ?? value(first, column) }
        add("insert", "INSERT INTO \(table) (\(copyColumns.joined(separator: ", "))) VALUES (\(inserted.joined(separator: ", ")))")
        if !legacy.isEmpty {
            add("upsert", "INSERT INTO \(table) (\(copyColumns.joined(separator: ", "))) VALUES (\(copyColumns.map { key.contains($0) ? value(first, $0) : value(second, $0) }.joined(separator: ", "))) "
                + "ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET \(legacy.map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", "))")
        }
        add("select", "SELECT \(([key.first!] + legacy).joined(separator: ", ")) FROM \(table) WHERE \(predicate)")
        add("delete", "DELETE FROM \(table) WHERE \(predicate)")
        return statements
    }

    /// Runs every statement once on `connection`, each in a transaction rolled back, at `stage`.
    ///
    /// - Parameter compares: whether the plan's modern columns exist, so that the two
    ///   representations can be compared after each statement.
    func replay(at stage: String, compares: Bool, on connection: PostgresConnection) throws -> [ReplayOutcome] {
        let timeout = Int64((statementTimeout / .milliseconds(1)).rounded(.up))
        let comparison = compares ? comparison : nil
        let baseline = try comparison.map { comparison in
            try rolledBack(on: connection, timeout: timeout) { try disagreements(comparison, on: $0) }
        }
        return try statements.map { statement in
            if statement.application == .modern, !compares {
                return ReplayOutcome(statement: statement.name, stage: stage, kind: .skipped, detail: "the modern columns do not exist here")
            }
            do {
                let columns = try rolledBack(on: connection, timeout: timeout) { connection -> [String] in
                    _ = try connection.execute(unsafeSQL: statement.sql)
                    guard let comparison, let baseline else { return [] }
                    return try disagreements(comparison, on: connection).filter { !baseline.contains($0) }
                }
                if columns.isEmpty { return ReplayOutcome(statement: statement.name, stage: stage, kind: .worked) }
                return ReplayOutcome(statement: statement.name, stage: stage, kind: .disagreed, detail: columns.joined(separator: ", "))
            } catch let error as PostgresError where error.code == .server {
                return ReplayOutcome(statement: statement.name, stage: stage, kind: .failed, detail: error.description)
            }
        }
    }

    /// The columns of the rows that disagree, each as `key column`, with the plan's comparison.
    private func disagreements(_ comparison: RepresentationComparison, on connection: PostgresConnection) throws -> Set<String> {
        let report = try RepresentationCompare.compare(comparison, options: .init(sample: nil, listLimit: 100), on: connection, inOpenTransaction: true)
        return Set(report.listed.map { "\($0.column) (key \(($0.key ?? []).joined(separator: ", ")))" })
    }

    private func rolledBack<T>(on connection: PostgresConnection, timeout: Int64, _ body: (PostgresConnection) throws -> T) throws -> T {
        _ = try connection.execute(unsafeSQL: "BEGIN; SET LOCAL statement_timeout = '\(timeout)ms'")
        defer { if connection.isConnected { _ = try? connection.execute(unsafeSQL: "ROLLBACK") } }
        return try body(connection)
    }

    /// `name` quoted only where SQL needs it, as `format('%I')` (and the copy's column list) writes it.
    private static func identifier(_ name: String, on connection: PostgresConnection) throws -> String {
        try connection.query("SELECT format('%I', \(name)::text) AS name")[0].decode(String.self, "name")
    }

    private static func literals(_ row: PostgresRow) throws -> [String] {
        try row.decodeJSON([String].self, "literals")
    }

    private static func primaryKey(of table: String, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT format('%I', a.attname) AS name FROM pg_index i
              JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) ON true
              JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
             WHERE i.indrelid = to_regclass(\(table)) AND i.indisprimary ORDER BY k.position
            """).map { try $0.decode(String.self, "name") }
    }

    /// A key value no row of the copy has: a number past the largest, a fresh UUID, or the
    /// current text with a suffix.
    private static func newKeyValue(table: String, column: String, current: String, on connection: PostgresConnection) throws -> String {
        let type = try connection.query("""
            SELECT format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a
             WHERE a.attrelid = to_regclass(\(table)) AND a.attnum > 0 AND NOT a.attisdropped AND format('%I', a.attname) = \(column)
            """).first?.decode(String.self, "type") ?? "text"
        let query: String
        switch type {
        case "smallint", "integer", "bigint", "numeric": query = "SELECT quote_literal((coalesce(max(\(column)), 0) + 1)::text) AS v FROM \(table)"
        case "uuid": query = "SELECT quote_literal(gen_random_uuid()::text) AS v"
        default: query = "SELECT quote_literal(max(\(column))::text || '-rehearsal') AS v FROM \(table)"
        }
        return try connection.query(PostgresQuery(unsafeSQL: query))[0].decode(String?.self, "v") ?? current
    }
}
