-- Backfill, the key ranges of parallel workers: the key of every $1-th row still to convert, in key
-- order, at most $2 of them. Each ends a range; the last range runs to the end of the table.

-- ACCESS SHARE lock, scans the table, no rewrite, in key order
SELECT jsonb_build_object('id', s.id)::text AS upper_key FROM (
    SELECT t.id, row_number() OVER (ORDER BY t.id) AS n
      FROM users AS t
     WHERE t.description IS NULL
) AS s
 WHERE s.n % CAST($1 AS bigint) = 0
 ORDER BY s.n
 LIMIT CAST($2 AS integer);
