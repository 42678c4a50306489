import Cutover
import Testing

@Suite("What phase compare compares")
struct RepresentationComparisonTests {
    @Test("each alter_column's modern columns go up, its legacy columns down", arguments: [
        ("orders-status-code", ["status_code up", "status down"]),
        ("split-name", ["first_name up", "last_name up", "full_name down"]),
        ("rename-column", ["email up", "mail down"]),
        ("composite-key", ["price_cents up", "price down"]),
    ])
    func columns(example: String, expected: [String]) throws {
        let comparison = try #require(try DeclarativeGolden.compile(example).representationComparison)
        #expect(comparison.columns.map { "\($0.name) \($0.direction.rawValue)" } == expected)
    }

    @Test("a plan that keeps no column in two representations has nothing to compare")
    func nothingToCompare() throws {
        #expect(try DeclarativeGolden.compile("users-description").representationComparison == nil)
    }

    @Test("the composite key is compared, ordered and hashed whole")
    func compositeKey() throws {
        let comparison = try #require(try DeclarativeGolden.compile("composite-key").representationComparison)
        #expect(comparison.key == ["tenant_id", "id"])
        #expect(comparison.keyHashSQL == "left(encode(sha256(convert_to(jsonb_build_array(tenant_id, id)::text, 'UTF8')), 'hex'), 16)")
        #expect(comparison.query(sampling: false).contains("ORDER BY (c.r).tenant_id, (c.r).id"))
    }

    @Test("only a sample reads part of the table, at random")
    func sampling() throws {
        let comparison = try #require(try DeclarativeGolden.compile("orders-status-code").representationComparison)
        #expect(comparison.query(sampling: true).contains("FROM public.orders AS t TABLESAMPLE SYSTEM (CAST($5 AS float8))\n     ORDER BY random()"))
        #expect(!comparison.query(sampling: false).contains("TABLESAMPLE"))
        #expect(!comparison.query(sampling: false).contains("random()"))
    }

    @Test("a sample reads ten times the pages its rows need, and every page of a small or unestimated table", arguments: [
        (1000, 10_000_000.0, 0.1), (1000, 20_000.0, 50.0), (1000, 5000.0, 100.0), (1000, -1.0, 100.0), (1000, 0.0, 100.0),
    ])
    func samplePercentage(sample: Int, estimatedRows: Double, percentage: Double) {
        #expect(RepresentationComparison.samplePercentage(sample: sample, estimatedRows: estimatedRows) == percentage)
    }
}
