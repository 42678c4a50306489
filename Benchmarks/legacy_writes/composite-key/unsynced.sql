SELECT count(*) AS n FROM line_items WHERE id >= 1000000000 AND price_cents IS NULL;
