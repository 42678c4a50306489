-- Revert expand: the sync trigger, the row functions, the plan's indexes and the modern columns go.
-- Every legacy column, which the trigger kept current, stays, so no row written meanwhile is lost.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
DROP TRIGGER IF EXISTS cutover_sync ON users;

-- no lock on the table, catalog only, no rewrite
DROP FUNCTION IF EXISTS cutover.users_sync(), cutover.users_note_legacy_write(), cutover.users_id_differs, cutover.users_description_up(users);

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
DROP INDEX IF EXISTS users_cutover_unconverted;

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
ALTER TABLE users
    DROP COLUMN IF EXISTS description;

-- no lock on the table, catalog only, no rewrite
DELETE FROM cutover.legacy_activity WHERE table_name = 'users';
