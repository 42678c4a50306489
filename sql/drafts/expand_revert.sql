-- Revert expand: drop the mirror and the v2 representation. Every row keeps its v1 title,
-- which the trigger and the modern writer kept current, so no write made meanwhile is lost
-- to a legacy reader; the v2-only fields (body, tags) written meanwhile are dropped.
DROP TRIGGER IF EXISTS drafts_mirror_legacy_write ON drafts;
DROP FUNCTION IF EXISTS cutover.drafts_mirror_legacy_write();
ALTER TABLE drafts DROP COLUMN IF EXISTS document;
