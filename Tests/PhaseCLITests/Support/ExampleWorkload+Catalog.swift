extension ExampleWorkload {
    /// The five example plans, each with its writers.
    ///
    /// Every old writer's script sends, each statement on its own, what an application could
    /// send before expand: an INSERT naming only the legacy columns, an UPDATE of them, a
    /// same-value UPDATE, an UPDATE of another column, an `INSERT … ON CONFLICT DO UPDATE`
    /// and a DELETE. Every new writer inserts naming the modern columns, in a transaction that
    /// says `SET LOCAL cutover.writer = 'modern'`, and updates modern columns without it.
    static let all = [usersDescription, ordersStatusCode, renameColumn, splitName, compositeKey]

    /// An old writer's script: `statements` after drawing `id`, a seed, and `other`, a key of
    /// which one in ten is a seed (for the DELETE).
    static func legacy(_ statements: String) -> String {
        #"""
        \set id random(1, :rows)
        \set other random(1, :rows * 10)
        """# + "\n" + statements
    }

    /// A new writer's script: `insert` of the row keyed `k`, a new key, in a transaction that
    /// says it is the modern writer; then, while `seeds` is 1, `seedUpdate` of the seed `id`.
    static func modern(insert: String, seedUpdate: String) -> String {
        #"""
        \set id random(1, :rows)
        SELECT nextval('modern_keys') AS k \gset
        BEGIN;
        SET LOCAL cutover.writer = 'modern';
        """# + "\n" + insert + "\nCOMMIT;\n\\if :seeds\n" + seedUpdate + "\n\\endif\n"
    }

    static let usersDescription = ExampleWorkload(
        folder: "users-description", table: "users", keyColumns: ["id"], legacyColumns: [], modernColumns: ["description"],
        seed: """
            INSERT INTO users (name) SELECT 'user ' || n FROM generate_series(1, ROWS) AS n;
            ALTER SEQUENCE users_id_seq RESTART 1000001
            """,
        legacyScript: legacy(#"""
            INSERT INTO users (name) VALUES ('legacy ' || nextval('legacy_keys'));
            UPDATE users SET name = 'user ' || id || ' renamed' WHERE id = :id;
            UPDATE users SET name = name WHERE id = :id;
            UPDATE users SET id = id WHERE id = :id;
            INSERT INTO users (id, name) VALUES (:id, 'user ' || :id || ' renamed') ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name;
            DELETE FROM users WHERE id = :other;
            """#),
        modernScript: modern(
            insert: "INSERT INTO users (id, name, description) VALUES (:k, 'modern ' || :k, 'modern description ' || :k);",
            seedUpdate: "UPDATE users SET description = 'modern description ' || id WHERE id = :id;"),
        // An old writer's rename keeps the description it had: `up` fills it on INSERT only.
        agrees: "description IS NULL OR description IN ('description for ' || name, 'description for user ' || id, 'modern description ' || id)",
        unconverted: "description IS NULL",
        expected: "name",
        keptRowIsRight: "t.name = r.expected AND t.description IN ('description for ' || r.expected, 'description for user ' || t.id, 'modern description ' || t.id)",
        newRowIsRight: "t.name = 'modern ' || t.id AND t.description = 'modern description ' || t.id",
        legacyRows: "id BETWEEN 1000001 AND 2000000", modernRows: "id > 2000000",
        modernRowRolledBack: "name = 'modern ' || id")

    static let ordersStatusCode = ExampleWorkload(
        folder: "orders-status-code", table: "orders", keyColumns: ["id"], legacyColumns: ["status"], modernColumns: ["status_code"],
        seed: "INSERT INTO orders SELECT n, (ARRAY['new', 'paid', 'shipped'])[1 + n % 3] FROM generate_series(1, ROWS) AS n",
        legacyScript: legacy(#"""
            INSERT INTO orders (id, status) VALUES (nextval('legacy_keys'), (ARRAY['new', 'paid', 'shipped'])[1 + :id % 3]);
            UPDATE orders SET status = (ARRAY['new', 'paid', 'shipped'])[1 + (id + :id) % 3] WHERE id = :id;
            UPDATE orders SET status = status WHERE id = :id;
            UPDATE orders SET id = id WHERE id = :id;
            INSERT INTO orders (id, status) VALUES (:id, 'paid') ON CONFLICT (id) DO UPDATE SET status = 'shipped';
            DELETE FROM orders WHERE id = :other;
            """#),
        modernScript: modern(
            insert: "INSERT INTO orders (id, status_code) VALUES (:k, 1 + :k % 3);",
            seedUpdate: "UPDATE orders SET status_code = 1 + (id + 1) % 3 WHERE id = :id;"),
        agrees: """
            status_code IS NULL OR (status_code = CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END
                                    AND status = (ARRAY['new', 'paid', 'shipped'])[status_code])
            """,
        unconverted: "status_code IS NULL",
        expected: "array_position(ARRAY['new', 'paid', 'shipped'], status)",
        keptRowIsRight: "t.status_code = r.expected",
        newRowIsRight: "t.status_code = 1 + t.id % 3",
        legacyRows: "id BETWEEN 1000001 AND 2000000", modernRows: "id > 2000000",
        modernRowRolledBack: "status = (ARRAY['new', 'paid', 'shipped'])[1 + id % 3]")

    static let renameColumn = ExampleWorkload(
        folder: "rename-column", table: "accounts", keyColumns: ["id"], legacyColumns: ["mail"], modernColumns: ["email"],
        seed: "INSERT INTO accounts SELECT n, 'user' || n || '@example.com' FROM generate_series(1, ROWS) AS n",
        legacyScript: legacy(#"""
            INSERT INTO accounts (id, mail) VALUES (nextval('legacy_keys'), 'legacy' || :id || '@example.com');
            UPDATE accounts SET mail = 'changed' || id || '@example.com' WHERE id = :id;
            UPDATE accounts SET mail = mail WHERE id = :id;
            UPDATE accounts SET id = id WHERE id = :id;
            INSERT INTO accounts (id, mail) VALUES (:id, 'upserted' || :id || '@example.com') ON CONFLICT (id) DO UPDATE SET mail = EXCLUDED.mail;
            DELETE FROM accounts WHERE id = :other;
            """#),
        modernScript: modern(
            insert: "INSERT INTO accounts (id, email) VALUES (:k, 'modern' || :k || '@example.com');",
            seedUpdate: "UPDATE accounts SET email = 'modern' || id || '@example.com' WHERE id = :id;"),
        agrees: "email IS NULL OR email = mail",
        unconverted: "email IS NULL",
        expected: "mail",
        keptRowIsRight: "t.email = r.expected",
        newRowIsRight: "t.email = 'modern' || t.id || '@example.com'",
        legacyRows: "id BETWEEN 1000001 AND 2000000", modernRows: "id > 2000000",
        modernRowRolledBack: "mail = 'modern' || id || '@example.com'")

    /// Keys are UUIDs: seed `n` is `00000000-0000-4000-a000-<n in 12 digits>`, the new writer's
    /// key `k` the same under `8000`; the old writer inserts random ones.
    static let splitName = ExampleWorkload(
        folder: "split-name", table: "people", keyColumns: ["id"], legacyColumns: ["full_name"],
        modernColumns: ["first_name", "last_name"],
        seed: """
            INSERT INTO people SELECT ('00000000-0000-4000-a000-' || lpad(n::text, 12, '0'))::uuid, 'First' || n || ' Last' || n
              FROM generate_series(1, ROWS) AS n
            """,
        legacyScript: legacy(#"""
            INSERT INTO people (id, full_name) VALUES (gen_random_uuid(), 'Legacy' || nextval('legacy_keys') || ' Writer');
            UPDATE people SET full_name = 'Renamed' || :id || ' Person Junior' WHERE id = ('00000000-0000-4000-a000-' || lpad(CAST(:id AS text), 12, '0'))::uuid;
            UPDATE people SET full_name = full_name WHERE id = ('00000000-0000-4000-a000-' || lpad(CAST(:id AS text), 12, '0'))::uuid;
            UPDATE people SET id = id WHERE id = ('00000000-0000-4000-a000-' || lpad(CAST(:id AS text), 12, '0'))::uuid;
            INSERT INTO people (id, full_name) VALUES (('00000000-0000-4000-a000-' || lpad(CAST(:id AS text), 12, '0'))::uuid, 'Upserted' || :id)
                ON CONFLICT (id) DO UPDATE SET full_name = EXCLUDED.full_name;
            DELETE FROM people WHERE id = ('00000000-0000-4000-a000-' || lpad(CAST(:other AS text), 12, '0'))::uuid;
            """#),
        modernScript: modern(insert: #"""
            INSERT INTO people (id, first_name, last_name)
                VALUES (('00000000-0000-4000-8000-' || lpad(CAST(:k AS text), 12, '0'))::uuid, 'Modern' || :k, 'Writer' || :k);
            """#, seedUpdate: #"""
            UPDATE people SET first_name = 'Grace' || :id, last_name = 'Hopper'
             WHERE id = ('00000000-0000-4000-a000-' || lpad(CAST(:id AS text), 12, '0'))::uuid;
            """#),
        agrees: """
            (first_name IS NULL AND last_name IS NULL)
            OR (first_name = split_part(full_name, ' ', 1) AND last_name = substr(full_name, strpos(full_name || ' ', ' ') + 1)
                AND full_name = CASE WHEN last_name = '' THEN first_name ELSE first_name || ' ' || last_name END)
            """,
        unconverted: "first_name IS NULL OR last_name IS NULL",
        expected: "split_part(full_name, ' ', 1) || '|' || substr(full_name, strpos(full_name || ' ', ' ') + 1)",
        keptRowIsRight: "t.first_name || '|' || t.last_name = r.expected",
        newRowIsRight: "t.first_name = 'Modern' || right(t.id::text, 12)::bigint AND t.last_name = 'Writer' || right(t.id::text, 12)::bigint",
        legacyRows: "full_name LIKE 'Legacy% Writer'", modernRows: "id::text LIKE '00000000-0000-4000-8000-%'",
        modernRowRolledBack: "full_name = 'Modern' || right(id::text, 12)::bigint || ' Writer' || right(id::text, 12)::bigint")

    /// Keyed by `(tenant_id, id)`: row `n` is in tenant `1 + n % 3`.
    static let compositeKey = ExampleWorkload(
        folder: "composite-key", table: "line_items", keyColumns: ["tenant_id", "id"], legacyColumns: ["price"],
        modernColumns: ["price_cents"],
        seed: "INSERT INTO line_items SELECT 1 + n % 3, n, n / 100.0, 'seed' FROM generate_series(1, ROWS) AS n",
        legacyScript: legacy(#"""
            INSERT INTO line_items (tenant_id, id, price, label) VALUES (1 + :id % 3, nextval('legacy_keys'), :id / 100.0, 'legacy');
            UPDATE line_items SET price = price + 1 WHERE tenant_id = 1 + :id % 3 AND id = :id;
            UPDATE line_items SET price = price WHERE tenant_id = 1 + :id % 3 AND id = :id;
            UPDATE line_items SET label = 'touched' WHERE tenant_id = 1 + :id % 3 AND id = :id;
            INSERT INTO line_items (tenant_id, id, price) VALUES (1 + :id % 3, :id, 9.99)
                ON CONFLICT (tenant_id, id) DO UPDATE SET price = EXCLUDED.price;
            DELETE FROM line_items WHERE tenant_id = 1 + :other % 3 AND id = :other;
            """#),
        modernScript: modern(
            insert: "INSERT INTO line_items (tenant_id, id, price_cents, label) VALUES (1 + :k % 3, :k, :k % 100000, 'modern');",
            seedUpdate: "UPDATE line_items SET price_cents = id * 7 WHERE tenant_id = 1 + :id % 3 AND id = :id;"),
        agrees: "price_cents IS NULL OR (price_cents = price * 100 AND price = price_cents / 100.0)",
        unconverted: "price_cents IS NULL",
        expected: "price * 100",
        keptRowIsRight: "t.price_cents = r.expected",
        newRowIsRight: "t.price_cents = t.id % 100000 AND t.tenant_id = 1 + t.id % 3",
        legacyRows: "id BETWEEN 1000001 AND 2000000", modernRows: "id > 2000000",
        modernRowRolledBack: "price = (id % 100000) / 100.0")
}
