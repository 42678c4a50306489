-- Baseline of "orders save, N clients": the textbook conditional save of an order of
-- examples/orders-status-code after expand, written by hand with prepared statements and no
-- Cutover: claim the operation in the plan's ledger, update the order's status_code only if the
-- row is still the version the client read (its xmin, the revision the record store uses for a
-- table without a revision column), commit. Four round trips.
--
-- Each pgbench client owns one order (ID :round * 1000 + client) created by the benchmark in
-- one transaction, whose ID it is given as rev; each transaction reads the row's new xmin back
-- (RETURNING … \gset) for the next, writes paid (2) and shipped (3) in turn, and uses the
-- order's ID as the operation scope and the expected xmin as the operation ID, exactly as the
-- record store's side does. Variables given with -D: rev, n (0), round, request (canonical
-- request bytes, hex), path.
\set n :n + 1
\set order :round * 1000 + :client_id
\set code 2 + mod(:n, 2)
BEGIN;
INSERT INTO cutover.operation_ledger (plan, scope, operation_id, fingerprint, record_key, revision, path)
VALUES ('orders-status-code', :order, :rev, sha256(:request::bytea), jsonb_build_object('id', :order::bigint),
        (pg_current_xact_id()::text::numeric % 4294967296)::bigint, :path)
ON CONFLICT (plan, scope, operation_id) DO NOTHING;
UPDATE orders SET status_code = :code WHERE id = :order::bigint AND xmin = :rev::text::xid RETURNING xmin AS rev
\gset
COMMIT;
