-- Contract: check the existing rows; VALIDATE lets reads and writes go on while it scans.

-- SHARE UPDATE EXCLUSIVE lock, scans the table, no rewrite
ALTER TABLE public.orders VALIDATE CONSTRAINT orders_status_code_not_null;

-- SHARE UPDATE EXCLUSIVE lock, scans the table, no rewrite
ALTER TABLE public.orders VALIDATE CONSTRAINT orders_status_code_check;
