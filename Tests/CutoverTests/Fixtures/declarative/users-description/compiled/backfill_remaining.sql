-- Backfill: the rows still to convert.

-- ACCESS SHARE lock, scans the table, no rewrite, through the index of unconverted rows
SELECT count(*) FROM users AS t WHERE (t.description IS NULL) AND ((t.description IS NULL AND cutover.users_description_up(t) IS NOT NULL));
