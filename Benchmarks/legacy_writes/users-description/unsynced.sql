SELECT count(*) AS n FROM users WHERE name LIKE 'new user %' AND description IS NULL;
