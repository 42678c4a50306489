-- Contract before PostgreSQL 18: SET NOT NULL uses the validated CHECK instead of scanning, and
-- the CHECK, now redundant, goes.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders ALTER COLUMN status_code SET NOT NULL;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders DROP CONSTRAINT IF EXISTS orders_status_code_not_null;
