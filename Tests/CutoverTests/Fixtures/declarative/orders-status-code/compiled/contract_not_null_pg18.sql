-- Contract on PostgreSQL 18 and later: the column's own NOT NULL constraint, NOT VALID; once
-- validated it is the column's NOT NULL, with no CHECK and no SET NOT NULL after.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders ADD CONSTRAINT orders_status_code_not_null NOT NULL status_code NOT VALID;
