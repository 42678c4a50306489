-- The line items of examples/composite-key/schema.sql, a hundred tenants' worth.
INSERT INTO line_items (tenant_id, id, price, label)
SELECT g % 100, g, (g % 10000) / 100.0, 'item ' || g
  FROM generate_series(1, current_setting('cutover_bench.rows')::int) g;
DROP SEQUENCE IF EXISTS cutover_bench_keys;
CREATE SEQUENCE cutover_bench_keys START 1000000000;
