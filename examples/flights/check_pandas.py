#!/usr/bin/env python3
"""Independent cross-check of expected/*.csv and expected/after/*.csv with pandas.

    python3 check_pandas.py

Recomputes every view from the slice's CSVs with pandas (no DuckDB, no SQL):
decimals are parsed from their text into exact integers (tenths), averages are
done with decimal.Decimal and ROUND_DOWN, the reachability with a plain BFS,
rank with pandas' rank(method="min"); corrections come from corrections.json.
Exits non-zero on the first difference.
"""
import csv
import json
import os
import sys
from collections import deque
from decimal import ROUND_DOWN, Decimal, localcontext

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "expected")
DEC1 = ["dep_time", "dep_delay", "arr_time", "arr_delay", "air_time"]
INTS = ["year", "month", "day", "sched_dep_time", "sched_arr_time", "flight", "distance", "hour", "minute"]


def read(name):
    # every field as text, "" for a missing value
    return pd.read_csv(os.path.join(HERE, f"{name}.csv"), dtype=str, keep_default_na=False)


def tenths(s):
    """'-14.0' -> -140, '' -> <NA> (exact, no floats)."""
    def one(t):
        if t == "":
            return pd.NA
        d = Decimal(t) * 10
        assert d == d.to_integral_value(), t
        assert abs(d) < 10 ** 5, t  # fits decimal(6,1)
        return int(d)
    return s.map(one).astype("Int64")


def load_flights():
    f = read("flights")
    for c in INTS:
        f[c] = f[c].astype("int64")
    for c in DEC1:
        f[c] = tenths(f[c])
    for c in ["carrier", "tailnum", "origin", "dest"]:
        f[c] = f[c].replace("", None)
    return f


def apply_corrections(f):
    with open(os.path.join(HERE, "corrections.json")) as fh:
        corr = json.load(fh)
    for c in corr:
        m = pd.Series(True, index=f.index)
        for k, v in c["key"].items():
            m &= f[k] == v
        assert m.sum() == 1, c
        if c["op"] == "delete":
            f = f[~m]
        elif c["column"] in DEC1:
            old = f.loc[m, c["column"]].iloc[0]
            assert (pd.isna(old) and c["old"] is None) or old == int(Decimal(c["old"]) * 10), c
            f.loc[m, c["column"]] = int(Decimal(c["new"]) * 10)
        else:
            old = f.loc[m, c["column"]].iloc[0]
            assert (pd.isna(old) and c["old"] is None) or old == c["old"], c
            f.loc[m, c["column"]] = c["new"]
    return f


def exact_avg(sum_tenths, n):
    if n == 0:
        return None
    with localcontext() as ctx:
        ctx.prec = 60
        q = Decimal(int(sum_tenths)) / Decimal(10) / Decimal(int(n))
        return q.quantize(Decimal("0.00001"), rounding=ROUND_DOWN)


def avg_frame(f, keys, col, name):
    g = f.groupby(keys, sort=False)[col]
    r = pd.DataFrame({"s": g.sum(min_count=1), "c": g.count()}).reset_index()
    r[name] = [exact_avg(0 if pd.isna(s) else s, c) for s, c in zip(r.s, r.c)]
    return r[keys + [name]]


def views(f, airlines, airports, planes):
    out = {}
    # 1
    g = f.groupby("carrier", sort=False)
    cd = avg_frame(f, ["carrier"], "arr_delay", "avg_arr_delay")
    cd = cd.merge(g["arr_delay"].max().rename("max_arr_delay").reset_index(), on="carrier")
    cd = cd.merge(g.size().rename("n").reset_index(), on="carrier")
    cd["max_arr_delay"] = [None if pd.isna(v) else Decimal(int(v)).scaleb(-1) for v in cd.max_arr_delay]
    out["carrier_delay"] = cd
    # 2
    rf = f.groupby(["origin", "dest"]).size().rename("n").reset_index()
    out["route_flights"] = rf
    # 3 (pandas merge would match NaN keys to NaN keys; SQL never matches a null)
    p = planes[planes.tailnum != ""][["tailnum", "manufacturer"]]
    fm = f[["year", "month", "day", "flight", "carrier", "origin", "tailnum"]].merge(
        p, on="tailnum", how="left")
    fm.loc[fm.tailnum.isna(), "manufacturer"] = None
    fm["manufacturer"] = fm.manufacturer.where(fm.manufacturer.notna(), None)
    out["flight_maker"] = fm.drop_duplicates()
    # 4
    td = rf.copy()
    td["k"] = td.groupby("origin")["n"].rank(method="min", ascending=False).astype("int64")
    out["top_dest"] = td[td.k <= 3][["origin", "dest", "n", "k"]]
    # 5
    adj = {}
    for o, d in set(zip(f.origin, f.dest)):
        adj.setdefault(o, set()).add(d)
    seen, todo = set(), deque(["JFK"])
    while todo:
        for d in adj.get(todo.popleft(), ()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    out["reach_jfk"] = pd.DataFrame({"airport": sorted(seen)})
    # 6
    out["unknown_carrier"] = f[~f.carrier.isin(set(airlines.carrier))][
        ["year", "month", "day", "flight", "carrier", "origin"]].drop_duplicates()
    out["unknown_dest"] = f[~f.dest.isin(set(airports.faa))][["dest"]].drop_duplicates()
    # 7
    out["avg_dep_delay_by_origin_month"] = avg_frame(f, ["origin", "month"], "dep_delay", "avg_dep_delay")
    return out


def rows_sorted(df):
    df = df.reset_index(drop=True)
    keys = pd.DataFrame(index=df.index)
    for c in df.columns:
        col = df[c]
        if col.map(lambda v: isinstance(v, Decimal)).any():
            keys[c] = pd.array([pd.NA if v is None or pd.isna(v) else v for v in col], dtype=object)
            keys[c] = [float("nan") if v is pd.NA else v for v in keys[c]]  # Decimal compares exactly
        else:
            keys[c] = col
    order = keys.sort_values(list(df.columns), na_position="last", kind="mergesort").index
    rows = []
    for i in order:
        r = []
        for v in df.loc[i]:
            if v is None or (not isinstance(v, (str, Decimal)) and pd.isna(v)):
                r.append("")
            elif isinstance(v, Decimal):
                r.append(format(v, "f"))
            else:
                r.append(str(v))
        rows.append(r)
    return [list(df.columns)] + rows


def main():
    airlines, airports, planes = read("airlines"), read("airports"), read("planes")
    f = load_flights()
    checked = 0
    for outdir, fl in [(OUT, f), (os.path.join(OUT, "after"), apply_corrections(f.copy()))]:
        for name, df in views(fl, airlines, airports, planes).items():
            with open(os.path.join(outdir, f"{name}.csv"), newline="") as fh:
                want = list(csv.reader(fh))
            got = rows_sorted(df)
            if got != want:
                bad = next((i, a, b) for i, (a, b) in enumerate(zip(got, want)) if a != b) if len(got) == len(want) \
                    else (len(got), len(want))
                sys.exit(f"MISMATCH {outdir}/{name}.csv: {bad}")
            checked += 1
    print(f"check_pandas: all {checked} files agree (pandas {pd.__version__})", file=sys.stderr)


if __name__ == "__main__":
    main()
