-- Expand, in one transaction: the row functions and the sync trigger's function, then the
-- modern columns beside the legacy ones (nullable, without a default an old writer would see,
-- so no rewrite) and the trigger, so that the table's lock is held for those two only.

-- no lock on the table, catalog only, no rewrite
INSERT INTO cutover.legacy_activity (table_name, last_write_at)
VALUES ('public.orders', '-infinity') ON CONFLICT (table_name) DO NOTHING;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.orders_sync() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $cutover$
DECLARE
    declared_modern boolean := current_setting('cutover.writer', true) IS NOT DISTINCT FROM 'modern';
    legacy_write boolean := false;
BEGIN
    -- status → status_code
    IF TG_OP = 'INSERT' THEN
        IF NOT declared_modern AND NEW.status_code IS NULL THEN
            NEW.status_code := (CASE NEW.status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END);
            legacy_write := true;
        ELSE
            NEW.status := (CASE NEW.status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' WHEN 3 THEN 'shipped' END);
        END IF;
    ELSIF NEW.status_code IS DISTINCT FROM OLD.status_code THEN
        IF NEW.status IS DISTINCT FROM OLD.status OR NEW.status_code IS DISTINCT FROM CAST((CASE OLD.status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END) AS smallint) THEN
            NEW.status := (CASE NEW.status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' WHEN 3 THEN 'shipped' END);
        END IF;
    ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
        NEW.status_code := (CASE NEW.status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END);
        legacy_write := legacy_write OR NOT declared_modern;
    ELSIF NEW.status_code IS NULL AND (NEW.id IS DISTINCT FROM OLD.id OR current_setting('cutover.backfill', true) IS NOT DISTINCT FROM 'on') THEN
        NEW.status_code := (CASE NEW.status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END);
    END IF;
    IF legacy_write AND current_setting('cutover.legacy_noted', true) IS DISTINCT FROM (to_char(now(), 'YYYYMMDDHH24MISS ') || 'public.orders') THEN
        PERFORM 1 FROM cutover.legacy_activity
         WHERE table_name = 'public.orders' AND last_write_at < now() - interval '1 second'
           FOR UPDATE SKIP LOCKED;
        IF FOUND THEN
            UPDATE cutover.legacy_activity SET last_write_at = now() WHERE table_name = 'public.orders';
        END IF;
        PERFORM set_config('cutover.legacy_noted', (to_char(now(), 'YYYYMMDDHH24MISS ') || 'public.orders'), false);
    END IF;
    RETURN NEW;
END
$cutover$;

-- no lock on the table, catalog only, no rewrite
SET LOCAL check_function_bodies = off;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.orders_status_code_up(public.orders) RETURNS smallint
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $cutover$
SELECT (CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END) FROM (SELECT ($1).*) AS cutover_row
$cutover$;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.orders_status_down(public.orders) RETURNS public.orders.status%TYPE
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $cutover$
SELECT (CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' WHEN 3 THEN 'shipped' END) FROM (SELECT ($1).*) AS cutover_row
$cutover$;

-- no lock on the table, catalog only, no rewrite
SET LOCAL check_function_bodies = on;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders
    ADD COLUMN IF NOT EXISTS status_code smallint;

-- SHARE ROW EXCLUSIVE lock, catalog only, no rewrite
CREATE OR REPLACE TRIGGER cutover_sync
    BEFORE INSERT OR UPDATE OF status, status_code, id ON public.orders
    FOR EACH ROW EXECUTE FUNCTION cutover.orders_sync();
