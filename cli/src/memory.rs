//! The memory budget of one `rnt` process: an allocator that counts the bytes it holds,
//! the resident set the kernel reports, and the budget (`--memory-budget SIZE`,
//! `RNT_MEMORY_BUDGET`, default half the machine's memory) that long work checks the
//! larger of the two against (`rnt_db::set_memory_budget`, [`held_bytes`]).

use mimalloc::MiMalloc;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Environment variable: the memory budget, as `--memory-budget` takes it.
pub const MEMORY_BUDGET_ENV: &str = "RNT_MEMORY_BUDGET";

/// The budget when neither the option nor the variable sets one and the machine's memory
/// cannot be read.
const BUDGET_FALLBACK_BYTES: usize = 4 << 30;

/// Bytes the allocator hands out now.
static HELD_BYTES: AtomicUsize = AtomicUsize::new(0);

/// mimalloc, counting the bytes it holds (two relaxed atomic operations per allocation:
/// cheap next to the allocation itself). mimalloc rather than glibc's malloc: rnt's work
/// runs on threads other than the main one, and glibc grows a thread's arena a page at a
/// time, one `mprotect` per page — measured on a 1M-row `import --replace`, ~40 000 calls
/// and a fifth of the time; with mimalloc the same replace ran 1.39–1.45 s against
/// 1.49–1.96 s, and the 10M-row import peaked at 725 MiB (glibc: 875 MiB).
pub struct CountingAllocator;

// The workspace denies unsafe code; a global allocator cannot be written without it
// (`GlobalAlloc` is an unsafe trait), so this one item allows it.
// SAFETY: every method forwards to `MiMalloc` unchanged; the counter only observes sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let pointer = unsafe { MiMalloc.alloc(layout) };
        if !pointer.is_null() {
            HELD_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let pointer = unsafe { MiMalloc.alloc_zeroed(layout) };
        if !pointer.is_null() {
            HELD_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: `pointer` came from this allocator with `layout`.
        unsafe { MiMalloc.dealloc(pointer, layout) };
        HELD_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc` is passed on unchanged.
        let moved = unsafe { MiMalloc.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            HELD_BYTES.fetch_add(new_size, Ordering::Relaxed);
            HELD_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        moved
    }
}

/// Bytes the process holds now, as the budget counts them: the larger of the bytes its
/// allocator handed out (counted at every allocation) and its resident set as the kernel
/// counts it (`VmRSS`: besides those bytes, the allocator's size classes, the pages it
/// keeps after a free, thread stacks, and the program itself). So at every check the
/// budget bounds what `ps` shows and the out-of-memory killer weighs, not only what Rust
/// asked for; between two checks the work may go past it (the README gives the measured
/// overshoot).
pub fn held_bytes() -> usize {
    allocated_bytes().max(resident_bytes().unwrap_or(0))
}

/// Bytes the allocator handed out and that are not yet freed.
pub fn allocated_bytes() -> usize {
    HELD_BYTES.load(Ordering::Relaxed)
}

/// The process's resident set (`VmRSS` in `/proc/self/status`), where the system tells it.
pub fn resident_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Parses a size: a whole number of bytes with an optional binary suffix `K`, `M`, `G` or
/// `T` (`KiB`, `MB` … accepted alike), or `none` (and `0`) for no budget.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("none") {
        return Ok(0);
    }
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(digits_end);
    let unit = unit.trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("`{text}` is not a size: use e.g. 512M, 2G or none")),
    };
    let number: usize = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size: use e.g. 512M, 2G or none"))?;
    number
        .checked_mul(1usize << shift)
        .ok_or_else(|| format!("`{text}` is too large a size"))
}

/// The default budget: half the machine's memory (`MemTotal` in `/proc/meminfo`).
fn default_budget() -> usize {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|line| line.starts_with("MemTotal:"))?;
            let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib.saturating_mul(1024) / 2)
        })
        .unwrap_or(BUDGET_FALLBACK_BYTES)
}

/// Installs the budget: `option` (`--memory-budget`), else [`MEMORY_BUDGET_ENV`], else half
/// the machine's memory.
pub fn install_budget(option: Option<&str>) -> Result<(), String> {
    let from_env = std::env::var(MEMORY_BUDGET_ENV).ok();
    let limit = match option.or(from_env.as_deref()) {
        Some(text) => parse_size(text)?,
        None => default_budget(),
    };
    if limit > 0 && option.or(from_env.as_deref()).is_some() {
        purge_freed_pages_at_once();
        BUDGET_SET_BY_USER.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    rnt_db::set_memory_budget(held_bytes, limit);
    Ok(())
}

/// mimalloc's `mi_option_purge_delay` (the 16th option of `mi_option_e` in both its v2 and
/// v3 headers, between `mi_option_eager_commit_delay` = 14 and `mi_option_use_numa_nodes`
/// = 16, which `libmimalloc-sys` names; it does not name this one).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Makes mimalloc give freed pages back to the system at once rather than after its
/// default delay: the budget counts the resident set, and with the delay, pages freed by
/// one import step were still resident while the next filled new ones (a 600,000-row
/// import at 128 MiB held 126–136 MiB; with this, it stays under). Only under a budget
/// the user set: it costs time (~20 % on that import).
fn purge_freed_pages_at_once() {
    // SAFETY: `mi_option_set` only stores an option value; mimalloc reads options at any
    // time, from any thread.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}

/// mimalloc's `mi_option_minimal_purge_size` (KiB): the 45th option of `mi_option_e` in its
/// v3 header (index 44, after `mi_option_allow_thp` = 43; `libmimalloc-sys` 0.1.49 builds
/// v3 and does not name it).
const MI_OPTION_MINIMAL_PURGE_SIZE: libmimalloc_sys::mi_option_t = 44;

/// Whether the user set a memory budget (`--memory-budget` or [`MEMORY_BUDGET_ENV`]),
/// whose purging must stay prompt.
static BUDGET_SET_BY_USER: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// For a long-lived process (`rnt serve`): freed memory goes back to the system in whole
/// huge pages only ([`purge_whole_huge_pages_only`]), unless the user set a budget.
pub fn tune_for_a_long_life() {
    if !BUDGET_SET_BY_USER.load(std::sync::atomic::Ordering::Relaxed) {
        purge_whole_huge_pages_only();
    }
}

/// Makes mimalloc give freed memory back to the system only in whole 2 MiB huge pages
/// (its default is 64 KiB pieces, which split the huge pages it asked the kernel for; a
/// split page, when used again, is faulted and zeroed afresh). Measured side by side on
/// this machine (`MIMALLOC_MINIMAL_PURGE_SIZE=2048`): the CLI commit unchanged (median 29.7
/// vs 29.3 ms, 100 each); a warm process's W5 commit over 1 000 commits 7.0, 3.2, 6.9 and
/// 2.9 ms in four runs without it (two of them stuck re-faulting memory it had given back),
/// 3.1, 2.8, 3.1 and 2.9 with it; its W3 commit over 400 commits 4.4 ms against a median of
/// ~5.3 over seven runs without it. Only for `rnt serve`: a one-shot import then holds more
/// (10M orders with two views peaked at 1 038 MiB against 920, over the 1 GiB target);
/// and not under a budget the user set, whose purging must be prompt
/// (`purge_freed_pages_at_once`).
fn purge_whole_huge_pages_only() {
    // SAFETY: `mi_option_set` only stores an option value; mimalloc reads options at any
    // time, from any thread.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_MINIMAL_PURGE_SIZE, 2048);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("3 gb"), Ok(3 << 30));
        assert_eq!(parse_size("none"), Ok(0));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn what_is_held_counts_the_resident_set() {
        let resident = resident_bytes();
        if cfg!(target_os = "linux") {
            assert!(
                resident.is_some_and(|bytes| bytes > 1 << 20),
                "{resident:?}"
            );
        }
        assert!(held_bytes() >= resident.unwrap_or(0));
        assert!(held_bytes() >= allocated_bytes());
    }

    #[test]
    fn the_default_is_half_the_machine() {
        let budget = default_budget();
        assert!(budget >= 1 << 20, "{budget}");
    }
}
