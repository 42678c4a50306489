-- The old application's writes to accounts: a new address, then a new account.
\set id random(1, :rows)
\set n random(1, 1000000)
UPDATE accounts SET mail = 'user' || :id || '.' || :n || '@example.com' WHERE id = :id;
INSERT INTO accounts (id, mail) VALUES (nextval('cutover_bench_keys'), 'someone@example.com');
