import Cutover
@testable import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import Testing

/// A backfill's batches are never JIT-compiled: the planner cannot see a batch's bounds and
/// estimates a share of the whole table, which on a large table passes `jit_above_cost`, and
/// every batch, planned afresh, would compile again.
@Suite("Backfill batches and JIT", .timeLimit(.minutes(3)))
struct BackfillJITTests {
    /// On a server that compiles every statement it can (`jit_above_cost = 0`), with
    /// `pg_stat_statements` counting what each compiled: the batches, direct and skipping,
    /// compile nothing, while the backfill's count of the rows still to convert, a long read
    /// that may gain from it, still does.
    @Test func batchesCompileNothingWhereTheServerCompilesEverything() async throws {
        // A server built without LLVM compiles nothing either way, and some builds (pgserver's
        // 16) ship no pg_stat_statements, which must be loaded at start: ask a plain one first.
        let plain = try await EphemeralCluster.start()
        let usable = try await onThread {
            try PostgresConnection(configuration: plain.configuration()).query("""
                SELECT pg_jit_available() AND EXISTS (SELECT FROM pg_available_extensions WHERE name = 'pg_stat_statements') AS usable
                """)[0].decode(Bool.self, "usable")
        }
        plain.stop()
        guard usable else { return }
        let cluster = try await EphemeralCluster.start(options: .init(settings: [
            "shared_preload_libraries": "pg_stat_statements", "jit": "on", "jit_above_cost": "0",
        ]))
        defer { cluster.stop() }
        let configuration = cluster.configuration()
        try await onThread {
            let connection = try PostgresConnection(configuration: configuration)
            try connection.execute(unsafeSQL: "CREATE EXTENSION pg_stat_statements")
            try connection.execute(unsafeSQL: try SQLFiles.text("drafts/baseline.sql"))
            try ControlSchema.install(on: connection)
            try connection.query("""
                INSERT INTO drafts (id, title, revision)
                SELECT 'draft-' || lpad(n::text, 4, '0'), 'Legacy ' || n, 1 FROM generate_series(1, 400) AS n
                """)
            try DraftsPlan.declarative.expand(on: connection)
            try connection.query("INSERT INTO cutover.migration_state (plan, phase, writer_path) VALUES ('drafts', 'modern', 'modern')")
            try connection.execute(unsafeSQL: "SELECT pg_stat_statements_reset()")
        }
        // Fixed batches of 40 keys, the direct batch's wait cut short by a row held, so that
        // both batch statements run.
        let engine = try BackfillDirectBatchTests.engine(batchSize: 40, rowLockWait: .milliseconds(20))
        let holder = try PostgresConnection(configuration: configuration)
        try holder.execute(unsafeSQL: "BEGIN")
        try holder.query("SELECT 1 FROM drafts WHERE id = 'draft-0100' FOR UPDATE")
        let running = Task { try await onThread { try engine.run(on: PostgresConnection(configuration: configuration)) } }
        // Let go of the row once a direct batch has given way to the skipping one; a later pass converts it.
        let deadline = ContinuousClock.now + .seconds(60)
        while engine.directBatches.waitsRunOut == 0 {
            guard ContinuousClock.now < deadline else { Issue.record("no direct batch's wait ran out within 60 s"); break }
            try await Task.sleep(for: .milliseconds(10))
        }
        try holder.execute(unsafeSQL: "COMMIT")
        let progress = try await running.value
        #expect(progress.converted == 400, "\(progress)")
        #expect(progress.directWaitsRunOut >= 1, "\(progress)")

        let rows = try await onThread {
            try PostgresConnection(configuration: configuration).query("""
                SELECT CASE WHEN query LIKE '-- Backfill, one batch, updating its rows directly%' THEN 'direct'
                            WHEN query LIKE '-- Backfill, one batch:%' THEN 'skipping'
                            ELSE 'count' END AS statement,
                       sum(calls)::bigint AS calls, sum(jit_functions)::bigint AS compiled
                  FROM pg_stat_statements
                 WHERE query LIKE '-- Backfill, one batch%' OR query LIKE '%cutover.count_rows%'
                 GROUP BY 1
                """).map { (try $0.decode(String.self, "statement"), try $0.decode(Int64.self, "calls"), try $0.decode(Int64.self, "compiled")) }
        }
        let byStatement = Dictionary(uniqueKeysWithValues: rows.map { ($0.0, (calls: $0.1, compiled: $0.2)) })
        #expect((byStatement["direct"]?.calls ?? 0) >= 1, "\(rows)")
        #expect((byStatement["skipping"]?.calls ?? 0) >= 1, "\(rows)")
        #expect(byStatement["direct"]?.compiled == 0, "\(rows)")
        #expect(byStatement["skipping"]?.compiled == 0, "\(rows)")
        // The server does compile here: the count, which keeps the session's setting.
        #expect((byStatement["count"]?.compiled ?? 0) > 0, "\(rows)")
    }
}
