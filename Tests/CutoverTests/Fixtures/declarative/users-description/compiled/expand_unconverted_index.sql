-- Expand, outside a transaction: an index of the rows backfill has still to convert, so that
-- backfill and contract's checks find them without reading the table.
-- CONCURRENTLY lets reads and writes go on; the runner drops an index an interrupted build left invalid.

-- SHARE UPDATE EXCLUSIVE lock, scans the table, no rewrite
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_cutover_unconverted ON users (id) WHERE description IS NULL;
