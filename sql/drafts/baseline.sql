-- The legacy table exactly as an existing application has it before Cutover arrives.
-- Older application versions read and write it with plain SQL:
--   INSERT INTO drafts (id, title, revision) VALUES ($1, $2, 1)
--   UPDATE drafts SET title = $1, revision = revision + 1 WHERE id = $2 AND revision = $3
--   SELECT title, revision FROM drafts WHERE id = $1
CREATE TABLE IF NOT EXISTS drafts (
    id text PRIMARY KEY,
    title text NOT NULL,
    revision bigint NOT NULL
);
