import Cutover
import PostgresClient

/// Reads a declarative plan's rows through both representations and reports where they
/// disagree, by key and column, in one read-only transaction.
///
/// ```swift
/// guard let comparison = compiled.representationComparison else { return }
/// let report = try RepresentationCompare.compare(comparison, options: .init(sample: 1000), on: connection)
/// print(report.disagreeingRows)
/// ```
///
/// It needs the row functions expand creates (and contract drops): call it between expand and
/// contract. Values stay on the server unless ``Options/showsValues``.
public enum RepresentationCompare {
    /// What to read and what to return.
    public struct Options: Sendable, Equatable {
        /// How many rows to read at random; nil reads every row.
        public var sample: Int?
        /// Whether the compared values are read.
        public var showsValues: Bool
        /// Whether keys are read hashed rather than as text.
        public var hidesKeys: Bool
        /// How many disagreeing rows are listed; all of them are counted.
        public var listLimit: Int

        /// Options with values and keys as given, listing up to 1000 rows.
        public init(sample: Int?, showsValues: Bool = false, hidesKeys: Bool = false, listLimit: Int = 1000) {
            self.sample = sample
            self.showsValues = showsValues
            self.hidesKeys = hidesKeys
            self.listLimit = listLimit
        }
    }

    /// Runs `comparison`'s query with `options` on `connection`, read-only.
    ///
    /// - Parameter inOpenTransaction: run the query in the transaction `connection` is in (a
    ///   rehearsal's, after the statement it replays) instead of one of its own; only without a sample.
    public static func compare(_ comparison: RepresentationComparison, options: Options,
                               on connection: PostgresConnection, inOpenTransaction: Bool = false) throws -> ComparisonReport {
        var binds = [options.sample.map(Int64.init).postgresBind, options.showsValues.postgresBind,
                     options.hidesKeys.postgresBind, Int64(options.listLimit).postgresBind]
        let rows: PostgresRows
        if inOpenTransaction {
            rows = try connection.query(PostgresQuery(unsafeSQL: comparison.query(sampling: false), binds: binds))
        } else {
            rows = try connection.withTransaction { connection in
                try connection.execute(unsafeSQL: "SET TRANSACTION READ ONLY")
                if let sample = options.sample {
                    let estimate = try connection.query("SELECT reltuples::float8 AS estimate FROM pg_class WHERE oid = to_regclass(\(comparison.table.sql))")
                    let rows = try estimate.first?.decode(Double.self, "estimate") ?? -1
                    binds.append(RepresentationComparison.samplePercentage(sample: sample, estimatedRows: rows).postgresBind)
                }
                return try connection.query(PostgresQuery(unsafeSQL: comparison.query(sampling: options.sample != nil), binds: binds))
            }
        }
        guard let summary = rows.first, try !summary.decode(Bool.self, "listed") else {
            throw PostgresError(code: .unexpectedResponse, message: "the comparison returned no summary row")
        }
        var report = ComparisonReport(
            table: comparison.table.sql, keyColumns: comparison.key, isSample: options.sample != nil,
            showsValues: options.showsValues, hidesKeys: options.hidesKeys,
            sampled: try summary.decode(Int64.self, "sampled"), notConverted: try summary.decode(Int64.self, "not_converted"),
            disagreeingRows: try summary.decode(Int64.self, "disagreeing_rows"),
            disagreements: try summary.decode(Int64.self, "disagreements"), listed: [], listedRows: 0)
        for row in rows.dropFirst() {
            let direction = try row.decode(String.self, "direction")
            guard let direction = RepresentationComparison.Column.Direction(rawValue: direction) else {
                throw PostgresError(code: .unexpectedResponse, message: "the comparison returned the direction \(direction)")
            }
            report.listedRows = max(report.listedRows, try row.decode(Int64.self, "position"))
            report.listed.append(.init(
                key: options.hidesKeys ? nil : try comparison.key.indices.map { try row.decode(String?.self, "key_\($0)") ?? "NULL" },
                keyHash: try row.decode(String?.self, "key_hash"),
                column: try row.decode(String.self, "column_name"),
                direction: direction,
                expected: try row.decode(String?.self, "expected"), stored: try row.decode(String?.self, "stored")))
        }
        return report
    }
}
