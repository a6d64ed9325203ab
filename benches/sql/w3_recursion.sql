-- W3: every node each node reaches in the forest (recursion).
CREATE MATERIALIZED VIEW reach AS
WITH RECURSIVE r(x, y) AS (
  SELECT src, dst FROM edge
  UNION
  SELECT r.x, e.dst FROM r JOIN edge e ON r.y = e.src
)
SELECT x, y FROM r;
