import Foundation
import PostgresClient

/// The rehearsals of plans recorded in the control schema (`cutover.rehearsals`), and the
/// removal of scratch databases whose rehearsal was killed.
public enum RehearsalRegistry {
    /// One recorded rehearsal.
    public struct Record: Sendable, Equatable {
        /// Its number.
        public var id: Int64
        /// The plan rehearsed.
        public var plan: String
        /// The plan's checksum when it was rehearsed.
        public var checksum: String
        /// The scratch database it ran in.
        public var scratchDatabase: String
        /// Who ran it.
        public var databaseRole: String
        /// The operating-system user who ran it.
        public var osUser: String
        /// When it started (as the server writes it).
        public var startedAt: String
        /// When it ended; nil while it runs.
        public var finishedAt: String?
        /// `passed`, `failed`, `error` or `interrupted`; nil while it runs.
        public var verdict: String?
        /// How many rows it copied.
        public var sampleRows: Int64
    }

    private static let columns = """
        id, plan, checksum, scratch_database, database_role, os_user, started_at::text AS started_at,
        finished_at::text AS finished_at, verdict, sample_rows
        """

    /// Records a rehearsal of `plan` about to make `scratchDatabase`, run by this session.
    static func begin(plan: String, checksum: String, scratchDatabase: String, sampleRows: Int64, osUser: String,
                      on connection: PostgresConnection) throws -> Int64 {
        try connection.query("""
            INSERT INTO cutover.rehearsals (plan, checksum, scratch_database, pid, backend_start, os_user, sample_rows)
            SELECT \(plan), \(checksum), \(scratchDatabase), a.pid, a.backend_start, \(osUser), \(sampleRows)
              FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()
            RETURNING id
            """)[0].decode(Int64.self, "id")
    }

    /// Records how rehearsal `id` ended, with its report, and that its scratch database is gone
    /// when `isDropped`.
    static func finish(_ id: Int64, verdict: String, report: String?, isDropped: Bool, on connection: PostgresConnection) throws {
        try connection.query("""
            UPDATE cutover.rehearsals SET finished_at = now(), verdict = \(verdict), report = \(report)::jsonb,
                   scratch_dropped_at = CASE WHEN \(isDropped) THEN now() END
             WHERE id = \(id)
            """)
    }

    /// The latest rehearsal of `plan`, if any.
    public static func latest(plan: String, on connection: PostgresConnection) throws -> Record? {
        try connection.query(PostgresQuery(unsafeSQL: "SELECT \(columns) FROM cutover.rehearsals WHERE plan = $1 ORDER BY id DESC LIMIT 1",
                                           binds: [plan.postgresBind])).first.map(record)
    }

    /// The latest rehearsal of `plan` with `checksum` that passed, if any.
    public static func latestPassed(plan: String, checksum: String, on connection: PostgresConnection) throws -> Record? {
        try connection.query(PostgresQuery(unsafeSQL: """
            SELECT \(columns) FROM cutover.rehearsals WHERE plan = $1 AND checksum = $2 AND verdict = 'passed' ORDER BY id DESC LIMIT 1
            """, binds: [plan.postgresBind, checksum.postgresBind])).first.map(record)
    }

    /// Drops every scratch database whose rehearsal's session has ended without removing it (a
    /// rehearsal killed with SIGKILL, or whose server connection broke), and records a
    /// rehearsal that never finished as interrupted.
    ///
    /// Does nothing before control schema 10. A database this role may not drop is left, and
    /// its name returned among `failed` for the caller to report.
    ///
    /// - Returns: the databases dropped, and those that could not be.
    @discardableResult
    public static func dropAbandoned(on connection: PostgresConnection) throws -> (dropped: [String], failed: [String]) {
        let present = try connection.query("SELECT to_regclass('cutover.rehearsals') IS NOT NULL AS present")[0].decode(Bool.self, "present")
        guard present else { return ([], []) }
        let abandoned = try connection.query("""
            SELECT r.id, r.scratch_database FROM cutover.rehearsals r
             WHERE r.scratch_dropped_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.pid AND a.backend_start = r.backend_start)
             ORDER BY r.id
            """)
        var dropped: [String] = []
        var failed: [String] = []
        for row in abandoned {
            let id = try row.decode(Int64.self, "id")
            let database = try row.decode(String.self, "scratch_database")
            do {
                try ScratchDatabase.drop(database, on: connection)
                try connection.query("""
                    UPDATE cutover.rehearsals SET scratch_dropped_at = now(),
                           verdict = coalesce(verdict, 'interrupted'), finished_at = coalesce(finished_at, now())
                     WHERE id = \(id)
                    """)
                dropped.append(database)
            } catch let error as PostgresError where error.code == .server {
                failed.append(database)
            }
        }
        return (dropped, failed)
    }

    private static func record(_ row: PostgresRow) throws -> Record {
        Record(id: try row.decode(Int64.self, "id"), plan: try row.decode(String.self, "plan"),
               checksum: try row.decode(String.self, "checksum"), scratchDatabase: try row.decode(String.self, "scratch_database"),
               databaseRole: try row.decode(String.self, "database_role"), osUser: try row.decode(String.self, "os_user"),
               startedAt: try row.decode(String.self, "started_at"), finishedAt: try row.decode(String?.self, "finished_at"),
               verdict: try row.decode(String?.self, "verdict"), sampleRows: try row.decode(Int64.self, "sample_rows"))
    }
}

/// The scratch database a rehearsal makes on the plan's server and always removes.
enum ScratchDatabase {
    /// A new name for a scratch database: `cutover_rehearsal_` and random letters.
    static func name() -> String {
        "cutover_rehearsal_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    /// Makes `name` from `template0`, with the encoding and collation of the database `connection` is in.
    static func create(_ name: String, like connection: PostgresConnection) throws {
        let row = try connection.query("""
            SELECT pg_encoding_to_char(encoding) AS encoding, datcollate, datctype FROM pg_database WHERE datname = current_database()
            """)[0]
        let encoding = try row.decode(String.self, "encoding")
        let collate = try row.decode(String.self, "datcollate")
        let ctype = try row.decode(String.self, "datctype")
        do {
            _ = try connection.execute(unsafeSQL: """
                CREATE DATABASE \(try connection.quoteIdentifier(name)) TEMPLATE template0 ENCODING \(literal(encoding)) \
                LC_COLLATE \(literal(collate)) LC_CTYPE \(literal(ctype))
                """)
        } catch let error as PostgresError where error.sqlState == .insufficientPrivilege {
            let role = try connection.query("SELECT current_user AS role")[0].decode(String.self, "role")
            throw RehearsalError.cannotCreateDatabase(role: role, reason: error.message)
        }
    }

    /// Drops `name`, ending any session still in it.
    static func drop(_ name: String, on connection: PostgresConnection) throws {
        _ = try connection.execute(unsafeSQL: "DROP DATABASE IF EXISTS \(try connection.quoteIdentifier(name)) WITH (FORCE)")
    }

    private static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}
