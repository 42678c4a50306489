-- The people of examples/split-name/schema.sql; the key of the g-th is md5(g)::uuid.
INSERT INTO people (id, full_name)
SELECT md5(g::text)::uuid, 'Ada ' || g || ' Lovelace'
  FROM generate_series(1, current_setting('cutover_bench.rows')::int) g;
DROP SEQUENCE IF EXISTS cutover_bench_keys;
CREATE SEQUENCE cutover_bench_keys START 1000000000;
