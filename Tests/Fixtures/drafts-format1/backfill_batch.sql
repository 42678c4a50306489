-- One backfill batch: up to $2 rows after key $1 (NULL: from the start), in key order, that
-- still hold v1 only, each given its v2 document from the row as it is now. A row that another
-- transaction holds is skipped rather than waited on; the writer's own trigger gives it a
-- document, and a later pass catches any that remain.
--
-- Each row is found and locked once, through the index of v1-only rows (or the primary key
-- past the cursor), and then updated by its tuple ID, which the lock keeps in place until
-- commit: no second lookup by key. A row that a concurrent write moved to a new version
-- between this statement's snapshot and the lock is not visible at its new tuple ID and is
-- left to a later pass; `document IS NULL` again guards against ever overwriting a document.
-- Returns the last key locked (NULL when none remain past $1), the rows converted and the
-- rows locked.
WITH locked AS (
    SELECT ctid, id FROM drafts
     WHERE document IS NULL AND ($1::text IS NULL OR id > $1::text)
     ORDER BY id
     LIMIT $2::integer
       FOR UPDATE SKIP LOCKED
), converted AS (
    UPDATE drafts d
       SET document = jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', d.title, 'version', 2)
     WHERE d.ctid = ANY (ARRAY(SELECT ctid FROM locked)) AND d.document IS NULL
    RETURNING 1
)
SELECT (SELECT max(id) FROM locked) AS last_key,
       (SELECT count(*) FROM converted) AS converted,
       (SELECT count(*) FROM locked) AS scanned
