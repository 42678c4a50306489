-- Contract, last file: remove the v1 representation; catalog changes only. Old application
-- versions that read or write `title` stop working here: contract's checks made sure none is
-- left.
DROP TRIGGER IF EXISTS drafts_mirror_legacy_write ON drafts;
DROP FUNCTION IF EXISTS cutover.drafts_mirror_legacy_write();
DROP INDEX IF EXISTS drafts_v1_only;
ALTER TABLE drafts DROP COLUMN IF EXISTS title;
