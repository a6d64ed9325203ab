-- W1: each order's customer plan (a join).
CREATE MATERIALIZED VIEW order_plan AS
SELECT o.id, c.plan FROM orders o JOIN customers c ON o.customer = c.id;
