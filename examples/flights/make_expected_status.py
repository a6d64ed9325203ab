"""Writes expected/cancelled_by_carrier.csv (and the same in expected/after/: the
corrections leave flights_status.csv alone) from flights_status.csv with Python's csv
module alone: the flights whose `cancelled` field is the text `True`, counted per carrier.
"""
import collections
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))

counts = collections.Counter()
with open(os.path.join(HERE, "flights_status.csv"), newline="") as f:
    for row in csv.DictReader(f):
        assert row["cancelled"] in ("True", "False"), row
        if row["cancelled"] == "True":
            counts[row["carrier"]] += 1
assert sum(counts.values()) == 82, counts

for folder in ("expected", os.path.join("expected", "after")):
    with open(os.path.join(HERE, folder, "cancelled_by_carrier.csv"), "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["carrier", "n"])
        for carrier in sorted(counts):
            out.writerow([carrier, counts[carrier]])
