//! Named changes: `+flights(id: 1, carrier: "UA")`, `-flights(id: 839)`,
//! `~flights(id: 3, arr_delay: 50)`, turned into positional ones against the relation's
//! schema ([`resolve_named`]):
//!
//! ```text
//! +r(named)   every column: its value when named, null when not (a column without `?`
//!             must be named)
//! -r(named)   keyed r: the key columns named → a delete by key (`_` for the rest);
//!             every column named → an exact delete. Unkeyed r: every column named.
//! ~r(named)   keyed r only, every key column named: `_` for each column not named
//! ```

use super::*;
use crate::diagnostic::closest_name;

/// Rewrites each named change of a known relation as a positional one (values in column
/// order, `_` where a delete or an update leaves a column out). Changes of unknown
/// relations are left for [`check_changes`] to report. Errors name the change's line: an
/// unknown column (with the closest name), a column named twice, a column without `?` left
/// out of an insert, a delete or update that does not name the key.
pub fn resolve_named<'s>(
    changes: &mut [Change],
    lookup: impl Fn(&str) -> Option<&'s RelationSchema>,
) -> Result<(), ChangeError> {
    for change in changes.iter_mut().filter(|c| !c.names.is_empty()) {
        let Some(schema) = lookup(&change.relation) else {
            continue;
        };
        let (source, line) = (change.source.clone(), change.line);
        let error = |message: String| ChangeError {
            source: source.clone(),
            line,
            column: None,
            message,
        };
        let given = by_column(change, schema).map_err(error)?;
        let terms = match change.sign {
            Sign::Insert => insert_terms(schema, given),
            Sign::Delete => delete_terms(schema, given),
            Sign::Update => update_terms(schema, given),
        }
        .map_err(error)?;
        change.names.clear();
        change.values.clear();
        change.wildcards.clear();
        for (position, term) in terms.into_iter().enumerate() {
            match term {
                Some(value) => change.values.push(value),
                None => change.wildcards.push(position),
            }
        }
        debug_assert!(change.values.len() + change.wildcards.len() == schema.arity());
    }
    Ok(())
}

/// The named values of `change` by column position (`None` where a column is not named).
fn by_column(change: &mut Change, schema: &RelationSchema) -> Result<Vec<Option<Value>>, String> {
    let mut given: Vec<Option<Value>> = vec![None; schema.arity()];
    let values = std::mem::take(&mut change.values);
    for (name, value) in change.names.iter().zip(values) {
        let Some(position) = schema.attributes.iter().position(|a| &a.name == name) else {
            return Err(unknown_column(name, schema));
        };
        if given[position].is_some() {
            return Err(format!("column `{name}` of {} is named twice", schema.name));
        }
        given[position] = Some(value);
    }
    Ok(given)
}

/// An insert: each column not named is null, when it may be.
fn insert_terms(
    schema: &RelationSchema,
    given: Vec<Option<Value>>,
) -> Result<Vec<Option<Value>>, String> {
    given
        .into_iter()
        .zip(&schema.attributes)
        .map(|(value, attribute)| match value {
            Some(value) => Ok(Some(value)),
            None if attribute.nullable => Ok(Some(Value::Null)),
            None => Err(format!(
                "an insert into {} must name `{}`: it is `{}`, not nullable (only a `?` column \
                 may be left out, and is then null)",
                schema.name,
                attribute.name,
                attribute.column_type()
            )),
        })
        .collect()
}

/// A delete: by key (only the key named) or exact (every column named).
fn delete_terms(
    schema: &RelationSchema,
    given: Vec<Option<Value>>,
) -> Result<Vec<Option<Value>>, String> {
    if given.iter().all(Option::is_some) {
        return Ok(given);
    }
    let Some(key) = schema.key_columns() else {
        return Err(format!(
            "a delete from {} (no key) names every column; missing {}",
            schema.name,
            missing(schema, &given, |_| true)
        ));
    };
    let only_key = given
        .iter()
        .enumerate()
        .all(|(column, value)| value.is_some() == key.contains(&column));
    if !only_key {
        return Err(format!(
            "a delete from {} names its key ({}) to delete by key, or every column",
            schema.name,
            schema.key_names().join(", ")
        ));
    }
    Ok(given)
}

/// An update: the key named, the columns not named kept.
fn update_terms(
    schema: &RelationSchema,
    given: Vec<Option<Value>>,
) -> Result<Vec<Option<Value>>, String> {
    let Some(key) = schema.key_columns() else {
        return Err(format!(
            "an update by key (`~`) needs a keyed relation, and {} has no key: delete the \
             tuple and insert the new one",
            schema.name
        ));
    };
    if key.iter().any(|&c| given[c].is_none()) {
        return Err(format!(
            "an update of {} names its key; missing {}",
            schema.name,
            missing(schema, &given, |c| key.contains(&c))
        ));
    }
    Ok(given)
}

/// The columns among `wanted` that `given` leaves out, as `` `a`, `b` ``.
fn missing(
    schema: &RelationSchema,
    given: &[Option<Value>],
    wanted: impl Fn(usize) -> bool,
) -> String {
    let names: Vec<String> = given
        .iter()
        .enumerate()
        .filter(|(column, value)| value.is_none() && wanted(*column))
        .map(|(column, _)| format!("`{}`", schema.attributes[column].name))
        .collect();
    names.join(", ")
}

/// `flights has no column `carier`; did you mean `carrier`?`
fn unknown_column(name: &str, schema: &RelationSchema) -> String {
    let names = schema.attributes.iter().map(|a| a.name.as_str());
    let hint = match closest_name(name, names.clone()) {
        Some(closest) => format!("did you mean `{closest}`?"),
        None => format!("its columns are {}", names.collect::<Vec<_>>().join(", ")),
    };
    format!("{} has no column `{}`; {hint}", schema.name, clip(name))
}
