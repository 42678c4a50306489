import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Testing

/// `phase soak` and `phase demo` with the application's saves going through a real PgBouncer
/// (Debian's 1.18) in transaction mode, fewer server connections than clients, while the runner
/// and LISTEN go direct.
@Suite("phase soak and demo through PgBouncer", .timeLimit(.minutes(3)))
struct PooledSoakTests {
    /// A cluster of the test's own (so that no other test counts its scratch databases),
    /// PgBouncer in transaction mode in front of it with 4 server connections, and the URLs of both.
    private static func pooledServer() async throws -> (server: String, cluster: EphemeralCluster, pooler: PgBouncerProcess, pooled: String) {
        let cluster = try await EphemeralCluster.start()
        let server = cluster.url()
        let pooler = try await PgBouncerProcess.start(server: server, options: .init(poolMode: .transaction, poolSize: 4))
        return (server, cluster, pooler, try pooler.connectionString(for: server))
    }

    @Test func theSoakThroughATransactionPoolerLosesNothingAndFailsNoSave() async throws {
        let (server, cluster, pooler, pooled) = try await Self.pooledServer()
        defer {
            pooler.stop()
            cluster.stop()
        }
        let run = try await onThread {
            try PhaseBinary.run(["soak", "--duration", "15s", "--rows", "300", "--application-url", pooled, "--format", "json"],
                                databaseURL: server)
        }
        #expect(run.status == 0, "\(run.output)\n\(run.diagnostics)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.diagnostics)")
        #expect(report["violations"] as? Int == 0)
        #expect((report["commits"] as? Int ?? 0) > 0)
        #expect((report["switches"] as? Int ?? 0) > 0)
        let faults = try #require(report["faults"] as? [String: Int])
        #expect((faults["lost reply"] ?? 0) > 0)
        let invariants = try #require(report["invariants"] as? [[String: Any]])
        #expect(invariants.contains { $0["name"] as? String == "every save answered, none refused" && $0["holds"] as? Bool == true },
                "\(invariants)")
        #expect(invariants.allSatisfy { $0["holds"] as? Bool == true }, "\(invariants)")
        #expect(run.diagnostics.contains("and --application-url (LISTEN direct)"), "\(run.diagnostics)")
    }

    @Test func theDemoThroughATransactionPoolerVerifiesEveryInvariant() async throws {
        let (server, cluster, pooler, pooled) = try await Self.pooledServer()
        defer {
            pooler.stop()
            cluster.stop()
        }
        let run = try await onThread {
            try PhaseBinary.run(["demo", "--rows", "300", "--duration", "6s", "--application-url", pooled], databaseURL: server)
        }
        #expect(run.status == 0, "\(run.output)\n\(run.diagnostics)")
        #expect(run.output.hasSuffix("all invariants hold\n"), "\(run.output)")
        #expect(run.output.contains("ok     no save failed"), "\(run.output)")
    }
}
