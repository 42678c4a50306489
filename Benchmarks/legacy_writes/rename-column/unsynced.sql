SELECT count(*) AS n FROM accounts WHERE id >= 1000000000 AND email IS NULL;
