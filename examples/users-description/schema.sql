CREATE TABLE IF NOT EXISTS users (id serial PRIMARY KEY, name varchar(255) UNIQUE);
