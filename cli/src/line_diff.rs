//! A unified diff of two texts, line by line, for `rnt diff --program`.
//!
//! The lines kept are the common prefix and suffix, and between them a longest common
//! subsequence (LCS) of the lines, found by the textbook quadratic table: canonical programs
//! are small (tens to hundreds of lines) and their changes smaller, so the table is cheap
//! and no dependency earns its place. A middle part past [`LCS_CELLS_MAX`] cells (a huge
//! generated program rewritten) is printed as removed and re-added whole: still a correct
//! diff, in bounded memory. Changes are grouped into
//! hunks with [`CONTEXT_LINES`] lines of context, as `diff -u` prints them:
//!
//! ```text
//! --- OLD_NAME
//! +++ NEW_NAME
//! @@ -3,4 +3,5 @@
//!  a kept line
//! -a removed line
//! +an added line
//! ```
//!
//! A range of one line prints as `-3`, an empty range as `-2,0` (the line before it).
//! Equal texts give the empty string.

use std::fmt::Write as _;

/// Lines of unchanged text shown around each change.
pub const CONTEXT_LINES: usize = 3;

/// One line of the edit script from the old text to the new.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edit<'t> {
    /// In both texts.
    Keep(&'t str),
    /// Only in the old text.
    Remove(&'t str),
    /// Only in the new text.
    Add(&'t str),
}

/// The unified diff from `old` (named `old_name`) to `new` (named `new_name`); empty when
/// the texts have the same lines.
pub fn unified(old_name: &str, old: &str, new_name: &str, new: &str) -> String {
    let edits = edit_script(
        &old.lines().collect::<Vec<_>>(),
        &new.lines().collect::<Vec<_>>(),
    );
    if edits.iter().all(|e| matches!(e, Edit::Keep(_))) {
        return String::new();
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    for hunk in hunks(&edits) {
        write_hunk(&mut out, &edits, hunk);
    }
    out
}

/// The most cells of the LCS table: 4M (32 MiB), about 2000 × 2000 changed lines.
pub const LCS_CELLS_MAX: usize = 1 << 22;

/// An edit script from `old` to `new`: the common prefix and suffix kept, the middle by
/// [`middle_script`].
fn edit_script<'t>(old: &[&'t str], new: &[&'t str]) -> Vec<Edit<'t>> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut edits: Vec<Edit<'t>> = old[..prefix].iter().map(|line| Edit::Keep(line)).collect();
    edits.extend(middle_script(
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    ));
    edits.extend(
        old[old.len() - suffix..]
            .iter()
            .map(|line| Edit::Keep(line)),
    );
    edits
}

/// A shortest edit script: the lines of an LCS kept, the others removed or added (removals
/// before additions where both fall between the same kept lines); past [`LCS_CELLS_MAX`]
/// cells, every old line removed and every new one added.
fn middle_script<'t>(old: &[&'t str], new: &[&'t str]) -> Vec<Edit<'t>> {
    let cells = (old.len() + 1).saturating_mul(new.len() + 1);
    if cells > LCS_CELLS_MAX {
        let removed = old.iter().map(|line| Edit::Remove(line));
        return removed
            .chain(new.iter().map(|line| Edit::Add(line)))
            .collect();
    }
    // common[i][j]: the LCS length of old[i..] and new[j..].
    let mut common = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut edits = Vec::with_capacity(old.len() + new.len());
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            edits.push(Edit::Keep(old[i]));
            i += 1;
            j += 1;
        } else if i < old.len() && (j == new.len() || common[i + 1][j] >= common[i][j + 1]) {
            edits.push(Edit::Remove(old[i]));
            i += 1;
        } else {
            edits.push(Edit::Add(new[j]));
            j += 1;
        }
    }
    edits
}

/// The ranges of `edits` each hunk prints: every change with up to [`CONTEXT_LINES`] kept
/// lines on either side, hunks whose context would touch or overlap merged into one.
fn hunks(edits: &[Edit<'_>]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (at, edit) in edits.iter().enumerate() {
        if matches!(edit, Edit::Keep(_)) {
            continue;
        }
        let start = at.saturating_sub(CONTEXT_LINES);
        let end = (at + 1 + CONTEXT_LINES).min(edits.len());
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = end,
            _ => out.push(start..end),
        }
    }
    out
}

/// Writes one hunk: its `@@` header and its lines.
fn write_hunk(out: &mut String, edits: &[Edit<'_>], hunk: std::ops::Range<usize>) {
    // Lines of each text before the hunk: the hunk's first line number is one more.
    let old_before = edits[..hunk.start]
        .iter()
        .filter(|e| !matches!(e, Edit::Add(_)))
        .count();
    let new_before = edits[..hunk.start]
        .iter()
        .filter(|e| !matches!(e, Edit::Remove(_)))
        .count();
    let lines = &edits[hunk];
    let old_count = lines.iter().filter(|e| !matches!(e, Edit::Add(_))).count();
    let new_count = lines
        .iter()
        .filter(|e| !matches!(e, Edit::Remove(_)))
        .count();
    let _ = writeln!(
        out,
        "@@ -{} +{} @@",
        range(old_before, old_count),
        range(new_before, new_count)
    );
    for edit in lines {
        let (mark, line) = match edit {
            Edit::Keep(line) => (' ', line),
            Edit::Remove(line) => ('-', line),
            Edit::Add(line) => ('+', line),
        };
        let _ = writeln!(out, "{mark}{line}");
    }
}

/// A hunk header's range: `start` alone for one line, `start,count` otherwise, where an
/// empty range starts at the line before it (`before`).
fn range(before: usize, count: usize) -> String {
    match count {
        0 => format!("{before},0"),
        1 => format!("{}", before + 1),
        _ => format!("{},{count}", before + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::unified;

    fn check(old: &str, new: &str, expect: &str) {
        assert_eq!(unified("a", old, "b", new), expect, "{old:?} -> {new:?}");
    }

    #[test]
    fn a_middle_too_large_for_the_table_is_removed_and_added_whole() {
        let old: String = (0..3000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("new {i}\n")).collect();
        let (old, new) = (format!("same\n{old}end\n"), format!("same\n{new}end\n"));
        let diff = unified("a", &old, "b", &new);
        assert!(
            diff.starts_with("--- a\n+++ b\n@@ -1,3002 +1,3002 @@\n same\n-old 0\n"),
            "{}",
            &diff[..80]
        );
        assert_eq!(
            diff.lines()
                .filter(|l| l.starts_with('-') && !l.starts_with("---"))
                .count(),
            3000
        );
        assert_eq!(
            diff.lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .count(),
            3000
        );
        assert!(diff.ends_with(" end\n"));
    }

    #[test]
    fn equal_texts_print_nothing() {
        check("", "", "");
        check("x\ny\n", "x\ny\n", "");
    }

    #[test]
    fn one_changed_line_in_the_middle() {
        check(
            "1\n2\n3\n4\n5\n",
            "1\n2\nthree\n4\n5\n",
            "--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n 2\n-3\n+three\n 4\n 5\n",
        );
    }

    #[test]
    fn texts_from_and_to_nothing() {
        check("", "x\ny\n", "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n");
        check("x\n", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n");
    }

    #[test]
    fn far_apart_changes_make_two_hunks_near_ones_one() {
        let lines = |changed: &[(usize, &str)]| -> String {
            (1..=20)
                .map(|i| match changed.iter().find(|(at, _)| *at == i) {
                    Some((_, text)) => format!("{text}\n"),
                    None => format!("{i}\n"),
                })
                .collect()
        };
        let old = lines(&[]);
        let far = lines(&[(2, "two"), (19, "nineteen")]);
        check(
            &old,
            &far,
            "--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n\
             @@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n",
        );
        let near = lines(&[(2, "two"), (8, "eight")]);
        check(
            &old,
            &near,
            "--- a\n+++ b\n@@ -1,11 +1,11 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n 7\n-8\n+eight\n 9\n 10\n 11\n",
        );
    }

    #[test]
    fn an_inserted_line_keeps_the_rest() {
        check(
            "a\nc\n",
            "a\nb\nc\n",
            "--- a\n+++ b\n@@ -1,2 +1,3 @@\n a\n+b\n c\n",
        );
    }
}
