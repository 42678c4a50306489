-- Cutover's two roles, for least privilege. Step 1 of 2 (docs/runbooks/roles.md).
--
--   cutover_migrator  runs `phase`: owns the cutover schema and the drafts table, so that it may
--                     install the control schema and run the plan's DDL. Not a superuser;
--                     CREATEDB lets `phase rehearse` make (and drop) its scratch database.
--   cutover_app       the application: reads and writes drafts and saves through Cutover, and
--                     may run no DDL at all.
--
-- Run as a superuser, connected to the application's database, before the first `phase init`:
--   psql "postgresql://postgres@db.example:5432/app" -v ON_ERROR_STOP=1 -f sql/roles/create_roles.sql
-- Safe to run again. Set the passwords afterwards, in psql: \password cutover_migrator

DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cutover_migrator') THEN
        CREATE ROLE cutover_migrator LOGIN;
    END IF;
    -- `phase rehearse` runs the plan in a scratch database of its own on this server.
    ALTER ROLE cutover_migrator CREATEDB;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cutover_app') THEN
        CREATE ROLE cutover_app LOGIN;
    END IF;
    -- CREATE on the database lets `phase init` create the cutover schema.
    EXECUTE format('GRANT CONNECT, CREATE ON DATABASE %I TO cutover_migrator', current_database());
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO cutover_app', current_database());
    -- CREATE on the table's schema lets expand build its index there (PostgreSQL 15 and later
    -- no longer grant it to everyone on public).
    EXECUTE format('GRANT USAGE, CREATE ON SCHEMA %I TO cutover_migrator',
                   (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.oid = 'drafts'::regclass));
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO cutover_app',
                   (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.oid = 'drafts'::regclass));
END
$roles$;

-- Only a table's owner may alter it, and expand, its rollback and contract alter drafts.
ALTER TABLE drafts OWNER TO cutover_migrator;

-- Functions are executable by everyone unless that is revoked; make the migrator's new ones
-- (the control schema's, and the trigger function expand adds) executable only by grant.
ALTER DEFAULT PRIVILEGES FOR ROLE cutover_migrator REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
