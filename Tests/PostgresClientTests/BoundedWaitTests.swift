import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// Nothing waits forever: session bounds in force, silent peers given up, statements cancelled.
@Suite("Bounded waits", .timeLimit(.minutes(3)))
struct BoundedWaitTests {
    static let database = Task { try await TestPostgres.database("bounded_waits") }

    @Test func sessionSettingsAreInForceAndSurviveReset() async throws {
        let database = try await Self.database.value
        var configuration = database.configuration()
        configuration.keepalives = .recommended
        configuration.tcpUserTimeout = PostgresConfiguration.recommendedTCPUserTimeout
        configuration.sessionSettings = ["statement_timeout": "7s", "lock_timeout": "3s",
                                         "client_connection_check_interval": "5s", "tcp_keepalives_idle": "10",
                                         "application_name": "from settings"]
        // The caller's own options come after the settings and win for the same name.
        configuration.parameters["options"] = "-c lock_timeout=4s -c work_mem=8MB"
        let frozen = configuration
        let shown = try await onThread { () -> [String] in
            let connection = try PostgresConnection(configuration: frozen)
            try connection.execute(unsafeSQL: "SET statement_timeout = '1s'; RESET statement_timeout")
            return try ["statement_timeout", "lock_timeout", "client_connection_check_interval", "tcp_keepalives_idle",
                        "work_mem"].map { try connection.execute(unsafeSQL: "SHOW \($0)")[0].decode(String.self, $0) }
        }
        #expect(shown == ["7s", "4s", "5s", "10", "8MB"])
    }

    @Test func aServerThatNeverAnswersTheStartupFailsTheConnect() async throws {
        let silent = try LoopbackSocket.silent()
        let configuration = PostgresConfiguration(connectionString: "host=127.0.0.1 port=\(silent.port) dbname=app user=app",
                                                  connectTimeout: .seconds(2))
        let error = try await onThread { () -> PostgresError? in
            do { _ = try PostgresConnection(configuration: configuration); return nil } catch let error as PostgresError { return error }
        }
        #expect(error?.code == .connectionFailed)
        withExtendedLifetime(silent) {}
    }

    @Test func aConnectionThatGoesSilentFailsItsQueryInsteadOfHanging() async throws {
        let database = try await Self.database.value
        var components = try #require(URLComponents(string: database.connectionString))
        let proxy = try LossyProxy(targetHost: components.host ?? "127.0.0.1", targetPort: components.port ?? 5432)
        defer { proxy.stop() }
        components.host = "127.0.0.1"
        components.port = proxy.port
        // Connecting may take a loaded machine long; what is bounded here is the silent query.
        var configuration = PostgresConfiguration(connectionString: components.string, connectTimeout: TestPostgres.connectTimeout)
        configuration.responseTimeout = .seconds(2)
        let frozen = configuration
        let (plain, commit) = try await onThread { () -> (PostgresError?, PostgresError?) in
            let connection = try PostgresConnection(configuration: frozen)
            #expect(try connection.query("SELECT 1 AS one")[0].decode(Int.self, "one") == 1)
            proxy.holdClientBytes()
            var plain: PostgresError?
            do { _ = try connection.query("SELECT 2 AS two") } catch let error as PostgresError { plain = error }
            proxy.releaseClientBytes()
            #expect(!connection.isConnected)
            // A COMMIT that gets no answer has an unknown outcome, never a definite one.
            let again = try PostgresConnection(configuration: frozen)
            var commit: PostgresError?
            do {
                try again.withTransaction { connection in
                    try connection.execute(unsafeSQL: "SELECT 3")
                    proxy.holdClientBytes()
                }
            } catch let error as PostgresError { commit = error }
            proxy.releaseClientBytes()
            return (plain, commit)
        }
        #expect(plain?.code == .connectionLost)
        #expect(plain?.message.contains("did not answer within 2") == true, "\(String(describing: plain))")
        #expect(commit?.code == .outcomeUnknown, "\(String(describing: commit))")
    }

    @Test func aCancellerStopsTheStatementInFlightFromAnotherThread() async throws {
        let database = try await Self.database.value
        let box = try await onThread { UncheckedBox(try database.connect(applicationName: "cutover-cancel-test")) }
        let canceller = box.value.canceller
        let pid = box.value.backendPID
        async let outcome = onThread { () -> PostgresError? in
            do { _ = try box.value.execute(unsafeSQL: "SELECT pg_sleep(3600)"); return nil } catch let error as PostgresError { return error }
        }
        let watching = try await onThread { UncheckedBox(try database.connect()) }
        try await onThread {
            // Wait for the statement to be running, then cancel it from here.
            while try watching.value.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = \(pid) AND query LIKE 'SELECT pg_sleep%' AND state = 'active'")[0].decode(Int.self, "n") == 0 {}
            #expect(canceller.cancel())
        }
        let error = try await outcome
        #expect(error?.sqlState == .queryCanceled)
        #expect(try await onThread { try box.value.query("SELECT 1 AS one")[0].decode(Int.self, "one") } == 1)
    }

    @Test func theServerRefusingToLetARoleInIsToldApartFromUnreachable() async throws {
        let database = try await Self.database.value
        let refusing = try LoopbackSocket.refusing()
        var wrongPassword = try #require(URLComponents(string: database.connectionString))
        var missingDatabase = wrongPassword
        var missingRole = wrongPassword
        missingDatabase.path = "/no_such_database_16"
        missingRole.user = "no_such_role_16"
        let hasPassword = wrongPassword.password != nil
        wrongPassword.password = "Wr0ng-Secret-16"
        var cases: [(String, PostgresError.Code)] = [
            (try #require(missingDatabase.string), .accessDenied),
            (try #require(missingRole.string), .accessDenied),
            ("host=127.0.0.1 port=\(refusing.port) dbname=app", .connectionFailed),
            ("host=127.0.0.1 port=99999 dbname=app", .invalidConfiguration),
            ("host=127.0.0.1 port=0 dbname=app", .invalidConfiguration),
            ("host=127.0.0.1 port=abc dbname=app", .invalidConfiguration),
        ]
        if hasPassword { cases.append((try #require(wrongPassword.string), .accessDenied)) }
        for (connectionString, expected) in cases {
            let error = try await onThread { () -> PostgresError? in
                do {
                    // The server's refusals must come as refusals, not as a timeout of a loaded machine.
                    _ = try PostgresConnection(configuration: .init(connectionString: connectionString,
                                                                    connectTimeout: TestPostgres.connectTimeout))
                    return nil
                } catch let error as PostgresError { return error }
            }
            #expect(error?.code == expected, "\(PasswordRedaction.redact(connectionString)): \(String(describing: error))")
            #expect(error.map { !$0.debugDescription.contains("Wr0ng-Secret-16") } ?? true)
        }
        withExtendedLifetime(refusing) {}
    }
}

/// Carries a connection to the one other thread that uses it while the test waits.
private struct UncheckedBox<Value>: @unchecked Sendable {
    // Safe because each test hands the value to one thread at a time.
    let value: Value
    init(_ value: Value) { self.value = value }
}
