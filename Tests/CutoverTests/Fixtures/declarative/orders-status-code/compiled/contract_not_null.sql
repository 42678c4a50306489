-- Contract before PostgreSQL 18: promise NOT NULL for new writes without scanning under an
-- exclusive lock (NOT VALID checks new writes only).

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders ADD CONSTRAINT orders_status_code_not_null CHECK (status_code IS NOT NULL) NOT VALID;
