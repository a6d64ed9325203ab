# Each error message, with its exit code (DESIGN.md: 1 a user error, usage included;
# 2 a refusal by a denial; 3 corruption).
$ rnt status
! error: no rnt store found here or in any parent folder (run `rnt init`)
[exit 1]

$ rnt verify
! error: no rnt store found here or in any parent folder (run `rnt init`)
[exit 1]

$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

$ rnt init
! error: a store already exists at [DIR]/.rnt
[exit 1]

$ rnt verify
verified: no materialized views to check

$ rnt define syntax.rnt
! error: expected `.` at the end of the declaration, found `v`
!  --> syntax.rnt:2:15
!   |
! 2 | view v(x: int)
!   |               ^
[exit 1]

$ rnt define unsafe.rnt
! error: unsafe variable `y`: not bound by a positive atom or an assignment
!  --> unsafe.rnt:3:6
!   |
! 3 | v(x, y) :- r(x).
!   |      ^
!   = help: every head variable must be bound by a positive atom or an assignment
[exit 1]

$ rnt define unknown.rnt
! error: unknown relation `rr`
!  --> unknown.rnt:3:9
!   |
! 3 | v(x) :- rr(x).
!   |         ^^
!   = help: declare it with `relation`, `view`, `ephemeral` or `denial`
[exit 1]

$ rnt define missing.rnt
! error: cannot read missing.rnt: No such file or directory (os error 2)
[exit 1]

$ rnt define shop.rnt
committed 613fde249cce (state a9621694e0f9): define shop.rnt

$ rnt commit -m "" '+orders(1, 7, 30)'
! error: empty commit message: say what the commit does with -m MSG
[exit 1]

$ rnt commit -m "no changes"
nothing to commit

$ rnt commit -m typo '+order(1, 7, 30)'
! error: argument 1, line 1: unknown relation `order`
[exit 1]

$ rnt commit -m arity '+orders(1, 7)'
! error: argument 1, line 1: orders takes 3 values, found 2
[exit 1]

$ rnt commit -m type '+orders(1, "seven", 30)'
! error: argument 1, line 1: value 2 of orders (customer) must be int, found "seven"
[exit 1]

$ rnt commit -m derived '+plan_total("pro", 1, 1)'
! error: argument 1, line 1: `plan_total` is a view: derived relations change only through their rules
[exit 1]

$ rnt commit -m syntax 'orders(1, 7, 30)'
! error: argument 1, line 1, column 1: expected `+`, `-` or `~` at the start of a change, found `orders`
[exit 1]

$ rnt commit -m file -f missing.txt
! error: cannot read missing.txt: No such file or directory (os error 2)
[exit 1]

$ rnt commit -m file -f bad_changes.txt
! error: bad_changes.txt, line 2, column 13: expected `,` or `)` after value, found end of line
[exit 1]

$ rnt import customers missing.csv
! error: cannot read missing.csv: No such file or directory (os error 2)
[exit 1]

$ rnt import customers bad_header.csv
! error: bad_header.csv, line 1: unknown column `colour` in the header (customers has id, plan; --ignore-columns skips the others)
[exit 1]

$ rnt import customers bad_value.csv
! error: bad_value.csv, line 3, column id: expected an int, found `lots`
[exit 1]

$ rnt import nowhere customers.csv
! error: unknown relation `nowhere` (relations: customers, order_plan, orders, orphan, plan_total)
[exit 1]

# A view is filled by its rules, never by an import.
$ rnt import plan_total plan_total.csv
! error: `plan_total` is a view: import fills base relations only
[exit 1]

$ rnt show plan_totl
! error: unknown relation `plan_totl` (relations: customers, order_plan, orders, orphan, plan_total)
[exit 1]

$ rnt show plan_total --at HEAD~5
! error: `HEAD~5`: past the root commit; the history has only 0 commit(s) before `HEAD`
[exit 1]

$ rnt show plan_total --at nosuchref
! error: unknown reference `nosuchref`: not HEAD, a branch, a tag, or a hex commit id or state hash
[exit 1]

$ rnt query 'q(x, y) :- orders(x, _, _).'
! error: unsafe variable `y`: not bound by a positive atom or an assignment
!  --> query:1:6
!   |
! 1 | q(x, y) :- orders(x, _, _).
!   |      ^
!   = help: every head variable must be bound by a positive atom or an assignment
[exit 1]

$ rnt query 'q(x) :- order(x, _, _).'
! error: unknown relation `order`
!  --> query:1:9
!   |
! 1 | q(x) :- order(x, _, _).
!   |         ^^^^^
!   = help: did you mean `orders`?
[exit 1]

$ rnt query 'q(x) :- orders(x, _, _)'
! error: expected `,` or `.` after a body literal, found end of input
!  --> query:1:24
!   |
! 1 | q(x) :- orders(x, _, _)
!   |                        ^
[exit 1]

$ rnt diff HEAD nosuchref
! error: unknown reference `nosuchref`: not HEAD, a branch, a tag, or a hex commit id or state hash
[exit 1]

$ rnt diff HEAD HEAD nosuchrel
! error: unknown relation `nosuchrel` (relations: customers, order_plan, orders, orphan, plan_total)
[exit 1]

$ rnt comit -m x
! error: unrecognized subcommand 'comit' (tip: a similar subcommand exists: 'commit') (usage: rnt [OPTIONS] <COMMAND>)
[exit 1]

$ rnt show
! error: the following required arguments were not provided: <REL> (usage: rnt show <REL>)
[exit 1]

$ rnt show plan_total --format yaml
! error: invalid value 'yaml' for '--format <FORMAT>' [possible values: table, csv, json, changes]
[exit 1]

$ rnt --memory-budget lots status
! error: `lots` is not a size: use e.g. 512M, 2G or none
[exit 1]

$ rnt demo --store elsewhere
! error: `rnt demo` makes its own temporary store, so --store does not apply (use `rnt demo --keep` to keep it)
[exit 1]

# Arithmetic that overflows an int is an error, never a wrapped value: the commit whose
# maintenance overflows is refused.
$ rnt define overflow.rnt
committed 3a61aee81550 (state 69d7b934cc6c): define overflow.rnt

$ rnt commit -m huge '+orders(1, 7, 9223372036854775807)'
! error: rule `doubled(i, t) :- orders(i, _, a), t = a * 2.`: integer overflow in 9223372036854775807 * 2
[exit 1]

$ rnt log --relation nosuch
! error: unknown relation `nosuch` (relations: customers, doubled, orders)
[exit 1]

$ rnt diff HEAD~9
! error: `HEAD~9`: past the root commit; the history has only 1 commit(s) before `HEAD`
[exit 1]

$ rnt explain orders
! error: `orders` is a base relation: it has no rules to explain (explain a view, an ephemeral relation or a denial)
[exit 1]

$ rnt explain plan_totl
! error: unknown relation `plan_totl` (relations: customers, doubled, orders)
[exit 1]

$ rnt explain plan_total --at nosuchref
! error: unknown reference `nosuchref`: not HEAD, a branch, a tag, or a hex commit id or state hash
[exit 1]

$ rnt program --at HEAD^^^^^^^^^
! error: `HEAD^^^^^^^^^`: past the root commit; the history has only 1 commit(s) before `HEAD`
[exit 1]
