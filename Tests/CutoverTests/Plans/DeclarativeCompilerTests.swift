import Cutover
import Foundation
import Testing

@Suite("Compiling declarative plans")
struct DeclarativeCompilerTests {
    @Test("the examples compile to their golden files", arguments: ["users-description", "orders-status-code"])
    func golden(example: String) throws {
        let compiled = try DeclarativeGolden.compile(example)
        let expected = DeclarativeGolden.expected(for: compiled)
        if DeclarativeGolden.isRegenerating { try DeclarativeGolden.write(example, expected) }
        let stored = try DeclarativeGolden.stored(example)
        #expect(stored.keys.sorted() == expected.keys.sorted())
        for (path, text) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(stored[path] == text, "\(example)/\(path) differs from its golden file")
        }
    }

    @Test("a plan's own checks run after the ones derived for their step; their files are read as hand-written ones")
    func ownChecks() throws {
        let start = """
            {"format": 2, "name": "orders", "table": "orders", "key": "id",
             "operations": [{"alter_column": {"from": "status", "to": {"name": "status_code", "type": "smallint"},
                                               "up": "CASE status WHEN 'new' THEN 1 END", "down": "CASE status_code WHEN 1 THEN 'new' END"}}]
            """
        let checks = """
            , "checks": {"contract": [{"name": "no unknown code", "sql": "SELECT count(*) FROM orders WHERE status_code > 1",
                                       "expect": "= 0", "message": "fix the codes first"}],
                         "switch": [{"name": "from a file", "sqlFile": "checks/switch.sql", "expect": "= 0", "message": "m"}]}
            """
        let plan = try DeclarativePlan(manifest: Array((start + checks + "}").utf8))
        let bare = try DeclarativePlan(manifest: Array((start + "}").utf8))
        #expect(bare.checks.isEmpty && plan.checks.count == 2)
        let compiled = plan.compile().plan
        let derived = bare.compile().plan
        for kind in PlanStep.Kind.allCases {
            let own = plan.checks[kind] ?? []
            #expect(compiled.step(kind)?.checks == (derived.step(kind)?.checks ?? []) + own, "\(kind)")
        }
        #expect(compiled.step(.contract)?.checks.last?.name == "no unknown code")
        #expect(compiled.step(.switch)?.checks.last?.query == .file(path: "checks/switch.sql"))
        #expect(plan.handWrittenFilePaths == ["checks/switch.sql"])
        #expect(plan.compile().files == bare.compile().files)
    }

    @Test("the built-in drafts plan is a short declarative plan: one alter_column and its own contract check")
    func builtInDraftsPlan() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sql/drafts/plan.json")
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.split(separator: "\n").count <= 25)
        let plan = try DeclarativePlan(manifest: Array(text.utf8))
        #expect(plan.table == QualifiedName(schema: nil, name: "drafts"))
        #expect(plan.operations.count == 1)
        let contract = try #require(plan.compile().plan.step(.contract))
        #expect(contract.checks.map(\.name).suffix(3) == ["representations agree: title → document", "no NULL in document",
                                                           "every document readable"])
        // The legacy-activity record is keyed as contract's check reads it: the plan's table as written.
        let expand = try #require(plan.compile().fileTexts["compiled/expand.sql"])
        #expect(expand.contains("VALUES ('drafts', '-infinity')"))
        #expect(expand.contains("WHERE table_name = 'drafts' AND last_write_at < now() - interval '1 second'"))
    }

    @Test("every file a step names is generated, or hand-written by an sql operation")
    func filesComplete() throws {
        for example in ["users-description", "orders-status-code"] {
            let compiled = try DeclarativeGolden.compile(example)
            #expect(Set(compiled.plan.sqlFilePaths) == Set(compiled.fileTexts.keys))
        }
    }

    @Test("no generated statement rewrites the table, and each says its lock")
    func locks() throws {
        let compiled = try DeclarativeGolden.compile("orders-status-code")
        let statements = compiled.files.flatMap(\.statements)
        #expect(!statements.isEmpty)
        #expect(statements.allSatisfy { !$0.rewritesTable })
        let addColumn = try #require(statements.first { $0.sql.hasPrefix("ALTER TABLE public.orders\n    ADD COLUMN") })
        #expect(addColumn.lock == .accessExclusive && addColumn.work == .catalog)
        #expect(addColumn.description == "ACCESS EXCLUSIVE lock, catalog only, no rewrite")
        // No index of unconverted rows: one whose predicate names a modern column would make every
        // old application's update that fills it non-HOT. The batch walks the key's own index.
        #expect(!compiled.files.contains { $0.path.hasPrefix("compiled/expand") && $0.statements.contains { $0.sql.contains("CREATE INDEX") } })
        let batch = try #require(compiled.files.first { $0.path == "compiled/backfill_batch.sql" })
        #expect(batch.statements.map(\.lock) == [.rowExclusive] && batch.statements.map(\.work) == [.rows])
        #expect(batch.statements[0].sql.contains("WHERE w.id >= (SELECT id FROM lower_key)\n       AND w.id <= (SELECT id FROM upper_key)"))
        #expect(batch.statements[0].sql.contains("WHERE t.id >= (SELECT id FROM lower_key)\n       AND t.id <= (SELECT id FROM batch_end)"))
        let validate = try #require(compiled.files.first { $0.path == "compiled/contract_validate.sql" })
        #expect(validate.statements.allSatisfy { $0.lock == .shareUpdateExclusive && $0.work == .scan })
        let trigger = try #require(statements.first { $0.sql.hasPrefix("CREATE OR REPLACE TRIGGER") })
        #expect(trigger.lock == .shareRowExclusive)
    }

    @Test("NOT NULL runs as CHECK NOT VALID, VALIDATE, SET NOT NULL before 18, and NOT NULL NOT VALID from 18")
    func notNullByVersion() throws {
        let contract = try #require(try DeclarativeGolden.compile("users-description").plan.step(.contract))
        let before = contract.apply(onServerVersionNumber: 170_004).map(\.path)
        let after = contract.apply(onServerVersionNumber: 180_001).map(\.path)
        #expect(before == ["compiled/contract_not_null.sql", "compiled/contract_validate.sql",
                           "compiled/contract_set_not_null.sql", "compiled/contract_drop.sql"])
        #expect(after == ["compiled/contract_not_null_pg18.sql", "compiled/contract_validate.sql", "compiled/contract_drop.sql"])
        #expect(contract.revert.map(\.path) == ["compiled/contract_revert.sql"])
    }

    @Test("a composite key walks in key order with its cursor as a JSON object")
    func compositeKey() throws {
        let manifest = """
            {"format": 2, "name": "items", "table": "sales.items", "key": ["tenant_id", "id"],
             "operations": [{"alter_column": {"from": "amount", "to": {"name": "amount_cents", "type": "bigint"},
                                               "up": "round(amount * 100)", "down": "amount_cents / 100.0"}}]}
            """
        let compiled = try DeclarativePlan(manifest: Array(manifest.utf8)).compile()
        let batch = try #require(compiled.fileTexts["compiled/backfill_batch.sql"])
        #expect(batch.contains("(w.tenant_id, w.id) >= ((SELECT tenant_id FROM lower_key), (SELECT id FROM lower_key))"))
        #expect(batch.contains("(w.tenant_id, w.id) <= ((SELECT tenant_id FROM upper_key), (SELECT id FROM upper_key))"))
        #expect(batch.contains("ORDER BY w.tenant_id, w.id\n    OFFSET greatest(CAST($2 AS integer) - 1, 0) LIMIT 1"))
        #expect(batch.contains("(t.tenant_id, t.id) >= ((SELECT tenant_id FROM lower_key), (SELECT id FROM lower_key))"))
        #expect(batch.contains("(t.tenant_id, t.id) <= ((SELECT tenant_id FROM batch_end), (SELECT id FROM batch_end))"))
        #expect(batch.contains("(t.tenant_id, t.id) <> ((SELECT tenant_id FROM cursor_key), (SELECT id FROM cursor_key))"))
        #expect(batch.contains("ORDER BY f.tenant_id DESC, f.id DESC LIMIT 1"))
        #expect(batch.contains("FROM (SELECT cutover_row FROM sales.items AS cutover_row WHERE CAST($1 AS text) IS NOT NULL\n"
                               + "             ORDER BY cutover_row.tenant_id, cutover_row.id LIMIT 1) AS base,\n"
                               + "           jsonb_populate_record(base.cutover_row, CAST($1 AS text)::jsonb) AS k"))
        #expect(!batch.contains("NULL::sales.items"))
        #expect(batch.contains("jsonb_build_object('tenant_id', l.tenant_id, 'id', l.id)::text"))
        #expect(batch.contains("ORDER BY w.tenant_id DESC, w.id DESC LIMIT 1"))
        #expect(batch.contains("FOR UPDATE OF t SKIP LOCKED"))
        let direct = try #require(compiled.fileTexts["compiled/backfill_batch_direct.sql"])
        #expect(direct.contains("UPDATE sales.items AS t\n       SET amount_cents = t.amount_cents\n"
                                + "     WHERE (t.tenant_id, t.id) >= ((SELECT tenant_id FROM lower_key), (SELECT id FROM lower_key))\n"
                                + "       AND (t.tenant_id, t.id) <= ((SELECT tenant_id FROM batch_end), (SELECT id FROM batch_end))"))
        #expect(!direct.contains("SKIP LOCKED"))
        #expect(compiled.plan.table == "sales.items")
        #expect(compiled.fileTexts["compiled/expand.sql"]?.contains("CREATE OR REPLACE FUNCTION cutover.sales_items_sync()") == true)
    }

    @Test("a split keeps one function per column and assigns them all from the row as it was")
    func split() throws {
        let manifest = """
            {"format": 2, "name": "people", "table": "people", "key": "id",
             "operations": [{"alter_column": {"from": "full_name",
               "to": [{"name": "first_name", "type": "text"}, {"name": "last_name", "type": "text"}],
               "up": {"first_name": "split_part(full_name, ' ', 1)", "last_name": "substr(full_name, length(split_part(full_name, ' ', 1)) + 2)"},
               "down": "concat_ws(' ', first_name, nullif(last_name, ''))"}}]}
            """
        let expand = try #require(try DeclarativePlan(manifest: Array(manifest.utf8)).compile().fileTexts["compiled/expand.sql"])
        #expect(expand.contains("SELECT cutover.people_first_name_up(NEW), cutover.people_last_name_up(NEW) INTO NEW.first_name, NEW.last_name;"))
        #expect(expand.contains("IF cutover.people_full_name_differs(NEW.full_name, OLD.full_name) OR "
                               + "(cutover.people_first_name_differs(NEW.first_name, cutover.people_first_name_up(OLD)) OR "
                               + "cutover.people_last_name_differs(NEW.last_name, cutover.people_last_name_up(OLD))) THEN"))
        #expect(expand.contains("ELSIF (cutover.people_first_name_differs(NEW.first_name, OLD.first_name) OR "
                               + "cutover.people_last_name_differs(NEW.last_name, OLD.last_name)) THEN"))
        #expect(expand.contains("RETURN (split_part(($1).full_name, ' ', 1))\n"))
        #expect(expand.contains("RETURN (substr(($1).full_name, length(split_part(($1).full_name, ' ', 1)) + 2))\n"))
        #expect(expand.contains("BEFORE INSERT OR UPDATE OF full_name, first_name, last_name, id ON people"))
    }

    @Test("operations place their statements in the step they belong to")
    func placement() throws {
        let manifest = """
            {"format": 2, "name": "accounts", "table": "accounts", "key": "id",
             "operations": [
               {"alter_column": {"from": "mail", "to": {"name": "email", "type": "text", "unique": true}}},
               {"add_column": {"name": "nickname", "type": "text", "check": "length(nickname) < 40"}},
               {"drop_column": {"name": "legacy_flag", "default": "false"}},
               {"create_index": {"name": "accounts_created_at_idx", "columns": "created_at"}},
               {"drop_index": {"name": "accounts_mail_idx"}},
               {"drop_constraint": {"name": "accounts_mail_check"}},
               {"set_not_null": {"column": "created_at", "up": "now()"}},
               {"sql": {"expand": ["extra.sql"], "revert": ["extra_revert.sql"], "contract": ["extra_contract.sql"]}}
             ]}
            """
        let plan = try DeclarativePlan(manifest: Array(manifest.utf8))
        #expect(plan.handWrittenFilePaths == ["extra.sql", "extra_revert.sql", "extra_contract.sql"])
        let compiled = plan.compile()
        let texts = compiled.fileTexts
        let expand = try #require(compiled.plan.step(.expand))
        #expect(expand.apply.map(\.path) == ["compiled/expand.sql", "compiled/expand_index_1_accounts_created_at_idx.sql", "extra.sql"])
        #expect(expand.revert.map(\.path) == ["extra_revert.sql", "compiled/expand_revert.sql"])
        // The rename needs no expressions: up and down are the other column.
        #expect(texts["compiled/expand.sql"]?.contains("RETURNS %1$s.email%%TYPE\nLANGUAGE sql\nRETURN (($1).mail)\n") == true)
        // A column only new writers write is constrained at expand; one the trigger fills, at contract.
        #expect(texts["compiled/expand.sql"]?.contains("ADD CONSTRAINT accounts_nickname_check CHECK (length(nickname) < 40) NOT VALID") == true)
        let contract = try #require(compiled.plan.step(.contract))
        #expect(contract.apply.last?.path == "compiled/contract_drop.sql")
        #expect(contract.apply.dropLast().last?.path == "extra_contract.sql")
        #expect(contract.apply.contains { $0.path.hasPrefix("compiled/contract_index_") && !$0.runsInTransaction })
        let drop = try #require(texts["compiled/contract_drop.sql"])
        #expect(drop.contains("DROP INDEX IF EXISTS accounts_cutover_unconverted, accounts_mail_idx"))
        #expect(drop.contains("DROP CONSTRAINT IF EXISTS accounts_mail_check"))
        #expect(drop.contains("DROP COLUMN IF EXISTS mail,\n    DROP COLUMN IF EXISTS legacy_flag"))
        #expect(compiled.plan.step(.contract)?.checks.contains { $0.name == "no NULL in created_at" } == true)
        #expect(Set(compiled.plan.sqlFilePaths) == Set(texts.keys).union(plan.handWrittenFilePaths))
    }

    @Test("a plan without a column to backfill still counts, as the runner needs, and returns its one row")
    func nothingToBackfill() throws {
        let manifest = """
            {"format": 2, "name": "idx", "table": "t", "key": "id", "columns": ["a"],
             "operations": [{"create_index": {"name": "t_a_idx", "columns": ["a"]}}]}
            """
        let texts = try DeclarativePlan(manifest: Array(manifest.utf8)).compile().fileTexts
        #expect(texts["compiled/backfill_remaining.sql"]?.contains("SELECT count(*) FROM t AS t WHERE false") == true)
        #expect(texts["compiled/backfill_batch.sql"]?.contains("CAST($1 AS text) IS NULL OR CAST($2 AS integer) > 0") == true)
        #expect(texts["compiled/expand.sql"]?.contains("TRIGGER") == false)
    }

    @Test("names past 63 bytes are cut with a hash, so that they stay distinct")
    func longNames() throws {
        let long = String(repeating: "a", count: 60)
        let manifest = """
            {"format": 2, "name": "long", "table": "t", "key": "id",
             "operations": [{"add_column": {"name": "\(long)1", "type": "int", "notNull": true, "default": "0"}},
                            {"add_column": {"name": "\(long)2", "type": "int", "notNull": true, "default": "0"}}]}
            """
        let names = try DeclarativePlan(manifest: Array(manifest.utf8)).compile().files.flatMap(\.statements)
            .compactMap { statement -> String? in
                guard let range = statement.sql.firstRange(of: "ADD CONSTRAINT ") else { return nil }
                return String(statement.sql[range.upperBound...].prefix { $0 != " " })
            }
        #expect(names.count >= 2)
        #expect(names.allSatisfy { $0.utf8.count <= 63 })
        #expect(names[0] != names[1])
    }
}
