//! Guards the tuple encoding's contract for every type (int, str, bool, decimals of both
//! widths, dates, timestamps, doubles and reals) and nullable columns: byte order is tuple order, decode
//! inverts encode, leading columns encode to a key prefix, and decoding arbitrary bytes
//! never panics.

use proptest::prelude::*;
use rnt_lang::tuple::{
    decode_permuted, decode_tuple, encode_permuted, encode_prefix, encode_tuple, Tuple,
};
use rnt_lang::value::Float;
use rnt_lang::{ColumnType, Decimal, Type, Value};

fn arb_base_type() -> impl Strategy<Value = Type> {
    prop_oneof![
        Just(Type::Int),
        Just(Type::Str),
        Just(Type::Bool),
        Just(Type::Decimal {
            precision: 6,
            scale: 2
        }),
        Just(Type::Decimal {
            precision: 30,
            scale: 5
        }),
        Just(Type::Date),
        Just(Type::Timestamp),
        Just(Type::Double),
        Just(Type::Real),
    ]
}

fn arb_type() -> impl Strategy<Value = ColumnType> {
    (arb_base_type(), any::<bool>()).prop_map(|(ty, nullable)| ColumnType { ty, nullable })
}

/// Values of a column: null now and then where it may hold one.
fn arb_value(column: ColumnType) -> BoxedStrategy<Value> {
    let present = arb_present(column.ty);
    if column.nullable {
        prop_oneof![1 => Just(Value::Null), 3 => present].boxed()
    } else {
        present
    }
}

/// Values from small domains (so tuples often share leading columns) plus the extremes.
fn arb_present(ty: Type) -> BoxedStrategy<Value> {
    match ty {
        Type::Decimal { precision, scale } => {
            let max = 10i128.pow(u32::from(precision)) - 1;
            prop_oneof![-3i128..4, Just(max), Just(-max), -max..=max]
                .prop_map(move |units| Value::Decimal(Decimal::new(units, scale).unwrap()))
                .boxed()
        }
        Type::Date => prop_oneof![-2i32..3, Just(i32::MIN), Just(i32::MAX), any::<i32>()]
            .prop_map(Value::Date)
            .boxed(),
        Type::Timestamp => prop_oneof![-2i64..3, Just(i64::MIN), Just(i64::MAX), any::<i64>()]
            .prop_map(Value::Timestamp)
            .boxed(),
        Type::Int => prop_oneof![
            -2i64..3,
            Just(i64::MIN),
            Just(i64::MAX),
            Just(-256),
            Just(255),
            any::<i64>(),
        ]
        .prop_map(Value::Int)
        .boxed(),
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        // Every bit pattern (NaNs of every payload, -0.0, subnormals), made canonical, plus
        // the special values often.
        Type::Double => prop_oneof![
            any::<u64>().prop_map(f64::from_bits),
            prop::sample::select(vec![
                0.0,
                -0.0,
                5e-324,
                -5e-324,
                1.0,
                -1.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                f64::MAX,
                f64::MIN
            ]),
        ]
        .prop_map(|x| Value::Float(Float::double(x)))
        .boxed(),
        Type::Real => prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            prop::sample::select(vec![0.0f32, -0.0, 1e-45, 1.0, f32::INFINITY, f32::NAN]),
        ]
        .prop_map(|x| Value::Float(Float::real(x)))
        .boxed(),
        Type::Str => prop::collection::vec(
            prop_oneof![
                Just('\0'),
                Just('\u{1}'),
                Just('a'),
                Just('b'),
                Just('\u{ff}'),
                Just('\u{e9}'),
                any::<char>(),
            ],
            0..5,
        )
        .prop_map(String::from_iter)
        .prop_map(Value::Str)
        .boxed(),
    }
}

fn arb_tuple(types: &[ColumnType]) -> Vec<BoxedStrategy<Value>> {
    types.iter().map(|&ty| arb_value(ty)).collect()
}

/// A schema and two tuples of it.
fn arb_pair() -> impl Strategy<Value = (Vec<ColumnType>, Tuple, Tuple)> {
    prop::collection::vec(arb_type(), 0..5).prop_flat_map(|types| {
        let a = arb_tuple(&types);
        let b = arb_tuple(&types);
        (Just(types), a, b)
    })
}

/// A schema, a tuple of it and a permutation of its columns.
fn arb_permuted() -> impl Strategy<Value = (Vec<ColumnType>, Tuple, Tuple, Vec<usize>)> {
    arb_pair().prop_flat_map(|(types, a, b)| {
        let order = Just((0..types.len()).collect::<Vec<usize>>()).prop_shuffle();
        (Just(types), Just(a), Just(b), order)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn byte_order_is_tuple_order((types, a, b) in arb_pair()) {
        let ea = encode_tuple(&a, &types).unwrap();
        let eb = encode_tuple(&b, &types).unwrap();
        prop_assert_eq!(ea.cmp(&eb), a.cmp(&b), "{:?} vs {:?}", a, b);
    }

    #[test]
    fn decode_inverts_encode((types, a, _b) in arb_pair()) {
        let bytes = encode_tuple(&a, &types).unwrap();
        prop_assert_eq!(decode_tuple(&bytes, &types).unwrap(), a);
    }

    #[test]
    fn leading_columns_are_a_key_prefix((types, a, b) in arb_pair()) {
        let ea = encode_tuple(&a, &types).unwrap();
        let eb = encode_tuple(&b, &types).unwrap();
        for k in 0..=types.len() {
            let prefix = encode_prefix(&a[..k], &types).unwrap();
            prop_assert_eq!(&prefix, &encode_prefix(&a[..k], &types[..k]).unwrap());
            prop_assert!(ea.starts_with(&prefix));
            // A prefix scan finds exactly the tuples with these leading values.
            prop_assert_eq!(eb.starts_with(&prefix), b[..k] == a[..k], "k = {}", k);
        }
    }

    #[test]
    fn index_keys_follow_the_permuted_order((types, a, b, order) in arb_permuted()) {
        let ka = encode_permuted(&a, &types, &order).unwrap();
        let kb = encode_permuted(&b, &types, &order).unwrap();
        let permute = |t: &Tuple| order.iter().map(|&c| t[c].clone()).collect::<Tuple>();
        prop_assert_eq!(ka.cmp(&kb), permute(&a).cmp(&permute(&b)));
        prop_assert_eq!(decode_permuted(&ka, &types, &order).unwrap(), a);
    }

    #[test]
    fn decoding_random_bytes_never_panics(
        types in prop::collection::vec(arb_type(), 0..5),
        bytes in prop::collection::vec(
            prop_oneof![Just(0u8), Just(1u8), Just(0xffu8), any::<u8>()], 0..40),
    ) {
        // Whatever it returns, an accepted input is the canonical encoding of its tuple.
        if let Ok(tuple) = decode_tuple(&bytes, &types) {
            prop_assert_eq!(encode_tuple(&tuple, &types).unwrap(), bytes);
        }
    }

    #[test]
    fn decoding_damaged_encodings_never_panics(
        (types, a, _b) in arb_pair(),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let bytes = encode_tuple(&a, &types).unwrap();
        if !bytes.is_empty() {
            let truncated = &bytes[..cut.index(bytes.len())];
            prop_assert!(decode_tuple(truncated, &types).is_err());
            let mut damaged = bytes.clone();
            damaged[flip.index(bytes.len())] = byte;
            if let Ok(tuple) = decode_tuple(&damaged, &types) {
                prop_assert_eq!(encode_tuple(&tuple, &types).unwrap(), damaged);
            }
        }
        let mut longer = bytes;
        longer.push(byte);
        prop_assert!(decode_tuple(&longer, &types).is_err());
    }
}
