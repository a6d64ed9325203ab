# Window literals: `v = F over (partition P… order O…)` in a view's body, maintained by
# re-reading each touched partition (old and new) and counting the difference.
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

# A window reads exactly one positive atom: join first in a view of its own.
$ rnt define two_atoms.rnt
! error: a rule with a window literal reads exactly one positive atom, its input, but this one reads 2
!  --> two_atoms.rnt:4:52
!   |
! 4 | …k) :- orders(i, c, a), customers(c, p), k = rank() over (partition p order a des…
!   |                                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
!   = help: join first in a view of its own, then window over that view
[exit 1]

# `partition` and `order` list variables of that atom.
$ rnt define foreign.rnt
! error: `b` in `partition` is not a variable of the input `orders(i, _, a)`
!  --> foreign.rnt:3:75
!   |
! 3 | … orders(i, _, a), b = a * 2, n = row_number() over (partition b order i), n = 1.
!   |                                                                ^
!   = help: `partition` and `order` list variables of the rule's positive atom
[exit 1]

$ rnt define shop.rnt
committed 613fde249cce (state a9621694e0f9): define shop.rnt

$ rnt import customers customers.csv
committed 1f1127687188 (state 3b109e865fdc): customers +3 -0

$ rnt import orders orders.csv
committed 0996e579cf40 (state ac298fd450c3): orders +5 -0

# Defined over the data: the views are backfilled.
$ rnt define windows.rnt
committed dd39783a2527 (state 274495774b80): define windows.rnt

$ rnt program
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view first_order(customer: int, id: int).
view gaps(customer: int, id: int, prev: int).
view plan_orders(plan: str, id: int, amount: int).
view running(customer: int, id: int, total: int).
view top2(plan: str, id: int, amount: int, k: int).

first_order(c, i) :- n = 1, n = row_number() over (partition c order i), orders(i, c, _).
gaps(c, i, p) :- orders(i, c, _), p = lag(i, 1, 0) over (partition c order i).
plan_orders(p, i, a) :- customers(c, p), orders(i, c, a).
running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
top2(p, i, a, k) :- k <= 2, k = rank() over (partition p order a desc), plan_orders(p, i, a).

$ rnt show top2
plan  id  amount  k
free   3      15  1
pro    2     120  1
pro    5      60  2
team   4     940  2
team   6    1200  1
(5 tuples)

$ rnt show running
customer  id  total
       7   2    120
       7   5    180
       8   3     15
       9   4    940
       9   6   2140
(5 tuples)

# A new biggest order for "team", and a tie for "pro" (both rank 1): only those partitions
# are re-read.
$ rnt commit -m "orders" '+orders(7, 9, 5000)' '+orders(8, 7, 120)'
committed 8e5bd68fa2ee (state 5d195685853f): orders +2 -0

$ rnt show top2
plan  id  amount  k
free   3      15  1
pro    2     120  1
pro    8     120  1
team   6    1200  2
team   7    5000  1
(5 tuples)

$ rnt show first_order
customer  id
       7   2
       8   3
       9   4
(3 tuples)

# An order before customer 7's first: its running totals all move.
$ rnt commit -m "early" '+orders(1, 7, 10)'
committed dcf9f07eb219 (state b411f5f02391): orders +1 -0

$ rnt show running --format csv
customer,id,total
7,1,10
7,2,130
7,5,190
7,8,310
8,3,15
9,4,940
9,6,2140
9,7,7140

$ rnt show gaps
customer  id  prev
       7   1     0
       7   2     1
       7   5     2
       7   8     5
       8   3     0
       9   4     0
       9   6     4
       9   7     6
(8 tuples)

$ rnt log -n 1 --format json
[
  {
    "commit": "dcf9f07eb219a84af8274190460054c338c9db30129dfd27e6a7dd914d3cbb7c",
    "state": "b411f5f023918ab080d6930003cf4bad35c8a225bf261bad5498adc5c1f2129b",
    "parents": ["8e5bd68fa2eee6a5b9d751f8504037804fd98e2f0f0edf9274af975a6494832e"],
    "time": "2026-01-01T00:00:00Z",
    "message": "early",
    "changes": {
      "orders": {"inserted": 1, "deleted": 0}
    },
    "stats": [
      {"relation": "orders", "operator": "base", "entries_read": 15, "nodes_read": 9, "nodes_written": 2},
      {"relation": "first_order", "operator": "window", "entries_read": 3, "nodes_read": 6, "nodes_written": 1},
      {"relation": "gaps", "operator": "window", "entries_read": 3, "nodes_read": 8, "nodes_written": 1},
      {"relation": "plan_orders", "operator": "counting", "entries_read": 2, "nodes_read": 7, "nodes_written": 2},
      {"relation": "running", "operator": "window", "entries_read": 8, "nodes_read": 14, "nodes_written": 2},
      {"relation": "top2", "operator": "window", "entries_read": 3, "nodes_read": 2, "nodes_written": 0}
    ]
  }
]

$ rnt explain top2
view top2 (mode: window)

rule 1: top2(p, i, a, k) :- k <= 2, k = rank() over (partition p order a desc), plan_orders(p, i, a).
  cost: O(K·k) top-k: the front of each touched partition, old, read once (k ≤ 2) in window order from `plan_orders`'s `index 0,2,1`, backward, the new front derived from it and the delta
  term per touched partition, p bound, bound first: p
    step  op      literal                                     bound  served by
       1  join    plan_orders(p, i, a)                        plan   tree: prefix
       2  window  k = rank() over (partition p order a desc)  -      -
       3  filter  k <= 2                                      -      -

# A row_number bounded by a constant over ascending order: top-k, reading each touched
# partition's front only.
$ rnt explain first_order
view first_order (mode: window)

rule 1: first_order(c, i) :- n = 1, n = row_number() over (partition c order i), orders(i, c, _).
  cost: O(K·k) top-k: the front of each touched partition, old, read once (k ≤ 1) in window order from `orders`'s `index 1,0,2`, the new front derived from it and the delta
  term per touched partition, c bound, bound first: c
    step  op      literal                                      bound     served by
       1  join    orders(i, c, _)                              customer  index 1,0,2 (customer, id, amount): prefix
       2  window  n = row_number() over (partition c order i)  -         -
       3  filter  n = 1                                        -         -

# A running sum over ascending order: a change reads its partition from the first changed
# row on, with the partition's total kept beside the view; an append reads the total only.
$ rnt explain running
view running (mode: window)

rule 1: running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
  cost: O(Δ) for appends · O(m − i) for a change at position i (running sum): each touched partition from its first changed row to its end, old, read in window order from `orders`'s `index 1,0,2`, with its total from `running`
  trees: running
  term per touched partition, c bound, bound first: c
    step  op      literal                                bound     served by
       1  join    orders(i, c, a)                        customer  index 1,0,2 (customer, id, amount): prefix
       2  window  t = sum(a) over (partition c order i)  -         -

# lag reads the rows within its offset of the change.
$ rnt explain gaps
view gaps (mode: window)

rule 1: gaps(c, i, p) :- orders(i, c, _), p = lag(i, 1, 0) over (partition c order i).
  cost: O(Δ·n) bounded frame (lag/lead, n = 1): the rows within n of each touched partition's changes, from n before the first to n after the last, old, read in window order from `orders`'s `index 1,0,2`
  term per touched partition, c bound, bound first: c
    step  op      literal                                      bound     served by
       1  join    orders(i, c, _)                              customer  index 1,0,2 (customer, id, amount): prefix
       2  window  p = lag(i, 1, 0) over (partition c order i)  -         -

$ rnt verify
verified: 5 materialized views equal their recomputation (first_order, gaps, plan_orders, running, top2)
