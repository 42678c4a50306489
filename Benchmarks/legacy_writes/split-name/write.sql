-- The old application's writes to people: a new name, then a new person.
\set id random(1, :rows)
\set n random(1, 1000000)
UPDATE people SET full_name = 'Grace ' || :n || ' Hopper' WHERE id = md5(:id::text)::uuid;
INSERT INTO people (id, full_name) VALUES (md5(nextval('cutover_bench_keys')::text)::uuid, 'Someone New');
