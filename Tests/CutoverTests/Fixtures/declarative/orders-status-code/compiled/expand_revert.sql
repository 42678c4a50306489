-- Revert expand: the sync trigger, the row functions, the plan's indexes and the modern columns go.
-- Every legacy column, which the trigger kept current, stays, so no row written meanwhile is lost.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
DROP TRIGGER IF EXISTS cutover_sync ON public.orders;

-- no lock on the table, catalog only, no rewrite
DROP FUNCTION IF EXISTS cutover.orders_sync(), cutover.orders_note_legacy_write(), cutover.orders_status_differs, cutover.orders_status_code_differs, cutover.orders_id_differs, cutover.orders_status_code_up(public.orders), cutover.orders_status_down(public.orders);

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
DROP INDEX IF EXISTS public.orders_cutover_unconverted;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE public.orders
    DROP COLUMN IF EXISTS status_code;

-- no lock on the table, catalog only, no rewrite
DELETE FROM cutover.legacy_activity WHERE table_name = 'public.orders';
