extension PlanCompiler {
    /// The backfill batch, keeping `BackfillEngine`'s contract: `$1` the cursor as text (NULL
    /// at the start), `$2` the batch size, `$3` the last key of the batch's range as text (NULL:
    /// to the end of the table); one row of `last_key`, `converted`, `scanned`, `skipped`.
    ///
    /// Rows are walked in key order along the key's own btree index (expand checks there is
    /// one), single-column or composite, of any type with a btree order, from the cursor to
    /// the range's end, both index conditions. No index of unconverted rows is needed, so the
    /// old application's updates stay HOT through the migration window: an index whose
    /// predicate names a modern column would make every update that fills it a non-HOT update,
    /// an entry in every index. A batch walks the next `$2` keys, converted or not, and converts
    /// the rows among them still to convert, so its work is bounded by its size wherever it is:
    /// a stretch of the table the application has converted already, or a later pass looking for
    /// the few rows an earlier one found locked, is walked in batches like any other instead of
    /// in one statement reading until it finds `$2` rows to convert. The cursor is the last key
    /// walked as a JSON object
    /// (`{"tenant_id": 7, "id": 42}`), read back into the key's own types by
    /// `jsonb_populate_record` over a row of the table (``decodedKey(_:)``), so the compiler
    /// needs no type and text never compares where numbers should.
    /// Rows another transaction holds are skipped (`FOR UPDATE SKIP LOCKED`) and counted as
    /// `skipped`; the writer's trigger converts them, and a later pass walks again the keys of
    /// the batches that skipped any. The rows still to convert are found first, then locked by
    /// their tuple IDs, so that the two counts differ by exactly the rows it could not lock (or
    /// that changed in between, which a later pass looks at again too). A row is converted
    /// once, only while its modern columns are all NULL, and updated by the tuple ID it was
    /// locked at.
    ///
    /// Each row's functions run once. An `alter_column`'s modern columns are named with their
    /// own (NULL) values under the session mark `cutover.backfill`, set for the transaction by
    /// the statement itself, and the sync trigger fills them (``SyncTrigger``): the trigger,
    /// which must tell the backfill from a writer, would otherwise call `up` a second time to
    /// compare. Other columns get `coalesce(column, function(row))` from the statement. Rows are
    /// picked by their modern columns being NULL alone; a row whose functions all give NULL
    /// stays as it was and is counted neither as converted nor as remaining. A row counts as converted when,
    /// after the batch, not every target's columns are NULL (so, in a plan of several targets, a
    /// row whose other target already had a value counts even if this one's function gave NULL).
    func backfillBatch() -> CompiledFile {
        let purpose = """
            Backfill, one batch: the next $2 keys after the cursor $1 (NULL: from the start), up to the key
            $3 (NULL: to the end), in key order; those of their rows whose modern columns are still NULL are
            given their values by the row functions. Returns the last key walked as JSON (NULL when none
            remain past $1 up to $3), the rows converted, the keys walked, and the rows still to convert
            among them that another transaction held (a later pass walks their keys again).
            """
        guard !targets.isEmpty else {
            return CompiledFile("compiled/backfill_batch.sql", purpose: purpose + "\nThis plan has no column to backfill.",
                                statements: [.init("""
                                    SELECT CAST(NULL AS text) AS last_key, CAST(0 AS bigint) AS converted, CAST(0 AS bigint) AS scanned,
                                           CAST(0 AS bigint) AS skipped
                                     WHERE CAST($1 AS text) IS NULL OR CAST($2 AS integer) > 0 OR CAST($3 AS text) IS NULL
                                    """, lock: nil, work: .catalog)])
        }
        let parts = BatchParts(self)
        let sql = """
            \(parts.walk), pending AS (
                SELECT t.ctid FROM \(table.sql) AS t
                 WHERE \(parts.range(alias: "t"))
                   AND (\(unconvertedPredicate(alias: "t")))
            ), locked AS (
                SELECT t.ctid FROM \(table.sql) AS t
                 WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM pending)) AND (\(unconvertedPredicate(alias: "t")))
                   FOR UPDATE OF t SKIP LOCKED
            ), converted AS (
                UPDATE \(table.sql) AS t
                   SET \(parts.sets)
                 WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM locked)) AND (\(unconvertedPredicate(alias: "t")))\(parts.mark)
                RETURNING \(parts.filled) AS filled
            )
            SELECT (SELECT \(parts.lastKey) FROM batch_end AS l) AS last_key,
                   (SELECT count(*) FROM converted WHERE filled) AS converted,
                   \(parts.scanned) AS scanned,
                   (SELECT count(*) FROM pending) - (SELECT count(*) FROM locked) AS skipped
            """
        return CompiledFile("compiled/backfill_batch.sql", purpose: purpose,
                            statements: [.init(sql, lock: .rowExclusive, work: .rows, note: "locks only the rows of its batch")])
    }

    /// The backfill batch that updates its rows directly, with ``backfillBatch()``'s parameters
    /// and result, nil for a plan with no column to backfill.
    ///
    /// It walks the same keys and converts the same rows, by one `UPDATE` over the batch's key
    /// range along the key's index, with no pass that locks them first: each row is locked as
    /// the `UPDATE` reaches it, so a row the application wants is held, on average, half as long
    /// as by ``backfillBatch()``, which locks all of its rows before it updates the first, and
    /// each row is read once instead of three times. Measured in a loop on the server, 1,000,000
    /// rows of the drafts plan took 7.0 s this way and 8.1 s the other (docs/BENCHMARKS.md).
    ///
    /// It cannot skip a row another transaction holds: it waits for it. `BackfillEngine` runs it
    /// under a lock timeout of a few milliseconds (``BackfillEngine/Options/rowLockWait``),
    /// shorter than any deadlock timeout, and when that runs out runs ``backfillBatch()`` in its
    /// place for the same keys, which skips the row and leaves it to a later pass; `skipped` is
    /// always 0. A row updated by another transaction meanwhile is read again as it is now
    /// (READ COMMITTED) and converted only if its modern columns are still NULL and its key still
    /// in the batch's range.
    func backfillDirectBatch() -> CompiledFile? {
        guard !targets.isEmpty else { return nil }
        let parts = BatchParts(self)
        let sql = """
            \(parts.walk), converted AS (
                UPDATE \(table.sql) AS t
                   SET \(parts.sets)
                 WHERE \(parts.range(alias: "t"))
                   AND (\(unconvertedPredicate(alias: "t")))\(parts.mark)
                RETURNING \(parts.filled) AS filled
            )
            SELECT (SELECT \(parts.lastKey) FROM batch_end AS l) AS last_key,
                   (SELECT count(*) FROM converted WHERE filled) AS converted,
                   \(parts.scanned) AS scanned,
                   CAST(0 AS bigint) AS skipped
            """
        return CompiledFile("compiled/backfill_batch_direct.sql", purpose: """
            Backfill, one batch, updating its rows directly: the batch of compiled/backfill_batch.sql, by one UPDATE
            over its keys that locks each row as it reaches it, waiting for a row another transaction holds.
            The backfill runs it under a lock timeout of a few milliseconds and, when that runs out, runs
            compiled/backfill_batch.sql in its place for the same keys.
            """, statements: [.init(sql, lock: .rowExclusive, work: .rows, note: "locks only the rows of its batch")])
    }

    /// The parts both batch statements share: the walk of the batch's keys, the columns they set,
    /// the session mark and what counts as converted.
    private struct BatchParts {
        /// `WITH cursor_key AS (…), lower_key …, upper_key …, nth_key …, batch_end AS (…)`.
        let walk: String
        /// The `SET` list.
        let sets: String
        /// The condition that marks the transaction as the backfill's, or nothing.
        let mark: String
        /// Whether a row returned by the `UPDATE` was converted.
        let filled: String
        /// The batch's last key as JSON text, over `batch_end AS l`.
        let lastKey: String
        /// The keys the batch walked: the batch size when that many remained, otherwise those
        /// up to its last key, counted only then.
        let scanned: String
        private let key: [String]

        init(_ compiler: PlanCompiler) {
            let table = compiler.table
            key = compiler.plan.key.map(SQLName.identifier)
            let key = self.key
            let walkedKey = key.map { "w." + $0 }
            let walkRange = { (indent: String) in Self.range(key, alias: "w", upper: "upper_key", joinedBy: "\n" + indent + "AND ") }
            lastKey = "jsonb_build_object(" + zip(compiler.plan.key, key).map { "\(SQLName.literal($0)), l.\($1)" }.joined(separator: ", ") + ")::text"
            sets = compiler.targets.flatMap { target in
                zip(target.columns, target.functions).map { column, function in
                    let name = SQLName.identifier(column)
                    if target.isFilledByTrigger { return "\(name) = t.\(name)" }
                    if target.columns.count == 1 { return "\(name) = coalesce(t.\(name), \(function.call("t")))" }
                    return "\(name) = CASE WHEN \(PlanCompiler.allNull(target.columns, alias: "t")) THEN \(function.call("t")) ELSE t.\(name) END"
                }
            }.joined(separator: ",\n           ")
            // An uncorrelated subquery runs once, before the first row is updated and its trigger fires.
            mark = compiler.targets.contains(where: \.isFilledByTrigger)
                ? "\n       AND (SELECT set_config(\(SQLName.literal(SyncTrigger.backfillSetting)), 'on', true)) = 'on'" : ""
            scanned = "CASE WHEN EXISTS (SELECT FROM nth_key) THEN CAST(greatest(CAST($2 AS integer), 1) AS bigint)\n"
                + "            ELSE (SELECT count(*) FROM \(table.sql) AS w\n"
                + "                   WHERE \(Self.range(key, alias: "w", upper: "batch_end", joinedBy: "\n                     AND "))) END"
            filled = "NOT (" + compiler.targets.map { PlanCompiler.allNull($0.columns, alias: "t") }.joined(separator: " AND ") + ")"
            // The bounds are index conditions on the key's btree whatever the parameters, so a batch
            // reads from its cursor on and stops at its range's end: with no cursor the range begins
            // at the table's first key, with none for the end it ends at the table's last.
            walk = """
                WITH cursor_key AS (
                    \(compiler.decodedKey("$1"))
                ), lower_key AS (
                    SELECT \(key.map { "c." + $0 }.joined(separator: ", ")) FROM cursor_key AS c
                    UNION ALL
                    (SELECT \(key.map { "f." + $0 }.joined(separator: ", ")) FROM \(table.sql) AS f WHERE CAST($1 AS text) IS NULL
                      ORDER BY \(key.map { "f." + $0 }.joined(separator: ", ")) LIMIT 1)
                ), upper_key AS (
                    \(compiler.decodedKey("$3"))
                    UNION ALL
                    (SELECT \(key.map { "f." + $0 }.joined(separator: ", ")) FROM \(table.sql) AS f WHERE CAST($3 AS text) IS NULL
                      ORDER BY \(key.map { "f.\($0) DESC" }.joined(separator: ", ")) LIMIT 1)
                ), nth_key AS (
                    SELECT \(walkedKey.joined(separator: ", ")) FROM \(table.sql) AS w
                     WHERE \(walkRange("       "))
                     ORDER BY \(walkedKey.joined(separator: ", "))
                    OFFSET greatest(CAST($2 AS integer) - 1, 0) LIMIT 1
                ), batch_end AS (
                    SELECT \(key.map { "n." + $0 }.joined(separator: ", ")) FROM nth_key AS n
                    UNION ALL
                    (SELECT \(walkedKey.joined(separator: ", ")) FROM \(table.sql) AS w
                      WHERE NOT EXISTS (SELECT FROM nth_key)
                        AND \(walkRange("        "))
                      ORDER BY \(key.map { "w.\($0) DESC" }.joined(separator: ", ")) LIMIT 1)
                )
                """
        }

        /// The batch's keys, over `alias`: from the cursor (left out) or the table's first key
        /// through the batch's last, index conditions on the key's btree.
        func range(alias: String) -> String { Self.range(key, alias: alias, upper: "batch_end", joinedBy: "\n       AND ") }

        /// The keys from the cursor (left out) or the table's first key through `upper`'s, over
        /// `alias`, its three conditions joined by `separator`.
        private static func range(_ key: [String], alias: String, upper: String, joinedBy separator: String) -> String {
            let keyed = tuple(key.map { alias + "." + $0 })
            return ["\(keyed) >= \(bound(key, "lower_key"))", "\(keyed) <= \(bound(key, upper))",
                    "(CAST($1 AS text) IS NULL OR \(keyed) <> \(bound(key, "cursor_key")))"].joined(separator: separator)
        }

        private static func tuple(_ names: [String]) -> String {
            names.count == 1 ? names[0] : "(" + names.joined(separator: ", ") + ")"
        }

        private static func bound(_ key: [String], _ cte: String) -> String {
            tuple(key.map { "(SELECT \($0) FROM \(cte))" })
        }
    }

    /// The key that the batch's parameter `parameter` (`$1`, the cursor, or `$3`, the range's
    /// end) gives as JSON text, in the key's own types: `jsonb_populate_record` over a row of the
    /// table, the first along the key's index, which keeps that row's other columns as they are.
    /// Over `NULL::<table>` it would read every column the JSON leaves out as NULL, which a
    /// column of a NOT NULL domain refuses. No row when the parameter is NULL, nor when the table
    /// is empty, which leaves the batch nothing to walk.
    fileprivate func decodedKey(_ parameter: String) -> String {
        let key = plan.key.map(SQLName.identifier)
        let text = "CAST(\(parameter) AS text)"
        return """
            SELECT \(key.map { "k." + $0 }.joined(separator: ", "))
                  FROM (SELECT cutover_row FROM \(table.sql) AS cutover_row WHERE \(text) IS NOT NULL
                         ORDER BY \(key.map { "cutover_row." + $0 }.joined(separator: ", ")) LIMIT 1) AS base,
                       jsonb_populate_record(base.cutover_row, \(text)::jsonb) AS k
            """
    }

    /// Where parallel workers' key ranges end: `$1` the ranges wanted; the keys (as JSON text,
    /// like the batch's `last_key`) that divide a sample of the rows still to convert into `$1`
    /// parts of about equal numbers, in key order, as `upper_key`: at most `$1` less one, none
    /// when the sample finds nothing to convert.
    ///
    /// The sample is `TABLESAMPLE SYSTEM`, whole pages picked at random (with a fixed seed, so
    /// that the same table gives the same ranges), sized from the table's
    /// row estimate (`pg_class.reltuples`, or its size on disk at 20 rows a page before it was
    /// ever analysed) to about ``splitSampleRows`` rows: the split reads a few hundred pages of a
    /// table of any size, where reading every row in key order took as long as a count of it,
    /// and needs no count first. The ranges' ends need no row's functions: a row they give
    /// nothing is in a range as any other, and its batch leaves it as it is.
    func backfillSplit() -> CompiledFile {
        let purpose = """
            Backfill, the key ranges of parallel workers: the keys that divide a sample of the rows still to
            convert (a few hundred pages picked at random) into $1 parts, in key order, at most $1 - 1 of them.
            Each ends a range; the last range runs to the end of the table.
            """
        guard !targets.isEmpty else {
            return CompiledFile("compiled/backfill_split.sql", purpose: purpose + "\nThis plan has no column to backfill.",
                                statements: [.init("""
                                    SELECT CAST(NULL AS text) AS upper_key WHERE CAST($1 AS integer) < 0
                                    """, lock: nil, work: .catalog)])
        }
        let key = plan.key.map(SQLName.identifier)
        let keyed = key.map { "t." + $0 }
        let asJSON = "jsonb_build_object(" + zip(plan.key, key).map { "\(SQLName.literal($0)), s.\($1)" }.joined(separator: ", ") + ")::text"
        let estimate = """
            SELECT least(100, 100 * \(Self.splitSampleRows) / greatest(CASE WHEN c.reltuples > 0 THEN c.reltuples
                                     ELSE pg_relation_size(c.oid) / current_setting('block_size')::float8 * 20 END, 1))
                          FROM pg_catalog.pg_class AS c WHERE c.oid = CAST(\(SQLName.literal(table.sql)) AS regclass)
            """
        let sql = """
            WITH sampled AS (
                SELECT \(keyed.joined(separator: ", ")), ntile(CAST($1 AS integer)) OVER (ORDER BY \(keyed.joined(separator: ", "))) AS part
                  FROM \(table.sql) AS t TABLESAMPLE SYSTEM ((\(estimate))) REPEATABLE (0)
                 WHERE \(unconvertedPredicate(alias: "t"))
            )
            SELECT \(asJSON) AS upper_key FROM (
                SELECT DISTINCT ON (part) \(key.joined(separator: ", ")), part FROM sampled
                 ORDER BY part, \(key.map { "\($0) DESC" }.joined(separator: ", "))
            ) AS s
             WHERE s.part < CAST($1 AS integer)
             ORDER BY \(key.map { "s." + $0 }.joined(separator: ", "))
            """
        return CompiledFile("compiled/backfill_split.sql", purpose: purpose,
                            statements: [.init(sql, lock: .accessShare, work: .sample)])
    }

    /// About how many rows the split of parallel workers' ranges samples.
    static let splitSampleRows = 30_000

    /// The count of rows backfill has still to convert, by `cutover.count_rows`: the plan's
    /// functions written out over the row's columns under the row functions' own `search_path`,
    /// evaluated in the query rather than called once for each of the rows still to convert.
    func backfillRemaining() -> CompiledFile {
        guard !targets.isEmpty else {
            return CompiledFile("compiled/backfill_remaining.sql", purpose: "Backfill: the rows still to convert.",
                                statements: [.init("SELECT count(*) FROM \(table.sql) AS t WHERE false", lock: .accessShare, work: .scan)])
        }
        let counted = "SELECT cutover.count_rows(CAST(\(SQLName.literal(table.sql)) AS regclass), \(SQLName.literal(unconverted(alias: "t"))))"
        return CompiledFile("compiled/backfill_remaining.sql", purpose: """
            Backfill: the rows still to convert, counted by cutover.count_rows with the plan's expressions written
            out under the search_path of its row functions and sync trigger.
            """, statements: [.init(counted, lock: .accessShare, work: .scan)])
    }

    /// `(a IS NULL) OR (b IS NULL AND c IS NULL)`: a row some target of which is still to fill.
    func unconvertedPredicate(alias: String?) -> String {
        targets.map { Self.allNull($0.columns, alias: alias) }.joined(separator: " OR ")
    }

    /// A row still to convert: a target's columns all NULL while one of its functions gives a
    /// value, written for `cutover.count_rows` (``RowFunction/evaluated(over:)``). The cheap
    /// NULL test comes first, so the functions run only for rows it lets through.
    func unconverted(alias: String) -> String {
        let exact = targets.map { target in
            let values = target.functions.map { "\($0.evaluated(over: alias)) IS NOT NULL" }
            let value = values.count == 1 ? values[0] : "(" + values.joined(separator: " OR ") + ")"
            return "(\(Self.allNull(target.columns, alias: alias)) AND \(value))"
        }
        return "(\(unconvertedPredicate(alias: alias))) AND (\(exact.joined(separator: " OR ")))"
    }
}
