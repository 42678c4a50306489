-- The old application's writes to drafts (sql/drafts/baseline.sql): a new title, then a new draft.
\set id random(1, :rows)
\set n random(1, 1000000)
UPDATE drafts SET title = 'Draft ' || :id || ' edited ' || :n, revision = revision + 1
 WHERE id = 'draft-' || lpad(:id::text, 9, '0');
INSERT INTO drafts (id, title, revision) VALUES ('draft-new-' || nextval('cutover_bench_keys'), 'A new draft', 1);
