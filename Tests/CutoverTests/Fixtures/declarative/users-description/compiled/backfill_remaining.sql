-- Backfill: the rows still to convert, counted by cutover.count_rows with the plan's expressions written
-- out under the search_path of its row functions and sync trigger.

-- ACCESS SHARE lock, scans the table, no rewrite
SELECT cutover.count_rows(CAST('users' AS regclass), '(t.description IS NULL) AND ((t.description IS NULL AND (''description for '' || t.name) IS NOT NULL))');
