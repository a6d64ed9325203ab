//! The work folder of rnt's commit bench (`RNT_BENCH_KEEP=1`) read into Z-set updates: the
//! CSVs (header row first) as the initial state, and each `tick-W1-N.txt` (or
//! `tick-W5-N.txt`) change file (`-orders(12, 345, 678)`, `+customers(3, "pro")`,
//! `+edge(4, 5)`, `+orders_at(1000000, 7, 30, 1708639999)`) as a delta of weight ±1 per
//! line. W5–W9's ticks also step the clock, which the bench passes to `rnt commit --clock`
//! rather than writing it down: [`clocks`] recomputes it as `catalogue.rs` steps it.

use dbsp::utils::{Tup2, Tup3, Tup4};
use dbsp::ZWeight;
use std::path::{Path, PathBuf};

/// `orders(id, customer, amount)`.
pub type Order = Tup3<i64, i64, i64>;
/// `customers(id, plan)`.
pub type Customer = Tup2<i64, String>;
/// `edge(src, dst)`.
pub type Edge = Tup2<i64, i64>;
/// `orders_at(id, customer, amount, ts)` (W8's input).
pub type OrderAt = Tup4<i64, i64, i64, i64>;

/// W8's orders span 100 days (`catalogue.rs`'s `SPAN_SECONDS`).
const SPAN_SECONDS: i64 = 100 * 86_400;
/// W8's first order time (`START`).
const START: i64 = 1_700_000_000;
/// Orders arriving per W5–W9 tick (`ARRIVALS_PER_TICK`).
const ARRIVALS_PER_TICK: i64 = 100;

/// A change to each base relation: Z-set updates, weight +1 for an insert and −1 for a
/// delete. The initial state is one of these with every weight +1.
#[derive(Clone, Default)]
pub struct Delta {
    /// Changes to `orders`.
    pub orders: Vec<Tup2<Order, ZWeight>>,
    /// Changes to `customers`.
    pub customers: Vec<Tup2<Customer, ZWeight>>,
    /// Changes to `edge`.
    pub edge: Vec<Tup2<Edge, ZWeight>>,
    /// Changes to `orders_at`.
    pub orders_at: Vec<Tup2<OrderAt, ZWeight>>,
    /// The clock after the change (W5–W9 only).
    pub clock: Option<i64>,
}

impl Delta {
    /// The number of changed tuples.
    pub fn len(&self) -> usize {
        self.orders.len() + self.customers.len() + self.edge.len() + self.orders_at.len()
    }
}

/// The initial state: `customers.csv`, `orders.csv`, and `edge.csv` for W1–W4 or
/// `orders_at.csv` and the first state's clock when `clocked` (W5–W9), of `folder`.
pub fn load_csvs(folder: &Path, clocked: bool) -> Result<Delta, String> {
    let mut delta = Delta::default();
    if clocked {
        for fields in csv_rows(&folder.join("orders_at.csv"), 4)? {
            let order = Tup4(
                int(&fields[0])?,
                int(&fields[1])?,
                int(&fields[2])?,
                int(&fields[3])?,
            );
            delta.orders_at.push(Tup2(order, 1));
        }
        delta.clock = Some(clocks(delta.orders_at.len(), 0)[0]);
    }
    for fields in csv_rows(&folder.join("orders.csv"), 3)? {
        let order = Tup3(int(&fields[0])?, int(&fields[1])?, int(&fields[2])?);
        delta.orders.push(Tup2(order, 1));
    }
    for fields in csv_rows(&folder.join("customers.csv"), 2)? {
        delta
            .customers
            .push(Tup2(Tup2(int(&fields[0])?, fields[1].clone()), 1));
    }
    // The bench imports no edges for W5–W9.
    if !clocked {
        for fields in csv_rows(&folder.join("edge.csv"), 2)? {
            delta
                .edge
                .push(Tup2(Tup2(int(&fields[0])?, int(&fields[1])?), 1));
        }
    }
    Ok(delta)
}

/// The rows of a CSV file past its header, each of `arity` plain fields (the bench writes
/// no quotes and no commas inside fields).
fn csv_rows(path: &Path, arity: usize) -> Result<Vec<Vec<String>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<String> = line.split(',').map(str::to_owned).collect();
        if fields.len() != arity {
            return Err(format!(
                "{}:{}: {} fields, expected {arity}",
                path.display(),
                n + 1,
                fields.len()
            ));
        }
        rows.push(fields);
    }
    Ok(rows)
}

/// The tick files of `folder` whose names start with `prefix` (e.g. `tick-W1-`), in tick
/// order (by the number after the prefix).
pub fn tick_files(folder: &Path, prefix: &str) -> Result<Vec<PathBuf>, String> {
    let mut ticks = Vec::new();
    let entries = std::fs::read_dir(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(number) = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(".txt"))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        ticks.push((number, path));
    }
    ticks.sort();
    Ok(ticks.into_iter().map(|(_, path)| path).collect())
}

/// The clock of the first state and after each of `ticks` ticks, for a first state of
/// `orders` orders in `orders_at` (as `Clocked::new` and `Clocked::tick` step it).
pub fn clocks(orders: usize, ticks: usize) -> Vec<i64> {
    let orders = i64::try_from(orders).expect("orders fit i64").max(1);
    let apart = (SPAN_SECONDS / orders).max(1);
    let first = START + (orders - 1) * apart;
    (0..=ticks)
        .map(|n| first + i64::try_from(n).expect("ticks fit i64") * ARRIVALS_PER_TICK * apart)
        .collect()
}

/// One change file as a delta (its clock left to the caller). A line of any other relation
/// is an error, so no tick is silently half-applied.
pub fn load_tick(path: &Path) -> Result<Delta, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut delta = Delta::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |e: String| format!("{}:{}: {e}", path.display(), n + 1);
        let (weight, rest) = match line.as_bytes()[0] {
            b'+' => (1, &line[1..]),
            b'-' => (-1, &line[1..]),
            _ => return Err(at(format!("not a change: {line}"))),
        };
        let (name, args) = rest
            .split_once('(')
            .and_then(|(name, args)| Some((name, args.strip_suffix(')')?)))
            .ok_or_else(|| at(format!("not a change: {line}")))?;
        let values = arguments(args).map_err(at)?;
        match (name, values.as_slice()) {
            ("orders", [i, c, a]) => delta.orders.push(Tup2(
                Tup3(
                    int(i).map_err(at)?,
                    int(c).map_err(at)?,
                    int(a).map_err(at)?,
                ),
                weight,
            )),
            ("customers", [i, p]) => delta
                .customers
                .push(Tup2(Tup2(int(i).map_err(at)?, p.clone()), weight)),
            ("edge", [s, d]) => delta
                .edge
                .push(Tup2(Tup2(int(s).map_err(at)?, int(d).map_err(at)?), weight)),
            ("orders_at", [i, c, a, t]) => delta.orders_at.push(Tup2(
                Tup4(
                    int(i).map_err(at)?,
                    int(c).map_err(at)?,
                    int(a).map_err(at)?,
                    int(t).map_err(at)?,
                ),
                weight,
            )),
            _ => return Err(at(format!("not a base relation of the bench: {line}"))),
        }
    }
    Ok(delta)
}

/// The comma-separated values of a change line: integers as written, strings unquoted
/// (`\"` and `\\` unescaped).
fn arguments(text: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                    None => return Err(format!("unterminated string in ({text})")),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' || c == ' ' {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        values.push(value);
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        match chars.next() {
            Some(',') => continue,
            None => return Ok(values),
            Some(c) => return Err(format!("unexpected {c:?} in ({text})")),
        }
    }
}

/// An `int` field.
fn int(text: &str) -> Result<i64, String> {
    text.parse()
        .map_err(|_| format!("not an integer: {text:?}"))
}
