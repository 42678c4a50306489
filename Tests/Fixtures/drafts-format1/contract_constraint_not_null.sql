-- Contract, 1 of 3 on PostgreSQL 18 and later: the column's own NOT NULL constraint, added
-- NOT VALID, so that new writes must carry a document while the existing rows are checked by
-- the next file under a lock that lets reads and writes go on. Once validated it is the
-- column's NOT NULL (pg_constraint keeps it, contype 'n'): no CHECK, and no SET NOT NULL after.
DO $constraint$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint
                    WHERE conrelid = 'drafts'::regclass AND conname = 'drafts_document_present') THEN
        ALTER TABLE drafts ADD CONSTRAINT drafts_document_present NOT NULL document NOT VALID;
    END IF;
END
$constraint$;
