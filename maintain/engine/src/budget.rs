//! The memory budget: work that cannot fit stops with a clear error, the store untouched,
//! instead of growing until the operating system kills the process.
//!
//! The embedding program says how to measure memory and what the limit is
//! ([`set_memory_budget`]; the `rnt` binary counts the bytes its allocator holds). Long
//! work calls [`check`] at safe points — each round of a recursive fixpoint, each
//! maintenance operator, each step of an import — naming what it is doing and how far it
//! got. Without a budget, [`check`] is one relaxed atomic load.
//!
//! *Invariant: a check fails only before anything is published, so a refused command
//! leaves the head where it was (chunks already written are unreachable; `gc` drops them).*

use crate::{EngineError, EngineResult};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The most bytes the work may hold; 0 means no budget.
static LIMIT_BYTES: AtomicUsize = AtomicUsize::new(0);

/// How to read the bytes held now.
static METER: OnceLock<fn() -> usize> = OnceLock::new();

/// Sets the memory budget: `meter` returns the bytes the process holds now, and work stops
/// once that exceeds `limit_bytes` (0 removes the budget). The meter is fixed by the first
/// call; later calls change the limit only.
pub fn set_memory_budget(meter: fn() -> usize, limit_bytes: usize) {
    let _ = METER.set(meter);
    LIMIT_BYTES.store(limit_bytes, Ordering::Relaxed);
}

/// The budget in force, in bytes (0: none).
pub fn memory_budget() -> usize {
    LIMIT_BYTES.load(Ordering::Relaxed)
}

/// Fails with a user error (exit 1) when the process holds more than the budget.
/// `doing` says what was being done and how far it got, e.g. "computing `reach` (round
/// 812, 3401220 tuples so far)"; it is only called when the check fails.
pub fn check(doing: impl FnOnce() -> String) -> EngineResult<()> {
    let limit = LIMIT_BYTES.load(Ordering::Relaxed);
    if limit == 0 {
        return Ok(());
    }
    let Some(meter) = METER.get() else {
        return Ok(());
    };
    let held = meter();
    if held <= limit {
        return Ok(());
    }
    Err(EngineError::user(format!(
        "out of memory budget while {}: {} MiB held, the budget is {} MiB; nothing was \
         committed (raise it with --memory-budget or RNT_MEMORY_BUDGET)",
        doing(),
        held.div_ceil(1 << 20),
        limit >> 20
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static HELD: AtomicUsize = AtomicUsize::new(0);

    #[test]
    fn a_check_fails_only_over_the_budget_and_names_the_work() {
        set_memory_budget(|| HELD.load(Ordering::Relaxed), 0);
        HELD.store(10 << 20, Ordering::Relaxed);
        assert!(check(|| unreachable!("no budget")).is_ok());
        set_memory_budget(|| HELD.load(Ordering::Relaxed), 20 << 20);
        assert!(check(|| unreachable!("under the budget")).is_ok());
        HELD.store(30 << 20, Ordering::Relaxed);
        let error = check(|| "computing `reach` (round 3)".to_string()).unwrap_err();
        assert!(
            matches!(error, EngineError::User(_)),
            "a user error (exit 1): {error}"
        );
        let text = error.to_string();
        assert!(text.contains("computing `reach` (round 3)"), "{text}");
        assert!(text.contains("30 MiB held, the budget is 20 MiB"), "{text}");
        set_memory_budget(|| 0, 0);
    }
}
