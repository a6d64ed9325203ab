# count_distinct(x): the number of distinct values of x among a group's matches, maintained
# from a match count per (group, value).
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

# count_distinct is an int, whatever it counts.
$ rnt define bad_distinct.rnt
! error: type mismatch: `count_distinct(a)` is int, but `spread.amounts` is str
!  --> bad_distinct.rnt:3:11
!   |
! 3 | spread(c, count_distinct(a)) :- orders(_, c, a).
!   |           ^^^^^^^^^^^^^^^^^
[exit 1]

$ rnt define distinct.rnt
committed d6105661789f (state de22b147fdde): define distinct.rnt

$ rnt program
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view plan_reach(plan: str, buyers: int, amounts: int, n: int).
view plans_of(customer: int, plans: int).

plan_reach(p, count_distinct(c), count_distinct(a), count()) :- customers(c, p), orders(_, c, a).
plans_of(c, count_distinct(p)) :- customers(c, p).

$ rnt import customers customers.csv
committed fdbefa9dc81b (state 75282f5bd223): customers +3 -0

$ rnt import orders orders.csv
committed 801b8f71374d (state 2812d3317845): orders +5 -0

$ rnt show plan_reach
plan  buyers  amounts  n
free       1        1  1
pro        1        2  2
team       1        2  2
(3 tuples)

$ rnt show plans_of
customer  plans
       7      1
       8      1
       9      1
(3 tuples)

# Customer 7 orders again at an amount it already paid: one more order for "pro", the same
# buyers and amounts.
$ rnt commit -m "again" '+orders(10, 7, 60)'
committed d3121fd376b2 (state 0af378a0a017): orders +1 -0

$ rnt show plan_reach
plan  buyers  amounts  n
free       1        1  1
pro        1        2  3
team       1        2  2
(3 tuples)

# A new amount for "pro"; customer 8's only order goes, and with it the "free" group.
$ rnt commit -m "change" '+orders(11, 7, 75)' '-orders(3, 8, 15)'
committed e79b349fea7c (state ca532179c10e): orders +1 -1

$ rnt show plan_reach --format json
[
  ["pro", 1, 3, 4],
  ["team", 1, 2, 2]
]

$ rnt diff HEAD~1 HEAD plan_reach
-plan_reach("free", 1, 1, 1)
-plan_reach("pro", 1, 2, 3)
+plan_reach("pro", 1, 3, 4)

# A second "pro" customer at an amount "pro" already has: one more buyer, the same amounts.
$ rnt commit -m "new customer" '+customers(10, "pro")' '+orders(12, 10, 60)'
committed 88f1172b263b (state b974f1f01dc5): customers +1 -0, orders +1 -0

$ rnt show plan_reach
plan  buyers  amounts  n
pro        2        3  5
team       1        2  2
(2 tuples)

# Customer 9 on a second plan: a second distinct plan for 9, and "basic" reached by 9.
$ rnt commit -m "second plan" '+customers(9, "basic")'
committed f702f9c20089 (state 111b769d993c): customers +1 -0

$ rnt show plans_of
customer  plans
       7      1
       8      1
       9      2
      10      1
(4 tuples)

$ rnt show plan_reach --format csv
plan,buyers,amounts,n
basic,1,2,2
pro,2,3,5
team,1,2,2

# An ad-hoc query may count distinct values too.
$ rnt query 'q(count_distinct(p)) :- customers(_, p).'
count_distinct
             4
(1 tuple)

# A view added over the data is backfilled by define, and verify recomputes it.
$ rnt define backfill.rnt
committed b7dfde30937d (state f0c1948d96ec): define backfill.rnt

$ rnt show amounts_of
customer  n
       7  3
       9  2
      10  1
(3 tuples)

$ rnt verify
verified: 3 materialized views equal their recomputation (amounts_of, plan_reach, plans_of)
