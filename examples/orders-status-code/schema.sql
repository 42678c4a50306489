CREATE TABLE IF NOT EXISTS orders (id bigint PRIMARY KEY, status text NOT NULL);
