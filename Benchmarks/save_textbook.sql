-- Baseline of "save, N clients": the textbook conditional save, as an application would
-- write it by hand with prepared statements and no Cutover: claim the operation in the
-- drafts plan's ledger, update the draft only at the expected revision, commit. Four round trips.
--
-- Each pgbench client owns one draft (ID :round * 1000 + client) created at revision 1 by
-- the benchmark, and saves its next revision every transaction; the draft's ID is the
-- operation scope and the expected revision the operation ID, exactly as the store's side
-- of the benchmark does. Variables given with -D: rev (0), round, request (the canonical
-- request bytes, hex), title, document (the v2 JSON document), path.
\set rev :rev + 1
\set draft :round * 1000 + :client_id
BEGIN;
INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, draft_id, revision, path)
VALUES ('drafts', :draft, :rev, sha256(:request::bytea), :draft, :rev + 1, :path)
ON CONFLICT (plan, scope, operation_id) DO NOTHING;
UPDATE drafts SET title = :title, document = :document::jsonb, revision = revision + 1
 WHERE id = :draft::text AND revision = :rev;
COMMIT;
