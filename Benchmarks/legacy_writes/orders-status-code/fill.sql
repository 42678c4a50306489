-- The orders of examples/orders-status-code/schema.sql, each new, paid or shipped.
INSERT INTO orders (id, status)
SELECT g, (ARRAY['new', 'paid', 'shipped'])[1 + g % 3]
  FROM generate_series(1, current_setting('cutover_bench.rows')::int) g;
DROP SEQUENCE IF EXISTS cutover_bench_keys;
CREATE SEQUENCE cutover_bench_keys START 1000000000;
