-- The old application's writes to line_items: a new price, then a new item.
\set id random(1, :rows)
\set cents random(1, 999999)
UPDATE line_items SET price = :cents / 100.0 WHERE tenant_id = :id % 100 AND id = :id;
INSERT INTO line_items (tenant_id, id, price, label) VALUES (7, nextval('cutover_bench_keys'), 9.99, 'a new item');
