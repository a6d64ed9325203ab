"""Random cases for the differential test of rnt's SQL against DuckDB (README.md).

A case is a random schema (2-4 tables, keyed and keyless, nullable columns), random rows
drawn from small domains (so that joins match and duplicate rows occur), and a sequence of
statements: queries, materialized views declared before the data changes and read after
each DML batch, and DML. `make_case(seed, index)` is deterministic: it depends on nothing
but its arguments (never on what either system answered).

Each statement is written twice, for rnt and for DuckDB, which differ in one place only:
`avg` of an int or decimal is rnt's `decimal(38, 6)` truncated toward zero (docs/sql.md,
"Semantics"); DuckDB's `avg` is a double, so DuckDB is given the exact expression of that
value instead (`avg_oracle`), and the two are compared exactly.
"""
import random
import re

# Columns a table may have: (name, SQL type, class). A name means one type in every
# table, so that equal names join and USING works.
POOL = [
    ("a", "INT", "int"),
    ("b", "INT", "int"),
    ("c", "TEXT", "text"),
    ("d", "DECIMAL(6, 2)", "dec"),
    ("e", "BOOLEAN", "bool"),
    ("f", "BIGINT", "int"),
    ("g", "TEXT", "text"),
    ("h", "DECIMAL(8, 1)", "dec"),
    ("col0", "INT", "int"),
]
SCALE = {"d": 2, "h": 1}
INT_VALUES = [0, 1, 1, 2, 2, 3, 4, -1]
BIGINT_VALUES = [0, 1, 2, 2, 3, 5, 10000000000]
KEY_VALUES = list(range(0, 12))
TEXT_VALUES = ["a", "b", "c", "ab", "bc", "b", ""]
DEC_VALUES = ["0", "0.5", "1", "1.25", "2.5", "-1.5", "3", "1"]
AVG_MARK = re.compile(r"\x01AVG\{(.*?)\}AVG\x02")


def avg_call(arg):
    """An avg call, rendered per system by `render`."""
    return "\x01AVG{%s}AVG\x02" % arg


def avg_oracle(arg):
    """rnt's avg in DuckDB: the exact mean as a decimal(38, 6) truncated toward zero."""
    return (
        "(CAST(CAST(sum(CAST({e} AS DECIMAL(30, 6))) * 1000000 AS HUGEINT) // count({e})"
        " AS DECIMAL(31, 0)) * 0.000001)"
    ).format(e=arg)


def render(sql, system):
    if system == "rnt":
        return AVG_MARK.sub(lambda m: "avg(%s)" % m.group(1), sql)
    return AVG_MARK.sub(lambda m: avg_oracle(m.group(1)), sql)


class Column:
    def __init__(self, name, sqltype, cls, nullable, key=False):
        self.name, self.sqltype, self.cls, self.nullable, self.key = name, sqltype, cls, nullable, key


class Table:
    def __init__(self, name, columns, key):
        self.name, self.columns, self.key = name, columns, key  # key: list of names, [] for a bag

    def ddl(self):
        parts = []
        for c in self.columns:
            text = "%s %s" % (c.name, c.sqltype)
            if not c.nullable and c.name not in self.key:
                text += " NOT NULL"
            parts.append(text)
        if self.key:
            parts.append("PRIMARY KEY (%s)" % ", ".join(self.key))
        return "CREATE TABLE %s (%s)" % (self.name, ", ".join(parts))


class Item:
    """A column in scope: `sql` reads it, `cls` its class, `nullable` whether it may be null."""

    def __init__(self, sql, cls, nullable, name=None, source=None):
        self.sql, self.cls, self.nullable, self.name, self.source = sql, cls, nullable, name, source


class Statement:
    """One statement of a case. kind: ddl, dml, query, view (CREATE MATERIALIZED VIEW),
    read (SELECT * FROM a view). `ordered`: the answer's order is decided by its ORDER BY."""

    def __init__(self, kind, sql, tags=(), ordered=False, view=None, table=None):
        self.kind = kind
        self.rnt = render(sql, "rnt")
        self.duck = render(sql, "duck")
        self.tags = sorted(set(tags))
        self.ordered = ordered
        self.view = view
        self.table = table


class Case:
    def __init__(self, seed, index, tables, statements):
        self.seed, self.index, self.tables, self.statements = seed, index, tables, statements


def literal(rng, cls, column=None, null=0.0):
    if null and rng.random() < null:
        return "NULL"
    if cls == "int":
        if column is not None and column.key:
            return str(rng.choice(KEY_VALUES))
        if column is not None and column.sqltype == "BIGINT":
            return str(rng.choice(BIGINT_VALUES))
        return str(rng.choice(INT_VALUES))
    if cls == "text":
        return "'%s'" % rng.choice(TEXT_VALUES)
    if cls == "bool":
        return rng.choice(["TRUE", "FALSE"])
    scale = SCALE.get(column.name, 2) if column is not None else rng.choice([1, 2])
    value = rng.choice([v for v in DEC_VALUES if len(v.partition(".")[2]) <= scale])
    if "." not in value:
        value += "." + "0" * scale
    else:
        whole, frac = value.split(".")
        value = whole + "." + (frac + "00")[:max(scale, len(frac))]
    return value


def row_literal(rng, table, wide_keys=False):
    values = []
    for c in table.columns:
        if c.key and wide_keys:
            values.append(str(rng.randint(0, 29)))
        else:
            values.append(literal(rng, c.cls, c, null=0.2 if c.nullable else 0.0))
    return "(%s)" % ", ".join(values)


def make_schema(rng):
    tables = []
    count = rng.choice([2, 3, 3, 4])
    for i in range(count):
        keyed = i == 0 or (i > 1 and rng.random() < 0.5)
        if i == 1:
            keyed = rng.random() < 0.25
        columns = []
        key = []
        if keyed:
            columns.append(Column("k", "INT", "int", False, key=True))
            key = ["k"]
        chosen = [POOL[0]] + [p for p in POOL[1:] if rng.random() < 0.4]
        if len(chosen) < 2:
            chosen.append(rng.choice(POOL[1:]))
            chosen.sort(key=POOL.index)
        chosen = chosen[:4]
        for name, sqltype, cls in chosen:
            columns.append(Column(name, sqltype, cls, rng.random() >= 0.15))
        if keyed and rng.random() < 0.15:
            # A composite key (k, a).
            key = ["k", "a"]
            a = next(c for c in columns if c.name == "a")
            a.nullable, a.key = False, False
        tables.append(Table("t%d" % (i + 1), columns, key))
    return tables


def initial_rows(rng, table):
    rows = []
    if table.key:
        keys = rng.sample(KEY_VALUES, rng.randint(2, 7))
        for k in keys:
            # The key column k comes first; distinct k make distinct (k, a) too.
            row = row_literal(rng, table)
            rows.append("(" + str(k) + row[row.index(","):] if len(table.columns) > 1 else "(%d)" % k)
        return rows
    for _ in range(rng.randint(2, 9)):
        if rows and rng.random() < 0.35:
            rows.append(rng.choice(rows))
        else:
            rows.append(row_literal(rng, table))
    return rows


def ref(alias, column):
    """A column reference: qualified by the alias, or bare without one."""
    return column if alias is None else "%s.%s" % (alias, column)


def names_of(named):
    """The output names of SELECT items written by `Gen.name_items` (None where unnamed)."""
    out = []
    for n, item in enumerate(named):
        out.append("c%d" % n if item.endswith(" AS c%d" % n) else None)
    return out


class Gen:
    """Random statements over a schema."""

    def __init__(self, rng, tables):
        self.rng = rng
        self.tables = tables
        self.tags = set()
        self.alias_n = 0

    # ---- helpers
    def chance(self, p):
        return self.rng.random() < p

    def alias(self, prefix="x"):
        self.alias_n += 1
        return "%s%d" % (prefix, self.alias_n)

    def items_of(self, table, alias, nullable_side=False):
        return [
            Item(ref(alias, c.name), c.cls, c.nullable or nullable_side, c.name, (alias, table))
            for c in table.columns
        ]

    def pick_cls(self, scope, choices=("int", "int", "text", "dec", "bool")):
        """A class from `choices` that some column in scope has (else int)."""
        present = [c for c in choices if any(i.cls == c for i in scope)]
        return self.rng.choice(present or ["int"])

    # ---- expressions
    def lit(self, cls, null=0.0):
        return literal(self.rng, cls, null=null)

    def expr(self, scope, cls, depth=0):
        rng = self.rng
        cols = [i for i in scope if i.cls == cls]
        if depth >= 2 or rng.random() < 0.55 or (not cols and rng.random() < 0.6):
            if cols and rng.random() < (0.97 if depth == 0 else 0.92):
                return rng.choice(cols).sql
            return self.lit(cls)
        d = depth + 1
        if cls == "int":
            kind = rng.choice(["+", "-", "*", "//", "%", "abs", "coalesce", "nullif", "case", "length",
                               "divguard", "+", "coalesce"])
            if kind in ("+", "-"):
                return "(%s %s %s)" % (self.expr(scope, "int", d), kind, self.expr(scope, "int", d))
            if kind == "*":
                return "(%s * %d)" % (self.expr(scope, "int", d), rng.choice([0, 2, 3, -1]))
            if kind in ("//", "%"):
                self.tags.add("arith_div")
                return "(%s %s %d)" % (self.expr(scope, "int", d), kind, rng.choice([2, 3, -2]))
            if kind == "abs":
                return "abs(%s)" % self.expr(scope, "int", d)
            if kind == "coalesce":
                self.tags.add("coalesce")
                return "coalesce(%s, %s)" % (self.expr(scope, "int", d), self.lit("int"))
            if kind == "nullif":
                self.tags.add("nullif")
                return "nullif(%s, %s)" % (self.expr(scope, "int", d), self.lit("int"))
            if kind == "length":
                return "length(%s)" % self.expr(scope, "text", d)
            if kind == "divguard":
                self.tags.add("division_guarded")
                num = self.expr(scope, "int", d)
                den = self.expr(scope, "int", d)
                if rng.random() < 0.5:
                    return "CASE WHEN %s <> 0 THEN %s %s %s END" % (den, num, rng.choice(["//", "%"]), den)
                return "(%s // nullif(%s, 0))" % (num, den)
            return self.case(scope, cls, d)
        if cls == "dec":
            kind = rng.choice(["+", "-", "*", "abs", "coalesce", "case", "neg"])
            if kind in ("+", "-"):
                other = self.expr(scope, rng.choice(["dec", "dec", "int"]), d)
                return "(%s %s %s)" % (self.expr(scope, "dec", d), kind, other)
            if kind == "*":
                return "(%s * %d)" % (self.expr(scope, "dec", d), rng.choice([0, 2, -1]))
            if kind == "abs":
                return "abs(%s)" % self.expr(scope, "dec", d)
            if kind == "neg":
                return "(- %s)" % self.expr(scope, "dec", d)
            if kind == "coalesce":
                self.tags.add("coalesce")
                return "coalesce(%s, %s)" % (self.expr(scope, "dec", d), self.lit("dec"))
            return self.case(scope, cls, d)
        if cls == "text":
            kind = rng.choice(["upper", "lower", "||", "coalesce", "case", "substr", "cast"])
            if kind in ("upper", "lower"):
                return "%s(%s)" % (kind, self.expr(scope, "text", d))
            if kind == "||":
                return "(%s || %s)" % (self.expr(scope, "text", d), self.expr(scope, "text", d))
            if kind == "coalesce":
                self.tags.add("coalesce")
                return "coalesce(%s, %s)" % (self.expr(scope, "text", d), self.lit("text"))
            if kind == "substr":
                return "substr(%s, 1, 1)" % self.expr(scope, "text", d)
            if kind == "cast":
                self.tags.add("cast")
                return "CAST(%s AS TEXT)" % self.expr(scope, "int", d)
            return self.case(scope, cls, d)
        # bool
        return "(%s)" % self.pred(scope, depth + 1, allow_sub=False)

    def case(self, scope, cls, depth):
        self.tags.add("case")
        whens = " ".join(
            "WHEN %s THEN %s" % (self.pred(scope, depth + 1, allow_sub=False), self.expr(scope, cls, depth + 1))
            for _ in range(self.rng.choice([1, 1, 2]))
        )
        tail = " ELSE %s" % self.expr(scope, cls, depth + 1) if self.chance(0.6) else ""
        return "CASE %s%s END" % (whens, tail)

    def comparable_pair(self, scope, depth):
        cls = self.pick_cls(scope, ("int", "int", "int", "text", "dec", "bool"))
        left = self.expr(scope, cls, depth)
        right = self.expr(scope, cls, depth) if self.chance(0.4) else self.lit(cls)
        return cls, left, right

    def pred(self, scope, depth=0, allow_sub=True):
        """A boolean condition over `scope` (a subquery in it may correlate with scope)."""
        rng = self.rng
        if depth < 2 and rng.random() < 0.3:
            kind = rng.choice(["and", "and", "or", "or", "not"])
            if kind == "not":
                self.tags.add("not")
                self.in_not = getattr(self, "in_not", 0) + 1
                inner = self.pred(scope, depth + 1, allow_sub)
                self.in_not -= 1
                return "NOT (%s)" % inner
            self.tags.add(kind)
            if kind == "or":
                self.in_or = getattr(self, "in_or", 0) + 1
            parts = [self.pred(scope, depth + 1, allow_sub) for _ in range(2)]
            if kind == "or":
                self.in_or -= 1
            return "(%s %s %s)" % (parts[0], kind.upper(), parts[1])
        if allow_sub and rng.random() < 0.22:
            return self.sub_pred(scope, depth)
        kind = rng.choice(["cmp", "cmp", "cmp", "isnull", "in", "between", "like", "boolcol", "distinct", "cmp"])
        if kind == "isnull":
            self.tags.add("is_null")
            cls = self.pick_cls(scope, ("int", "text", "dec", "bool"))
            return "%s IS %sNULL" % (self.expr(scope, cls, depth + 1), rng.choice(["", "NOT "]))
        if kind == "in":
            self.tags.add("in_list")
            cls = self.pick_cls(scope, ("int", "int", "text"))
            values = [self.lit(cls) for _ in range(rng.randint(1, 3))]
            if self.chance(0.2):
                values.append("NULL")
                self.tags.add("in_list_null")
            neg = "NOT " if self.chance(0.35) else ""
            return "%s %sIN (%s)" % (self.expr(scope, cls, depth + 1), neg, ", ".join(values))
        if kind == "between":
            self.tags.add("between")
            cls = self.pick_cls(scope, ("int", "int", "dec"))
            lo, hi = sorted([self.lit(cls), self.lit(cls)], key=float)
            neg = "NOT " if self.chance(0.2) else ""
            return "%s %sBETWEEN %s AND %s" % (self.expr(scope, cls, depth + 1), neg, lo, hi)
        if kind == "like":
            texts = [i for i in scope if i.cls == "text"]
            if texts:
                self.tags.add("like")
                pattern = rng.choice(["a%", "%b", "_", "a_", "%", "b%"])
                neg = "NOT " if self.chance(0.25) else ""
                return "%s %sLIKE '%s'" % (rng.choice(texts).sql, neg, pattern)
        if kind == "boolcol":
            bools = [i for i in scope if i.cls == "bool"]
            if bools:
                return rng.choice(bools).sql
        if kind == "distinct":
            self.tags.add("is_distinct_from")
            cls, left, right = self.comparable_pair(scope, depth + 1)
            return "%s IS %sDISTINCT FROM %s" % (left, rng.choice(["", "NOT "]), right)
        cls, left, right = self.comparable_pair(scope, depth + 1)
        op = rng.choice(["=", "<>"]) if cls == "bool" else rng.choice(["=", "=", "<>", "<", "<=", ">", ">="])
        return "%s %s %s" % (left, op, right)

    # ---- subqueries
    def sub_pred(self, scope, depth):
        rng = self.rng
        if getattr(self, "in_or", 0):
            self.tags.add("subquery_under_or")
        if getattr(self, "in_not", 0):
            self.tags.add("subquery_under_not")
        table = rng.choice(self.tables)
        alias = self.alias("s")
        inner = self.items_of(table, alias)
        conds = []
        correlated = self.chance(0.6)
        if correlated:
            pair = self.equi_pair(inner, scope)
            if pair:
                conds.append("%s = %s" % pair)
                self.tags.add("correlated")
        if self.chance(0.5):
            conds.append(self.pred(inner, 2, allow_sub=False))
        where = " WHERE " + " AND ".join(conds) if conds else ""
        kind = rng.choice(["exists", "not_exists", "in", "not_in", "scalar", "exists", "in", "not_in"])
        if kind in ("exists", "not_exists"):
            self.tags.add(kind)
            neg = "NOT " if kind == "not_exists" else ""
            return "%sEXISTS (SELECT 1 FROM %s %s%s)" % (neg, table.name, alias, where)
        if kind in ("in", "not_in"):
            self.tags.add(kind + "_subquery")
            cls = rng.choice([i.cls for i in inner if i.cls != "bool"] or ["int"])
            target = [i for i in inner if i.cls == cls]
            if not target:
                cls = "int"
                what = self.lit("int")
            else:
                what = rng.choice(target).sql
            left = self.expr(scope, cls, 1)
            if not re.fullmatch(r"\w+(\.\w+)?", left):
                self.tags.add("in_subquery_expr_left")
            neg = "NOT " if kind == "not_in" else ""
            return "%s %sIN (SELECT %s FROM %s %s%s)" % (left, neg, what, table.name, alias, where)
        self.tags.add("scalar_subquery")
        cls = rng.choice(["int", "int", "dec", "text"])
        target = [i for i in inner if i.cls == cls]
        if not target:
            cls, agg = "int", "count(*)"
        else:
            col = rng.choice(target).sql
            agg = rng.choice(["min(%s)", "max(%s)", "count(%s)"] + (["sum(%s)"] if cls != "text" else [])) % col
            if agg.startswith("count"):
                cls = "int"
        op = rng.choice(["=", "<", ">", ">=", "<>"])
        return "%s %s (SELECT %s FROM %s %s%s)" % (self.expr(scope, cls, 1), op, agg, table.name, alias, where)

    def equi_pair(self, left, right):
        """(l, r) of one class, one from each list, preferring ints."""
        rng = self.rng
        pairs = [(l, r) for l in left for r in right if l.cls == r.cls and l.cls in ("int", "text", "dec")]
        if not pairs:
            return None
        ints = [p for p in pairs if p[0].cls == "int"]
        l, r = rng.choice(ints if ints and rng.random() < 0.8 else pairs)
        return l.sql, r.sql

    # ---- FROM
    def from_clause(self, max_tables=3, kinds=None):
        """(sql, scope, sources) for one to three tables joined; sources: (alias, table, outer-nullable)."""
        rng = self.rng
        n = rng.choice([1, 1, 2, 2, 2, 3][: 2 * max_tables])
        n = min(n, max_tables)
        t0 = rng.choice(self.tables)
        if n == 1 and self.chance(0.25):
            # One table, no alias: its columns unqualified, as most people write them.
            a0 = None
            sql = t0.name
            self.tags.add("unqualified")
        else:
            a0 = self.alias()
            sql = "%s %s" % (t0.name, a0)
        scope = self.items_of(t0, a0)
        sources = [(a0, t0)]
        if n >= 3:
            self.tags.add("chained_join")
        for _ in range(n - 1):
            t = rng.choice(self.tables)
            a = self.alias()
            kind = rng.choice(kinds or ["JOIN", "JOIN", "JOIN", "LEFT JOIN", "LEFT JOIN", "LEFT JOIN",
                                        "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"])
            right = self.items_of(t, a)
            if kind == "CROSS JOIN":
                self.tags.add("cross_join")
                sql += " CROSS JOIN %s %s" % (t.name, a)
                scope = scope + right
                sources.append((a, t))
                continue
            self.tags.add({"JOIN": "inner_join", "LEFT JOIN": "left_join", "RIGHT JOIN": "right_join",
                           "FULL JOIN": "full_join"}[kind])
            if t.key and kind in ("LEFT JOIN", "FULL JOIN"):
                self.tags.add("outer_join_keyed_right")
            if (sources[-1][1].key or t.key) and kind != "JOIN":
                self.tags.add("outer_join_keyed")
            on = self.on_condition(scope, right, kind)
            if on is None:
                self.tags.add("cross_join")
                sql += " CROSS JOIN %s %s" % (t.name, a)
            elif on.startswith("USING"):
                self.tags.add("using")
                sql += " %s %s %s %s" % (kind, t.name, a, on)
            else:
                sql += " %s %s %s ON %s" % (kind, t.name, a, on)
            if kind in ("LEFT JOIN", "FULL JOIN"):
                right = [Item(i.sql, i.cls, True, i.name, i.source) for i in right]
            if kind in ("RIGHT JOIN", "FULL JOIN"):
                scope = [Item(i.sql, i.cls, True, i.name, i.source) for i in scope]
            scope = scope + right
            sources.append((a, t))
        return sql, scope, sources

    def on_condition(self, left, right, kind):
        rng = self.rng
        pair = self.equi_pair(right, left)
        if pair is None:
            return None
        if kind != "FULL JOIN" and len(set(i.source for i in left)) == 1 and rng.random() < 0.08:
            names = [i.name for i in right if any(l.name == i.name and l.cls == i.cls for l in left)]
            if names:
                return "USING (%s)" % rng.choice(names)
        conds = ["%s = %s" % pair]
        if rng.random() < 0.15:
            # A second equality, sometimes on the same column of the right side.
            same = rng.random() < 0.5
            l_same = [l for l in left if l.cls == "int" and l.sql != pair[1]]
            if same and l_same:
                conds.append("%s = %s" % (pair[0], rng.choice(l_same).sql))
                self.tags.add("on_two_equalities_one_column")
            else:
                other = self.equi_pair(right, left)
                if other:
                    conds.append("%s = %s" % other)
        if rng.random() < 0.3:
            conds.append(self.pred(right, 2, allow_sub=False))
            self.tags.add("on_right_condition")
        if kind != "FULL JOIN" and rng.random() < 0.25:
            # A condition reading both sides that is not an equality.
            nums = [(l, r) for l in left for r in right if l.cls == r.cls and l.cls in ("int", "dec")]
            if nums:
                l, r = rng.choice(nums)
                conds.append("%s %s %s" % (l.sql, rng.choice(["<", "<=", ">", "<>"]), r.sql))
                self.tags.add("on_theta")
        if rng.random() < 0.15:
            conds.append(self.pred(left, 2, allow_sub=False))
            self.tags.add("on_left_condition")
        if kind == "FULL JOIN":
            # FULL: equalities and conditions on one side's own columns only.
            pass
        rng.shuffle(conds)
        return " AND ".join(conds)

    # ---- SELECT pieces
    def agg(self, scope):
        rng = self.rng
        kind = rng.choice(["count*", "count", "count_distinct", "sum", "sum", "min", "max", "avg", "count*"])
        if kind == "count*":
            self.tags.add("count")
            return "count(*)", "int"
        if kind in ("count", "count_distinct"):
            self.tags.add(kind)
            cls = self.pick_cls(scope, ("int", "text", "dec", "bool"))
            inner = self.expr(scope, cls, 1)
            return ("count(DISTINCT %s)" if kind == "count_distinct" else "count(%s)") % inner, "int"
        if kind in ("sum", "avg"):
            self.tags.add(kind)
            cls = self.pick_cls(scope, ("int", "int", "dec"))
            inner = self.expr(scope, cls, 1)
            if kind == "avg":
                return avg_call(inner), "avg"
            return "sum(%s)" % inner, cls
        self.tags.add(kind)
        cls = self.pick_cls(scope, ("int", "dec", "text"))
        return "%s(%s)" % (kind, self.expr(scope, cls, 1)), cls

    def order_limit(self, arity, view=False, names=None):
        """ORDER BY every output column (a total order), maybe LIMIT/OFFSET; by position,
        or by the column's name where `names` gives one."""
        rng = self.rng
        positions = list(range(1, arity + 1))
        rng.shuffle(positions)
        keys = []
        for p in positions:
            k = str(p)
            if names and names[p - 1] and self.chance(0.5):
                k = names[p - 1]
                self.tags.add("order_by_name")
            else:
                self.tags.add("order_by_position")
            if self.chance(0.35):
                k += " DESC"
            if self.chance(0.1) and not view:
                k += rng.choice([" NULLS FIRST", " NULLS LAST"])
            keys.append(k)
        sql = " ORDER BY " + ", ".join(keys)
        self.tags.add("order_by")
        if view or self.chance(0.7):
            sql += " LIMIT %d" % rng.randint(1, 5)
            self.tags.add("limit")
            if self.chance(0.2):
                sql += " OFFSET %d" % rng.randint(1, 3)
                self.tags.add("offset")
        return sql

    def name_items(self, items, view):
        """`expr AS cN`, or sometimes unnamed in a query."""
        out = []
        for n, e in enumerate(items):
            if view or self.chance(0.7):
                out.append("%s AS c%d" % (e, n))
            else:
                out.append(e)
        return out

    # ---- query shapes; each returns (sql, arity, ordered, out_classes)
    def q_simple(self, view):
        rng = self.rng
        self.tags.add("select")
        sql_from, scope, sources = self.from_clause()
        conds = []
        if self.chance(0.75):
            conds.append(self.pred(scope))
            self.tags.add("where")
        items = []
        classes = []
        for _ in range(rng.randint(1, 3)):
            cls = self.pick_cls(scope)
            items.append(self.expr(scope, cls))
            classes.append(cls)
        if self.chance(0.12):
            # Division by a column that WHERE proves nonzero.
            ints = [i for i in scope if i.cls == "int"]
            if ints:
                den = rng.choice(ints).sql
                conds.append("%s <> 0" % den)
                items.append("%s %s %s" % (self.expr(scope, "int", 1), rng.choice(["//", "%"]), den))
                classes.append("int")
                self.tags.add("division_where_guard")
        if self.chance(0.12):
            items.append(self.scalar_item(scope))
            classes.append("int")
        distinct = ""
        if self.chance(0.2):
            distinct = "DISTINCT "
            self.tags.add("distinct")
        if conds:
            rng.shuffle(conds)
        where = " WHERE " + " AND ".join(conds) if conds else ""
        named = self.name_items(items, view)
        sql = "SELECT %s%s FROM %s%s" % (distinct, ", ".join(named), sql_from, where)
        ordered = False
        if (view and self.chance(0.1)) or (not view and self.chance(0.25)):
            sql += self.order_limit(len(items), view, names_of(named))
            ordered = True
        return sql, len(items), ordered, classes

    def scalar_item(self, scope):
        rng = self.rng
        self.tags.add("scalar_subquery_select")
        table = rng.choice(self.tables)
        alias = self.alias("s")
        inner = self.items_of(table, alias)
        conds = []
        if self.chance(0.6):
            pair = self.equi_pair(inner, scope)
            if pair:
                conds.append("%s = %s" % pair)
                self.tags.add("correlated")
        if self.chance(0.3):
            conds.append(self.pred(inner, 2, allow_sub=False))
        where = " WHERE " + " AND ".join(conds) if conds else ""
        ints = [i for i in inner if i.cls == "int"]
        agg = rng.choice(["count(*)", "count(*) + 1"] + (["max(%s)" % rng.choice(ints).sql,
                                                            "coalesce(sum(%s), 0)" % rng.choice(ints).sql] if ints else []))
        return "(SELECT %s FROM %s %s%s)" % (agg, table.name, alias, where)

    def q_grouped(self, view):
        rng = self.rng
        self.tags.add("group_by")
        with_col0 = [t for t in self.tables if any(c.name == "col0" for c in t.columns)]
        if not view and with_col0 and self.chance(0.08):
            # An unnamed item and a bare GROUP BY column named as rnt names that item
            # (SELECT 37 FROM t GROUP BY col0): the GROUP BY must bind to the column.
            self.tags.update({"group_by_generated_name", "group_by_constant_item", "unqualified"})
            sql_from = rng.choice(with_col0).name
            item = str(rng.randint(2, 40)) if self.chance(0.6) else "count(*)"
            sql = "SELECT %s FROM %s GROUP BY col0" % (item, sql_from)
            if self.chance(0.3):
                sql = "SELECT %s, col0 FROM %s GROUP BY col0" % (item, sql_from)
                return sql, 2, False, ["int", "int"]
            return sql, 1, False, ["int"]
        sql_from, scope, sources = self.from_clause()
        where = ""
        if self.chance(0.5):
            where = " WHERE " + self.pred(scope)
            self.tags.add("where")
        keys = []
        classes = []
        for _ in range(rng.choice([1, 1, 2])):
            cls = self.pick_cls(scope, ("int", "int", "text", "bool", "dec"))
            if self.chance(0.7):
                cands = [i for i in scope if i.cls == cls]
                key = rng.choice(cands).sql if cands else self.expr(scope, cls, 1)
            else:
                key = self.expr(scope, cls, 1)
            if key not in keys:
                keys.append(key)
                classes.append(cls)
        aggs = []
        if self.chance(0.12):
            # A constant item and no aggregate (SELECT 37 FROM t GROUP BY a).
            aggs.append(str(rng.randint(2, 40)))
            classes.append("int")
            self.tags.add("group_by_constant_item")
        else:
            for _ in range(rng.randint(1, 3)):
                a, cls = self.agg(scope)
                aggs.append(a)
                classes.append(cls)
        shown = keys
        if len(keys) and self.chance(0.15):
            # Group by more than is selected (SQL allows it; DISTINCT then matters).
            shown = keys[: self.rng.randint(0, len(keys) - 1)]
            classes = classes[: len(shown)] + classes[len(keys):]
            self.tags.add("group_by_unselected")
        items = shown + aggs
        named = self.name_items(items, view)
        refs = []
        for n, key in enumerate(keys):
            style = rng.choice(["expr", "expr", "position", "alias"]) if n < len(shown) else "expr"
            if style == "position":
                refs.append(str(n + 1))
                self.tags.add("group_by_position")
            elif style == "alias" and " AS " in named[n]:
                refs.append("c%d" % n)
                self.tags.add("group_by_alias")
            else:
                refs.append(key)
            if not re.fullmatch(r"\w+(\.\w+)?", key):
                self.tags.add("group_by_expression")
                if n < len(shown) and " AS " not in named[n]:
                    self.tags.add("group_by_unnamed_expression")
        distinct = ""
        if self.chance(0.4 if len(shown) < len(keys) else 0.1):
            distinct = "DISTINCT "
            self.tags.add("distinct_group_by")
        sql = "SELECT %s%s FROM %s%s GROUP BY %s" % (distinct, ", ".join(named), sql_from, where, ", ".join(refs))
        if self.chance(0.35):
            self.tags.add("having")
            sql += " HAVING " + self.having(scope)
        ordered = False
        if (view and self.chance(0.1)) or (not view and self.chance(0.2)):
            sql += self.order_limit(len(items), view, names_of(named))
            ordered = True
        return sql, len(items), ordered, classes

    def having(self, scope):
        rng = self.rng
        parts = []
        for _ in range(rng.choice([1, 1, 2])):
            kind = rng.choice(["count", "sum", "min", "max"])
            if kind == "count":
                parts.append("count(*) %s %d" % (rng.choice([">", ">=", "=", "<"]), rng.randint(1, 3)))
            elif kind == "sum":
                cands = [i for i in scope if i.cls in ("int", "dec")]
                if cands:
                    parts.append("sum(%s) %s %s" % (rng.choice(cands).sql, rng.choice([">", "<", ">="]), self.lit("int")))
                else:
                    parts.append("count(*) > 1")
            else:
                cands = [i for i in scope if i.cls in ("int", "text")]
                if cands:
                    c = rng.choice(cands)
                    if self.chance(0.5):
                        parts.append("%s(%s) IS NOT NULL" % (kind, c.sql))
                    else:
                        parts.append("%s(%s) %s %s" % (kind, c.sql, rng.choice(["=", "<", ">"]), self.lit(c.cls)))
                else:
                    parts.append("count(*) >= 1")
        return (" %s " % rng.choice(["AND", "OR"])).join(parts)

    def q_global(self, view):
        rng = self.rng
        self.tags.add("global_aggregate")
        sql_from, scope, sources = self.from_clause()
        where = ""
        if self.chance(0.6):
            where = " WHERE " + self.pred(scope)
            self.tags.add("where")
        aggs, classes = [], []
        for _ in range(rng.randint(1, 3)):
            a, cls = self.agg(scope)
            aggs.append(a)
            classes.append(cls)
        sql = "SELECT %s FROM %s%s" % (", ".join(self.name_items(aggs, view)), sql_from, where)
        return sql, len(aggs), False, classes

    def set_side(self, classes, first):
        rng = self.rng
        table = rng.choice(self.tables)
        alias = self.alias()
        scope = self.items_of(table, alias)
        items = [self.expr(scope, cls, 1 if self.chance(0.6) else 0) for cls in classes]
        if first:
            # The first side names the result's columns.
            items = ["%s AS c%d" % (e, n) for n, e in enumerate(items)]
        where = " WHERE " + self.pred(scope, 1, allow_sub=False) if self.chance(0.5) else ""
        return "SELECT %s FROM %s %s%s" % (", ".join(items), table.name, alias, where)

    def q_setop(self, view):
        rng = self.rng
        first = self.items_of(rng.choice(self.tables), "_")
        classes = [self.pick_cls(first) for _ in range(rng.choice([1, 1, 2]))]
        sides = [self.set_side(classes, n == 0) for n in range(rng.choice([2, 2, 2, 3]))]
        sql = sides[0]
        for side in sides[1:]:
            op = rng.choice(["UNION", "UNION ALL", "EXCEPT", "EXCEPT ALL", "INTERSECT", "INTERSECT ALL", "UNION ALL"])
            self.tags.add(op.lower().replace(" ", "_"))
            sql += " %s %s" % (op, side)
        ordered = False
        if not view and self.chance(0.2):
            sql += self.order_limit(len(classes), names=["c%d" % i for i in range(len(classes))])
            ordered = True
        return sql, len(classes), ordered, classes

    def q_window(self, view):
        rng = self.rng
        self.tags.add("window")
        if self.chance(0.8):
            table = rng.choice(self.tables)
            alias = self.alias()
            scope = self.items_of(table, alias)
            sql_from = "%s %s" % (table.name, alias)
            total = ["%s.%s" % (alias, k) for k in table.key] or [i.sql for i in scope]
            if not table.key:
                self.tags.add("window_over_bag")
        else:
            sql_from, scope, sources = self.from_clause(max_tables=2, kinds=["JOIN"])
            total = []
            for a, t in sources:
                total += [ref(a, k) for k in t.key] or [ref(a, c.name) for c in t.columns]
            if any(not t.key for a, t in sources):
                self.tags.add("window_over_bag")
            self.tags.add("window_over_join")
        items, classes = [], []
        for _ in range(rng.randint(1, 2)):
            cls = self.pick_cls(scope, ("int", "text", "dec"))
            items.append(self.expr(scope, cls, 1))
            classes.append(cls)
        windows = []
        # Over rows that may repeat, one window only: two windows numbering equal rows in
        # different orders may pair their numbers either way (both answers are right).
        count = 1 if "window_over_bag" in self.tags else rng.choice([1, 1, 2])
        for _ in range(count):
            part = ""
            if self.chance(0.5):
                p = rng.choice(scope)
                part = "PARTITION BY %s " % p.sql
            order_cols = [rng.choice(scope).sql] if self.chance(0.6) else []
            order = [c + (" DESC" if self.chance(0.3) else "") for c in order_cols]
            full = order + [c + (" DESC" if self.chance(0.2) else "") for c in total]
            fn = rng.choice(["row_number", "rank", "dense_rank", "sum", "count", "lag", "lead", "row_number"])
            self.tags.add("window_" + fn)
            if fn in ("rank", "dense_rank") and order:
                w = "%s() OVER (%sORDER BY %s)" % (fn, part, ", ".join(order))
            elif fn in ("rank", "dense_rank", "row_number"):
                w = "%s() OVER (%sORDER BY %s)" % (fn, part, ", ".join(full))
            elif fn in ("sum", "count"):
                arg = "*" if fn == "count" else rng.choice([i.sql for i in scope if i.cls in ("int", "dec")] or ["1"])
                w = "%s(%s) OVER (%sORDER BY %s ROWS %s)" % (fn, arg, part, ", ".join(full), rng.choice(
                    ["UNBOUNDED PRECEDING", "BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"]))
            else:
                col = rng.choice(scope)
                args = col.sql
                if self.chance(0.4):
                    args += ", %d" % rng.randint(1, 2)
                    if self.chance(0.5) and col.cls != "bool":
                        args += ", %s" % self.lit(col.cls)
                w = "%s(%s) OVER (%sORDER BY %s)" % (fn, args, part, ", ".join(full))
                classes.append(col.cls)
                windows.append(w)
                continue
            windows.append(w)
            classes.append("int" if fn != "sum" else "dec")
        where = " WHERE " + self.pred(scope, 1, allow_sub=False) if self.chance(0.4) else ""
        all_items = items + windows
        named = self.name_items(all_items, view)
        sql = "SELECT %s FROM %s%s" % (", ".join(named), sql_from, where)
        w = windows[0]
        if self.chance(0.2) and w.startswith(("row_number", "rank", "dense_rank", "count")):
            self.tags.add("qualify")
            if " AS " in named[len(items)] and self.chance(0.5):
                sql += " QUALIFY c%d %s %d" % (len(items), rng.choice(["=", "<=", ">"]), rng.randint(1, 2))
            else:
                sql += " QUALIFY %s %s %d" % (w, rng.choice(["=", "<=", ">"]), rng.randint(1, 2))
        ordered = False
        if not view and self.chance(0.15):
            sql += self.order_limit(len(all_items), names=names_of(named))
            ordered = True
        return sql, len(all_items), ordered, classes

    def q_cte(self, view):
        rng = self.rng
        self.tags.add("cte")
        inner_tags = set(self.tags)
        if self.chance(0.5):
            body, arity, _, classes = self.q_grouped(True)
        else:
            body, arity, _, classes = self.q_simple(True)
        if " LIMIT " in body and self.chance(0.8):
            body = body[: body.rindex(" ORDER BY ")]
        elif " LIMIT " in body:
            self.tags.add("limit_in_subquery")
        self.tags |= inner_tags
        name = "w%d" % rng.randint(1, 9)
        scope = [Item("%s.c%d" % (name, i), cls if cls != "avg" else "dec", True, "c%d" % i, (name, None))
                 for i, cls in enumerate(classes)]
        from_sql = name
        if self.chance(0.4):
            table = rng.choice(self.tables)
            alias = self.alias()
            right = self.items_of(table, alias)
            pair = self.equi_pair(right, scope)
            if pair:
                kind = rng.choice(["JOIN", "LEFT JOIN"])
                self.tags.add("cte_join")
                from_sql += " %s %s %s ON %s = %s" % (kind, table.name, alias, pair[0], pair[1])
                if kind == "LEFT JOIN":
                    right = [Item(i.sql, i.cls, True, i.name, i.source) for i in right]
                scope = scope + right
        items, out = [], []
        for _ in range(rng.randint(1, 3)):
            cls = self.pick_cls(scope, ("int", "int", "dec", "text"))
            items.append(self.expr(scope, cls, 1))
            out.append(cls)
        where = " WHERE " + self.pred(scope, 1) if self.chance(0.5) else ""
        named = self.name_items(items, view)
        sql = "WITH %s AS (%s) SELECT %s FROM %s%s" % (name, body, ", ".join(named), from_sql, where)
        ordered = False
        if not view and self.chance(0.15):
            sql += self.order_limit(len(items), names=names_of(named))
            ordered = True
        return sql, len(items), ordered, out

    def q_derived(self, view):
        rng = self.rng
        self.tags.add("derived_table")
        body, arity, _, classes = (self.q_grouped(True) if self.chance(0.5) else self.q_simple(True))
        if " LIMIT " in body and self.chance(0.8):
            body = body[: body.rindex(" ORDER BY ")]
        elif " LIMIT " in body:
            self.tags.add("limit_in_subquery")
        scope = [Item("q.c%d" % i, cls if cls != "avg" else "dec", True, "c%d" % i, ("q", None))
                 for i, cls in enumerate(classes)]
        items, out = [], []
        for _ in range(rng.randint(1, 2)):
            cls = self.pick_cls(scope, ("int", "dec", "text"))
            items.append(self.expr(scope, cls, 1))
            out.append(cls)
        where = " WHERE " + self.pred(scope, 1) if self.chance(0.6) else ""
        sql = "SELECT %s FROM (%s) q%s" % (", ".join(self.name_items(items, view)), body, where)
        return sql, len(items), False, out

    def q_outer_dups(self, view):
        """An outer join whose matched side is keyed and joined on a column that is not its
        key, that key not selected: each preserved row must come out once per match (a
        lowering that treats the keyed side's projection as a set merges them)."""
        rng = self.rng
        keyed = [t for t in self.tables if t.key]
        left = rng.choice(keyed if self.chance(0.7) else self.tables)
        right = rng.choice(keyed)
        la, ra = self.alias(), self.alias()
        l_items, r_items = self.items_of(left, la), self.items_of(right, ra)
        r_join = [i for i in r_items if i.cls == "int" and i.name not in right.key]
        if not r_join:
            return self.q_simple(view)
        r_col = rng.choice(r_join)
        l_col = ("%s.k" % la) if left.key and self.chance(0.7) else rng.choice([i for i in l_items if i.cls == "int"]).sql
        kind = rng.choice(["LEFT JOIN", "LEFT JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
        if kind == "RIGHT JOIN":
            sql_from = "%s %s RIGHT JOIN %s %s ON %s = %s" % (right.name, ra, left.name, la, r_col.sql, l_col)
        else:
            sql_from = "%s %s %s %s %s ON %s = %s" % (left.name, la, kind, right.name, ra, r_col.sql, l_col)
        self.tags.update({"outer_join_dups", {"LEFT JOIN": "left_join", "RIGHT JOIN": "right_join",
                                              "FULL JOIN": "full_join"}[kind], "outer_join_keyed_right"})
        items = [("%s.k" % la) if left.key else rng.choice(l_items).sql]
        others = [i.sql for i in r_items if i.name not in right.key]
        if others and self.chance(0.6):
            items.append(rng.choice(others))
        classes = ["int"] * len(items)
        sql = "SELECT %s FROM %s" % (", ".join(self.name_items(items, view)), sql_from)
        if self.chance(0.3):
            sql += " WHERE " + self.pred(l_items, 1, allow_sub=False)
        return sql, len(items), False, classes

    def query(self, view=False):
        """A random query: (sql, tags, ordered)."""
        self.tags = set()
        self.in_or = self.in_not = 0
        shape = self.rng.choices(
            [self.q_simple, self.q_grouped, self.q_global, self.q_setop, self.q_window, self.q_cte, self.q_derived,
             self.q_outer_dups],
            weights=[34, 22, 7, 11, 10, 7, 6, 4],
        )[0]
        sql, arity, ordered, classes = shape(view)
        return sql, self.tags, ordered

    # ---- DML
    def dml(self):
        self.tags = set()
        self.in_or = self.in_not = 0
        rng = self.rng
        table = rng.choice(self.tables)
        kinds = ["insert", "insert", "insert_select", "update", "update", "delete", "delete"]
        if table.key:
            kinds += ["upsert", "upsert"]
        kind = rng.choice(kinds)
        alias_scope = self.items_of(table, table.name)
        if kind == "insert":
            self.tags.add("insert")
            rows = []
            for _ in range(rng.randint(1, 4)):
                if rows and not table.key and self.chance(0.3):
                    rows.append(rng.choice(rows))
                    self.tags.add("insert_duplicate")
                else:
                    rows.append(row_literal(rng, table, wide_keys=True))
            if self.chance(0.2):
                # A column list leaving nullable columns out.
                keep = [c for c in table.columns if not c.nullable or self.chance(0.6)]
                if len(keep) < len(table.columns):
                    self.tags.add("insert_columns")
                    rows = ["(%s)" % ", ".join(literal(rng, c.cls, c, 0.2 if c.nullable else 0) for c in keep)
                            for _ in rows]
                    return "INSERT INTO %s (%s) VALUES %s" % (table.name, ", ".join(c.name for c in keep), ", ".join(rows)), table
            return "INSERT INTO %s VALUES %s" % (table.name, ", ".join(rows)), table
        if kind == "upsert":
            self.tags.add("insert_on_conflict")
            rows = [row_literal(rng, table, wide_keys=self.chance(0.5)) for _ in range(rng.randint(1, 3))]
            if not self.chance(0.05):
                # Distinct keys (a key twice in one statement is rare in practice).
                seen, distinct = set(), []
                for row in rows:
                    key = row[1:].split(",")[0]
                    if key not in seen:
                        seen.add(key)
                        distinct.append(row)
                rows = distinct
            else:
                self.tags.add("on_conflict_key_twice")
            nonkey = [c for c in table.columns if c.name not in table.key]
            if nonkey and self.chance(0.7):
                sets = rng.sample(nonkey, rng.randint(1, min(2, len(nonkey))))
                assign = ", ".join("%s = excluded.%s" % (c.name, c.name) if self.chance(0.7) else
                                   "%s = %s" % (c.name, literal(rng, c.cls, c)) for c in sets)
                action = "DO UPDATE SET " + assign
            else:
                action = "DO NOTHING"
            return "INSERT INTO %s VALUES %s ON CONFLICT (%s) %s" % (
                table.name, ", ".join(rows), ", ".join(table.key), action), table
        if kind == "insert_select":
            self.tags.add("insert_select")
            keyed = [t for t in self.tables if t.key == ["k"]]
            source = rng.choice(keyed if table.key and keyed and not self.chance(0.05) else self.tables)
            alias = self.alias("s")
            scope = self.items_of(source, alias)
            items = []
            for c in table.columns:
                if c.key or (table.key == ["k", "a"] and c.name == "a"):
                    # Keys shifted far from the existing ones, distinct when the source's are.
                    if source.key == ["k"]:
                        base = "%s.k" % alias
                    else:
                        ints = [i for i in scope if i.cls == "int" and not i.nullable]
                        base = rng.choice(ints).sql if ints else "0"
                    items.append("%s + %d" % (base, rng.choice([20, 40, 60])))
                else:
                    same = [i for i in scope if i.cls == c.cls]
                    if same and self.chance(0.8):
                        items.append(rng.choice(same).sql)
                    elif c.nullable and self.chance(0.15):
                        items.append("NULL")
                        self.tags.add("insert_select_null")
                    else:
                        items.append(literal(rng, c.cls, c))
            where = " WHERE " + self.pred(scope, 1) if self.chance(0.6) else ""
            tail = ""
            if table.key:
                tail = " ON CONFLICT DO NOTHING"
                self.tags.add("insert_on_conflict")
            return "INSERT INTO %s SELECT %s FROM %s %s%s%s" % (
                table.name, ", ".join(items), source.name, alias, where, tail), table
        if kind == "update":
            self.tags.add("update")
            nonkey = [c for c in table.columns if c.name not in table.key]
            if not nonkey:
                kind = "delete"
            else:
                sets = rng.sample(nonkey, rng.randint(1, min(2, len(nonkey))))
                assign = []
                for c in sets:
                    if self.chance(0.15) and c.nullable:
                        value = "NULL"
                    elif c.cls == "int" and self.chance(0.6):
                        value = "%s + %d" % (c.name, rng.choice([1, -1, 2])) if self.chance(0.5) else \
                            "coalesce(%s, 0) + 1" % c.name
                    elif c.cls == "dec" and self.chance(0.5):
                        value = "%s + %s" % (c.name, literal(rng, "dec", c))
                    elif c.cls == "text" and self.chance(0.5):
                        value = rng.choice(["upper(%s)", "%s || 'x'", "coalesce(%s, 'n')", "substr(%s, 1, 1)"]) % c.name
                    elif c.cls == "bool" and self.chance(0.5):
                        value = "NOT %s" % c.name
                    else:
                        value = literal(rng, c.cls, c)
                    assign.append("%s = %s" % (c.name, value))
                scope = [Item("%s.%s" % (table.name, c.name), c.cls, c.nullable, c.name, (table.name, table))
                         for c in table.columns]
                where = " WHERE " + self.pred(scope, 1) if self.chance(0.8) else ""
                return "UPDATE %s SET %s%s" % (table.name, ", ".join(assign), where), table
        self.tags.add("delete")
        scope = [Item("%s.%s" % (table.name, c.name), c.cls, c.nullable, c.name, (table.name, table))
                 for c in table.columns]
        return "DELETE FROM %s WHERE %s" % (table.name, self.pred(scope, 1)), table


def make_case(seed, index):
    """The case `index` of `seed`: its tables and statements, in order."""
    rng = random.Random("rnt-differential:%d:%d" % (seed, index))
    tables = make_schema(rng)
    gen = Gen(rng, tables)
    out = [Statement("ddl", t.ddl(), table=t.name) for t in tables]
    views_first = rng.random() < 0.3

    def data():
        for t in tables:
            rows = initial_rows(rng, t)
            out.append(Statement("dml", "INSERT INTO %s VALUES %s" % (t.name, ", ".join(rows)), ["insert"], table=t.name))

    def queries(n):
        for _ in range(n):
            sql, tags, ordered = gen.query()
            out.append(Statement("query", sql, tags, ordered))

    views = []

    def reads():
        for name, tags in views:
            out.append(Statement("read", "SELECT * FROM %s" % name, tags, view=name))

    if not views_first:
        data()
        queries(rng.randint(2, 5))
    for n in range(rng.randint(2, 5)):
        sql, tags, _ordered = gen.query(view=True)
        name = "v%d" % (n + 1)
        out.append(Statement("view", "CREATE MATERIALIZED VIEW %s AS %s" % (name, sql), tags, view=name))
        views.append((name, sorted(tags)))
    reads()
    if views_first:
        data()
        reads()
        queries(rng.randint(1, 3))
    for _ in range(rng.randint(3, 5)):
        for _ in range(rng.randint(1, 3)):
            sql, table = gen.dml()
            out.append(Statement("dml", sql, gen.tags, table=table.name))
        reads()
        queries(rng.randint(1, 3))
    return Case(seed, index, tables, out)


if __name__ == "__main__":
    import sys

    case = make_case(int(sys.argv[1]) if len(sys.argv) > 1 else 1, int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    for s in case.statements:
        print("-- %s %s" % (s.kind, " ".join(s.tags)))
        print(s.rnt + ";")
        if s.duck != s.rnt:
            print("-- duckdb: " + s.duck)
