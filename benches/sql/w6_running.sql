-- W6: each customer's running total of amounts, ordered by order id.
CREATE MATERIALIZED VIEW running AS
SELECT customer, id,
       sum(amount) OVER (PARTITION BY customer ORDER BY id ROWS UNBOUNDED PRECEDING) AS total
FROM orders;
