-- Revert a contract stopped before its last file: the constraints and unique indexes it added
-- go, and the columns it made NOT NULL are nullable again. Once contract_drop.sql has run,
-- nothing brings the legacy representation back.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders DROP CONSTRAINT IF EXISTS orders_status_code_not_null;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders DROP CONSTRAINT IF EXISTS orders_status_code_check;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders ALTER COLUMN status_code DROP NOT NULL;
