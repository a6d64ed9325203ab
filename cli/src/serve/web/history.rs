//! The history pages: the index (branches, tags, the commit graph), a commit, and the diff
//! of two states with views beside base relations. Each leaves the SQL compiler's helper
//! relations out unless asked with `?internal=1` (see the module above).

use super::layout::{commit_link, page, query, short};
use crate::serve::Server;
use maud::{html, Markup};
use rnt_db::tuple::TupleDisplay;
use rnt_db::{DiffScope, Sign, Snapshot, TupleChange};
use rnt_merkle::{ChangeCount, Commit};
use rnt_store::Address;
use std::collections::{BTreeMap, BTreeSet};

/// Commits the index shows unless `?n=` says otherwise.
const COMMITS_SHOWN: usize = 200;

/// Tuple changes a page lists before it links to the rest.
const CHANGES_SHOWN: usize = 500;

/// `/`: branches, tags and the commit graph of every branch and tag.
pub fn index(server: &Server, params: &BTreeMap<String, String>) -> anyhow::Result<Markup> {
    let db = &server.db;
    let internal = super::internal(params);
    let shown = params
        .get("n")
        .and_then(|n| n.parse().ok())
        .unwrap_or(COMMITS_SHOWN);
    let current = db.current_branch()?;
    let branches = db.branches()?;
    let tags = db.tags()?;
    let mut tips: Vec<Address> = branches.iter().chain(&tags).map(|(_, c)| *c).collect();
    tips.sort();
    tips.dedup();
    let mut log = db.commit_graph(&tips)?;
    let more = log.len() > shown;
    log.truncate(shown);
    let edges: Vec<(Address, Vec<Address>)> = log
        .iter()
        .map(|(id, commit)| (*id, commit.parent_addresses()))
        .collect();
    let lines = crate::graph::draw(&edges);
    let body = html! {
        h1 { "History" }
        section aria-labelledby="branches" {
            h2 #branches { "Branches" }
            @if branches.is_empty() { p { "no commits yet" } }
            ul {
                @for (name, commit) in &branches {
                    li {
                        (name) @if *name == current { " (current)" } ": "
                        (commit_link(&commit.to_hex()))
                    }
                }
            }
            @if !tags.is_empty() {
                h2 { "Tags" }
                ul { @for (name, commit) in &tags { li { (name) ": " (commit_link(&commit.to_hex())) } } }
            }
        }
        section aria-labelledby="graph" {
            h2 #graph { "Commits" }
            table {
                thead { tr { th { "graph" } th { "commit" } th { "message" } th { "time" } th { "changes" } } }
                tbody {
                    @for line in &lines {
                        @match line.commit {
                            Some(index) => {
                                @let (id, commit) = &log[index];
                                tr {
                                    td.graph { (line.graph) }
                                    td { (commit_link(&id.to_hex())) }
                                    td { (commit.message) }
                                    td { (crate::time::rfc3339(commit.time)) }
                                    td { (crate::output::change_summary(&visible_counts(&commit.changes, internal))) }
                                }
                            }
                            None => { tr { td.graph { (line.graph) } td {} td {} td {} td {} } }
                        }
                    }
                }
            }
            @if more { p { a href={ "/" (query(&[("n", &(shown * 4).to_string())])) } { "more commits" } } }
        }
    };
    Ok(page("History", body))
}

/// `/commit/REF`: one commit, what it changed (base relations and views), its program
/// diff, and the relations of its state (the SQL compiler's helpers only with `internal`).
pub fn commit(server: &Server, reference: &str, internal: bool) -> anyhow::Result<Markup> {
    let db = &server.db;
    let to = db.resolve(reference)?;
    let Some(id) = to.commit else {
        return Err(
            rnt_db::DbError::user(format!("{reference} names a state, not a commit")).into(),
        );
    };
    let record = Commit::read(db.chunks().as_ref(), &id).map_err(rnt_db::DbError::from)?;
    let from = db.first_parent(&to)?;
    let views = visible_counts(&db.view_change_counts(&from, &to)?, internal);
    let mut changes = db.diff(&from, &to, &DiffScope::All)?;
    changes.retain(|c| crate::internal::shown(&c.relation, internal));
    let hidden = to
        .state
        .relations
        .iter()
        .filter(|r| !crate::internal::shown(&r.name, internal))
        .count();
    let hex = id.to_hex();
    let parents: Vec<String> = record
        .parent_addresses()
        .iter()
        .map(Address::to_hex)
        .collect();
    let from_ref = parents.first().cloned().unwrap_or_default();
    let whole_diff = diff_link(&from_ref, &hex) + if internal { "&internal=1" } else { "" };
    let program = |s: &Snapshot| crate::internal::program_text(&s.state.program, internal);
    let (before, after) = (program(&from), program(&to));
    let program_diff =
        (before != after).then(|| crate::line_diff::unified("before", &before, "after", &after));
    let body = html! {
        h1 { "Commit " span.id { (short(&hex)) } }
        table {
            tr { th scope="row" { "commit" } td.id { (hex) } }
            tr { th scope="row" { "state" } td.id { (to.state_address.to_hex()) } }
            tr { th scope="row" { "message" } td { (record.message) } }
            tr { th scope="row" { "time" } td { (crate::time::rfc3339(record.time)) } }
            tr {
                th scope="row" { "parents" }
                td { @if parents.is_empty() { "none (the first commit)" } @for p in &parents { (commit_link(p)) " " } }
            }
        }
        (helpers_link(hidden, &format!("/commit/{hex}")))
        h2 { "Changes" }
        (counts_table("base relations", &visible_counts(&record.changes, internal), &hex))
        (counts_table("views", &views, &hex))
        @if let Some(text) = &program_diff { h2 { "Program" } pre { (text) } }
        h2 { "Tuples" }
        p { a href=(whole_diff) { "the diff of this commit" } ", base relations and views" }
        (changes_list(&changes, Some(&whole_diff)))
        h2 { "Relations at this commit" }
        (relations_table(&to, &hex, internal)?)
    };
    Ok(page(&format!("commit {}", short(&hex)), body))
}

/// A link to the full diff of two states (an empty `from`: the empty state).
fn diff_link(from: &str, to: &str) -> String {
    // `from=` stays when empty: the root commit's diff is from the empty state.
    format!(
        "/diff?from={}&to={}",
        super::layout::escape_component(from),
        super::layout::escape_component(to)
    )
}

/// Inserted and deleted counts per relation, each linked to the relation at `at`.
fn counts_table(caption: &str, counts: &[ChangeCount], at: &str) -> Markup {
    html! {
        table {
            caption { (caption) }
            thead { tr { th { "relation" } th { "inserted" } th { "deleted" } } }
            tbody {
                @if counts.is_empty() { tr { td colspan="3" { "no change" } } }
                @for count in counts {
                    tr {
                        td { a href={ "/relation/" (super::layout::escape_component(&count.relation)) (query(&[("at", at)])) } { (count.relation) } }
                        td.num.ins { "+" (count.inserted) }
                        td.num.del { "-" (count.deleted) }
                    }
                }
            }
        }
    }
}

/// Tuple changes as change-file lines, grouped by relation; at most [`CHANGES_SHOWN`], then
/// a link to `rest`.
fn changes_list(changes: &[TupleChange], rest: Option<&str>) -> Markup {
    html! {
        @if changes.is_empty() { p { "no tuple changed" } }
        pre {
            @for change in changes.iter().take(CHANGES_SHOWN) {
                @let line = format!("{}{}", change.sign, TupleDisplay { relation: &change.relation, values: &change.tuple });
                @match change.sign {
                    Sign::Insert => { span.ins { (line) } "\n" }
                    Sign::Delete => { span.del { (line) } "\n" }
                    Sign::Update => { span { (line) } "\n" }
                }
            }
        }
        @if changes.len() > CHANGES_SHOWN {
            p {
                (changes.len() - CHANGES_SHOWN) " more"
                @if let Some(rest) = rest { ": " a href=(rest) { "the whole diff" } }
            }
        }
    }
}

/// The counts of the relations a page lists: the SQL compiler's helpers' only with
/// `internal`.
fn visible_counts(counts: &[ChangeCount], internal: bool) -> Vec<ChangeCount> {
    counts
        .iter()
        .filter(|c| crate::internal::shown(&c.relation, internal))
        .cloned()
        .collect()
}

/// A note that `hidden` helper relations were left out, linking to `url` with them; nothing
/// when none were.
fn helpers_link(hidden: usize, url: &str) -> Markup {
    html! {
        @if hidden > 0 {
            p {
                (hidden) " of the SQL compiler's helper relations left out: "
                a href={ (url) (if url.contains('?') { "&" } else { "?" }) "internal=1" } { "show them" }
            }
        }
    }
}

/// The relations of a state with kind and count, linked to their pages at `at` (the SQL
/// compiler's helpers only with `internal`).
fn relations_table(snapshot: &Snapshot, at: &str, internal: bool) -> anyhow::Result<Markup> {
    let mut rows = Vec::new();
    let shown = snapshot
        .state
        .relations
        .iter()
        .filter(|r| crate::internal::shown(&r.name, internal));
    for entry in shown {
        rows.push((
            entry.name.clone(),
            snapshot.kind_of(entry)?.keyword(),
            entry.count,
        ));
    }
    Ok(html! {
        table {
            thead { tr { th { "relation" } th { "kind" } th { "count" } th { "explain" } } }
            tbody {
                @for (name, kind, count) in &rows {
                    tr {
                        td { a href={ "/relation/" (super::layout::escape_component(name)) (query(&[("at", at)])) } { (name) } }
                        td { (kind) }
                        td.num { @match count { Some(n) => (n), None => "-" } }
                        td { @if *kind != "relation" { a href={ "/explain/" (super::layout::escape_component(name)) (query(&[("at", at)])) } { "explain" } } }
                    }
                }
            }
        }
    })
}

/// `/diff?from=&to=`: every relation's changes between two states, views included.
pub fn diff(server: &Server, params: &BTreeMap<String, String>) -> anyhow::Result<Markup> {
    let db = &server.db;
    let from_text = params.get("from").cloned().unwrap_or_default();
    let to_text = params
        .get("to")
        .cloned()
        .unwrap_or_else(|| "HEAD".to_string());
    let internal = super::internal(params);
    let form = html! {
        form method="get" action="/diff" {
            label { "from " input name="from" value=(from_text) size="40"; }
            " "
            label { "to " input name="to" value=(to_text) size="40"; }
            @if internal { input type="hidden" name="internal" value="1"; }
            " " button type="submit" { "diff" }
        }
    };
    let to = db.resolve(&to_text)?;
    let from = match from_text.as_str() {
        "" if params.contains_key("from") => Snapshot::empty()?,
        "" => return Ok(page("diff", html! { h1 { "Diff" } (form) })),
        text => db.resolve(text)?,
    };
    let mut changes = db.diff(&from, &to, &DiffScope::All)?;
    let hidden: BTreeSet<String> = changes
        .iter()
        .filter(|c| !crate::internal::shown(&c.relation, internal))
        .map(|c| c.relation.clone())
        .collect();
    changes.retain(|c| crate::internal::shown(&c.relation, internal));
    let here = diff_link(&from_text, &to_text);
    let mut counts: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for change in &changes {
        let count = counts.entry(&change.relation).or_default();
        match change.sign {
            Sign::Insert => count.0 += 1,
            Sign::Delete => count.1 += 1,
            // A diff lists inserts and deletes; an update is a change file's shorthand.
            Sign::Update => {}
        }
    }
    let body = html! {
        h1 { "Diff" }
        (form)
        (helpers_link(hidden.len(), &here))
        p { (changes.len()) " tuple changes in " (counts.len()) " relations" }
        table {
            thead { tr { th { "relation" } th { "kind" } th { "inserted" } th { "deleted" } } }
            tbody {
                @for (name, (inserted, deleted)) in &counts {
                    @let kind = to.entry(name).or_else(|| from.entry(name)).map(|e| to.kind_of(e).map(|k| k.keyword()).unwrap_or("relation"));
                    tr { td { (name) } td { (kind.unwrap_or("relation")) } td.num.ins { "+" (inserted) } td.num.del { "-" (deleted) } }
                }
            }
        }
        (changes_list(&changes, None))
    };
    Ok(page("diff", body))
}
