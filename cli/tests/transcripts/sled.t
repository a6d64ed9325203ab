# The sled backend answers as the pack backend does: a state's hash does not depend on
# the backend (the define's state is shop.t's, a9621694e0f9), nor do outputs and checks.
$ rnt init --backend sled
initialized an empty rnt store in [DIR]/.rnt (sled backend)

$ rnt define shop.rnt
committed 613fde249cce (state a9621694e0f9): define shop.rnt

$ rnt import customers customers.csv
committed 1f1127687188 (state 3b109e865fdc): customers +3 -0

$ rnt import orders orders.csv
committed 0996e579cf40 (state ac298fd450c3): orders +5 -0

$ rnt show plan_total
plan  total  n
free     15  1
pro     180  2
team   2140  2
(3 tuples)

$ rnt status
branch  main
commit  0996e579cf406321b42466b6bba938770b382755c7418fb5b80c1980d07d8336
state   ac298fd450c33d6c88b3f2a73e85cf5689dc3defad363a564c5e765481fb3018

relation    kind      count  root
customers   relation      3  d123dd9fb996
order_plan  view          5  180eb3736ec8
orders      relation      5  4f33138d23d7
orphan      denial        -  -
plan_total  view          3  5b3c479a75e2

$ rnt verify
verified: 2 materialized views equal their recomputation (order_plan, plan_total)
