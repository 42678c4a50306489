-- Baseline of "client overhead, N clients": exactly the SQL PostgresDraftStore sends for one
-- save, in one pipeline (libpq pipeline mode, one round trip): the prepared call of
-- cutover.save_draft with the same nine parameters, and a Sync, at which the server commits the
-- call's implicit transaction. What is left between the store and this script is the Swift
-- client's own cost.
--
-- Clients, drafts and variables as in save_textbook.sql, plus lock_timeout_ms (the store's
-- default lock timeout, 5000).
\set rev :rev + 1
\set draft :round * 1000 + :client_id
\startpipeline
SELECT outcome, revision FROM cutover.save_draft(:draft, :rev, :request, :draft, :rev, :path, :title, :document, :lock_timeout_ms);
\endpipeline
