#!/usr/bin/env python3
"""Make tests/sql/*.slt: rnt's SQL corpus with expected results computed by DuckDB.

    pip install duckdb==2.0.1
    python3 tests/sql/make_slt.py

Reads every tests/sql/*.sqlt (hand-written templates) and writes the .slt beside it; also
writes generated.slt and incremental.slt from the combinations below. Deterministic.

Template records (blank-line separated):
    statement ok | statement error TEXT     followed by SQL (run by DuckDB too for `ok`)
    query                                   followed by a SELECT: its rows from DuckDB
    mview NAME                              followed by a SELECT: rnt gets CREATE
                                            MATERIALIZED VIEW NAME AS …, DuckDB a plain VIEW
    check NAME                              the view's rows (SELECT * FROM NAME) from DuckDB
    rnt-only                                followed by SQL run by rnt only (`statement ok`)

Where SQL engines differ, DuckDB decides (docs/design.md), with the two exceptions the
design states: AVG is a decimal(38, 6) truncated toward zero (DuckDB's double is written
truncated to 6 places here), and binary floats are not supported.
"""
import datetime
import decimal
import glob
import os
import random
import re

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))


def text(value):
    """A value as the corpus writes it (the runner formats rnt's values alike)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        d = decimal.Decimal(repr(value)).quantize(decimal.Decimal("0.000001"), rounding=decimal.ROUND_DOWN)
        return format(d, "f")
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        s = value.strftime("%Y-%m-%d %H:%M:%S")
        if value.microsecond:
            s += (".%06d" % value.microsecond).rstrip("0")
        return s
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        return value if value else "(empty)"
    return str(value)


def rows(con, sql):
    return ["\t".join(text(v) for v in row) for row in con.sql(sql).fetchall()]


def query_record(con, sql, out):
    # A window's ORDER BY (inside OVER (…)) does not order the result.
    outer = re.sub(r"over\s*\([^)]*\)", "", sql.lower())
    sort = "nosort" if "order by" in outer else "rowsort"
    result = rows(con, sql)
    if sort == "rowsort":
        result.sort()  # DuckDB's order of an unordered answer varies between runs
    out.append("query T %s\n%s\n----\n%s\n" % (sort, sql, "\n".join(result)))


def run_template(records):
    """Runs template records (kind, argument, sql) in a fresh DuckDB; the .slt text."""
    con = duckdb.connect()
    out = []
    for kind, arg, sql in records:
        if kind == "statement" and arg == "ok":
            con.execute(sql)
            out.append("statement ok\n%s\n" % sql)
        elif kind == "statement":
            expected = arg[len("error"):].strip() if arg.startswith("error") else arg
            out.append("statement error %s\n%s\n" % (expected, sql))
        elif kind == "rnt-only":
            out.append("statement ok\n%s\n" % sql)
        elif kind == "query":
            query_record(con, sql, out)
        elif kind == "mview":
            con.execute("CREATE VIEW %s AS %s" % (arg, sql))
            out.append("statement ok\nCREATE MATERIALIZED VIEW %s AS %s\n" % (arg, sql))
        elif kind == "check":
            query_record(con, "SELECT * FROM %s" % arg, out)
        else:
            raise ValueError("unknown record %r" % kind)
    return "\n".join(out)


def parse_template(path):
    records = []
    with open(path) as f:
        blocks = f.read().split("\n\n")
    for block in blocks:
        lines = [l for l in block.strip("\n").split("\n") if l and not l.startswith("#")]
        if not lines:
            continue
        head = lines[0].split(" ", 1)
        kind, arg = head[0], (head[1] if len(head) > 1 else "")
        records.append((kind, arg.strip(), "\n".join(lines[1:])))
    return records


SCHEMA = [
    "CREATE TABLE t (a INT, b INT, c TEXT)",
    "CREATE TABLE u (id INT PRIMARY KEY, a INT, d DECIMAL(8, 2), day DATE)",
    "CREATE TABLE s (k INT PRIMARY KEY, name TEXT NOT NULL)",
]
DATA = [
    "INSERT INTO t VALUES (1, 2, 'ab'), (1, 2, 'ab'), (2, NULL, 'b'), (NULL, 3, NULL), (3, 3, ''), (2, 1, 'abc'), (NULL, NULL, 'ab'), (4, 2, 'z')",
    "INSERT INTO u VALUES (1, 1, 10.50, DATE '2024-01-01'), (2, 2, NULL, DATE '2024-01-03'), (3, NULL, -2.25, NULL), (4, 4, 0.00, DATE '2023-12-31'), (5, 1, 7.75, DATE '2024-02-29')",
    "INSERT INTO s VALUES (1, 'one'), (2, 'two'), (4, 'four'), (6, 'six')",
]

PREDICATES = [
    "a > 1", "a = 2", "a IS NULL", "a IS NOT NULL", "a BETWEEN 1 AND 3", "a IN (1, 4)",
    "a NOT IN (1, 4)", "c LIKE 'a%'", "c NOT LIKE '%b'", "(a > 1 OR b < 2)", "NOT (a = 1)",
    "coalesce(a, 0) > 0", "a <> b", "b >= a", "c = 'ab'", "a = 1 AND b = 2",
    "CASE WHEN a > 2 THEN true ELSE false END", "nullif(a, 1) IS NULL", "a + b > 3",
    "length(c) = 2", "a IN (1, NULL)", "a NOT IN (1, NULL)",
    "(a > 1) IS NOT TRUE", "(a > 1) IS FALSE", "(b = 2) IS NOT FALSE", "(b = 2) IS TRUE",
    "coalesce(a > 1, false)",
]
PROJECTIONS = [
    "a", "a, b", "DISTINCT a", "DISTINCT a, c", "a + b AS s", "a * 2 AS twice", "a % 3 AS m",
    "a // 2 AS half", "c || 'x' AS cx", "upper(c) AS up", "coalesce(a, -1) AS a0",
    "CASE WHEN b IS NULL THEN 'none' WHEN b > 2 THEN 'big' ELSE 'small' END AS size",
    "abs(a - 3) AS dist", "substr(c, 1, 1) AS first", "cast(a AS TEXT) AS at",
]
AGGREGATES = [
    "count(*)", "count(a)", "count(b)", "sum(a)", "min(c)", "max(b)", "avg(a)",
    "count(DISTINCT a)", "sum(b), count(*)", "min(a), max(a)",
]
GROUPS = ["", " GROUP BY b", " GROUP BY c", " GROUP BY a, c"]
JOINS = [
    "SELECT t.a, u.id FROM t JOIN u ON t.a = u.a",
    "SELECT t.c, s.name FROM t JOIN s ON t.a = s.k",
    "SELECT t.a, s.name FROM t LEFT JOIN s ON t.a = s.k",
    "SELECT u.id, s.name FROM u LEFT JOIN s ON u.a = s.k",
    "SELECT u.id, s.name FROM u LEFT JOIN s ON u.a = s.k AND s.name <> 'one'",
    "SELECT t.a, u.d FROM t JOIN u ON t.a = u.a WHERE u.d > 0",
    "SELECT s.name, count(*) FROM t JOIN s ON t.a = s.k GROUP BY s.name",
    "SELECT s.name, count(t.a) FROM s LEFT JOIN t ON t.a = s.k GROUP BY s.name",
    "SELECT t.a, t.b FROM t, s WHERE t.a = s.k AND s.name LIKE 't%'",
    "SELECT u.id FROM u JOIN t ON u.a = t.a JOIN s ON t.b = s.k",
    "SELECT t.a, s.name FROM t RIGHT JOIN s ON t.a = s.k",
    "SELECT * FROM s RIGHT JOIN u ON u.a = s.k",
    "SELECT t.c, s.k, s.name FROM t FULL JOIN s ON t.a = s.k",
    "SELECT * FROM u FULL OUTER JOIN s ON u.a = s.k AND s.name <> 'one'",
    "SELECT * FROM t JOIN u USING (a)",
    "SELECT * FROM t LEFT JOIN u USING (a)",
    "SELECT * FROM t RIGHT JOIN u USING (a)",
    "SELECT * FROM t FULL JOIN u USING (a)",
    "SELECT a, count(*) FROM t FULL JOIN u USING (a) GROUP BY a",
    "SELECT s.name, count(u.id) FROM u RIGHT JOIN s ON u.a = s.k GROUP BY s.name",
    "SELECT t.c, s.name, u.id FROM t FULL JOIN s ON t.a = s.k JOIN u ON u.a = s.k",
    "SELECT t.a, t.b, s.k, s.name FROM t LEFT JOIN s ON t.a = s.k AND t.b > 1 AND s.name <> 'two'",
    "SELECT t.a, t.b, s.k FROM t LEFT JOIN s ON t.b > s.k",
    "SELECT t.a, t.c, s.k FROM t LEFT JOIN s ON t.a IS NULL AND s.k < 3",
    "SELECT u.id, t.a, t.b FROM u LEFT JOIN t ON t.b >= u.a AND t.c LIKE 'a%'",
    "SELECT t.a, s.name FROM t LEFT JOIN s ON t.a > 1",
    "SELECT t.c, s.k FROM t LEFT JOIN s ON coalesce(t.a, 0) = 0 AND s.k = 1",
    "SELECT u.id, s.name, t.c FROM u JOIN s ON u.a = s.k LEFT JOIN t ON t.a + 1 > s.k AND t.b = u.a",
    "SELECT t.a, s.k FROM t RIGHT JOIN s ON t.a < s.k AND t.b IS NOT NULL",
    "SELECT s.name, count(t.a) FROM s LEFT JOIN t ON t.a >= s.k GROUP BY s.name",
    "SELECT t.a, u.id, u.d FROM t LEFT JOIN u ON u.a = t.a AND u.d BETWEEN 0 AND t.b * 5",
    "SELECT * FROM t LEFT JOIN s ON t.a IN (1, 2) AND s.k <> t.a",
]
SUBQUERIES = [
    "SELECT a FROM t WHERE a IN (SELECT k FROM s)",
    "SELECT a FROM t WHERE a NOT IN (SELECT k FROM s)",
    "SELECT a FROM t WHERE a NOT IN (SELECT a FROM u)",
    "SELECT k FROM s WHERE EXISTS (SELECT 1 FROM t WHERE t.a = s.k)",
    "SELECT k FROM s WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.a = s.k)",
    "SELECT id FROM u WHERE d > (SELECT avg(d) FROM u)",
    "SELECT a, b FROM t WHERE b = (SELECT max(b) FROM t)",
    "SELECT k FROM s WHERE k IN (SELECT a FROM t WHERE b > 1)",
    "SELECT x FROM (SELECT a + 1 AS x FROM t) q WHERE x > 2",
    "WITH big AS (SELECT a FROM t WHERE a > 1) SELECT count(*) FROM big",
    "SELECT count(*) FROM (SELECT DISTINCT c FROM t) q",
    "SELECT a, (SELECT count(*) FROM s WHERE s.k = t.a) AS n FROM t",
    "SELECT k, (SELECT count(*) + 1 FROM t WHERE t.a = s.k) AS n, (SELECT max(b) FROM t WHERE t.a = s.k) AS m FROM s",
    "SELECT a, b, (SELECT max(name) FROM s) AS top, (SELECT sum(d) FROM u WHERE a > 100) AS none FROM t",
    "SELECT id, a, (SELECT coalesce(sum(b), -1) FROM t WHERE t.a = u.a) AS sb FROM u WHERE id > 1",
    "SELECT DISTINCT c, (SELECT count(DISTINCT b) FROM t t2 WHERE t2.c = t.c) AS nb FROM t",
    "SELECT a, (SELECT min(k) FROM s WHERE s.k = t.a) IS NULL AS missing, (SELECT count(*) FROM u) * 10 AS total FROM t",
    "SELECT k, (SELECT avg(a) FROM t WHERE t.b = s.k) AS mean FROM s",
]
SET_OPS = [
    "SELECT a FROM t UNION SELECT k FROM s",
    "SELECT a FROM t UNION ALL SELECT k FROM s",
    "SELECT a FROM t EXCEPT SELECT k FROM s",
    "SELECT a FROM t INTERSECT SELECT k FROM s",
    "SELECT a, c FROM t UNION SELECT id, 'u' FROM u",
    "SELECT b FROM t EXCEPT SELECT a FROM u",
    "SELECT a FROM t UNION ALL SELECT a FROM t",
    "SELECT a FROM t EXCEPT ALL SELECT k FROM s",
    "SELECT a, c FROM t EXCEPT ALL SELECT a, c FROM t WHERE a = 1 OR c IS NULL",
    "SELECT a FROM t EXCEPT ALL SELECT a FROM u",
    "SELECT b FROM t INTERSECT ALL SELECT a FROM u",
    "SELECT a, b FROM t INTERSECT ALL SELECT a, b FROM t WHERE c = 'ab' OR a IS NULL",
    "SELECT c FROM t INTERSECT ALL SELECT c FROM t",
    "SELECT a FROM t UNION ALL SELECT a FROM t EXCEPT ALL SELECT k FROM s",
    "SELECT count(*) FROM (SELECT a FROM t INTERSECT ALL SELECT a FROM t UNION ALL SELECT a FROM u) q",
]
ORDERED = [
    "SELECT a, b, c FROM t ORDER BY a, b, c",
    "SELECT a, b, c FROM t ORDER BY a DESC, b, c",
    "SELECT a, b, c FROM t ORDER BY a NULLS FIRST, b, c",
    "SELECT id, d FROM u ORDER BY d DESC, id LIMIT 3",
    "SELECT id FROM u ORDER BY id LIMIT 2 OFFSET 1",
    "SELECT c, count(*) AS n FROM t GROUP BY c ORDER BY n DESC, c",
    "SELECT DISTINCT b FROM t ORDER BY b",
]
WINDOWS = [
    "SELECT id, row_number() OVER (ORDER BY id) AS rn FROM u",
    "SELECT id, a, rank() OVER (ORDER BY a) AS r FROM u",
    "SELECT id, a, dense_rank() OVER (ORDER BY a DESC) AS r FROM u",
    "SELECT id, row_number() OVER (PARTITION BY a ORDER BY d DESC, id) AS rn FROM u",
    "SELECT id, sum(a) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS run FROM u",
    "SELECT id, count(*) OVER (PARTITION BY a IS NULL ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS n FROM u",
    "SELECT id, lag(a) OVER (ORDER BY id) AS prev, lead(a, 2, -1) OVER (ORDER BY id) AS next2 FROM u",
    "SELECT id, d FROM u QUALIFY row_number() OVER (PARTITION BY a ORDER BY id DESC) = 1",
    "SELECT id, a FROM u WHERE a IS NOT NULL QUALIFY rank() OVER (ORDER BY a DESC) <= 2",
    "SELECT u.id, s.name, row_number() OVER (ORDER BY s.name, u.id) AS rn FROM u JOIN s ON u.a = s.k",
    "SELECT id, row_number() OVER (ORDER BY a + id, id) AS rn FROM u",
    "SELECT id, row_number() OVER (ORDER BY id) AS rn, rank() OVER (PARTITION BY a ORDER BY id) AS r FROM u",
    "SELECT id FROM u QUALIFY rank() OVER (PARTITION BY a ORDER BY d DESC NULLS LAST) = 1 AND row_number() OVER (ORDER BY id) > 1",
    "SELECT id FROM u QUALIFY rank() OVER (PARTITION BY a ORDER BY id DESC) = 1 AND row_number() OVER (ORDER BY id) > 1",
    "SELECT * FROM (SELECT id, a, row_number() OVER (PARTITION BY a ORDER BY id) AS rn FROM u) q WHERE rn <= 1",
    "SELECT k, name, row_number() OVER (ORDER BY name DESC) - 1 AS z FROM s",
    "SELECT id, row_number() OVER (PARTITION BY a ORDER BY id) AS n, sum(id) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS run FROM u",
]


def generated():
    records = [("statement", "ok", s) for s in SCHEMA + DATA]
    for p in PROJECTIONS:
        records.append(("query", "", "SELECT %s FROM t" % p))
        for w in PREDICATES:
            records.append(("query", "", "SELECT %s FROM t WHERE %s" % (p, w)))
    for a in AGGREGATES:
        for g in GROUPS:
            key = g.replace(" GROUP BY ", "")
            select = "%s, %s" % (key, a) if key else a
            records.append(("query", "", "SELECT %s FROM t%s" % (select, g)))
            for w in PREDICATES:
                records.append(("query", "", "SELECT %s FROM t WHERE %s%s" % (select, w, g)))
            if g:
                records.append(("query", "", "SELECT %s FROM t%s HAVING count(*) > 1" % (select, g)))
    for q in JOINS + SUBQUERIES + SET_OPS + ORDERED + WINDOWS:
        records.append(("query", "", q))
    for q in JOINS:
        for w in ["t.a > 1", "t.b IS NULL"] if " t " in q or q.startswith("SELECT t") else []:
            joiner = " AND " if " WHERE " in q else " WHERE "
            if "GROUP BY" in q:
                continue
            records.append(("query", "", q + joiner + w))
    for w in PREDICATES:
        records.append(("query", "", "SELECT a, b, c FROM t WHERE %s ORDER BY a, b, c" % w))
        records.append(("query", "", "SELECT a FROM t WHERE %s UNION SELECT k FROM s" % w))
        records.append(("query", "", "SELECT a, count(*) FROM t WHERE %s GROUP BY a ORDER BY a" % w))
    records.append(("query", "", "SELECT u.id, u.day + 1 AS next, year(u.day) AS y FROM u"))
    records.append(("query", "", "SELECT id, round(d, 1) AS r, cast(d AS INT) AS i FROM u"))
    records.append(("query", "", "SELECT sum(d), min(d), max(day), avg(d) FROM u"))
    records.append(("query", "", "SELECT a, sum(d) FROM u GROUP BY a"))
    return records


VIEWS = [
    ("v_proj", "SELECT a, c FROM t"),
    ("v_distinct", "SELECT DISTINCT a FROM t"),
    ("v_filter", "SELECT a, b FROM t WHERE a > 1 OR b IS NULL"),
    ("v_count", "SELECT c, count(*) AS n, count(a) AS na FROM t GROUP BY c"),
    ("v_sum", "SELECT b, sum(a) AS s, min(a) AS lo, max(a) AS hi FROM t GROUP BY b"),
    ("v_global", "SELECT count(*) AS n, sum(a) AS s FROM t"),
    ("v_avg", "SELECT b, avg(a) AS m FROM t GROUP BY b"),
    ("v_join", "SELECT t.a, s.name FROM t JOIN s ON t.a = s.k"),
    ("v_left", "SELECT u.id, s.name FROM u LEFT JOIN s ON u.a = s.k"),
    ("v_left_theta", "SELECT t.a, t.b, s.k, s.name FROM t LEFT JOIN s ON t.a = s.k AND t.b > 1 AND s.name <> 'two'"),
    ("v_left_range", "SELECT u.id, t.a, t.c FROM u LEFT JOIN t ON t.b >= u.a AND t.c IS NOT NULL"),
    ("v_left_gate", "SELECT t.c, s.k FROM t LEFT JOIN s ON coalesce(t.a, 0) = 0 AND s.k < 3"),
    ("v_left_count", "SELECT s.name, count(t.a) AS n FROM s LEFT JOIN t ON t.a = s.k GROUP BY s.name"),
    ("v_exists", "SELECT k FROM s WHERE EXISTS (SELECT 1 FROM t WHERE t.a = s.k)"),
    ("v_not_exists", "SELECT k FROM s WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.a = s.k)"),
    ("v_union", "SELECT a FROM t UNION ALL SELECT k FROM s"),
    ("v_except", "SELECT a FROM t EXCEPT SELECT k FROM s"),
    ("v_except_all", "SELECT a FROM t EXCEPT ALL SELECT a FROM u"),
    ("v_intersect_all", "SELECT b FROM t INTERSECT ALL SELECT a FROM u"),
    ("v_having", "SELECT c, count(*) AS n FROM t GROUP BY c HAVING count(*) > 1"),
    ("v_case", "SELECT CASE WHEN a > 2 THEN 'big' ELSE 'small' END AS size, count(*) AS n FROM t GROUP BY 1"),
    ("v_distinct_count", "SELECT b, count(DISTINCT c) AS n FROM t GROUP BY b"),
    ("v_udec", "SELECT a, sum(d) AS total FROM u GROUP BY a"),
    ("v_not_in", "SELECT a FROM t WHERE a NOT IN (SELECT k FROM s)"),
    ("v_scalar", "SELECT a, b FROM t WHERE b = (SELECT max(b) FROM t)"),
    ("v_scalar_select", "SELECT k, (SELECT count(*) FROM t WHERE t.a = s.k) AS n, (SELECT max(b) FROM t WHERE t.a = s.k) AS m FROM s"),
    ("v_scalar_global", "SELECT a, (SELECT max(id) FROM u) AS top FROM t"),
    ("v_full", "SELECT t.c, s.k, s.name FROM t FULL JOIN s ON t.a = s.k"),
    ("v_right", "SELECT s.name, count(u.id) AS n FROM u RIGHT JOIN s ON u.a = s.k GROUP BY s.name"),
    ("v_full_using", "SELECT a, count(*) AS n FROM t FULL JOIN u USING (a) GROUP BY a"),
    ("v_not_true", "SELECT a, c FROM t WHERE (a > 1) IS NOT TRUE"),
    ("v_rank", "SELECT id, a, rank() OVER (PARTITION BY a ORDER BY d DESC NULLS LAST, id) AS r FROM u"),
    ("v_top1", "SELECT id, a, d FROM u QUALIFY row_number() OVER (PARTITION BY a ORDER BY id DESC) = 1"),
    ("v_running", "SELECT id, sum(a) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS run, lag(id) OVER (ORDER BY id) AS prev FROM u"),
    ("v_named", "SELECT u.id, s.name, dense_rank() OVER (ORDER BY s.name) AS r FROM u JOIN s ON u.a = s.k"),
    ("v_top_u", "SELECT id, a, d FROM u ORDER BY d DESC NULLS LAST, id LIMIT 3"),
    ("v_top_page", "SELECT id, a FROM u ORDER BY a, id LIMIT 2 OFFSET 1"),
    ("v_top_grouped", "SELECT c, count(*) AS n FROM t GROUP BY c ORDER BY n DESC, c LIMIT 2"),
    ("v_top_join", "SELECT u.id, s.name FROM u JOIN s ON u.a = s.k ORDER BY s.name DESC, u.id LIMIT 2"),
]

DML = [
    "INSERT INTO t VALUES (1, 2, 'ab'), (5, NULL, 'q')",
    "DELETE FROM t WHERE a = 1",
    "INSERT INTO s VALUES (3, 'three'), (5, 'five')",
    "UPDATE t SET b = b + 1 WHERE c = 'ab'",
    "INSERT INTO t VALUES (NULL, NULL, NULL), (NULL, NULL, NULL)",
    "UPDATE u SET d = d * 2 WHERE id > 2",
    "DELETE FROM s WHERE k = 2",
    "INSERT INTO u VALUES (6, 5, 1.25, DATE '2024-03-01'), (7, NULL, NULL, NULL)",
    "UPDATE t SET a = 3 WHERE a IS NULL",
    "DELETE FROM t WHERE b IS NULL OR b > 3",
    "INSERT INTO t SELECT k, k, name FROM s",
    "DELETE FROM u WHERE d IS NULL",
]


def incremental():
    records = [("statement", "ok", s) for s in SCHEMA + DATA]
    for name, sql in VIEWS:
        records.append(("mview", name, sql))
    for name, _ in VIEWS:
        records.append(("check", name, ""))
    for dml in DML:
        records.append(("statement", "ok", dml))
        for name, sql in VIEWS:
            records.append(("check", name, ""))
            records.append(("query", "", sql))
    return records


def main():
    for path in sorted(glob.glob(os.path.join(HERE, "*.sqlt"))):
        with open(path[:-5] + ".slt", "w") as f:
            f.write("# Made by make_slt.py from %s with DuckDB %s.\n\n" % (os.path.basename(path), duckdb.__version__))
            f.write(run_template(parse_template(path)))
    for name, records in [("generated", generated()), ("incremental", incremental())]:
        with open(os.path.join(HERE, name + ".slt"), "w") as f:
            f.write("# Made by make_slt.py (%s) with DuckDB %s.\n\n" % (name, duckdb.__version__))
            f.write(run_template(records))


if __name__ == "__main__":
    random.seed(0)
    main()
