import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// The roles of `sql/roles/` under names of their own (roles belong to the whole server, and
/// other test runs may share it), in a database holding the legacy drafts table.
struct Roles: Sendable {
    let database: TestDatabase
    let migrator: String
    let app: String
    let password: String

    /// Makes the roles with `sql/roles/create_roles.sql`, runs `body`, and drops them again.
    static func withRoles(_ label: String, _ body: (Roles) async throws -> Void) async throws {
        let database = try await TestPostgres.database(label)
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let roles = Roles(database: database, migrator: "cutover_migrator_\(suffix)", app: "cutover_app_\(suffix)",
                          password: UUID().uuidString)
        try await roles.admin { connection in
            let isSuperuser = try connection.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0].decode(Bool.self, "rolsuper")
            try #require(isSuperuser, "the roles tests create roles, which takes a superuser; DATABASE_URL's role is not one")
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            try connection.execute(unsafeSQL: try roles.sql("roles/create_roles.sql"))
            for role in [roles.migrator, roles.app] {
                try connection.execute(unsafeSQL: "ALTER ROLE \(try connection.quoteIdentifier(role)) PASSWORD '\(roles.password)'")
            }
        }
        do {
            try await body(roles)
        } catch {
            await roles.drop()
            throw error
        }
        await roles.drop()
    }

    /// A file of `sql/roles/` (or any SQL) with the roles' names in place of the runbook's.
    func sql(_ file: String) throws -> String {
        try SQLFiles.text(file).replacing("cutover_migrator", with: migrator).replacing("cutover_app", with: app)
    }

    func configuration(_ role: String, applicationName: String? = nil) -> PostgresConfiguration {
        PostgresConfiguration(connectionString: database.connectionString, applicationName: applicationName,
                              connectTimeout: TestPostgres.connectTimeout, parameters: ["user": role, "password": password])
    }

    /// Runs `body` on a connection as the server's administrator (the tests' own role).
    @discardableResult
    func admin<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let database = database
        return try await onThread { try body(try database.connect()) }
    }

    @discardableResult
    func asApplication<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let configuration = configuration(app)
        return try await onThread { try body(try PostgresConnection(configuration: configuration)) }
    }

    /// An older control schema and its application grants, installed as the migrator as they
    /// shipped (`schema` and `grants` from a `ControlSchemaVersion…` fixture), recorded as `version`;
    /// `then` runs next on the same connection.
    func installAsMigrator(version: Int, schema: String, grants: String,
                           then: @escaping @Sendable (PostgresConnection) throws -> Void = { _ in }) async throws {
        let configuration = configuration(migrator)
        let grants = grants.replacing("cutover_migrator", with: migrator).replacing("cutover_app", with: app)
        try await onThread {
            let connection = try PostgresConnection(configuration: configuration)
            try connection.execute(unsafeSQL: schema)
            try connection.execute(unsafeSQL: "INSERT INTO cutover.schema_version (version) VALUES (\(version))")
            try connection.execute(unsafeSQL: grants)
            try then(connection)
        }
    }

    /// `phase init` and the application's grants, as the migrator: the runbook's steps 2 and 3.
    func installAsMigrator() async throws {
        let grants = try sql("roles/grant_application.sql")
        let configuration = configuration(migrator)
        try await onThread {
            let connection = try PostgresConnection(configuration: configuration)
            try PhaseRunner(connection: connection, source: try PlanSource.builtIn()).initialize()
            try connection.execute(unsafeSQL: grants)
        }
    }

    /// This binary's control schema installed over an older one as the migrator, then the
    /// application's grants run again, as the runbook asks after an upgrade; returns what the
    /// installer did.
    func upgradeAsMigrator() async throws -> ControlSchema.InstallOutcome {
        let grants = try sql("roles/grant_application.sql")
        let configuration = configuration(migrator)
        return try await onThread {
            let connection = try PostgresConnection(configuration: configuration)
            let outcome = try ControlSchema.install(on: connection)
            try connection.execute(unsafeSQL: grants)
            return outcome
        }
    }

    /// The control schema's file run again as the migrator over what is installed, then the
    /// installer; returns what the installer did (`.current` when nothing was left to do).
    func reinstallAsMigrator() async throws -> ControlSchema.InstallOutcome {
        let configuration = configuration(migrator)
        return try await onThread {
            let connection = try PostgresConnection(configuration: configuration)
            try connection.execute(unsafeSQL: try SQLFiles.text(ControlSchema.file))
            return try ControlSchema.install(on: connection)
        }
    }

    /// Runs plan steps as the migrator, with no modern-writer window to wait out.
    func runAsMigrator(_ steps: [PhaseStep]) async throws {
        let configuration = configuration(migrator)
        try await onThread {
            let connection = try PostgresConnection(configuration: configuration)
            let runner = PhaseRunner(connection: connection, source: try PlanSource.builtIn(),
                                     options: .init(modernWriterWindow: .zero))
            for step in steps { try runner.run(step) }
        }
    }

    func columns() async throws -> [String] {
        try await admin { connection in
            try connection.query("""
                SELECT attname FROM pg_attribute WHERE attrelid = 'drafts'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum
                """).map { try $0.decode(String.self, "attname") }
        }
    }

    /// Drops both roles and everything they own or were granted in this database.
    func drop() async {
        _ = try? await admin { [migrator, app] connection in
            let names = try [migrator, app].map { try connection.quoteIdentifier($0) }.joined(separator: ", ")
            try connection.execute(unsafeSQL: """
                REASSIGN OWNED BY \(names) TO current_user;
                DROP OWNED BY \(names);
                DROP ROLE \(names);
                """)
        }
    }
}
