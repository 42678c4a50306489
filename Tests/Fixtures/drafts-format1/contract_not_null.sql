-- Contract, 3 of 4 before PostgreSQL 18: SET NOT NULL uses the validated CHECK instead of
-- scanning, and the CHECK, now redundant, goes. From 18 on, the validated NOT NULL constraint
-- is already the column's NOT NULL and this file is not run.
ALTER TABLE drafts ALTER COLUMN document SET NOT NULL;
ALTER TABLE drafts DROP CONSTRAINT IF EXISTS drafts_document_present;
