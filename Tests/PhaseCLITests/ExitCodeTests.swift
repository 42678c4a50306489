import CommandLineKit
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// Exit codes that tell "cannot reach" (69), "refused to let in" (77) and "bad input" (64) apart,
/// and bad input that never reaches the server.
@Suite("Exit codes", .timeLimit(.minutes(3)))
struct ExitCodeTests {
    private func status(_ url: String, _ arguments: [String] = ["status"]) async throws -> PhaseBinary.Run {
        try await onThread { try PhaseBinary.run(arguments, databaseURL: url) }
    }

    @Test("a URI that does not parse is bad input and its password is never echoed", arguments: [
        ("postgresql://app:Summer50%off!@db.example:5432/app", "Summer50"),
        ("postgresql://app:Summer50%off!@[::1/app", "Summer50"),
        ("postgresql://app:Wint3r-pw@[::1/app", "Wint3r-pw"),
        ("host=db.example password=Autumn 77 dbname=app", "Autumn"),
    ])
    func unparseable(url: String, secret: String) async throws {
        let run = try await status(url)
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.hasPrefix("Error: invalid connection string"), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains(secret), "\(run.diagnostics)")
        #expect(!run.output.contains(secret))
    }

    @Test("a port outside 1...65535 or not a number is bad input, before any connection",
          arguments: ["port=99999", "port=0", "port=abc", "port=-1"])
    func badPort(port: String) async throws {
        let run = try await status("host=127.0.0.1 \(port) dbname=app user=app")
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("invalid connection string"), "\(run.diagnostics)")
    }

    @Test func aRefusalToLetInIsNotUnreachable() async throws {
        let server = try await TestPostgres.shared()
        var missingDatabase = try #require(URLComponents(string: server.adminConnectionString))
        missingDatabase.path = "/no_such_database_16"
        var missingRole = try #require(URLComponents(string: server.adminConnectionString))
        missingRole.user = "no_such_role_16"
        var urls = [try #require(missingDatabase.string), try #require(missingRole.string)]
        var wrongPassword = try #require(URLComponents(string: server.adminConnectionString))
        if wrongPassword.password != nil {
            wrongPassword.password = "Wr0ng-Secret-16"
            urls.append(try #require(wrongPassword.string))
        }
        for url in urls {
            let run = try await status(url)
            #expect(run.status == 77, "\(run.diagnostics)")
            #expect(run.diagnostics.hasPrefix("Error: the database refused to let the role in: "), "\(run.diagnostics)")
            #expect(!run.diagnostics.contains("Wr0ng-Secret-16"))
        }
        let refusing = try LoopbackSocket.refusing()
        let unreachable = try await status("host=127.0.0.1 port=\(refusing.port) dbname=app user=app")
        #expect(unreachable.status == 69, "\(unreachable.diagnostics)")
        withExtendedLifetime(refusing) {}
    }

    @Test("a role without the migrator's rights is told to run phase as the migrator, without a warning about rehearsals first")
    func aRoleWithoutTheMigratorsRightsIsToldWhichRoleToUse() async throws {
        let database = try await TestPostgres.database("exit_code_privilege")
        let role = "cutover_exit_app_\(UInt32.random(in: 0...UInt32.max))"
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: "CREATE TABLE drafts (id text PRIMARY KEY, title text NOT NULL, revision bigint NOT NULL)")
            try connection.execute(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD 'app-password'; GRANT USAGE ON SCHEMA public TO \(role)")
        }
        #expect(try await status(database.connectionString, ["init"]).status == 0)
        var url = try #require(URLComponents(string: database.connectionString))
        url.user = role
        url.password = "app-password"
        let asApplication = try #require(url.string)
        for arguments in [["status"], ["switch", "legacy"]] {
            let run = try await status(asApplication, arguments)
            #expect(run.status == 1, "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.hasPrefix("Error: this role may not do that: permission denied for "), "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.contains("run phase as the migrator role, which owns the cutover schema"), "\(run.diagnostics)")
            #expect(!run.diagnostics.contains("warning"), "\(run.diagnostics)")
        }
        try await onThread { try database.connect().execute(unsafeSQL: "DROP OWNED BY \(role); DROP ROLE \(role)") }
    }

    @Test func aRetentionBeyondTheBoundIsAUsageErrorNamingIt() async throws {
        let server = try await TestPostgres.shared()
        for value in ["99999999999d", "3651d"] {
            let run = try await status(server.adminConnectionString, ["ledger", "prune", "--older-than", value])
            #expect(run.status == 64, "\(run.diagnostics)")
            #expect(run.diagnostics.hasPrefix("Error: invalid value '\(value)' for '--older-than': must be between 1d and 3650d"),
                    "\(run.diagnostics)")
        }
    }

    @Test func contractsWindowIsBounded() async throws {
        let run = try await onThread { try PhaseBinary.run(["contract", "--yes", "--window", "400d"]) }
        #expect(run.status == 64)
        #expect(run.diagnostics.hasPrefix("Error: invalid value '400d' for '--window': must be between 0s and 365d"), "\(run.diagnostics)")
    }
}
