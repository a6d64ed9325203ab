-- W7: the number of distinct customers with an order, per plan.
CREATE MATERIALIZED VIEW plan_customers AS
SELECT c.plan, count(DISTINCT o.customer) AS n
FROM orders o JOIN customers c ON o.customer = c.id
GROUP BY c.plan;
