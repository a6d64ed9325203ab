//! Guards `rnt explain`: every operator kind gets its cost class from docs/costs.md's table and
//! its mode, the reads name the trees and indexes the planner really uses (checked against
//! `Snapshot::plans`, the state's auxiliary tree labels and the operators commit stats
//! name), both formats agree, `--at` explains an older state's program, and every error
//! is one line with exit 1 and the head unchanged.

mod common;

use common::{assert_one_line_error, Shop};
use rnt_db::{PlanTerm, Snapshot};
use rnt_store::{Address, PackStore};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A program with one relation per operator kind the engine has.
const OPERATORS: &str = "\
relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view ids(id: int).
ids(i) :- orders(i, _, a), a > 0.
ids(i) :- customers(i, _).
view idle(customer: int).
idle(c) :- customers(c, _), not orders(_, c, _).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
view spend(customer: int, total: int, mean: int).
spend(c, sum(a), avg(a)) :- orders(_, c, a).
view extremes(customer: int, lo: int, hi: int).
extremes(c, min(a), max(a)) :- orders(_, c, a).
view amounts(customer: int, n: int).
amounts(c, count_distinct(a)) :- orders(_, c, a).
view plan_list(id: int, plans: str).
plan_list(i, concat(p, \",\")) :- customers(i, p).
view reach(x: int, y: int).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
ephemeral hop(x: int, y: int).
hop(x, y) :- edge(x, y).
hop(x, z) :- hop(x, y), edge(y, z).
view far(x: int, y: int).
far(x, y) :- hop(x, y), x < y.
ephemeral big_order(id: int).
big_order(i) :- orders(i, _, a), a > 900.
view big_plans(plan: str).
big_plans(p) :- big_order(i), orders(i, c, _), customers(c, p).
ephemeral unread(plan: str, n: int).
unread(p, count()) :- customers(_, p).
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
view running(customer: int, id: int, total: int).
running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
view gaps(customer: int, id: int, previous: int).
gaps(c, i, p) :- orders(i, c, _), p = lag(i, 1, 0) over (partition c order i).
view top2(customer: int, id: int).
top2(c, i) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 2.
view ranked(customer: int, id: int, k: int).
ranked(c, i, k) :- orders(i, c, a), k = dense_rank() over (partition c order a).
";

const BASE: &[&str] = &[
    "+customers(7, \"pro\")",
    "+customers(8, \"free\")",
    "+orders(1, 7, 30)",
    "+orders(2, 8, 950)",
    "+edge(1, 2)",
    "+edge(2, 3)",
];

/// A store holding [`OPERATORS`] and [`BASE`].
fn operators() -> Shop {
    let shop = Shop::init();
    shop.write("ops.rnt", OPERATORS);
    shop.ok(&["define", "ops.rnt"]);
    shop.commit("base", BASE);
    shop
}

fn explain_json(shop: &Shop, relation: &str, at: Option<&str>) -> Value {
    let mut args = vec!["explain", relation, "--format", "json"];
    if let Some(at) = at {
        args.extend(["--at", at]);
    }
    serde_json::from_str(&shop.ok(&args)).expect("explain prints JSON")
}

/// The snapshot of the state `state` (hex) of the shop's store, read through the library.
fn snapshot(shop: &Shop, state: &str) -> Snapshot {
    let chunks = PackStore::open(&shop.store()).expect("open the store");
    let address = Address::from_hex(state).expect("a state hash");
    Snapshot::load(&chunks, None, address).expect("the state loads")
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

/// The derived relations of the program at `snapshot`.
fn derived(snapshot: &Snapshot) -> Vec<String> {
    snapshot
        .program
        .relations
        .iter()
        .filter(|(_, r)| r.kind() != rnt_db::RelationKind::Relation)
        .map(|(name, _)| name.clone())
        .collect()
}

/// The line `Snapshot::plans` prints for one step, rebuilt from the step's JSON: the same
/// read described by the plan dump's own code path (`RulePlan::explain`).
fn plan_line(snapshot: &Snapshot, step: &Value) -> String {
    let op = step["op"].as_str().unwrap();
    let literal = step["literal"].as_str().unwrap();
    match op {
        "filter" | "assign" => return format!("  {op} {literal}"),
        "window" => return format!("  window {literal} per partition"),
        _ => {}
    }
    let relation = step["relation"].as_str().unwrap();
    let schema = snapshot
        .schema(relation)
        .expect("the read relation's schema");
    let names: Vec<&str> = schema.attribute_names().collect();
    let bound: Vec<usize> = strings(&step["bound"])
        .iter()
        .map(|b| {
            names
                .iter()
                .position(|n| n == b)
                .expect("a bound attribute")
        })
        .collect();
    let pattern = if bound.is_empty() {
        String::new()
    } else {
        format!(" bound {bound:?}")
    };
    let head = if op == "join" {
        format!("join {literal}")
    } else {
        literal.to_string()
    };
    let served = step["served_by"].as_str().unwrap();
    let access = step["access"].as_str().unwrap();
    let source = match (served, access) {
        ("delta", "delta") => return format!("  {head} from Δ{relation}"),
        ("rules", "evaluated") => "computed by its rules".to_string(),
        ("tree", "scan") => "from a scan of the tree".to_string(),
        ("tree", "prefix" | "lookup") => "from the tree, by prefix".to_string(),
        (index, "prefix" | "lookup") if index.starts_with("index ") => {
            format!("from `{index}`, by prefix")
        }
        other => panic!("unexpected served_by/access {other:?}"),
    };
    format!("  {head}{pattern} {source}")
}

/// Every term explain prints that `Snapshot::plans` also dumps (deltas, evaluations) has the
/// same steps there, read for read; every delta term `plans` dumps is printed; every index
/// a read names is an auxiliary tree of the read relation in the state, and every index
/// tree the state keeps is named by some read. Returns the number of reads checked.
fn check_against_state(shop: &Shop, state: &str, at: Option<&str>) -> usize {
    let snapshot = snapshot(shop, state);
    let mut named: BTreeSet<(String, String)> = BTreeSet::new();
    let mut checked = 0;
    for relation in derived(&snapshot) {
        let explained = explain_json(shop, &relation, at);
        assert_eq!(
            explained["state"], state,
            "{relation}: explain read another state"
        );
        let dumps = snapshot.plans(&relation).expect("the plans");
        let mut matched = 0;
        for rule in explained["rules"].as_array().unwrap() {
            let rule_text = rule["rule"].as_str().unwrap();
            // A top-k or running window names the index its ordered reads use in its cost
            // class: "… from `orders`'s `index 1,2,0` …".
            let cost = rule["cost"].as_str().unwrap();
            for (at, _) in cost.match_indices("`'s `index ") {
                let read = cost[..at].rsplit('`').next().unwrap().to_string();
                let label = cost[at + 5..].split('`').next().unwrap().to_string();
                named.insert((read, label));
            }
            for term in rule["terms"].as_array().unwrap() {
                let label = term["term"].as_str().unwrap();
                let steps = term["steps"].as_array().unwrap();
                for step in steps {
                    if let Some(label) = step["served_by"].as_str() {
                        if label.starts_with("index ") {
                            let read = step["relation"].as_str().unwrap().to_string();
                            named.insert((read, label.to_string()));
                        }
                    }
                }
                let dump = dumps.iter().find(|d| {
                    d.term.to_string() == label && d.text.lines().next() == Some(rule_text)
                });
                let Some(dump) = dump else {
                    assert!(
                        label == "rederive" || label.starts_with("read with "),
                        "{relation}: term {label} of {rule_text} is not among the plans"
                    );
                    continue;
                };
                matched += usize::from(dump.term != PlanTerm::Eval);
                // A negation's `flip` read is the term's own, before the plan runs.
                let expected: Vec<String> = steps
                    .iter()
                    .filter(|s| s["op"] != "flip")
                    .map(|s| plan_line(&snapshot, s))
                    .collect();
                let dumped: Vec<&str> = dump
                    .text
                    .lines()
                    .skip(1)
                    // How a top-k or running window reads its partitions: explain says it
                    // in the rule's cost class.
                    .filter(|l| {
                        !l.starts_with("  bound first:")
                            && !l.starts_with("  top-k:")
                            && !l.starts_with("  running:")
                    })
                    .collect();
                assert_eq!(dumped, expected, "{relation}: term {label} of {rule_text}");
                checked += steps.len();
            }
        }
        let delta_dumps = dumps.iter().filter(|d| d.term != PlanTerm::Eval).count();
        let mode = explained["mode"].as_str();
        // A commit runs the delta terms of every mode but recompute (and none for a relation
        // nothing reads); explain prints them all.
        if !matches!(mode, None | Some("recompute")) {
            assert_eq!(matched, delta_dumps, "{relation}: a delta term is missing");
        }
    }
    let mut kept: BTreeSet<(String, String)> = BTreeSet::new();
    for entry in &snapshot.state.relations {
        for aux in &entry.aux {
            if aux.label.starts_with("index ") {
                kept.insert((entry.name.clone(), aux.label.clone()));
            }
        }
    }
    assert!(!kept.is_empty(), "the program keeps indexes");
    assert_eq!(named, kept, "explain's indexes == the state's index trees");
    checked
}

/// The rule objects of `relation`'s explanation, by rule text.
fn rules(explained: &Value) -> BTreeMap<String, Value> {
    explained["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["rule"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

#[test]
fn every_operator_gets_its_cost_class_and_mode() {
    let shop = operators();
    // (relation, kind, mode, the cost class of each rule): docs/costs.md's table.
    let join = "O(Σm) join";
    let filter = "O(Δ) filter, project, union";
    let recompute = "O(N) recursion, recomputed in memory and diffed";
    let cases: &[(&str, &str, Option<&str>, &[&str])] = &[
        ("order_plan", "view", Some("counting"), &[join]),
        ("ids", "view", Some("counting"), &[filter, filter]),
        ("idle", "view", Some("counting"), &["O(Σm) anti-join"]),
        (
            "plan_total",
            "view",
            Some("aggregate"),
            &["O(Σm) join, then O(K) per touched group"],
        ),
        (
            "spend",
            "view",
            Some("aggregate"),
            &["O(K) per touched group"],
        ),
        (
            "extremes",
            "view",
            Some("aggregate"),
            &["O(K) per touched group · O(m) when a group loses its extremes"],
        ),
        (
            "amounts",
            "view",
            Some("aggregate"),
            &["O(K) per touched group · O(1) per changed (group, value) for count_distinct"],
        ),
        (
            "plan_list",
            "view",
            Some("aggregate"),
            &["O(K) per touched group · O(m) per touched group for concat (its values re-read)"],
        ),
        // Small: under the cost rule's threshold, recomputed (a large one is DRed's:
        // `recursion_mode_follows_the_state_it_explains`).
        ("reach", "view", Some("recompute"), &[recompute, recompute]),
        (
            "hop",
            "ephemeral",
            Some("recompute"),
            &[recompute, recompute],
        ),
        ("far", "view", Some("counting"), &[filter]),
        (
            "big_order",
            "ephemeral",
            Some("ephemeral"),
            &["evaluated when read, bindings pushed in: O(Δ) filter, project, union; no state"],
        ),
        ("big_plans", "view", Some("counting"), &[join]),
        (
            "unread",
            "ephemeral",
            None,
            &["evaluated when read, bindings pushed in: O(Σm) per group read; no state"],
        ),
        (
            "orphan",
            "denial",
            Some("denial"),
            &["O(Σm) anti-join, on insert-only deltas; stops at the first witness"],
        ),
        (
            "running",
            "view",
            Some("window"),
            &[
                "O(Δ) for appends · O(m − i) for a change at position i (running sum): each \
               touched partition from its first changed row to its end, old, read in window \
               order from `orders`'s `index 1,0,2`, with its total from `running`",
            ],
        ),
        (
            "gaps",
            "view",
            Some("window"),
            &[
                "O(Δ·n) bounded frame (lag/lead, n = 1): the rows within n of each touched \
               partition's changes, from n before the first to n after the last, old, read in \
               window order from `orders`'s `index 1,0,2`",
            ],
        ),
        (
            "top2",
            "view",
            Some("window"),
            &[
                "O(K·k) top-k: the front of each touched partition, old, read once (k ≤ 2) in \
               window order from `orders`'s `index 1,2,0`, backward, the new front derived \
               from it and the delta",
            ],
        ),
        (
            "ranked",
            "view",
            Some("window"),
            &[
                "O(Σm) per touched partition (window fallback: each touched partition re-read, \
               old and new)",
            ],
        ),
    ];
    let snapshot = snapshot(&shop, &shop.state());
    let mut seen = BTreeSet::new();
    for (relation, kind, mode, costs) in cases {
        let explained = explain_json(&shop, relation, None);
        assert_eq!(explained["relation"], *relation);
        assert_eq!(explained["kind"], *kind, "{relation}");
        assert_eq!(explained["mode"].as_str(), *mode, "{relation}");
        // Only a recursive stratum of views has a mode chosen by the cost rule.
        assert_eq!(
            explained["mode_rule"].is_string(),
            *relation == "reach",
            "{relation}: {}",
            explained["mode_rule"]
        );
        let got: Vec<&str> = explained["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["cost"].as_str().unwrap())
            .collect();
        assert_eq!(got, *costs, "{relation}");
        // One rule object per rule of the program, each with its canonical text.
        let declared = snapshot.program.relation(relation).unwrap();
        assert_eq!(got.len(), declared.rules.len(), "{relation}");
        seen.insert(relation.to_string());
    }
    assert_eq!(
        seen,
        derived(&snapshot).into_iter().collect(),
        "every derived relation has a case"
    );
}

#[test]
fn aggregate_trees_are_the_views_auxiliary_trees() {
    let shop = operators();
    let snapshot = snapshot(&shop, &shop.state());
    for relation in [
        "plan_total",
        "spend",
        "extremes",
        "amounts",
        "unread",
        "order_plan",
        "running",
        "gaps",
        "top2",
    ] {
        let explained = explain_json(&shop, relation, None);
        let trees: BTreeSet<String> = explained["rules"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| strings(&r["trees"]))
            .collect();
        // The state's non-index trees of the relation: what the aggregate operator keeps.
        let kept: BTreeSet<String> = snapshot
            .entry(relation)
            .map(|e| {
                e.aux
                    .iter()
                    .map(|a| a.label.clone())
                    .filter(|l| !l.starts_with("index "))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(trees, kept, "{relation}");
    }
    let extremes = explain_json(&shop, "extremes", None);
    assert_eq!(
        strings(&extremes["rules"][0]["trees"]),
        ["groups", "extremes 1", "extremes 2"]
    );
    // A running sum keeps its partitions' totals; a lag or a top-k keeps nothing beside it.
    let running = explain_json(&shop, "running", None);
    assert_eq!(strings(&running["rules"][0]["trees"]), ["running"]);
    let gaps = explain_json(&shop, "gaps", None);
    assert!(strings(&gaps["rules"][0]["trees"]).is_empty());
}

#[test]
fn reads_match_the_plans_and_the_state_indexes() {
    let shop = operators();
    let checked = check_against_state(&shop, &shop.state(), None);
    assert!(checked > 30, "only {checked} reads checked");
}

#[test]
fn modes_are_the_operators_a_commit_runs() {
    let shop = operators();
    shop.commit(
        "touch everything",
        &[
            "+orders(3, 7, 990)",
            "-customers(8, \"free\")",
            "+customers(8, \"team\")",
            "+edge(3, 4)",
        ],
    );
    let log = shop.log();
    let stats = log[0]["stats"].as_array().expect("commit stats");
    let mut ran = 0;
    for stat in stats {
        let operator = stat["operator"].as_str().unwrap();
        if operator == "base" {
            continue;
        }
        for relation in stat["relation"].as_str().unwrap().split(',') {
            // The mode explain reports for a state is the one the next commit from it runs.
            let explained = explain_json(&shop, relation, Some("HEAD~1"));
            assert_eq!(explained["mode"].as_str(), Some(operator), "{relation}");
            ran += 1;
        }
    }
    // Every derived relation but `unread` (nothing reads it) did work in that commit.
    let snapshot = snapshot(&shop, &shop.state());
    assert_eq!(ran, derived(&snapshot).len() - 1);
}

#[test]
fn delta_terms_start_from_their_driver_and_name_scans() {
    let shop = operators();
    let order_plan = explain_json(&shop, "order_plan", None);
    let rule = &order_plan["rules"][0];
    let terms = rule["terms"].as_array().unwrap();
    let labels: Vec<&str> = terms.iter().map(|t| t["term"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Δcustomers", "Δorders"]);
    for term in terms {
        // The first read is the driver, from the commit's delta; no later read is a scan.
        let steps = term["steps"].as_array().unwrap();
        let driver = term["term"].as_str().unwrap().trim_start_matches('Δ');
        assert_eq!(steps[0]["relation"], driver);
        assert_eq!(steps[0]["served_by"], "delta");
        assert_eq!(term["delta"], steps[0]["literal"]);
        for step in &steps[1..] {
            assert_ne!(step["access"], "scan", "{step}");
            assert!(!strings(&step["bound"]).is_empty(), "{step}");
        }
    }
    // A negation's term starts with the negated atom's variables bound.
    let idle = explain_json(&shop, "idle", None);
    let negation = idle["rules"][0]["terms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["term"] == "Δnot orders")
        .expect("the negation's term")
        .clone();
    assert_eq!(negation["delta"], "not orders(_, c, _)");
    assert_eq!(strings(&negation["bound_first"]), ["c"]);
    // Its first step reads the negated atom by the bound variable, old and new, through
    // the same index the from-scratch plan's `not` uses.
    let flip = &negation["steps"][0];
    assert_eq!(flip["op"], "flip");
    assert_eq!(flip["literal"], "not orders(_, c, _)");
    assert_eq!(strings(&flip["bound"]), ["customer"]);
    let eval_not = snapshot(&shop, &shop.state())
        .plans("idle")
        .unwrap()
        .into_iter()
        .find(|d| d.term == PlanTerm::Eval)
        .unwrap()
        .text;
    let label = flip["served_by"].as_str().unwrap();
    assert!(
        eval_not.contains(&format!("not orders(_, c, _) bound [1] from `{label}`")),
        "{eval_not}"
    );
    // An ephemeral relation is read with its readers' bindings pushed in, and its full
    // evaluation (what `show` runs) is a scan, said as such.
    let big = explain_json(&shop, "big_order", None);
    let terms = big["rules"][0]["terms"].as_array().unwrap();
    let eval = terms.iter().find(|t| t["term"] == "eval").unwrap();
    assert_eq!(eval["steps"][0]["access"], "scan");
    let read = terms
        .iter()
        .find(|t| t["term"] == "read with id bound")
        .expect("the pushed-in read");
    assert_eq!(read["steps"][0]["access"], "prefix");
    assert_eq!(strings(&read["steps"][0]["bound"]), ["id"]);
    // ... and its reader reads it through its rules.
    let big_plans = explain_json(&shop, "big_plans", None);
    let served: BTreeSet<String> = big_plans["rules"][0]["terms"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["steps"].as_array().unwrap().clone())
        .filter(|s| s["relation"] == "big_order")
        .map(|s| format!("{} {}", s["served_by"], s["access"]))
        .collect();
    assert_eq!(
        served,
        BTreeSet::from([
            "\"delta\" \"delta\"".to_string(),
            "\"rules\" \"evaluated\"".to_string()
        ])
    );
}

/// Recursion's two modes: a small recursive view is recomputed (its plans are the
/// evaluation a commit runs, no delta terms), a large one (above
/// `RECURSION_RECOMPUTE_TUPLES_MAX`) is DRed's (delta terms and the rederivation, every head
/// column bound); explain says the rule with the state's numbers, and the next commit from
/// the state runs the mode it reports.
#[test]
fn recursion_mode_follows_the_state_it_explains() {
    let shop = operators();
    let small = explain_json(&shop, "reach", None);
    assert_eq!(small["mode"], "recompute");
    let rule = small["mode_rule"].as_str().unwrap();
    // 3 reach tuples; 2 edges (the inputs: `edge` only).
    assert!(
        rule.starts_with("recompute: N = 3 stratum + 2 input tuples = 5 ≤ 64"),
        "{rule}"
    );
    for rule in small["rules"].as_array().unwrap() {
        assert_eq!(
            rule["cost"],
            "O(N) recursion, recomputed in memory and diffed"
        );
        let terms: Vec<&str> = rule["terms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["term"].as_str().unwrap())
            .collect();
        assert_eq!(terms, ["eval"], "{rule}");
    }
    let table = shop.ok(&["explain", "reach"]);
    assert!(
        table.starts_with("view reach (mode: recompute)\nmode rule: recompute: N = 3"),
        "{table}"
    );
    // A chain of 12 more edges: 14 edges from 1 to 15 close 105 reach tuples, over the
    // threshold.
    let chain: Vec<String> = (3..15).map(|n| format!("+edge({n}, {})", n + 1)).collect();
    let chain: Vec<&str> = chain.iter().map(String::as_str).collect();
    shop.commit("a long chain", &chain);
    let log = shop.log();
    let ran = |log: &[Value]| -> String {
        log[0]["stats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["relation"] == "reach")
            .map(|s| s["operator"].as_str().unwrap().to_string())
            .unwrap()
    };
    // That commit started from the small state, so it recomputed.
    assert_eq!(ran(&log), "recompute");
    let large = explain_json(&shop, "reach", None);
    assert_eq!(large["mode"], "dred");
    let rule = large["mode_rule"].as_str().unwrap();
    assert!(
        rule.starts_with("dred: N = 105 stratum + 14 input tuples = 119 > 64"),
        "{rule}"
    );
    for rule in large["rules"].as_array().unwrap() {
        assert_eq!(
            rule["cost"],
            "O(Σm) at each level the change reaches (recursion, DRed)"
        );
        // DRed's rederivation reads with every head column bound.
        let rederive = rule["terms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["term"] == "rederive")
            .expect("a rederive term");
        assert_eq!(strings(&rederive["bound_first"]).len(), 2, "{rule}");
    }
    // The next commit runs DRed, as explained; the older state still explains recompute.
    shop.commit("one more edge", &["+edge(15, 16)"]);
    assert_eq!(ran(&shop.log()), "dred");
    assert_eq!(
        explain_json(&shop, "reach", Some("HEAD~2"))["mode"],
        "recompute"
    );
    let verified = shop.ok(&["verify"]);
    assert!(!verified.is_empty());
}

/// The `served by` cell the table prints for a step of the JSON: an index's label is
/// followed by its column order, by attribute name.
fn served_cell(snapshot: &Snapshot, step: &Value) -> String {
    let relation = step["relation"].as_str().unwrap_or_default();
    match (step["served_by"].as_str(), step["access"].as_str()) {
        (None, _) => "-".to_string(),
        (Some("delta"), _) => format!("Δ{relation}"),
        (Some("tree"), Some("scan")) => "tree: full scan".to_string(),
        (Some(index), Some(access)) if index.starts_with("index ") => {
            let schema = snapshot.schema(relation).unwrap();
            let names: Vec<&str> = schema.attribute_names().collect();
            let order: Vec<&str> = index["index ".len()..]
                .split(',')
                .map(|c| names[c.parse::<usize>().unwrap()])
                .collect();
            format!("{index} ({}): {access}", order.join(", "))
        }
        (Some(source), Some(access)) => format!("{source}: {access}"),
        other => panic!("unexpected served_by/access {other:?}"),
    }
}

#[test]
fn the_table_prints_what_the_json_holds() {
    let shop = operators();
    let snapshot = snapshot(&shop, &shop.state());
    for relation in derived(&snapshot) {
        let table = shop.ok(&["explain", &relation]);
        let json = explain_json(&shop, &relation, None);
        let lines: Vec<&str> = table.lines().collect();
        let kind = json["kind"].as_str().unwrap();
        assert!(
            lines[0].starts_with(&format!("{kind} {relation} (mode: ")),
            "{table}"
        );
        // Walk the table in the JSON's order: each rule's lines, then each term's header,
        // column header and one row per step with its literal, bound and served-by cells.
        let mut at = 1;
        let mut next = |want: &dyn Fn(&str) -> bool, what: &str| -> Vec<String> {
            while at < lines.len() && !want(lines[at]) {
                at += 1;
            }
            assert!(at < lines.len(), "{relation}: no {what} in\n{table}");
            at += 1;
            lines[at - 1]
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        };
        for (number, rule) in json["rules"].as_array().unwrap().iter().enumerate() {
            let header = format!("rule {}: {}", number + 1, rule["rule"].as_str().unwrap());
            next(&|l| l == header, &header);
            let cost = format!("  cost: {}", rule["cost"].as_str().unwrap());
            next(&|l| l == cost, &cost);
            for term in rule["terms"].as_array().unwrap() {
                let label = format!("  term {}", term["term"].as_str().unwrap());
                next(&|l| l.starts_with(&label), &label);
                let columns = next(&|l| l.trim_start().starts_with("step"), "column header");
                assert_eq!(columns, ["step", "op", "literal", "bound", "served by"]);
                for (i, step) in term["steps"].as_array().unwrap().iter().enumerate() {
                    let bound = strings(&step["bound"]);
                    let expected = vec![
                        (i + 1).to_string(),
                        step["op"].as_str().unwrap().to_string(),
                        step["literal"].as_str().unwrap().to_string(),
                        if bound.is_empty() {
                            "-".to_string()
                        } else {
                            bound.join(", ")
                        },
                        served_cell(&snapshot, step),
                    ];
                    let row = next(&|_| true, "step row");
                    assert_eq!(row, expected, "{relation}:\n{table}");
                }
            }
        }
    }
}

#[test]
fn at_explains_an_older_states_program() {
    let shop = operators();
    let old_state = shop.state();
    // A new program: order_plan reads customers by plan, plan_total is dropped.
    let program = OPERATORS
        .replace(
            "order_plan(i, p) :- orders(i, c, _), customers(c, p).",
            "order_plan(i, p) :- orders(i, c, _), customers(c, p), p = \"pro\".",
        )
        .replace("view plan_total(plan: str, total: int, n: int).\n", "")
        .replace(
            "plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).\n",
            "",
        );
    shop.write("ops2.rnt", &program);
    shop.ok(&["define", "ops2.rnt"]);
    let new_state = shop.state();
    assert_ne!(old_state, new_state);
    // Today, plan_total is unknown; at HEAD~1 it is explained from that state's program.
    let stderr = shop.fails(&["explain", "plan_total"], 1);
    assert_one_line_error(&stderr, &["unknown relation", "plan_total"]);
    let old = explain_json(&shop, "plan_total", Some("HEAD~1"));
    assert_eq!(old["state"], old_state.as_str());
    assert_eq!(old["mode"], "aggregate");
    // order_plan's rule differs between the two states, and each is the state's own.
    let then = rules(&explain_json(&shop, "order_plan", Some("HEAD~1")));
    let now = rules(&explain_json(&shop, "order_plan", None));
    assert_ne!(
        then.keys().collect::<Vec<_>>(),
        now.keys().collect::<Vec<_>>()
    );
    assert!(now.keys().all(|r| r.contains("\"pro\"")), "{now:?}");
    assert!(then.keys().all(|r| !r.contains("\"pro\"")), "{then:?}");
    // The state hash and the commit id both work as references, and each state's reads
    // match its own plans and indexes.
    let old_by_hash = explain_json(&shop, "order_plan", Some(&old_state[..12]));
    assert_eq!(old_by_hash["state"], old_state.as_str());
    check_against_state(&shop, &old_state, Some(&old_state));
    check_against_state(&shop, &new_state, None);
}

#[test]
fn errors_are_one_line_with_exit_1_and_leave_the_head() {
    let shop = operators();
    let head = shop.head();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["explain", "nope"],
            &["unknown relation `nope`", "order_plan"],
        ),
        (
            &["explain", "orders"],
            &["`orders` is a base relation", "no rules"],
        ),
        (
            &["explain", "order_plan", "--at", "nosuchref"],
            &["unknown reference `nosuchref`"],
        ),
        (&["explain", "order_plan", "--at", "HEAD~9"], &["HEAD~9"]),
        (
            &["explain", "orders", "--format", "json"],
            &["base relation"],
        ),
    ];
    for (args, needles) in cases {
        let run = shop.run(args);
        assert_eq!(run.code, 1, "rnt {args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "rnt {args:?}: {run:?}");
        assert_one_line_error(&run.stderr, needles);
        assert_eq!(shop.head(), head, "rnt {args:?} moved the head");
    }
    // A format explain does not print is a usage error, exit 1 like every user error.
    let run = shop.run(&["explain", "order_plan", "--format", "csv"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(shop.head(), head);
    // A store with no commits knows no relation.
    let empty = Shop::init();
    let stderr = empty.fails(&["explain", "order_plan"], 1);
    assert_one_line_error(&stderr, &["unknown relation `order_plan`"]);
}
