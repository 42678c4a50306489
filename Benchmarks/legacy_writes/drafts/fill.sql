-- The legacy drafts of sql/drafts/baseline.sql, as the old application wrote them.
INSERT INTO drafts (id, title, revision)
SELECT 'draft-' || lpad(g::text, 9, '0'), 'Draft ' || g, 1
  FROM generate_series(1, current_setting('cutover_bench.rows')::int) g;
DROP SEQUENCE IF EXISTS cutover_bench_keys;
CREATE SEQUENCE cutover_bench_keys START 1000000000;
