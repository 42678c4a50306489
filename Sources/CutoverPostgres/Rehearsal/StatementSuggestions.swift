import Cutover
import PostgresClient

/// The statements `pg_stat_statements` has seen on a plan's table: a starting point for the
/// plan's `statements`, which a rehearsal replays (`phase rehearse --suggest`).
///
/// `pg_stat_statements` keeps statements normalized, with `$1`, `$2` … where the application
/// sent values; a plan's statements need sample values written in, so each suggestion says which
/// parameters to fill. A statement that names one of the plan's modern columns is the new
/// application's; any other the old one's.
public enum StatementSuggestions {
    /// One statement seen on the table.
    public struct Suggestion: Sendable, Equatable {
        /// How often the server ran it since its statistics were reset.
        public var calls: Int64
        /// Its normalized text.
        public var sql: String
        /// Which application sends it, judged by the columns it names.
        public var application: ApplicationStatement.Application
        /// How many `$n` parameters need a sample value.
        public var parameters: Int
    }

    /// Why there is nothing to suggest from.
    public enum Unavailable: Error, Sendable, Equatable, CustomStringConvertible {
        /// The extension is not installed in this database.
        case notInstalled
        /// It is installed but not loaded by the server (`shared_preload_libraries`).
        case notLoaded(String)

        public var description: String {
            switch self {
            case .notInstalled:
                "pg_stat_statements is not installed in this database: add it to shared_preload_libraries, restart, and run CREATE EXTENSION pg_stat_statements"
            case .notLoaded(let reason):
                "pg_stat_statements cannot be read (\(reason)): it must be in shared_preload_libraries"
            }
        }
    }

    /// Up to `limit` statements of this database that name `table`, most called first.
    ///
    /// - Parameter modernColumns: the plan's modern columns, by which a new application's
    ///   statement is told from an old one's.
    public static func seen(on table: String, modernColumns: [String], limit: Int = 20,
                            on connection: PostgresConnection) throws -> [Suggestion] {
        let schema = try connection.query("""
            SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'
            """).first?.decode(String.self, "nspname")
        guard let schema else { throw Unavailable.notInstalled }
        // The table's own name, as the server resolves the plan's (quoted or not, with or without its schema).
        guard let name = try connection.query("SELECT c.relname FROM pg_class c WHERE c.oid = to_regclass(\(table))").first?
            .decode(String.self, "relname") else { throw RehearsalError.noTable(table) }
        do {
            return try connection.query(PostgresQuery(unsafeSQL: """
                SELECT s.calls, s.query FROM \(try connection.quoteIdentifier(schema)).pg_stat_statements s
                 WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND s.query ~* ('\\m' || $1 || '\\M')
                   AND s.query !~* '\\m(pg_catalog|pg_stat_statements|cutover)\\.'
                   AND s.query ~* '^\\s*(with|insert|update|delete|select|merge)\\M'
                 ORDER BY s.calls DESC, s.query LIMIT $2
                """, binds: [regexQuoted(name).postgresBind, Int64(limit).postgresBind])).map { row in
                let sql = try row.decode(String.self, "query")
                let lowered = sql.lowercased()
                let isModern = modernColumns.contains { lowered.contains($0.lowercased()) }
                return Suggestion(calls: try row.decode(Int64.self, "calls"), sql: sql, application: isModern ? .modern : .legacy,
                                  parameters: parameterCount(sql))
            }
        } catch let error as PostgresError where error.code == .server {
            throw Unavailable.notLoaded(error.message)
        }
    }

    /// The highest `$n` in `sql`.
    static func parameterCount(_ sql: String) -> Int {
        var highest = 0
        var digits = ""
        var afterDollar = false
        for character in sql + " " {
            if afterDollar, character.isNumber {
                digits.append(character)
                continue
            }
            if afterDollar, let number = Int(digits) { highest = max(highest, number) }
            afterDollar = character == "$"
            digits = ""
        }
        return highest
    }

    private static func regexQuoted(_ text: String) -> String {
        String(text.flatMap { "\\^$.|?*+()[]{}".contains($0) ? ["\\", $0] : [$0] })
    }
}
