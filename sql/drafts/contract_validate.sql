-- Contract, 2 of 3: check the existing rows. VALIDATE takes SHARE UPDATE EXCLUSIVE, which
-- lets reads and writes go on while it scans.
ALTER TABLE drafts VALIDATE CONSTRAINT drafts_document_present;
