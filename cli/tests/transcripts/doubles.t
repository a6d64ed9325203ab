# Doubles and reals (issue 39): CSV read to the nearest value, DuckDB's text, NaN last,
# SUM and AVG exact until read (1e308 + 1e308 - 1e308 is 1e308), verify by address.
$ rnt init
initialized an empty rnt store in [DIR]/.rnt (packs backend)

$ rnt define winds.rnt
committed 5eb6f8e38c30 (state b851d592526c): define winds.rnt

$ rnt import weather weather.csv
committed c1f864566920 (state 3de7825018ec): weather +9 -0

$ rnt show weather
origin  hour                wind           temp
EWR        1  10.357019999999999          39.02
EWR        2                 0.1          39.02
EWR        3                 0.2          39.92
JFK        1              1e+308            0.0
JFK        2              1e+308          1e-40
JFK        3             -1e+308            nan
LGA        1                null            inf
LGA        2                 nan           -inf
LGA        3              5e-324  3.4028235e+38
(9 tuples)

$ rnt show wind_by_origin
origin     total                    mean     calm                gust  n
EWR     10.65702      3.5523399999999996      0.1  10.357019999999999  3
JFK       1e+308  3.333333333333333e+307  -1e+308              1e+308  3
LGA          nan                     nan   5e-324                 nan  2
(3 tuples)

$ rnt show wind_by_origin --format json
[
  ["EWR", "10.65702", "3.5523399999999996", "0.1", "10.357019999999999", 3],
  ["JFK", "1e+308", "3.333333333333333e+307", "-1e+308", "1e+308", 3],
  ["LGA", "nan", "nan", "5e-324", "nan", 2]
]

$ rnt show windy
origin  hour                   knots
EWR        1       9.000001811519999
JFK        1  8.689759999999999e+307
JFK        2  8.689759999999999e+307
LGA        2                     nan
(4 tuples)

$ rnt query 'q(o, w, t) :- weather(o, _, w, t), w > 0.15, w < 11.'
o                     w      t
EWR                 0.2  39.92
EWR  10.357019999999999  39.02
(2 tuples)

$ rnt commit -m less '-weather("JFK", 1, double("1e308"), real("-0.0"))' '+weather("EWR", 4, double("0.3"), real("40"))'
committed 144d5df029b9 (state b2f3918d9873): weather +1 -1

$ rnt show wind_by_origin
origin               total                mean     calm                gust  n
EWR     10.957019999999998  2.7392549999999996      0.1  10.357019999999999  4
JFK                    0.0                 0.0  -1e+308              1e+308  2
LGA                    nan                 nan   5e-324                 nan  2
(3 tuples)

$ rnt verify
verified: 2 materialized views equal their recomputation (wind_by_origin, windy)

$ rnt import weather bad.csv
! error: bad.csv, line 2, column wind: expected a double, found `ten`
[exit 1]
