//! Guards how much of the input an error quotes: at most ~80 characters around the fault,
//! with an ellipsis for the rest — a 100 KB CSV field, a 20,000-digit number in a change or
//! a very long program line must not flood the terminal.

use rnt_lang::change::parse_change;
use rnt_lang::check::compile;
use rnt_lang::csv::TupleReader;
use rnt_lang::diagnostic::{render_all, Source};
use rnt_lang::{Attribute, RelationSchema, Type};

/// Every line of `message` is short, and the message says what it must.
fn assert_short(message: &str, needles: &[&str]) {
    for line in message.lines() {
        assert!(
            line.chars().count() <= 200,
            "a line of {} characters: {}…",
            line.chars().count(),
            line.chars().take(120).collect::<String>()
        );
    }
    for needle in needles {
        assert!(message.contains(needle), "expected {needle:?} in {message}");
    }
}

#[test]
fn a_huge_csv_field_is_quoted_around_its_ends() {
    let schema = RelationSchema::new("r", vec![Attribute::new("n", Type::Int)]);
    let field = "x".repeat(60_000); // under the 64 KiB record limit
    let input = format!("n\n{field}\n");
    let error = TupleReader::new(input.as_bytes(), &schema)
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err()
        .to_string();
    assert_short(&error, &["line 2", "expected an int", "xxx…xxx"]);
    let digits = "9".repeat(20_000);
    let input = format!("n\n{digits}\n");
    let error = TupleReader::new(input.as_bytes(), &schema)
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err()
        .to_string();
    assert_short(&error, &["out of range", "999…999"]);
}

#[test]
fn a_huge_token_in_a_change_is_quoted_around_its_ends() {
    let digits = "9".repeat(20_000);
    let error = parse_change(&format!("+r({digits})"), None)
        .unwrap_err()
        .to_string();
    assert_short(&error, &["out of range", "999…999"]);
    let word = "w".repeat(20_000);
    let error = parse_change(&format!("+r(1) {word}"), None)
        .unwrap_err()
        .to_string();
    assert_short(&error, &["www…www"]);
}

#[test]
fn a_long_program_line_is_quoted_around_the_error() {
    let padding = " ".repeat(10_000);
    let text =
        format!("relation a(x: int).{padding}view v(x: int). v(x) :- a(x), nope(x).{padding}\n");
    let diagnostics = compile(&text).unwrap_err();
    let rendered = render_all(&diagnostics, &Source::new("p.rnt", text.as_str()));
    assert_short(&rendered, &["unknown relation", "nope(x)", "…", "^^^^"]);
    // The carets still point at the fault in the quoted window.
    let lines: Vec<&str> = rendered.lines().collect();
    let quoted = lines.iter().position(|l| l.contains("nope(x)")).unwrap();
    let caret = lines[quoted + 1].chars().position(|c| c == '^').unwrap();
    let pointed: String = lines[quoted].chars().skip(caret).take(4).collect();
    assert_eq!(pointed, "nope");
}

#[test]
fn short_lines_are_quoted_whole() {
    let text = "relation a(x: int).\nview v(x: int).\nv(x) :- a(x), nope(x).\n";
    let diagnostics = compile(text).unwrap_err();
    let rendered = render_all(&diagnostics, &Source::new("p.rnt", text));
    assert!(
        rendered.contains("3 | v(x) :- a(x), nope(x).\n"),
        "{rendered}"
    );
    assert!(!rendered.contains('…'), "{rendered}");
}
