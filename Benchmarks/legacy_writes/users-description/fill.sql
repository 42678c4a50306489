-- The users of examples/users-description/schema.sql; their ids come from its serial.
INSERT INTO users (name)
SELECT 'user ' || g FROM generate_series(1, current_setting('cutover_bench.rows')::int) g;
DROP SEQUENCE IF EXISTS cutover_bench_keys;
CREATE SEQUENCE cutover_bench_keys START 1000000000;
