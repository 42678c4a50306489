/// Version 3 of the control schema and of the application's grants, exactly as they shipped, so
/// that the upgrade to the current version can be tested from a real older installation.
enum ControlSchemaVersion3 {
    /// `sql/control/schema.sql` at version 3.
    static let schema = #"""
-- Cutover's control schema, version 3.
--
-- Every statement is idempotent: the installer runs this whole file in one transaction, under
-- a transaction-scoped advisory lock, when the recorded version is older than the binary's,
-- and then records the new version. A version newer than the binary's is refused.

CREATE SCHEMA IF NOT EXISTS cutover;

-- Version history: 1 added the ledger, the outcome log and the save function; 2 added the
-- migration state, the phase history, the applied-file checksums and legacy-write tracking;
-- 3 added the reader registry.

COMMENT ON SCHEMA cutover IS 'Cutover: operation ledger, outcome log and migration state';

CREATE TABLE IF NOT EXISTS cutover.schema_version (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version integer NOT NULL,
    installed_at timestamptz NOT NULL DEFAULT now()
);

-- One row per committed operation. The fingerprint is sha256 of the canonical request, so
-- that a retry is recognised without keeping any of the request's content.
CREATE TABLE IF NOT EXISTS cutover.operation_ledger (
    scope text NOT NULL,
    operation_id text NOT NULL,
    fingerprint bytea NOT NULL,
    draft_id text NOT NULL,
    revision bigint NOT NULL,
    path text NOT NULL CHECK (path IN ('legacy', 'modern')),
    committed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, operation_id)
);

CREATE INDEX IF NOT EXISTS operation_ledger_committed_at ON cutover.operation_ledger (committed_at);

-- Counts of save outcomes per writer path and minute: no payloads, titles or operation IDs.
CREATE TABLE IF NOT EXISTS cutover.outcome_log (
    minute timestamptz NOT NULL,
    path text NOT NULL CHECK (path IN ('legacy', 'modern')),
    outcome text NOT NULL,
    count bigint NOT NULL CHECK (count >= 0),
    PRIMARY KEY (minute, path, outcome)
);

-- One row per migration plan: where it stands. The epoch grows with every change.
CREATE TABLE IF NOT EXISTS cutover.migration_state (
    plan text PRIMARY KEY,
    phase text NOT NULL DEFAULT 'baseline'
        CHECK (phase IN ('baseline', 'expanded', 'modern', 'backfilled', 'contracted')),
    writer_path text NOT NULL DEFAULT 'legacy' CHECK (writer_path IN ('legacy', 'modern')),
    epoch bigint NOT NULL DEFAULT 0,
    writer_switched_at timestamptz,
    backfill_cursor text,
    backfill_converted bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Every step attempted, in every direction and with every outcome. A row left 'running' by
-- a runner that died is an interrupted step; the next run says so and finishes or undoes it.
CREATE TABLE IF NOT EXISTS cutover.phase_history (
    id bigserial PRIMARY KEY,
    plan text NOT NULL,
    step text NOT NULL,
    direction text NOT NULL CHECK (direction IN ('forward', 'rollback')),
    database_role text NOT NULL,
    os_user text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    duration_ms bigint,
    outcome text NOT NULL CHECK (outcome IN ('running', 'done', 'failed', 'refused', 'interrupted')),
    error text,
    checksum text,
    epoch bigint,
    details jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE INDEX IF NOT EXISTS phase_history_plan ON cutover.phase_history (plan, id);

-- The checksum of every SQL file as it was applied; a file changed since is refused.
CREATE TABLE IF NOT EXISTS cutover.applied_files (
    plan text NOT NULL,
    step text NOT NULL,
    file text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (plan, step, file)
);

-- When a write in the legacy format last reached a table (kept by the plan's expand trigger,
-- at most once a second), for the contract check "no legacy write within the window".
CREATE TABLE IF NOT EXISTS cutover.legacy_activity (
    table_name text PRIMARY KEY,
    last_write_at timestamptz NOT NULL
);

-- Application instances and the stored formats their readers understand. An instance is live
-- while it heartbeats; `cutover.reader_heartbeat` registers and refreshes it, and is the one
-- thing an application role needs to be granted (it runs as the schema's owner).
CREATE TABLE IF NOT EXISTS cutover.readers (
    instance_id text PRIMARY KEY CHECK (length(instance_id) BETWEEN 1 AND 255),
    application_name text NOT NULL CHECK (length(application_name) <= 255),
    application_version text NOT NULL CHECK (length(application_version) <= 255),
    formats text[] NOT NULL CHECK (cardinality(formats) BETWEEN 1 AND 16),
    registered_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION cutover.reader_heartbeat(
    p_instance_id text, p_application_name text, p_application_version text, p_formats text[])
RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $heartbeat$
    INSERT INTO cutover.readers (instance_id, application_name, application_version, formats)
    VALUES (p_instance_id, p_application_name, p_application_version, p_formats)
    ON CONFLICT (instance_id) DO UPDATE
       SET application_name = EXCLUDED.application_name, application_version = EXCLUDED.application_version,
           formats = EXCLUDED.formats, last_seen_at = now();
$heartbeat$;

CREATE OR REPLACE FUNCTION cutover.reader_leave(p_instance_id text)
RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $leave$
    DELETE FROM cutover.readers WHERE instance_id = p_instance_id;
$leave$;

-- The save: claim the operation, then the conditional write, in the caller's transaction.
-- p_request is the canonical request; only its sha256 is kept. p_lock_timeout_ms bounds the
-- wait for a save of the same operation, or of the same draft, still in flight.
--
-- Outcomes returned as a row: committed, replayed, operationConflict (nothing was written).
-- Outcomes raised, so that the caller's transaction rolls back the claim with everything else:
--   CU001 conflict (DETAIL: the current revision)   CU002 notFound   CU003 exhausted
--   CU004 the writer's format is not stored at this phase (before expand or after contract)
--   CU005 the stored draft is in a format this build does not know
-- The table is `drafts` as the caller's search_path finds it; which representations it holds
-- (title for v1, document for v2) is read from the catalog, so the same function serves the
-- baseline, expanded and contracted layouts.
CREATE OR REPLACE FUNCTION cutover.save_draft(
    p_scope text, p_operation_id text, p_request bytea, p_draft_id text, p_expected bigint,
    p_path text, p_title text, p_document jsonb, p_lock_timeout_ms integer,
    OUT outcome text, OUT revision bigint)
LANGUAGE plpgsql AS $save$
DECLARE
    v_fingerprint bytea := sha256(p_request);
    v_next bigint := CASE WHEN p_expected = 9223372036854775807 THEN NULL ELSE p_expected + 1 END;
    v_stored_fingerprint bytea;
    v_stored_revision bigint;
    v_has_title boolean;
    v_has_document boolean;
    v_current bigint;
    v_version text;
    v_shape record;
    v_columns jsonb;
    v_setting text;
BEGIN
    -- An assignment, not PERFORM: a simple expression skips the executor.
    IF p_lock_timeout_ms IS NOT NULL THEN
        v_setting := set_config('lock_timeout', p_lock_timeout_ms::text || 'ms', true);
    END IF;

    -- 1. Claim. A concurrent claim of the same operation makes this wait until it commits
    --    (then replay) or aborts (then this one applies), bounded by lock_timeout.
    FOR attempt IN 1..3 LOOP
        INSERT INTO cutover.operation_ledger (scope, operation_id, fingerprint, draft_id, revision, path)
        VALUES (p_scope, p_operation_id, v_fingerprint, p_draft_id, coalesce(v_next, 0), p_path)
        ON CONFLICT (scope, operation_id) DO NOTHING;
        EXIT WHEN FOUND;
        SELECT l.fingerprint, l.revision INTO v_stored_fingerprint, v_stored_revision
          FROM cutover.operation_ledger l
         WHERE l.scope = p_scope AND l.operation_id = p_operation_id;
        IF FOUND THEN
            IF v_stored_fingerprint = v_fingerprint THEN
                outcome := 'replayed';
                revision := v_stored_revision;
            ELSE
                outcome := 'operationConflict';
            END IF;
            RETURN;
        END IF;
        -- The claim that stood in the way was pruned meanwhile: claim again.
    END LOOP;

    -- 2. Which representations the table holds now: the columns of its row as a row-less
    --    query returns it. Its plan is made again whenever the table changes, and costs far
    --    less than a catalog query with an aggregate.
    SELECT * INTO v_shape FROM drafts WHERE false;
    v_columns := to_jsonb(v_shape);
    v_has_title := v_columns ? 'title';
    v_has_document := v_columns ? 'document';
    IF NOT (CASE p_path WHEN 'legacy' THEN v_has_title ELSE v_has_document END) THEN
        RAISE EXCEPTION USING ERRCODE = 'CU004', MESSAGE = CASE p_path
            WHEN 'legacy' THEN 'the legacy format is no longer stored (contract removed it); save through the modern writer'
            ELSE 'the modern format is not stored yet (run expand first); save through the legacy writer' END;
    END IF;

    -- 3. The conditional write.
    IF p_expected = 0 THEN
        IF p_path = 'legacy' THEN
            INSERT INTO drafts (id, title, revision) VALUES (p_draft_id, p_title, 1)
            ON CONFLICT (id) DO NOTHING;
        ELSIF v_has_title THEN
            INSERT INTO drafts (id, title, revision, document) VALUES (p_draft_id, p_title, 1, p_document)
            ON CONFLICT (id) DO NOTHING;
        ELSE
            INSERT INTO drafts (id, revision, document) VALUES (p_draft_id, 1, p_document)
            ON CONFLICT (id) DO NOTHING;
        END IF;
        IF FOUND THEN
            outcome := 'committed';
            revision := 1;
            RETURN;
        END IF;
    ELSIF v_next IS NOT NULL THEN
        IF p_path = 'legacy' THEN
            IF v_has_document THEN
                -- A legacy write keeps the v2 fields it does not know; refuse a document of a
                -- format this build cannot read rather than overwrite what it cannot see.
                SELECT d.document ->> 'version' INTO v_version FROM drafts d WHERE d.id = p_draft_id;
                IF v_version IS NOT NULL AND v_version <> '2' THEN
                    RAISE EXCEPTION USING ERRCODE = 'CU005', MESSAGE = 'unsupported stored format',
                        DETAIL = 'v' || v_version;
                END IF;
            END IF;
            UPDATE drafts d SET title = p_title, revision = d.revision + 1
             WHERE d.id = p_draft_id AND d.revision = p_expected;
        ELSIF v_has_title THEN
            UPDATE drafts d SET title = p_title, document = p_document, revision = d.revision + 1
             WHERE d.id = p_draft_id AND d.revision = p_expected;
        ELSE
            UPDATE drafts d SET document = p_document, revision = d.revision + 1
             WHERE d.id = p_draft_id AND d.revision = p_expected;
        END IF;
        IF FOUND THEN
            outcome := 'committed';
            revision := v_next;
            RETURN;
        END IF;
    END IF;

    -- 4. Nothing was written: say why, and let the caller's transaction roll back the claim.
    SELECT d.revision INTO v_current FROM drafts d WHERE d.id = p_draft_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CU002', MESSAGE = 'draft not found';
    ELSIF v_current = p_expected THEN
        RAISE EXCEPTION USING ERRCODE = 'CU003', MESSAGE = 'revision exhausted';
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'CU001', MESSAGE = 'revision conflict', DETAIL = v_current::text;
    END IF;
END
$save$;

-- IF NOT EXISTS skips any relation of the same name; make sure each one really is our table.
DO $check$
BEGIN
    IF (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'cutover' AND c.relkind = 'r'
           AND c.relname IN ('schema_version', 'operation_ledger', 'outcome_log', 'migration_state',
                             'phase_history', 'applied_files', 'legacy_activity', 'readers')) <> 8 THEN
        RAISE EXCEPTION 'the cutover schema holds other objects where its tables belong'
            USING HINT = 'expected tables schema_version, operation_ledger, outcome_log, migration_state, '
                      || 'phase_history, applied_files, legacy_activity and readers in schema cutover';
    END IF;
END
$check$;
"""#

    /// `sql/roles/grant_application.sql` at version 3.
    static let grants = #"""
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
"""#
}
