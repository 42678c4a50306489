import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Testing

/// The key ranges of parallel workers, made from a sample of the table's pages.
@Suite("Backfill split", .timeLimit(.minutes(3)))
struct BackfillSplitTests {
    /// Rows in the table; the application converted the first half of them, by key.
    static let rows = 200_000

    /// On an analysed table of 200,000 drafts whose first half by key the application already
    /// converted, the split reads a sample of a few tens of thousands of rows, not the table,
    /// and its three ends divide the 100,000 rows still to convert into four ranges of about a
    /// quarter each, all in the half still to convert.
    @Test func theSplitReadsASampleAndDividesTheRowsStillToConvertIntoEqualRanges() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_split_sample", rows: Self.rows, width: 6)
        let splitSQL = try #require(try BackfillWorkersTests.engine(workers: 4, batchSize: 100).splitSQL)
        let half = "draft-" + String(format: "%06d", Self.rows / 2)
        try await db.sql { connection in
            try connection.query("""
                UPDATE drafts SET document = jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', title, 'version', 2)
                 WHERE id <= \(half)
                """)
            try connection.execute(unsafeSQL: "VACUUM ANALYZE drafts")
        }

        let plan = try await db.sql { connection in
            try connection.query(PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, FORMAT JSON) " + splitSQL, binds: [Int32(4).postgresBind]))[0]
                .decode(String.self, at: 0)
        }
        let scans = Self.nodes(of: "Sample Scan", in: try JSONSerialization.jsonObject(with: Data(plan.utf8)))
        #expect(scans.count == 1, "the split reads the table through one sample scan: \(plan)")
        let read = scans.reduce(0) { $0 + (($1["Actual Rows"] as? Int) ?? 0) + (($1["Rows Removed by Filter"] as? Int) ?? 0) }
        #expect(read > 1_000 && read < Self.rows / 4, "rows the sample read: \(read) of \(Self.rows)")

        let ends = try await db.sql { connection in
            try connection.query(PostgresQuery(unsafeSQL: splitSQL, binds: [Int32(4).postgresBind]))
                .map { try $0.decode(String.self, "upper_key") }
        }
        let ids = try ends.map { end in
            try #require((try JSONSerialization.jsonObject(with: Data(end.utf8)) as? [String: Any])?["id"] as? String)
        }
        #expect(ids.count == 3 && ids == ids.sorted() && Set(ids).count == 3, "\(ends)")
        #expect(ids.allSatisfy { $0 > half }, "every end is among the rows still to convert: \(ids)")
        let bounds: [String?] = [nil] + ids.map(Optional.some) + [nil]
        var counts: [Int64] = []
        for index in 0..<4 {
            let (lower, upper) = (bounds[index], bounds[index + 1])
            counts.append(try await db.sql { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM drafts
                     WHERE document IS NULL AND (CAST(\(lower) AS text) IS NULL OR id > \(lower))
                       AND (CAST(\(upper) AS text) IS NULL OR id <= \(upper))
                    """)[0].decode(Int64.self, "n")
            })
        }
        #expect(counts.reduce(0, +) == Int64(Self.rows / 2), "\(counts)")
        // A sample of whole pages, each holding about a hundred consecutive keys, the same pages
        // every time (a fixed seed): each range holds about a quarter (27,317, 19,800, 27,120
        // and 25,763 when this was written).
        #expect(counts.allSatisfy { (15_000...35_000).contains($0) }, "rows still to convert in each range: \(counts)")
        await db.close()
    }

    /// The split of a table the sample finds nothing to convert in has no end: one range.
    @Test func aTableWithNothingToConvertHasNoEnd() async throws {
        let db = try await BackfillEngineTests.expandedTable("backfill_split_none", rows: 50)
        let splitSQL = try #require(try BackfillWorkersTests.engine(workers: 4, batchSize: 100).splitSQL)
        let ends = try await db.sql { connection in
            try connection.query("UPDATE drafts SET document = jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', title, 'version', 2)")
            return try connection.query(PostgresQuery(unsafeSQL: splitSQL, binds: [Int32(4).postgresBind])).count
        }
        #expect(ends == 0)
        await db.close()
    }

    /// Every node of an `EXPLAIN (FORMAT JSON)` plan of type `type`.
    static func nodes(of type: String, in json: Any) -> [[String: Any]] {
        if let list = json as? [Any] { return list.flatMap { nodes(of: type, in: $0) } }
        guard let object = json as? [String: Any] else { return [] }
        let own = object["Node Type"] as? String == type ? [object] : []
        return own + object.values.flatMap { nodes(of: type, in: $0) }
    }
}
