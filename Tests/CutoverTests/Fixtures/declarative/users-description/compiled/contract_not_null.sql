-- Contract before PostgreSQL 18: promise NOT NULL for new writes without scanning under an
-- exclusive lock (NOT VALID checks new writes only).

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE users ADD CONSTRAINT users_description_not_null CHECK (description IS NOT NULL) NOT VALID;
