-- What the application role needs, and nothing more. Step 2 of 2 (docs/runbooks/roles.md).
--
-- Run as cutover_migrator after `phase init`, and again after every `phase init` that upgrades
-- the control schema:
--   psql "postgresql://cutover_migrator@db.example:5432/app" -v ON_ERROR_STOP=1 -f sql/roles/grant_application.sql
-- Safe to run again.

GRANT USAGE ON SCHEMA cutover TO cutover_app;

-- PostgresDraftStore checks the control schema's version before its first save.
GRANT SELECT ON cutover.schema_version TO cutover_app;

-- The save. cutover.save_draft runs with the caller's rights: it claims the operation in the
-- ledger (INSERT), reads a claim that is there already to replay it (SELECT), and writes drafts.
GRANT EXECUTE ON FUNCTION cutover.save_draft(text, text, bytea, text, bigint, text, text, jsonb, integer) TO cutover_app;
GRANT SELECT, INSERT ON cutover.operation_ledger TO cutover_app;

-- Outcome counts per path and minute, added to in the background (INSERT … ON CONFLICT UPDATE).
GRANT SELECT, INSERT, UPDATE ON cutover.outcome_log TO cutover_app;

-- FleetWriterPath reads the writer path and its epoch (LISTEN cutover_state needs no grant).
GRANT SELECT ON cutover.migration_state TO cutover_app;

-- The reader registry's heartbeat and leave run as their owner: the table needs no grant.
GRANT EXECUTE ON FUNCTION cutover.reader_heartbeat(text, text, text, text[]), cutover.reader_leave(text) TO cutover_app;

-- Nobody else may call the toolkit's functions.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cutover FROM PUBLIC;

-- The application's own table: rows only. Add DELETE if the application deletes drafts.
GRANT SELECT, INSERT, UPDATE ON drafts TO cutover_app;
