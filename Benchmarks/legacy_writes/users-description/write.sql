-- The old application's writes to users: a new name, then a new user.
\set id random(1, :rows)
\set n random(1, 1000000)
UPDATE users SET name = 'user ' || :id || ' renamed ' || :n WHERE id = :id;
INSERT INTO users (name) VALUES ('new user ' || nextval('cutover_bench_keys'));
