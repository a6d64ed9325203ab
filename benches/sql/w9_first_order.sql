-- W9: each customer's first order (row_number = 1).
CREATE MATERIALIZED VIEW first_order AS
SELECT customer, id, amount FROM orders
QUALIFY row_number() OVER (PARTITION BY customer ORDER BY id) = 1;
