-- W5: the top 3 orders by amount of each customer (top-k).
CREATE MATERIALIZED VIEW top3 AS
SELECT customer, id, amount,
       rank() OVER (PARTITION BY customer ORDER BY amount DESC) AS k
FROM orders
QUALIFY rank() OVER (PARTITION BY customer ORDER BY amount DESC) <= 3;
