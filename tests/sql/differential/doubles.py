#!/usr/bin/env python3
"""A random differential test of DOUBLE and REAL against DuckDB 2.0.1 (issue 39).

    python3 tests/sql/differential/doubles.py --rnt target/debug/rnt --seed 1 --cases 40

Each case makes a keyed table `k` and a bag `b` holding doubles drawn to hit the edges
(NULL, -0.0, NaN, ±inf, subnormals, the largest double, values that cancel, duplicates),
then runs through `rnt sql` (one prompt per case, `rnt.py`) and DuckDB, statement by
statement: queries of comparisons, ORDER BY, arithmetic, casts, `/ // %`, GROUP BY a
double, SUM/AVG/MIN/MAX/COUNT with NULLs and duplicates; materialized views of the same,
read after every batch of DML (INSERT, UPDATE, DELETE) and compared with their SELECT run
by DuckDB.

How values are judged:
- every value exactly (a double's bits), except the sign of zero: rnt stores one zero
  (docs/design.md, "Real data"), DuckDB keeps -0.0; NaN equals NaN;
- SUM and AVG of a double are compared with the exact value of the group's values, read
  back from DuckDB's table: `math.fsum` (SUM; when fsum overflows in its partials, the
  correctly rounded sum from `fractions.Fraction`, as fsum would give it), and the
  correctly rounded `Fraction(sum) / n` (AVG). rnt must equal it bit for bit; DuckDB
  (which adds in its own order) must lie within 1e-12 relative, and where it does not the
  case is listed (overflow of DuckDB's running sum where the exact sum is finite);
- over the bag `b`, rnt's SUM multiplies each distinct row by its count first and its
  AVG divides that rounded sum (docs/sql.md, "Doubles"): SUM/AVG over `b` agree when
  exact, within 1e-12 of the exact value, or equal to DuckDB's (counted apart).

Exit status 0 when no statement disagrees, 1 otherwise.
"""
import argparse
import math
import os
import random
import shutil
import struct
import sys
import tempfile
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import rnt as rntproc  # noqa: E402

import duckdb  # noqa: E402

SPECIAL = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 5e-324, -5e-324,
           2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308, 1e308,
           -1e308, 0.1, 0.2, 0.3, 1.5, -2.5, 3.0, 1e16, 1e-7]


# ---------------------------------------------------------------- data

def draw_double(rng):
    roll = rng.random()
    if roll < 0.15:
        return None
    if roll < 0.40:
        return rng.choice(SPECIAL)
    if roll < 0.55:
        return struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
    if roll < 0.80:
        return round(rng.uniform(-100, 100), rng.randint(0, 4))
    return rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)


def sql_double(x):
    """A literal DuckDB and rnt read as the same double (rnt drops -0.0's sign)."""
    if x is None:
        return "NULL"
    if math.isnan(x):
        return "'nan'"
    if math.isinf(x):
        return "'inf'" if x > 0 else "'-inf'"
    if x == 0 and math.copysign(1, x) < 0:
        return "'-0.0'"
    text = repr(x)
    return text if "e" in text or "." in text else text + ".0"


def draw_real(rng):
    x = draw_double(rng)
    if x is None or math.isnan(x) or math.isinf(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def keyed_rows(rng, first, count):
    rows = []
    for i in range(first, first + count):
        d = None if rng.random() < 0.2 else "%.2f" % rng.uniform(-999, 999)
        n = None if rng.random() < 0.2 else rng.randint(-5, 5)
        rows.append("(%d, %d, %s, %s, %s, %s, %s)" % (
            i, rng.randint(0, 3), sql_double(draw_double(rng)), sql_double(draw_double(rng)),
            sql_double(draw_real(rng)), d or "NULL", "NULL" if n is None else n))
    return rows


def bag_rows(rng, count, earlier):
    rows = []
    for _ in range(count):
        if earlier and rng.random() < 0.4:
            rows.append(rng.choice(earlier))
        else:
            rows.append("(%d, %s)" % (rng.randint(0, 2), sql_double(draw_double(rng))))
    earlier.extend(rows)
    return rows


# ---------------------------------------------------------------- statements

QUERIES = [
    "SELECT id, x, y, x = y, x < y, x <= y, x <> y, x > 1.5, x = 0, x >= i, x = d FROM k",
    "SELECT id, x + y, x - y, x * y, -x, abs(x), x + i, x * d, d + r, r * r, r + 1 FROM k",
    "SELECT id, x / y, i / 2, d / 3, r / 2, x % y, i % 3, d % 0.3, 7 // 2, -7 // 2, x // nullif(y, 0) FROM k",
    "SELECT id, CAST(i AS DOUBLE), CAST(d AS DOUBLE), CAST(r AS DOUBLE), "
    "CASE WHEN abs(x) < 1e38 OR abs(x) = 'inf'::DOUBLE OR x = 'nan'::DOUBLE THEN CAST(x AS REAL) END, "
    "CASE WHEN x BETWEEN -1e15 AND 1e15 THEN CAST(x AS BIGINT) END, "
    "CASE WHEN x BETWEEN -1e9 AND 1e9 THEN CAST(x AS DECIMAL(18, 3)) END, CAST(x AS VARCHAR) FROM k",
    "SELECT id, x FROM k ORDER BY x, id",
    "SELECT id, x FROM k ORDER BY x DESC, id",
    "SELECT x, count(*) FROM k GROUP BY x",
    "SELECT DISTINCT x FROM k",
    "SELECT id FROM k WHERE x > y OR x IS NULL",
    "SELECT g, x FROM b WHERE x < 1e300",
    "SELECT 1 / 0, 0 / 0, -1 / 0, 1.0 / 0, 5 / 2, 1e-1, 1e400, 2.5e-324",
    "SELECT coalesce(x, 1), coalesce(x, r), CASE WHEN x > 0 THEN x ELSE 2 END FROM k",
]

AGGREGATES = [
    # (SQL, table, grouped, kinds of the output columns)
    ("SELECT g, sum(x), avg(x), min(x), max(x), count(x), count(DISTINCT x) FROM k GROUP BY g",
     "k", "x", True, ["key", "sum", "avg", "min", "max", "count", "distinct"]),
    ("SELECT sum(y), avg(y), min(y), max(y), count(y) FROM k", "k", "y", False,
     ["sum", "avg", "min", "max", "count"]),
    ("SELECT g, sum(r), avg(r), min(r), max(r) FROM k GROUP BY g", "k", "r", True,
     ["key", "sum", "avg", "min", "max"]),
    ("SELECT g, sum(x), avg(x), min(x), max(x), count(*) FROM b GROUP BY g", "b", "x", True,
     ["key", "bagsum", "bagavg", "min", "max", "count"]),
]

VIEWS = [
    ("va", AGGREGATES[0]),
    ("vb", AGGREGATES[2]),
    ("vc", AGGREGATES[3]),
    ("vd", ("SELECT id, x / y AS q, x * 2 AS m, x + r AS s FROM k WHERE x > y", None, None,
            False, None)),
    ("ve", ("SELECT x, count(*) AS n FROM k GROUP BY x", None, None, False, None)),
]


def dml(rng, next_id, bag_earlier):
    roll = rng.random()
    if roll < 0.35:
        count = rng.randint(1, 4)
        return ("INSERT INTO k VALUES " + ", ".join(keyed_rows(rng, next_id, count)), count)
    if roll < 0.5:
        return ("INSERT INTO b VALUES " + ", ".join(bag_rows(rng, rng.randint(1, 3),
                                                             bag_earlier)), 0)
    if roll < 0.65:
        return ("DELETE FROM k WHERE id %% 3 = %d" % rng.randint(0, 2), 0)
    if roll < 0.72:
        return ("DELETE FROM b WHERE g = %d" % rng.randint(0, 2), 0)
    setters = ["x = y", "x = x * 3", "x = NULL", "y = -x", "x = %s" % sql_double(draw_double(rng)),
               "r = r * 2", "x = x / 3"]
    return ("UPDATE k SET %s WHERE g = %d" % (rng.choice(setters), rng.randint(0, 3)), 0)


def make_case(seed, index):
    rng = random.Random("%d:%d" % (seed, index))
    statements = [
        ("ddl", "CREATE TABLE k (id INT PRIMARY KEY, g INT, x DOUBLE, y DOUBLE, r REAL, "
                "d DECIMAL(6, 2), i INT)", None),
        ("ddl", "CREATE TABLE b (g INT, x DOUBLE)", None),
    ]
    views_first = rng.random() < 0.5
    view_statements = [("view", "CREATE MATERIALIZED VIEW %s AS %s" % (name, spec[0]), (name, spec))
                       for name, spec in VIEWS]
    if views_first:
        statements += view_statements
    count = rng.randint(4, 12)
    bag_earlier = []
    statements.append(("dml", "INSERT INTO k VALUES " + ", ".join(keyed_rows(rng, 0, count)), None))
    statements.append(("dml", "INSERT INTO b VALUES " + ", ".join(bag_rows(rng, rng.randint(3, 8),
                                                                           bag_earlier)), None))
    if not views_first:
        statements += view_statements
    for q in rng.sample(QUERIES, 5):
        statements.append(("query", q, None))
    for spec in AGGREGATES:
        statements.append(("aggregate", spec[0], spec))
    next_id = count
    for _ in range(rng.randint(3, 5)):
        for _ in range(rng.randint(1, 3)):
            sql, used = dml(rng, next_id, bag_earlier)
            next_id += used
            statements.append(("dml", sql, None))
        for name, spec in VIEWS:
            statements.append(("read", "SELECT * FROM %s" % name, (name, spec)))
        statements.append(("query", rng.choice(QUERIES), None))
    return statements


# ---------------------------------------------------------------- judging

def same_double(a, b):
    """Equal doubles: NaN equals NaN, and -0.0 equals 0.0 (rnt keeps one zero)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b


def as_float(v):
    if isinstance(v, str):
        return float(v)
    return float(v)


def to_real(x):
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


ZERO_SIGN = []  # statements where a sign of zero decided an infinity's sign


def same_value(duck, ours, ty=None):
    if duck is None or ours is None:
        return duck is None and ours is None
    if isinstance(duck, float) and math.isinf(duck) and not isinstance(ours, bool):
        # x / -0.0 is -inf in DuckDB; rnt stores that zero as 0.0, so x / it is +inf.
        try:
            if as_float(ours) == -duck:
                ZERO_SIGN.append(1)
                return True
        except (TypeError, ValueError):
            return False
    if ty == "FLOAT":
        # A REAL: DuckDB hands it over widened to a double, rnt prints the real's own
        # shortest text; read it back as a real.
        try:
            return same_double(duck, to_real(as_float(ours)))
        except (TypeError, ValueError):
            return False
    if isinstance(duck, bool) or isinstance(ours, bool):
        return duck == ours
    if isinstance(duck, float):
        try:
            return same_double(duck, as_float(ours))
        except (TypeError, ValueError):
            return False
    if isinstance(duck, str):
        # A cast to text: DuckDB writes -0.0's sign, rnt holds one zero.
        return duck == ours or (duck == "-0.0" and ours == "0.0")
    try:
        from decimal import Decimal
        return Decimal(str(duck)) == Decimal(str(ours))
    except Exception:  # noqa: BLE001
        return str(duck) == str(ours)


def row_key(row):
    return tuple("NULL" if v is None else ("nan" if isinstance(v, float) and math.isnan(v)
                                             else repr(as_float(v) + 0.0) if isinstance(v, float)
                                             else str(v)) for v in row)


def same_rows(duck_rows, rnt_rows, ordered, types):
    if rnt_rows is None or len(duck_rows) != len(rnt_rows):
        return False
    if not ordered:
        duck_rows = sorted(duck_rows, key=lambda r: tuple(map(sort_key, r)))
        rnt_rows = sorted(rnt_rows, key=lambda r: tuple(map(sort_key, r)))
    return all(len(a) == len(b) and all(same_value(x, y, t) for x, y, t in zip(a, b, types))
               for a, b in zip(duck_rows, rnt_rows))


def sort_key(v):
    if v is None:
        return (0, 0.0, "")
    if isinstance(v, bool):
        return (1, float(v), "")
    try:
        f = float(v)
        return (2, float("inf") if math.isnan(f) else f + 0.0, "nan" if math.isnan(f) else "")
    except (TypeError, ValueError):
        return (3, 0.0, str(v))


def exact_sum(values):
    """DuckDB's special values, else the correctly rounded sum (and whether fsum gave it)."""
    if any(math.isnan(v) for v in values):
        return float("nan"), True
    pos = any(v == math.inf for v in values)
    neg = any(v == -math.inf for v in values)
    if pos and neg:
        return float("nan"), True
    if pos or neg:
        return (math.inf if pos else -math.inf), True
    exact = sum((Fraction(v) for v in values), Fraction(0))
    try:
        rounded = float(exact)
    except OverflowError:
        rounded = math.inf if exact > 0 else -math.inf
    try:
        return rounded, same_double(math.fsum(values), rounded)
    except OverflowError:
        return rounded, None


def exact_average(values):
    special, _ = exact_sum(values)
    if math.isnan(special) or math.isinf(special) and not all(math.isfinite(v) for v in values):
        return special
    exact = sum((Fraction(v) for v in values), Fraction(0)) / len(values)
    return float(exact)


class Tally:
    def __init__(self):
        self.counts = {}
        self.failures = []
        self.notes = []

    def add(self, what, ok, detail=None):
        key = (what, "agree" if ok else "DISAGREE")
        self.counts[key] = self.counts.get(key, 0) + 1
        if not ok:
            self.failures.append(detail)

    def note(self, what):
        self.counts[(what, "note")] = self.counts.get((what, "note"), 0) + 1


def judge_aggregate(spec, duck, rnt_rows, types, con, tally, where):
    sql, table, column, grouped, kinds = spec
    data = con.execute("SELECT %s, %s FROM %s WHERE %s IS NOT NULL" % (
        "g" if grouped else "0", column, table, column)).fetchall()
    groups = {}
    for g, v in data:
        groups.setdefault(g, []).append(float(v))
    if not same_rows_shape(duck, rnt_rows):
        tally.add("aggregate rows", False, (where, sql, duck, rnt_rows))
        return
    by_key = {}
    for row in rnt_rows:
        by_key.setdefault(str(row[0]) if grouped else "", []).append(row)
    for drow in duck:
        key = str(drow[0]) if grouped else ""
        matches = by_key.get(key, [])
        if len(matches) != 1:
            tally.add("aggregate rows", False, (where, sql, drow, matches))
            continue
        rrow = matches[0]
        values = groups.get(drow[0] if grouped else 0, [])
        for kind, dv, rv, ty in zip(kinds, drow, rrow, types):
            judge_cell(kind, dv, rv, ty, values, tally, (where, sql, drow, rrow))


def same_rows_shape(duck, rnt_rows):
    return rnt_rows is not None and len(duck) == len(rnt_rows)


def judge_cell(kind, dv, rv, ty, values, tally, detail):
    if kind in ("sum", "avg") and values:
        if kind == "sum":
            expected, fsum_equal = exact_sum(values)
            if fsum_equal is True:
                tally.note("sum equal to math.fsum")
        else:
            expected = exact_average(values)
        tally.add(kind + " exact", rv is not None and same_double(expected, as_float(rv)),
                  detail + (("expected", expected),))
        close = dv is not None and (same_double(dv, expected) or (
            math.isfinite(dv) and math.isfinite(expected) and
            abs(dv - expected) <= 1e-12 * max(abs(expected), 1e-300)))
        if not close:
            tally.note(kind + ": DuckDB farther than 1e-12 from the exact value")
        return
    if kind in ("bagsum", "bagavg") and dv is not None and rv is not None:
        # Over a bag rnt sums x * count per distinct row (docs/sql.md): exact when no row
        # repeats, within 1e-12 of the exact value otherwise; DuckDB within 1e-12 too,
        # unless its running sum overflowed or cancelled.
        r = as_float(rv)
        exact = exact_sum(values)[0] if kind == "bagsum" else exact_average(values)
        near = lambda a, b: same_double(a, b) or (math.isfinite(a) and math.isfinite(b) and
                                                  abs(a - b) <= 1e-12 * max(abs(b), 1e-300))
        if same_double(r, exact):
            tally.add(kind + " exact", True)
        elif same_double(r, dv):
            # Both rounded the same way (a product or a running sum overflowed): the
            # documented limit of a bag's SUM/AVG, equal to DuckDB's answer.
            tally.add(kind + " equal to DuckDB, not exact (bag)", True)
        else:
            tally.add(kind + " within 1e-12 of the exact value", near(r, exact),
                      detail + (("exact", exact),))
        if not near(dv, exact):
            tally.note(kind + ": DuckDB farther than 1e-12 from the exact value")
        return
    tally.add(kind, same_value(dv, rv, ty), detail)


# ---------------------------------------------------------------- running

def run_case(binary, seed, index, tally):
    statements = make_case(seed, index)
    con = duckdb.connect()
    con.execute("SET threads = 1")
    workdir = tempfile.mkdtemp(prefix="rnt-doubles-")
    try:
        store = rntproc.new_store(binary, os.path.join(workdir, "s"))
        prompt = rntproc.Prompt(binary, store)
        views = {}
        for position, (kind, sql, spec) in enumerate(statements):
            where = "seed %d case %d statement %d" % (seed, index, position)
            duck_error = None
            duck = None
            types = []
            try:
                if kind not in ("view", "read"):
                    result = con.execute(sql)
                    if kind in ("query", "aggregate"):
                        types = [str(d[1]) for d in result.description]
                        duck = result.fetchall()
            except duckdb.Error as e:
                duck_error = str(e).splitlines()[0]
            if kind == "read":
                name, vspec = spec
                if name not in views:
                    continue
                duck_error = None
                result = con.execute(vspec[0])
                types = [str(d[1]) for d in result.description]
                duck = result.fetchall()
            outcome = prompt.run(sql)
            if duck_error is not None:
                tally.note("DuckDB error (not judged): " + duck_error[:60])
                continue
            if outcome.code not in (0,):
                tally.add(kind + " accepted", False, (where, sql, outcome.message()))
                continue
            if kind == "view":
                views[spec[0]] = True
                continue
            if kind in ("ddl", "dml"):
                tally.add(kind, True)
                continue
            rows = outcome.rows()
            aggregate = spec if kind == "aggregate" else (spec[1] if kind == "read" else None)
            if aggregate is not None and aggregate[4] is not None:
                judge_aggregate(aggregate, duck, rows, types, con, tally, where)
                continue
            ordered = "ORDER BY" in sql
            tally.add(kind, same_rows(duck, rows, ordered, types), (where, sql, duck, rows))
        prompt.close()
        verify = rntproc.subprocess.run([binary, "verify", "--store", store],
                                        capture_output=True, text=True)
        tally.add("verify", verify.returncode == 0, (seed, index, verify.stdout, verify.stderr))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rnt", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--show", type=int, default=5, help="disagreements to print")
    args = parser.parse_args()
    tally = Tally()
    for index in range(args.cases):
        run_case(args.rnt, args.seed, index, tally)
    if ZERO_SIGN:
        print("%-60s %-9s %6d" % ("an infinity's sign from a -0.0 (rnt keeps one zero)", "note",
                                  len(ZERO_SIGN)))
    judged = 0
    for (what, verdict), n in sorted(tally.counts.items()):
        print("%-60s %-9s %6d" % (what, verdict, n))
        if verdict != "note":
            judged += n
    print("judged: %d, disagreements: %d" % (judged, len(tally.failures)))
    for detail in tally.failures[:args.show]:
        print("DISAGREE:", detail)
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
