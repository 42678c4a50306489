-- Expand, outside a transaction: an index of the rows that still hold v1 only, so that
-- backfill and contract's check find them without scanning the table. CONCURRENTLY takes no
-- lock that blocks writers; the runner drops an index left invalid by an interrupted build
-- and runs this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS drafts_v1_only ON drafts (id) WHERE document IS NULL;
