//! `/relation/NAME?at=REF`: a relation at a state, a page at a time (`offset`, `limit`),
//! sorted by a column (`order`, `desc`), filtered to rows whose column `col` reads `eq`.
//! Without sort or filter only the page is read from the tree.

use super::layout::{commit_link, escape_component, page as frame, query};
use crate::serve::Server;
use maud::{html, Markup};
use rnt_db::{DbError, Tuple};
use std::collections::BTreeMap;

/// Rows a page shows unless `limit` says otherwise.
const PAGE_ROWS: usize = 100;

/// The most rows one page shows.
const PAGE_ROWS_MAX: usize = 10_000;

/// The page's request, read from its query string.
struct View {
    at: String,
    offset: usize,
    limit: usize,
    order: Option<String>,
    desc: bool,
    column: Option<String>,
    equals: String,
}

impl View {
    fn read(params: &BTreeMap<String, String>) -> anyhow::Result<View> {
        let number = |name: &str, default: usize| -> anyhow::Result<usize> {
            match params.get(name).map(|v| v.trim()).filter(|v| !v.is_empty()) {
                None => Ok(default),
                Some(text) => text.parse().map_err(|_| {
                    DbError::user(format!(
                        "{name}: `{}` is not a count",
                        rnt_db::diagnostic::clip(text)
                    ))
                    .into()
                }),
            }
        };
        let nonempty = |name: &str| params.get(name).filter(|v| !v.is_empty()).cloned();
        Ok(View {
            at: params
                .get("at")
                .cloned()
                .unwrap_or_else(|| "HEAD".to_string()),
            offset: number("offset", 0)?,
            limit: number("limit", PAGE_ROWS)?.clamp(1, PAGE_ROWS_MAX),
            order: nonempty("order"),
            desc: params.get("desc").is_some_and(|v| v == "1" || v == "true"),
            column: nonempty("col"),
            equals: params.get("eq").cloned().unwrap_or_default(),
        })
    }

    /// This view's URL with `changes` applied to its parameters.
    fn url(&self, name: &str, changes: &[(&str, String)]) -> String {
        let mut pairs: BTreeMap<&str, String> = BTreeMap::new();
        pairs.insert("at", self.at.clone());
        pairs.insert("offset", self.offset.to_string());
        pairs.insert("limit", self.limit.to_string());
        pairs.insert("order", self.order.clone().unwrap_or_default());
        pairs.insert("desc", if self.desc { "1".into() } else { String::new() });
        pairs.insert("col", self.column.clone().unwrap_or_default());
        pairs.insert("eq", self.equals.clone());
        for (key, value) in changes {
            pairs.insert(key, value.clone());
        }
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        format!("/relation/{}{}", escape_component(name), query(&pairs))
    }
}

/// The relation page.
pub fn page(
    server: &Server,
    name: &str,
    params: &BTreeMap<String, String>,
) -> anyhow::Result<Markup> {
    let view = View::read(params)?;
    let db = &server.db;
    let snapshot = db.resolve(&view.at)?;
    snapshot.require(name)?;
    let schema = snapshot
        .schema(name)
        .ok_or_else(|| DbError::corrupted(format!("relation `{name}` has no schema")))?;
    let names: Vec<String> = schema.attribute_names().map(str::to_string).collect();
    let position = |column: &str| {
        names.iter().position(|n| n == column).ok_or_else(|| {
            DbError::user(format!(
                "`{}` is not a column of {name} (its columns: {})",
                rnt_db::diagnostic::clip(column),
                names.join(", ")
            ))
        })
    };
    let order = view.order.as_deref().map(position).transpose()?;
    let filter = view.column.as_deref().map(position).transpose()?;
    let (rows, total) = if order.is_none() && filter.is_none() && !view.desc {
        let rows = db.tuples_page(&snapshot, name, view.offset, Some(view.limit))?;
        (rows, snapshot.entry(name).and_then(|e| e.count))
    } else {
        let mut all: Vec<Tuple> = db.tuples(&snapshot, name)?;
        if let Some(column) = filter {
            all.retain(|tuple| crate::output::cell(&tuple[column]) == view.equals);
        }
        crate::cmd::show::sort_tuples(&mut all, &order.into_iter().collect::<Vec<_>>(), view.desc);
        let total = all.len() as u64;
        let rows = all.into_iter().skip(view.offset).take(view.limit).collect();
        (rows, Some(total))
    };
    let commit = snapshot.commit.map(|c| c.to_hex()).unwrap_or_default();
    let end = view.offset + rows.len();
    let has_next = total.map_or(rows.len() == view.limit, |t| (end as u64) < t);
    let body = html! {
        h1 { (name) }
        p {
            "at " @if commit.is_empty() { (snapshot.state_address.to_hex()) } @else { (commit_link(&commit)) }
            " · rows " (if rows.is_empty() { 0 } else { view.offset + 1 }) "–" (end)
            @if let Some(total) = total { " of " (total) }
        }
        form method="get" action={ "/relation/" (escape_component(name)) } {
            input type="hidden" name="at" value=(if commit.is_empty() { view.at.clone() } else { commit.clone() });
            label { "column " select name="col" {
                option value="" { "(none)" }
                @for column in &names { option value=(column) selected[view.column.as_deref() == Some(column.as_str())] { (column) } }
            } }
            " "
            label { "equals " input name="eq" value=(view.equals); }
            " " button type="submit" { "filter" }
        }
        table {
            thead { tr {
                @for column in &names {
                    @let ascending = view.order.as_deref() == Some(column.as_str()) && !view.desc;
                    th scope="col" {
                        a href=(view.url(name, &[("order", column.clone()), ("desc", if ascending { "1".into() } else { String::new() }), ("offset", "0".into())])) { (column) }
                        @if view.order.as_deref() == Some(column.as_str()) { (if view.desc { " ▼" } else { " ▲" }) }
                    }
                }
            } }
            tbody {
                @for tuple in &rows {
                    tr { @for value in tuple.iter() { td { (crate::output::cell(value)) } } }
                }
            }
        }
        nav.pager aria-label="pages" {
            @if view.offset > 0 {
                a rel="prev" href=(view.url(name, &[("offset", view.offset.saturating_sub(view.limit).to_string())])) { "previous page" }
            }
            @if has_next {
                a rel="next" href=(view.url(name, &[("offset", end.to_string())])) { "next page" }
            }
        }
    };
    Ok(frame(name, body))
}
