CREATE TABLE IF NOT EXISTS accounts (id bigint PRIMARY KEY, mail text NOT NULL);
