//! `rnt explain REL [--at REF] [--format table|json]`: how a derived relation is maintained
//! — for each rule its cost class per commit (docs/costs.md's operator table) and the plan of
//! each term a commit runs for it: the literal whose delta drives it, then every step in
//! order, each read with its bound columns and the tree or index that serves it. A read
//! with nothing bound is a full scan, and says so; that is where a slow commit looks first.
//!
//! The table is one block per rule; JSON is one object (documented in the README):
//! `{"relation", "kind", "mode", "mode_rule", "commit", "state", "rules": [{"rule", "cost", "trees",
//! "terms": [{"term", "delta", "bound_first", "steps": [{"op", "literal", "relation",
//! "bound", "served_by", "access"}]}]}]}`.

use crate::cmd::snapshot_at;
use crate::output::{write_table, Json, ReportFormat};
use crate::Context;
use clap::Args;
use rnt_db::{Access, Explanation, ServedBy, Snapshot, StepExplanation, TermExplanation};
use std::io::Write;

/// Arguments of `rnt explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The derived relation (a view, an ephemeral relation or a denial).
    #[arg(value_name = "REL")]
    relation: String,
    /// The state whose program to explain (default: HEAD).
    #[arg(long, value_name = "REF")]
    at: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Prints the plans.
pub fn run(context: &Context, args: ExplainArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let snapshot = snapshot_at(&db, args.at.as_deref())?;
    let explanation = snapshot.explain(&args.relation)?;
    match args.format {
        ReportFormat::Json => {
            let json = Json::object([
                ("relation", Json::Str(explanation.relation.clone())),
                ("kind", Json::Str(explanation.kind.keyword().to_string())),
                (
                    "mode",
                    Json::opt_str(explanation.mode.map(|m| m.name().to_string())),
                ),
                ("mode_rule", Json::opt_str(explanation.mode_rule.clone())),
                ("commit", Json::opt_str(snapshot.commit.map(|c| c.to_hex()))),
                ("state", Json::Str(snapshot.state_address.to_hex())),
                ("rules", rules_json(&explanation)),
            ]);
            write!(out, "{}", json.pretty())?;
        }
        ReportFormat::Table => write_explanation(out, &snapshot, &explanation)?,
    }
    Ok(())
}

fn strings(items: &[String]) -> Json {
    Json::Array(items.iter().cloned().map(Json::Str).collect())
}

fn rules_json(explanation: &Explanation) -> Json {
    Json::Array(
        explanation
            .rules
            .iter()
            .map(|rule| {
                Json::object([
                    ("rule", Json::Str(rule.rule.clone())),
                    ("cost", Json::Str(rule.cost.clone())),
                    ("trees", strings(&rule.trees)),
                    (
                        "terms",
                        Json::Array(rule.terms.iter().map(term_json).collect()),
                    ),
                ])
            })
            .collect(),
    )
}

fn term_json(term: &TermExplanation) -> Json {
    Json::object([
        ("term", Json::Str(term.term.to_string())),
        ("delta", Json::opt_str(term.delta.clone())),
        ("bound_first", strings(&term.bound_first)),
        (
            "steps",
            Json::Array(term.steps.iter().map(step_json).collect()),
        ),
    ])
}

fn step_json(step: &StepExplanation) -> Json {
    Json::object([
        ("op", Json::Str(step.op.to_string())),
        ("literal", Json::Str(step.literal.clone())),
        ("relation", Json::opt_str(step.relation.clone())),
        ("bound", strings(&step.bound)),
        (
            "served_by",
            Json::opt_str(step.served_by.as_ref().map(ServedBy::source)),
        ),
        (
            "access",
            Json::opt_str(step.served_by.as_ref().map(|s| s.access().to_string())),
        ),
    ])
}

/// The table: a header line naming the relation and its mode, then per rule its text,
/// cost class, extra trees and one small table of steps per term.
fn write_explanation(
    out: &mut dyn Write,
    snapshot: &Snapshot,
    explanation: &Explanation,
) -> anyhow::Result<()> {
    let kind = explanation.kind.keyword();
    let relation = &explanation.relation;
    match explanation.mode {
        Some(mode) => writeln!(out, "{kind} {relation} (mode: {})", mode.name())?,
        None => writeln!(
            out,
            "{kind} {relation} (mode: none: nothing reads it, so commits do no work for it)"
        )?,
    }
    if let Some(rule) = &explanation.mode_rule {
        writeln!(out, "mode rule: {rule}")?;
    }
    for (number, rule) in explanation.rules.iter().enumerate() {
        writeln!(out)?;
        writeln!(out, "rule {}: {}", number + 1, rule.rule)?;
        writeln!(out, "  cost: {}", rule.cost)?;
        if !rule.trees.is_empty() {
            writeln!(out, "  trees: {}", rule.trees.join(", "))?;
        }
        for term in &rule.terms {
            write_term(out, snapshot, term)?;
        }
    }
    Ok(())
}

fn write_term(
    out: &mut dyn Write,
    snapshot: &Snapshot,
    term: &TermExplanation,
) -> anyhow::Result<()> {
    let mut line = format!("  term {}", term.term);
    if let Some(delta) = &term.delta {
        line.push_str(&format!(", from the delta of {delta}"));
    }
    if !term.bound_first.is_empty() {
        line.push_str(&format!(", bound first: {}", term.bound_first.join(", ")));
    }
    writeln!(out, "{line}")?;
    let rows: Vec<Vec<String>> = term
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            vec![
                (i + 1).to_string(),
                step.op.to_string(),
                step.literal.clone(),
                if step.bound.is_empty() {
                    "-".to_string()
                } else {
                    step.bound.join(", ")
                },
                served_by_cell(snapshot, step),
            ]
        })
        .collect();
    let mut table = Vec::new();
    write_table(
        &mut table,
        &["step", "op", "literal", "bound", "served by"],
        &[true, false, false, false, false],
        &rows,
    )?;
    for line in String::from_utf8_lossy(&table).lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}

/// `Δorders` for the driver, `tree: full scan` for a read with nothing bound (loud on
/// purpose), `index 1,0,2 (customer, id, amount): prefix` — the state's label, then the
/// index's column order by name (`count 1 (customer): prefix` for a count index, whose
/// columns are the ones it keeps) — and `rules: evaluated` for an ephemeral relation.
fn served_by_cell(snapshot: &Snapshot, step: &StepExplanation) -> String {
    let relation = step.relation.as_deref().unwrap_or_default();
    match &step.served_by {
        None => "-".to_string(),
        Some(ServedBy::Delta) => format!("Δ{relation}"),
        Some(ServedBy::Tree(Access::Scan)) => "tree: full scan".to_string(),
        Some(ServedBy::Index(label, access)) => {
            let names: Vec<String> = snapshot
                .schema(relation)
                .map(|s| s.attribute_names().map(str::to_string).collect())
                .unwrap_or_default();
            let order: Vec<&str> = label
                .split_once(' ')
                .map_or(label.as_str(), |(_, columns)| columns)
                .split(',')
                .map(|c| {
                    c.parse::<usize>()
                        .ok()
                        .and_then(|c| names.get(c))
                        .map_or(c, String::as_str)
                })
                .collect();
            format!("{label} ({}): {}", order.join(", "), access.name())
        }
        Some(served) => format!("{}: {}", served.source(), served.access()),
    }
}
