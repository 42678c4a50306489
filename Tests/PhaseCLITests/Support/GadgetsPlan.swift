import Foundation

/// A small hand-written plan of format 1 over `gadgets(id bigint primary key, label text not
/// null)`, which gains `code integer` and loses `label` at contract; its expand records no
/// legacy writes.
enum GadgetsPlan {
    static let manifest = """
        {"format": 1, "name": "gadgets", "table": "gadgets", "modernWriterWindow": "10m",
         "steps": [
           {"kind": "expand", "apply": ["expand.sql"], "revert": ["expand_revert.sql"],
            "checks": [{"name": "gadgets present", "sql": "SELECT to_regclass('gadgets') IS NOT NULL", "expect": "= true",
                        "message": "create gadgets first"}]},
           {"kind": "switch"},
           {"kind": "backfill", "batch": "batch.sql", "remaining": "remaining.sql", "batchSize": 100},
           {"kind": "contract", "apply": ["contract.sql"],
            "checks": [{"name": "every code set", "sql": "SELECT count(*) FROM gadgets WHERE code IS NULL", "expect": "= 0",
                        "message": "backfill first"}]}
         ]}
        """

    static let files = [
        "plan.json": manifest,
        "expand.sql": "ALTER TABLE gadgets ADD COLUMN IF NOT EXISTS code integer;\n",
        "expand_revert.sql": "ALTER TABLE gadgets DROP COLUMN IF EXISTS code;\n",
        "batch.sql": """
            WITH locked AS (SELECT id FROM gadgets WHERE code IS NULL AND ($1::bigint IS NULL OR id > $1::bigint)
                             ORDER BY id LIMIT $2::integer FOR UPDATE SKIP LOCKED),
                 converted AS (UPDATE gadgets g SET code = length(g.label) FROM locked WHERE g.id = locked.id RETURNING 1)
            SELECT (SELECT max(id) FROM locked) AS last_key, (SELECT count(*) FROM converted) AS converted,
                   (SELECT count(*) FROM locked) AS scanned
            """,
        "remaining.sql": "SELECT count(*) FROM gadgets WHERE code IS NULL",
        "contract.sql": "ALTER TABLE gadgets DROP COLUMN IF EXISTS label;\n",
    ]

    /// A new database with the gadgets table and 20 rows, and a folder holding the plan.
    static func make(_ label: String) async throws -> (WorkflowDatabase, PlanFolder) {
        let db = try await WorkflowDatabase.make(label, rows: 1)
        try await db.sql { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE gadgets (id bigint PRIMARY KEY, label text NOT NULL);
                INSERT INTO gadgets SELECT n, 'gadget ' || n FROM generate_series(1, 20) AS n
                """)
        }
        return (db, try PlanFolder.make(label, files: files))
    }
}
