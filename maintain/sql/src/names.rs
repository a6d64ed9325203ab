//! SQL names as the rule language holds them: unquoted identifiers fold to lower case (as
//! PostgreSQL and DuckDB do), a quoted one keeps its case; either must be a rule-language
//! identifier (ASCII letters, digits and `_`, not starting with a digit), and a few names
//! are the rule language's own.

use crate::error::{SqlError, SqlResult};
use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};

/// Names the rule language gives a meaning of its own, which no relation or column may
/// take: `_` and the names starting with `_` are reserved for what the lowering adds.
fn reserved(name: &str) -> bool {
    name.starts_with('_') || matches!(name, "now" | "true" | "false" | "null")
}

/// The rule-language name of an SQL identifier.
pub fn ident(ident: &Ident) -> SqlResult<String> {
    let name = match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_lowercase(),
    };
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        let shown: String = name.chars().take(40).collect();
        return Err(SqlError::unsupported(format!(
            "the name `{shown}` (names are ASCII letters, digits and `_`)"
        )));
    }
    Ok(name)
}

/// A name that a new table, view or column takes: also not reserved.
pub fn new_name(ident: &Ident) -> SqlResult<String> {
    let name = self::ident(ident)?;
    if reserved(&name) {
        return Err(SqlError::bind(format!(
            "`{name}` is reserved in rnt (names starting with `_`, and now, true, false, null)"
        )));
    }
    Ok(name)
}

/// The name a new table or view takes from `name`: [`object`]'s, and not reserved.
pub fn new_object(name: &ObjectName) -> SqlResult<String> {
    new_name(&Ident::new(object(name)?))
}

/// The last part of an object name (`schema.table` is read as `table`); a table of
/// PostgreSQL's catalog keeps its schema (`pg_catalog.pg_class`,
/// `information_schema.tables`: no relation of rnt can take such a name); another schema
/// than `main` or `public` is refused.
pub fn object(name: &ObjectName) -> SqlResult<String> {
    let parts: Vec<&Ident> = name
        .0
        .iter()
        .filter_map(|part| match part {
            ObjectNamePart::Identifier(ident) => Some(ident),
            ObjectNamePart::Function(_) => None,
        })
        .collect();
    match parts.as_slice() {
        [one] => self::ident(one),
        [schema, one] if matches!(schema.value.to_lowercase().as_str(), "main" | "public") => {
            self::ident(one)
        }
        [schema, one]
            if matches!(
                schema.value.to_lowercase().as_str(),
                "pg_catalog" | "information_schema"
            ) =>
        {
            Ok(format!(
                "{}.{}",
                schema.value.to_lowercase(),
                self::ident(one)?
            ))
        }
        _ => Err(SqlError::unsupported(format!(
            "the qualified name `{name}`"
        ))),
    }
}
