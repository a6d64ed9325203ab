//! `rnt why 'REL(v1, …)' [--at REF] [--limit N] [--format table|json]`: how a tuple is
//! derived at a state, down to base tuples, each with the commit that last wrote it
//! (docs/design.md, "Provenance"). The table is the derivation tree, indented: a tuple,
//! then each rule instance deriving it (`by RULE  with VAR = VALUE, …`) with its body's
//! tuples below it, `not …` for an atom nothing matches (a `not` atom, or an `optional`
//! atom's missing match), and for a window the rows of its partition that decide its
//! value; a base tuple ends with the commit that wrote it. JSON gives the same tree:
//! `{"relation", "tuple", "derived", "commit", "instances": [{"rule", "bindings": {VAR:
//! VALUE}, "body": [NODE | {"absent"}], "window": null | {"literal", "value", "relation",
//! "rows": [NODE], "after", "more"}}], "more"}` (`commit` null for a derived tuple).

use crate::cmd::snapshot_at;
use crate::output::{Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::Context;
use clap::Args;
use rnt_db::tuple::format_tuple;
use rnt_db::{Database, Explained, Fact, Instance, Value, Why, WHY_LIMIT_DEFAULT};
use rnt_merkle::Commit;
use rnt_store::Address;
use std::collections::HashMap;
use std::io::Write;

/// Arguments of `rnt why`.
#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The tuple, as a change file writes it without the sign: `order_plan(2, "pro")`.
    #[arg(value_name = "TUPLE")]
    tuple: String,
    /// The state to read (default HEAD).
    #[arg(long, value_name = "REF")]
    at: Option<String>,
    /// At most this many rule instances for the tuple (an aggregate's matches, a window's
    /// deciding rows).
    #[arg(long, value_name = "N", default_value_t = WHY_LIMIT_DEFAULT, value_parser = crate::cmd::at_least_one)]
    limit: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Explains the tuple.
pub fn run(context: &Context, args: WhyArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let at = snapshot_at(&db, args.at.as_deref())?;
    let explained = db.why(&at, &args.tuple, args.limit)?;
    let messages = Messages::new(&db);
    match args.format {
        ReportFormat::Json => {
            write!(out, "{}", node_json(&explained, &explained.why)?.pretty())?;
        }
        ReportFormat::Table => {
            let mut lines = Vec::new();
            tree_lines(&explained, &explained.why, 0, &messages, &mut lines)?;
            for line in lines {
                writeln!(out, "{line}")?;
            }
        }
    }
    Ok(())
}

/// Commit messages' first lines, read once each.
struct Messages<'d> {
    db: &'d Database,
    read: std::cell::RefCell<HashMap<Address, String>>,
}

impl<'d> Messages<'d> {
    fn new(db: &'d Database) -> Messages<'d> {
        Messages {
            db,
            read: std::cell::RefCell::default(),
        }
    }

    fn of(&self, commit: Address) -> anyhow::Result<String> {
        if let Some(message) = self.read.borrow().get(&commit) {
            return Ok(message.clone());
        }
        let record =
            Commit::read(self.db.chunks().as_ref(), &commit).map_err(rnt_db::DbError::from)?;
        let first = record.message.lines().next().unwrap_or("").to_string();
        self.read.borrow_mut().insert(commit, first.clone());
        Ok(first)
    }
}

/// `  written by 1a2b3c4d5e6f (message)` for a base tuple whose writer is known.
fn written(
    explained: &Explained,
    relation: &str,
    tuple: &[Value],
    messages: &Messages<'_>,
) -> anyhow::Result<String> {
    match explained
        .writers
        .get(&(relation.to_string(), tuple.to_vec()))
    {
        Some(commit) => Ok(format!(
            "  written by {} ({})",
            commit.short_hex(SHORT_HEX_DIGITS),
            messages.of(*commit)?
        )),
        None => Ok(String::new()),
    }
}

/// The tree's lines from `why` on, indented two spaces a level.
fn tree_lines(
    explained: &Explained,
    why: &Why,
    depth: usize,
    messages: &Messages<'_>,
    lines: &mut Vec<String>,
) -> anyhow::Result<()> {
    let pad = "  ".repeat(depth);
    let writer = match why.derived {
        true => String::new(),
        false => written(explained, &why.relation, &why.tuple, messages)?,
    };
    lines.push(format!(
        "{pad}{}{writer}",
        format_tuple(&why.relation, &why.tuple)
    ));
    for instance in &why.instances {
        lines.push(format!(
            "{pad}  by {}{}",
            instance.rule,
            bindings_text(instance)
        ));
        for fact in &instance.body {
            match fact {
                Fact::Holds(child) => tree_lines(explained, child, depth + 2, messages, lines)?,
                Fact::Absent { relation, pattern } => {
                    lines.push(format!("{pad}    not {}", pattern_text(relation, pattern)));
                }
            }
        }
        if let Some(window) = &instance.window {
            let rows = window.rows.len();
            lines.push(format!(
                "{pad}    {} is {}, decided by {} row{} of {} {} it in window order{}",
                window.literal,
                window.value,
                rows,
                if rows == 1 { "" } else { "s" },
                window.relation,
                if window.after { "after" } else { "before" },
                if rows == 0 { "" } else { ":" },
            ));
            for row in &window.rows {
                let writer = written(explained, &window.relation, row, messages)?;
                lines.push(format!(
                    "{pad}      {}{writer}",
                    format_tuple(&window.relation, row)
                ));
            }
            if window.more {
                lines.push(format!("{pad}      (and more: --limit N)"));
            }
        }
    }
    if why.more {
        lines.push(format!("{pad}  (and more: --limit N)"));
    }
    Ok(())
}

/// `  with a = 1, b = "x"`, or nothing for a rule without named variables.
fn bindings_text(instance: &Instance) -> String {
    if instance.bindings.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = instance
        .bindings
        .iter()
        .map(|(name, value)| format!("{name} = {value}"))
        .collect();
    format!("  with {}", parts.join(", "))
}

/// `r(7, _)`: a pattern with `_` where any value would match.
fn pattern_text(relation: &str, pattern: &[Option<Value>]) -> String {
    let terms: Vec<String> = pattern
        .iter()
        .map(|v| v.as_ref().map_or("_".to_string(), ToString::to_string))
        .collect();
    format!("{relation}({})", terms.join(", "))
}

/// The JSON of one node of the tree.
fn node_json(explained: &Explained, why: &Why) -> anyhow::Result<Json> {
    let commit = match why.derived {
        true => None,
        false => explained
            .writers
            .get(&(why.relation.clone(), why.tuple.clone()))
            .copied(),
    };
    let mut instances = Vec::new();
    for instance in &why.instances {
        let mut body = Vec::new();
        for fact in &instance.body {
            body.push(match fact {
                Fact::Holds(child) => node_json(explained, child)?,
                Fact::Absent { relation, pattern } => {
                    Json::object([("absent", Json::Str(pattern_text(relation, pattern)))])
                }
            });
        }
        let window = match &instance.window {
            None => Json::Null,
            Some(window) => {
                let rows = window
                    .rows
                    .iter()
                    .map(|row| leaf_json(explained, &window.relation, row))
                    .collect();
                Json::object([
                    ("literal", Json::Str(window.literal.clone())),
                    ("value", Json::of_value(&window.value)),
                    ("relation", Json::Str(window.relation.clone())),
                    ("rows", Json::Array(rows)),
                    ("after", Json::Bool(window.after)),
                    ("more", Json::Bool(window.more)),
                ])
            }
        };
        let bindings = instance
            .bindings
            .iter()
            .map(|(name, value)| (name.clone(), Json::of_value(value)))
            .collect();
        instances.push(Json::object([
            ("rule", Json::Str(instance.rule.clone())),
            ("bindings", Json::Object(bindings)),
            ("body", Json::Array(body)),
            ("window", window),
        ]));
    }
    Ok(Json::object([
        ("relation", Json::Str(why.relation.clone())),
        ("tuple", tuple_json(&why.tuple)),
        ("derived", Json::Bool(why.derived)),
        ("commit", Json::opt_str(commit.map(|c| c.to_hex()))),
        ("instances", Json::Array(instances)),
        ("more", Json::Bool(why.more)),
    ]))
}

/// A window row: `{"relation", "tuple", "commit"}` (`commit` null unless a base tuple).
fn leaf_json(explained: &Explained, relation: &str, tuple: &[Value]) -> Json {
    let commit = explained
        .writers
        .get(&(relation.to_string(), tuple.to_vec()))
        .map(|c| c.to_hex());
    Json::object([
        ("relation", Json::Str(relation.to_string())),
        ("tuple", tuple_json(tuple)),
        ("commit", Json::opt_str(commit)),
    ])
}

fn tuple_json(tuple: &[Value]) -> Json {
    Json::Array(tuple.iter().map(Json::of_value).collect())
}
