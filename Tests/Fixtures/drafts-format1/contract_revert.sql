-- Revert what a contract that stopped before its last file applied: the constraint of its
-- first file (validated or not; a CHECK before PostgreSQL 18, the NOT NULL constraint from 18
-- on) and the NOT NULL that contract_not_null.sql set. contract_drop.sql is the point of no
-- return: once it has run, the v1 representation is gone and nothing here can bring it back.
ALTER TABLE drafts DROP CONSTRAINT IF EXISTS drafts_document_present;
ALTER TABLE drafts ALTER COLUMN document DROP NOT NULL;
