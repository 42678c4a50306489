SELECT count(*) AS n FROM orders WHERE id >= 1000000000 AND status_code IS NULL;
