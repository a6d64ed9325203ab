-- W2: the total and the number of orders per plan (an aggregate over a join).
CREATE MATERIALIZED VIEW plan_total AS
SELECT c.plan, sum(o.amount) AS total, count(*) AS n
FROM orders o JOIN customers c ON o.customer = c.id
GROUP BY c.plan;
