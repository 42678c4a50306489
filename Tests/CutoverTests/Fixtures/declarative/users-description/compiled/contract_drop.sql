-- Contract, last file and point of no return: the sync trigger, the row functions and the legacy
-- representation go; catalog changes only. Old application versions stop working here: contract's
-- checks made sure none is left.

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
DROP TRIGGER IF EXISTS cutover_sync ON users;

-- no lock on the table, catalog only, no rewrite
DROP FUNCTION IF EXISTS cutover.users_sync(), cutover.users_note_legacy_write(), cutover.users_id_differs, cutover.users_description_up(users);

-- ACCESS EXCLUSIVE lock, catalog only, no rewrite
DROP INDEX IF EXISTS users_cutover_unconverted;
