-- Backfill, the key ranges of parallel workers: the keys that divide a sample of the rows still to
-- convert (a few hundred pages picked at random) into $1 parts, in key order, at most $1 - 1 of them.
-- Each ends a range; the last range runs to the end of the table.

-- ACCESS SHARE lock, reads a sample of the table, no rewrite
WITH sampled AS (
    SELECT t.id, ntile(CAST($1 AS integer)) OVER (ORDER BY t.id) AS part
      FROM public.orders AS t TABLESAMPLE SYSTEM ((SELECT least(100, 100 * 30000 / greatest(CASE WHEN c.reltuples > 0 THEN c.reltuples
                         ELSE pg_relation_size(c.oid) / current_setting('block_size')::float8 * 20 END, 1))
              FROM pg_catalog.pg_class AS c WHERE c.oid = CAST('public.orders' AS regclass))) REPEATABLE (0)
     WHERE t.status_code IS NULL
)
SELECT jsonb_build_object('id', s.id)::text AS upper_key FROM (
    SELECT DISTINCT ON (part) id, part FROM sampled
     ORDER BY part, id DESC
) AS s
 WHERE s.part < CAST($1 AS integer)
 ORDER BY s.id;
