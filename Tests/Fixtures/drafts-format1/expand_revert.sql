-- Revert expand: drop the mirror and the v2 representation. Every row keeps its v1 title,
-- which the trigger and the modern writer kept current, so no row written meanwhile is lost
-- and old application versions read every write; the v2-only fields (body, tags) written
-- meanwhile are dropped with the column.
DROP INDEX IF EXISTS drafts_v1_only;
DROP TRIGGER IF EXISTS drafts_mirror_legacy_write ON drafts;
DROP FUNCTION IF EXISTS cutover.drafts_mirror_legacy_write();
ALTER TABLE drafts DROP COLUMN IF EXISTS document;
DELETE FROM cutover.legacy_activity WHERE table_name = 'drafts';
