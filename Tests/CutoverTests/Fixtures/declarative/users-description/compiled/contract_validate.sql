-- Contract: check the existing rows; VALIDATE lets reads and writes go on while it scans.

-- SHARE UPDATE EXCLUSIVE lock, scans the table, no rewrite
ALTER TABLE users VALIDATE CONSTRAINT users_description_not_null;
