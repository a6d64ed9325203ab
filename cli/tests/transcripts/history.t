# History as a git or Dolt user works with it (issue 26): the commit graph, why a row is
# there and who wrote it, a view's last change, and resolving a merge conflict.
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

$ rnt define history.rnt
committed bcc5b03c7120 (state d50fe303f367): define history.rnt

$ rnt import customers customers.csv
committed b2f892667326 (state b74435e8713a): customers +3 -0

$ rnt import orders orders.csv
committed 99dc701ac449 (state 8395b8456c97): orders +5 -0

# Three branches: main, side and fix, each with commits of its own.
$ rnt branch side
created branch side at 99dc701ac449

$ rnt branch fix
created branch fix at 99dc701ac449

$ rnt commit -m "main order" '+orders(10, 8, 70)'
committed 2b8721c08776 (state 381ebfe02758): orders +1 -0

$ rnt switch side
switched to branch side (99dc701ac449)

$ rnt commit -m "side order" '+orders(11, 9, 40)'
committed aaa0d4198aba (state a2c15f0c990b): orders +1 -0

$ rnt commit -m "side customer" '+customers(12, "pro")' '+orders(12, 12, 5)'
committed fcabc34516cf (state da557548a85a): customers +1 -0, orders +1 -0

$ rnt switch fix
switched to branch fix (99dc701ac449)

$ rnt commit -m "fix an amount" '-orders(3, 8, 15)' '+orders(3, 8, 16)'
committed 8543bc1a44e6 (state 5ddeb4f2315d): orders +1 -1

$ rnt switch main
switched to branch main (2b8721c08776)

# Two merges.
$ rnt merge side
committed 4643b7aa0ca4 (state 16ccd00e0596): customers +1 -0, orders +2 -0

$ rnt commit -m "after the merge" '+orders(13, 7, 9)'
committed 43b9b9e0d8fb (state 9233d84b71a2): orders +1 -0

$ rnt merge fix -m "Merge fix"
committed a900fedebba2 (state e67d4a3ad377): orders +1 -1

# `log` follows first parents; `--graph` every parent, drawn as git draws it.
$ rnt log
commit        state         time                  message                              changes
a900fedebba2  e67d4a3ad377  2026-01-01T00:00:00Z  Merge fix                            orders +1 -1
43b9b9e0d8fb  9233d84b71a2  2026-01-01T00:00:00Z  after the merge                      orders +1 -0
4643b7aa0ca4  16ccd00e0596  2026-01-01T00:00:00Z  Merge side                           customers +1 -0, orders +2 -0
2b8721c08776  381ebfe02758  2026-01-01T00:00:00Z  main order                           orders +1 -0
99dc701ac449  8395b8456c97  2026-01-01T00:00:00Z  import orders from orders.csv        orders +5 -0
b2f892667326  b74435e8713a  2026-01-01T00:00:00Z  import customers from customers.csv  customers +3 -0
bcc5b03c7120  d50fe303f367  2026-01-01T00:00:00Z  define history.rnt                   -

$ rnt log --graph
*   a900fedebba2 (HEAD -> main) Merge fix  [orders +1 -1]
|\
| * 8543bc1a44e6 (fix) fix an amount  [orders +1 -1]
* | 43b9b9e0d8fb after the merge  [orders +1 -0]
* |   4643b7aa0ca4 Merge side  [customers +1 -0, orders +2 -0]
|\ \
| * | fcabc34516cf (side) side customer  [customers +1 -0, orders +1 -0]
| * | aaa0d4198aba side order  [orders +1 -0]
| |/
* | 2b8721c08776 main order  [orders +1 -0]
|/
* 99dc701ac449 import orders from orders.csv  [orders +5 -0]
* b2f892667326 import customers from customers.csv  [customers +3 -0]
* bcc5b03c7120 define history.rnt

$ rnt tag v1 HEAD~1
created tag v1 (at 43b9b9e0d8fb)

$ rnt branch late fix
created branch late at 8543bc1a44e6

$ rnt switch late
switched to branch late (8543bc1a44e6)

$ rnt commit -m "late order" '+orders(14, 9, 1)'
committed 121f0fb7a75f (state 18af1d83f383): orders +1 -0

$ rnt switch main
switched to branch main (a900fedebba2)

# `--all` starts from every branch and tag; `--views` adds the views' change counts.
$ rnt log --graph --all --views
* 121f0fb7a75f (late) late order  [orders +1 -0]  [views: order_plan +1 -0, plan_total +1 -1]
| *   a900fedebba2 (HEAD -> main) Merge fix  [orders +1 -1]  [views: plan_total +1 -1]
| |\
|_|/
* | 8543bc1a44e6 (fix) fix an amount  [orders +1 -1]  [views: plan_total +1 -1]
| * 43b9b9e0d8fb (tag: v1) after the merge  [orders +1 -0]  [views: order_plan +1 -0, plan_total +1 -1]
| *   4643b7aa0ca4 Merge side  [customers +1 -0, orders +2 -0]  [views: order_plan +2 -0, plan_total +2 -2, top2 +1 -0]
| |\
| | * fcabc34516cf (side) side customer  [customers +1 -0, orders +1 -0]  [views: order_plan +1 -0, plan_total +1 -1, top2 +1 -0]
| | * aaa0d4198aba side order  [orders +1 -0]  [views: order_plan +1 -0, plan_total +1 -1]
|_|/
| * 2b8721c08776 main order  [orders +1 -0]  [views: order_plan +1 -0, plan_total +1 -1, top2 +2 -1]
|/
* 99dc701ac449 import orders from orders.csv  [orders +5 -0]  [views: order_plan +5 -0, plan_total +3 -0, top2 +5 -0]
* b2f892667326 import customers from customers.csv  [customers +3 -0]
* bcc5b03c7120 define history.rnt

$ rnt log --all --views -n 3
commit        state         time                  message        changes       views
121f0fb7a75f  18af1d83f383  2026-01-01T00:00:00Z  late order     orders +1 -0  order_plan +1 -0, plan_total +1 -1
a900fedebba2  e67d4a3ad377  2026-01-01T00:00:00Z  Merge fix      orders +1 -1  plan_total +1 -1
8543bc1a44e6  5ddeb4f2315d  2026-01-01T00:00:00Z  fix an amount  orders +1 -1  plan_total +1 -1

$ rnt log --graph --all -n 2 --format json
[
  {
    "commit": "121f0fb7a75f486f2698bc475e6d508db220afdb31a681af2a97f8b3d375a89d",
    "state": "18af1d83f383e9fd8201e30062a7581cc920b54abfcc40c2aa71685459855bfc",
    "parents": ["8543bc1a44e661ff6e7a3e0b2d9a3f4b6666f253384d208db2a2aaa19618142b"],
    "time": "2026-01-01T00:00:00Z",
    "message": "late order",
    "changes": {
      "orders": {"inserted": 1, "deleted": 0}
    },
    "stats": [
      {"relation": "orders", "operator": "base", "entries_read": 11, "nodes_read": 11, "nodes_written": 3},
      {"relation": "order_plan", "operator": "counting", "entries_read": 1, "nodes_read": 5, "nodes_written": 1},
      {"relation": "plan_total", "operator": "aggregate", "entries_read": 2, "nodes_read": 7, "nodes_written": 2},
      {"relation": "top2", "operator": "window", "entries_read": 3, "nodes_read": 2, "nodes_written": 0},
      {"relation": "orphan", "operator": "denial", "entries_read": 1, "nodes_read": 1, "nodes_written": 0}
    ]
  },
  {
    "commit": "a900fedebba2d4ef52cfab163bdce11c47ed8f669aa7ad368a4b6de36ddfe90e",
    "state": "e67d4a3ad37724a482912b00a0bea9fb4db68c9473fba9670ed4fee1e5fc628f",
    "parents": ["43b9b9e0d8fb56755d2e005a5ec956969fe4b9372d7270f5d85224981c41c4cc", "8543bc1a44e661ff6e7a3e0b2d9a3f4b6666f253384d208db2a2aaa19618142b"],
    "time": "2026-01-01T00:00:00Z",
    "message": "Merge fix",
    "changes": {
      "orders": {"inserted": 1, "deleted": 1}
    },
    "stats": [
      {"relation": "orders", "operator": "base", "entries_read": 28, "nodes_read": 15, "nodes_written": 4},
      {"relation": "order_plan", "operator": "counting", "entries_read": 0, "nodes_read": 1, "nodes_written": 0},
      {"relation": "plan_total", "operator": "aggregate", "entries_read": 5, "nodes_read": 8, "nodes_written": 2},
      {"relation": "top2", "operator": "window", "entries_read": 3, "nodes_read": 2, "nodes_written": 0},
      {"relation": "orphan", "operator": "denial", "entries_read": 1, "nodes_read": 1, "nodes_written": 0}
    ]
  }
]

# A view's changes in one commit: `diff REF REL`, a group's `-` before its `+`.
$ rnt diff HEAD plan_total
-plan_total("free", 85, 2)
+plan_total("free", 86, 2)

$ rnt diff HEAD orders --format json
[
  {
    "relation": "orders",
    "sign": "-",
    "tuple": [3, 8, 15]
  },
  {
    "relation": "orders",
    "sign": "+",
    "tuple": [3, 8, 16]
  }
]

$ rnt diff HEAD nosuch
! error: unknown reference `nosuch`: not HEAD, a branch, a tag, or a hex commit id or state hash
[exit 1]

# Why a row is there, down to base tuples, each with the commit that wrote it.
$ rnt why 'order_plan(12, "pro")'
order_plan(12, "pro")
  by order_plan(i, p) :- customers(c, p), orders(i, c, _).  with i = 12, p = "pro", c = 12
    customers(12, "pro")  written by fcabc34516cf (side customer)
    orders(12, 12, 5)  written by fcabc34516cf (side customer)

$ rnt why 'plan_total("team", 2180, 3)' --limit 2
plan_total("team", 2180, 3)
  by plan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).  with p = "team", a = 940, c = 9
    customers(9, "team")  written by b2f892667326 (import customers from customers.csv)
    orders(4, 9, 940)  written by 99dc701ac449 (import orders from orders.csv)
  by plan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).  with p = "team", a = 1200, c = 9
    customers(9, "team")  written by b2f892667326 (import customers from customers.csv)
    orders(6, 9, 1200)  written by 99dc701ac449 (import orders from orders.csv)
  (and more: --limit N)

$ rnt why 'top2(9, 4, 2)'
top2(9, 4, 2)
  by top2(c, i, k) :- k <= 2, k = rank() over (partition c order a desc), orders(i, c, a).  with c = 9, i = 4, k = 2, a = 940
    orders(4, 9, 940)  written by 99dc701ac449 (import orders from orders.csv)
    k = rank() over (partition c order a desc) is 2, decided by 1 row of orders before it in window order:
      orders(6, 9, 1200)  written by 99dc701ac449 (import orders from orders.csv)

$ rnt why 'top2(9, 4, 2)' --format json
{
  "relation": "top2",
  "tuple": [9, 4, 2],
  "derived": true,
  "commit": null,
  "instances": [
    {
      "rule": "top2(c, i, k) :- k <= 2, k = rank() over (partition c order a desc), orders(i, c, a).",
      "bindings": {"c": 9, "i": 4, "k": 2, "a": 940},
      "body": [
        {
          "relation": "orders",
          "tuple": [4, 9, 940],
          "derived": false,
          "commit": "99dc701ac44917467019089b9f19f8b6aef1703ea05252e22d67d26f6c52159d",
          "instances": [],
          "more": false
        }
      ],
      "window": {
        "literal": "k = rank() over (partition c order a desc)",
        "value": 2,
        "relation": "orders",
        "rows": [
          {
            "relation": "orders",
            "tuple": [6, 9, 1200],
            "commit": "99dc701ac44917467019089b9f19f8b6aef1703ea05252e22d67d26f6c52159d"
          }
        ],
        "after": false,
        "more": false
      }
    }
  ],
  "more": false
}

$ rnt why 'order_plan(12, "free")'
! error: order_plan(12, "free") is not in `order_plan` at this state
[exit 1]

$ rnt why 'order_plan(12, "pro")' --at side~1
! error: order_plan(12, "pro") is not in `order_plan` at this state
[exit 1]

$ rnt why 'orphan(1)'
! error: `orphan` is a denial: it holds no tuple in a committed state (a refused commit names its witnesses)
[exit 1]

# Who last wrote each tuple: a merged branch's tuple is its branch commit's.
$ rnt blame orders
id  customer  amount  commit        time                  message
 2         7     120  99dc701ac449  2026-01-01T00:00:00Z  import orders from orders.csv
 3         8      16  8543bc1a44e6  2026-01-01T00:00:00Z  fix an amount
 4         9     940  99dc701ac449  2026-01-01T00:00:00Z  import orders from orders.csv
 5         7      60  99dc701ac449  2026-01-01T00:00:00Z  import orders from orders.csv
 6         9    1200  99dc701ac449  2026-01-01T00:00:00Z  import orders from orders.csv
10         8      70  2b8721c08776  2026-01-01T00:00:00Z  main order
11         9      40  aaa0d4198aba  2026-01-01T00:00:00Z  side order
12        12       5  fcabc34516cf  2026-01-01T00:00:00Z  side customer
13         7       9  43b9b9e0d8fb  2026-01-01T00:00:00Z  after the merge

$ rnt blame customers 'customers(12, "pro")' --format json
[
  {
    "tuple": [12, "pro"],
    "commit": "fcabc34516cf2890218d1b9d7b95626400f8724e2881af90a515c05054754d5d",
    "time": "2026-01-01T00:00:00Z",
    "message": "side customer"
  }
]

$ rnt blame plan_total --at HEAD~1
plan  total  n  commit        time                  message
free     85  2  2b8721c08776  2026-01-01T00:00:00Z  main order
pro     194  4  43b9b9e0d8fb  2026-01-01T00:00:00Z  after the merge
team   2180  3  aaa0d4198aba  2026-01-01T00:00:00Z  side order

# A key conflict: both branches gave customers 9 and 12 new plans.
$ rnt branch other
created branch other at a900fedebba2

$ rnt commit -m "ours" '+customers(9, "free")' '+customers(12, "team")'
committed 5731ab0f3b4f (state 53945731b3c1): customers +2 -2

$ rnt switch other
switched to branch other (a900fedebba2)

$ rnt commit -m "theirs" '+customers(9, "enterprise")' '+customers(12, "free")' '+orders(15, 7, 3)'
committed 138fea363de7 (state ae52265e9804): customers +2 -2, orders +1 -0

$ rnt switch main
switched to branch main (5731ab0f3b4f)

$ rnt merge other
! error: cannot merge `other`: 2 key(s) were given different tuples on both branches; nothing was written
! conflict in customers at key id=9: ours customers(9, "free"), theirs customers(9, "enterprise")
! conflict in customers at key id=12: ours customers(12, "team"), theirs customers(12, "free")
! resolve every key one way with `rnt merge other --ours` or `--theirs`, or per key: `rnt merge other --conflicts --format changes > picks.changes`, keep one line per key (ours, theirs, another tuple, or `-` to delete it), then `rnt merge other --resolve picks.changes`
[exit 4]

$ rnt merge other --conflicts
relation   key    ours                   theirs
customers  id=9   customers(9, "free")   customers(9, "enterprise")
customers  id=12  customers(12, "team")  customers(12, "free")
(2 conflicts)

$ rnt merge other --conflicts --format changes
# One line per key: keep ours, theirs (uncomment it and drop ours), another tuple with the key, or `-` to delete the key.
# customers id=9
+customers(9, "free")  # ours
#+customers(9, "enterprise")  # theirs
# customers id=12
+customers(12, "team")  # ours
#+customers(12, "free")  # theirs

$ rnt merge other --conflicts --format json
[
  {
    "relation": "customers",
    "key": {"id": 9},
    "ours": [9, "free"],
    "theirs": [9, "enterprise"]
  },
  {
    "relation": "customers",
    "key": {"id": 12},
    "ours": [12, "team"],
    "theirs": [12, "free"]
  }
]

$ rnt merge other --resolve nosuch.changes
! error: cannot read nosuch.changes: No such file or directory (os error 2)
[exit 1]

$ rnt merge other --ours --theirs
! error: the argument '--ours' cannot be used with '--theirs' (usage: rnt merge --ours <NAME>)
[exit 1]

$ rnt merge other --resolve picks.changes
committed 9b34d9b66725 (state 51ed44a19bcd): customers +1 -1, orders +1 -0

$ rnt show customers
id  plan
 7  pro
 8  free
 9  enterprise
12  team
(4 tuples)

$ rnt verify
verified: 3 materialized views equal their recomputation (order_plan, plan_total, top2)
