-- Cutover's control schema, version 15.
--
-- Every statement is idempotent: the installer runs this whole file in one transaction, under
-- a transaction-scoped advisory lock, when the recorded version is older than the binary's,
-- and then records the new version. A version newer than the binary's is refused.

CREATE SCHEMA IF NOT EXISTS cutover;

-- Version history: 1 added the ledger, the outcome log and the save function; 2 added the
-- migration state, the phase history, the applied-file checksums and legacy-write tracking;
-- 3 added the reader registry; 4 leaves the application nothing but functions that act as
-- itself: save_draft and record_outcomes run as the schema's owner, a heartbeat is validated,
-- capped and bound to its instance's registration secret, and no other role keeps direct rights
-- on the ledger or the outcome log; it also adds the per-plan runner lease and the 'skipped'
-- outcome of a step asked for again after it happened; 5 adds the epoch each instance reports it
-- follows (cutover.reader_epochs, cutover.reader_follows), for `phase switch --wait-for-fleet`,
-- and binds the runner lease to the runner's own connection as well as to its server session;
-- 6 keys the operation ledger, the outcome log and the reader registry by plan, so that two
-- migrations in one database keep their operations, their counts and their readers apart, and
-- moves every earlier row to the drafts plan; it registers each plan's entity
-- (cutover.record_plans) and adds save_record, the save of any registered plan's table, whose
-- ledger rows carry the record's key; 7 makes each registered plan a save function of its own,
-- written out for its table (cutover.make_record_save), which save_record calls, and registers
-- the columns each writer path writes; 8 makes those functions and save_record_dynamic again
-- with fewer expressions per save, since PL/pgSQL makes each ready again in every transaction;
-- 9 makes each plan a save function per writer path, taking the key's and the path's columns as
-- text parameters read once as their columns' types (cutover.record_plans.legacy_save_function
-- and modern_save_function), which the plan's save_record_<plan> calls; 10 records every
-- rehearsal of a plan (cutover.rehearsals): its scratch database, the session running it, its
-- verdict and its report, for `phase rehearse`, the gate of expand and contract, and the removal
-- of a scratch database whose rehearsal was killed; 11 takes an operator's pause, resume and
-- retune of a running backfill (cutover.backfill_control), which the backfill reads before every
-- batch; 12 records the rows a plan's backfill had to convert when it began
-- (migration_state.backfill_initial_remaining), so that the rows the application's own writes
-- converted meanwhile are counted apart from the backfill's, and the key ranges a backfill of
-- several workers divides its rows into, each with its own cursor (cutover.backfill_ranges); 13
-- counts the rows a plan's predicate selects under the search_path the plan's row functions and
-- sync trigger pin (cutover.count_rows), so that the rows a backfill has still to convert are
-- counted with the plan's expressions written out rather than called once per row, and records
-- the oldest version whose applications work with the schema (schema_version.applications_from);
-- 14 lets a save or a read through the functions that run as the owner do only what the calling
-- role may do itself to the table (cutover.calling_role, CU007 otherwise), refuses a write whose
-- claim was pruned from under it three times rather than write without one, reports a revision
-- exhausted only at the largest one, refuses a NULL key value and says so of a NULL revision,
-- names each writer path's function after the order of its parameters, so that a registration
-- that changes them leaves no function a caller could fill in the old order, and saves a plan
-- whose key column is named like one of the save function's variables through
-- save_record_dynamic; 15 refuses a save or a read for a calling role that row-level security
-- on the table holds (cutover.caller_held_to_row_security), whose policies the functions, running
-- as the owner, would not apply.

COMMENT ON SCHEMA cutover IS 'Cutover: operation ledger, outcome log and migration state';

CREATE TABLE IF NOT EXISTS cutover.schema_version (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version integer NOT NULL,
    installed_at timestamptz NOT NULL DEFAULT now()
);
-- The oldest version whose applications work with the schema as installed (version 13): an
-- application (the store, the fleet's writer path, the reader registry) only calls the schema's
-- functions and reads its tables, and a version that changes none of what it uses lets the
-- applications of earlier versions start, and go on restarting, until they are deployed anew.
-- The installer writes it with the version; NULL, as before version 13: only that version's.
ALTER TABLE cutover.schema_version ADD COLUMN IF NOT EXISTS applications_from integer
    CHECK (applications_from IS NULL OR applications_from <= version);

-- One row per committed operation. The fingerprint is sha256 of the canonical request, so
-- that a retry is recognised without keeping any of the request's content.
CREATE TABLE IF NOT EXISTS cutover.operation_ledger (
    scope text NOT NULL,
    operation_id text NOT NULL,
    fingerprint bytea NOT NULL,
    draft_id text,
    revision bigint NOT NULL,
    path text NOT NULL CHECK (path IN ('legacy', 'modern')),
    committed_at timestamptz NOT NULL DEFAULT now(),
    -- Last, where the upgrade from version 5 adds it, so that every installation has one layout.
    plan text NOT NULL DEFAULT 'drafts' CHECK (length(plan) BETWEEN 1 AND 255),
    record_key jsonb,
    PRIMARY KEY (plan, scope, operation_id)
);

-- The plan an operation belongs to (version 6): a (scope, operation ID) is one operation per
-- plan. Every entry written before version 6 is a drafts save, the only plan whose saves the
-- ledger recorded then, and the default keeps a drafts entry written as version 5 wrote it one.
ALTER TABLE cutover.operation_ledger
    ADD COLUMN IF NOT EXISTS plan text NOT NULL DEFAULT 'drafts' CHECK (length(plan) BETWEEN 1 AND 255);

-- The record an operation saved (version 6): save_draft's entries name their draft in draft_id,
-- save_record's name theirs in record_key, a JSON object of the key's columns ({"id": 42}), and
-- leave draft_id NULL.
ALTER TABLE cutover.operation_ledger ADD COLUMN IF NOT EXISTS record_key jsonb;
ALTER TABLE cutover.operation_ledger ALTER COLUMN draft_id DROP NOT NULL;

CREATE INDEX IF NOT EXISTS operation_ledger_committed_at ON cutover.operation_ledger (committed_at);

-- Counts of save outcomes per plan, writer path and minute: no payloads, titles or operation IDs.
CREATE TABLE IF NOT EXISTS cutover.outcome_log (
    minute timestamptz NOT NULL,
    path text NOT NULL CHECK (path IN ('legacy', 'modern')),
    outcome text NOT NULL,
    count bigint NOT NULL CHECK (count >= 0),
    plan text NOT NULL DEFAULT 'drafts' CHECK (length(plan) BETWEEN 1 AND 255),
    PRIMARY KEY (plan, minute, path, outcome)
);

-- The plan counted (version 6); every count before version 6 is of drafts saves.
ALTER TABLE cutover.outcome_log
    ADD COLUMN IF NOT EXISTS plan text NOT NULL DEFAULT 'drafts' CHECK (length(plan) BETWEEN 1 AND 255);

-- Version 6's keys begin with the plan: a table keyed otherwise gets the new key, in place.
DO $plan_keys$
DECLARE
    v_table record;
BEGIN
    FOR v_table IN
        SELECT * FROM (VALUES ('operation_ledger', ARRAY['plan', 'scope', 'operation_id']),
                              ('outcome_log', ARRAY['plan', 'minute', 'path', 'outcome'])) AS t(name, key)
    LOOP
        IF (SELECT array_agg(a.attname::text ORDER BY k.position)
              FROM pg_constraint c
              CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, position)
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
             WHERE c.conrelid = format('cutover.%I', v_table.name)::regclass AND c.contype = 'p')
           IS DISTINCT FROM v_table.key THEN
            EXECUTE format('ALTER TABLE cutover.%I DROP CONSTRAINT IF EXISTS %I', v_table.name, v_table.name || '_pkey');
            EXECUTE format('ALTER TABLE cutover.%I ADD CONSTRAINT %I PRIMARY KEY (%s)', v_table.name, v_table.name || '_pkey',
                           (SELECT string_agg(quote_ident(column_name), ', ') FROM unnest(v_table.key) AS column_name));
        END IF;
    END LOOP;
END
$plan_keys$;

-- The entity each plan's saves write (version 6), for cutover.save_record: its table (schema-
-- qualified), the columns of its key and its revision column (NULL: the row's xmin). Registered
-- by cutover.register_record_plan, which only the schema's owner may call; the drafts plan's at
-- install.
CREATE TABLE IF NOT EXISTS cutover.record_plans (
    plan text PRIMARY KEY CHECK (length(plan) BETWEEN 1 AND 255),
    table_name text NOT NULL,
    key_columns text[] NOT NULL CHECK (cardinality(key_columns) BETWEEN 1 AND 32),
    revision_column text,
    registered_at timestamptz NOT NULL DEFAULT now(),
    legacy_columns text[],
    modern_columns text[],
    save_function text,
    legacy_save_function text,
    modern_save_function text
);

-- The columns each writer path writes, as the plan declares them, and the save function made
-- for the plan's table from them (version 7): cutover.make_record_save.
ALTER TABLE cutover.record_plans
    ADD COLUMN IF NOT EXISTS legacy_columns text[],
    ADD COLUMN IF NOT EXISTS modern_columns text[],
    ADD COLUMN IF NOT EXISTS save_function text;

-- Each writer path's own save function (version 9), made by cutover.make_record_save.
ALTER TABLE cutover.record_plans
    ADD COLUMN IF NOT EXISTS legacy_save_function text,
    ADD COLUMN IF NOT EXISTS modern_save_function text;

-- The statements cutover.save_record_dynamic made for a plan's table in one shape (its oid, and the
-- xmin of the pg_attribute row of each column the save names, which every change of that column
-- renews: a type, a rename, a drop) and one set of columns: a save of the same shape and columns
-- runs them without building them again.
-- Written only by save_record_dynamic (running as the owner); register_record_plan clears a plan's.
CREATE TABLE IF NOT EXISTS cutover.record_statements (
    plan text NOT NULL,
    shape text NOT NULL,
    columns text NOT NULL,
    insert_sql text NOT NULL,
    update_sql text NOT NULL,
    current_sql text NOT NULL,
    PRIMARY KEY (plan, shape, columns)
);
-- Statements an earlier version made are made again, as this version writes them.
DELETE FROM cutover.record_statements;

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

-- Rows the backfill had to convert when its first run began (the rows converted before it plus
-- those left), NULL until then and again at baseline (version 12). What that number loses
-- beyond the backfill's own conversions and the rows still to convert, the application's writes
-- converted (or deleted).
ALTER TABLE cutover.migration_state ADD COLUMN IF NOT EXISTS backfill_initial_remaining bigint
    CHECK (backfill_initial_remaining >= 0);

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
    outcome text NOT NULL CHECK (outcome IN ('running', 'done', 'skipped', 'failed', 'refused', 'interrupted')),
    error text,
    checksum text,
    epoch bigint,
    details jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE INDEX IF NOT EXISTS phase_history_plan ON cutover.phase_history (plan, id);

-- 'skipped' (version 4): a step asked for again after it had happened, which changed nothing.
ALTER TABLE cutover.phase_history DROP CONSTRAINT IF EXISTS phase_history_outcome_check;
ALTER TABLE cutover.phase_history ADD CONSTRAINT phase_history_outcome_check
    CHECK (outcome IN ('running', 'done', 'skipped', 'failed', 'refused', 'interrupted'));

-- Which runner works on a plan: at most one row per plan, naming the server session that
-- holds it. A row whose session has ended (its pid is gone, or now belongs to a session that
-- started later) holds nothing, so a runner that dies frees the plan with its session. Only
-- the owner of this schema (the migrator) may write it: an application role can neither take
-- nor hold nor release a plan's exclusion, as it could with an advisory lock.
CREATE TABLE IF NOT EXISTS cutover.runner_lease (
    plan text PRIMARY KEY,
    pid integer NOT NULL,
    backend_start timestamptz NOT NULL,
    database_role text NOT NULL,
    os_user text NOT NULL,
    application_name text NOT NULL,
    acquired_at timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON cutover.runner_lease FROM PUBLIC;

-- A secret of the runner's connection (version 5). Through a transaction pooler one server
-- session serves many clients in turn, so the session alone cannot tell one runner from
-- another: a lease is re-entered only by the connection that took it. NULL for a lease taken
-- before version 5.
ALTER TABLE cutover.runner_lease ADD COLUMN IF NOT EXISTS holder text;

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

-- Application instances and the stored formats their readers understand, per plan (version 6):
-- an instance registers with each plan whose data it reads, with the formats it reads of that
-- plan's entity. An instance is live while it heartbeats; `cutover.reader_heartbeat` registers
-- and refreshes it, `cutover.reader_follows` records the epoch it follows and
-- `cutover.reader_leave` removes it, and they are all an application role needs to be granted
-- here (they run as the schema's owner). The columns are in the order in which versions 3, 4
-- and 6 added them, so that every installation has one layout.
CREATE TABLE IF NOT EXISTS cutover.readers (
    instance_id text NOT NULL CHECK (length(instance_id) BETWEEN 1 AND 255),
    application_name text NOT NULL CHECK (length(application_name) <= 255),
    application_version text NOT NULL CHECK (length(application_version) <= 255),
    formats text[] NOT NULL CHECK (cardinality(formats) BETWEEN 1 AND 16),
    registered_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    token_sha256 bytea,
    plan text NOT NULL DEFAULT 'drafts' CHECK (length(plan) BETWEEN 1 AND 255),
    PRIMARY KEY (plan, instance_id)
);

-- sha256 of the secret the registering process chose: only that process may refresh or remove
-- its registration while it is live. NULL for a registration made before version 4.
ALTER TABLE cutover.readers ADD COLUMN IF NOT EXISTS token_sha256 bytea;

-- The plan the registration is for (version 6). Before version 6 a registration was the whole
-- database's, and the drafts plan the only one whose readers any check looked at: every earlier
-- registration becomes the drafts plan's.
ALTER TABLE cutover.readers
    ADD COLUMN IF NOT EXISTS plan text NOT NULL DEFAULT 'drafts' CHECK (length(plan) BETWEEN 1 AND 255);

-- Version 6 keys the registry by plan. From an earlier version every registration becomes the
-- drafts plan's (the column's default above), and an instance that reported following another
-- plan (version 5's cutover.reader_epochs) is registered with that plan too, with the same names,
-- formats, secret and times, so that its report keeps a registration to belong to: a report
-- belongs to the plan's registration (the foreign key below). Runs once: afterwards the
-- registry's key begins with the plan.
DO $reader_plans$
BEGIN
    IF (SELECT array_agg(a.attname::text ORDER BY k.position)
          FROM pg_constraint c
          CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, position)
          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
         WHERE c.conrelid = 'cutover.readers'::regclass AND c.contype = 'p')
       IS DISTINCT FROM ARRAY['plan', 'instance_id'] THEN
        IF to_regclass('cutover.reader_epochs') IS NOT NULL THEN
            ALTER TABLE cutover.reader_epochs DROP CONSTRAINT IF EXISTS reader_epochs_instance_id_fkey;
        END IF;
        ALTER TABLE cutover.readers DROP CONSTRAINT IF EXISTS readers_pkey;
        ALTER TABLE cutover.readers ADD CONSTRAINT readers_pkey PRIMARY KEY (plan, instance_id);
        IF to_regclass('cutover.reader_epochs') IS NOT NULL THEN
            INSERT INTO cutover.readers (plan, instance_id, application_name, application_version, formats,
                                         registered_at, last_seen_at, token_sha256)
            SELECT e.plan, r.instance_id, r.application_name, r.application_version, r.formats,
                   r.registered_at, r.last_seen_at, r.token_sha256
              FROM cutover.reader_epochs e JOIN cutover.readers r ON r.instance_id = e.instance_id AND r.plan = 'drafts'
             WHERE e.plan <> 'drafts'
            ON CONFLICT (plan, instance_id) DO NOTHING;
            ALTER TABLE cutover.reader_epochs ADD CONSTRAINT reader_epochs_registration_fkey FOREIGN KEY (plan, instance_id)
                REFERENCES cutover.readers (plan, instance_id) ON DELETE CASCADE;
        END IF;
    END IF;
END
$reader_plans$;

-- The epoch of each plan's writer path that an instance follows, as it reported it (version 5):
-- a report means that every operation the instance starts from then on takes the path of that
-- epoch. Only the instance's registration secret may write it (cutover.reader_follows), and it
-- goes with the registration.
CREATE TABLE IF NOT EXISTS cutover.reader_epochs (
    instance_id text NOT NULL,
    plan text NOT NULL CHECK (length(plan) BETWEEN 1 AND 255),
    epoch bigint NOT NULL CHECK (epoch >= 0),
    reported_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, plan),
    CONSTRAINT reader_epochs_registration_fkey FOREIGN KEY (plan, instance_id)
        REFERENCES cutover.readers (plan, instance_id) ON DELETE CASCADE
);
REVOKE ALL ON cutover.reader_epochs FROM PUBLIC;

-- Version 3's heartbeat and leave took no secret, so any instance could rewrite or remove any
-- other's registration.
DROP FUNCTION IF EXISTS cutover.reader_heartbeat(text, text, text, text[]);
DROP FUNCTION IF EXISTS cutover.reader_leave(text);

-- Registers an instance with plan p_plan or refreshes that registration. p_token is a secret of
-- at least 16 characters that the process chooses when it starts and keeps to itself; the
-- registry keeps only its sha256. An instance that reads the data of several plans registers
-- with each, with the formats it reads of each.
--   - The same plan, instance ID and secret: a refresh.
--   - The same plan and instance ID, another secret: refused (23505) while the registration is
--     live; a registration silent for 120 seconds (a process that died without leaving) is
--     taken over.
--   - A new registration: made, unless 10,000 registrations exist in the whole registry, every
--     plan's together, once those silent for 120 seconds are removed (54000).
-- Plans, names and versions are 1 to 255 characters without control characters; formats are 1
-- to 16 codes such as 'v2' (22023 otherwise). The plan need not be tracked yet: an instance may
-- start before `phase init`.
CREATE OR REPLACE FUNCTION cutover.reader_heartbeat(
    p_plan text, p_instance_id text, p_application_name text, p_application_version text, p_formats text[], p_token text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $heartbeat$
DECLARE
    -- C0, DEL, C1, and the invisible and bidirectional formatting characters.
    c_hidden constant text := '[\u0001-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]';
    c_stale constant interval := interval '120 seconds';
    c_limit constant integer := 10000;
    v_token bytea;
    v_formats text[];
    v_registered bigint;
BEGIN
    IF p_plan IS NULL OR length(p_plan) NOT BETWEEN 1 AND 255 OR p_plan ~ c_hidden THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'reader_heartbeat: the plan must be 1 to 255 characters without control characters';
    END IF;
    IF p_instance_id IS NULL OR length(p_instance_id) NOT BETWEEN 1 AND 255 OR p_instance_id ~ c_hidden THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'reader_heartbeat: the instance ID must be 1 to 255 characters without control characters';
    END IF;
    IF p_application_name IS NULL OR length(p_application_name) NOT BETWEEN 1 AND 255 OR p_application_name ~ c_hidden
       OR p_application_version IS NULL OR length(p_application_version) NOT BETWEEN 1 AND 255
       OR p_application_version ~ c_hidden THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'reader_heartbeat: the application name and version must be 1 to 255 characters without control characters';
    END IF;
    IF p_formats IS NULL OR array_ndims(p_formats) IS DISTINCT FROM 1 OR cardinality(p_formats) NOT BETWEEN 1 AND 16
       OR array_position(p_formats, NULL) IS NOT NULL
       OR EXISTS (SELECT FROM unnest(p_formats) AS f(code) WHERE f.code !~ '^v[0-9]{1,4}$') THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'reader_heartbeat: formats must be a one-dimensional array of 1 to 16 format codes such as ''v2''';
    END IF;
    IF p_token IS NULL OR length(p_token) NOT BETWEEN 16 AND 255 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'reader_heartbeat: the registration secret must be 16 to 255 characters';
    END IF;
    v_token := sha256(convert_to(p_token, 'UTF8'));
    v_formats := ARRAY(SELECT f.code FROM unnest(p_formats) WITH ORDINALITY AS f(code, position) ORDER BY f.position);

    -- 1. The caller's own registration. Neither update locks a row it does not change, so a
    --    caller with another secret cannot hold up the owner's heartbeat.
    UPDATE cutover.readers r
       SET application_name = p_application_name, application_version = p_application_version,
           formats = v_formats, last_seen_at = now()
     WHERE r.plan = p_plan AND r.instance_id = p_instance_id AND r.token_sha256 = v_token;
    IF FOUND THEN
        RETURN;
    END IF;

    -- 2. A registration whose process went silent: taken over.
    UPDATE cutover.readers r
       SET application_name = p_application_name, application_version = p_application_version,
           formats = v_formats, token_sha256 = v_token, registered_at = now(), last_seen_at = now()
     WHERE r.plan = p_plan AND r.instance_id = p_instance_id AND r.last_seen_at <= now() - c_stale;
    IF FOUND THEN
        -- What the silent process followed says nothing about the one taking over.
        DELETE FROM cutover.reader_epochs e WHERE e.plan = p_plan AND e.instance_id = p_instance_id;
        RETURN;
    END IF;
    IF EXISTS (SELECT FROM cutover.readers r WHERE r.plan = p_plan AND r.instance_id = p_instance_id) THEN
        RAISE EXCEPTION USING ERRCODE = '23505',
            MESSAGE = 'reader_heartbeat: the instance ID is registered by another live process',
            HINT = 'give each process an instance ID of its own, or wait until the other one has been silent for 120 seconds';
    END IF;

    -- 3. A new registration, within the limit; registrations gone silent make room first.
    SELECT count(*) INTO v_registered FROM cutover.readers;
    IF v_registered >= c_limit THEN
        DELETE FROM cutover.readers r WHERE r.last_seen_at <= now() - c_stale;
        SELECT count(*) INTO v_registered FROM cutover.readers;
        IF v_registered >= c_limit THEN
            RAISE EXCEPTION USING ERRCODE = '54000',
                MESSAGE = format('reader_heartbeat: the registry holds %s live registrations, its limit', c_limit),
                HINT = 'instances that stop should call cutover.reader_leave';
        END IF;
    END IF;
    INSERT INTO cutover.readers (plan, instance_id, application_name, application_version, formats, token_sha256)
    VALUES (p_plan, p_instance_id, p_application_name, p_application_version, v_formats, v_token)
    ON CONFLICT (plan, instance_id) DO NOTHING;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '23505',
            MESSAGE = 'reader_heartbeat: the instance ID is registered by another live process',
            HINT = 'give each process an instance ID of its own, or wait until the other one has been silent for 120 seconds';
    END IF;
END
$heartbeat$;

-- Removes the caller's own registration with plan p_plan; false when there is none with that
-- secret.
CREATE OR REPLACE FUNCTION cutover.reader_leave(p_plan text, p_instance_id text, p_token text)
RETURNS boolean LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $leave$
    WITH removed AS (
        DELETE FROM cutover.readers r
         WHERE r.plan = p_plan AND r.instance_id = p_instance_id AND r.token_sha256 = sha256(convert_to(p_token, 'UTF8'))
        RETURNING 1)
    SELECT EXISTS (SELECT FROM removed);
$leave$;

-- Version 5's heartbeat and leave, for applications still calling them: they refresh and remove
-- the drafts plan's registration. Deprecated since version 6: call them with the plan; a later
-- version drops these two.
CREATE OR REPLACE FUNCTION cutover.reader_heartbeat(
    p_instance_id text, p_application_name text, p_application_version text, p_formats text[], p_token text)
RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $heartbeat_v5$
    SELECT cutover.reader_heartbeat('drafts', p_instance_id, p_application_name, p_application_version, p_formats, p_token);
$heartbeat_v5$;

CREATE OR REPLACE FUNCTION cutover.reader_leave(p_instance_id text, p_token text)
RETURNS boolean LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $leave_v5$
    SELECT cutover.reader_leave('drafts', p_instance_id, p_token);
$leave_v5$;

-- Records that the caller's own registration with plan p_plan follows epoch p_epoch of that
-- plan's writer path, and refreshes the registration; false when the plan has no registration
-- of the instance with that secret (it went silent and was taken over or removed, or was never
-- made: heartbeat with the plan first). The plan must exist and the epoch be one it has reached
-- (22023 otherwise): an instance reports only what it read. The signature is version 5's, which
-- named the plan already; since version 6 the registration it refreshes is that plan's, so an
-- instance registered through version 5's heartbeat (the drafts plan's) reports for drafts only.
CREATE OR REPLACE FUNCTION cutover.reader_follows(p_instance_id text, p_token text, p_plan text, p_epoch bigint)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $follows$
DECLARE
    v_current bigint;
BEGIN
    SELECT s.epoch INTO v_current FROM cutover.migration_state s WHERE s.plan = p_plan;
    IF NOT FOUND OR p_epoch IS NULL OR p_epoch < 0 OR p_epoch > v_current THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'reader_follows: the plan must exist and the epoch be one it has reached';
    END IF;
    UPDATE cutover.readers r SET last_seen_at = now()
     WHERE r.plan = p_plan AND r.instance_id = p_instance_id AND r.token_sha256 = sha256(convert_to(p_token, 'UTF8'));
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO cutover.reader_epochs AS e (instance_id, plan, epoch) VALUES (p_instance_id, p_plan, p_epoch)
    ON CONFLICT (instance_id, plan) DO UPDATE SET epoch = EXCLUDED.epoch, reported_at = now();
    RETURN true;
END
$follows$;

-- Adds save outcome counts of plan p_plan (1 to 255 characters) to the current minute of the
-- server's clock. The three arrays are parallel, one-dimensional, of 1 to 64 elements and without NULLs; a path is 'legacy' or
-- 'modern', an outcome one of the contract's codes or 'error' (a failure outside them), a count
-- from 1 to 1,000,000,000. A row's count stops at 10^15, so that no sum of the log overflows.
CREATE OR REPLACE FUNCTION cutover.record_outcomes(p_plan text, p_paths text[], p_outcomes text[], p_counts bigint[])
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $outcomes$
DECLARE
    c_row_limit constant bigint := 1000000000000000;
BEGIN
    IF p_plan IS NULL OR length(p_plan) NOT BETWEEN 1 AND 255 THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'record_outcomes: the plan must be 1 to 255 characters';
    END IF;
    IF p_paths IS NULL OR p_outcomes IS NULL OR p_counts IS NULL
       OR array_ndims(p_paths) IS DISTINCT FROM 1 OR array_ndims(p_outcomes) IS DISTINCT FROM 1
       OR array_ndims(p_counts) IS DISTINCT FROM 1
       OR cardinality(p_paths) > 64 OR cardinality(p_outcomes) <> cardinality(p_paths)
       OR cardinality(p_counts) <> cardinality(p_paths)
       OR array_position(p_paths, NULL) IS NOT NULL OR array_position(p_outcomes, NULL) IS NOT NULL
       OR array_position(p_counts, NULL) IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'record_outcomes: paths, outcomes and counts must be one-dimensional arrays of the same 1 to 64 elements, without NULLs';
    END IF;
    IF EXISTS (SELECT FROM unnest(p_paths, p_outcomes, p_counts) AS r(path, outcome, n)
                WHERE r.path NOT IN ('legacy', 'modern')
                   OR r.outcome NOT IN ('committed', 'replayed', 'conflict', 'notFound', 'invalid', 'operationConflict',
                                        'exhausted', 'outcomeUnknown', 'error')
                   OR r.n NOT BETWEEN 1 AND 1000000000) THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'record_outcomes: a path is legacy or modern, an outcome one of the save outcome codes or error, a count 1 to 1000000000';
    END IF;
    INSERT INTO cutover.outcome_log AS log (plan, minute, path, outcome, count)
    SELECT p_plan, date_trunc('minute', clock_timestamp()), r.path, r.outcome, least(sum(r.n), c_row_limit)
      FROM unnest(p_paths, p_outcomes, p_counts) AS r(path, outcome, n)
     GROUP BY r.path, r.outcome
    ON CONFLICT (plan, minute, path, outcome) DO UPDATE SET count = least(log.count::numeric + EXCLUDED.count, c_row_limit);
END
$outcomes$;

-- Version 5's signature, for applications still calling it: their counts are the drafts plan's.
-- Deprecated since version 6: call cutover.record_outcomes with the plan; a later version drops it.
CREATE OR REPLACE FUNCTION cutover.record_outcomes(p_paths text[], p_outcomes text[], p_counts bigint[])
RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $outcomes_v5$
    SELECT cutover.record_outcomes('drafts', p_paths, p_outcomes, p_counts);
$outcomes_v5$;

-- The role a save acts for: the one SET ROLE made current, else the session's. A function that
-- runs as the schema's owner sees its caller no other way, and neither can be set to a role the
-- session may not become. Inlined where it is called.
CREATE OR REPLACE FUNCTION cutover.calling_role() RETURNS text LANGUAGE sql STABLE
AS $calling_role$ SELECT CASE current_setting('role') WHEN 'none' THEN session_user::text ELSE current_setting('role') END $calling_role$;

-- Whether the calling role holds privilege p_privilege on every one of the columns p_columns of
-- p_table that the table has (a column it lacks is the save's own error to report). Called by
-- the save and read functions only when the role lacks the privilege on the whole table.
CREATE OR REPLACE FUNCTION cutover.caller_has_column_privileges(p_table regclass, p_columns text[], p_privilege text)
RETURNS boolean LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $column_privileges$
SELECT NOT EXISTS (SELECT FROM unnest(p_columns) AS c(name)
                     JOIN pg_attribute a ON a.attrelid = p_table AND a.attname = c.name AND a.attnum > 0 AND NOT a.attisdropped
                    WHERE NOT has_column_privilege(cutover.calling_role(), p_table, a.attnum, p_privilege))
$column_privileges$;

-- Whether row-level security on p_table holds the calling role, as PostgreSQL would decide for
-- the role's own statements: the table has it enabled, the role is neither a superuser nor
-- BYPASSRLS, and it does not have the privileges of the table's owner or the table forces its
-- policies on the owner too. The functions that run as the schema's owner would be held to the
-- owner's policies, not the caller's, so they refuse such a caller instead of writing or reading
-- rows its policies would hide. Read when it is called, so a policy enabled after a plan's
-- functions were made holds at once.
-- PL/pgSQL, whose queries a session plans once, where a SQL function called from a save's
-- expression would be planned again in every transaction; every name qualified instead of a SET
-- search_path, which would cost each save more than the query; the roles only for a table with
-- row-level security.
CREATE OR REPLACE FUNCTION cutover.caller_held_to_row_security(p_table regclass) RETURNS boolean
LANGUAGE plpgsql STABLE AS $row_security$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) p_table AND c.relrowsecurity) THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT FROM pg_catalog.pg_class c
                    WHERE c.oid OPERATOR(pg_catalog.=) p_table
                      AND (c.relforcerowsecurity OR NOT pg_catalog.pg_has_role(cutover.calling_role(), c.relowner, 'USAGE')))
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_roles r
                        WHERE r.rolname OPERATOR(pg_catalog.=) cutover.calling_role() AND (r.rolsuper OR r.rolbypassrls));
END
$row_security$;

-- Whether p_table has row-level security enabled, as it was when the query that calls this was
-- planned: IMMUTABLE, so that the planner folds the call into a constant and a save does not
-- read the catalog. Call it only in a query that reads p_table (a join to none of its rows
-- will do): PostgreSQL makes such a query's plan again whenever the table's definition changes,
-- and enabling, forcing or disabling row-level security changes it.
CREATE OR REPLACE FUNCTION cutover.row_security_when_planned(p_table regclass) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $row_security_when_planned$
SELECT coalesce((SELECT c.relrowsecurity FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) p_table), false)
$row_security_when_planned$;

-- Whether the calling role may itself INSERT into (p_insert) or UPDATE p_table: on the whole
-- table, or on every one of the columns p_columns the save writes, and with no row-level
-- security that holds it. p_row_security: whether the table may have row-level security
-- (true, or cutover.row_security_when_planned in a query on the table); when false the roles
-- are not read. Inlined where it is called, so that a save pays for these checks and nothing
-- more.
DROP FUNCTION IF EXISTS cutover.caller_may_write(regclass, text[], boolean);
CREATE OR REPLACE FUNCTION cutover.caller_may_write(p_table regclass, p_columns text[], p_insert boolean, p_row_security boolean)
RETURNS boolean LANGUAGE sql STABLE AS $may_write$
SELECT (has_table_privilege(cutover.calling_role(), p_table, CASE WHEN p_insert THEN 'INSERT' ELSE 'UPDATE' END)
        OR cutover.caller_has_column_privileges(p_table, p_columns, CASE WHEN p_insert THEN 'INSERT' ELSE 'UPDATE' END))
       AND NOT (p_row_security AND cutover.caller_held_to_row_security(p_table))
$may_write$;

-- Raises CU007: the calling role may not write p_table, or row-level security holds it there,
-- so a save does not write it either.
CREATE OR REPLACE FUNCTION cutover.refuse_write(p_table regclass, p_insert boolean)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $refuse_write$
BEGIN
    IF cutover.caller_held_to_row_security(p_table) THEN
        RAISE EXCEPTION USING ERRCODE = 'CU007', MESSAGE = format(
            'role %s is held to row-level security on %s, which a save through Cutover would not apply, so it may not save there',
            cutover.calling_role(), p_table);
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CU007', MESSAGE = format('role %s may not %s %s, so it may not save there either',
        cutover.calling_role(), CASE WHEN p_insert THEN 'insert into' ELSE 'update' END, p_table);
END
$refuse_write$;

-- The save of the drafts plan: claim the operation in that plan's ledger, then the conditional
-- write, in the caller's transaction.
-- p_request is the canonical request; only its sha256 is kept. p_lock_timeout_ms bounds the
-- wait for a save of the same operation, or of the same draft, still in flight.
--
-- Outcomes returned as a row: committed, replayed, operationConflict (nothing was written).
-- Outcomes raised, so that the caller's transaction rolls back the claim with everything else:
--   CU001 conflict (DETAIL: the current revision)   CU002 notFound   CU003 exhausted
--   CU004 the writer's format is not stored at this phase (before expand or after contract)
--   CU005 the stored draft is in a format this build does not know
-- It runs as the schema's owner, so that the application role needs no rights on the ledger.
-- The table is named in full when the function is created: `drafts` as the installer's
-- search_path finds it or, before it exists, in the installer's current schema. The function's
-- own search_path holds only pg_catalog and pg_temp (last), so that nothing any role may create
-- in another schema, or in its temporary one, can stand in for what the save uses; and no
-- statement is put together while it runs. Which representations the table holds (title for
-- v1, document for v2) is read from the catalog, so the same function serves the baseline,
-- expanded and contracted layouts.
DO $install_save$
DECLARE
    v_table text := format('%I.drafts', coalesce(
        (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.oid = to_regclass('drafts') AND n.oid <> pg_my_temp_schema()),
        current_schema(), 'public'));
BEGIN
    EXECUTE replace(replace($create$
CREATE OR REPLACE FUNCTION cutover.save_draft(
    p_scope text, p_operation_id text, p_request bytea, p_draft_id text, p_expected bigint,
    p_path text, p_title text, p_document jsonb, p_lock_timeout_ms integer,
    OUT outcome text, OUT revision bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $save$
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

    -- The function writes as the schema's owner: only what its caller may write itself. Its
    -- privileges here; row-level security that holds it with the table's columns below, in a
    -- query on the table, whose plan reads whether the table has any when it is made.
    IF NOT cutover.caller_may_write(@drafts_literal@::regclass,
               CASE WHEN p_expected = 0 THEN ARRAY['id'] ELSE '{}' END
               || CASE p_path WHEN 'legacy' THEN ARRAY['title', 'revision'] ELSE ARRAY['title', 'document', 'revision'] END,
               p_expected = 0, false) THEN
        PERFORM cutover.refuse_write(@drafts_literal@::regclass, p_expected = 0);
    END IF;

    -- 1. Claim. A concurrent claim of the same operation makes this wait until it commits
    --    (then replay) or aborts (then this one applies), bounded by lock_timeout. No write
    --    goes ahead without its claim: after three claims pruned from under it, the save fails.
    <<claim>>
    BEGIN
        FOR attempt IN 1..3 LOOP
            INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, draft_id, revision, path)
            VALUES ('drafts', p_scope, p_operation_id, v_fingerprint, p_draft_id, coalesce(v_next, 0), p_path)
            ON CONFLICT (plan, scope, operation_id) DO NOTHING;
            EXIT claim WHEN FOUND;
            SELECT l.fingerprint, l.revision INTO v_stored_fingerprint, v_stored_revision
              FROM cutover.operation_ledger l
             WHERE l.plan = 'drafts' AND l.scope = p_scope AND l.operation_id = p_operation_id;
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
        RAISE EXCEPTION USING ERRCODE = '40001', MESSAGE = 'the operation''s claim was pruned while this save waited for it; nothing was written; retry with the same operation ID';
    END;

    -- 2. Which representations the table holds now: the columns of its row as a row-less
    --    query returns it. Its plan is made again whenever the table changes, and costs far
    --    less than a catalog query with an aggregate. The same query finds a row exactly when
    --    row-level security on the table holds the caller: with none on the table the planner
    --    makes its condition false, and the query reads nothing. After the claim, like the
    --    check of the representations, so that a retry of a committed operation replays.
    SELECT t.* INTO v_shape FROM (SELECT) AS one LEFT JOIN @drafts@ AS t ON false
     WHERE cutover.row_security_when_planned(@drafts_literal@::regclass)
       AND cutover.caller_held_to_row_security(@drafts_literal@::regclass);
    IF FOUND THEN
        PERFORM cutover.refuse_write(@drafts_literal@::regclass, p_expected = 0);
    END IF;
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
            INSERT INTO @drafts@ (id, title, revision) VALUES (p_draft_id, p_title, 1)
            ON CONFLICT (id) DO NOTHING;
        ELSIF v_has_title THEN
            INSERT INTO @drafts@ (id, title, revision, document) VALUES (p_draft_id, p_title, 1, p_document)
            ON CONFLICT (id) DO NOTHING;
        ELSE
            INSERT INTO @drafts@ (id, revision, document) VALUES (p_draft_id, 1, p_document)
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
                SELECT d.document ->> 'version' INTO v_version FROM @drafts@ d WHERE d.id = p_draft_id;
                IF v_version IS NOT NULL AND v_version <> '2' THEN
                    RAISE EXCEPTION USING ERRCODE = 'CU005', MESSAGE = 'unsupported stored format',
                        DETAIL = 'v' || v_version;
                END IF;
            END IF;
            UPDATE @drafts@ d SET title = p_title, revision = d.revision + 1
             WHERE d.id = p_draft_id AND d.revision = p_expected;
        ELSIF v_has_title THEN
            UPDATE @drafts@ d SET title = p_title, document = p_document, revision = d.revision + 1
             WHERE d.id = p_draft_id AND d.revision = p_expected;
        ELSE
            UPDATE @drafts@ d SET document = p_document, revision = d.revision + 1
             WHERE d.id = p_draft_id AND d.revision = p_expected;
        END IF;
        IF FOUND THEN
            outcome := 'committed';
            revision := v_next;
            RETURN;
        END IF;
    END IF;

    -- 4. Nothing was written: say why, and let the caller's transaction roll back the claim.
    SELECT d.revision INTO v_current FROM @drafts@ d WHERE d.id = p_draft_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CU002', MESSAGE = 'draft not found';
    ELSIF v_next IS NULL AND v_current = p_expected THEN
        RAISE EXCEPTION USING ERRCODE = 'CU003', MESSAGE = 'revision exhausted';
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'CU001', MESSAGE = 'revision conflict', DETAIL = v_current::text;
    END IF;
END
$save$
$create$, '@drafts@', v_table), '@drafts_literal@', quote_literal(v_table));
    -- The drafts plan's entity, for cutover.save_record: the same table, keyed by id, with its
    -- revision column. A registration made since (by phase init) stands.
    INSERT INTO cutover.record_plans (plan, table_name, key_columns, revision_column, legacy_columns, modern_columns)
    VALUES ('drafts', v_table, ARRAY['id'], 'revision', ARRAY['title'], ARRAY['document'])
    ON CONFLICT (plan) DO NOTHING;
END
$install_save$;

-- Registers (or changes) the entity of plan p_plan for cutover.save_record: its table p_table
-- (`name` or `schema.name`, as the plan gives it), the columns of its key p_key, its revision
-- column p_revision, or NULL to use the row's xmin, and the columns its legacy and its modern
-- writer write (p_legacy, p_modern; NULL for none), for which it makes the plan's own save
-- function (make_record_save). A table that exists must have every key
-- column and a unique index on exactly those columns (save_record's INSERT … ON CONFLICT needs
-- it), and a revision column it already has must be bigint; a table or revision column that
-- does not exist yet is registered as named, for expand to create (22023 otherwise). Only the
-- schema's owner may call it: `phase init` does for a declarative plan. An unqualified table is
-- found on the caller's search_path (or, when it does not exist yet, put in its current schema).
DROP FUNCTION IF EXISTS cutover.register_record_plan(text, text, text[], text);
CREATE OR REPLACE FUNCTION cutover.register_record_plan(
    p_plan text, p_table text, p_key text[], p_revision text DEFAULT NULL,
    p_legacy text[] DEFAULT NULL, p_modern text[] DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $register$
DECLARE
    v_table regclass := to_regclass(p_table);
    v_parts text[] := parse_ident(p_table);
    v_name text;
    v_missing text;
BEGIN
    IF p_plan IS NULL OR length(p_plan) NOT BETWEEN 1 AND 255 OR cardinality(p_key) NOT BETWEEN 1 AND 32
       OR array_position(p_key, NULL) IS NOT NULL OR p_revision = ANY (p_key) THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'register_record_plan: a plan of 1 to 255 characters and 1 to 32 key columns, none of them the revision column';
    END IF;
    IF v_table IS NULL THEN
        v_name := CASE cardinality(v_parts) WHEN 1 THEN format('%I.%I', current_schema(), v_parts[1])
                                             ELSE format('%I.%I', v_parts[1], v_parts[2]) END;
    ELSE
        SELECT format('%I.%I', n.nspname, c.relname) INTO v_name
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = v_table;
        SELECT k INTO v_missing FROM unnest(p_key) AS k
         WHERE NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = v_table AND a.attname = k AND a.attnum > 0 AND NOT a.attisdropped)
         LIMIT 1;
        IF v_missing IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('register_record_plan: %s has no key column %s', v_name, v_missing);
        END IF;
        IF NOT EXISTS (SELECT FROM pg_index i
                        WHERE i.indrelid = v_table AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
                          AND (SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_attribute a
                                WHERE a.attrelid = v_table AND a.attnum = ANY (i.indkey::int2[]))
                              = (SELECT array_agg(k ORDER BY k) FROM unnest(p_key) AS k)
                          AND i.indnkeyatts = cardinality(p_key)) THEN
            RAISE EXCEPTION USING ERRCODE = '22023',
                MESSAGE = format('register_record_plan: %s has no unique index on exactly its key (%s)', v_name, array_to_string(p_key, ', '));
        END IF;
        IF EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = v_table AND a.attname = p_revision AND a.attnum > 0
                      AND NOT a.attisdropped AND a.atttypid <> 'bigint'::regtype) THEN
            RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('register_record_plan: revision column %s of %s is not bigint', p_revision, v_name);
        END IF;
    END IF;
    DELETE FROM cutover.record_statements s WHERE s.plan = p_plan;
    INSERT INTO cutover.record_plans (plan, table_name, key_columns, revision_column, legacy_columns, modern_columns)
    VALUES (p_plan, v_name, p_key, p_revision, p_legacy, p_modern)
    ON CONFLICT (plan) DO UPDATE
       SET table_name = EXCLUDED.table_name, key_columns = EXCLUDED.key_columns,
           revision_column = EXCLUDED.revision_column, legacy_columns = EXCLUDED.legacy_columns,
           modern_columns = EXCLUDED.modern_columns, registered_at = now();
    PERFORM cutover.make_record_save(p_plan);
END
$register$;

-- The statements save_record_dynamic runs for plan p_entity's table p_table in shape p_shape, writing
-- the columns p_columns names (p_names, sorted): made from the catalog's types, checked, and kept
-- in cutover.record_statements for the next save of the same shape and columns. CU004 when a
-- column is not in the table (p_path's format is not stored), CU006 when a key or the revision
-- column is missing. Internal to save_record_dynamic.
CREATE OR REPLACE FUNCTION cutover.record_statements_for(
    p_entity cutover.record_plans, p_table regclass, p_shape text, p_names text, p_path text, p_columns jsonb)
RETURNS cutover.record_statements LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $statements$
DECLARE
    v_types jsonb;
    v_missing text;
    v_revision text := CASE WHEN p_entity.revision_column IS NULL THEN 't.xmin::text::bigint'
                            ELSE format('t.%I', p_entity.revision_column) END;
    v_match text;
    v_made cutover.record_statements;
BEGIN
    SELECT jsonb_object_agg(a.attname, format_type(a.atttypid, NULL)) INTO v_types
      FROM pg_attribute a
     WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
       AND (a.attname = ANY (p_entity.key_columns) OR a.attname = p_entity.revision_column OR p_columns ? a.attname);
    SELECT k INTO v_missing FROM unnest(p_entity.key_columns || p_entity.revision_column) AS k WHERE NOT v_types ? k LIMIT 1;
    IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CU006', MESSAGE = format('table %s of plan %s has no column %s', p_entity.table_name, p_entity.plan, v_missing);
    END IF;
    SELECT k INTO v_missing FROM jsonb_object_keys(p_columns) AS k WHERE NOT v_types ? k LIMIT 1;
    IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CU004', MESSAGE = format(CASE p_path
            WHEN 'legacy' THEN '%s has no column %s: the legacy format is no longer stored (contract removed it); save through the modern writer'
            ELSE '%s has no column %s: the modern format is not stored yet (run expand first); save through the legacy writer' END,
            p_entity.table_name, v_missing);
    END IF;
    v_match := (SELECT string_agg(format('t.%I = ($1 ->> %L)::%s', k, k, v_types ->> k), ' AND ')
                  FROM unnest(p_entity.key_columns) AS k);
    v_made.plan := p_entity.plan;
    v_made.shape := p_shape;
    v_made.columns := p_names;
    v_made.insert_sql := format('INSERT INTO %s AS t (%s) VALUES (%s) ON CONFLICT (%s) DO NOTHING RETURNING %s',
        p_table,
        (SELECT string_agg(format('%I', c), ', ') FROM (
            SELECT unnest(p_entity.key_columns) UNION ALL SELECT jsonb_object_keys(p_columns)
            UNION ALL SELECT p_entity.revision_column WHERE p_entity.revision_column IS NOT NULL) AS n(c)),
        (SELECT string_agg(v, ', ') FROM (
            SELECT format('($1 ->> %L)::%s', k, v_types ->> k) FROM unnest(p_entity.key_columns) AS k
            UNION ALL SELECT format('($2 ->> %L)::%s', c, v_types ->> c) FROM jsonb_object_keys(p_columns) AS c
            UNION ALL SELECT '1' WHERE p_entity.revision_column IS NOT NULL) AS e(v)),
        (SELECT string_agg(format('%I', k), ', ') FROM unnest(p_entity.key_columns) AS k),
        v_revision);
    v_made.update_sql := format('UPDATE %s AS t SET %s WHERE %s AND %s = $3 RETURNING %s',
        p_table,
        (SELECT string_agg(v, ', ') FROM (
            SELECT format('%I = ($2 ->> %L)::%s', c, c, v_types ->> c) FROM jsonb_object_keys(p_columns) AS c
            UNION ALL SELECT format('%1$I = t.%1$I + 1', p_entity.revision_column) WHERE p_entity.revision_column IS NOT NULL) AS s(v)),
        v_match, v_revision, v_revision);
    v_made.current_sql := format('SELECT coalesce(%s, -9223372036854775808) FROM %s AS t WHERE %s', v_revision, p_table, v_match);
    INSERT INTO cutover.record_statements VALUES (v_made.*) ON CONFLICT DO NOTHING;
    RETURN v_made;
END
$statements$;

-- The parts of a save function that takes its key and columns as JSON (save_record_dynamic, and
-- each plan's save_record_<plan>): its parameters (p_plan first when p_plan is 'p_plan'), the
-- condition that refuses them and its message (with p_extra_condition after ' OR ' and
-- p_extra_message after it), and the canonical request the server puts together when the caller
-- sends none. Written once here for both. Internal to the installer and make_record_save.
CREATE OR REPLACE FUNCTION cutover.record_json_parameters(
    p_plan text, p_extra_condition text, p_extra_message text,
    OUT parameters text, OUT check_condition text, OUT check_message text, OUT canonical_request text)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $json_parameters$
SELECT CASE WHEN p_plan = 'p_plan' THEN 'p_plan text, ' ELSE '' END
       || 'p_scope text, p_operation_id text, p_key jsonb, p_expected bigint, p_path text, p_columns jsonb, '
       || 'p_request bytea DEFAULT NULL, p_lock_timeout_ms integer DEFAULT NULL',
       $condition$length(p_scope) NOT BETWEEN 1 AND 255 OR length(p_operation_id) NOT BETWEEN 1 AND 255
       OR p_expected IS NULL OR p_expected < 0 OR p_path IS NULL OR p_path NOT IN ('legacy', 'modern')
       OR jsonb_typeof(p_columns) IS DISTINCT FROM 'object' OR p_columns = '{}'::jsonb
       OR jsonb_typeof(p_key) IS DISTINCT FROM 'object'$condition$ || p_extra_condition,
       'save_record: scope and operation ID of 1 to 255 characters, p_expected >= 0, p_path legacy or modern, p_key and p_columns JSON objects'
       || p_extra_message,
       format($request$convert_to(
            jsonb_build_array('cutover.save-record-sql.1', %s, p_scope, p_operation_id, p_key, p_expected, p_columns)::text, 'UTF8')$request$,
              p_plan)
$json_parameters$;

-- The text of a function that saves: save_record_dynamic's, and each plan's per writer path that
-- make_record_save makes. What they share is written here once: the checks of the parameters,
-- the claim in the ledger, the write declared as the path's writer, and the outcome when nothing
-- was written.
--   p_function   its name; p_parameters its parameters (p_scope, p_operation_id, p_expected,
--                p_request and p_lock_timeout_ms among them)
--   p_plan       its plan, as an SQL expression: p_plan, or a plan's name as a literal
--   p_declare    its own variables; p_check the condition that refuses the parameters, and
--                p_check_message the message then
--   p_prepare    what it does before the claim (what to write, or a return when another
--                function saves); p_request the canonical request to make when the caller
--                sends none, or NULL when p_check refuses a NULL one
--   p_record_key and p_path  the ledger's record_key and path, as expressions; the path is
--                declared with set_config for the write (a function's own SET clause would be
--                cheaper, but from PostgreSQL 15 only a superuser may give one for a custom
--                setting)
--   p_predicted the revision the write will commit, as an expression; p_write the write,
--                setting revision and outcome ('committed') when it applied; p_corrects whether a
--                write may commit another revision than the one predicted (the row's xmin, after
--                a subtransaction), which the ledger then gets; p_current the statement reading
--                the current revision into v_current
--   p_table and p_written  the table (an expression of type regclass) and the columns the save
--                writes (of type text[]), for the check that the calling role may write them
--                itself (cutover.caller_may_write) before the claim; NULL when p_prepare checks
-- PL/pgSQL makes every expression it evaluates ready again in each transaction, so once per
-- save, for about as much as the expression's own work: the text keeps a committing save's
-- expressions few, folds the checks into one condition, and computes the predicted revision
-- inside the claim's INSERT.
DROP FUNCTION IF EXISTS cutover.record_save_source(text, text, text, text, text, text, text);
DROP FUNCTION IF EXISTS cutover.record_save_source(text, text, text, text, text, text, text, text, boolean, text);
DROP FUNCTION IF EXISTS cutover.record_save_source(text, text, text, text, text, text, text, text, text, text, text, text, boolean, text);
CREATE OR REPLACE FUNCTION cutover.record_save_source(
    p_function text, p_parameters text, p_plan text, p_declare text, p_check text,
    p_check_message text, p_prepare text, p_request text, p_record_key text, p_path text,
    p_predicted text, p_write text, p_corrects boolean, p_current text, p_table text, p_written text)
RETURNS text LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $source$
-- The body's dollar quote is made of the md5 of all that goes into it, which none of it can hold.
SELECT format($template$
CREATE OR REPLACE FUNCTION %1$s(%2$s,
    OUT outcome text, OUT revision bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS %4$s
DECLARE%5$s
    v_fingerprint bytea;
    v_stored_fingerprint bytea;
    v_stored_revision bigint;
    v_current bigint;
    v_writer text;
    v_setting text;
BEGIN
    v_setting := CASE WHEN p_lock_timeout_ms IS NOT NULL THEN set_config('lock_timeout', p_lock_timeout_ms::text || 'ms', true) END;
    IF %6$s THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = %7$L;
    END IF;
%8$s

%19$s
    -- 1. Claim, as save_draft does. The revision recorded is the one the write will commit: the
    --    next one, or for xmin this transaction's ID, corrected below if a subtransaction wrote.%9$s
    INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, record_key, revision, path)
    VALUES (%10$s, p_scope, p_operation_id, sha256(p_request), %11$s, %12$s, %13$s)
    ON CONFLICT (plan, scope, operation_id) DO NOTHING;
    IF NOT FOUND THEN
        v_fingerprint := sha256(p_request);
        -- No write goes ahead without its claim: after three claims pruned from under it, the
        -- save fails.
        <<claim>>
        BEGIN
            FOR attempt IN 1..3 LOOP
                SELECT l.fingerprint, l.revision INTO v_stored_fingerprint, v_stored_revision
                  FROM cutover.operation_ledger l
                 WHERE l.plan = %10$s AND l.scope = p_scope AND l.operation_id = p_operation_id;
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
                INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, record_key, revision, path)
                VALUES (%10$s, p_scope, p_operation_id, v_fingerprint, %11$s, %12$s, %13$s)
                ON CONFLICT (plan, scope, operation_id) DO NOTHING;
                EXIT claim WHEN FOUND;
            END LOOP;
            RAISE EXCEPTION USING ERRCODE = '40001', MESSAGE = 'the operation''s claim was pruned while this save waited for it; nothing was written; retry with the same operation ID';
        END;
    END IF;

    -- 2. The conditional write, declared as the path's writer for the sync trigger; the
    --    caller's declaration, if any, is given back afterwards.%14$s
%15$s%16$s
    IF outcome IS NOT NULL THEN%17$s
        RETURN;
    END IF;

    -- 3. Nothing was written: say why, and let the caller's transaction roll back the claim.
    --    The read gives the smallest bigint for a row whose revision is NULL, which no save can
    --    match; only a save at the largest revision is exhausted.
    %18$s
    IF v_current IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CU002', MESSAGE = 'record not found';
    ELSIF v_current = -9223372036854775808 THEN
        RAISE EXCEPTION USING ERRCODE = 'CU006', MESSAGE = 'the record''s revision is NULL: give it one (such as 1) before saving it';
    ELSIF p_expected = 9223372036854775807 AND v_current = p_expected THEN
        RAISE EXCEPTION USING ERRCODE = 'CU003', MESSAGE = 'revision exhausted';
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'CU001', MESSAGE = 'revision conflict', DETAIL = v_current::text;
    END IF;
END
%4$s
$template$,
    p_function, p_parameters, '',
    '$save_' || md5(concat_ws(',', p_function, p_parameters, p_plan, p_declare, p_check, p_check_message,
                              p_prepare, p_request, p_record_key, p_path, p_predicted, p_write,
                              p_corrects, p_current, p_table, p_written)) || '$',
    p_declare, p_check, p_check_message, p_prepare,
    -- Without a canonical request the server puts one together (an expression made ready only
    -- when it runs, so that a save that brings its own does not pay for it).
    CASE WHEN p_request IS NULL THEN ''
         ELSE format(E'\n    IF p_request IS NULL THEN\n        p_request := %s;\n    END IF;', p_request) END,
    p_plan, p_record_key, p_predicted, p_path,
    format(E'\n    v_writer := current_setting(''cutover.writer'', true);'
           || E'\n    v_setting := set_config(''cutover.writer'', CASE %s WHEN ''modern'' THEN ''modern'' ELSE '''' END, true);',
           p_path),
    p_write,
    E'\n    v_setting := set_config(''cutover.writer'', coalesce(v_writer, ''''), true);',
    CASE WHEN p_corrects THEN format($correct$
        IF revision <> (%1$s) THEN
            v_current := revision;
            UPDATE cutover.operation_ledger l SET revision = v_current
             WHERE l.plan = %2$s AND l.scope = p_scope AND l.operation_id = p_operation_id;
        END IF;$correct$, p_predicted, p_plan) ELSE '' END,
    p_current,
    CASE WHEN p_table IS NOT NULL THEN format($check$    -- The function writes as the schema's owner: only what its caller may write itself.
    IF NOT cutover.caller_may_write(%1$s, %2$s, p_expected = 0, true) THEN
        PERFORM cutover.refuse_write(%1$s, p_expected = 0);
    END IF;
$check$, p_table, p_written) ELSE '' END)
$source$;
-- save_record's work for any shape of the table and any columns, its statements put together
-- per call from the registration and the catalog (cutover.record_statements_for): the same
-- parameters, outcomes and errors as save_record. Internal to save_record and the functions
-- make_record_save makes.
DO $save_record_dynamic$
DECLARE
    v_json record := cutover.record_json_parameters('p_plan', '', '');
BEGIN
    EXECUTE cutover.record_save_source('cutover.save_record_dynamic', v_json.parameters, 'p_plan',
        $declare$
    v_entity cutover.record_plans;
    v_table regclass;
    v_shape text;
    v_columns text;
    v_statements cutover.record_statements;
    v_key_count bigint;$declare$, v_json.check_condition, v_json.check_message,
        $prepare$
    -- The plan's entity, its table's shape now, and the statements made for that shape and
    -- these columns if a save made them before: one query, on indexes.
    SELECT e.plan, e.table_name, e.key_columns, e.revision_column, e.registered_at, r.rel, sh.shape, c.names,
           (SELECT count(*) FROM jsonb_object_keys(p_key)), st.plan, st.insert_sql, st.update_sql, st.current_sql
      INTO v_entity.plan, v_entity.table_name, v_entity.key_columns, v_entity.revision_column, v_entity.registered_at,
           v_table, v_shape, v_columns, v_key_count,
           v_statements.plan, v_statements.insert_sql, v_statements.update_sql, v_statements.current_sql
      FROM cutover.record_plans e
     CROSS JOIN LATERAL (SELECT to_regclass(e.table_name) AS rel) r
     CROSS JOIN LATERAL (SELECT string_agg(k, ',' ORDER BY k) AS names, array_agg(k) AS list FROM jsonb_object_keys(p_columns) AS k) c
     CROSS JOIN LATERAL (SELECT r.rel::oid::text || ':' || string_agg(a.attname || '=' || a.xmin::text, ',' ORDER BY a.attname) AS shape
                           FROM pg_attribute a
                          WHERE a.attrelid = r.rel AND a.attname = ANY (e.key_columns || e.revision_column || c.list)) sh
      LEFT JOIN cutover.record_statements st ON st.plan = e.plan AND st.shape = sh.shape AND st.columns = c.names
     WHERE e.plan = p_plan;
    IF v_entity.plan IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CU006', MESSAGE = format('plan %s has no registered entity (run phase init with the plan)', p_plan);
    END IF;
    IF NOT p_key ?& v_entity.key_columns OR v_key_count <> cardinality(v_entity.key_columns) OR jsonb_strip_nulls(p_key) <> p_key
       OR p_columns ?| (v_entity.key_columns || v_entity.revision_column) THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('save_record: p_key must give exactly %s, none of them null, and p_columns neither of them nor the revision',
                             array_to_string(v_entity.key_columns, ', '));
    END IF;
    IF v_table IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CU006', MESSAGE = format('table %s of plan %s does not exist', v_entity.table_name, p_plan);
    END IF;
    IF v_statements.plan IS NULL THEN
        v_statements := cutover.record_statements_for(v_entity, v_table, v_shape, v_columns, p_path, p_columns);
    END IF;$prepare$,
        v_json.canonical_request, 'p_key', 'p_path',
        $predicted$CASE WHEN v_entity.revision_column IS NULL THEN (pg_current_xact_id()::text::numeric % 4294967296)::bigint
                        WHEN p_expected = 0 THEN 1
                        WHEN p_expected = 9223372036854775807 THEN 0
                        ELSE p_expected + 1 END$predicted$,
        $write$
    IF p_expected = 0 THEN
        EXECUTE v_statements.insert_sql INTO revision USING p_key, p_columns;
    ELSIF v_entity.revision_column IS NULL OR p_expected < 9223372036854775807 THEN
        EXECUTE v_statements.update_sql INTO revision USING p_key, p_columns, p_expected;
    END IF;
    IF revision IS NOT NULL THEN
        outcome := 'committed';
    END IF;$write$, true,
        $current$EXECUTE v_statements.current_sql INTO v_current USING p_key;$current$,
        'v_table',
        $written$CASE WHEN p_expected = 0 THEN v_entity.key_columns ELSE '{}' END || ARRAY(SELECT jsonb_object_keys(p_columns))
                 || array_remove(ARRAY[v_entity.revision_column], NULL)$written$);
END
$save_record_dynamic$;

-- The save of any registered plan's entity (cutover.record_plans): claim the operation in that
-- plan's ledger, then the conditional write, in the caller's transaction; the same outcomes as
-- save_draft. Stable for callers in any language (docs/store.md has a psql and a Python example).
--   p_key        the key's columns as a JSON object: {"id": 42}, {"tenant_id": 7, "id": 42}
--   p_expected   the revision the caller read; 0 creates the record
--   p_path       'legacy' or 'modern': the writer path whose format p_columns holds
--   p_columns    the path's columns as a JSON object: {"status": "paid"} or {"status_code": 2};
--                each value is read as its column's type (a JSON string or number as that
--                type's text, null as NULL); neither a key column nor the revision column
--   p_request    the canonical request (Swift's SaveRequest.canonicalEncoding); the ledger keeps
--                only its sha256. NULL: the server fingerprints the plan, scope, operation ID,
--                key, expected revision and columns instead, so that a retry replays only when
--                it sends the same columns (the same path), and never matches a Swift save's
--   p_lock_timeout_ms  bounds the wait for a save of the same operation or record in flight
-- Returned: committed or replayed with the revision, or operationConflict (nothing written).
-- Raised, so that the caller's transaction rolls back the claim with everything else:
--   CU001 conflict (DETAIL: the current revision)   CU002 notFound   CU003 exhausted
--   CU004 a column of p_columns is not in the table: the path's format is not stored at this phase
--   CU006 the plan's entity cannot be saved: not registered, its table or revision column missing
--   22023 a parameter breaks its limits (scope and operation ID 1 to 255 characters, the key's
--         columns exactly, a non-empty p_columns, p_expected >= 0, a known path)
-- The revision is the registered revision column, which the save sets to 1 on INSERT and adds 1
-- to on UPDATE; without one it is the row's xmin (a 32-bit transaction ID, compared for equality
-- only; any write changes it, a plain-SQL one included). The modern path declares itself with
-- cutover.writer = 'modern' for the write, so the plan's sync trigger derives the legacy columns;
-- the legacy path's write is a legacy one, from which the trigger derives the modern columns.
-- It runs as the schema's owner and writes, as the owner, the columns the caller names: grant
-- EXECUTE only to roles that may write those tables. It calls the plan's own save function
-- (cutover.make_record_save), whose statements are written out for the table and planned once
-- per session; before one is made, and for a save it was not made for, save_record_dynamic,
-- which puts its statements together per call from the registered names and the catalog's
-- types. Every value is a parameter either way.
CREATE OR REPLACE FUNCTION cutover.save_record(
    p_plan text, p_scope text, p_operation_id text, p_key jsonb, p_expected bigint,
    p_path text, p_columns jsonb, p_request bytea DEFAULT NULL, p_lock_timeout_ms integer DEFAULT NULL,
    OUT outcome text, OUT revision bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $save_entry$
DECLARE
    v_function text;
BEGIN
    SELECT e.save_function INTO v_function FROM cutover.record_plans e WHERE e.plan = p_plan;
    IF v_function IS NULL THEN
        SELECT d.outcome, d.revision INTO outcome, revision
          FROM cutover.save_record_dynamic(p_plan, p_scope, p_operation_id, p_key, p_expected, p_path, p_columns,
                                           p_request, p_lock_timeout_ms) AS d;
    ELSE
        EXECUTE format('SELECT f.outcome, f.revision FROM %s($1, $2, $3, $4, $5, $6, $7, $8) AS f', v_function)
           INTO outcome, revision
          USING p_scope, p_operation_id, p_key, p_expected, p_path, p_columns, p_request, p_lock_timeout_ms;
    END IF;
END
$save_entry$;

DROP FUNCTION IF EXISTS cutover.record_save_branches(text[]);

-- Makes (or makes again) plan p_plan's own save functions from its registration and its table as
-- it is now; drops them (and returns NULL) when the table does not exist.
--   cutover.save_legacy_<plan> and cutover.save_modern_<plan>, one per writer path whose columns
--     the table holds (neither the key nor the revision among them), are the save itself,
--     written out for the table and planned once per session: p_scope, p_operation_id, then the
--     key's columns in the registered order, p_expected, the path's columns in the registered
--     order, p_request (the canonical request, required) and p_lock_timeout_ms. Every key and
--     column value is text, read as its column's type by a cast in the statement (NULL as
--     NULL), so that one parse reads it. The Swift store calls them. A function made before its
--     table changed by hand is slower, never wrong: a column whose type is not the one written
--     out sends the save to save_record_dynamic (its values then stored in the ledger's
--     record_key as JSON strings), and a column gone raises 42703, which the store answers by
--     saving through save_record instead.
--   cutover.save_record_<plan> (the name kept in save_function), which save_record calls, takes
--     save_record's parameters but the plan, and sends a save whose p_columns are exactly its
--     path's columns, the table holding them, to that path's function; any other save to
--     save_record_dynamic, which gives the same outcomes, errors included.
-- Values are read as their column's type without its modifier, so that the column's own length
-- or precision applies as in any INSERT or UPDATE (a value too long for varchar(n) fails; it is
-- not cut). The phase runner makes them again in the transaction of every step that changes the
-- table (expand, contract and their reverts); register_record_plan and the installer also do.
-- Only the schema's owner may call it; the functions it makes run as the owner, like
-- save_record, and are executable by the roles granted save_record.
CREATE OR REPLACE FUNCTION cutover.make_record_save(p_plan text)
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $make$
DECLARE
    v_entity cutover.record_plans;
    v_table regclass;
    v_slug text;
    v_name text;
    v_types jsonb;
    v_type_ids jsonb;
    v_keys text[];
    v_guarded text[];
    v_revision text;
    v_json record;
    v_path integer;
    v_path_name text;
    v_set text[];
    v_typed text[] := ARRAY[NULL, NULL]::text[];
    v_signature text;
    v_key_values text[];
    v_column_values text[];
    v_match text;
    v_choose text := '';
    v_calls text := '';
    v_body text;
    v_made text[] := '{}';
    v_function text;
    v_old text;
    v_grantee text;
BEGIN
    SELECT * INTO v_entity FROM cutover.record_plans e WHERE e.plan = p_plan;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('make_record_save: plan %s is not registered', p_plan);
    END IF;
    v_table := to_regclass(v_entity.table_name);
    v_keys := v_entity.key_columns;
    v_guarded := array_remove(v_keys || v_entity.revision_column, NULL);
    IF v_table IS NOT NULL THEN
        -- The type of every column that may be written: not generated, not an identity column
        -- that refuses values.
        SELECT jsonb_object_agg(a.attname, format_type(a.atttypid, NULL)), jsonb_object_agg(a.attname, a.atttypid::bigint)
          INTO v_types, v_type_ids
          FROM pg_attribute a
         WHERE a.attrelid = v_table AND a.attnum > 0 AND NOT a.attisdropped
           AND a.attgenerated = '' AND a.attidentity <> 'a';
    END IF;
    v_slug := left(trim(both '_' FROM regexp_replace(lower(p_plan), '[^a-z0-9]+', '_', 'g')), 40);
    v_revision := CASE WHEN v_entity.revision_column IS NULL THEN 't.xmin::text::bigint'
                       ELSE format('t.%I', v_entity.revision_column) END;

    -- One function per writer path whose columns the table holds, none of them the key or the
    -- revision, and few enough for jsonb_build_object.
    FOR v_path IN 1..2 LOOP
        v_path_name := CASE v_path WHEN 1 THEN 'legacy' ELSE 'modern' END;
        v_set := coalesce(CASE v_path WHEN 1 THEN v_entity.legacy_columns ELSE v_entity.modern_columns END, '{}');
        v_name := CASE v_path WHEN 1 THEN v_entity.legacy_save_function ELSE v_entity.modern_save_function END;
        -- The key's columns are named bare in the INSERT's ON CONFLICT, where PL/pgSQL would take
        -- a key column named like one of the function's variables (outcome, revision, attempt,
        -- p_… and v_…) for an ambiguous reference; such a plan saves through
        -- save_record_dynamic, whose statements PL/pgSQL does not read.
        IF v_types IS NULL OR NOT v_types ?& v_guarded OR cardinality(v_set) = 0 OR cardinality(v_set) > 49
           OR NOT v_types ?& v_set OR v_set && v_guarded
           OR EXISTS (SELECT FROM unnest(v_keys) AS k WHERE k IN ('outcome', 'revision', 'attempt') OR k ~ '^[pv]_') THEN
            CONTINUE;
        END IF;
        -- Its name holds a part of the md5 of the plan, the key's columns and the path's, in
        -- their order: a caller passes them by position, so a registration that changes them
        -- makes a function of another name, and the old one goes. A caller that still has the
        -- old name then fails to find it, before anything is written, rather than have one
        -- column's value written into another.
        v_signature := 'text, text, ' || repeat('text, ', cardinality(v_keys)) || 'bigint, '
                       || repeat('text, ', cardinality(v_set)) || 'bytea, integer';
        v_function := format('cutover.%I', 'save_' || v_path_name || '_' || left(v_slug, 30) || '_'
                             || left(md5(concat_ws(E'\n', p_plan, v_keys::text, v_set::text)), 8));
        FOR v_old IN
            SELECT p.oid::regprocedure::text FROM pg_proc p
             WHERE p.pronamespace = 'cutover'::regnamespace
               AND quote_ident(p.proname) IN (split_part(v_name, '.', 2), split_part(v_function, '.', 2))
               AND p.oid IS DISTINCT FROM to_regprocedure(v_function || '(' || v_signature || ')')
        LOOP
            EXECUTE format('DROP FUNCTION %s', v_old);
        END LOOP;
        v_name := v_function;
        v_typed[v_path] := v_name;
        -- $3 is the first key column, the path's first column comes after p_expected.
        SELECT array_agg(format('$%s::%s', 2 + k.n, v_types ->> k.c) ORDER BY k.n) INTO v_key_values
          FROM unnest(v_keys) WITH ORDINALITY AS k(c, n);
        SELECT array_agg(format('$%s::%s', 3 + cardinality(v_keys) + c.n, v_types ->> c.c) ORDER BY c.n) INTO v_column_values
          FROM unnest(v_set) WITH ORDINALITY AS c(c, n);
        v_match := (SELECT string_agg(format('t.%I = %s', k.c, v_key_values[k.n]), ' AND ')
                      FROM unnest(v_keys) WITH ORDINALITY AS k(c, n));
        EXECUTE cutover.record_save_source(v_name,
            'p_scope text, p_operation_id text, ' || repeat('text, ', cardinality(v_keys)) || 'p_expected bigint, '
                || repeat('text, ', cardinality(v_set)) || 'p_request bytea, p_lock_timeout_ms integer DEFAULT NULL',
            quote_literal(p_plan),
            E'\n    v_made integer;',
            'length(p_scope) NOT BETWEEN 1 AND 255 OR length(p_operation_id) NOT BETWEEN 1 AND 255'
                || ' OR p_expected IS NULL OR p_expected < 0 OR p_request IS NULL'
                || (SELECT string_agg(format(' OR $%s IS NULL', 2 + k.n), '') FROM unnest(v_keys) WITH ORDINALITY AS k(c, n)),
            format('save_%s: scope and operation ID of 1 to 255 characters, p_expected >= 0, a canonical request, and %s',
                   v_path_name, array_to_string(v_keys, ', ')),
            format($prepare$
    -- Made by cutover.make_record_save for the types its table's columns had. A row of NULLs
    -- that a join to no row of the table gives has their types now: a query on the table, whose
    -- plan is made again when the table changes. Another type sends the save to
    -- save_record_dynamic, which reads the values as the table's types are now.
    -- The same query tells whether the calling role may write the table itself (0 when not),
    -- with whether the table has row-level security read when its plan is made.
    SELECT CASE WHEN %1$s THEN CASE WHEN cutover.caller_may_write(%7$L::regclass, %8$s, p_expected = 0,
                                                                  cutover.row_security_when_planned(%7$L::regclass))
                                    THEN 1 ELSE 0 END END
      INTO v_made FROM (SELECT) AS one LEFT JOIN %2$s AS t ON false;
    IF v_made IS DISTINCT FROM 1 THEN
        IF v_made = 0 THEN
            PERFORM cutover.refuse_write(%7$L::regclass, p_expected = 0);
        END IF;
        SELECT d.outcome, d.revision INTO outcome, revision
          FROM cutover.save_record_dynamic(%3$L, p_scope, p_operation_id, jsonb_build_object(%4$s), p_expected, %5$L,
                                           jsonb_build_object(%6$s), p_request, p_lock_timeout_ms) AS d;
        RETURN;
    END IF;$prepare$,
                (SELECT string_agg(format('pg_typeof(t.%I) = %s::regtype', c, v_type_ids ->> c), ' AND ')
                   FROM unnest(v_guarded || v_set) AS c),
                v_table, p_plan,
                (SELECT string_agg(format('%L, $%s', k.c, 2 + k.n), ', ') FROM unnest(v_keys) WITH ORDINALITY AS k(c, n)),
                v_path_name,
                (SELECT string_agg(format('%L, $%s', c.c, 3 + cardinality(v_keys) + c.n), ', ')
                   FROM unnest(v_set) WITH ORDINALITY AS c(c, n)),
                v_table::text,
                format('CASE WHEN p_expected = 0 THEN %L::text[] ELSE %L::text[] END',
                       v_keys || v_set || array_remove(ARRAY[v_entity.revision_column], NULL),
                       v_set || array_remove(ARRAY[v_entity.revision_column], NULL))),
            NULL,
            format('jsonb_build_object(%s)', (SELECT string_agg(format('%L, %s', k.c, v_key_values[k.n]), ', ')
                                                FROM unnest(v_keys) WITH ORDINALITY AS k(c, n))),
            quote_literal(v_path_name),
            CASE WHEN v_entity.revision_column IS NULL THEN '(pg_current_xact_id()::text::numeric % 4294967296)::bigint'
                 ELSE 'CASE WHEN p_expected = 0 THEN 1 WHEN p_expected = 9223372036854775807 THEN 0 ELSE p_expected + 1 END' END,
            format(E'    IF p_expected = 0 THEN\n        %s\n    %s\n        %s\n    END IF;',
                format('INSERT INTO %s AS t (%s) VALUES (%s) ON CONFLICT (%s) DO NOTHING RETURNING %s, ''committed''::text INTO revision, outcome;',
                    v_table,
                    (SELECT string_agg(format('%I', c), ', ') FROM unnest(v_keys || v_set || array_remove(ARRAY[v_entity.revision_column], NULL)) AS c),
                    array_to_string(v_key_values || v_column_values || CASE WHEN v_entity.revision_column IS NULL THEN '{}'::text[] ELSE ARRAY['1'] END, ', '),
                    (SELECT string_agg(format('%I', k), ', ') FROM unnest(v_keys) AS k),
                    v_revision),
                CASE WHEN v_entity.revision_column IS NULL THEN 'ELSE' ELSE 'ELSIF p_expected < 9223372036854775807 THEN' END,
                format('UPDATE %s AS t SET %s WHERE %s AND %s = p_expected RETURNING %s, ''committed''::text INTO revision, outcome;',
                    v_table,
                    (SELECT string_agg(v, ', ') FROM (
                        SELECT format('%I = %s', c.c, v_column_values[c.n]) FROM unnest(v_set) WITH ORDINALITY AS c(c, n)
                        UNION ALL SELECT format('%1$I = t.%1$I + 1', v_entity.revision_column) WHERE v_entity.revision_column IS NOT NULL) AS s(v)),
                    v_match, v_revision, v_revision)),
            v_entity.revision_column IS NULL,
            format('SELECT coalesce(%s, -9223372036854775808) INTO v_current FROM %s AS t WHERE %s;', v_revision, v_table, v_match),
            NULL, NULL);
        v_made := v_made || format('%s(%s)', v_name, v_signature);
        -- Chosen by save_record_<plan> when the save is this path's, names exactly these
        -- columns and the table holds them.
        v_choose := v_choose || format($choose$
                         WHEN p_path = %1$L AND p_columns ?& %2$L::text[] AND (p_columns - %2$L::text[]) = '{}'::jsonb AND to_jsonb(v_shape) ?& %2$L::text[] THEN %3$s$choose$,
            v_path_name, v_set, v_path);
        v_calls := v_calls || format($call$
    %1$s v_path = %2$s THEN
        SELECT f.outcome, f.revision INTO outcome, revision
          FROM %3$s(p_scope, p_operation_id, %4$s, p_expected, %5$s, p_request, p_lock_timeout_ms) AS f;$call$,
            CASE WHEN v_calls = '' THEN 'IF' ELSE 'ELSIF' END, v_path, v_name,
            (SELECT string_agg(format('p_key ->> %L', k), ', ') FROM unnest(v_keys) AS k),
            (SELECT string_agg(format('p_columns ->> %L', c), ', ') FROM unnest(v_set) AS c));
    END LOOP;

    -- The functions of paths that have none now go.
    FOR v_path IN 1..2 LOOP
        v_name := CASE v_path WHEN 1 THEN v_entity.legacy_save_function ELSE v_entity.modern_save_function END;
        CONTINUE WHEN v_name IS NULL OR v_typed[v_path] IS NOT NULL;
        FOR v_function IN
            SELECT p.oid::regprocedure::text FROM pg_proc p
             WHERE p.pronamespace = 'cutover'::regnamespace AND quote_ident(p.proname) = split_part(v_name, '.', 2)
        LOOP
            EXECUTE format('DROP FUNCTION %s', v_function);
        END LOOP;
    END LOOP;
    UPDATE cutover.record_plans e SET legacy_save_function = v_typed[1], modern_save_function = v_typed[2] WHERE e.plan = p_plan;

    IF v_table IS NULL OR v_types IS NULL OR NOT v_types ?& v_guarded THEN
        IF v_entity.save_function IS NOT NULL THEN
            EXECUTE format('DROP FUNCTION IF EXISTS %s(text, text, jsonb, bigint, text, jsonb, bytea, integer)', v_entity.save_function);
            UPDATE cutover.record_plans e SET save_function = NULL WHERE e.plan = p_plan;
        END IF;
        RETURN NULL;
    END IF;

    -- save_record_<plan>: a name of its own, kept once given.
    v_name := v_entity.save_function;
    IF v_name IS NULL THEN
        v_name := 'save_record_' || v_slug;
        IF EXISTS (SELECT FROM pg_proc f WHERE f.pronamespace = 'cutover'::regnamespace AND f.proname = v_name) THEN
            v_name := v_name || '_' || left(md5(p_plan), 8);
        END IF;
        v_name := format('cutover.%I', v_name);
    END IF;
    v_json := cutover.record_json_parameters(quote_literal(p_plan),
        format(' OR NOT p_key ?& %1$s OR (p_key - %1$s) <> ''{}''::jsonb OR jsonb_strip_nulls(p_key) <> p_key OR p_columns ?| %2$s',
               quote_literal(v_keys::text) || '::text[]', quote_literal(v_guarded::text) || '::text[]'),
        format('; p_key must give exactly %s, none of them null, and p_columns neither of them nor the revision', array_to_string(v_keys, ', ')));
    v_body := format($dispatch$
DECLARE
    v_shape record;
    v_path integer;
BEGIN
    IF %1$s THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = %2$L;
    END IF;
    IF p_request IS NULL THEN
        p_request := %3$s;
    END IF;
    -- Made by cutover.make_record_save. Which columns the table holds now: the row of a
    -- row-less query, whose plan is made again whenever the table changes.
    IF to_regclass(%4$L) IS NOT NULL THEN
        SELECT * INTO v_shape FROM %5$s WHERE false;
        v_path := CASE WHEN NOT to_jsonb(v_shape) ?& %6$L::text[] THEN 0%7$s
                       ELSE 0 END;
    END IF;%8$s
    %9$s
        SELECT d.outcome, d.revision INTO outcome, revision
          FROM cutover.save_record_dynamic(%10$L, p_scope, p_operation_id, p_key, p_expected, p_path, p_columns,
                                           p_request, p_lock_timeout_ms) AS d;
    %11$s
END
$dispatch$,
        v_json.check_condition, v_json.check_message, v_json.canonical_request, v_entity.table_name, v_table, v_guarded,
        v_choose, v_calls, CASE WHEN v_calls = '' THEN '' ELSE 'ELSE' END, p_plan, CASE WHEN v_calls = '' THEN '' ELSE 'END IF;' END);
    EXECUTE format(E'CREATE OR REPLACE FUNCTION %1$s(%2$s,\n    OUT outcome text, OUT revision bigint)\n'
                   || 'LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS %3$s%4$s%3$s',
                   v_name, v_json.parameters, '$save_' || md5(v_body) || '$', v_body);
    v_made := v_made || format('%s(text, text, jsonb, bigint, text, jsonb, bytea, integer)', v_name);

    -- Executable by exactly the roles that may call save_record (sql/roles/grant_application.sql
    -- grants both), so that a store may call them without save_record's dispatch.
    FOREACH v_function IN ARRAY v_made LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_function);
        FOR v_grantee IN
            SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END
              FROM pg_proc f CROSS JOIN LATERAL aclexplode(f.proacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee
             WHERE f.oid = 'cutover.save_record(text, text, text, jsonb, bigint, text, jsonb, bytea, integer)'::regprocedure
               AND a.privilege_type = 'EXECUTE' AND a.grantee <> f.proowner
        LOOP
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', v_function, v_grantee);
        END LOOP;
    END LOOP;
    UPDATE cutover.record_plans e SET save_function = v_name WHERE e.plan = p_plan;
    RETURN v_name;
END
$make$;

-- A record of a registered plan's entity as stored now: its revision (the revision column, or
-- the row's xmin) and every column of its row as JSON; no row when there is none. p_key as for
-- save_record. It runs as the schema's owner, like save_record, for roles granted EXECUTE.
CREATE OR REPLACE FUNCTION cutover.read_record(p_plan text, p_key jsonb, OUT revision bigint, OUT columns jsonb)
RETURNS SETOF record LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $read_record$
DECLARE
    v_entity cutover.record_plans;
    v_table regclass;
BEGIN
    SELECT * INTO v_entity FROM cutover.record_plans e WHERE e.plan = p_plan;
    v_table := to_regclass(v_entity.table_name);
    IF v_table IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CU006', MESSAGE = format('plan %s has no registered entity with a table', p_plan);
    END IF;
    -- The function reads as the schema's owner: only what its caller may read itself.
    IF NOT (has_table_privilege(cutover.calling_role(), v_table, 'SELECT')
            OR cutover.caller_has_column_privileges(v_table, ARRAY(SELECT a.attname::text FROM pg_attribute a
                                                                    WHERE a.attrelid = v_table AND a.attnum > 0 AND NOT a.attisdropped), 'SELECT')) THEN
        RAISE EXCEPTION USING ERRCODE = 'CU007', MESSAGE = format('role %s may not read %s, so it may not read its records either',
                                                                  cutover.calling_role(), v_table);
    END IF;
    IF cutover.caller_held_to_row_security(v_table) THEN
        RAISE EXCEPTION USING ERRCODE = 'CU007', MESSAGE = format(
            'role %s is held to row-level security on %s, which a read through Cutover would not apply, so it may not read its records',
            cutover.calling_role(), v_table);
    END IF;
    RETURN QUERY EXECUTE format('SELECT %s, to_jsonb(t) FROM %s AS t WHERE %s',
        CASE WHEN v_entity.revision_column IS NULL THEN 't.xmin::text::bigint' ELSE format('t.%I', v_entity.revision_column) END,
        v_table,
        (SELECT string_agg(format('t.%I = ($1 ->> %L)::%s', a.attname, a.attname, format_type(a.atttypid, NULL)), ' AND ')
           FROM pg_attribute a WHERE a.attrelid = v_table AND a.attname = ANY (v_entity.key_columns) AND NOT a.attisdropped))
    USING p_key;
END
$read_record$;

-- Functions that run as the schema's owner are executable only by grant
-- (sql/roles/grant_application.sql).
REVOKE EXECUTE ON FUNCTION
    cutover.save_draft(text, text, bytea, text, bigint, text, text, jsonb, integer),
    cutover.save_record(text, text, text, jsonb, bigint, text, jsonb, bytea, integer),
    cutover.save_record_dynamic(text, text, text, jsonb, bigint, text, jsonb, bytea, integer),
    cutover.make_record_save(text),
    cutover.record_save_source(text, text, text, text, text, text, text, text, text, text, text, text, boolean, text, text, text),
    cutover.caller_has_column_privileges(regclass, text[], text),
    cutover.caller_held_to_row_security(regclass),
    cutover.row_security_when_planned(regclass),
    cutover.caller_may_write(regclass, text[], boolean, boolean),
    cutover.refuse_write(regclass, boolean),
    cutover.calling_role(),
    cutover.record_json_parameters(text, text, text),
    cutover.read_record(text, jsonb),
    cutover.register_record_plan(text, text, text[], text, text[], text[]),
    cutover.record_statements_for(cutover.record_plans, regclass, text, text, text, jsonb),
    cutover.record_outcomes(text, text[], text[], bigint[]),
    cutover.record_outcomes(text[], text[], bigint[]),
    cutover.reader_heartbeat(text, text, text, text, text[], text),
    cutover.reader_heartbeat(text, text, text, text[], text),
    cutover.reader_leave(text, text, text),
    cutover.reader_leave(text, text),
    cutover.reader_follows(text, text, text, bigint)
  FROM PUBLIC;

-- Every rehearsal of a plan (version 10): `phase rehearse` copies the plan's table into a
-- scratch database on the same server and runs the plan there. The row is written before the
-- scratch database is made, naming it and the session of the rehearsal's own connection here
-- (pid and backend_start, as the runner lease does): a row not finished whose session has ended
-- names a scratch database left by a killed rehearsal, which the next `phase` command drops.
-- `checksum` is the plan's (manifest and every file it names), which the gate compares.
CREATE TABLE IF NOT EXISTS cutover.rehearsals (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    plan text NOT NULL,
    checksum text NOT NULL,
    scratch_database text NOT NULL,
    pid integer NOT NULL,
    backend_start timestamptz NOT NULL,
    database_role text NOT NULL DEFAULT current_user,
    os_user text NOT NULL,
    sample_rows bigint NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    scratch_dropped_at timestamptz,
    verdict text CHECK (verdict IN ('passed', 'failed', 'error', 'interrupted')),
    report jsonb,
    CHECK ((finished_at IS NULL) = (verdict IS NULL))
);
CREATE INDEX IF NOT EXISTS rehearsals_plan ON cutover.rehearsals (plan, id DESC);
REVOKE ALL ON cutover.rehearsals FROM PUBLIC;

-- What an operator asks of a plan's backfill (version 11): `phase backfill --pause`, `--resume`
-- and `--retune`, from any terminal, while a backfill runs or before it starts. The backfill
-- reads the row before every batch: paused, it waits; a retuned value replaces the one it
-- started with. A pause lasts until --resume; a retune, until the backfill finishes, which
-- removes the row. NULL leaves a value as the backfill started with it.
CREATE TABLE IF NOT EXISTS cutover.backfill_control (
    plan text PRIMARY KEY,
    is_paused boolean NOT NULL DEFAULT false,
    target_batch_ms integer CHECK (target_batch_ms BETWEEN 0 AND 60000),
    nice_ratio double precision CHECK (nice_ratio BETWEEN 0 AND 100),
    max_active_sessions integer CHECK (max_active_sessions BETWEEN 1 AND 100000),
    max_replica_lag_ms bigint CHECK (max_replica_lag_ms BETWEEN 0 AND 3600000),
    changed_by text NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON cutover.backfill_control FROM PUBLIC;

-- The key ranges of a backfill of several workers (version 12), made when it begins and removed
-- when it finishes or the plan goes back to baseline. A range runs from after lower_key (NULL:
-- the start of the table) to upper_key included (NULL: the end), keys as the batch's cursor
-- gives them (JSON text); cursor_key is the last key its batches converted, and each batch
-- moves it in the batch's own transaction, so a range stopped or left by a killed worker goes
-- on from there. worker_pid is the server process of the worker that took it last.
CREATE TABLE IF NOT EXISTS cutover.backfill_ranges (
    plan text NOT NULL,
    range_no integer NOT NULL CHECK (range_no >= 0),
    lower_key text,
    upper_key text,
    cursor_key text,
    converted bigint NOT NULL DEFAULT 0 CHECK (converted >= 0),
    is_done boolean NOT NULL DEFAULT false,
    worker_pid integer,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (plan, range_no)
);
REVOKE ALL ON cutover.backfill_ranges FROM PUBLIC;

-- The rows of a table that a predicate over its rows, aliased t, selects (version 13): how a
-- compiled plan counts the rows its backfill has still to convert. The caller names the table,
-- resolved on its own search_path as the plan's other statements resolve it; the predicate runs
-- under the search_path the plan's row functions and sync trigger pin, so that the plan's
-- expressions, written out over t's columns, call what the trigger calls and not what a role
-- able to create objects on the caller's search_path put there, while PostgreSQL evaluates
-- them in the query instead of calling a row function once per row (a call is several times
-- the cost of the expression, over every row still to convert). It runs as its caller, with
-- the caller's rights: anyone may call it, since it can do nothing the caller could not do.
CREATE OR REPLACE FUNCTION cutover.count_rows(p_table regclass, p_predicate text) RETURNS bigint
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $count_rows$
DECLARE
    v_count bigint;
BEGIN
    EXECUTE 'SELECT count(*) FROM ' || p_table::text || ' AS t WHERE ' || p_predicate INTO v_count;
    RETURN v_count;
END
$count_rows$;
GRANT EXECUTE ON FUNCTION cutover.count_rows(regclass, text) TO PUBLIC;

-- IF NOT EXISTS skips any relation of the same name; make sure each one really is our table.
DO $check$
BEGIN
    IF (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'cutover' AND c.relkind = 'r'
           AND c.relname IN ('schema_version', 'operation_ledger', 'outcome_log', 'migration_state',
                             'phase_history', 'applied_files', 'legacy_activity', 'readers',
                             'runner_lease', 'reader_epochs', 'record_plans', 'record_statements', 'rehearsals',
                             'backfill_control', 'backfill_ranges')) <> 15 THEN
        RAISE EXCEPTION 'the cutover schema holds other objects where its tables belong'
            USING HINT = 'expected tables schema_version, operation_ledger, outcome_log, migration_state, '
                      || 'phase_history, applied_files, legacy_activity, readers, reader_epochs, runner_lease, record_plans, record_statements, rehearsals, backfill_control and backfill_ranges in schema cutover';
    END IF;
END
$check$;

-- Before version 4 the application role wrote the ledger and the outcome log directly. Take back
-- every right on them, on the registry and the runner lease, and every write on the other tables, from every role
-- but the owner; sql/roles/grant_application.sql grants what the application needs now.
DO $revoke$
DECLARE
    v_grant record;
BEGIN
    FOR v_grant IN
        SELECT DISTINCT c.relname, a.privilege_type,
               CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS grantee
          FROM pg_class c
          JOIN pg_namespace n ON n.oid = c.relnamespace
          CROSS JOIN LATERAL aclexplode(c.relacl) a
          LEFT JOIN pg_roles r ON r.oid = a.grantee
         WHERE n.nspname = 'cutover' AND c.relkind = 'r' AND a.grantee <> c.relowner
           AND (c.relname IN ('operation_ledger', 'outcome_log', 'readers', 'reader_epochs', 'runner_lease', 'record_plans', 'record_statements', 'rehearsals', 'backfill_control',
                               'backfill_ranges')
                OR a.privilege_type <> 'SELECT')
    LOOP
        EXECUTE format('REVOKE %s ON cutover.%I FROM %s CASCADE', v_grant.privilege_type, v_grant.relname, v_grant.grantee);
    END LOOP;
END
$revoke$;

-- Every registered plan's save function, made (again) for its table as it is now: the upgrade
-- to version 7 makes the first ones. The drafts plan registered by version 6 gets the columns of
-- its writer paths; another plan registered then gets them from the next `phase init`.
UPDATE cutover.record_plans e SET legacy_columns = ARRAY['title'], modern_columns = ARRAY['document']
 WHERE e.plan = 'drafts' AND e.legacy_columns IS NULL AND e.modern_columns IS NULL
   AND e.key_columns = ARRAY['id'] AND e.revision_column = 'revision';
SELECT cutover.make_record_save(e.plan) FROM cutover.record_plans e ORDER BY e.plan;
