-- The reference tables (docs/design.md, Performance) as a SQL user declares them.
CREATE TABLE customers (id INT PRIMARY KEY, plan TEXT NOT NULL);
CREATE TABLE orders (id INT PRIMARY KEY, customer INT NOT NULL, amount INT NOT NULL);
CREATE TABLE edge (src INT NOT NULL, dst INT NOT NULL, PRIMARY KEY (src, dst));
