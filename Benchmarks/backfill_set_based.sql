-- Baseline of "backfill": every v1-only row converted by one set-based UPDATE, in one
-- transaction, the fastest way PostgreSQL can do it and the one a live application cannot
-- afford (it holds every converted row's lock until it commits). The document is the one
-- the built-in plan's up expression gives a row without one (compiled/backfill_batch.sql).
-- Run once (-t 1) by one client.
UPDATE drafts
   SET document = jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', title, 'version', 2)
 WHERE document IS NULL;
