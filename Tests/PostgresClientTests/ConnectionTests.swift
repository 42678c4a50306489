import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import PostgresFaults
import Testing

@Suite("Connections")
struct ConnectionTests {
    static let database = Task { try await TestPostgres.database("connections") }

    @Test func connectsAndReportsItsSession() async throws {
        let database = try await Self.database.value
        let (name, pid, ownPID, db, version) = try await onThread {
            let connection = try database.connect(applicationName: "cutover-connection-test")
            let row = try connection.query("SELECT current_setting('application_name') AS name, pg_backend_pid() AS pid, current_database() AS db")[0]
            return (try row.decode(String.self, "name"), try row.decode(Int32.self, "pid"), connection.backendPID,
                    try row.decode(String.self, "db"), connection.serverVersion)
        }
        #expect(name == "cutover-connection-test")
        #expect(pid == ownPID)
        #expect(db == database.name)
        #expect(version >= 140000)
    }

    @Test func aWrongPasswordInAURIIsNeverPrinted() async throws {
        let database = try await Self.database.value
        var components = try #require(URLComponents(string: database.connectionString))
        guard components.password != nil else { return } // a DATABASE_URL without a password: nothing to leak
        components.password = "Wr0ngSecret-4711"
        let url = try #require(components.string)
        let error = try await onThread { () -> PostgresError? in
            do { _ = try PostgresConnection(configuration: .init(connectionString: url)); return nil } catch let error as PostgresError { return error }
        }
        let failure = try #require(error)
        #expect(failure.code == .accessDenied)
        #expect(failure.description.contains("password authentication failed"))
        for text in [failure.description, failure.debugDescription, "\(failure)", String(reflecting: failure)] {
            #expect(!text.contains("Wr0ngSecret-4711"))
        }
    }

    @Test("a password in a connection string that fails never appears in the error", arguments: [
        ("host=127.0.0.1 port=PORT user=app password=Sup3rSecret-9 connect_timeout=2", PostgresError.Code.connectionFailed),
        ("host=127.0.0.1 port=PORT user=app password='Sup3r Secret-9' connect_timeout=2", .connectionFailed),
        ("postgresql://app:Sup3rSecret-9@127.0.0.1:PORT/app?connect_timeout=2", .connectionFailed),
        ("postgresql://app@127.0.0.1:PORT/app?password=Sup3rSecret-9&connect_timeout=2", .connectionFailed),
        ("postgresql://app:Sup3rSecret-9@127.0.0.1:notaport/app", .invalidConfiguration),
        ("postgresql://app:Sup3rSecret-9@127.0.0.1:PORT/app?nosuchoption=1", .invalidConfiguration),
        ("host=127.0.0.1 password='Sup3rSecret-9", .invalidConfiguration),
        ("host=127.0.0.1 password=Sup3rSecret-9 nosuchkeyword=1", .invalidConfiguration),
    ])
    func passwordsStayOutOfErrors(template: String, code: PostgresError.Code) async throws {
        let closed = try LoopbackSocket.refusing()
        let connectionString = template.replacing("PORT", with: String(closed.port))
        let failure = try await onThread { () -> PostgresError? in
            do { _ = try PostgresConnection(configuration: .init(connectionString: connectionString)); return nil } catch let error as PostgresError { return error }
        }
        let error = try #require(failure)
        // A string libpq cannot parse is refused before any connection is tried; one it can
        // parse fails at the port.
        #expect(error.code == code, "\(error)")
        for text in [error.description, error.debugDescription, error.message] {
            #expect(!text.contains("Sup3rSecret"), "leaked in: \(text)")
            #expect(!text.contains("Sup3r Secret"), "leaked in: \(text)")
        }
        withExtendedLifetime(closed) {}
    }

    @Test(.timeLimit(.minutes(3)))
    func anUnreachableServerFailsClearlyWithinTheConnectTimeout() async throws {
        let silent = try LoopbackSocket.silent()
        let configuration = PostgresConfiguration(connectionString: "host=127.0.0.1 port=\(silent.port) user=app dbname=app",
                                                  connectTimeout: .seconds(2))
        let started = ContinuousClock.now
        let failure = try await onThread { () -> PostgresError? in
            do { _ = try PostgresConnection(configuration: configuration); return nil } catch let error as PostgresError { return error }
        }
        let elapsed = ContinuousClock.now - started
        let error = try #require(failure)
        #expect(error.code == .connectionFailed)
        #expect(error.description.hasPrefix("could not connect to PostgreSQL:"))
        #expect(error.description.contains("timeout"))
        // libpq counts the timeout in whole seconds of the wall clock, so 2 s may end after 1 s.
        #expect(elapsed >= .milliseconds(900))
        // Bounded by the timeout, with room for a loaded machine: never the minutes of an unbounded wait.
        #expect(elapsed < .seconds(30))
        withExtendedLifetime(silent) {}
    }

    @Test func aRefusedPortFailsAtOnce() async throws {
        let closed = try LoopbackSocket.refusing()
        let port = closed.port
        let failure = try await onThread { () -> PostgresError? in
            do {
                _ = try PostgresConnection(configuration: .init(connectionString: "host=127.0.0.1 port=\(port) connect_timeout=30"))
                return nil
            } catch let error as PostgresError { return error }
        }
        #expect(failure?.code == .connectionFailed)
        // Refused, not waited out: a timeout would say "timeout expired" after 30 s. (How fast
        // is not asserted: a loaded machine decides that.)
        #expect(failure?.description.contains("refused") == true)
        #expect(failure?.description.contains("timeout expired") == false)
        withExtendedLifetime(closed) {}
    }

    @Test func aMissingDatabaseSaysSo() async throws {
        let database = try await Self.database.value
        let url = TestPostgres.connectionString(database.connectionString, database: "no_such_database_here")
        let failure = try await onThread { () -> PostgresError? in
            do { _ = try PostgresConnection(configuration: .init(connectionString: url)); return nil } catch let error as PostgresError { return error }
        }
        #expect(failure?.code == .accessDenied)
        #expect(failure?.description.contains("no_such_database_here") == true)
    }

    @Test func noticesGoToTheHandlerNotToStandardError() async throws {
        let database = try await Self.database.value
        let notices = try await onThread { () -> [String] in
            let connection = try database.connect()
            var seen: [String] = []
            connection.noticeHandler = { seen.append($0) }
            try connection.execute(unsafeSQL: "DO $$ BEGIN RAISE NOTICE 'hello from the server'; END $$")
            return seen
        }
        #expect(notices.count == 1)
        #expect(notices.first?.contains("hello from the server") == true)
    }
}
