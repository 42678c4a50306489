-- Expand, in one transaction: the sync trigger's functions, the modern columns beside the legacy
-- ones (nullable, without a default an old writer would see, so no rewrite), the row functions
-- and comparisons, whose names are resolved as they are made, and the trigger.

-- no lock on the table, catalog only, no rewrite
INSERT INTO cutover.legacy_activity (table_name, last_write_at)
VALUES ('users', '-infinity') ON CONFLICT (table_name) DO NOTHING;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.users_note_legacy_write() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $cutover$
BEGIN
    PERFORM 1 FROM cutover.legacy_activity
     WHERE table_name = 'users' AND last_write_at < now() - interval '1 second'
       FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        UPDATE cutover.legacy_activity SET last_write_at = now() WHERE table_name = 'users';
    END IF;
    PERFORM set_config('cutover.legacy_noted', (CAST(CAST(pg_catalog.date_part('epoch', pg_catalog.now()) AS pg_catalog.int8) AS pg_catalog.text) OPERATOR(pg_catalog.||) ' users'), false);
END
$cutover$;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.users_sync() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $cutover$
BEGIN
    -- description: added
    IF TG_OP OPERATOR(pg_catalog.=) 'INSERT' AND NEW.description IS NULL AND NOT coalesce(pg_catalog.current_setting('cutover.writer', true) OPERATOR(pg_catalog.=) 'modern', false) THEN
        NEW.description := cutover.users_description_up(NEW);
        IF NOT coalesce(pg_catalog.current_setting('cutover.legacy_noted', true) OPERATOR(pg_catalog.=) (CAST(CAST(pg_catalog.date_part('epoch', pg_catalog.now()) AS pg_catalog.int8) AS pg_catalog.text) OPERATOR(pg_catalog.||) ' users'), false) THEN
            PERFORM cutover.users_note_legacy_write();
        END IF;
    ELSIF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' AND NEW.description IS NULL AND cutover.users_id_differs(NEW.id, OLD.id) THEN
        NEW.description := cutover.users_description_up(NEW);
    END IF;
    RETURN NEW;
END
$cutover$;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE users
    ADD COLUMN IF NOT EXISTS description text;

-- no lock on the table, catalog only, no rewrite
DO $pinned$
-- makes cutover.users_description_up, cutover.users_id_differs under search_path pg_catalog, pg_temp
DECLARE
    saved text := pg_catalog.current_setting('search_path');
    relation pg_catalog.oid := 'users'::pg_catalog.regclass;
    qualified text;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    qualified := relation::pg_catalog.regclass::pg_catalog.text;
    EXECUTE pg_catalog.format($definition$
CREATE OR REPLACE FUNCTION cutover.users_description_up(%1$s) RETURNS %1$s.description%%TYPE
LANGUAGE sql
RETURN ('description for ' || ($1).name)
    $definition$, qualified);
    EXECUTE pg_catalog.format($definition$
CREATE OR REPLACE FUNCTION cutover.users_id_differs(%1$s.id%%TYPE, %1$s.id%%TYPE) RETURNS boolean
LANGUAGE sql
RETURN $1 IS DISTINCT FROM $2
    $definition$, qualified);
    PERFORM pg_catalog.set_config('search_path', saved, true);
END
$pinned$;

-- SHARE ROW EXCLUSIVE lock, catalog only, no rewrite
CREATE OR REPLACE TRIGGER cutover_sync
    BEFORE INSERT OR UPDATE OF id ON users
    FOR EACH ROW EXECUTE FUNCTION cutover.users_sync();
