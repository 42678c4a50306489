@testable import CutoverBench
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// What the benchmark's report says: ratios that never seem to contradict their goal, and an
/// account of what the server did during each backfill.
@Suite("The benchmark's report", .timeLimit(.minutes(2)))
struct BenchReportTests {
    private func result(ratio: Double?, goal: ScenarioResult.Goal) -> ScenarioResult {
        ScenarioResult(scenario: "s", unit: "rows/s", ours: 1, baselineName: nil, baseline: nil, ratio: ratio, goal: goal,
                       rows: 1, duration: 1, settings: "")
    }

    @Test("two decimals, or more where two would round across the goal's line")
    func decimals() {
        #expect(result(ratio: 0.9412, goal: .ratioAtLeast(0.9)).ratioText == "0.94×")
        #expect(result(ratio: 0.897, goal: .ratioAtLeast(0.9)).ratioText == "0.897×")
        #expect(result(ratio: 0.8996, goal: .ratioAtLeast(0.9)).ratioText == "0.8996×")
        #expect(result(ratio: 0.9, goal: .ratioAtLeast(0.9)).ratioText == "0.90×")
        #expect(result(ratio: 1.996, goal: .ratioBelow(2)).ratioText == "1.996×")
        #expect(result(ratio: 2.004, goal: .ratioBelow(2)).ratioText == "2.00×")
        #expect(result(ratio: 0.84999, goal: .ratioAtLeast(0.85)).ratioText == "0.84999×")
        #expect(result(ratio: 1.2345, goal: .none).ratioText == "1.23×")
        #expect(result(ratio: nil, goal: .ratioBelow(2)).ratioText == nil)
    }

    @Test("a backfill's account: the WAL, the checkpoints, and where its sessions were, most first")
    func account() throws {
        let observation = BackfillObservation(walBytes: 475_000_000, checkpoints: 1, backendWrites: 55_116,
                                              samples: ["CPU": 90, "IO:WALSync": 6, "between statements": 3, "IO:DataFileRead": 1])
        #expect(observation.summary == "WAL 453 MB, 1 checkpoint, 55,116 buffers written by backends; its sessions (100 samples): "
            + "CPU 90%, IO:WALSync 6%, between statements 3%, IO:DataFileRead 1%")
        #expect(observation.share(of: "IO:WALSync") == 0.06)
        let extra = observation.extra(prefix: "ours_")
        #expect(extra["ours_share_cpu"] == 0.9)
        #expect(extra["ours_share_io_walsync"] == 0.06)
        #expect(extra["ours_share_between_statements"] == 0.03)
        #expect(extra["ours_backend_buffer_writes"] == 55_116)
        #expect(extra["ours_checkpoints"] == 1)
        #expect(observation.whileRunningSummary == "while running a statement (97 samples): CPU 93%, IO:WALSync 6%, IO:DataFileRead 1%")
        let both = try #require(BackfillObservation.combined([observation, observation]))
        #expect(both.walBytes == 950_000_000)
        #expect(both.samples["CPU"] == 180)
        #expect(both.backendWrites == 110_232)
        #expect(BackfillObservation.combined([]) == nil)
        let unseen = BackfillObservation(walBytes: 0, checkpoints: 2, backendWrites: nil, samples: [:])
        #expect(unseen.summary == "WAL 0 MB, 2 checkpoints; its sessions (0 samples): not seen")
        #expect(unseen.extra()["backend_buffer_writes"] == nil)
    }

    @Test("the observer counts the WAL a session writes and samples what it waits on, and no other session")
    func observer() async throws {
        let database = try await TestPostgres.database("bench_observer")
        try await onThread {
            try database.connect().execute(unsafeSQL: "CREATE TABLE filler (id bigint PRIMARY KEY, body text)")
        }
        let observer = try await BackfillObserver(configuration: database.configuration(), applicationNames: ["observed-session"])
        // Another session waits on a lock for a second meanwhile, and must not be counted.
        let holding = Task {
            try await onThread { _ = try database.connect(applicationName: "holder").query("SELECT pg_advisory_lock(42), pg_sleep(1.2)") }
        }
        let waiting = Task {
            try await onThread {
                let other = try database.connect(applicationName: "another-session")
                while try other.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted")[0].decode(Int64.self, "n") == 0 {
                    Thread.sleep(forTimeInterval: 0.01)
                }
                _ = try other.query("SELECT pg_advisory_lock(42)")
            }
        }
        try await onThread {
            let watched = try database.connect(applicationName: "observed-session")
            // A wait the sampler cannot miss, then about 10 MB of WAL.
            try watched.execute(unsafeSQL: "SELECT pg_sleep(0.5)")
            try watched.execute(unsafeSQL: "INSERT INTO filler SELECT g, repeat('x', 100) FROM generate_series(1, 50000) g")
        }
        let observation = try await observer.finish()
        try await holding.value
        try await waiting.value
        #expect(observation.walBytes > 5_000_000, "\(observation)")
        #expect(observation.walBytes < 100_000_000, "\(observation)")
        #expect((observation.samples["Timeout:PgSleep"] ?? 0) >= 3, "\(observation)")
        #expect(observation.samples["Lock:advisory"] == nil, "\(observation)")
        #expect(observation.checkpoints >= 0)
    }
}
