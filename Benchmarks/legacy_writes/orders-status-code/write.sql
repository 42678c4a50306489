-- The old application's writes to orders: the status moves on, then a new order.
\set id random(1, :rows)
\set status random(1, 3)
UPDATE orders SET status = (ARRAY['new', 'paid', 'shipped'])[:status] WHERE id = :id;
INSERT INTO orders (id, status) VALUES (nextval('cutover_bench_keys'), 'new');
