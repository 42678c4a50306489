-- Contract, 2nd file: check the existing rows against drafts_document_present (the CHECK
-- before PostgreSQL 18, the NOT NULL constraint from 18 on). VALIDATE takes SHARE UPDATE
-- EXCLUSIVE, which lets reads and writes go on while it scans.
ALTER TABLE drafts VALIDATE CONSTRAINT drafts_document_present;
