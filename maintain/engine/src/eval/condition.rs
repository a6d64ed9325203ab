//! Evaluating conditions, `case` and `like` (`docs/design.md`, SQL's three-valued logic):
//! a comparison as a value is a bool, or null when an operand is; `and` and `or` follow
//! SQL's truth tables (`false and null` is false, `true or null` true); `not` of null is
//! null; `is [not] null` is never null; `case` takes the first branch whose condition is
//! true (a null condition is not); `like` matches `%` (any run of characters) and `_` (one
//! character), case-sensitively, with no escape character.

use crate::eval::expr::{eval_expr, Bindings};
use crate::{EngineError, EngineResult};
use rnt_lang::syntax::ast::{CmpOp, Expr, LogicOp};
use rnt_lang::value::{compare, Value};

/// `left op right` as a value.
pub fn compare_values(op: CmpOp, left: &Value, right: &Value) -> Value {
    match compare(left, right) {
        Some(ordering) => Value::Bool(op.holds(ordering)),
        None => Value::Null,
    }
}

/// A condition's value as three-valued truth: `Some(bool)`, or `None` for null.
pub fn truth(value: &Value, rule: &str) -> EngineResult<Option<bool>> {
    match value {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        other => Err(EngineError::internal(format!(
            "rule `{rule}`: a condition is {other}, not a bool (type checker bug)"
        ))),
    }
}

fn of_truth(truth: Option<bool>) -> Value {
    truth.map_or(Value::Null, Value::Bool)
}

/// `left op right`: the right side is not evaluated when the left decides it.
pub fn logic(
    op: LogicOp,
    left: &Expr,
    right: &Expr,
    bindings: &Bindings,
    rule: &str,
) -> EngineResult<Value> {
    let a = truth(&eval_expr(left, bindings, rule)?, rule)?;
    let decided = match op {
        LogicOp::And => a == Some(false),
        LogicOp::Or => a == Some(true),
    };
    if decided {
        return Ok(of_truth(a));
    }
    let b = truth(&eval_expr(right, bindings, rule)?, rule)?;
    Ok(of_truth(op.apply(a, b)))
}

/// `not e`.
pub fn not(value: &Value, rule: &str) -> EngineResult<Value> {
    Ok(of_truth(truth(value, rule)?.map(|b| !b)))
}

/// `case when c then v … else e end`.
pub fn case(
    branches: &[(Expr, Expr)],
    otherwise: Option<&Expr>,
    bindings: &Bindings,
    rule: &str,
) -> EngineResult<Value> {
    for (condition, value) in branches {
        if truth(&eval_expr(condition, bindings, rule)?, rule)? == Some(true) {
            return eval_expr(value, bindings, rule);
        }
    }
    match otherwise {
        Some(value) => eval_expr(value, bindings, rule),
        None => Ok(Value::Null),
    }
}

/// Whether `text` matches the LIKE `pattern`.
pub fn like(text: &str, pattern: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    // matched[j]: the text read so far matches pattern[..j] (a row of the classic table).
    let mut matched = vec![false; pattern.len() + 1];
    matched[0] = true;
    for j in 1..=pattern.len() {
        matched[j] = matched[j - 1] && pattern[j - 1] == '%';
    }
    for &c in &text {
        let mut next = vec![false; pattern.len() + 1];
        for j in 1..=pattern.len() {
            next[j] = match pattern[j - 1] {
                '%' => next[j - 1] || matched[j],
                '_' => matched[j - 1],
                p => matched[j - 1] && p == c,
            };
        }
        matched = next;
    }
    matched[pattern.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_percent_and_underscore() {
        assert!(like("hello", "h%o"));
        assert!(like("hello", "%"));
        assert!(like("", "%"));
        assert!(!like("", "_"));
        assert!(like("héllo", "h_llo"));
        assert!(!like("hello", "H%"));
        assert!(like("a%b", "a%b"));
        assert!(like("abc", "%b%"));
        assert!(!like("abc", "%d%"));
        assert!(like("aaa", "a%a%a"));
        assert!(!like("aa", "a%a%a"));
    }

    #[test]
    fn three_valued_truth_tables() {
        let t = Some(true);
        let f = Some(false);
        assert_eq!(LogicOp::And.apply(f, None), f);
        assert_eq!(LogicOp::And.apply(t, None), None);
        assert_eq!(LogicOp::Or.apply(t, None), t);
        assert_eq!(LogicOp::Or.apply(f, None), None);
        assert_eq!(LogicOp::And.apply(t, t), t);
        assert_eq!(LogicOp::Or.apply(f, f), f);
        assert_eq!(
            compare_values(CmpOp::Lt, &Value::Int(1), &Value::Null),
            Value::Null
        );
        assert_eq!(not(&Value::Null, "r").unwrap(), Value::Null);
    }
}
