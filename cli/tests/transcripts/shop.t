# The walk-through of examples/shop: every subcommand, in each of its output formats.
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

$ rnt status
branch  main
commit  none (no commits yet)
state   558de9ca0c3f4f253f02194bb6464478e36c8d57646a04210dd3bc11cc907339
no relations (define a program with `rnt define`)

$ rnt define shop.rnt
committed 613fde249cce (state a9621694e0f9): define shop.rnt

$ rnt commit -m "first customer and order" '+customers(7, "pro")' '+orders(1, 7, 30)'
committed 3f09e9f5fd92 (state 193c4d5a384f): customers +1 -0, orders +1 -0

$ rnt import customers customers.csv
committed a36118576c33 (state 8e6e89b0cd2b): customers +2 -0

$ rnt import orders orders.csv
committed 5a8764ad6e27 (state 26a13d096e86): orders +5 -0

$ rnt show plan_total
plan  total  n
free     15  1
pro     210  3
team   2140  2
(3 tuples)

$ rnt show plan_total --format csv
plan,total,n
free,15,1
pro,210,3
team,2140,2

$ rnt show plan_total --format json
[
  ["free", 15, 1],
  ["pro", 210, 3],
  ["team", 2140, 2]
]

$ rnt show orders --at HEAD~2
id  customer  amount
 1         7      30
(1 tuple)

# A commit that breaks the denial is refused, whole.
$ rnt commit -m "an order for nobody" '+orders(10, 99, 5)'
! error: denial orphan violated by orphan(10)
[exit 2]

$ rnt commit --stats -m "a change file" -f changes.txt
committed 3127042aac68 (state d58aec23814d): customers +1 -0, orders +2 -1
stats: nodes_written=6 nodes_read=40 nodes_fetched=6 entries_read=35 bytes_written=1105
stats: base customers,orders: entries_read=20 nodes_read=16 nodes_written=3
stats: counting order_plan: entries_read=6 nodes_read=10 nodes_written=1
stats: aggregate plan_total: entries_read=7 nodes_read=12 nodes_written=2
stats: denial orphan: entries_read=2 nodes_read=2 nodes_written=0

$ rnt log
commit        state         time                  message                              changes
3127042aac68  d58aec23814d  2026-01-01T00:00:00Z  a change file                        customers +1 -0, orders +2 -1
5a8764ad6e27  26a13d096e86  2026-01-01T00:00:00Z  import orders from orders.csv        orders +5 -0
a36118576c33  8e6e89b0cd2b  2026-01-01T00:00:00Z  import customers from customers.csv  customers +2 -0
3f09e9f5fd92  193c4d5a384f  2026-01-01T00:00:00Z  first customer and order             customers +1 -0, orders +1 -0
613fde249cce  a9621694e0f9  2026-01-01T00:00:00Z  define shop.rnt                      -

$ rnt log --format json
[
  {
    "commit": "3127042aac6854364baf26cdad098a2a8803b47bc5a4a450fe5a2e84a635d971",
    "state": "d58aec23814d39b5d0cb79c68ce9ed18d9bdec7083763b9910eb3fb2a9f2ad88",
    "parents": ["5a8764ad6e27c7856dcccefc833d8b7e7ef272382e77eb54b462dffa6cb2818f"],
    "time": "2026-01-01T00:00:00Z",
    "message": "a change file",
    "changes": {
      "customers": {"inserted": 1, "deleted": 0},
      "orders": {"inserted": 2, "deleted": 1}
    },
    "stats": [
      {"relation": "customers,orders", "operator": "base", "entries_read": 20, "nodes_read": 16, "nodes_written": 3},
      {"relation": "order_plan", "operator": "counting", "entries_read": 6, "nodes_read": 10, "nodes_written": 1},
      {"relation": "plan_total", "operator": "aggregate", "entries_read": 7, "nodes_read": 12, "nodes_written": 2},
      {"relation": "orphan", "operator": "denial", "entries_read": 2, "nodes_read": 2, "nodes_written": 0}
    ]
  },
  {
    "commit": "5a8764ad6e27c7856dcccefc833d8b7e7ef272382e77eb54b462dffa6cb2818f",
    "state": "26a13d096e8684dfa71333c41079773024433b8071a8374107004ce698ac656b",
    "parents": ["a36118576c333313b47db1329c30d81856434766c5cfb1d220f76d432bd67f3a"],
    "time": "2026-01-01T00:00:00Z",
    "message": "import orders from orders.csv",
    "changes": {
      "orders": {"inserted": 5, "deleted": 0}
    },
    "stats": [
      {"relation": "orders", "operator": "base", "entries_read": 7, "nodes_read": 7, "nodes_written": 1},
      {"relation": "order_plan", "operator": "counting", "entries_read": 8, "nodes_read": 13, "nodes_written": 1},
      {"relation": "plan_total", "operator": "aggregate", "entries_read": 9, "nodes_read": 13, "nodes_written": 2},
      {"relation": "orphan", "operator": "denial", "entries_read": 5, "nodes_read": 5, "nodes_written": 0}
    ]
  },
  {
    "commit": "a36118576c333313b47db1329c30d81856434766c5cfb1d220f76d432bd67f3a",
    "state": "8e6e89b0cd2bc166f11c72561173b6dd7661aa2d28eb15bdc58341ee88fdc4e8",
    "parents": ["3f09e9f5fd927ac68143a59a50da8b267f83d6f5ad8869f5ca2512184c8bfb6c"],
    "time": "2026-01-01T00:00:00Z",
    "message": "import customers from customers.csv",
    "changes": {
      "customers": {"inserted": 2, "deleted": 0}
    },
    "stats": [
      {"relation": "customers", "operator": "base", "entries_read": 4, "nodes_read": 10, "nodes_written": 1},
      {"relation": "order_plan", "operator": "counting", "entries_read": 0, "nodes_read": 3, "nodes_written": 0},
      {"relation": "plan_total", "operator": "aggregate", "entries_read": 0, "nodes_read": 3, "nodes_written": 0},
      {"relation": "orphan", "operator": "denial", "entries_read": 0, "nodes_read": 0, "nodes_written": 0}
    ]
  },
  {
    "commit": "3f09e9f5fd927ac68143a59a50da8b267f83d6f5ad8869f5ca2512184c8bfb6c",
    "state": "193c4d5a384f1f9f2e14df864c4bb1aea21f2b1066bfdcf3cf9e5ce263c357e1",
    "parents": ["613fde249cce55e21622388bacc02fc85dcfe82e8218f385a14bcbaa24994900"],
    "time": "2026-01-01T00:00:00Z",
    "message": "first customer and order",
    "changes": {
      "customers": {"inserted": 1, "deleted": 0},
      "orders": {"inserted": 1, "deleted": 0}
    },
    "stats": [
      {"relation": "customers,orders", "operator": "base", "entries_read": 2, "nodes_read": 16, "nodes_written": 3},
      {"relation": "order_plan", "operator": "counting", "entries_read": 1, "nodes_read": 6, "nodes_written": 1},
      {"relation": "plan_total", "operator": "aggregate", "entries_read": 1, "nodes_read": 8, "nodes_written": 2},
      {"relation": "orphan", "operator": "denial", "entries_read": 1, "nodes_read": 1, "nodes_written": 0}
    ]
  },
  {
    "commit": "613fde249cce55e21622388bacc02fc85dcfe82e8218f385a14bcbaa24994900",
    "state": "a9621694e0f9fe81f1e54ee3040750cf5257d9e179bb1b869c63b3030fd264a0",
    "parents": [],
    "time": "2026-01-01T00:00:00Z",
    "message": "define shop.rnt",
    "changes": {},
    "stats": []
  }
]

$ rnt log -n 1
commit        state         time                  message        changes
3127042aac68  d58aec23814d  2026-01-01T00:00:00Z  a change file  customers +1 -0, orders +2 -1

$ rnt program
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view order_plan(id: int, plan: str).
view plan_total(plan: str, total: int, n: int).
denial orphan(id: int).

order_plan(i, p) :- customers(c, p), orders(i, c, _).
orphan(i) :- not customers(c, _), orders(i, c, _).
plan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).

$ rnt program --at HEAD~4 --format json
{"commit": "613fde249cce55e21622388bacc02fc85dcfe82e8218f385a14bcbaa24994900", "state": "a9621694e0f9fe81f1e54ee3040750cf5257d9e179bb1b869c63b3030fd264a0", "program": "relation customers(id: int, plan: str).\nrelation orders(id: int, customer: int, amount: int).\nview order_plan(id: int, plan: str).\nview plan_total(plan: str, total: int, n: int).\ndenial orphan(id: int).\n\norder_plan(i, p) :- customers(c, p), orders(i, c, _).\norphan(i) :- not customers(c, _), orders(i, c, _).\nplan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).\n"}

# explain: each rule's cost class (seed 001) and the plan of each delta term.
$ rnt explain order_plan
view order_plan (mode: counting)

rule 1: order_plan(i, p) :- customers(c, p), orders(i, c, _).
  cost: O(Σm) join
  term Δcustomers, from the delta of customers(c, p)
    step  op    literal          bound     served by
       1  join  customers(c, p)  -         Δcustomers
       2  join  orders(i, c, _)  customer  index 1,0,2 (customer, id, amount): prefix
  term Δorders, from the delta of orders(i, c, _)
    step  op    literal          bound  served by
       1  join  orders(i, c, _)  -      Δorders
       2  join  customers(c, p)  id     tree: prefix

$ rnt explain plan_total
view plan_total (mode: aggregate)

rule 1: plan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).
  cost: O(Σm) join, then O(K) per touched group
  trees: groups
  term Δcustomers, from the delta of customers(c, p)
    step  op    literal          bound     served by
       1  join  customers(c, p)  -         Δcustomers
       2  join  orders(_, c, a)  customer  index 1,0,2 (customer, id, amount): prefix
  term Δorders, from the delta of orders(_, c, a)
    step  op    literal          bound  served by
       1  join  orders(_, c, a)  -      Δorders
       2  join  customers(c, p)  id     tree: prefix

$ rnt explain orphan
denial orphan (mode: denial)

rule 1: orphan(i) :- not customers(c, _), orders(i, c, _).
  cost: O(Σm) anti-join, on insert-only deltas; stops at the first witness
  term Δorders, from the delta of orders(i, c, _)
    step  op    literal              bound  served by
       1  join  orders(i, c, _)      -      Δorders
       2  not   not customers(c, _)  id     tree: prefix
  term Δnot customers, from the delta of not customers(c, _), bound first: c
    step  op    literal              bound     served by
       1  flip  not customers(c, _)  id        tree: prefix
       2  join  orders(i, c, _)      customer  index 1,0,2 (customer, id, amount): prefix

$ rnt explain plan_total --at HEAD~4 --format json
{
  "relation": "plan_total",
  "kind": "view",
  "mode": "aggregate",
  "mode_rule": null,
  "commit": "613fde249cce55e21622388bacc02fc85dcfe82e8218f385a14bcbaa24994900",
  "state": "a9621694e0f9fe81f1e54ee3040750cf5257d9e179bb1b869c63b3030fd264a0",
  "rules": [
    {
      "rule": "plan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).",
      "cost": "O(Σm) join, then O(K) per touched group",
      "trees": ["groups"],
      "terms": [
        {
          "term": "Δcustomers",
          "delta": "customers(c, p)",
          "bound_first": [],
          "steps": [
            {
              "op": "join",
              "literal": "customers(c, p)",
              "relation": "customers",
              "bound": [],
              "served_by": "delta",
              "access": "delta"
            },
            {
              "op": "join",
              "literal": "orders(_, c, a)",
              "relation": "orders",
              "bound": ["customer"],
              "served_by": "index 1,0,2",
              "access": "prefix"
            }
          ]
        },
        {
          "term": "Δorders",
          "delta": "orders(_, c, a)",
          "bound_first": [],
          "steps": [
            {
              "op": "join",
              "literal": "orders(_, c, a)",
              "relation": "orders",
              "bound": [],
              "served_by": "delta",
              "access": "delta"
            },
            {
              "op": "join",
              "literal": "customers(c, p)",
              "relation": "customers",
              "bound": ["id"],
              "served_by": "tree",
              "access": "prefix"
            }
          ]
        }
      ]
    }
  ]
}

$ rnt diff --program HEAD~4
--- HEAD~4^
+++ HEAD~4
@@ -0,0 +1,9 @@
+relation customers(id: int, plan: str).
+relation orders(id: int, customer: int, amount: int).
+view order_plan(id: int, plan: str).
+view plan_total(plan: str, total: int, n: int).
+denial orphan(id: int).
+
+order_plan(i, p) :- customers(c, p), orders(i, c, _).
+orphan(i) :- not customers(c, _), orders(i, c, _).
+plan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).

$ rnt diff HEAD~4
! note: the program differs; see rnt program

$ rnt diff HEAD~1 HEAD
+customers(12, "東京")
-orders(2, 7, 120)
+orders(11, 8, 45)
+orders(13, 12, 7)

$ rnt diff --all HEAD~1 HEAD
+customers(12, "東京")
-order_plan(2, "pro")
+order_plan(11, "free")
+order_plan(13, "東京")
-orders(2, 7, 120)
+orders(11, 8, 45)
+orders(13, 12, 7)
-plan_total("free", 15, 1)
+plan_total("free", 60, 2)
-plan_total("pro", 210, 3)
+plan_total("pro", 90, 2)
+plan_total("東京", 7, 1)

$ rnt diff HEAD~1 HEAD plan_total
-plan_total("free", 15, 1)
+plan_total("free", 60, 2)
-plan_total("pro", 210, 3)
+plan_total("pro", 90, 2)
+plan_total("東京", 7, 1)

# Display width, not bytes, aligns the columns.
$ rnt show plan_total
plan  total  n
free     60  2
pro      90  2
team   2140  2
東京      7  1
(4 tuples)

$ rnt query 'big(i, a) :- orders(i, _, a), a > 500.'
i     a
4   940
6  1200
(2 tuples)

$ rnt query 'big(i, a) :- orders(i, _, a), a > 500.' --format csv
i,a
4,940
6,1200

$ rnt query 'big(i, a) :- orders(i, _, a), a > 500.' --format json
[
  [4, 940],
  [6, 1200]
]

$ rnt verify
verified: 2 materialized views equal their recomputation (order_plan, plan_total)

$ rnt status
branch  main
commit  3127042aac6854364baf26cdad098a2a8803b47bc5a4a450fe5a2e84a635d971
state   d58aec23814d39b5d0cb79c68ce9ed18d9bdec7083763b9910eb3fb2a9f2ad88

relation    kind      count  root
customers   relation      4  de5b3f504fd9
order_plan  view          7  d757e0b48590
orders      relation      7  278fbda2ed5f
orphan      denial        -  -
plan_total  view          4  2065eb5e060e

$ rnt status --format json
{
  "branch": "main",
  "commit": "3127042aac6854364baf26cdad098a2a8803b47bc5a4a450fe5a2e84a635d971",
  "state": "d58aec23814d39b5d0cb79c68ce9ed18d9bdec7083763b9910eb3fb2a9f2ad88",
  "relations": [
    {"name": "customers", "kind": "relation", "count": 4, "root": "de5b3f504fd9a48fff1eb8d05075870589a7ebac7e978ec095173022b0200a8d"},
    {"name": "order_plan", "kind": "view", "count": 7, "root": "d757e0b48590f14826aa79a876c865d0dbd35f4c1e5889ffcc4cc6ae9c80495e"},
    {"name": "orders", "kind": "relation", "count": 7, "root": "278fbda2ed5f58d8b1e734c041215aaf6fb7b8756f6d625ffb1b7456d0824a12"},
    {"name": "orphan", "kind": "denial", "count": null, "root": null},
    {"name": "plan_total", "kind": "view", "count": 4, "root": "2065eb5e060e8c7975dfc2bb6e03babccec24fa8a752e0d3328504f2e5a90945"}
  ]
}

$ rnt gc
kept 34 chunks, dropped 0; the store went from 15003 to 11850 bytes (3153 freed)

$ rnt gc --format json
{"bytes_after":11850,"bytes_before":11850,"chunks_dropped":0,"chunks_kept":34}
