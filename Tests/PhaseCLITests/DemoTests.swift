import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// `phase demo`, run as a newcomer would.
@Suite("phase demo", .timeLimit(.minutes(3)))
struct DemoTests {
    /// The cluster folder the demo said it used.
    private func clusterFolder(in diagnostics: String) -> String? {
        guard let line = diagnostics.split(separator: "\n").first(where: { $0.hasPrefix("cluster at ") }) else { return nil }
        return line.dropFirst("cluster at ".count).split(separator: ",").first.map(String.init)
    }

    @Test func twoDemosAtOnceBothVerifyEveryInvariantAndLeaveNothingBehind() async throws {
        let runs = try await withThrowingTaskGroup(of: PhaseBinary.Run.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await onThread { try PhaseBinary.run(["demo", "--rows", "300", "--duration", "6s"], environment: ["DATABASE_URL": ""]) }
                }
            }
            var runs: [PhaseBinary.Run] = []
            for try await run in group { runs.append(run) }
            return runs
        }
        for run in runs {
            #expect(run.status == 0, "\(run.output)\n\(run.diagnostics)")
            #expect(run.output.hasSuffix("all invariants hold\n"))
            for invariant in ["every acknowledged save present exactly once", "ledger entries equal commits",
                              "revision chains without gaps", "no write lost across the rollback drill",
                              "v1 representation gone after contract", "no save failed",
                              "every instance followed every switch"] {
                #expect(run.output.contains("ok     \(invariant)"))
            }
            let folder = try #require(clusterFolder(in: run.diagnostics))
            #expect(!FileManager.default.fileExists(atPath: folder))
        }
        #expect(Set(runs.compactMap { clusterFolder(in: $0.diagnostics) }).count == 2)
    }

    @Test func anInterruptedDemoRemovesItsCluster() async throws {
        let started = try PhaseBinary.start(["demo", "--rows", "200", "--duration", "60s"], environment: ["DATABASE_URL": ""])
        var folder: String?
        for _ in 0..<1200 {
            try await Task.sleep(for: .milliseconds(50))
            let text = (try? String(contentsOf: started.diagnostics, encoding: .utf8)) ?? ""
            if text.contains("== fleet") { folder = clusterFolder(in: text); break }
        }
        let cluster = try #require(folder)
        #expect(FileManager.default.fileExists(atPath: cluster))
        kill(started.pid, SIGINT)
        let run = try await onThread { try PhaseBinary.finish(started) }
        #expect(run.status == 128 + SIGINT)
        #expect(run.diagnostics.contains("interrupted: removing the demo's database"))
        #expect(run.diagnostics.hasSuffix("stopped by SIGINT during demo; its throw-away database was removed\n"), "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: cluster))
    }

    @Test func onAnExistingServerItUsesAScratchDatabaseAndDropsIt() async throws {
        let server = try await TestPostgres.shared()
        let run = try await onThread {
            try PhaseBinary.run(["demo", "--rows", "100", "--duration", "6s", "--format", "json"], databaseURL: server.adminConnectionString)
        }
        #expect(run.status == 0, "\(run.diagnostics)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
        #expect(report["ok"] as? Bool == true, "\(run.output)")
        #expect(run.diagnostics.contains("using scratch database cutover_demo_"))
        let left = try await onThread {
            try PostgresConnection(configuration: .init(connectionString: server.adminConnectionString))
                .query("SELECT count(*) AS n FROM pg_database WHERE datname LIKE 'cutover_demo_%'")[0].decode(Int.self, "n")
        }
        #expect(left == 0)
    }
}
