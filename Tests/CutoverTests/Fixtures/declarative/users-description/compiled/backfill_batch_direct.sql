-- Backfill, one batch, updating its rows directly: the batch of compiled/backfill_batch.sql, by one UPDATE
-- over its keys that locks each row as it reaches it, waiting for a row another transaction holds.
-- The backfill runs it under a lock timeout of a few milliseconds and, when that runs out, runs
-- compiled/backfill_batch.sql in its place for the same keys.

-- ROW EXCLUSIVE lock, writes rows, no rewrite, locks only the rows of its batch
WITH cursor_key AS (
    SELECT k.id
      FROM (SELECT cutover_row FROM users AS cutover_row WHERE CAST($1 AS text) IS NOT NULL
             ORDER BY cutover_row.id LIMIT 1) AS base,
           jsonb_populate_record(base.cutover_row, CAST($1 AS text)::jsonb) AS k
), lower_key AS (
    SELECT c.id FROM cursor_key AS c
    UNION ALL
    (SELECT f.id FROM users AS f WHERE CAST($1 AS text) IS NULL
      ORDER BY f.id LIMIT 1)
), upper_key AS (
    SELECT k.id
      FROM (SELECT cutover_row FROM users AS cutover_row WHERE CAST($3 AS text) IS NOT NULL
             ORDER BY cutover_row.id LIMIT 1) AS base,
           jsonb_populate_record(base.cutover_row, CAST($3 AS text)::jsonb) AS k
    UNION ALL
    (SELECT f.id FROM users AS f WHERE CAST($3 AS text) IS NULL
      ORDER BY f.id DESC LIMIT 1)
), nth_key AS (
    SELECT w.id FROM users AS w
     WHERE w.id >= (SELECT id FROM lower_key)
       AND w.id <= (SELECT id FROM upper_key)
       AND (CAST($1 AS text) IS NULL OR w.id <> (SELECT id FROM cursor_key))
     ORDER BY w.id
    OFFSET greatest(CAST($2 AS integer) - 1, 0) LIMIT 1
), batch_end AS (
    SELECT n.id FROM nth_key AS n
    UNION ALL
    (SELECT w.id FROM users AS w
      WHERE NOT EXISTS (SELECT FROM nth_key)
        AND w.id >= (SELECT id FROM lower_key)
        AND w.id <= (SELECT id FROM upper_key)
        AND (CAST($1 AS text) IS NULL OR w.id <> (SELECT id FROM cursor_key))
      ORDER BY w.id DESC LIMIT 1)
), converted AS (
    UPDATE users AS t
       SET description = coalesce(t.description, cutover.users_description_up(t))
     WHERE t.id >= (SELECT id FROM lower_key)
       AND t.id <= (SELECT id FROM batch_end)
       AND (CAST($1 AS text) IS NULL OR t.id <> (SELECT id FROM cursor_key))
       AND (t.description IS NULL)
    RETURNING NOT (t.description IS NULL) AS filled
)
SELECT (SELECT jsonb_build_object('id', l.id)::text FROM batch_end AS l) AS last_key,
       (SELECT count(*) FROM converted WHERE filled) AS converted,
       CASE WHEN EXISTS (SELECT FROM nth_key) THEN CAST(greatest(CAST($2 AS integer), 1) AS bigint)
            ELSE (SELECT count(*) FROM users AS w
                   WHERE w.id >= (SELECT id FROM lower_key)
                     AND w.id <= (SELECT id FROM batch_end)
                     AND (CAST($1 AS text) IS NULL OR w.id <> (SELECT id FROM cursor_key))) END AS scanned,
       CAST(0 AS bigint) AS skipped;
