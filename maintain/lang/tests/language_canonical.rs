//! Guards the canonical program text a state hashes: its exact form for the docs/design.md
//! sample, that it parses back to the same program, and that comments, layout, rule order
//! and literal order never change it.

mod common;

use proptest::prelude::*;
use rnt_lang::canonical::{canonical_text, normalize};
use rnt_lang::diagnostic::{render_all, Source};
use rnt_lang::syntax::ast::Program;
use rnt_lang::syntax::parse;

use common::SAMPLE;

/// A program exercising every construct, including names that are keywords elsewhere.
const RICH: &str = r#"
relation t(k: int, s: str, b: bool).
view not(x: int).
relation view(x: int).
denial flag().
ephemeral e(k: int, s: str, n: int, lo: str, hi: int, avg: int).
e(k, "c\"q\\\n\u00e9", count(), min(s), max(k), avg(k)) :- t(k, s, true), k >= -9223372036854775808.
not(y) :- view(x), y = -(x - (1 - 2)) * (3 + x) % -4 / -x, not t(y, _, false), 0 = y.
flag() :- t(_, "x", _), not flag2().
"#;

/// Parses a text that must have no syntax errors.
fn parse_ok(text: &str) -> Program {
    let parsed = parse(text);
    let source = Source::new("test.rnt", text);
    assert!(
        parsed.diagnostics.is_empty(),
        "{text}\n{}",
        render_all(&parsed.diagnostics, &source)
    );
    parsed.program
}

/// Canonical text parses back to the same program, and is a fixed point.
fn assert_round_trip(text: &str) -> String {
    let program = parse_ok(text);
    let canonical = canonical_text(&program);
    let reparsed = parse_ok(&canonical);
    assert_eq!(normalize(&reparsed), normalize(&program), "{canonical}");
    assert_eq!(canonical_text(&reparsed), canonical);
    canonical
}

#[test]
fn canonical_text_of_the_design_sample() {
    let expected = "\
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
relation orders(id: int, customer: int, amount: int).
view order_plan(id: int, plan: str).
view plan_total(plan: str, total: int, n: int).
view reach(x: int, y: int).
ephemeral big_order(id: int).
denial orphan(id: int).

big_order(i) :- a > 900, orders(i, _, a).
order_plan(i, p) :- customers(c, p), orders(i, c, _).
orphan(i) :- not customers(c, _), orders(i, c, _).
plan_total(p, sum(a), count()) :- customers(c, p), orders(_, c, a).
reach(x, y) :- edge(x, y).
reach(x, z) :- edge(y, z), reach(x, y).
";
    assert_eq!(assert_round_trip(SAMPLE), expected);
}

#[test]
fn canonical_text_of_every_construct() {
    let expected = r#"relation t(k: int, s: str, b: bool).
relation view(x: int).
view not(x: int).
ephemeral e(k: int, s: str, n: int, lo: str, hi: int, avg: int).
denial flag().

e(k, "c\"q\\\né", count(), min(s), max(k), avg(k)) :- k >= -9223372036854775808, t(k, s, true).
flag() :- not flag2(), t(_, "x", _).
not(y) :- 0 = y, not t(y, _, false), view(x), y = -(x - (1 - 2)) * (3 + x) % -4 / -x.
"#;
    assert_eq!(assert_round_trip(RICH), expected);
}

/// `count_distinct(x)` prints as written, beside the other aggregates, whatever the argument's
/// type; a program without it keeps the text (and so the state hash) it had before.
#[test]
fn canonical_text_of_count_distinct() {
    let text = "relation t(k: int, s: str, b: bool).\n\
                view d(k: int, strs: int, bools: int, n: int, keys: int).\n\
                d(k, count_distinct(s), count_distinct(b), count(), count_distinct(k)) :- t(k, s, b).\n";
    let expected = "relation t(k: int, s: str, b: bool).
view d(k: int, strs: int, bools: int, n: int, keys: int).

d(k, count_distinct(s), count_distinct(b), count(), count_distinct(k)) :- t(k, s, b).
";
    assert_eq!(assert_round_trip(text), expected);
}

/// `concat(x, "sep")` prints with its separator escaped as the language's string literals
/// are (a quote, a backslash, a line break, a tab), beside the other aggregates.
#[test]
fn canonical_text_of_concat() {
    let text = r#"relation t(k: int, s: str).
view c(k: int, plain: str, odd: str, n: int, empty: str).
c(k, concat(s,   ", "), concat(s, "\"\\\n\t"), count(), concat(s, "")) :- t(k, s).
"#;
    let expected = r#"relation t(k: int, s: str).
view c(k: int, plain: str, odd: str, n: int, empty: str).

c(k, concat(s, ", "), concat(s, "\"\\\n\t"), count(), concat(s, "")) :- t(k, s).
"#;
    assert_eq!(assert_round_trip(text), expected);
}

#[test]
fn empty_program() {
    assert_eq!(assert_round_trip("# nothing here\n"), "");
    assert_eq!(
        assert_round_trip("relation r(x: int).\n"),
        "relation r(x: int).\n"
    );
}

#[test]
fn variables_are_renumbered_in_canonical_order() {
    let program = parse_ok("v(x) :- s(y), r(x, y).");
    assert_eq!(program.rules[0].variables, ["x", "y"]);
    let program = parse_ok("v(y) :- s(x), r(z, x).");
    let normalized = normalize(&program);
    // Canonical body: `r(z, x), s(x)`; variables in first-occurrence order from the head.
    assert_eq!(normalized.rules[0].variables, ["y", "z", "x"]);
}

#[test]
fn layout_comments_and_order_do_not_change_the_text() {
    let a = "relation r(x: int). view v(x: int).\nv(x) :- r(x), x > 1, not r(0).";
    let b = "view v(x: int).   # the view\n\
             relation r(\n  x : int\n) .\n\
             v( x ) :-\n    not r( 0 ),   # first\n    x>1 ,\n    r(x) .";
    assert_eq!(canonical_text(&parse_ok(a)), canonical_text(&parse_ok(b)));
}

#[test]
fn programs_that_differ_have_different_text() {
    let texts = [
        "v(x) :- r(x), x > 1.",
        "v(x) :- r(x), x >= 1.",
        "v(x) :- r(x), 1 < x.",
        "v(y) :- r(y), y > 1.",
        "v(x) :- r(x), x > 1, x > 1.",
        "v(x) :- r(x, _), x > 1.",
        "v(x) :- r(x), x > -1.",
        "v(x) :- r(x), x > -(1).",
        "v(x) :- r(x), x > 1 - 2 - 3.",
        "v(x) :- r(x), x > 1 - (2 - 3).",
    ];
    let canonical: std::collections::BTreeSet<String> =
        texts.iter().map(|t| canonical_text(&parse_ok(t))).collect();
    assert_eq!(canonical.len(), texts.len());
}

// ---- property tests ----

/// A generated program, kept as text pieces so it can be laid out and ordered at will.
#[derive(Clone, Debug)]
struct Pieces {
    declarations: Vec<String>,
    /// Each rule: its head and its body literals.
    rules: Vec<(String, Vec<String>)>,
}

const NAMES: &[&str] = &["r", "s", "edge", "view", "not", "count", "relation", "a_1"];
const VARIABLES: &[&str] = &["x", "y", "z", "_v", "count", "not", "sum", "v2"];

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(NAMES).prop_map(str::to_string)
}

fn variable() -> impl Strategy<Value = String> {
    prop::sample::select(VARIABLES).prop_map(str::to_string)
}

fn constant() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        "[a-z \"\\\\é\u{1}#.]{0,6}".prop_map(|s| rnt_lang::Value::Str(s).to_string()),
        Just(r#""\u00e9\/\t""#.to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
    ]
}

fn term() -> impl Strategy<Value = String> {
    prop_oneof![variable(), Just("_".to_string()), constant()]
}

/// Expressions written with random, often redundant, parentheses.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![variable(), constant()];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| format!("({e})")),
            inner.clone().prop_map(|e| format!("-({e})")),
            variable().prop_map(|v| format!("-{v}")),
            (
                inner.clone(),
                prop::sample::select(&["+", "-", "*", "/", "%"][..]),
                inner
            )
                .prop_map(|(l, op, r)| format!("{l} {op} ({r})")),
        ]
    })
}

fn atom() -> impl Strategy<Value = String> {
    (name(), prop::collection::vec(term(), 0..4))
        .prop_map(|(name, terms)| format!("{name}({})", terms.join(", ")))
}

fn literal() -> impl Strategy<Value = String> {
    const OPS: &[&str] = &["=", "!=", "<", "<=", ">", ">="];
    prop_oneof![
        atom(),
        atom().prop_map(|a| format!("not {a}")),
        (expr(), prop::sample::select(OPS), expr()).prop_map(|(l, op, r)| format!("{l} {op} {r}")),
    ]
}

fn head() -> impl Strategy<Value = String> {
    let aggregate = prop_oneof![
        Just("count()".to_string()),
        (
            prop::sample::select(&["sum", "min", "max", "avg", "count_distinct"][..]),
            variable()
        )
            .prop_map(|(f, v)| format!("{f}({v})")),
        (
            variable(),
            prop::sample::select(&["", ", ", "\\\"|\\\\", "\\n"][..])
        )
            .prop_map(|(v, s)| format!("concat({v}, \"{s}\")")),
    ];
    let head_term = prop_oneof![3 => term(), 1 => aggregate];
    (name(), prop::collection::vec(head_term, 0..4))
        .prop_map(|(name, terms)| format!("{name}({})", terms.join(", ")))
}

fn declaration() -> impl Strategy<Value = String> {
    let kind = prop::sample::select(&["relation", "view", "ephemeral", "denial"][..]);
    let attribute = (
        variable(),
        prop::sample::select(&["int", "str", "bool"][..]),
    )
        .prop_map(|(name, ty)| format!("{name}: {ty}"));
    // A key clause, as the parser takes it (the checker judges its names): none, or any
    // list of names, the attributes' or others, repeats and the empty list included.
    let key = prop::option::of(prop::collection::vec(variable(), 0..3))
        .prop_map(|key| key.map_or(String::new(), |names| format!(" key({})", names.join(", "))));
    (kind, name(), prop::collection::vec(attribute, 0..4), key)
        .prop_map(|(kind, name, attrs, key)| format!("{kind} {name}({}){key}.", attrs.join(", ")))
}

fn pieces() -> impl Strategy<Value = Pieces> {
    (
        prop::collection::vec(declaration(), 0..5),
        prop::collection::vec((head(), prop::collection::vec(literal(), 1..5)), 0..6),
    )
        .prop_map(|(declarations, rules)| Pieces {
            declarations,
            rules,
        })
}

/// A small deterministic generator for shuffles and layout choices.
struct Choices(u64);

impl Choices {
    fn next(&mut self, n: usize) -> usize {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.next(i + 1));
        }
    }

    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.next(options.len())]
    }
}

/// Writes the pieces in a shuffled order with random layout and comments.
fn render(pieces: &Pieces, seed: u64) -> String {
    let mut choices = Choices(seed | 1);
    let mut items: Vec<String> = pieces.declarations.clone();
    for (head, body) in &pieces.rules {
        let mut body = body.clone();
        choices.shuffle(&mut body);
        let mut rule = format!("{head}{}:-", choices.pick(&[" ", "", "\n  ", " # head\n"]));
        for (i, literal) in body.iter().enumerate() {
            if i > 0 {
                rule.push_str(choices.pick(&[",", ", ", " ,\n\t", ", # and :- .\n    "]));
            }
            rule.push_str(choices.pick(&["", " ", "\n"]));
            rule.push_str(literal);
        }
        rule.push_str(choices.pick(&[".", " .", "\n."]));
        items.push(rule);
    }
    choices.shuffle(&mut items);
    let mut text = String::new();
    for item in items {
        text.push_str(&item);
        text.push_str(choices.pick(&["\n", "\n\n", " ", "   # a comment, with \"quotes\" :- .\n"]));
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn canonical_text_parses_back_to_the_same_program(pieces in pieces(), seed in any::<u64>()) {
        assert_round_trip(&render(&pieces, seed));
    }

    #[test]
    fn layout_and_order_never_change_the_canonical_text(
        pieces in pieces(),
        seed_a in any::<u64>(),
        seed_b in any::<u64>(),
    ) {
        let a = canonical_text(&parse_ok(&render(&pieces, seed_a)));
        let b = canonical_text(&parse_ok(&render(&pieces, seed_b)));
        prop_assert_eq!(a, b);
    }

    #[test]
    fn the_sample_in_any_order_has_one_text(seed in any::<u64>()) {
        let pieces = sample_pieces();
        let text = render(&pieces, seed);
        prop_assert_eq!(canonical_text(&parse_ok(&text)), canonical_text(&parse_ok(SAMPLE)));
    }
}

/// The docs/design.md sample as pieces.
fn sample_pieces() -> Pieces {
    let mut pieces = Pieces {
        declarations: Vec::new(),
        rules: Vec::new(),
    };
    for line in SAMPLE.lines() {
        let line = line.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        match line.split_once(" :- ") {
            Some((head, body)) => {
                let body = body.strip_suffix('.').unwrap();
                // Split on the commas between literals (those outside parentheses).
                let mut literals = Vec::new();
                let (mut depth, mut start) = (0, 0);
                for (i, c) in body.char_indices() {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        ',' if depth == 0 => {
                            literals.push(body[start..i].trim().to_string());
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                literals.push(body[start..].trim().to_string());
                pieces.rules.push((head.to_string(), literals));
            }
            None => pieces.declarations.push(line.to_string()),
        }
    }
    assert_eq!((pieces.declarations.len(), pieces.rules.len()), (8, 6));
    pieces
}

#[test]
fn a_default_is_kept_in_the_declaration_and_read_into_its_type() {
    let canonical = assert_round_trip(
        "relation t(a: int?, b: str? default \"x\", c: int default 0, \
         d: decimal(5, 2) default 7, e: date? default \"2024-01-02\").",
    );
    assert_eq!(
        canonical,
        "relation t(a: int?, b: str? default \"x\", c: int default 0, \
         d: decimal(5, 2) default 7.00, e: date? default date(\"2024-01-02\")).\n"
    );
}

/// A null test of a condition keeps its parentheses: `(a > 3) is not null` written without
/// them read back as `a > (3 is not null)`, and a state holding it could not be read again
/// (every command exited 3; the SQL differential test found it through `(a > 3) IS NOT NULL`).
#[test]
fn a_null_test_of_a_condition_round_trips() {
    for body in [
        "(a > 3) is not null",
        "(a > 3 or a < 0) is null",
        "(not (a = 1)) is not null",
    ] {
        let text = format!(
            "relation t(k: int, a: int?) key(k).\nview v(k: int).\nv(k) :- t(k, a), {body}.\n"
        );
        let canonical = assert_round_trip(&text);
        assert!(canonical.contains("is "), "{canonical}");
    }
}
