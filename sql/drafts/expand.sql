-- Expand: add the v2 representation beside v1, and mirror every legacy write into it.
--
-- `document` holds the v2 document ({"body", "tags", "title", "version": 2}); NULL means the
-- row was written before expand and holds v1 only, until backfill converts it. The trigger
-- keeps both representations readable while old application versions keep writing `title`
-- with plain SQL: an insert without a document gets one with the documented defaults, and a
-- write that changes the title but not the document merges the new title into the document,
-- keeping the fields v1 does not know.

ALTER TABLE drafts ADD COLUMN IF NOT EXISTS document jsonb;

CREATE OR REPLACE FUNCTION cutover.drafts_mirror_legacy_write() RETURNS trigger
LANGUAGE plpgsql AS $mirror$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.document IS NULL THEN
            NEW.document := jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', NEW.title, 'version', 2);
        END IF;
    ELSIF NEW.document IS NOT DISTINCT FROM OLD.document AND NEW.title IS DISTINCT FROM OLD.title THEN
        IF OLD.document IS NULL THEN
            NEW.document := jsonb_build_object('body', '', 'tags', '[]'::jsonb, 'title', NEW.title, 'version', 2);
        ELSE
            NEW.document := jsonb_set(OLD.document, '{title}', to_jsonb(NEW.title));
        END IF;
    END IF;
    RETURN NEW;
END
$mirror$;

DROP TRIGGER IF EXISTS drafts_mirror_legacy_write ON drafts;
CREATE TRIGGER drafts_mirror_legacy_write
    BEFORE INSERT OR UPDATE OF title, document ON drafts
    FOR EACH ROW EXECUTE FUNCTION cutover.drafts_mirror_legacy_write();
