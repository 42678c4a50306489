-- Backfill, one batch: the next $2 keys after the cursor $1 (NULL: from the start), up to the key
-- $3 (NULL: to the end), in key order; those of their rows whose modern columns are still NULL are
-- given their values by the row functions. Returns the last key walked as JSON (NULL when none
-- remain past $1 up to $3), the rows converted, the keys walked, and the rows still to convert
-- among them that another transaction held (a later pass walks their keys again).

-- ROW EXCLUSIVE lock, writes rows, no rewrite, locks only the rows of its batch
WITH cursor_key AS (
    SELECT k.id
      FROM (SELECT cutover_row FROM public.orders AS cutover_row WHERE CAST($1 AS text) IS NOT NULL
             ORDER BY cutover_row.id LIMIT 1) AS base,
           jsonb_populate_record(base.cutover_row, CAST($1 AS text)::jsonb) AS k
), lower_key AS (
    SELECT c.id FROM cursor_key AS c
    UNION ALL
    (SELECT f.id FROM public.orders AS f WHERE CAST($1 AS text) IS NULL
      ORDER BY f.id LIMIT 1)
), upper_key AS (
    SELECT k.id
      FROM (SELECT cutover_row FROM public.orders AS cutover_row WHERE CAST($3 AS text) IS NOT NULL
             ORDER BY cutover_row.id LIMIT 1) AS base,
           jsonb_populate_record(base.cutover_row, CAST($3 AS text)::jsonb) AS k
    UNION ALL
    (SELECT f.id FROM public.orders AS f WHERE CAST($3 AS text) IS NULL
      ORDER BY f.id DESC LIMIT 1)
), nth_key AS (
    SELECT w.id FROM public.orders AS w
     WHERE w.id >= (SELECT id FROM lower_key)
       AND w.id <= (SELECT id FROM upper_key)
       AND (CAST($1 AS text) IS NULL OR w.id <> (SELECT id FROM cursor_key))
     ORDER BY w.id
    OFFSET greatest(CAST($2 AS integer) - 1, 0) LIMIT 1
), batch_end AS (
    SELECT n.id FROM nth_key AS n
    UNION ALL
    (SELECT w.id FROM public.orders AS w
      WHERE NOT EXISTS (SELECT FROM nth_key)
        AND w.id >= (SELECT id FROM lower_key)
        AND w.id <= (SELECT id FROM upper_key)
        AND (CAST($1 AS text) IS NULL OR w.id <> (SELECT id FROM cursor_key))
      ORDER BY w.id DESC LIMIT 1)
), pending AS (
    SELECT t.ctid FROM public.orders AS t
     WHERE t.id >= (SELECT id FROM lower_key)
       AND t.id <= (SELECT id FROM batch_end)
       AND (CAST($1 AS text) IS NULL OR t.id <> (SELECT id FROM cursor_key))
       AND (t.status_code IS NULL)
), locked AS (
    SELECT t.ctid FROM public.orders AS t
     WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM pending)) AND (t.status_code IS NULL)
       FOR UPDATE OF t SKIP LOCKED
), converted AS (
    UPDATE public.orders AS t
       SET status_code = t.status_code
     WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM locked)) AND (t.status_code IS NULL)
       AND (SELECT set_config('cutover.backfill', 'on', true)) = 'on'
    RETURNING NOT (t.status_code IS NULL) AS filled
)
SELECT (SELECT jsonb_build_object('id', l.id)::text FROM batch_end AS l) AS last_key,
       (SELECT count(*) FROM converted WHERE filled) AS converted,
       CASE WHEN EXISTS (SELECT FROM nth_key) THEN CAST(greatest(CAST($2 AS integer), 1) AS bigint)
            ELSE (SELECT count(*) FROM public.orders AS w
                   WHERE w.id >= (SELECT id FROM lower_key)
                     AND w.id <= (SELECT id FROM batch_end)
                     AND (CAST($1 AS text) IS NULL OR w.id <> (SELECT id FROM cursor_key))) END AS scanned,
       (SELECT count(*) FROM pending) - (SELECT count(*) FROM locked) AS skipped;
