-- The accounts of examples/rename-column/schema.sql.
INSERT INTO accounts (id, mail)
SELECT g, 'user' || g || '@example.com'
  FROM generate_series(1, current_setting('cutover_bench.rows')::int) g;
DROP SEQUENCE IF EXISTS cutover_bench_keys;
CREATE SEQUENCE cutover_bench_keys START 1000000000;
