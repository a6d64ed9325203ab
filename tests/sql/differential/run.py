#!/usr/bin/env python3
"""The random differential test of rnt's SQL against DuckDB (README.md beside this file).

    python3 tests/sql/differential/run.py --rnt target/debug/rnt --seed 1 --cases 12
    python3 tests/sql/differential/run.py --rnt target/release/rnt --seed 7 --cases 300 --jobs 2 --show

Exit status: 0 when the counts of WRONG, INTERNAL and REFUSED are within baseline.txt's line
for this seed and number of cases (or, without such a line, when there is no WRONG and no
INTERNAL); 1 otherwise; 2 on a usage or setup error.
"""
import argparse
import collections
import decimal
import hashlib
import json
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ beside the harness

import gen  # noqa: E402
import rnt as rntproc  # noqa: E402

try:
    import duckdb
except ImportError:  # pragma: no cover
    sys.stderr.write("error: the python package duckdb is missing: run scripts/test-clients "
                     "(or pip install duckdb==2.0.1)\n")
    sys.exit(2)

BASELINE = os.path.join(HERE, "baseline.txt")
CLASSES = ["agree", "wrong", "refused", "internal", "duckdb_error", "skipped"]
KINDS = ["query", "view", "read", "dml", "ddl"]
NUMERIC = re.compile(r"^(DECIMAL|INTEGER|BIGINT|HUGEINT|SMALLINT|TINYINT|UBIGINT|UINTEGER|USMALLINT|"
                     r"UTINYINT|UHUGEINT|DOUBLE|FLOAT)")
# rnt errors at evaluation where DuckDB answers: a wrong answer, not a refusal.
EVALUATION_ERROR = re.compile(r"division by zero|overflow|out of range", re.I)


# ---------------------------------------------------------------- values

def canon_decimal(d):
    d = decimal.Decimal(d)
    if d == 0:
        return "0"
    return format(d.normalize(), "f")


def norm_duck(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return "n:%d" % v
    if isinstance(v, decimal.Decimal):
        return "n:" + canon_decimal(v)
    if isinstance(v, float):
        return "float:" + repr(v)
    if isinstance(v, str):
        return "s:" + v
    return "other:" + repr(v)


def norm_rnt(v, duck_type):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return "n:%d" % v
    if isinstance(v, float):
        return "n:" + canon_decimal(repr(v))
    if isinstance(v, str):
        if duck_type and NUMERIC.match(duck_type):
            try:
                return "n:" + canon_decimal(v)
            except decimal.InvalidOperation:
                return "s:" + v
        return "s:" + v
    return "other:" + json.dumps(v)


def sql_literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    raise ValueError(repr(v))


def show_row(row):
    return "(" + ", ".join(
        "NULL" if v == "NULL" else v.split(":", 1)[1] if v.startswith(("n:",)) else
        repr(v.split(":", 1)[1]) if v.startswith("s:") else v for v in row) + ")"


# ---------------------------------------------------------------- one statement on both

class Duck:
    def __init__(self):
        self.con = duckdb.connect()
        self.con.execute("SET threads TO 1")

    def query(self, sql):
        """(types, rows) or raises duckdb.Error."""
        rel = self.con.sql(sql)
        return [str(t) for t in rel.types], rel.fetchall()

    def table(self, name):
        return self.con.sql("SELECT * FROM %s" % name).fetchall()


def compare(duck_types, duck_rows, rnt_rows, ordered):
    """None when equal, else a short description of the difference."""
    if rnt_rows is None:
        return "rnt printed no answer"
    width = len(duck_types)
    if any(len(r) != width for r in rnt_rows):
        return "rnt's rows have %s columns, DuckDB's %d" % (sorted(set(len(r) for r in rnt_rows)), width)
    d = [tuple(norm_duck(v) for v in row) for row in duck_rows]
    r = [tuple(norm_rnt(v, duck_types[i]) for i, v in enumerate(row)) for row in rnt_rows]
    if ordered:
        if d == r:
            return None
        if collections.Counter(d) == collections.Counter(r):
            return "same rows in another order: DuckDB %s, rnt %s" % (
                " ".join(show_row(x) for x in d[:8]), " ".join(show_row(x) for x in r[:8]))
    elif collections.Counter(d) == collections.Counter(r):
        return None
    dc, rc = collections.Counter(d), collections.Counter(r)
    only_d = list((dc - rc).elements())
    only_r = list((rc - dc).elements())
    return "%d rows from DuckDB, %d from rnt; only DuckDB's: %s%s; only rnt's: %s%s" % (
        len(d), len(r), " ".join(show_row(x) for x in only_d[:6]), " …" if len(only_d) > 6 else "",
        " ".join(show_row(x) for x in only_r[:6]), " …" if len(only_r) > 6 else "")


class Record:
    """The verdict on one statement."""

    def __init__(self, case, position, stmt, cls, detail="", repro=None):
        self.case = case
        self.position = position
        self.kind = stmt.kind
        self.tags = list(stmt.tags)
        self.cls = cls
        self.detail = detail
        self.rnt = stmt.rnt
        self.duck = stmt.duck
        self.ordered = stmt.ordered
        self.repro = repro  # (setup statements, final statement) with --show

    def reason(self):
        """The refusal or error, its specifics blurred, to group by."""
        text = self.detail.split("\n")[0]
        text = re.sub(r"`[^`]*`", "`…`", text)
        text = re.sub(r"\b[tvxsw]\d+\b|\bc\d+\b", "…", text)
        text = re.sub(r"\d+", "N", text)
        return text[:110]


def classify_error(outcome):
    """A failed rnt outcome's class and detail (DuckDB answered)."""
    if outcome.code is None:
        return "internal", "timeout: " + outcome.message()
    if outcome.code == 3:
        return "internal", "exit 3 (the store reads as damaged): " + outcome.message()
    if outcome.code == 70 or outcome.code not in (1, 2):
        return "internal", "exit %s: %s" % (outcome.code, outcome.message())
    message = outcome.message()
    if outcome.code == 2:
        return "wrong", "rnt refused with a constraint violation (exit 2) where DuckDB succeeds: " + message
    if EVALUATION_ERROR.search(message) and "not supported" not in message:
        return "wrong", "rnt failed at evaluation (exit 1) where DuckDB answers: " + message
    return "refused", message


class Broken(Exception):
    """The store stopped answering after a statement (rnt.Outcome.broken)."""


class Guard:
    """An rnt driver whose outcomes raise Broken when the store stopped answering."""

    def __init__(self, driver):
        self.driver = driver

    @property
    def starts(self):
        return self.driver.starts

    def run(self, sql):
        outcome = self.driver.run(sql)
        if outcome.broken:
            raise Broken(outcome.broken.split("\n")[0])
        return outcome

    def close(self):
        self.driver.close()


class CaseRun:
    """Runs one case's statements on DuckDB and rnt, statement by statement."""

    def __init__(self, case, binary, workdir, per_statement=False, keep=False, timeout=120.0):
        self.case = case
        self.duck = Duck()
        store = rntproc.new_store(binary, workdir)
        driver = rntproc.PerStatement if per_statement else rntproc.Prompt
        self.rnt = Guard(driver(binary, store, timeout))
        self.keep = keep  # keep what a reproduction needs
        self.records = []
        self.views = {}  # name -> live in both
        self.view_setup = {}  # name -> (snapshot, statements since), with keep
        self.history = []  # statements accepted by both, in order (for reproductions)
        self.tables = {t.name: t for t in case.tables}
        self.aborted = None

    # -- reproductions
    def snapshot(self):
        """The data now (DuckDB's, which rnt's equals) as INSERT statements."""
        out = []
        for t in self.case.tables:
            try:
                rows = self.duck.table(t.name)
            except duckdb.Error:
                continue  # not created yet
            if rows:
                out.append(("INSERT INTO %s VALUES %s" % (
                    t.name, ", ".join("(" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows))))
        return out

    def ddl(self):
        return [t.ddl() for t in self.case.tables]

    def repro_for(self, stmt, before_data):
        if not self.keep:
            return None
        setup = [(s, s) for s in self.ddl()] + [(s, s) for s in before_data]
        if stmt.kind == "read":
            name = stmt.view
            snap, since = self.view_setup.get(name, ([], []))
            return {"setup": [(s, s) for s in self.ddl()] + [(s, s) for s in snap] + since,
                    "final": (stmt.rnt, stmt.duck, stmt.kind, stmt.ordered, stmt.table, stmt.view),
                    "now": [(s, s) for s in self.ddl()] + [(s, s) for s in before_data]}
        if stmt.kind == "dml":
            views = [v for v in self.views.values() if v]
            return {"setup": setup + views, "final": (stmt.rnt, stmt.duck, stmt.kind, stmt.ordered, stmt.table, None)}
        return {"setup": setup, "final": (stmt.rnt, stmt.duck, stmt.kind, stmt.ordered, stmt.table, stmt.view)}

    def record(self, position, stmt, cls, detail="", before=None):
        repro = self.repro_for(stmt, before or []) if cls in ("wrong", "internal", "refused") else None
        self.records.append(Record(self.case.index, position, stmt, cls, detail, repro))

    # -- statements
    def run(self):
        try:
            for position, stmt in enumerate(self.case.statements):
                if self.aborted:
                    self.records.append(Record(self.case.index, position, stmt, "skipped", self.aborted))
                    continue
                before = self.snapshot() if self.keep else []
                try:
                    getattr(self, "run_" + stmt.kind)(position, stmt)
                except Broken as e:
                    # This statement left a store that answers nothing: INTERNAL, and the end
                    # of the case (later statements would all fail).
                    if self.records and self.records[-1].position == position:
                        self.records.pop()
                    self.record(position, stmt, "internal",
                                "after this statement rnt answers nothing on the store: %s" % e, before)
                    self.aborted = "the store stopped answering at statement %d" % position
        finally:
            self.rnt.close()
        return self.records

    def run_ddl(self, position, stmt):
        try:
            self.duck.con.execute(stmt.duck)
        except duckdb.Error as e:
            self.record(position, stmt, "duckdb_error", str(e).split("\n")[0])
            self.aborted = "the schema failed in DuckDB"
            return
        outcome = self.rnt.run(stmt.rnt)
        if outcome.code != 0:
            cls, detail = classify_error(outcome)
            self.record(position, stmt, cls, detail)
            self.aborted = "the schema failed in rnt"
            return
        self.record(position, stmt, "agree")

    def answer(self, stmt):
        """(class, detail) of a query on both."""
        try:
            types, rows = self.duck.query(stmt.duck)
        except duckdb.Error as e:
            return "duckdb_error", str(e).split("\n")[0]
        outcome = self.rnt.run(stmt.rnt)
        if outcome.code != 0:
            return classify_error(outcome)
        try:
            got = outcome.rows()
        except ValueError:
            return "wrong", "rnt printed what is not an answer: " + outcome.out[:200]
        diff = compare(types, rows, got, stmt.ordered)
        if diff:
            return "wrong", diff
        return "agree", ""

    def run_query(self, position, stmt):
        before = self.snapshot() if self.keep else []
        cls, detail = self.answer(stmt)
        self.record(position, stmt, cls, detail, before)

    def run_read(self, position, stmt):
        if not self.views.get(stmt.view):
            return  # the view was not made on both: nothing to read
        before = self.snapshot() if self.keep else []
        cls, detail = self.answer(stmt)
        self.record(position, stmt, cls, detail, before)

    def run_view(self, position, stmt):
        before = self.snapshot() if self.keep else []
        duck_sql = re.sub(r"^CREATE MATERIALIZED VIEW", "CREATE VIEW", stmt.duck)
        try:
            self.duck.con.execute(duck_sql)
            # A view whose SELECT fails when read is DuckDB's error too.
            self.duck.query("SELECT * FROM %s" % stmt.view)
        except duckdb.Error as e:
            self.record(position, stmt, "duckdb_error", str(e).split("\n")[0])
            self.views[stmt.view] = None
            return
        outcome = self.rnt.run(stmt.rnt)
        if outcome.code != 0:
            cls, detail = classify_error(outcome)
            self.record(position, stmt, cls, detail, before)
            self.views[stmt.view] = None
            return
        self.views[stmt.view] = (stmt.rnt, duck_sql)
        if self.keep:
            self.view_setup[stmt.view] = (before, [(stmt.rnt, duck_sql)])
        self.record(position, stmt, "agree")

    def table_differs(self, name):
        """Compares a table on both; the difference or None."""
        rows = self.duck.table(name)
        types = [str(t) for t in self.duck.con.sql("SELECT * FROM %s" % name).types]
        outcome = self.rnt.run("SELECT * FROM %s" % name)
        if outcome.code != 0:
            return "reading %s failed in rnt: %s" % (name, outcome.message())
        return compare(types, rows, outcome.rows(), False)

    def valid_choice(self, name, choices):
        """Whether rnt's table is t's rows before and, for each key the SELECT proposed
        that t did not hold, exactly one of the rows proposed with it (`insert_choices`)."""
        key, before_rows, proposed = choices
        types = [str(t) for t in self.duck.con.sql("SELECT * FROM %s" % name).types]
        outcome = self.rnt.run("SELECT * FROM %s" % name)
        if outcome.code != 0 or outcome.rows() is None:
            return False
        norm = lambda row: tuple(norm_duck(v) for v in row)  # noqa: E731
        before = collections.Counter(norm(r) for r in before_rows)
        after = collections.Counter(
            tuple(norm_rnt(v, types[i]) for i, v in enumerate(r)) for r in outcome.rows())
        if before - after:
            return False
        key_of = lambda row: tuple(row[i] for i in key)  # noqa: E731
        candidates = set(norm(r) for r in proposed)
        new = list((after - before).elements())
        wanted = sorted(set(key_of(r) for r in candidates) - set(key_of(r) for r in before))
        return sorted(key_of(r) for r in new) == wanted and all(r in candidates for r in new)

    def resync(self, name):
        """Makes rnt's table equal DuckDB's (after a wrong DML), or ends the case."""
        rows = self.duck.table(name)
        steps = ["DELETE FROM %s" % name]
        if rows:
            steps.append("INSERT INTO %s VALUES %s" % (
                name, ", ".join("(" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows)))
        for step in steps:
            outcome = self.rnt.run(step)
            if outcome.code != 0:
                self.aborted = "re-synchronising %s after a wrong DML failed in rnt: %s" % (name, outcome.message())
                return
        if self.table_differs(name):
            self.aborted = "re-synchronising %s after a wrong DML left it different" % name
        # The views' reproductions no longer start from one state: drop them.
        for view in self.view_setup:
            self.view_setup[view] = (self.view_setup[view][0], self.view_setup[view][1] + [("-- resync", "-- resync")])

    def insert_choices(self, stmt):
        """For `INSERT INTO t SELECT … ON CONFLICT DO NOTHING` into a keyed table: t's rows
        and the rows the SELECT proposes (in t's column types), read in DuckDB before the
        statement runs; else None. When the SELECT proposes one key twice, which of its rows
        is inserted is the SELECT's row order, which SQL leaves open (DuckDB takes its scan
        order, rnt its rows' order): any of them is right (`valid_choice`)."""
        m = re.match(r"^INSERT INTO (\w+) (SELECT .*) ON CONFLICT DO NOTHING$", stmt.duck, re.S)
        table = self.tables.get(m.group(1)) if m else None
        if table is None or not table.key:
            return None
        con = self.duck.con
        try:
            con.execute("CREATE TEMP TABLE rnt_diff_proposed AS SELECT * FROM %s LIMIT 0" % table.name)
            try:
                con.execute("INSERT INTO rnt_diff_proposed %s" % m.group(2))
                proposed = con.sql("SELECT * FROM rnt_diff_proposed").fetchall()
            finally:
                con.execute("DROP TABLE rnt_diff_proposed")
        except duckdb.Error:
            return None
        key = [i for i, c in enumerate(table.columns) if c.name in table.key]
        return key, self.duck.table(table.name), proposed

    def run_dml(self, position, stmt):
        before = self.snapshot() if self.keep else []
        con = self.duck.con
        choices = self.insert_choices(stmt)
        con.begin()
        duck_error = None
        try:
            con.execute(stmt.duck)
        except duckdb.ConstraintException as e:
            duck_error = ("constraint", str(e).split("\n")[0])
        except duckdb.Error as e:
            duck_error = ("error", str(e).split("\n")[0])
        if duck_error:
            con.rollback()
            if duck_error[0] != "constraint":
                self.record(position, stmt, "duckdb_error", duck_error[1])
                return
            # DuckDB refuses the statement by a constraint: rnt must refuse it too.
            outcome = self.rnt.run(stmt.rnt)
            if outcome.code == 0:
                self.record(position, stmt, "wrong", "rnt accepted what DuckDB refuses (%s)" % duck_error[1], before)
                self.resync(stmt.table)
            elif outcome.code in (1, 2):
                self.record(position, stmt, "agree", "both refuse")
            else:
                cls, detail = classify_error(outcome)
                self.record(position, stmt, cls, detail, before)
                if self.table_differs(stmt.table):
                    self.resync(stmt.table)
            return
        outcome = self.rnt.run(stmt.rnt)
        if outcome.code == 0:
            con.commit()
            diff = self.table_differs(stmt.table)
            if diff and choices and self.valid_choice(stmt.table, choices):
                # Another of the rows SQL leaves to choose from: right, and DuckDB's table
                # taken so that both go on from one state.
                self.record(position, stmt, "agree", "another choice of a repeated key's row")
                self.resync(stmt.table)
            elif diff:
                self.record(position, stmt, "wrong", "%s afterwards: %s" % (stmt.table, diff), before)
                self.resync(stmt.table)
            else:
                self.record(position, stmt, "agree")
                if self.keep:
                    for view in self.view_setup:
                        self.view_setup[view][1].append((stmt.rnt, stmt.duck))
            return
        con.rollback()
        cls, detail = classify_error(outcome)
        if cls == "wrong" and choices and null_choice(self.tables[stmt.table], choices, outcome):
            cls, detail = "agree", "another choice of a repeated key's row (one with a null)"
        self.record(position, stmt, cls, detail, before)
        diff = self.table_differs(stmt.table)
        if diff:
            self.resync(stmt.table)


def null_choice(table, choices, outcome):
    """Whether rnt's NOT NULL refusal of an INSERT … SELECT … ON CONFLICT DO NOTHING is the
    outcome of some order of the SELECT's rows: a key t does not hold was proposed with a
    row holding a null in the column named (`insert_choices`)."""
    m = re.search(r'null value in column "(\w+)"', outcome.message())
    names = [c.name for c in table.columns]
    if not m or m.group(1) not in names:
        return False
    key, before_rows, proposed = choices
    column = names.index(m.group(1))
    held = set(tuple(r[i] for i in key) for r in before_rows)
    return any(r[column] is None and tuple(r[i] for i in key) not in held for r in proposed)


def run_case(args):
    seed, index, binary, root, per_statement, keep = args
    case = gen.make_case(seed, index)
    workdir = tempfile.mkdtemp(prefix="case%d-" % index, dir=root)
    try:
        started = time.monotonic()
        run = CaseRun(case, binary, workdir, per_statement, keep)
        records = run.run()
        return index, records, time.monotonic() - started, run.rnt.starts
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# ---------------------------------------------------------------- reproductions

def check_repro(binary, root, setup, final):
    """Runs setup statements then the final one on fresh DuckDB and rnt; the final's
    (class, detail), or None when the setup itself does not agree."""
    workdir = tempfile.mkdtemp(prefix="repro-", dir=root)
    duck = Duck()
    store = rntproc.new_store(binary, workdir)
    prompt = Guard(rntproc.Prompt(binary, store, 60.0))
    try:
        return check_steps(duck, prompt, setup, final)
    except Broken as e:
        return "internal", "after this statement rnt answers nothing on the store: %s" % e
    finally:
        prompt.close()
        shutil.rmtree(workdir, ignore_errors=True)


def check_steps(duck, prompt, setup, final):
    for rnt_sql, duck_sql in setup:
        if rnt_sql.startswith("--"):
            return None
        try:
            duck.con.execute(duck_sql)
            ok = True
        except duckdb.Error:
            ok = False
        try:
            outcome = prompt.run(rnt_sql)
        except Broken:
            return None
        if ok != (outcome.code == 0):
            return None
    rnt_sql, duck_sql, kind, ordered, table, view = final
    stmt = gen.Statement(kind, "", ordered=ordered, table=table, view=view)
    stmt.rnt, stmt.duck = rnt_sql, duck_sql
    if kind in ("query", "read"):
        try:
            types, rows = duck.query(duck_sql)
        except duckdb.Error as e:
            return "duckdb_error", str(e)
        outcome = prompt.run(rnt_sql)
        if outcome.code != 0:
            return classify_error(outcome)
        diff = compare(types, rows, outcome.rows(), ordered)
        return ("wrong", diff) if diff else ("agree", "")
    if kind == "view":
        outcome = prompt.run(rnt_sql)
        return classify_error(outcome) if outcome.code != 0 else ("agree", "")
    # dml
    try:
        duck.con.execute(duck_sql)
        duck_ok = True
    except duckdb.Error:
        duck_ok = False
    outcome = prompt.run(rnt_sql)
    if outcome.code != 0:
        if not duck_ok:
            return "agree", ""
        return classify_error(outcome)
    if not duck_ok:
        return "wrong", "rnt accepted a statement DuckDB refuses"
    types = [str(t) for t in duck.con.sql("SELECT * FROM %s" % table).types]
    rows = duck.table(table)
    got = prompt.run("SELECT * FROM %s" % table)
    diff = compare(types, rows, got.rows(), False)
    return ("wrong", "%s afterwards: %s" % (table, diff)) if diff else ("agree", "")


def split_rows(statement):
    """An INSERT … VALUES statement's rows as a list, or None."""
    m = re.match(r"^(INSERT INTO \w+ VALUES )(.*)$", statement)
    if not m:
        return None
    rows, depth, start, in_str = [], 0, 0, False
    body = m.group(2)
    i = 0
    while i < len(body):
        ch = body[i]
        if in_str:
            if ch == "'" and i + 1 < len(body) and body[i + 1] == "'":
                i += 1
            elif ch == "'":
                in_str = False
        elif ch == "'":
            in_str = True
        elif ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                rows.append(body[start:i + 1])
        i += 1
    return m.group(1), rows


def minimise(binary, root, record, budget=80):
    """The smallest setup (views, DML, rows, tables) that still gives the record's class,
    by dropping one piece at a time while the class stays (at most `budget` fresh runs)."""
    want = record.cls
    repro = record.repro
    tries = [0]

    def same(setup, final):
        if tries[0] >= budget:
            return False
        tries[0] += 1
        got = check_repro(binary, root, setup, final)
        return got is not None and got[0] == want

    final = repro["final"]
    setup = list(repro["setup"])
    note = ""
    if record.kind == "read":
        # Is the view's SELECT, run as a query on the data at the read, wrong already?
        select = duck_select = None
        for rnt_sql, duck_sql in setup:
            if rnt_sql.startswith("CREATE MATERIALIZED VIEW %s " % final[5]):
                select = re.sub(r"^CREATE MATERIALIZED VIEW \w+ AS ", "", rnt_sql)
                duck_select = re.sub(r"^CREATE VIEW \w+ AS ", "", duck_sql)
        as_query = (select, duck_select, "query", False, None, None)
        if select and same(repro["now"], as_query):
            setup, final = list(repro["now"]), as_query
            note = "the view's SELECT, run as a query on the data at the read, gives the same class"
        elif not same(setup, final):
            return None, "not reproduced from the view's creation (a re-synchronisation came between)"
    elif not same(setup, final):
        return None, "not reproduced in a fresh store"
    changed = True
    while changed and tries[0] < budget:
        changed = False
        # Whole statements (not CREATE TABLE), last first.
        for i in range(len(setup) - 1, -1, -1):
            if i >= len(setup) or setup[i][0].startswith("CREATE TABLE"):
                continue
            trial = setup[:i] + setup[i + 1:]
            if same(trial, final):
                setup, changed = trial, True
        # Rows of each INSERT … VALUES.
        i = 0
        while i < len(setup) and tries[0] < budget:
            parts = split_rows(setup[i][0])
            if parts and len(parts[1]) > 1:
                head, rows = parts
                j = len(rows) - 1
                while j >= 0 and len(rows) > 1 and tries[0] < budget:
                    keep = rows[:j] + rows[j + 1:]
                    text = head + ", ".join(keep)
                    trial = setup[:i] + [(text, text)] + setup[i + 1:]
                    if same(trial, final):
                        setup, rows, changed = trial, keep, True
                    j -= 1
            i += 1
    # Tables nothing after them names.
    for i in range(len(setup) - 1, -1, -1):
        name = re.match(r"CREATE TABLE (\w+)", setup[i][0])
        if name and not any(re.search(r"\b%s\b" % name.group(1), s[0]) for s in setup[i + 1:] + [final]):
            trial = setup[:i] + setup[i + 1:]
            if tries[0] < budget + 10 and check_repro(binary, root, trial, final) is not None:
                setup = trial
    return (setup, final), note


# ---------------------------------------------------------------- summary and baseline

def fingerprint(seed, cases):
    h = hashlib.sha256()
    for i in range(cases):
        for s in gen.make_case(seed, i).statements:
            h.update(s.rnt.encode())
            h.update(b"\0")
    return h.hexdigest()[:16]


def read_baseline():
    lines = {}
    if os.path.exists(BASELINE):
        for line in open(BASELINE):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = dict(f.split("=", 1) for f in line.split())
            lines[(int(fields["seed"]), int(fields["cases"]))] = fields
    return lines


BASELINE_HEAD = [
    "# The differential test's counts (tests/sql/differential/run.py, README.md): for a seed",
    "# and a number of cases, the statements rnt answered wrongly, failed on internally, and",
    "# refused, and the generator's fingerprint (a hash of every generated statement).",
    "# A run fails when wrong, internal or refused rises above its line; --bless rewrites",
    "# the line of the run's seed and size when none rose (or the generator changed).",
]


def write_baseline(entries):
    """Writes the lines; comments other than the standard head are kept."""
    head = list(BASELINE_HEAD)
    if os.path.exists(BASELINE):
        head += [l.rstrip("\n") for l in open(BASELINE) if l.startswith("#") and l.rstrip("\n") not in BASELINE_HEAD]
    body = []
    for (seed, cases), f in sorted(entries.items()):
        body.append("seed=%d cases=%d fingerprint=%s wrong=%s internal=%s refused=%s agree=%s duckdb_error=%s" % (
            seed, cases, f["fingerprint"], f["wrong"], f["internal"], f["refused"], f["agree"], f["duckdb_error"]))
    with open(BASELINE, "w") as out:
        out.write("\n".join(head + body) + "\n")


def summarise(records, seed, cases, print_):
    by_kind = collections.defaultdict(collections.Counter)
    total = collections.Counter()
    for r in records:
        by_kind[r.kind][r.cls] += 1
        total[r.cls] += 1
    print_("%-13s %s %7s" % ("", " ".join("%7s" % k for k in KINDS), "total"))
    for cls in CLASSES:
        print_("%-13s %s %7d" % (cls, " ".join("%7d" % by_kind[k][cls] for k in KINDS), total[cls]))
    compared = lambda kind: by_kind[kind]["agree"] + by_kind[kind]["wrong"]
    print_("queries answered by both and compared: %d; materialized views made on both: %d, read and "
           "compared %d times; DML statements run on both: %d" % (
               compared("query"), by_kind["view"]["agree"], compared("read"),
               sum(by_kind["dml"][c] for c in ("agree", "wrong", "refused", "internal"))))
    return total


def per_construct(records, print_):
    tags = collections.defaultdict(collections.Counter)
    for r in records:
        for t in r.tags + ["kind:" + r.kind]:
            tags[t][r.cls] += 1
    print_("per construct (statements whose SQL holds it):")
    print_("  %-32s %6s %6s %6s %6s %6s %6s" % ("construct", "agree", "wrong", "refuse", "intern", "duckdb", "total"))
    for t in sorted(tags):
        c = tags[t]
        print_("  %-32s %6d %6d %6d %6d %6d %6d" % (t, c["agree"], c["wrong"], c["refused"], c["internal"],
                                                   c["duckdb_error"], sum(c.values())))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rnt", required=True, help="the rnt binary")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=12)
    ap.add_argument("--first", type=int, default=0, help="the first case's index (to rerun one case)")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once")
    ap.add_argument("--show", action="store_true", help="print each WRONG, INTERNAL and REFUSED example, minimised")
    ap.add_argument("--show-limit", type=int, default=0,
                    help="WRONG and INTERNAL examples shown per kind and message (with --show; 0: all)")
    ap.add_argument("--bless", action="store_true", help="rewrite baseline.txt's line when no count rose")
    ap.add_argument("--per-statement", action="store_true", help="one rnt process per statement (slow)")
    ap.add_argument("--dump", metavar="SEED:INDEX", help="print a case's statements and exit")
    args = ap.parse_args()

    if args.dump:
        seed, index = (int(x) for x in args.dump.split(":"))
        for s in gen.make_case(seed, index).statements:
            print("-- %s %s" % (s.kind, " ".join(s.tags)))
            print(s.rnt + ";")
            if s.duck != s.rnt:
                print("-- DuckDB: %s;" % s.duck)
        return 0
    binary = os.path.abspath(args.rnt)
    if not os.access(binary, os.X_OK):
        sys.stderr.write("error: %s is not an executable\n" % binary)
        return 2
    started = time.monotonic()
    root = tempfile.mkdtemp(prefix="rnt-differential-")
    work = [(args.seed, i, binary, root, args.per_statement, args.show)
            for i in range(args.first, args.first + args.cases)]
    results = []
    try:
        if args.jobs > 1:
            with multiprocessing.Pool(args.jobs) as pool:
                for item in pool.imap_unordered(run_case, work):
                    results.append(item)
        else:
            for w in work:
                results.append(run_case(w))
        results.sort(key=lambda x: x[0])
        records = [r for _, recs, _, _ in results for r in recs]
        elapsed = time.monotonic() - started
        fp = fingerprint(args.seed, args.cases) if args.first == 0 else "-"
        lines = []
        print_ = lines.append
        print_("rnt SQL against DuckDB %s: seed %d, %d cases (%d..%d), %d statements, %.1f s, "
               "rnt processes started: %d, fingerprint %s" % (
                   duckdb.__version__, args.seed, args.cases, args.first, args.first + args.cases - 1,
                   len(records), elapsed, sum(x[3] for x in results), fp))
        total = summarise(records, args.seed, args.cases, print_)
        per_construct(records, print_)
        # Causes: WRONG and INTERNAL by construct set, REFUSED by message.
        bad = [r for r in records if r.cls in ("wrong", "internal")]
        if bad:
            print_("WRONG and INTERNAL (case.statement kind: detail):")
            for r in bad:
                print_("  %s %d.%d %s: %s" % (r.cls.upper(), r.case, r.position, r.kind, r.detail[:300]))
                print_("      %s" % r.rnt[:400])
        refused = collections.Counter(r.reason() for r in records if r.cls == "refused")
        if refused:
            print_("REFUSED, by message:")
            for reason, n in refused.most_common():
                print_("  %5d  %s" % (n, reason))
        errors = collections.Counter(r.reason() for r in records if r.cls == "duckdb_error")
        if errors:
            print_("DUCKDB_ERROR (skipped for both), by message:")
            for reason, n in errors.most_common(8):
                print_("  %5d  %s" % (n, reason))
        print("\n".join(lines))
        sys.stdout.flush()
        if args.show:
            show(binary, root, records, args.show_limit)
        # The baseline.
        counts = {"fingerprint": fp, "wrong": total["wrong"], "internal": total["internal"],
                  "refused": total["refused"], "agree": total["agree"], "duckdb_error": total["duckdb_error"]}
        baseline = read_baseline()
        key = (args.seed, args.cases)
        line = baseline.get(key) if args.first == 0 else None
        status = 0
        if line is None:
            if total["wrong"] or total["internal"]:
                print("FAIL: %d WRONG and %d INTERNAL (baseline.txt has no line for seed %d, %d cases)" % (
                    total["wrong"], total["internal"], args.seed, args.cases))
                status = 1
            else:
                print("ok: no WRONG and no INTERNAL")
        elif line["fingerprint"] != fp:
            print("FAIL: the generator changed (fingerprint %s, baseline.txt has %s): run with --bless "
                  "to record this generator's counts" % (fp, line["fingerprint"]))
            status = 1
        else:
            worse = [k for k in ("wrong", "internal", "refused") if counts[k] > int(line[k])]
            better = [k for k in ("wrong", "internal", "refused") if counts[k] < int(line[k])]
            # A wrong answer or an internal error that became a refusal is an improvement:
            # refusals may rise by as many as wrong and internal fell.
            fell = sum(int(line[k]) - counts[k] for k in ("wrong", "internal"))
            if worse == ["refused"] and counts["refused"] - int(line["refused"]) <= fell:
                worse = []
                better.append("wrong or internal became refused")
            if worse:
                print("FAIL: more than baseline.txt allows: %s" % ", ".join(
                    "%s %d > %s" % (k, counts[k], line[k]) for k in worse))
                status = 1
            else:
                print("ok: within baseline.txt (wrong %d/%s, internal %d/%s, refused %d/%s)%s" % (
                    counts["wrong"], line["wrong"], counts["internal"], line["internal"], counts["refused"],
                    line["refused"], "; improved: " + ", ".join(better) + " (--bless records it)" if better else ""))
        if args.bless and args.first == 0:
            if status == 0 or (line is not None and line["fingerprint"] != fp) or (line is None):
                baseline[key] = {k: str(v) for k, v in counts.items()}
                write_baseline(baseline)
                print("blessed: baseline.txt's line for seed %d, %d cases rewritten" % key)
                status = 0
            else:
                print("not blessed: a count rose")
        return status
    finally:
        shutil.rmtree(root, ignore_errors=True)


def show(binary, root, records, limit):
    """Each WRONG, INTERNAL and REFUSED example, minimised, as text to paste into `rnt sql`."""
    groups = collections.OrderedDict()
    seen_views = set()
    for r in records:
        if r.cls not in ("wrong", "internal", "refused") or r.repro is None:
            continue
        if r.kind == "read":
            # A view found wrong once is shown once, not at each later read.
            view = (r.case, r.rnt)
            if view in seen_views:
                continue
            seen_views.add(view)
        key = (r.cls, r.reason() if r.cls == "refused" else r.kind + ":" + r.reason()[:40])
        groups.setdefault(key, []).append(r)
    print("\n==== examples (--show): %d distinct causes" % len(groups))
    for (cls, reason), rs in groups.items():
        for r in rs[:(limit or len(rs)) if cls != "refused" else 1]:
            print("\n---- %s, case %d statement %d (%s; %s)" % (cls.upper(), r.case, r.position, r.kind, " ".join(r.tags)))
            print("-- " + r.detail[:600].replace("\n", "\n-- "))
            if cls == "refused":
                result, note = (r.repro["setup"][:len([s for s in r.repro["setup"] if s[0].startswith("CREATE TABLE")])],
                                r.repro["final"]), ""
            else:
                result, note = minimise(binary, root, r)
            if result is None:
                print("-- (%s; the statement as run:)" % note)
                print(r.rnt + ";")
                continue
            setup, final = result
            got = check_repro(binary, root, setup, final)
            if note:
                print("-- " + note)
            print("-- reproduced in a fresh store: %s%s" % (got[0] if got else "no", (": " + got[1][:300]) if got and got[1] else ""))
            for rnt_sql, duck_sql in setup:
                print(rnt_sql + ";")
            print(final[0] + ";")
            if final[1] != final[0] and not final[1].startswith("CREATE VIEW"):
                print("-- DuckDB runs: %s;" % final[1])
        sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
