//! How results are printed: aligned tables, CSV (through `rnt_db::csv`), and JSON
//! with a fixed key order; plus the one-line forms of commit outcomes and errors.

use clap::ValueEnum;
use rnt_db::diagnostic::clip;
use rnt_db::{CommitOutcome, DbError, Value};
use rnt_merkle::{ChangeCount, TransferReport};
use rnt_store::Address;
use std::fmt::Write as _;
use std::io::{self, Write};
use unicode_width::UnicodeWidthStr;

/// Hex digits of an address in short displays (commit lines, tables).
pub const SHORT_HEX_DIGITS: usize = 12;

/// Output format of `show` and `query`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns under a header.
    #[default]
    Table,
    /// RFC 4180 CSV: a header row of attribute names, then one row per tuple.
    Csv,
    /// An array of arrays, one per tuple.
    Json,
    /// A change file: one named insert per tuple, `+r(a: 1, b: "x")`, that `rnt commit -f`
    /// reads back.
    Changes,
}

/// Output format of `log` and `status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Aligned columns for people.
    #[default]
    Table,
    /// A stable JSON shape for scripts.
    Json,
}

/// A JSON value whose objects keep their keys in the order written, so the shapes in
/// `docs/design.md` print in the order they are documented.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer (counts).
    UInt(u64),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An object from `(key, value)` pairs.
    pub fn object<'k>(fields: impl IntoIterator<Item = (&'k str, Json)>) -> Json {
        Json::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// A value of a tuple: ints as numbers, strings as strings, bools as bools, null as
    /// `null`; decimals, dates, timestamps and floats as strings in their text forms
    /// (`"12.50"`, `"2013-01-01"`, `"0.1"`, `"nan"`): exact for every client.
    pub fn of_value(value: &Value) -> Json {
        match value {
            Value::Null => Json::Null,
            Value::Int(i) => Json::Int(*i),
            Value::Str(s) => Json::Str(s.clone()),
            Value::Bool(b) => Json::Bool(*b),
            Value::Decimal(_) | Value::Date(_) | Value::Timestamp(_) | Value::Float(_) => {
                Json::Str(value.text())
            }
        }
    }

    /// A string, or `null`.
    pub fn opt_str(value: Option<String>) -> Json {
        value.map_or(Json::Null, Json::Str)
    }

    fn is_scalar(&self) -> bool {
        !matches!(self, Json::Array(_) | Json::Object(_))
    }

    /// The value as indented text with a final newline. Arrays and objects that hold only
    /// scalars are written on one line (a tuple, a change count), others one item a line.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    /// The value on one line, no spaces (a server-sent event's data).
    pub fn compact(&self) -> String {
        let mut out = String::new();
        self.write_compact(&mut out);
        out
    }

    fn write_compact(&self, out: &mut String) {
        match self {
            Json::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (index, (key, value)) in fields.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    write_json_string(out, key);
                    out.push(':');
                    value.write_compact(out);
                }
                out.push('}');
            }
            scalar => scalar.write(out, 0),
        }
    }

    fn write(&self, out: &mut String, indent: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::UInt(u) => {
                let _ = write!(out, "{u}");
            }
            Json::Str(s) => write_json_string(out, s),
            Json::Array(items) => {
                let flat = items.iter().all(Json::is_scalar);
                write_container(
                    out,
                    indent,
                    ('[', ']'),
                    flat,
                    items.iter().map(|item| (None, item)),
                );
            }
            Json::Object(fields) => {
                let flat = fields.iter().all(|(_, v)| v.is_scalar());
                write_container(
                    out,
                    indent,
                    ('{', '}'),
                    flat,
                    fields.iter().map(|(k, v)| (Some(k.as_str()), v)),
                );
            }
        }
    }
}

fn write_container<'a>(
    out: &mut String,
    indent: usize,
    (open, close): (char, char),
    flat: bool,
    items: impl ExactSizeIterator<Item = (Option<&'a str>, &'a Json)>,
) {
    out.push(open);
    if items.len() == 0 {
        out.push(close);
        return;
    }
    for (index, (key, value)) in items.enumerate() {
        if index > 0 {
            out.push(',');
        }
        if flat {
            if index > 0 {
                out.push(' ');
            }
        } else {
            out.push('\n');
            out.push_str(&"  ".repeat(indent + 1));
        }
        if let Some(key) = key {
            write_json_string(out, key);
            out.push_str(": ");
        }
        value.write(out, indent + 1);
    }
    if !flat {
        out.push('\n');
        out.push_str(&"  ".repeat(indent));
    }
    out.push(close);
}

fn write_json_string(out: &mut String, text: &str) {
    // serde_json's escaping: `"`, `\`, control characters; everything else as is.
    out.push_str(&serde_json::Value::String(text.to_string()).to_string());
}

/// A value as a table cell: ints, decimals and bools as written, `null`, dates and
/// timestamps in ISO form, strings as their text with control characters escaped (so a
/// row stays one line).
pub fn cell(value: &Value) -> String {
    match value {
        Value::Str(s) if s.chars().any(char::is_control) => {
            let quoted = value.to_string();
            quoted[1..quoted.len() - 1].to_string()
        }
        Value::Str(s) => s.clone(),
        Value::Date(_) | Value::Timestamp(_) | Value::Float(_) => value.text(),
        other => other.to_string(),
    }
}

/// Writes rows as aligned columns under a header, two spaces apart; columns flagged in
/// `right` (numbers) are right-aligned. No trailing spaces. Widths are display columns
/// (Unicode East Asian Width: a CJK character or an emoji takes two), so the columns line
/// up in a terminal whatever the script.
pub fn write_table(
    out: &mut dyn Write,
    header: &[&str],
    right: &[bool],
    rows: &[Vec<String>],
) -> io::Result<()> {
    let width = |cell: &str| UnicodeWidthStr::width(cell);
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            let pad = widths[column] - width(cell);
            let last = column + 1 == row.len();
            if column > 0 {
                line.push_str("  ");
            }
            if right.get(column).copied().unwrap_or(false) {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if !last {
                    line.push_str(&" ".repeat(pad));
                }
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Change counts as `orders +3 -1, customers +1 -0`; `-` when there are none (a commit
/// that changed the program only).
pub fn change_summary(changes: &[ChangeCount]) -> String {
    if changes.is_empty() {
        return "-".to_string();
    }
    changes
        .iter()
        .map(|c| format!("{} +{} -{}", c.relation, c.inserted, c.deleted))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The line a successful commit prints:
/// `committed 3f2a9c1b0d4e (state 8e1f0a2b3c4d): orders +3 -1`. With a `label` (a define's
/// message, as `log` shows it) the label comes first: `…: define shop.rnt; plan_total +5`.
pub fn committed_line(
    commit: &Address,
    state: &Address,
    changes: &[ChangeCount],
    label: Option<&str>,
) -> String {
    let what = match (label, changes.is_empty()) {
        (Some(label), true) => label.to_string(),
        (Some(label), false) => format!("{label}; {}", change_summary(changes)),
        (None, _) => change_summary(changes),
    };
    format!(
        "committed {} (state {}): {what}",
        commit.short_hex(SHORT_HEX_DIGITS),
        state.short_hex(SHORT_HEX_DIGITS)
    )
}

/// Prints a commit's outcome: the `committed` line, or `nothing to commit`.
pub fn write_outcome(out: &mut dyn Write, outcome: &CommitOutcome) -> io::Result<()> {
    match outcome {
        CommitOutcome::Committed {
            commit,
            state,
            changes,
            ..
        } => {
            writeln!(out, "{}", committed_line(commit, state, changes, None))
        }
        CommitOutcome::NothingToCommit => writeln!(out, "nothing to commit"),
    }
}

/// What a transfer sent, for people: `12 chunks (33.7 KiB)`.
pub fn sent_text(report: &TransferReport) -> String {
    let noun = if report.chunks == 1 {
        "chunk"
    } else {
        "chunks"
    };
    format!(
        "{} {noun} ({})",
        report.chunks,
        crate::progress::human_bytes(report.bytes)
    )
}

/// What a transfer sent, as the JSON fields `chunks`, `bytes` (uncompressed) and `skipped`
/// (chunks the receiver held: each the root of a subtree not sent).
pub fn sent_fields(report: &TransferReport) -> [(&'static str, Json); 3] {
    [
        ("chunks", Json::UInt(report.chunks)),
        ("bytes", Json::UInt(report.bytes)),
        ("skipped", Json::UInt(report.skipped)),
    ]
}

/// What an error prints on stderr: the rendered diagnostics of a program error, a merge
/// conflict's first line then one line per conflicting key, otherwise `error: <one line>`
/// (causes joined with `: `). Whatever quotes input, every word longer than
/// [`rnt_db::diagnostic::QUOTE_CHARS_MAX`] characters is cut to its start and end ([`clip_words`]).
pub fn error_text(error: &anyhow::Error) -> String {
    if let Some(failure) = error.downcast_ref::<crate::cmd::sql::SqlFailure>() {
        return format!("error: {}\n", clip_words(&failure.rendered));
    }
    if let Some(DbError::Program { rendered, .. }) = error.downcast_ref::<DbError>() {
        let mut text = clip_words(rendered);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        return text;
    }
    if let Some(DbError::MergeConflict(listing)) = error.downcast_ref::<DbError>() {
        // The first line says what happened; each conflicting key follows on its own line.
        return format!("error: {}\n", clip_words(listing));
    }
    let message = format!("{error:#}");
    format!("error: {}\n", clip_words(&one_line(&message)))
}

/// `text` with every word (run of non-blank characters) longer than [`rnt_db::diagnostic::QUOTE_CHARS_MAX`]
/// cut to its start and end around an ellipsis, as `clip` cuts a quote: a 20,000-character
/// name, ref, path or value an error names (anywhere, in any command) shows at most ~80
/// characters. Blanks, and so line breaks and a snippet's layout, are kept.
pub fn clip_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4096));
    let mut word_start: Option<usize> = None;
    for (at, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_whitespace(), word_start) {
            (false, None) => word_start = Some(at),
            (true, Some(start)) => {
                out.push_str(&clip(&text[start..at]));
                word_start = None;
                if at < text.len() {
                    out.push(c);
                }
            }
            (true, None) if at < text.len() => out.push(c),
            _ => {}
        }
    }
    out
}

/// Joins the lines of `text` into one, each line trimmed.
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// clap's rendered usage error in one line: its first paragraph (which starts with
/// `error:`), then a pointer to `--help`.
pub fn usage_error_line(rendered: &str) -> String {
    let first = rendered.split("\n\n").next().unwrap_or(rendered);
    let mut line = clip_words(&one_line(first));
    if !line.starts_with("error:") {
        line = format!("error: {line}");
    }
    // clap's tips (`tip: a similar subcommand exists: 'commit'`) are the useful part.
    let tips: Vec<&str> = rendered
        .lines()
        .filter_map(|l| l.trim().strip_prefix("tip: "))
        .collect();
    let tips = match tips.is_empty() {
        true => String::new(),
        false => format!(" (tip: {})", tips.join("; ")),
    };
    let usage = rendered
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage: "))
        .map(|u| format!(" (usage: {u})"))
        .unwrap_or_default();
    format!("{line}{tips}{usage}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnt_db::diagnostic::QUOTE_CHARS_MAX;

    #[test]
    fn long_words_are_clipped_and_the_rest_kept() {
        let long = "x".repeat(50) + &"y".repeat(5000) + &"z".repeat(50);
        let text = format!("error: unknown `{long}`\n  | short words stay\n\t{long}");
        let clipped = clip_words(&text);
        assert!(clipped.len() < 300, "{clipped}");
        assert!(clipped.starts_with("error: unknown `xxxx"), "{clipped}");
        assert!(
            clipped.contains("zzz`\n  | short words stay\n\txxx"),
            "{clipped}"
        );
        assert!(!clipped.contains("yyyy"), "{clipped}");
        let exact = "a".repeat(QUOTE_CHARS_MAX);
        assert_eq!(clip_words(&format!(" {exact} ")), format!(" {exact} "));
        assert_eq!(clip_words("é  ü"), "é  ü");
    }

    #[test]
    fn json_keeps_key_order_and_flattens_scalar_containers() {
        let value = Json::object([
            ("commit", Json::Null),
            ("state", Json::Str("ab".into())),
            (
                "relations",
                Json::Array(vec![Json::object([
                    ("name", Json::Str("o\"x".into())),
                    ("count", Json::UInt(3)),
                ])]),
            ),
            ("empty", Json::Array(vec![])),
        ]);
        let text = value.pretty();
        assert_eq!(
            text,
            "{\n  \"commit\": null,\n  \"state\": \"ab\",\n  \"relations\": [\n    {\"name\": \"o\\\"x\", \"count\": 3}\n  ],\n  \"empty\": []\n}\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["relations"][0]["count"], 3);
    }

    #[test]
    fn table_aligns_and_trims() {
        let mut out = Vec::new();
        let rows = vec![
            vec!["1".to_string(), "free".to_string()],
            vec!["100".to_string(), "pro".to_string()],
        ];
        write_table(&mut out, &["id", "plan"], &[true, false], &rows).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            " id  plan\n  1  free\n100  pro\n"
        );
    }

    #[test]
    fn table_aligns_wide_characters_by_display_width() {
        let mut out = Vec::new();
        let rows = vec![
            vec!["東京".to_string(), "1".to_string()],
            vec!["🦀🦀".to_string(), "22".to_string()],
            vec!["abc".to_string(), "333".to_string()],
        ];
        write_table(&mut out, &["city", "n"], &[false, true], &rows).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "city    n\n東京    1\n🦀🦀   22\nabc   333\n");
        // Every line ends at the same display column.
        let ends: Vec<usize> = text.lines().map(UnicodeWidthStr::width).collect();
        assert!(ends.iter().all(|&e| e == ends[0]), "{ends:?}");
    }

    #[test]
    fn cells_escape_control_characters() {
        assert_eq!(cell(&Value::Str("a\nb".into())), "a\\nb");
        assert_eq!(cell(&Value::Str("plain \"q\"".into())), "plain \"q\"");
        assert_eq!(cell(&Value::Int(-4)), "-4");
    }

    #[test]
    fn usage_errors_fit_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  --message <MSG>\n\nUsage: rnt commit --message <MSG> [CHANGE]...\n\nFor more information, try '--help'.\n";
        assert_eq!(
            usage_error_line(rendered),
            "error: the following required arguments were not provided: --message <MSG> (usage: rnt commit --message <MSG> [CHANGE]...)"
        );
    }
}
