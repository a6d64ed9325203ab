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
//!
//! Without `--internal` the SQL compiler's helper relations (names starting with `_`) do
//! not show (see [`without_helpers`]): a helper's tuple and its rule instances give way to
//! what their bodies hold, so a SQL view's tuple reads `by the definition of v  with a = 1,
//! n = 2` (the view's columns) above its base rows, and a window decided over a helper's
//! rows says how many (JSON: `"literal"` and `"relation"` null, `"rows"` empty,
//! `"rows_hidden": N`). Asking about a helper's own tuple shows the whole tree.

use crate::cmd::snapshot_at;
use crate::output::{Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::Context;
use clap::Args;
use rnt_db::tuple::format_tuple;
use rnt_db::{
    is_internal, Database, Explained, Fact, Instance, Snapshot, Value, Why, WindowRows,
    WHY_LIMIT_DEFAULT,
};
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
    /// Show the SQL compiler's helper relations (names starting with `_`) and the rules
    /// that derive them, as the engine derives the tuple.
    #[arg(long)]
    internal: bool,
}

/// Explains the tuple.
pub fn run(context: &Context, args: WhyArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let at = snapshot_at(&db, args.at.as_deref())?;
    let mut explained = db.why(&at, &args.tuple, args.limit)?;
    let hide = !args.internal && !is_internal(&explained.why.relation);
    if hide {
        explained.why = without_helpers(&explained.why, &at);
    }
    let messages = Messages::new(&db);
    match args.format {
        ReportFormat::Json => {
            let json = node_json(&explained, &explained.why, hide)?;
            write!(out, "{}", json.pretty())?;
        }
        ReportFormat::Table => {
            let mut lines = Vec::new();
            let printer = Printer {
                explained: &explained,
                messages: &messages,
                hide,
            };
            printer.tree_lines(&explained.why, 0, &mut lines)?;
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

/// What the table is printed from.
struct Printer<'p> {
    explained: &'p Explained,
    messages: &'p Messages<'p>,
    /// The SQL compiler's helpers are hidden: a window over one says how many rows decide
    /// it, not which.
    hide: bool,
}

impl Printer<'_> {
    /// The tree's lines from `why` on, indented two spaces a level.
    fn tree_lines(&self, why: &Why, depth: usize, lines: &mut Vec<String>) -> anyhow::Result<()> {
        let pad = "  ".repeat(depth);
        let writer = match why.derived {
            true => String::new(),
            false => written(self.explained, &why.relation, &why.tuple, self.messages)?,
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
                    Fact::Holds(child) => self.tree_lines(child, depth + 2, lines)?,
                    Fact::Absent { relation, pattern } => {
                        lines.push(format!("{pad}    not {}", pattern_text(relation, pattern)));
                    }
                }
            }
            if let Some(window) = &instance.window {
                self.window_lines(window, &pad, lines)?;
            }
        }
        if why.more {
            lines.push(format!("{pad}  (and more: --limit N)"));
        }
        Ok(())
    }

    /// A window's value and the rows deciding it, under an instance at `pad`.
    fn window_lines(
        &self,
        window: &WindowRows,
        pad: &str,
        lines: &mut Vec<String>,
    ) -> anyhow::Result<()> {
        let rows = window.rows.len();
        let plural = if rows == 1 { "" } else { "s" };
        let side = if window.after { "after" } else { "before" };
        if self.hide && is_internal(&window.relation) {
            // The literal and the rows are the compiler's: say only what decides the value.
            let (more, plural) = match window.more {
                true => (" or more", "s"),
                false => ("", plural),
            };
            lines.push(format!(
                "{pad}    the window's value is {}, decided by {rows}{more} row{plural} {side} it in window order (rows of the SQL compiler's helpers; {})",
                window.value,
                crate::internal::HINT
            ));
            return Ok(());
        }
        lines.push(format!(
            "{pad}    {} is {}, decided by {rows} row{plural} of {} {side} it in window order{}",
            window.literal,
            window.value,
            window.relation,
            if rows == 0 { "" } else { ":" },
        ));
        for row in &window.rows {
            let writer = written(self.explained, &window.relation, row, self.messages)?;
            lines.push(format!(
                "{pad}      {}{writer}",
                format_tuple(&window.relation, row)
            ));
        }
        if window.more {
            lines.push(format!("{pad}      (and more: --limit N)"));
        }
        Ok(())
    }
}

/// The derivation as it reads without the SQL compiler's helper relations: a helper's
/// tuple gives way to what its instances' bodies hold (their tuples, each explained so in
/// turn, a tuple listed once; a `not` over a helper dropped; the first window kept where
/// the instance has none), and a "more" of its follows to the tuple above. An instance that
/// read a helper is named for the relation it derives, its bindings the relation's columns.
fn without_helpers(why: &Why, at: &Snapshot) -> Why {
    let mut more = why.more;
    let instances = why
        .instances
        .iter()
        .map(|instance| {
            let mut lifted = Lifted::default();
            lifted.facts(&instance.body, at);
            more |= lifted.more;
            let window = instance.window.clone().or(lifted.window);
            let read_helper =
                lifted.read_helper || window.as_ref().is_some_and(|w| is_internal(&w.relation));
            if !read_helper {
                return Instance {
                    body: lifted.body,
                    window,
                    ..instance.clone()
                };
            }
            let columns = at.schema(&why.relation).map_or_else(Vec::new, |schema| {
                let names = schema.attribute_names().map(str::to_string);
                names.zip(why.tuple.iter().cloned()).collect()
            });
            Instance {
                rule: format!("the definition of {}", why.relation),
                bindings: columns,
                body: lifted.body,
                window,
            }
        })
        .collect();
    Why {
        relation: why.relation.clone(),
        tuple: why.tuple.clone(),
        derived: why.derived,
        instances,
        more,
    }
}

/// An instance's body with the helpers' tuples lifted out (see [`without_helpers`]).
#[derive(Default)]
struct Lifted {
    body: Vec<Fact>,
    window: Option<WindowRows>,
    read_helper: bool,
    more: bool,
}

impl Lifted {
    fn facts(&mut self, facts: &[Fact], at: &Snapshot) {
        for fact in facts {
            match fact {
                Fact::Holds(child) if is_internal(&child.relation) => {
                    self.read_helper = true;
                    self.more |= child.more;
                    for instance in &child.instances {
                        if self.window.is_none() {
                            self.window = instance.window.clone();
                        }
                        self.facts(&instance.body, at);
                    }
                }
                Fact::Absent { relation, .. } if is_internal(relation) => self.read_helper = true,
                Fact::Holds(child) => self.push(Fact::Holds(without_helpers(child, at))),
                Fact::Absent { .. } => self.push(fact.clone()),
            }
        }
    }

    fn push(&mut self, fact: Fact) {
        if !self.body.contains(&fact) {
            self.body.push(fact);
        }
    }
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

/// The JSON of one node of the tree (`hide`: a window over a helper lists no rows).
fn node_json(explained: &Explained, why: &Why, hide: bool) -> anyhow::Result<Json> {
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
                Fact::Holds(child) => node_json(explained, child, hide)?,
                Fact::Absent { relation, pattern } => {
                    Json::object([("absent", Json::Str(pattern_text(relation, pattern)))])
                }
            });
        }
        let window = match &instance.window {
            None => Json::Null,
            // As the table says it: how many of a helper's rows decide it, not which.
            Some(window) if hide && is_internal(&window.relation) => Json::object([
                ("literal", Json::Null),
                ("value", Json::of_value(&window.value)),
                ("relation", Json::Null),
                ("rows", Json::Array(Vec::new())),
                ("rows_hidden", Json::UInt(window.rows.len() as u64)),
                ("after", Json::Bool(window.after)),
                ("more", Json::Bool(window.more)),
            ]),
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
