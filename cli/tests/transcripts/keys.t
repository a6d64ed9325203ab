# Keyed relations: `key(...)` in the program, upserts and deletes by key, keyed imports and
# `import --replace`.
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

$ rnt define badkey.rnt
! error: the key of `customers` names `idd`, which is not one of its attributes
!  --> badkey.rnt:1:48
!   |
! 1 | relation customers(id: int, plan: str) key(id, idd).
!   |                                                ^^^
!   = help: the attributes of `customers` are id, plan
[exit 1]

$ rnt define keys.rnt
committed df96b91683ff (state 2622193f6759): define keys.rnt

$ rnt program
relation customers(id: int, plan: str) key(id).
relation orders(id: int, customer: int, amount: int).
relation tags(name: str, customer: int) key(customer).
view order_plan(id: int, plan: str).
view plan_total(plan: str, total: int, n: int).

order_plan(i, p) :- customers(c, p), orders(i, c, _).
plan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).

$ rnt import customers customers.csv
committed deadefa90920 (state 1669e657a175): customers +3 -0

$ rnt import orders orders.csv
committed 8492f338a7cb (state b3b5013432a1): orders +5 -0

# An insert replaces the tuple with its key: the delta holds the old tuple's deletion.
$ rnt commit -m upgrade '+customers(7, "team")' '+tags("vip", 7)'
committed e363fedc9c9f (state f6ca48dd0c91): customers +1 -1, tags +1 -0

$ rnt show customers
id  plan
 7  team
 8  free
 9  team
(3 tuples)

$ rnt show plan_total
plan  total  n
free     15  1
team   2320  4
(2 tuples)

# Inserting the present tuple changes nothing.
$ rnt commit -m again '+customers(7, "team")'
nothing to commit

# A delete by key, and a no-op exact delete of a tuple the key does not hold.
$ rnt commit -m "drop 9" '-customers(9, _)' '-customers(8, "pro")'
committed 73b3cd417835 (state 3c1b8887d4a0): customers +0 -1

$ rnt commit -m bad '-orders(2, _, _)'
! error: argument 1, line 1: `_` (value 2 of orders) is allowed only in a delete from a keyed relation, and orders has no key: a delete names the whole tuple
[exit 1]

$ rnt commit -m bad '-customers(_, "pro")'
! error: argument 1, line 1: `_` (value 1 of customers) stands for `id`, a key attribute: a delete by key names every key value (key(id))
[exit 1]

$ rnt commit -m bad '+customers(10, _)'
! error: argument 1, line 1, column 16: `_` is allowed only in a delete (`-r(7, _)` deletes by key) or an update (`~r(7, _, 3)`): an insert names every value
[exit 1]

$ rnt commit -m bad -f twice_changes.txt
! error: twice_changes.txt, line 3: customers key id=30 is already inserted on line 1 (a change set names each key at most once per sign, and an updated key nowhere else)
[exit 1]

# The explicit update form stays a change file: -old plus +new of one key.
$ rnt commit -m update -f keyed_changes.txt
committed b6d0ea5c5a23 (state 2ef41a596198): customers +1 -0

$ rnt show customers
id  plan
 7  team
 8  free
12  pro
(3 tuples)

# import upserts into a keyed relation.
$ rnt import customers upgrade.csv
committed 9899e0c15a52 (state ba485c9ef61d): customers +3 -2

$ rnt import customers twice.csv
! error: rows 1 and 3 give key id=20 of `customers` different values (a keyed relation holds one tuple per key; rows count from 1 after the header)
[exit 1]

# diff's output, replayed on its first state, gives the second.
$ rnt diff HEAD~3 HEAD
-customers(7, "team")
+customers(7, "pro")
-customers(9, "team")
+customers(12, "team")
+customers(13, "free")

# --replace makes the relation hold exactly the file's rows; the delta is the tree diff.
$ rnt import customers all_customers.csv --replace
committed a0a2fd2a959a (state 0ee131d25922): customers +3 -3

$ rnt show customers
id  plan
 7  team
 8  pro
13  free
14  free
(4 tuples)

$ rnt import orders orders_changed.csv --replace -m "one amount changed, one order gone"
committed 9b1420fa8358 (state 345ca01481ce): orders +1 -2

# The same file again: nothing to commit.
$ rnt import orders orders_changed.csv --replace
nothing to commit
(4 rows read; orders already holds exactly these tuples)

$ rnt show order_plan
id  plan
 2  team
 3  pro
 5  team
(3 tuples)

$ rnt verify
verified: 2 materialized views equal their recomputation (order_plan, plan_total)

# The key of a relation that holds tuples cannot change.
$ rnt define rekeyed.rnt
! error: cannot change the key of relation `customers`: it holds 4 tuples; `define` keeps base tuples as they are, use `rnt alter customers key COLUMN… (or key --none)`
[exit 1]

$ rnt log --format json -n 2
[
  {
    "commit": "9b1420fa8358f62b6eaae90c462c67feafde75ce19a8a307c5b8e697e136fa6a",
    "state": "345ca01481ce65c660f8a14712c9f861ebffe6a7adbc093cf2061c8b48c235c7",
    "parents": ["a0a2fd2a959a0634d4ae529d34e04e12b26f4551c25086eab6cafb54b959524f"],
    "time": "2026-01-01T00:00:00Z",
    "message": "one amount changed, one order gone",
    "changes": {
      "orders": {"inserted": 1, "deleted": 2}
    },
    "stats": [
      {"relation": "orders", "operator": "base", "entries_read": 9, "nodes_read": 7, "nodes_written": 1},
      {"relation": "order_plan", "operator": "counting", "entries_read": 1, "nodes_read": 2, "nodes_written": 0},
      {"relation": "plan_total", "operator": "aggregate", "entries_read": 6, "nodes_read": 9, "nodes_written": 2}
    ]
  },
  {
    "commit": "a0a2fd2a959a0634d4ae529d34e04e12b26f4551c25086eab6cafb54b959524f",
    "state": "0ee131d2592270cc1dab840b04d928e27123585f62b2c7047ed0f2f31cca2a45",
    "parents": ["9899e0c15a523243df6dd176b24235ba3b1f1ffbc6a81754cdc576d4a1997056"],
    "time": "2026-01-01T00:00:00Z",
    "message": "replace customers with all_customers.csv",
    "changes": {
      "customers": {"inserted": 3, "deleted": 3}
    },
    "stats": [
      {"relation": "customers", "operator": "base", "entries_read": 8, "nodes_read": 5, "nodes_written": 0},
      {"relation": "order_plan", "operator": "counting", "entries_read": 13, "nodes_read": 15, "nodes_written": 1},
      {"relation": "plan_total", "operator": "aggregate", "entries_read": 12, "nodes_read": 14, "nodes_written": 2}
    ]
  }
]
