-- Expand, in one transaction: the sync trigger's functions, the modern columns beside the legacy
-- ones (nullable, without a default an old writer would see, so no rewrite), the row functions
-- and comparisons, whose names are resolved as they are made, and the trigger.

-- no lock on the table, catalog only, no rewrite
INSERT INTO cutover.legacy_activity (table_name, last_write_at)
VALUES ('public.orders', '-infinity') ON CONFLICT (table_name) DO NOTHING;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.orders_note_legacy_write() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $cutover$
BEGIN
    PERFORM 1 FROM cutover.legacy_activity
     WHERE table_name = 'public.orders' AND last_write_at < now() - interval '1 second'
       FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        UPDATE cutover.legacy_activity SET last_write_at = now() WHERE table_name = 'public.orders';
    END IF;
    PERFORM set_config('cutover.legacy_noted', (CAST(CAST(pg_catalog.date_part('epoch', pg_catalog.now()) AS pg_catalog.int8) AS pg_catalog.text) OPERATOR(pg_catalog.||) ' public.orders'), false);
END
$cutover$;

-- no lock on the table, catalog only, no rewrite
CREATE OR REPLACE FUNCTION cutover.orders_sync() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $cutover$
BEGIN
    -- status → status_code
    IF TG_OP OPERATOR(pg_catalog.=) 'INSERT' THEN
        IF NEW.status_code IS NULL AND NOT coalesce(pg_catalog.current_setting('cutover.writer', true) OPERATOR(pg_catalog.=) 'modern', false) THEN
            NEW.status_code := cutover.orders_status_code_up(NEW);
            IF NOT coalesce(pg_catalog.current_setting('cutover.legacy_noted', true) OPERATOR(pg_catalog.=) (CAST(CAST(pg_catalog.date_part('epoch', pg_catalog.now()) AS pg_catalog.int8) AS pg_catalog.text) OPERATOR(pg_catalog.||) ' public.orders'), false) THEN
                PERFORM cutover.orders_note_legacy_write();
            END IF;
        ELSE
            NEW.status := cutover.orders_status_down(NEW);
        END IF;
    ELSIF cutover.orders_status_code_differs(NEW.status_code, OLD.status_code) THEN
        IF cutover.orders_status_differs(NEW.status, OLD.status) OR cutover.orders_status_code_differs(NEW.status_code, cutover.orders_status_code_up(OLD)) THEN
            NEW.status := cutover.orders_status_down(NEW);
        END IF;
    ELSIF cutover.orders_status_differs(NEW.status, OLD.status) THEN
        NEW.status_code := cutover.orders_status_code_up(NEW);
        IF NOT coalesce(pg_catalog.current_setting('cutover.legacy_noted', true) OPERATOR(pg_catalog.=) (CAST(CAST(pg_catalog.date_part('epoch', pg_catalog.now()) AS pg_catalog.int8) AS pg_catalog.text) OPERATOR(pg_catalog.||) ' public.orders'), false) THEN
            IF NOT coalesce(pg_catalog.current_setting('cutover.writer', true) OPERATOR(pg_catalog.=) 'modern', false) THEN
                PERFORM cutover.orders_note_legacy_write();
            END IF;
        END IF;
    ELSIF NEW.status_code IS NULL AND (cutover.orders_id_differs(NEW.id, OLD.id) OR coalesce(pg_catalog.current_setting('cutover.backfill', true) OPERATOR(pg_catalog.=) 'on', false)) THEN
        NEW.status_code := cutover.orders_status_code_up(NEW);
    END IF;
    RETURN NEW;
END
$cutover$;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders
    ADD COLUMN IF NOT EXISTS status_code smallint;

-- no lock on the table, catalog only, no rewrite
DO $pinned$
-- makes cutover.orders_status_code_up, cutover.orders_status_down, cutover.orders_status_differs, cutover.orders_status_code_differs, cutover.orders_id_differs under search_path pg_catalog, pg_temp
DECLARE
    saved text := pg_catalog.current_setting('search_path');
    relation pg_catalog.oid := 'public.orders'::pg_catalog.regclass;
    qualified text;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    qualified := relation::pg_catalog.regclass::pg_catalog.text;
    EXECUTE pg_catalog.format($definition$
CREATE OR REPLACE FUNCTION cutover.orders_status_code_up(%1$s) RETURNS %1$s.status_code%%TYPE
LANGUAGE sql
RETURN (CASE ($1).status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END)
    $definition$, qualified);
    EXECUTE pg_catalog.format($definition$
CREATE OR REPLACE FUNCTION cutover.orders_status_down(%1$s) RETURNS %1$s.status%%TYPE
LANGUAGE sql
RETURN (CASE ($1).status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' WHEN 3 THEN 'shipped' END)
    $definition$, qualified);
    EXECUTE pg_catalog.format($definition$
CREATE OR REPLACE FUNCTION cutover.orders_status_differs(%1$s.status%%TYPE, %1$s.status%%TYPE) RETURNS boolean
LANGUAGE sql
RETURN $1 IS DISTINCT FROM $2
    $definition$, qualified);
    EXECUTE pg_catalog.format($definition$
CREATE OR REPLACE FUNCTION cutover.orders_status_code_differs(%1$s.status_code%%TYPE, %1$s.status_code%%TYPE) RETURNS boolean
LANGUAGE sql
RETURN $1 IS DISTINCT FROM $2
    $definition$, qualified);
    EXECUTE pg_catalog.format($definition$
CREATE OR REPLACE FUNCTION cutover.orders_id_differs(%1$s.id%%TYPE, %1$s.id%%TYPE) RETURNS boolean
LANGUAGE sql
RETURN $1 IS DISTINCT FROM $2
    $definition$, qualified);
    PERFORM pg_catalog.set_config('search_path', saved, true);
END
$pinned$;

-- SHARE ROW EXCLUSIVE lock, catalog only, no rewrite
CREATE OR REPLACE TRIGGER cutover_sync
    BEFORE INSERT OR UPDATE OF status, status_code, id ON public.orders
    FOR EACH ROW EXECUTE FUNCTION cutover.orders_sync();
