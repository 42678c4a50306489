SELECT count(*) AS n FROM people WHERE full_name = 'Someone New' AND (first_name IS NULL OR last_name IS NULL);
