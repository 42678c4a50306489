-- Contract, 3 of 3: remove the v1 representation. SET NOT NULL uses the validated constraint
-- instead of scanning; the rest are catalog changes. Old application versions that read or
-- write `title` stop working here: contract's checks made sure none is left.
ALTER TABLE drafts ALTER COLUMN document SET NOT NULL;
ALTER TABLE drafts DROP CONSTRAINT IF EXISTS drafts_document_present;
DROP TRIGGER IF EXISTS drafts_mirror_legacy_write ON drafts;
DROP FUNCTION IF EXISTS cutover.drafts_mirror_legacy_write();
DROP INDEX IF EXISTS drafts_v1_only;
ALTER TABLE drafts DROP COLUMN IF EXISTS title;
