-- Expand: add the v2 representation beside v1, and mirror every legacy write into it.
--
-- `document` holds the v2 document ({"body", "tags", "title", "version": 2}); NULL means the
-- row was written before expand and holds v1 only, until backfill converts it. The trigger
-- keeps both representations readable while old application versions keep writing `title`
-- with plain SQL: an insert without a document gets one with the documented defaults, and a
-- write that changes the title but not the document merges the new title into the document,
-- keeping the fields v1 does not know. It also notes, at most once a second, that a legacy
-- write happened, for contract's check that legacy writers are gone.
--
-- Lock: ADD COLUMN without a default and CREATE TRIGGER take ACCESS EXCLUSIVE on drafts for
-- an instant; the runner sets a short lock_timeout and retries, so nobody queues behind it.

ALTER TABLE drafts ADD COLUMN IF NOT EXISTS document jsonb;

INSERT INTO cutover.legacy_activity (table_name, last_write_at)
VALUES ('drafts', '-infinity') ON CONFLICT (table_name) DO NOTHING;

-- SECURITY DEFINER with a fixed search_path, so that an application role needs no rights on
-- the cutover schema for its plain SQL to keep working.
CREATE OR REPLACE FUNCTION cutover.drafts_mirror_legacy_write() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $mirror$
DECLARE
    legacy_write boolean := false;
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.document IS NULL THEN
            NEW.document := jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', NEW.title, 'version', 2);
            legacy_write := true;
        END IF;
    ELSIF NEW.document IS NOT DISTINCT FROM OLD.document AND NEW.title IS DISTINCT FROM OLD.title THEN
        IF OLD.document IS NULL THEN
            NEW.document := jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', NEW.title, 'version', 2);
        ELSE
            NEW.document := jsonb_set(OLD.document, '{title}', to_jsonb(NEW.title));
        END IF;
        legacy_write := true;
    END IF;
    IF legacy_write THEN
        UPDATE cutover.legacy_activity SET last_write_at = now()
         WHERE table_name = TG_TABLE_NAME AND last_write_at < now() - interval '1 second';
    END IF;
    RETURN NEW;
END
$mirror$;

DROP TRIGGER IF EXISTS drafts_mirror_legacy_write ON drafts;
CREATE TRIGGER drafts_mirror_legacy_write
    BEFORE INSERT OR UPDATE OF title, document ON drafts
    FOR EACH ROW EXECUTE FUNCTION cutover.drafts_mirror_legacy_write();
