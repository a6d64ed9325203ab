//! The SQL compiler's helper relations as the CLI shows them. A relation is *internal* when
//! [`rnt_db::is_internal`] says so (its name starts with `_`): the compiler made it to carry
//! a view's intermediate results, and no user can take such a name (SQL refuses it, and
//! [`refuse_new_internal`] refuses it at `rnt define` and `rnt alter … rename-to`). Every
//! listing — `status`, `diff`, `log`, `program`, `why`, `verify`, the web view — leaves
//! internal relations out unless `--internal` (`?internal=1` on a page) asks for them;
//! naming one (`rnt show _v_1`, `rnt diff HEAD _v_1`) still reads it.

use rnt_db::canonical::canonical_text;
use rnt_db::syntax::ast::Program;
use rnt_db::{is_internal, DbError, Snapshot};

/// Whether a listing shows relation `name`: always with `internal`, otherwise only when it
/// is not one of the SQL compiler's helpers.
pub fn shown(name: &str, internal: bool) -> bool {
    internal || !is_internal(name)
}

/// What a listing that left helpers out says to show them.
pub const HINT: &str = "--internal shows them";

/// The canonical program `text` as a listing shows it: with `internal`, as it is; otherwise
/// without the internal relations' declarations and the rules deriving them, and, when any
/// were left out, a first `#` comment line saying how many. A rule of a user's relation
/// keeps its body as it is (it may read a helper).
pub fn program_text(text: &str, internal: bool) -> String {
    if internal {
        return text.to_string();
    }
    let parsed = rnt_db::syntax::parse(text);
    if !parsed.diagnostics.is_empty() {
        // A stored program always parses; if one did not, show it as it is.
        return text.to_string();
    }
    let hidden = parsed
        .program
        .declarations
        .iter()
        .filter(|d| is_internal(&d.name.name))
        .count();
    if hidden == 0 {
        return text.to_string();
    }
    let kept = Program {
        declarations: parsed
            .program
            .declarations
            .into_iter()
            .filter(|d| !is_internal(&d.name.name))
            .collect(),
        rules: parsed
            .program
            .rules
            .into_iter()
            .filter(|r| !is_internal(&r.head.relation.name))
            .collect(),
    };
    format!(
        "# {hidden} internal relation{} hidden (the SQL compiler's helpers; {HINT})\n{}",
        if hidden == 1 { "" } else { "s" },
        canonical_text(&kept)
    )
}

/// Refuses a program `text` that declares an internal relation `current` does not have:
/// names starting with `_` are the SQL compiler's. A relation the store already has keeps
/// working (a program read back with `rnt program --internal` may be defined again). A
/// program that does not parse passes: `define` reports its syntax errors.
pub fn refuse_new_internal(text: &str, current: &Snapshot) -> Result<(), DbError> {
    let parsed = rnt_db::syntax::parse(text);
    let taken = parsed
        .program
        .declarations
        .iter()
        .map(|d| d.name.name.as_str())
        .find(|name| is_internal(name) && current.entry(name).is_none());
    match taken {
        Some(name) => Err(reserved_name(name)),
        None => Ok(()),
    }
}

/// The error for a user's new relation named `name`, which starts with `_`.
pub fn reserved_name(name: &str) -> DbError {
    DbError::user(format!(
        "the relation name `{}` is reserved: names starting with `_` are kept for the SQL compiler's helper relations (choose another name)",
        rnt_db::diagnostic::clip(name)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "relation t(a: int).\nview _v_1(c0: int).\nview v(a: int).\n\n_v_1(a) :- t(a).\nv(a) :- _v_1(a).\n";

    #[test]
    fn a_listing_leaves_helpers_out_and_counts_them() {
        let text = program_text(PROGRAM, false);
        assert_eq!(
            text,
            "# 1 internal relation hidden (the SQL compiler's helpers; --internal shows them)\nrelation t(a: int).\nview v(a: int).\n\nv(a) :- _v_1(a).\n"
        );
        assert_eq!(program_text(PROGRAM, true), PROGRAM);
        let plain = "relation t(a: int).\n";
        assert_eq!(program_text(plain, false), plain);
        assert!(shown("_v_1", true) && !shown("_v_1", false) && shown("v", false));
    }
}
