//! Guards the change-file syntax: what parses, every parse and check error with its exact
//! one-line message, and that a change shown with `Display` parses back to itself.

use proptest::prelude::*;
use rnt_lang::change::{check_changes, parse_change, parse_changes};
use rnt_lang::{Attribute, Change, ChangeSet, RelationSchema, Sign, Type, Value};

fn schemas() -> Vec<RelationSchema> {
    vec![
        RelationSchema::new(
            "orders",
            vec![
                Attribute::new("id", Type::Int),
                Attribute::new("customer", Type::Int),
                Attribute::new("amount", Type::Int),
            ],
        ),
        RelationSchema::new(
            "customers",
            vec![
                Attribute::new("id", Type::Int),
                Attribute::new("plan", Type::Str),
            ],
        ),
        RelationSchema::new("flags", vec![Attribute::new("on", Type::Bool)]),
    ]
}

/// Parses and checks `text` against [`schemas`].
fn parse_and_check(text: &str, source: Option<&str>) -> Result<ChangeSet, String> {
    let schemas = schemas();
    let changes = parse_changes(text, source).map_err(|e| e.to_string())?;
    check_changes(changes, |name| schemas.iter().find(|s| s.name == name))
        .map_err(|e| e.to_string())
}

/// Expects `text` to be refused with exactly `message`.
fn check_error(text: &str, message: &str) {
    match parse_and_check(text, None) {
        Ok(set) => panic!("{text:?} was accepted: {set:?}"),
        Err(actual) => assert_eq!(actual, message, "for {text:?}"),
    }
}

fn s(text: &str) -> Value {
    Value::Str(text.to_string())
}

#[test]
fn a_change_file_parses() {
    let text = "# orders of the day\n\
                +orders(1, 7, 30)\n\
                \n\
                \t-  customers ( 3 ,\"pro\" )   # downgrade\r\n\
                +customers(3, \"a\\\"b\\u00e9 # not a comment\")\n\
                +flags(true)\n\
                -orders(-9223372036854775808, 0, 9223372036854775807)";
    let set = parse_and_check(text, Some("day.txt")).unwrap();
    let got: Vec<(Sign, &str, &[Value], usize)> = set
        .changes()
        .iter()
        .map(|c| (c.sign, c.relation.as_str(), c.values.as_slice(), c.line))
        .collect();
    let orders = [Value::Int(1), Value::Int(7), Value::Int(30)];
    let pro = [Value::Int(3), s("pro")];
    let quoted = [Value::Int(3), s("a\"b\u{e9} # not a comment")];
    let extremes = [Value::Int(i64::MIN), Value::Int(0), Value::Int(i64::MAX)];
    assert_eq!(
        got,
        vec![
            (Sign::Insert, "orders", &orders[..], 2),
            (Sign::Delete, "customers", &pro[..], 4),
            (Sign::Insert, "customers", &quoted[..], 5),
            (Sign::Insert, "flags", &[Value::Bool(true)][..], 6),
            (Sign::Delete, "orders", &extremes[..], 7),
        ]
    );
    assert_eq!(set.changes()[0].source.as_deref(), Some("day.txt"));
    let groups = set.by_relation();
    assert_eq!(
        groups.keys().copied().collect::<Vec<_>>(),
        ["customers", "flags", "orders"]
    );
    assert_eq!(groups["orders"].len(), 2);
}

#[test]
fn empty_and_comment_only_input_has_no_changes() {
    assert!(parse_and_check("", None).unwrap().is_empty());
    assert!(parse_and_check("\n  # nothing\n\t\n", None)
        .unwrap()
        .is_empty());
}

#[test]
fn syntax_errors_name_line_column_and_expectation() {
    let cases = [
        ("orders(1, 7, 30)", "line 1, column 1: expected `+`, `-` or `~` at the start of a change, found `orders`"),
        ("\n*orders(1)", "line 2, column 1: expected `+`, `-` or `~` at the start of a change, found `*`"),
        ("+ (1)", "line 1, column 3: expected a relation name after `+`, found `(`"),
        ("-", "line 1, column 2: expected a relation name after `-`, found end of line"),
        ("+orders", "line 1, column 8: expected `(` after the relation name, found end of line"),
        ("+orders[1]", "line 1, column 8: expected `(` after the relation name, found `[`"),
        ("\n\n+orders(1, 7 x)", "line 3, column 14: expected `,` or `)` after value, found `x`"),
        ("+orders(1, 7, 30", "line 1, column 17: expected `,` or `)` after value, found end of line"),
        ("+orders(1 # c\n", "line 1, column 11: expected `,` or `)` after value, found `#`"),
        ("+orders(1.5)", "line 1: orders takes 3 values, found 1"),
        ("+orders(12abc)", "line 1, column 11: expected `,` or `)` after value, found `abc`"),
        ("+orders(1,)", "line 1, column 11: expected a value (an int, a decimal, a string in double quotes, `true`, `false`, `null`, date(\"…\") or timestamp(\"…\")), found `)`"),
        ("+orders(yes)", "line 1, column 9: expected a value (an int, a decimal, a string in double quotes, `true`, `false`, `null`, date(\"…\") or timestamp(\"…\")), found `yes`"),
        ("+orders('a')", "line 1, column 9: expected a value (an int, a decimal, a string in double quotes, `true`, `false`, `null`, date(\"…\") or timestamp(\"…\")), found `'`"),
        ("+orders(- 1)", "line 1, column 10: expected digits after `-`, found a space"),
        ("+orders(9223372036854775808)", "line 1, column 9: integer 9223372036854775808 is out of range for int (-9223372036854775808 to 9223372036854775807)"),
        ("+orders(-9223372036854775809)", "line 1, column 9: integer -9223372036854775809 is out of range for int (-9223372036854775808 to 9223372036854775807)"),
        ("+customers(1, \"pro)", "line 1, column 15: string is not closed: expected `\"` before end of line"),
        ("+customers(1, \"p\\\")", "line 1, column 15: string is not closed: expected `\"` before end of line"),
        ("+customers(1, \"p\\x\")", "line 1, column 15: unknown escape `\\x` in string"),
        ("+customers(1, \"\\ud83d\")", "line 1, column 15: unpaired surrogate \\ud83d in string"),
        ("+orders(1, 7, 30) +orders(2, 7, 30)", "line 1, column 19: expected end of line or a `#` comment after `)`, found `+`"),
        ("+customers(\"é\", \"x\" y)", "line 1, column 21: expected `,` or `)` after value, found `y`"),
    ];
    for (text, message) in cases {
        check_error(text, message);
    }
}

#[test]
fn check_errors_name_the_line() {
    let cases = [
        ("+ordrs(1, 7, 30)", "line 1: unknown relation `ordrs`"),
        ("\n-orders(1, 7)", "line 2: orders takes 3 values, found 2"),
        ("+flags()", "line 1: flags takes 1 value, found 0"),
        (
            "+orders(1, \"x\", 30)",
            "line 1: value 2 of orders (customer) must be int, found \"x\"",
        ),
        (
            "+flags(1)",
            "line 1: value 1 of flags (on) must be bool, found 1",
        ),
        (
            "+customers(1, true)",
            "line 1: value 2 of customers (plan) must be str, found true",
        ),
        (
            "+orders(1, 7, 30)\n-orders(2, 7, 30)\n\n# later\n-orders(1, 7, 30)",
            "line 5: orders(1, 7, 30) is already changed on line 1",
        ),
        (
            "+customers(1, \"a\")\n+customers(1, \"a\")",
            "line 2: customers(1, \"a\") is already changed on line 1",
        ),
    ];
    for (text, message) in cases {
        check_error(text, message);
    }
    let long = format!("+customers(1, \"{}\")", "x".repeat(70_000));
    check_error(
        &long,
        "line 1: tuple of customers encodes to 70010 bytes, more than the limit of 65536",
    );
}

/// `planes(tailnum: str, year: int?, seats: int) key(tailnum)` and the unkeyed `orders`.
fn named_schemas() -> Vec<RelationSchema> {
    let mut schemas = schemas();
    let mut year = Attribute::new("year", Type::Int);
    year.nullable = true;
    schemas.push(
        RelationSchema::new(
            "planes",
            vec![
                Attribute::new("tailnum", Type::Str),
                year,
                Attribute::new("seats", Type::Int),
            ],
        )
        .with_key(vec![0]),
    );
    schemas
}

fn check_named(text: &str) -> Result<Vec<String>, String> {
    let schemas = named_schemas();
    let changes = parse_changes(text, None).map_err(|e| e.to_string())?;
    let set = check_changes(changes, |name| schemas.iter().find(|s| s.name == name))
        .map_err(|e| e.to_string())?;
    Ok(set.changes().iter().map(|c| c.to_string()).collect())
}

#[test]
fn named_changes_resolve_into_column_order() {
    let text = "+planes(seats: 55, tailnum: \"N1\")\n\
                +planes(tailnum: \"N2\", year: 2004, seats: 7)\n\
                -planes(tailnum: \"N3\")\n\
                ~planes(seats: 9, tailnum: \"N4\")\n\
                ~planes(\"N5\", _, 3)\n\
                -orders(amount: 30, id: 1, customer: 7)";
    assert_eq!(
        check_named(text).unwrap(),
        [
            "+planes(\"N1\", null, 55)",
            "+planes(\"N2\", 2004, 7)",
            "-planes(\"N3\", _, _)",
            "~planes(\"N4\", _, 9)",
            "~planes(\"N5\", _, 3)",
            "-orders(1, 7, 30)",
        ]
    );
}

#[test]
fn named_change_errors_say_what_to_write() {
    let cases = [
        ("+planes(tailnm: \"N1\", seats: 1)", "line 1: planes has no column `tailnm`; did you mean `tailnum`?"),
        ("+planes(tailnum: \"N1\", seats: 1, seats: 2)", "line 1: column `seats` of planes is named twice"),
        ("+planes(tailnum: \"N1\", 2)", "line 1, column 24: a change names every value or none: write `column: value` for each one, or the values in column order"),
        ("+planes(\"N1\", seats: 2)", "line 1, column 15: a change names every value or none: write `column: value` for each one, or the values in column order"),
        ("+planes(tailnum: \"N1\")", "line 1: an insert into planes must name `seats`: it is `int`, not nullable (only a `?` column may be left out, and is then null)"),
        ("-planes(tailnum: \"N1\", seats: 2)", "line 1: a delete from planes names its key (tailnum) to delete by key, or every column"),
        ("-orders(id: 1)", "line 1: a delete from orders (no key) names every column; missing `customer`, `amount`"),
        ("~planes(seats: 2)", "line 1: an update of planes names its key; missing `tailnum`"),
        ("~orders(id: 1, customer: 2, amount: 3)", "line 1: an update by key (`~`) needs a keyed relation, and orders has no key: delete the tuple and insert the new one"),
        ("~orders(1, 2, 3)", "line 1: an update by key (`~`) needs a keyed relation, and orders has no key: delete the tuple and insert the new one"),
        ("+planes(tailnum: _, seats: 2)", "line 1, column 18: `tailnum: _`: leave the column out instead (a named change names only the columns it gives)"),
        ("+planes(seats: null, tailnum: \"N1\")", "line 1: value 3 of planes (seats) is null, but the column (int) is not nullable"),
        ("~planes(tailnum: \"N1\", seats: 1)\n+planes(tailnum: \"N1\", seats: 2)", "line 2: planes key tailnum=\"N1\" is already updated on line 1 (a change set names each key at most once per sign, and an updated key nowhere else)"),
    ];
    for (text, message) in cases {
        assert_eq!(check_named(text).unwrap_err(), message, "for {text:?}");
    }
}

#[test]
fn errors_name_their_source() {
    let err = parse_changes("+orders(1, 7 x)", Some("day.txt")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "day.txt, line 1, column 14: expected `,` or `)` after value, found `x`"
    );
    assert_eq!((err.line, err.column), (1, Some(14)));

    // The same tuple named by a file and by an argument.
    let schemas = schemas();
    let mut changes = parse_changes("\n+orders(1, 7, 30)", Some("day.txt")).unwrap();
    changes.push(parse_change("-orders(1, 7, 30)", Some("argument 2")).unwrap());
    let err = check_changes(changes, |name| schemas.iter().find(|s| s.name == name)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "argument 2, line 1: orders(1, 7, 30) is already changed in day.txt, line 2"
    );
}

#[test]
fn parse_change_takes_exactly_one() {
    let change = parse_change("  +flags(false) # off", None).unwrap();
    assert_eq!(change.to_string(), "+flags(false)");
    assert_eq!(
        parse_change("# nothing", Some("argument 1"))
            .unwrap_err()
            .to_string(),
        "argument 1, line 1: expected a change like `+orders(1, 7, 30)`, found none"
    );
    assert_eq!(
        parse_change("+flags(true)\n-flags(false)", None)
            .unwrap_err()
            .to_string(),
        "line 2: expected one change, found a second one after `+flags(true)`"
    );
}

fn arb_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::Int),
        any::<bool>().prop_map(Value::Bool),
        any::<String>().prop_map(Value::Str),
        "[a\"\\\\#,() \n\r\t\u{0}\u{1f}\u{7f}\u{e9}\u{2028}]{0,6}".prop_map(Value::Str),
    ]
}

proptest! {
    #[test]
    fn display_parses_back(
        sign in prop::sample::select(vec![Sign::Insert, Sign::Delete, Sign::Update]),
        relation in "[a-z_][a-z0-9_]{0,8}",
        values in prop::collection::vec(arb_value(), 0..4),
        named in any::<bool>(),
    ) {
        // A named change: the columns `c0`, `c1`, … (a name must not be a value's word).
        let names = if named && !values.is_empty() {
            (0..values.len()).map(|i| format!("c{i}")).collect()
        } else {
            Vec::new()
        };
        let change = Change {
            sign,
            relation,
            values,
            names,
            wildcards: Vec::new(),
            line: 1,
            source: None,
        };
        let text = change.to_string();
        prop_assert_eq!(parse_change(&text, None).unwrap(), change);
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(text in "[-+a-z(),\"\\\\0-9 #\n\u{e9}]{0,30}") {
        let _ = parse_changes(&text, None);
    }
}
