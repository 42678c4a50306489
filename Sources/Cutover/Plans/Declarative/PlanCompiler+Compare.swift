extension PlanCompiler {
    /// The comparison of the plan's two representations, or nil when it has no `alter_column`.
    func representationComparison() -> RepresentationComparison? {
        guard renamedTo == nil, !trigger.groups.isEmpty else { return nil }
        // Each compared column, with the function whose value it is compared with and the
        // index of its operation, whose not-yet-converted rows it skips.
        var compared: [(column: RepresentationComparison.Column, function: RowFunction, group: Int)] = []
        for (index, group) in trigger.groups.enumerated() {
            compared += zip(group.modern, group.up).map { (.init(name: $0, direction: .up), $1, index) }
            // A plan may give no `down`: then the legacy columns are compared with nothing.
            if group.down.count == group.legacy.count {
                compared += zip(group.legacy, group.down).map { (.init(name: $0, direction: .down), $1, index) }
            }
        }
        func field(_ row: String, _ column: String) -> String { "(\(row).r).\(SQLName.identifier(column))" }
        func indices(_ group: Int, _ direction: RepresentationComparison.Column.Direction) -> [Int] {
            compared.indices.filter { compared[$0].group == group && compared[$0].column.direction == direction }
        }
        let mapped = compared.enumerated().map { "\($1.function.call("s.r")) AS v\($0)" }
        let unconverted = trigger.groups.enumerated().map { index, group in
            let modernNull = group.modern.map { "\(field("m", $0)) IS NULL" }.joined(separator: " AND ")
            let upValues = indices(index, .up).map { "m.v\($0) IS NOT NULL" }.joined(separator: " OR ")
            return "((\(modernNull)) AND (\(upValues))) AS u\(index)"
        }
        let distinct = compared.enumerated().map { index, entry in
            "m.v\(index) IS DISTINCT FROM \(field("m", entry.column.name)) AS e\(index)"
        }
        // An operation's columns agree when either side maps onto the other, as contract's check
        // "representations agree" judges: `up` may lose what a modern writer wrote (a name
        // split in two), and then `down` holds. When neither holds, every column that differs is named.
        func sideAgrees(_ group: Int, _ direction: RepresentationComparison.Column.Direction) -> String {
            let differing = indices(group, direction).map { "j.e\($0)" }
            return differing.isEmpty ? "false" : "NOT (\(differing.joined(separator: " OR ")))"
        }
        let differs = compared.enumerated().map { index, entry in
            "(NOT j.u\(entry.group) AND NOT \(sideAgrees(entry.group, .up)) AND NOT \(sideAgrees(entry.group, .down)) AND j.e\(index)) AS d\(index)"
        }
        let anyUnconverted = trigger.groups.indices.map { "u\($0)" }.joined(separator: " OR ")
        let anyDiffers = { (alias: String) in compared.indices.map { "\(alias)d\($0)" }.joined(separator: " OR ") }
        let differenceCount = compared.indices.map { "d\($0)::int" }.joined(separator: " + ")
        let keyFields = plan.key.map { field("l", $0) }
        let keyOrder = plan.key.map { field("c", $0) }.joined(separator: ", ")
        let nullKeys = plan.key.indices.map { "NULL::text AS key_\($0)" }.joined(separator: ", ")
        let keys = keyFields.map { "CASE WHEN CAST($3 AS boolean) THEN NULL ELSE (\($0))::text END" }.joined(separator: ", ")
        let values = compared.enumerated().map { index, entry in
            "(\(index), \(SQLName.literal(entry.column.name)), \(SQLName.literal(entry.column.direction.rawValue)), l.d\(index), "
                + "(l.v\(index))::text, (\(field("l", entry.column.name)))::text)"
        }
        func sql(sampling: String) -> String {
            """
            WITH cutover_sample AS MATERIALIZED (
                SELECT t AS r FROM \(table.sql) AS t\(sampling)
                 LIMIT CAST($1 AS bigint)
            ), cutover_mapped AS (
                SELECT s.r, \(mapped.joined(separator: ", "))
                  FROM cutover_sample AS s
            ), cutover_judged AS (
                SELECT m.*, \(unconverted.joined(separator: ", ")),
                       \(distinct.joined(separator: ", "))
                  FROM cutover_mapped AS m
            ), cutover_compared AS (
                SELECT j.*, \(differs.joined(separator: ",\n           "))
                  FROM cutover_judged AS j
            )
            SELECT false AS listed, CAST(0 AS bigint) AS position, 0 AS ordinal,
                   count(*) AS sampled, count(*) FILTER (WHERE \(anyUnconverted)) AS not_converted,
                   count(*) FILTER (WHERE \(anyDiffers(""))) AS disagreeing_rows,
                   CAST(coalesce(sum(\(differenceCount)), 0) AS bigint) AS disagreements,
                   \(nullKeys), NULL::text AS key_hash,
                   NULL::text AS column_name, NULL::text AS direction, NULL::text AS expected, NULL::text AS stored
              FROM cutover_compared
            UNION ALL
            SELECT true, l.position, d.ordinal, NULL, NULL, NULL, NULL,
                   \(keys),
                   CASE WHEN CAST($3 AS boolean) THEN \(Self.keyHash(keyFields)) END,
                   d.column_name, d.direction,
                   CASE WHEN CAST($2 AS boolean) THEN d.expected END, CASE WHEN CAST($2 AS boolean) THEN d.stored END
              FROM (SELECT c.*, row_number() OVER (ORDER BY \(keyOrder)) AS position
                      FROM cutover_compared AS c
                     WHERE \(anyDiffers("c."))
                     ORDER BY position
                     LIMIT CAST($4 AS bigint)) AS l
             CROSS JOIN LATERAL (VALUES
                   \(values.joined(separator: ",\n       "))
             ) AS d (ordinal, column_name, direction, differs, expected, stored)
             WHERE d.differs
             ORDER BY listed, position, ordinal
            """
        }
        return RepresentationComparison(table: table, key: plan.key, columns: compared.map(\.column),
                                        sampledSQL: sql(sampling: " TABLESAMPLE SYSTEM (CAST($5 AS float8))\n     ORDER BY random()"),
                                        everyRowSQL: sql(sampling: ""))
    }

    /// The first 16 hex digits of the SHA-256 of the key's values (SQL expressions) as a JSON array.
    static func keyHash(_ values: [String]) -> String {
        "left(encode(sha256(convert_to(jsonb_build_array(\(values.joined(separator: ", ")))::text, 'UTF8')), 'hex'), 16)"
    }
}
