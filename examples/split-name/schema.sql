CREATE TABLE IF NOT EXISTS people (id uuid PRIMARY KEY, full_name text NOT NULL);
