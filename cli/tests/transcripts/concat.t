# concat(x, "sep"): a group's distinct str values of x in byte order, joined by the
# separator; maintained by re-reading each touched group's values.
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

# concat joins strs: an int is a type error.
$ rnt define bad_concat.rnt
! error: type mismatch: `concat` needs a str, but `a` is int
!  --> bad_concat.rnt:3:19
!   |
! 3 | amounts(c, concat(a, ", ")) :- orders(_, c, a).
!   |                   ^
[exit 1]

# The separator is a string literal, nothing else.
$ rnt define bad_separator.rnt
! error: `concat` takes a separator string literal, as in `concat(x, ", ")`, found `c`
!  --> bad_separator.rnt:3:20
!   |
! 3 | noted(c, concat(t, c)) :- notes(_, c, t).
!   |                    ^
[exit 1]

$ rnt define concat.rnt
committed 5fdc1e2c14ed (state 2d7b5d1c1f43): define concat.rnt

$ rnt program
relation customers(id: int, plan: str).
relation notes(id: int, customer: int, note: str).
relation orders(id: int, customer: int, amount: int).
view customer_notes(customer: int, notes: str).
view plan_notes(plan: str, notes: str, n: int, distinct: int).

customer_notes(c, concat(t, "\n")) :- notes(_, c, t).
plan_notes(p, concat(t, ", "), count(), count_distinct(t)) :- customers(c, p), notes(_, c, t).

$ rnt import customers customers.csv
committed ebd50cb6c665 (state 4b531433fdb1): customers +3 -0

$ rnt commit -m "notes" '+notes(1, 7, "late")' '+notes(2, 7, "gift")' '+notes(3, 8, "late")' '+notes(4, 9, "bulk")'
committed f98ad57c2706 (state 3d2d6603edd8): notes +4 -0

$ rnt show plan_notes
plan  notes       n  distinct
free  late        1         1
pro   gift, late  2         2
team  bulk        1         1
(3 tuples)

# A note customer 7 already has: one more note, the same concatenation.
$ rnt commit -m "again" '+notes(5, 7, "late")'
committed 74cc8cf8da75 (state 466b75d72476): notes +1 -0

$ rnt show plan_notes
plan  notes       n  distinct
free  late        1         1
pro   gift, late  3         2
team  bulk        1         1
(3 tuples)

# "hurry" sorts between "gift" and "late"; customer 8's only note goes, and with it the
# "free" group; the empty note sorts first.
$ rnt commit -m "change" '+notes(6, 7, "hurry")' '-notes(3, 8, "late")' '+notes(7, 9, "")'
committed b60cfba5e2ca (state 89be1bdd4199): notes +2 -1

$ rnt show plan_notes --format json
[
  ["pro", "gift, hurry, late", 4, 3],
  ["team", ", bulk", 2, 2]
]

$ rnt diff HEAD~1 HEAD plan_notes
-plan_notes("free", "late", 1, 1)
-plan_notes("pro", "gift, late", 3, 2)
+plan_notes("pro", "gift, hurry, late", 4, 3)
-plan_notes("team", "bulk", 1, 1)
+plan_notes("team", ", bulk", 2, 2)

$ rnt show customer_notes --format csv
customer,notes
7,"gift
hurry
late"
9,"
bulk"

# An update: note 2 is now "Gift", and capitals sort before lower case (byte order).
$ rnt commit -m "update" '-notes(2, 7, "gift")' '+notes(2, 7, "Gift")'
committed c86b9da974b8 (state d2dbc52b2c12): notes +1 -1

$ rnt show customer_notes
customer  notes
       7  Gift\nhurry\nlate
       9  \nbulk
(2 tuples)

# An ad-hoc query may concatenate too.
$ rnt query 'q(concat(p, "|")) :- customers(_, p).'
concat
free|pro|team
(1 tuple)

# A view added over the data is backfilled by define, and verify recomputes it.
$ rnt define backfill.rnt
committed e8d746ec3b2a (state 7a81a69ef475): define backfill.rnt

$ rnt show quoted --format json
[
  [7, "Gift \"\\ hurry \"\\ late"],
  [9, " \"\\ bulk"]
]

$ rnt program
relation customers(id: int, plan: str).
relation notes(id: int, customer: int, note: str).
relation orders(id: int, customer: int, amount: int).
view customer_notes(customer: int, notes: str).
view plan_notes(plan: str, notes: str, n: int, distinct: int).
view quoted(customer: int, notes: str).

customer_notes(c, concat(t, "\n")) :- notes(_, c, t).
plan_notes(p, concat(t, ", "), count(), count_distinct(t)) :- customers(c, p), notes(_, c, t).
quoted(c, concat(t, " \"\\ ")) :- notes(_, c, t).

$ rnt verify
verified: 3 materialized views equal their recomputation (customer_notes, plan_notes, quoted)
