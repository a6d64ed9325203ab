-- W4: no order without its customer (a denial).
CREATE ASSERTION orphan CHECK (NOT EXISTS (
  SELECT o.id FROM orders o
  WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer)
));
