-- Backfill: the rows still to convert, counted by cutover.count_rows with the plan's expressions written
-- out under the search_path of its row functions and sync trigger.

-- ACCESS SHARE lock, scans the table, no rewrite
SELECT cutover.count_rows(CAST('public.orders' AS regclass), '(t.status_code IS NULL) AND ((t.status_code IS NULL AND (CASE t.status WHEN ''new'' THEN 1 WHEN ''paid'' THEN 2 WHEN ''shipped'' THEN 3 END) IS NOT NULL))');
