# The clock: a program that mentions `now` carries a clock in each state (Unix seconds);
# `commit --clock T` sets it, a commit without it takes the later of the head's clock and
# its commit time, and it never goes back. A time window keeps an index by the time each
# row crosses its bound, and a clock step reads only the rows that enter or leave.
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

# `now` is compared, never stored: a value that changed with every clock step could not be
# maintained.
$ rnt define bad_clock.rnt
! error: `t` is computed from the clock `now`: it cannot be a head term
!  --> bad_clock.rnt:3:12
!   |
! 3 | stamped(i, t) :- orders_at(i, _, ts), t = now, ts > t - 60.
!   |            ^
!   = help: compare with the clock in the body, as in `ts > now - 604800`: a value that changed with every clock step could not be maintained
[exit 1]

$ rnt define clock.rnt --clock 1767200000
committed 0da9282660dd (state d353db8ef9ae): define clock.rnt
clock 1767200000 (2025-12-31T16:53:20Z)

$ rnt commit -m orders -f orders_at.txt --clock 1767200000
committed d3277d880f52 (state 1a1c0fa8eaf4): deadlines +1 -0, orders_at +4 -0
clock 1767200000 (2025-12-31T16:53:20Z)

$ rnt show recent
id  customer
 2         7
 3         8
 4         8
(3 tuples)

$ rnt status
branch  main
commit  d3277d880f5295291a8c5d2cdc432347584e131de0fb6d4260e24de7008538eb
state   1a1c0fa8eaf49cb19e6c966762f3251eb5306efbd068c675c4de5b840c030f55
clock   1767200000 (2025-12-31T16:53:20Z)

relation      kind      count  root
deadlines     relation      1  65c0e23885ca
done          relation      0  ccea657309e0
orders_at     relation      4  e7d95dda6f77
overdue       denial        -  -
recent        view          3  287d97af4e94
recent_count  view          2  0ebe407a3d60

# A commit with only `--clock` moves time: order 2 (1766600000) leaves the window.
$ rnt commit -m tick --clock 1767210000 --stats
committed 544b57fcff3e (state 313db5b18ed5): -
clock 1767210000 (2025-12-31T19:40:00Z)
stats: nodes_written=3 nodes_read=16 nodes_fetched=5 entries_read=6 bytes_written=154
stats: time-window recent: entries_read=2 nodes_read=1 nodes_written=0
stats: counting recent: entries_read=1 nodes_read=4 nodes_written=1
stats: aggregate recent_count: entries_read=1 nodes_read=6 nodes_written=2
stats: time-window overdue: entries_read=1 nodes_read=1 nodes_written=0
stats: denial overdue: entries_read=0 nodes_read=0 nodes_written=0

$ rnt show recent_count
customer  n
       8  2
(1 tuple)

# A clock step that changes no relation makes no commit.
$ rnt commit -m tick --clock 1767210001
nothing to commit

# The clock never goes back.
$ rnt commit -m back --clock 1767000000
! error: clock 1767000000 is earlier than the head's clock 1767210000: the clock never goes back
[exit 1]

# Without `--clock`, a commit takes the later of the head's clock and its commit time
# (2026-01-01T00:00:00Z here).
$ rnt commit -m "a late order" '+orders_at(5, 7, 1767220000)'
committed 46dfa98ef33b (state 7961c6ab372b): orders_at +1 -0
clock 1767225600 (2026-01-01T00:00:00Z)

$ rnt log
commit        state         time                  clock       message           changes
46dfa98ef33b  7961c6ab372b  2026-01-01T00:00:00Z  1767225600  a late order      orders_at +1 -0
544b57fcff3e  313db5b18ed5  2026-01-01T00:00:00Z  1767210000  tick              -
d3277d880f52  1a1c0fa8eaf4  2026-01-01T00:00:00Z  1767200000  orders            deadlines +1 -0, orders_at +4 -0
0da9282660dd  d353db8ef9ae  2026-01-01T00:00:00Z  1767200000  define clock.rnt  -

$ rnt log -n 1 --format json
[
  {
    "commit": "46dfa98ef33b239bb2c7bb9e3f63b0355c7a8f4343a05c736621180a4474a37c",
    "state": "7961c6ab372b028b32bc5c3fb2c1ff14dff00b924a12e70228ce371693ad64e4",
    "parents": ["544b57fcff3efbab3cd45ef143b3227688be8434e3a6b36427bbada7d99d3636"],
    "time": "2026-01-01T00:00:00Z",
    "message": "a late order",
    "changes": {
      "orders_at": {"inserted": 1, "deleted": 0}
    },
    "stats": [
      {"relation": "orders_at", "operator": "base", "entries_read": 9, "nodes_read": 9, "nodes_written": 2},
      {"relation": "recent", "operator": "time-window", "entries_read": 1, "nodes_read": 1, "nodes_written": 0},
      {"relation": "recent", "operator": "counting", "entries_read": 0, "nodes_read": 4, "nodes_written": 1},
      {"relation": "recent_count", "operator": "aggregate", "entries_read": 0, "nodes_read": 6, "nodes_written": 2},
      {"relation": "overdue", "operator": "time-window", "entries_read": 1, "nodes_read": 1, "nodes_written": 0},
      {"relation": "overdue", "operator": "denial", "entries_read": 0, "nodes_read": 0, "nodes_written": 0}
    ],
    "clock": 1767225600
  }
]

# A denial that time makes non-empty refuses even a commit that only moves the clock.
$ rnt commit -m tick --clock 1767400000
! error: denial overdue violated by overdue(1)
[exit 2]

$ rnt commit -m "task 1 done" '+done(1)' --clock 1767400000
committed 00cbec7352fe (state c8f5448c58e1): done +1 -0
clock 1767400000 (2026-01-03T00:26:40Z)

$ rnt status --format json
{
  "branch": "main",
  "commit": "00cbec7352fe7a60f3487d7cfb26959a91a04182de99c440eb51af6c7385c9aa",
  "state": "c8f5448c58e14a178f6a585215e65d5a57fb6a1d288b8b80b639d5e67f5ee309",
  "clock": 1767400000,
  "relations": [
    {"name": "deadlines", "kind": "relation", "count": 1, "root": "65c0e23885ca979609578dc929f2ae40cf60b1282c40cb1f9a025509fb9a72bc"},
    {"name": "done", "kind": "relation", "count": 1, "root": "306f3824d3eac4ec0fd0e9c245b6eab1e8d3d3cb8bcc4244969908913ccac1df"},
    {"name": "orders_at", "kind": "relation", "count": 5, "root": "1542355173b06b9d672d83874cb93e47a7d81022a0d8573386b25375d113d8bc"},
    {"name": "overdue", "kind": "denial", "count": null, "root": null},
    {"name": "recent", "kind": "view", "count": 3, "root": "8542e49793b9162d037be67a36c2a536ffe99318e73c2f4c77b7dd5f4638121d"},
    {"name": "recent_count", "kind": "view", "count": 2, "root": "0ebe407a3d605c63fce29c436e4b218e1b4c799598c0218c7b7782d0ee5cebb7"}
  ]
}

$ rnt explain recent
view recent (mode: counting)

rule 1: recent(i, c) :- orders_at(i, c, ts), ts > now - 604800.
  cost: O(Δ) filter, project, union · time window: O(Δ) per change, O(E) per clock step (the rows entering or leaving, from the front of `crossing c2+604800` over `orders_at`)
  term Δorders_at, from the delta of orders_at(i, c, ts)
    step  op          literal              bound  served by
       1  clock step  ts > now - 604800    -      crossing c2+604800: front
       2  join        orders_at(i, c, ts)  -      Δorders_at

$ rnt verify
verified: 2 materialized views equal their recomputation (recent, recent_count)

# `query` and `show --at` read a state at its own clock.
$ rnt query 'q(i) :- orders_at(i, _, ts), ts > now - 604800.' --at HEAD~3
i
2
3
4
(3 tuples)

# A program without `now` carries no clock: the define drops it, and there is none to
# set.
$ rnt define no_clock.rnt
committed e7d6c497bf34 (state c56aa189c488): define no_clock.rnt

$ rnt commit -m tick --clock 1767500000
! error: the program does not mention `now`, so its states carry no clock to set
[exit 1]

$ rnt status
branch  main
commit  e7d6c497bf3403fa7b9bd2b6522790f737dd896a01c1e2489f608b70cb2bb1b9
state   c56aa189c4885aa46e570223c779ef51703d32785b5dc04ed0df7bed785f1c8c

relation   kind      count  root
deadlines  relation      1  65c0e23885ca
done       relation      1  306f3824d3ea
orders_at  relation      5  1542355173b0
recent     view          3  8542e49793b9
