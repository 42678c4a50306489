-- Revert a contract stopped before its last file: the constraints and unique indexes it added
-- go, and the columns it made NOT NULL are nullable again. Once contract_drop.sql has run,
-- nothing brings the legacy representation back.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE users DROP CONSTRAINT IF EXISTS users_description_not_null;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE users ALTER COLUMN description DROP NOT NULL;
