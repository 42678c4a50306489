-- One backfill batch: the next $2 rows after key $1 (NULL: from the start), in key order;
-- those that still hold v1 only get their v2 document, from the row as it is now. A row that
-- another transaction holds is skipped rather than waited on; the writer's own trigger gives
-- it a document, and a later pass catches any that remain.
-- Returns the last key scanned (NULL past the end), the rows converted and the rows scanned.
WITH batch AS (
    SELECT id FROM drafts
     WHERE $1::text IS NULL OR id > $1::text
     ORDER BY id
     LIMIT $2::integer
), locked AS (
    SELECT d.id FROM drafts d JOIN batch b ON b.id = d.id
     WHERE d.document IS NULL
       FOR UPDATE OF d SKIP LOCKED
), converted AS (
    UPDATE drafts d
       SET document = jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', d.title, 'version', 2)
      FROM locked l
     WHERE d.id = l.id AND d.document IS NULL
    RETURNING d.id
)
SELECT (SELECT max(id) FROM batch) AS last_key,
       (SELECT count(*) FROM converted) AS converted,
       (SELECT count(*) FROM batch) AS scanned
