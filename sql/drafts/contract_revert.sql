-- Revert what a contract that stopped before its last file applied: the constraint of
-- contract_constraint.sql (validated or not). contract_drop.sql is the point of no return: once
-- it has run, the v1 representation is gone and nothing here can bring it back.
ALTER TABLE drafts DROP CONSTRAINT IF EXISTS drafts_document_present;
