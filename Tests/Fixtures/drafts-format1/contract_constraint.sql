-- Contract, 1 of 4 before PostgreSQL 18: promise that every row has a document, without
-- scanning the table under an exclusive lock: NOT VALID checks new writes only and takes
-- ACCESS EXCLUSIVE for an instant. PostgreSQL 18 and later run contract_constraint_not_null.sql
-- instead.
DO $constraint$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint
                    WHERE conrelid = 'drafts'::regclass AND conname = 'drafts_document_present') THEN
        ALTER TABLE drafts ADD CONSTRAINT drafts_document_present CHECK (document IS NOT NULL) NOT VALID;
    END IF;
END
$constraint$;
