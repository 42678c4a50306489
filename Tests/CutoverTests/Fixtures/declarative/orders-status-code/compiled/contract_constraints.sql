-- Contract: the modern constraints, NOT VALID: enforced for new writes, the old rows validated next.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders ADD CONSTRAINT orders_status_code_check CHECK (status_code BETWEEN 1 AND 3) NOT VALID;
