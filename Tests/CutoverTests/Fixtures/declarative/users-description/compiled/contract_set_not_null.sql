-- Contract before PostgreSQL 18: SET NOT NULL uses the validated CHECK instead of scanning, and
-- the CHECK, now redundant, goes.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE users ALTER COLUMN description SET NOT NULL;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE users DROP CONSTRAINT IF EXISTS users_description_not_null;
