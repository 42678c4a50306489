-- Expand, in one transaction: the row functions and the sync trigger's function, then the
-- modern columns beside the legacy ones (nullable, without a default an old writer would see,
-- so no rewrite) and the trigger, so that the table's lock is held for those two only.

-- no lock on the table, catalog only, no rewrite
INSERT INTO cutover.legacy_activity (table_name, last_write_at)
VALUES ('users', '-infinity') ON CONFLICT (table_name) DO NOTHING;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.users_sync() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $cutover$
DECLARE
    declared_modern boolean := current_setting('cutover.writer', true) IS NOT DISTINCT FROM 'modern';
    legacy_write boolean := false;
BEGIN
    -- description: added
    IF TG_OP = 'INSERT' AND NEW.description IS NULL AND NOT declared_modern THEN
        NEW.description := ('description for ' || NEW.name);
        legacy_write := true;
    ELSIF TG_OP = 'UPDATE' AND NEW.description IS NULL AND NEW.id IS DISTINCT FROM OLD.id THEN
        NEW.description := ('description for ' || NEW.name);
    END IF;
    IF legacy_write AND current_setting('cutover.legacy_noted', true) IS DISTINCT FROM (to_char(now(), 'YYYYMMDDHH24MISS ') || 'users') THEN
        PERFORM 1 FROM cutover.legacy_activity
         WHERE table_name = 'users' AND last_write_at < now() - interval '1 second'
           FOR UPDATE SKIP LOCKED;
        IF FOUND THEN
            UPDATE cutover.legacy_activity SET last_write_at = now() WHERE table_name = 'users';
        END IF;
        PERFORM set_config('cutover.legacy_noted', (to_char(now(), 'YYYYMMDDHH24MISS ') || 'users'), false);
    END IF;
    RETURN NEW;
END
$cutover$;

-- no lock on the table, catalog only, no rewrite
SET LOCAL check_function_bodies = off;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.users_description_up(users) RETURNS text
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $cutover$
SELECT ('description for ' || name) FROM (SELECT ($1).*) AS cutover_row
$cutover$;

-- no lock on the table, catalog only, no rewrite
SET LOCAL check_function_bodies = on;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE users
    ADD COLUMN IF NOT EXISTS description text;

-- SHARE ROW EXCLUSIVE lock, catalog only, no rewrite
CREATE OR REPLACE TRIGGER cutover_sync
    BEFORE INSERT OR UPDATE OF id ON users
    FOR EACH ROW EXECUTE FUNCTION cutover.users_sync();
