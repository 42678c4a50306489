import PostgresClient

/// Cutover's own tables and functions, in the `cutover` schema, and their version.
///
/// `sql/control/schema.sql` creates them idempotently. ``install(on:)`` runs it in one
/// transaction when the database holds no control schema or an older one, refuses one newer
/// than this binary knows, and does nothing when it is current. Applications whose role may
/// not run DDL call ``verify(on:for:)`` instead, which only reads.
///
/// `phase` works only with its own version. An application works with any version whose
/// application side is the same as its own: from ``applicationSideSince`` up to its own, and a
/// newer one whose installation says its application side has been the same since this
/// version or an older one (the installer records its ``applicationSideSince``). So
/// `phase init` of a newer Cutover does not stop an older application from starting, nor a
/// newer application wait for `phase init`, when the versions between them leave the
/// application's side alone.
///
/// ```swift
/// let outcome = try ControlSchema.install(on: connection)   // .installed(from: nil)
/// ```
public enum ControlSchema {
    /// The version of the control schema this binary creates and understands.
    public static let version = 15

    /// The oldest version whose application side (what the store, the fleet's writer path and
    /// the reader registry use) is this version's: applications of this binary work with a
    /// schema installed from it on, and applications of it or later with this binary's schema,
    /// which records it as `schema_version.applications_from`. Version 13 added
    /// `cutover.count_rows`, which only `phase` calls; 14 and 15 changed only what the save
    /// and read functions refuse, not how they are called.
    public static let applicationSideSince = 12

    /// Who checks the control schema: `phase`, which needs its own version, or an
    /// application, which needs only what it calls to be as it knows it.
    public enum Consumer: Sendable, Equatable {
        /// `phase` and the runner: this binary's version exactly.
        case migrator
        /// The store, the fleet's writer path and the reader registry of an application.
        case application
    }

    /// The file under `sql/` that creates the control schema.
    public static let file = "control/schema.sql"

    /// Serialises installers: the first 8 bytes of sha256("cutover.control-schema").
    static let installLockKey: Int64 = 0x0c07_0ed5_c4e3_a001

    /// What ``install(on:)`` did.
    public enum InstallOutcome: Sendable, Equatable {
        /// The schema was created (`from` nil) or upgraded from an older version.
        case installed(from: Int?)
        /// The schema was already at this binary's version; nothing changed.
        case current
    }

    /// Creates or upgrades the control schema in one transaction.
    ///
    /// - Throws: ``ControlSchemaError/newerThanBinary(found:known:)`` when the database's
    ///   control schema is newer than this binary; a ``PostgresError`` from the server.
    @discardableResult
    public static func install(on connection: PostgresConnection) throws -> InstallOutcome {
        let sql = try SQLFiles.text(file)
        return try connection.withTransaction { connection in
            try connection.query("SELECT pg_advisory_xact_lock(\(installLockKey))")
            let found = try installedVersion(on: connection)
            if let found, found > version { throw ControlSchemaError.newerThanBinary(found: found, known: version) }
            if found == version { return .current }
            try connection.execute(unsafeSQL: sql)
            try connection.query("""
                INSERT INTO cutover.schema_version (version, applications_from) VALUES (\(version), \(applicationSideSince))
                ON CONFLICT (singleton) DO UPDATE
                   SET version = EXCLUDED.version, applications_from = EXCLUDED.applications_from, installed_at = now()
                """)
            return .installed(from: found)
        }
    }

    /// Checks, without changing anything, that `consumer` can work with the control schema:
    /// at this binary's version for the migrator; for an application, any version from
    /// ``applicationSideSince`` up to this one, or a newer one installed as working with this
    /// version's applications.
    ///
    /// - Throws: ``ControlSchemaError`` saying what is wrong and what to run.
    public static func verify(on connection: PostgresConnection, for consumer: Consumer = .migrator) throws {
        guard let found = try installedVersion(on: connection) else { throw ControlSchemaError.missing(known: version) }
        if found == version { return }
        if consumer == .application {
            if found < version, found >= applicationSideSince { return }
            if found > version, let from = try installedApplicationsFrom(on: connection), from <= version { return }
        }
        if found > version { throw ControlSchemaError.newerThanBinary(found: found, known: version) }
        throw ControlSchemaError.olderThanBinary(found: found, known: version)
    }

    /// The oldest version whose applications work with the installed schema, which is newer
    /// than this binary's and so records it.
    static func installedApplicationsFrom(on connection: PostgresConnection) throws -> Int? {
        try connection.query("SELECT applications_from FROM cutover.schema_version")
            .first?.decode(Int?.self, "applications_from")
    }

    /// The installed version, or nil when there is no control schema.
    public static func installedVersion(on connection: PostgresConnection) throws -> Int? {
        let exists = try connection.query("SELECT to_regclass('cutover.schema_version') IS NOT NULL AS present")[0]
            .decode(Bool.self, "present")
        guard exists else { return nil }
        let rows = try connection.query("SELECT version FROM cutover.schema_version")
        return try rows.first?.decode(Int.self, "version")
    }
}

/// The control schema is missing or of another version than this binary's.
public enum ControlSchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// There is no control schema in this database.
    case missing(known: Int)
    /// The control schema is older than this binary's.
    case olderThanBinary(found: Int, known: Int)
    /// The control schema was installed by a newer Cutover.
    case newerThanBinary(found: Int, known: Int)

    public var description: String {
        switch self {
        case .missing(let known):
            "the database has no Cutover control schema; run 'phase init' (this binary installs version \(known))"
        case .olderThanBinary(let found, let known):
            "the Cutover control schema is version \(found), older than this binary's \(known); run 'phase init' to upgrade it"
        case .newerThanBinary(let found, let known):
            "the Cutover control schema is version \(found), newer than this binary knows (\(known)); use a newer Cutover"
        }
    }
}
