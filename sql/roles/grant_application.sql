-- What the application role needs, and nothing more. Step 2 of 2 (docs/runbooks/roles.md).
--
-- Run as cutover_migrator after `phase init`, and again after every `phase init` that upgrades
-- the control schema:
--   psql "postgresql://cutover_migrator@db.example:5432/app" -v ON_ERROR_STOP=1 -f sql/roles/grant_application.sql
-- Safe to run again.

GRANT USAGE ON SCHEMA cutover TO cutover_app;

-- PostgresDraftStore checks the control schema's version before its first save.
GRANT SELECT ON cutover.schema_version TO cutover_app;

-- The save, the outcome counts and the reader registry go through functions that run as their
-- owner and do only what they say: a claim in the ledger stands only with the write it belongs
-- to, counts go to the server's current minute and only under known codes, a heartbeat, a leave
-- or the report of the epoch an instance follows needs the registration's secret. The ledger, the
-- outcome log and the registry need no grant, and are given none.
-- The heartbeat and leave without a plan are version 5's, the drafts plan's, deprecated and
-- dropped in a later version; they are granted for applications that still call them.
GRANT EXECUTE ON FUNCTION
    cutover.save_draft(text, text, bytea, text, bigint, text, text, jsonb, integer),
    cutover.save_record(text, text, text, jsonb, bigint, text, jsonb, bytea, integer),
    cutover.read_record(text, jsonb),
    cutover.record_outcomes(text, text[], text[], bigint[]),
    cutover.record_outcomes(text[], text[], bigint[]),
    cutover.reader_heartbeat(text, text, text, text, text[], text),
    cutover.reader_heartbeat(text, text, text, text[], text),
    cutover.reader_leave(text, text, text),
    cutover.reader_leave(text, text),
    cutover.reader_follows(text, text, text, bigint)
  TO cutover_app;

-- Each plan's own save functions (cutover.make_record_save): save_record_<plan>, which
-- save_record calls, and each writer path's, which the record store calls directly: the same
-- save. Functions made after this file ran are granted to the roles granted save_record then.
DO $grant_saves$
DECLARE
    v_function regprocedure;
BEGIN
    FOR v_function IN
        SELECT f.oid::regprocedure FROM cutover.record_plans e
          JOIN pg_proc f ON f.pronamespace = 'cutover'::regnamespace
                        AND format('cutover.%I', f.proname) IN (e.save_function, e.legacy_save_function, e.modern_save_function)
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO cutover_app', v_function);
    END LOOP;
END
$grant_saves$;

-- FleetWriterPath reads the writer path and its epoch (LISTEN cutover_state needs no grant);
-- PostgresRecordStore reads the names of its plan's save functions and the order of their
-- parameters.
GRANT SELECT ON cutover.migration_state TO cutover_app;
GRANT SELECT (plan, save_function, legacy_save_function, modern_save_function, key_columns, legacy_columns, modern_columns)
    ON cutover.record_plans TO cutover_app;

-- Nobody else may call the toolkit's functions.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cutover FROM PUBLIC;

-- The application's own table: rows only. Add DELETE if the application deletes drafts.
GRANT SELECT, INSERT, UPDATE ON drafts TO cutover_app;
