-- W8: the orders of the last 7 days, by the state's clock (now(): a time window).
CREATE TABLE orders_at (id INT PRIMARY KEY, customer INT NOT NULL, amount INT NOT NULL, ts TIMESTAMP NOT NULL);
CREATE MATERIALIZED VIEW recent AS
SELECT id, customer, amount FROM orders_at WHERE ts > now() - INTERVAL 7 DAY;
