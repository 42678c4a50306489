-- Baseline of "record store client overhead, N clients": exactly the SQL PostgresRecordStore
-- sends for one save of a draft, in one pipeline (libpq pipeline mode, one round trip): BEGIN,
-- the prepared call of the drafts plan's own save function (cutover.save_record_drafts, which
-- the store reads from the plan's registration) with the same eight parameters, COMMIT, Sync.
-- What is left between the record store and this script is the Swift client's own cost.
--
-- Clients, drafts and variables as in save_store_sql.sql, plus columns (the
-- modern path's columns as the store sends them, {"document": "<the v2 document as a JSON
-- string>"}). The key, {"id": "<draft>"}, is put together by the server from the draft's ID,
-- since pgbench has no string operations: one concatenation more than the store sends.
\set rev :rev + 1
\set draft :round * 1000 + :client_id
\startpipeline
BEGIN;
SELECT outcome, revision FROM cutover.save_record_drafts(:draft, :rev, ('{"id": "' || :draft || '"}')::jsonb, :rev, :path, :columns, :request, :lock_timeout_ms);
COMMIT;
\endpipeline
