# Real data (DESIGN.md, "Real data"): decimals, dates, timestamps and null as they come,
# named columns, optional atoms, update and delete by key, import options; and each
# error, with its exit code.
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

$ rnt define ledger.rnt
committed f29ee2127232 (state 4c3deb5973aa): define ledger.rnt

$ rnt import accounts accounts.csv
committed 90ddc76c5f5f (state 2e4a1b6037ea): accounts +3 -0

$ rnt import entries entries.csv
committed adfff59cf09e (state 1b37db80a4fa): entries +4 -0

$ rnt show entries
id  account  amount  at                       memo
 1        1   12.50  2013-01-01T10:00:00Z     rent
 2        1   -0.50  2013-01-01T10:30:00Z     null
 3        2  100.00  2013-01-02T09:00:00Z
 4        1  100.00  2013-01-03T00:00:00.25Z  fee
(4 tuples)

$ rnt show balance
account  owner   total     average  entries  memos
      1  ana    112.00   37.333333        3      2
      2  bo     100.00  100.000000        1      1
(2 tuples)

$ rnt show unbooked
account  owner  entry
      1  ana        1
      1  ana        2
      1  ana        4
      2  bo         3
      3  cy      null
(5 tuples)

$ rnt show by_day --format json
[
  ["2013-01-01", 2],
  ["2013-01-02", 1],
  ["2013-01-03", 1]
]

$ rnt show open_accounts
id  year  month  review
 1  2013      1  2013-01-31
 3  2013      1  2013-02-08
(2 tuples)

$ rnt show accounts --format csv
id,owner,opened,closed
1,ana,2013-01-01,
2,bo,2013-01-05,2013-01-20
3,cy,2013-01-09,

$ rnt show entries --format changes
+entries(id: 1, account: 1, amount: 12.50, at: timestamp("2013-01-01T10:00:00Z"), memo: "rent")
+entries(id: 2, account: 1, amount: -0.50, at: timestamp("2013-01-01T10:30:00Z"), memo: null)
+entries(id: 3, account: 2, amount: 100.00, at: timestamp("2013-01-02T09:00:00Z"), memo: "")
+entries(id: 4, account: 1, amount: 100.00, at: timestamp("2013-01-03T00:00:00.25Z"), memo: "fee")

$ rnt query 'q(o, x) :- accounts(id: a, owner: o), optional entries(account: a, amount: x), x is not null, x > 10.'
o         x
ana   12.50
ana  100.00
bo   100.00
(3 tuples)

$ rnt commit -m fix '~entries(id: 2, memo: "refund")' '-accounts(id: 3)'
committed bc4c7c17c97f (state 2155f827935e): accounts +0 -1, entries +1 -1

$ rnt commit -m raise '~entries(id: 1, amount: 13)'
committed b21e236c3774 (state 6a85e4a42570): entries +1 -1

$ rnt show balance
account  owner   total     average  entries  memos
      1  ana    112.50   37.500000        3      3
      2  bo     100.00  100.000000        1      1
(2 tuples)

$ rnt import entries semicolons.txt --no-header --columns id,account,amount,at,memo --delimiter ';' --null NA
committed d9183d377159 (state 5e92707e57d8): entries +2 -0

$ rnt show entries --format json
[
  [1, 1, "13.00", "2013-01-01T10:00:00Z", "rent"],
  [2, 1, "-0.50", "2013-01-01T10:30:00Z", "refund"],
  [3, 2, "100.00", "2013-01-02T09:00:00Z", ""],
  [4, 1, "100.00", "2013-01-03T00:00:00.25Z", "fee"],
  [5, 1, "7.25", "2013-01-04T00:00:00Z", null],
  [6, 2, "1.00", "2013-01-04T00:00:00Z", "bonus"]
]

$ rnt import tags dupes.csv
committed 352ab829086c (state 4e9aebbbb04e): tags +2 -0
! 2 duplicate rows merged: a relation is a set; declare a key or an id column

$ rnt import accounts extra.csv --ignore-columns
committed 36dc986bc78c (state fa48a6560f43): accounts +1 -0
! ignored column not in accounts: branch

$ rnt verify
verified: 4 materialized views equal their recomputation (balance, by_day, open_accounts, unbooked)

# Errors.
$ rnt import accounts null_id.csv
! error: null_id.csv, line 2, column id: an empty field is null, and the column is `int`, not nullable
[exit 1]

$ rnt commit -m x '+accounts(id: 9, owner: null, opened: "2013-01-01")'
! error: argument 1, line 1: value 2 of accounts (owner) is null, but the column (str) is not nullable
[exit 1]

$ rnt commit -m x '+accounts(id: 9, owner: "x")'
! error: argument 1, line 1: an insert into accounts must name `opened`: it is `date`, not nullable (only a `?` column may be left out, and is then null)
[exit 1]

$ rnt import entries too_many_digits.csv
! error: too_many_digits.csv, line 2, column amount: 123456789.00 has too many digits for decimal(10, 2) (at most 8 before the point)
[exit 1]

$ rnt commit -m x '+entries(id: 9, account: 1, amount: 0.125, at: "2013-01-01T00:00:00Z")'
! error: argument 1, line 1: value 3 of entries (amount): 0.125 has more than 2 fractional digits (a decimal(10, 2) is never rounded)
[exit 1]

$ rnt import accounts bad_date.csv
! error: bad_date.csv, line 2, column opened: `2013-02-30` is not a date (YYYY-MM-DD)
[exit 1]

$ rnt import accounts timestamp_in_date.csv
! error: timestamp_in_date.csv, line 2, column opened: `2013-02-01T10:00:00Z` is a timestamp, not a date (a date is never truncated from one)
[exit 1]

$ rnt commit -m x '+accounts(id: 9, owner: "x", opened: date("2013-13-01"))'
! error: argument 1, line 1, column 38: `2013-13-01` is not a date (YYYY-MM-DD)
[exit 1]

$ rnt import accounts extra.csv
! error: extra.csv, line 1: unknown column `branch` in the header (accounts has id, owner, opened, closed; --ignore-columns skips the others)
[exit 1]

$ rnt commit -m x '~entries(id: 99, memo: "none")'
! error: argument 1, line 1: entries has no tuple with key id=99 to update; nothing was committed
[exit 1]

$ rnt commit -m x '+accounts(id: 9, ownr: "x", opened: "2013-01-01")'
! error: argument 1, line 1: accounts has no column `ownr`; did you mean `owner`?
[exit 1]

$ rnt commit -m x '+entries(id: 9, account: 42, amount: 1, at: "2013-01-01T00:00:00Z")'
! error: denial unknown_account violated by unknown_account(9)
[exit 2]

$ rnt import entries orphans.csv
! error: denial unknown_account violated by unknown_account(8) (from orphans.csv, line 3)
[exit 2]

$ rnt define x_is_null.rnt
! error: `c = null` compares with null, which is never true (null equals nothing)
!  --> x_is_null.rnt:3:40
!   |
! 3 | open(a) :- accounts(id: a, closed: c), c = null.
!   |                                        ^^^^^^^^
!   = help: write `c is null`
[exit 1]

$ rnt define unknown_column.rnt
! error: `accounts` has no column `ownr`
!  --> unknown_column.rnt:3:23
!   |
! 3 | owners(o) :- accounts(ownr: o).
!   |                       ^^^^
!   = help: did you mean `owner`?
[exit 1]

$ rnt define date_vs_int.rnt
! error: type mismatch: cannot compare date with int
!  --> date_vs_int.rnt:3:41
!   |
! 3 | early(a) :- accounts(id: a, opened: d), d < 20130105.
!   |                                         ^^^^^^^^^^^^
!   = help: `d` is date and `20130105` is int
[exit 1]

$ rnt define nullable_head.rnt
! error: `d` may be null, but `closed_on.d` is not nullable
!  --> nullable_head.rnt:3:14
!   |
! 3 | closed_on(a, d) :- accounts(id: a, closed: d).
!   |              ^
!   = help: declare it `date?`, or require a value in the body (`x is not null`)
[exit 1]
