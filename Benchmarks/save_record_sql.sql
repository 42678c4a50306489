-- Baseline of "record store client overhead, N clients": exactly the SQL PostgresRecordStore
-- sends for one save of a draft, in one pipeline (libpq pipeline mode, one round trip): the call
-- of the modern path's own save function (which the store reads from the plan's registration,
-- record_plans.modern_save_function; the benchmark writes its name in place of
-- @modern_save_function@) with the same seven parameters, and a Sync, at which the server
-- commits the call's implicit transaction.
-- What is left between the record store and this script is the Swift client's own cost.
--
-- Clients, drafts and variables as in save_store_sql.sql: the draft's ID is the key, and the
-- document (the v2 document's text) the modern path's one column.
\set rev :rev + 1
\set draft :round * 1000 + :client_id
\startpipeline
SELECT outcome, revision FROM @modern_save_function@(:draft, :rev, :draft, :rev, :document, :request, :lock_timeout_ms);
\endpipeline
