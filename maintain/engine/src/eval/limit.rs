//! The tuple limit where rules derive tuples: a derived tuple, a group key or an aggregate's
//! row may outgrow [`TUPLE_BYTES_MAX`] even when every input tuple fits (a join adds columns,
//! an aggregate adds its values). Such a tuple refuses the define or commit that derives it,
//! naming the rule and the tuple or group, as arithmetic overflow does: it is a fact of the
//! data, not damage and not a bug.
//!
//! Only tuples that become tree keys are checked (a view's tuples, a recursive stratum's,
//! group keys and rows): a denial's witness, an ephemeral read or a query's answer is never
//! stored, so it has no limit.
//!
//! *Invariant: every tuple a rule derives for a stored relation, and every key built from
//! one, encodes to at most [`TUPLE_BYTES_MAX`] bytes — so every tree key fits
//! `rnt_merkle::KEY_BYTES_MAX`.*

use crate::error::{EngineError, EngineResult};
use rnt_lang::diagnostic::clip;
use rnt_lang::tuple::{encoded_bytes, fits_limit, TupleDisplay, TUPLE_BYTES_MAX};
use rnt_lang::value::Value;

const _: () = assert!(TUPLE_BYTES_MAX <= rnt_merkle::KEY_BYTES_MAX);

/// `Ok` when `values`, derived by `rule` for `relation`, fit the tuple limit.
pub fn check_derived(rule: &str, relation: &str, values: &[Value]) -> EngineResult<()> {
    if fits_limit(values) {
        return Ok(());
    }
    let tuple = TupleDisplay { relation, values }.to_string();
    Err(too_large(
        rule,
        &format!("derives {}", clip(&tuple)),
        values,
    ))
}

/// `Ok` when `row`, the output row of the group `group` of `rule`, fits the tuple limit.
pub fn check_group_row(rule: &str, group: &[Value], row: &[Value]) -> EngineResult<()> {
    if fits_limit(row) {
        return Ok(());
    }
    Err(group_too_large(rule, group, "its row", encoded_bytes(row)))
}

/// The error for a key or row of the group `group` of `rule` that encodes to `bytes`,
/// more than the tuple limit; `what` says which ("its key", "its row", "its min/max key",
/// "its count_distinct key", "its concat key"; a long concatenation shows as "its row").
pub fn group_too_large(rule: &str, group: &[Value], what: &str, bytes: usize) -> EngineError {
    let group = TupleDisplay {
        relation: "",
        values: group,
    }
    .to_string();
    EngineError::user(format!(
        "rule `{}`: group {}: {what} encodes to {bytes} bytes, more than the limit of \
         {TUPLE_BYTES_MAX} per tuple",
        clip(rule),
        clip(&group)
    ))
}

fn too_large(rule: &str, what: &str, values: &[Value]) -> EngineError {
    EngineError::user(format!(
        "rule `{}`: {what}, which encodes to {} bytes, more than the limit of \
         {TUPLE_BYTES_MAX} per tuple",
        clip(rule),
        encoded_bytes(values)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tuple_at_the_limit_passes_and_one_byte_more_is_refused_naming_the_rule() {
        // A string of n bytes encodes to n + 2 (its terminator); an int to 8.
        let fits = vec![Value::Int(1), Value::Str("x".repeat(TUPLE_BYTES_MAX - 10))];
        assert_eq!(encoded_bytes(&fits), TUPLE_BYTES_MAX);
        assert!(check_derived("v(i, s) :- r(i, s).", "v", &fits).is_ok());
        let over = vec![Value::Int(1), Value::Str("x".repeat(TUPLE_BYTES_MAX - 9))];
        let message = check_derived("v(i, s) :- r(i, s).", "v", &over)
            .unwrap_err()
            .to_string();
        assert!(message.contains("rule `v(i, s) :- r(i, s).`"), "{message}");
        assert!(message.contains("65537 bytes"), "{message}");
        assert!(message.contains('…') && message.len() < 300, "{message}");
    }

    #[test]
    fn zero_bytes_count_twice() {
        let zeros = vec![Value::Str("\0".repeat(TUPLE_BYTES_MAX / 2))];
        assert_eq!(encoded_bytes(&zeros), TUPLE_BYTES_MAX + 2);
        assert!(check_derived("r", "v", &zeros).is_err());
    }

    #[test]
    fn a_group_s_row_over_the_limit_names_the_group() {
        let group = vec![Value::Str("p".repeat(TUPLE_BYTES_MAX))];
        let mut row = group.clone();
        row.push(Value::Int(3));
        let message = check_group_row("t(p, count()) :- r(p).", &group, &row)
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("rule `t(p, count()) :- r(p).`: group (\"ppp"),
            "{message}"
        );
        assert!(
            message.contains("its row encodes to 65546 bytes"),
            "{message}"
        );
    }
}
