#!/usr/bin/env python3
"""Issue 38's DuckDB column: the ticks rnt's commit bench kept (RNT_BENCH_KEEP=1) applied
to an in-memory DuckDB, with the workload's views recomputed from scratch after each.

Loads the work folder's CSVs, computes the views, then for each tick-W1-N.txt (or
tick-W5-N.txt):
  stage   the tick's deletes and inserts, written by Python (untimed) to one CSV per
          relation and sign, read into temporary tables;
  apply   DELETE ... USING the deletes, INSERT the inserts, per base relation, in one
          transaction;
  views   each view by CREATE OR REPLACE TABLE <view> AS SELECT ..., timed one by one
          (W1-W4: reach by WITH RECURSIVE ... UNION, set semantics like rnt's; W5-W9:
          window functions, and W8 against the tick's clock, recomputed as the bench
          steps it: catalogue.rs).
Prints per-tick milliseconds (wall, and the process's CPU time over all DuckDB's threads
for the views and the whole tick), their medians, and the views' checksums after the last
tick in the form benches/dbsp prints them.

usage: recompute.py FOLDER [--workload W1|W5] [--threads N] [--prefix tick-W1-] [--union-all]
Needs duckdb==2.0.1 (pip install duckdb==2.0.1).
"""

import argparse
import os
import re
import statistics
import sys
import tempfile
import time

import duckdb

# The base relations: columns and their DuckDB types.
ORDERS = [("id", "BIGINT"), ("customer", "BIGINT"), ("amount", "BIGINT")]
CUSTOMERS = [("id", "BIGINT"), ("plan", "VARCHAR")]
EDGE = [("src", "BIGINT"), ("dst", "BIGINT")]
ORDERS_AT = ORDERS + [("ts", "BIGINT")]

# W8's window (a week) and the clock of catalogue.rs.
WEEK_SECONDS = 604_800
SPAN_SECONDS = 100 * 86_400
START = 1_700_000_000
ARRIVALS_PER_TICK = 100

# The workloads: base relations, views (rnt's rules in SQL; {clock} is the tick's clock),
# and checksums: view -> (first sum, second sum, per-plan columns or None), as
# benches/dbsp prints them.
WORKLOADS = {
    "W1": {
        "relations": {"orders": ORDERS, "customers": CUSTOMERS, "edge": EDGE},
        "views": {
            # order_plan(i, p) :- orders(i, c, _), customers(c, p).
            "W1 order_plan": """CREATE OR REPLACE TABLE order_plan AS
                SELECT DISTINCT o.id, c.plan FROM orders o JOIN customers c ON o.customer = c.id""",
            # plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
            "W2 plan_total": """CREATE OR REPLACE TABLE plan_total AS
                SELECT c.plan, sum(o.amount) AS total, count(*) AS n
                FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.plan""",
            # reach(x, y) :- edge(x, y).  reach(x, z) :- reach(x, y), edge(y, z).
            "W3 reach": """CREATE OR REPLACE TABLE reach AS
                WITH RECURSIVE r(x, y) AS (
                    SELECT src, dst FROM edge
                    UNION
                    SELECT r.x, e.dst FROM r JOIN edge e ON r.y = e.src)
                SELECT x, y FROM r""",
            # orphan(i) :- orders(i, c, _), not customers(c, _).
            "W4 orphan": """CREATE OR REPLACE TABLE orphan AS
                SELECT DISTINCT o.id FROM orders o
                WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer)""",
        },
        "checksums": {
            "order_plan": ("sum(id)", "sum(length(plan))", None),
            "plan_total": ("sum(total)", "sum(n)", "total, n"),
            "reach": ("sum(x)", "sum(y)", None),
            "orphan": ("sum(id)", "sum(0)", None),
        },
    },
    "W5": {
        "relations": {"orders": ORDERS, "customers": CUSTOMERS, "orders_at": ORDERS_AT},
        "views": {
            # top3(c, i, a, k) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 3.
            "W5 top3": """CREATE OR REPLACE TABLE top3 AS
                SELECT customer, id, amount,
                       rank() OVER (PARTITION BY customer ORDER BY amount DESC) AS k
                FROM orders QUALIFY k <= 3""",
            # running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
            "W6 running": """CREATE OR REPLACE TABLE running AS
                SELECT customer, id,
                       sum(amount) OVER (PARTITION BY customer ORDER BY id, amount
                                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS total
                FROM orders""",
            # plan_customers(p, count_distinct(c)) :- orders(_, c, _), customers(c, p).
            "W7 plan_customers": """CREATE OR REPLACE TABLE plan_customers AS
                SELECT c.plan, count(DISTINCT o.customer) AS n
                FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.plan""",
            # recent(i, c, a) :- orders_at(i, c, a, ts), ts > now - 604800.
            "W8 recent": """CREATE OR REPLACE TABLE recent AS
                SELECT DISTINCT id, customer, amount FROM orders_at
                WHERE ts > {clock} - """ + str(WEEK_SECONDS),
            # first_order(c, i, a) :- orders(i, c, a), n = row_number() over (partition c order i), n = 1.
            "W9 first_order": """CREATE OR REPLACE TABLE first_order AS
                SELECT customer, id, amount FROM orders
                QUALIFY row_number() OVER (PARTITION BY customer ORDER BY id, amount) = 1""",
        },
        "checksums": {
            "top3": ("sum(id)", "sum(k)", None),
            "running": ("sum(id)", "sum(total)", None),
            "plan_customers": ("sum(n)", "sum(0)", "n, 0"),
            "recent": ("sum(id)", "sum(amount)", None),
            "first_order": ("sum(id)", "sum(amount)", None),
        },
    },
}

CHANGE = re.compile(r'^([+-])(\w+)\((.*)\)$')


def values(args):
    """The values of a change line's argument list: ints as text, strings unquoted."""
    out, i = [], 0
    while i < len(args):
        while i < len(args) and args[i] == " ":
            i += 1
        if i < len(args) and args[i] == '"':
            j, text = i + 1, []
            while args[j] != '"':
                if args[j] == "\\":
                    j += 1
                text.append(args[j])
                j += 1
            out.append("".join(text))
            i = j + 1
        else:
            j = i
            while j < len(args) and args[j] not in ", ":
                j += 1
            out.append(args[i:j])
            i = j
        while i < len(args) and args[i] == " ":
            i += 1
        if i < len(args):
            assert args[i] == ",", f"unexpected {args[i]!r} in ({args})"
            i += 1
    return out


def parse_tick(path, relations):
    """A change file as {(relation, sign): [row, ...]}."""
    changes = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = CHANGE.match(line)
            if not m or m.group(2) not in relations:
                sys.exit(f"{path}:{n}: not a change to this workload's relations: {line}")
            row = values(m.group(3))
            assert len(row) == len(relations[m.group(2)]), f"{path}:{n}: arity"
            changes.setdefault((m.group(2), m.group(1)), []).append(row)
    return changes


def csv_field(value):
    """A value as a CSV field (quoted when it needs to be)."""
    if any(c in value for c in ',"\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def write_stage(changes, relations, folder):
    """Writes each (relation, sign)'s rows to a CSV in folder; returns {key: path}."""
    files = {}
    for (relation, sign), rows in changes.items():
        path = os.path.join(folder, f"{relation}-{'ins' if sign == '+' else 'del'}.csv")
        with open(path, "w") as f:
            f.write(",".join(c for c, _ in relations[relation]) + "\n")
            for row in rows:
                f.write(",".join(csv_field(v) for v in row) + "\n")
        files[(relation, sign)] = path
    return files


def read_csv_sql(columns, path):
    """`read_csv` of a file of rows with these columns and types."""
    spec = ", ".join(f"'{c}': '{t}'" for c, t in columns)
    return f"read_csv('{path}', header = true, columns = {{{spec}}})"


def ms_since(started):
    """Milliseconds of wall time since `started` (a perf_counter reading)."""
    return (time.perf_counter() - started) * 1e3


def checksums(con, spec):
    """The views' checksums, printed as benches/dbsp prints them."""
    out = []
    for view, (first, second, per_plan) in spec.items():
        rows, a, b = con.execute(
            f"SELECT count(*), coalesce({first}, 0), coalesce({second}, 0) FROM {view}"
        ).fetchone()
        line = f"{view}: rows {rows}, {first} {a}, {second} {b}"
        if per_plan:
            table = con.execute(f"SELECT plan, {per_plan} FROM {view} ORDER BY ALL").fetchall()
            line += ": " + "; ".join(" ".join(str(v) for v in row) for row in table)
        out.append(line)
    return "\n".join(out)


def tick_files(folder, prefix):
    """The tick files in tick order."""
    found = []
    for name in os.listdir(folder):
        m = re.fullmatch(re.escape(prefix) + r"(\d+)\.txt", name)
        if m:
            found.append((int(m.group(1)), os.path.join(folder, name)))
    return [path for _, path in sorted(found)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="W1")
    parser.add_argument("--threads", type=int, default=None,
                        help="DuckDB threads (default: its own, the cores)")
    parser.add_argument("--prefix", default=None, help="tick file prefix (default tick-W1-)")
    parser.add_argument("--union-all", action="store_true",
                        help="reach by UNION ALL (a forest has one path per pair)")
    args = parser.parse_args()
    workload = WORKLOADS[args.workload]
    relations, views = workload["relations"], dict(workload["views"])
    prefix = args.prefix or f"tick-{args.workload}-"
    if args.union_all and "W3 reach" in views:
        views["W3 reach"] = views["W3 reach"].replace("UNION\n", "UNION ALL\n")

    con = duckdb.connect(":memory:")
    if args.threads:
        con.execute(f"SET threads = {args.threads}")
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]

    started = time.perf_counter()
    for relation, columns in relations.items():
        con.execute(f"CREATE TABLE {relation} ({', '.join(f'{c} {t}' for c, t in columns)})")
        path = os.path.join(args.folder, f"{relation}.csv")
        con.execute(f"INSERT INTO {relation} SELECT * FROM {read_csv_sql(columns, path)}")
    load_ms = ms_since(started)
    sizes = {r: con.execute(f"SELECT count(*) FROM {r}").fetchone()[0] for r in relations}
    # The first state's clock, stepped by each tick (W5-W9).
    apart = max(SPAN_SECONDS // max(sizes.get("orders", 1), 1), 1)
    clock = START + (sizes.get("orders", 1) - 1) * apart
    initial = {}
    for view, sql in views.items():
        started = time.perf_counter()
        con.execute(sql.format(clock=clock))
        initial[view] = ms_since(started)

    files = tick_files(args.folder, prefix)
    if not files:
        sys.exit(f"no {prefix}N.txt files in {args.folder}")
    columns = ["stage", "apply"] + list(views) + ["views", "tick", "views CPU", "tick CPU"]
    samples = {c: [] for c in columns}
    lines = []
    stage_dir = tempfile.mkdtemp(prefix="rnt-duckdb-")
    for n, path in enumerate(files):
        changes = parse_tick(path, relations)
        staged = write_stage(changes, relations, stage_dir)
        count = sum(len(rows) for rows in changes.values())
        clock += ARRIVALS_PER_TICK * apart
        tick = {}
        cpu = time.process_time()
        started = time.perf_counter()
        for (relation, sign), file in staged.items():
            table = f"{relation}_{'ins' if sign == '+' else 'del'}"
            con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS "
                        f"SELECT * FROM {read_csv_sql(relations[relation], file)}")
        tick["stage"] = ms_since(started)
        started = time.perf_counter()
        con.execute("BEGIN")
        for relation, cols in relations.items():
            if (relation, "-") in staged:
                match = " AND ".join(f"{relation}.{c} = d.{c}" for c, _ in cols)
                con.execute(f"DELETE FROM {relation} USING {relation}_del d WHERE {match}")
            if (relation, "+") in staged:
                con.execute(f"INSERT INTO {relation} SELECT * FROM {relation}_ins")
        con.execute("COMMIT")
        tick["apply"] = ms_since(started)
        views_cpu = time.process_time()
        for view, sql in views.items():
            started = time.perf_counter()
            con.execute(sql.format(clock=clock))
            tick[view] = ms_since(started)
        tick["views CPU"] = (time.process_time() - views_cpu) * 1e3
        tick["tick CPU"] = (time.process_time() - cpu) * 1e3
        tick["views"] = sum(tick[v] for v in views)
        tick["tick"] = tick["stage"] + tick["apply"] + tick["views"]
        for c in columns:
            samples[c].append(tick[c])
        for relation, sign in staged:
            con.execute(f"DROP TABLE {relation}_{'ins' if sign == '+' else 'del'}")
        for file in staged.values():
            os.remove(file)
        lines.append(f"| {n} | {count} | " + " | ".join(f"{tick[c]:.1f}" for c in columns) + " |")
    os.rmdir(stage_dir)

    print(f"DuckDB {duckdb.__version__} in memory, {threads} threads, {args.folder}: "
          + ", ".join(f"{sizes[r]} {r}" for r in relations)
          + f"; load {load_ms:.0f} ms; first computation: "
          + ", ".join(f"{v} {ms:.0f} ms" for v, ms in initial.items()))
    print()
    print("| tick | changes | " + " | ".join(columns) + " |")
    print("|---:|---:|" + "---:|" * len(columns))
    for line in lines:
        print(line)
    print("| **median** | | "
          + " | ".join(f"**{statistics.median_high(samples[c]):.1f}**" for c in columns) + " |")
    print()
    print("checksums after the last tick:")
    print(checksums(con, workload["checksums"]))


if __name__ == "__main__":
    main()
