-- Backfill: the rows still to convert.

-- ACCESS SHARE lock, scans the table, no rewrite, through the index of unconverted rows
SELECT count(*) FROM public.orders AS t WHERE (t.status_code IS NULL) AND ((t.status_code IS NULL AND cutover.orders_status_code_up(t) IS NOT NULL));
