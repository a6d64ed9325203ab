//! Guards CSV import and export: RFC 4180 records (quotes, line breaks, CRLF), the header
//! to schema mapping, every error with its exact message, and write-then-read round trips.

use std::io::{self, BufReader, Read};

use proptest::prelude::*;
use rnt_lang::csv::{
    quote_field, write_csv, Columns, CsvReader, ReadOptions, TupleReader, RECORD_BYTES_MAX,
};
use rnt_lang::tuple::Tuple;
use rnt_lang::{Attribute, RelationSchema, Type, Value};

fn orders() -> RelationSchema {
    RelationSchema::new(
        "orders",
        vec![
            Attribute::new("id", Type::Int),
            Attribute::new("plan", Type::Str),
            Attribute::new("paid", Type::Bool),
        ],
    )
}

fn s(text: &str) -> Value {
    Value::Str(text.to_string())
}

/// The records of `input`, or the first error's message.
fn records(input: &[u8]) -> Result<Vec<(usize, Vec<String>)>, String> {
    CsvReader::new(input)
        .map(|record| {
            record
                .map(|r| (r.line, r.fields))
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// The tuples of `input` read as `orders`, or the first error's message.
fn tuples(input: &str) -> Result<Vec<Tuple>, String> {
    let schema = orders();
    let reader = TupleReader::new(input.as_bytes(), &schema).map_err(|e| e.to_string())?;
    reader
        .map(|tuple| tuple.map_err(|e| e.to_string()))
        .collect()
}

fn fields(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

#[test]
fn records_follow_rfc4180() {
    let input = "a,b,c\r\n\
                 1,\"x,y\",\"say \"\"hi\"\"\"\n\
                 2,\"two\nlines\",\"crlf\r\nkept\"\n\
                 \n\
                 ,,\n\
                 \"\"\n\
                 last,\"\",no newline";
    assert_eq!(
        records(input.as_bytes()).unwrap(),
        vec![
            (1, fields(&["a", "b", "c"])),
            (2, fields(&["1", "x,y", "say \"hi\""])),
            (3, fields(&["2", "two\nlines", "crlf\r\nkept"])),
            (7, fields(&["", "", ""])),
            (8, fields(&[""])),
            (9, fields(&["last", "", "no newline"])),
        ]
    );
}

#[test]
fn a_byte_order_mark_is_ignored() {
    assert_eq!(
        records("\u{feff}id\n1\n".as_bytes()).unwrap(),
        vec![(1, fields(&["id"])), (2, fields(&["1"]))]
    );
}

#[test]
fn malformed_records_name_their_line() {
    let cases: [(&[u8], &str); 6] = [
        (
            b"a\nb,\"c\"x\n",
            "line 2: expected `,` or the end of the line after a closing quote, found `x`",
        ),
        (
            b"a,b\"c\n",
            "line 1: `\"` inside an unquoted field (enclose the field in quotes and double the quote)",
        ),
        (
            b"a\n\n\"b,c\nd\n",
            "line 3: quoted field is not closed: expected `\"` before the end of input",
        ),
        (
            b"a\rb\n",
            "line 1: carriage return inside an unquoted field (line endings must be LF or CRLF)",
        ),
        (b"a\n\xff\n", "line 2: the line is not valid UTF-8"),
        (b"a\n\"b\xc3\n", "line 2: the line is not valid UTF-8"),
    ];
    for (input, message) in cases {
        assert_eq!(records(input).unwrap_err(), message, "for {input:?}");
    }
}

#[test]
fn an_unclosed_quote_stops_at_the_record_limit() {
    let mut input = b"a\n\"".to_vec();
    input.extend(std::iter::repeat_n(b"xxxxxxx\n", RECORD_BYTES_MAX / 4).flatten());
    let message = records(&input).unwrap_err();
    assert_eq!(
        message,
        format!(
            "line {}: record starting on line 2 is longer than {RECORD_BYTES_MAX} bytes (is a quoted field not closed?)",
            RECORD_BYTES_MAX / 8 + 1
        )
    );
    let one_line = vec![b'x'; RECORD_BYTES_MAX + 10];
    assert_eq!(
        records(&one_line).unwrap_err(),
        "line 1: record starting on line 1 is longer than 524288 bytes (is a quoted field not closed?)"
    );
}

#[test]
fn read_errors_are_reported_with_the_line() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("disk on fire"))
        }
    }
    let input = BufReader::new(io::Cursor::new(b"id\n".to_vec()).chain(Failing));
    let mut reader = CsvReader::new(input);
    assert_eq!(reader.read_record().unwrap().unwrap().fields, ["id"]);
    let err = reader.read_record().unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 2: cannot read the input: disk on fire"
    );
    assert!(
        reader.read_record().unwrap().is_none(),
        "reading stops after an error"
    );
}

#[test]
fn header_names_map_columns_in_any_order() {
    let input = "paid, id ,plan\r\ntrue,1,pro\nfalse, -2 ,\" spaced \"\n";
    assert_eq!(
        tuples(input).unwrap(),
        vec![
            vec![Value::Int(1), s("pro"), Value::Bool(true)],
            vec![Value::Int(-2), s(" spaced "), Value::Bool(false)],
        ]
    );
    assert_eq!(tuples("id,plan,paid\n").unwrap(), Vec::<Tuple>::new());
}

#[test]
fn header_errors() {
    let cases = [
        (
            "",
            "line 1: expected a header row `id,plan,paid`, found the end of input",
        ),
        (
            "\n\n",
            "line 1: expected a header row `id,plan,paid`, found the end of input",
        ),
        (
            "id,plan,paid,amount\n",
            "line 1: unknown column `amount` in the header (orders has id, plan, paid; --ignore-columns skips the others)",
        ),
        (
            "id,plan,id,paid\n",
            "line 1: column `id` appears twice in the header",
        ),
        (
            "\nplan,id\n",
            "line 2: the header has no column `paid` (orders has id, plan, paid; only a nullable column may be missing)",
        ),
        (
            "plan\n",
            "line 1: the header has no columns `id`, `paid` (orders has id, plan, paid; only a nullable column may be missing)",
        ),
    ];
    for (input, message) in cases {
        assert_eq!(tuples(input).unwrap_err(), message, "for {input:?}");
    }
}

#[test]
fn row_errors_name_line_and_column() {
    let cases = [
        ("id,plan,paid\n1,pro\n", "line 2: expected 3 fields, found 2"),
        ("id,plan,paid\n1,\"a\nb\",true,x\n", "line 2: expected 3 fields, found 4"),
        ("id,plan,paid\n1,a,true\nabc,b,true\n", "line 3, column id: expected an int, found `abc`"),
        ("id,plan,paid\n,b,true\n", "line 2, column id: an empty field is null, and the column is `int`, not nullable"),
        ("id,plan,paid\n1.5,b,true\n", "line 2, column id: expected an int, found `1.5`"),
        (
            "id,plan,paid\n99999999999999999999,b,true\n",
            "line 2, column id: 99999999999999999999 is out of range for int (-9223372036854775808 to 9223372036854775807)",
        ),
        (
            "paid,id,plan\nyes,1,b\n",
            "line 2, column paid: expected a bool (true or false), found `yes`",
        ),
        ("id,plan,paid\n1,b,yes\n", "line 2, column paid: expected a bool (true or false), found `yes`"),
        ("id,plan,paid\n1,\"b\"c,true\n", "line 2: expected `,` or the end of the line after a closing quote, found `c`"),
    ];
    for (input, message) in cases {
        assert_eq!(tuples(input).unwrap_err(), message, "for {input:?}");
    }
    // 64 KiB per encoded tuple: 8 (id) + 60 000 + 2 (plan) + 1 (paid) fits, 70 000 does not.
    let fits = format!("id,plan,paid\n1,{},true\n", "x".repeat(60_000));
    assert_eq!(tuples(&fits).unwrap().len(), 1);
    let long = format!("id,plan,paid\n1,{},true\n", "x".repeat(70_000));
    assert_eq!(
        tuples(&long).unwrap_err(),
        "line 2: tuple encodes to 70011 bytes, more than the limit of 65536"
    );
}

#[test]
fn writer_quotes_only_when_needed() {
    let rows = vec![
        vec![Value::Int(1), s("pro"), Value::Bool(true)],
        vec![Value::Int(-2), s("a,b"), Value::Bool(false)],
        vec![Value::Int(3), s("say \"hi\""), Value::Bool(true)],
        vec![Value::Int(4), s(" lead"), Value::Bool(false)],
        vec![Value::Int(5), s("trail "), Value::Bool(true)],
        vec![Value::Int(6), s("line\nbreak"), Value::Bool(false)],
        vec![Value::Int(7), s("cr\rx"), Value::Bool(true)],
        vec![Value::Int(8), s(""), Value::Bool(false)],
        vec![Value::Int(9), s("in ner\t"), Value::Bool(true)],
    ];
    let out = String::from_utf8(write_csv(Vec::new(), &orders(), &rows).unwrap()).unwrap();
    assert_eq!(
        out,
        "id,plan,paid\n\
         1,pro,true\n\
         -2,\"a,b\",false\n\
         3,\"say \"\"hi\"\"\",true\n\
         4,\" lead\",false\n\
         5,\"trail \",true\n\
         6,\"line\nbreak\",false\n\
         7,\"cr\rx\",true\n\
         8,\"\",false\n\
         9,in ner\t,true\n"
    );
    assert_eq!(tuples(&out).unwrap(), rows);
    assert_eq!(quote_field("plain"), "plain");
    assert_eq!(quote_field("a\"b"), "\"a\"\"b\"");
}

#[test]
fn a_lone_empty_field_is_quoted() {
    let plans = RelationSchema::new("plans", vec![Attribute::new("name", Type::Str)]);
    let rows = vec![vec![s("")], vec![s("basic")]];
    let out = write_csv(Vec::new(), &plans, &rows).unwrap();
    assert_eq!(out, b"name\n\"\"\nbasic\n");
    let back: Result<Vec<Tuple>, _> = TupleReader::new(&out[..], &plans).unwrap().collect();
    assert_eq!(back.unwrap(), rows);
}

#[test]
fn writing_a_tuple_of_another_arity_is_an_error() {
    let mut writer = rnt_lang::csv::CsvWriter::new(Vec::new(), &orders()).unwrap();
    let err = writer.write_tuple(&[Value::Int(1)]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

fn arb_value(ty: Type) -> BoxedStrategy<Value> {
    match ty {
        Type::Int => any::<i64>().prop_map(Value::Int).boxed(),
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        // The CSV round trip of the other types is tested in `real_data_csv.rs`.
        Type::Decimal { .. } | Type::Date | Type::Timestamp | Type::Double | Type::Real => {
            unreachable!("not drawn")
        }
        Type::Str => prop_oneof![any::<String>(), "[a ,\"\r\n\t\u{feff}é]{0,8}",]
            .prop_map(Value::Str)
            .boxed(),
    }
}

/// A schema with attributes `a0`, `a1`, ... and some tuples of it.
fn arb_table() -> impl Strategy<Value = (RelationSchema, Vec<Tuple>)> {
    prop::collection::vec(
        prop_oneof![Just(Type::Int), Just(Type::Str), Just(Type::Bool)],
        1..5,
    )
    .prop_flat_map(|types| {
        let schema = RelationSchema::new(
            "r",
            types
                .iter()
                .enumerate()
                .map(|(i, &ty)| Attribute::new(format!("a{i}"), ty))
                .collect(),
        );
        let row: Vec<BoxedStrategy<Value>> = types.iter().map(|&ty| arb_value(ty)).collect();
        (Just(schema), prop::collection::vec(row, 0..6))
    })
}

proptest! {
    #[test]
    fn write_then_read_gives_the_same_tuples((schema, rows) in arb_table()) {
        let out = write_csv(Vec::new(), &schema, &rows).unwrap();
        let back: Result<Vec<Tuple>, _> = TupleReader::new(&out[..], &schema).unwrap().collect();
        prop_assert_eq!(back.unwrap(), rows);
    }

    #[test]
    fn reading_arbitrary_bytes_never_panics(
        input in prop::collection::vec(
            prop_oneof![Just(b'"'), Just(b','), Just(b'\r'), Just(b'\n'), Just(b'a'), any::<u8>()],
            0..40,
        ),
    ) {
        let _ = records(&input);
        let schema = orders();
        if let Ok(reader) = TupleReader::new(&input[..], &schema) {
            let _ = reader.collect::<Vec<_>>();
        }
    }
}

/// `flights(id: int, tailnum: str?, delay: decimal(6, 1)?, name: str)`.
fn nullable_schema() -> RelationSchema {
    let column = |name: &str, ty: Type, nullable: bool| {
        let mut attribute = Attribute::new(name, ty);
        attribute.nullable = nullable;
        attribute
    };
    RelationSchema::new(
        "flights",
        vec![
            column("id", Type::Int, false),
            column("tailnum", Type::Str, true),
            column("delay", Type::decimal(6, 1).unwrap(), true),
            column("name", Type::Str, false),
        ],
    )
}

fn read_with(input: &str, options: &ReadOptions) -> Result<Vec<Tuple>, String> {
    let schema = nullable_schema();
    let reader =
        TupleReader::with_options(input.as_bytes(), &schema, options).map_err(|e| e.to_string())?;
    reader.collect::<Result<_, _>>().map_err(|e| e.to_string())
}

fn dec(text: &str) -> Value {
    Value::Decimal(rnt_lang::decimal::Decimal::parse(text).unwrap())
}

#[test]
fn empty_fields_quoted_or_not_and_the_null_text() {
    let s = |t: &str| Value::Str(t.to_string());
    let default = ReadOptions::default();
    // Unquoted empty: null where nullable, the empty string in a str column without `?`;
    // quoted empty: always the empty string.
    assert_eq!(
        read_with("id,tailnum,delay,name\n1,,,\n2,\"\",2.5,\"\"\n", &default).unwrap(),
        vec![
            vec![Value::Int(1), Value::Null, Value::Null, s("")],
            vec![Value::Int(2), s(""), dec("2.5"), s("")],
        ]
    );
    let na = ReadOptions {
        null: Some("NA".to_string()),
        ..ReadOptions::default()
    };
    assert_eq!(
        read_with("id,tailnum,delay,name\n1,NA,NA,\n2,,1,\"NA\"\n", &na).unwrap(),
        vec![
            vec![Value::Int(1), Value::Null, Value::Null, s("")],
            vec![Value::Int(2), s(""), dec("1.0"), s("NA")],
        ]
    );
    assert_eq!(
        read_with("id,tailnum,delay,name\n1,,,x\n", &na).unwrap_err(),
        "line 2, column delay: expected a decimal, found an empty field"
    );
    assert_eq!(
        read_with("id,tailnum,delay,name\nNA,a,1,x\n", &na).unwrap_err(),
        "line 2, column id: `NA` is null, and the column is `int`, not nullable"
    );
    assert_eq!(
        read_with("id,tailnum,delay,name\n,a,1,x\n", &default).unwrap_err(),
        "line 2, column id: an empty field is null, and the column is `int`, not nullable"
    );
}

#[test]
fn columns_in_any_order_given_ignored_or_missing_when_nullable() {
    let s = |t: &str| Value::Str(t.to_string());
    // A missing nullable column is null; the header in any order.
    assert_eq!(
        read_with("name,id\nx,1\n", &ReadOptions::default()).unwrap(),
        vec![vec![Value::Int(1), Value::Null, Value::Null, s("x")]]
    );
    let ignore = ReadOptions {
        ignore_extra_columns: true,
        ..ReadOptions::default()
    };
    let schema = nullable_schema();
    let reader =
        TupleReader::with_options("extra,id,name,more\nq,1,x,r\n".as_bytes(), &schema, &ignore)
            .unwrap();
    assert_eq!(reader.ignored_columns(), ["extra", "more"]);
    assert_eq!(
        reader.collect::<Result<Vec<_>, _>>().unwrap(),
        vec![vec![Value::Int(1), Value::Null, Value::Null, s("x")]]
    );
    let tabbed = ReadOptions {
        delimiter: '\t',
        columns: Columns::Given(vec!["name".into(), "delay".into(), "id".into()]),
        ..ReadOptions::default()
    };
    assert_eq!(
        read_with("a,b\t1.5\t7\n\"c\td\"\t\t8\n", &tabbed).unwrap(),
        vec![
            vec![Value::Int(7), Value::Null, dec("1.5"), s("a,b")],
            vec![Value::Int(8), Value::Null, Value::Null, s("c\td")],
        ]
    );
}
