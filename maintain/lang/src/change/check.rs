//! Checking changes against the relations' schemas ([`check_changes`]).

use super::*;

/// Changes checked against the schemas: every relation is known, every tuple has the
/// relation's arity and types and fits [`TUPLE_BYTES_MAX`], and no tuple is named twice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeSet {
    changes: Vec<Change>,
}

impl ChangeSet {
    /// The changes in the order written.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The changes in the order written, by value.
    pub fn into_changes(self) -> Vec<Change> {
        self.changes
    }

    /// The number of changes.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// Whether there are no changes.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The changes grouped by relation name (names in sorted order, changes in the order
    /// written).
    pub fn by_relation(&self) -> BTreeMap<&str, Vec<&Change>> {
        let mut groups: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
        for change in &self.changes {
            groups.entry(&change.relation).or_default().push(change);
        }
        groups
    }
}

/// Checks parsed changes against the schemas `lookup` returns by relation name: the
/// relation is known, the tuple has its arity and types and fits [`TUPLE_BYTES_MAX`], `_`
/// stands only for non-key values in a delete from a keyed relation, the change set names
/// each tuple at most once (an update is `-old` plus `+new`) and each key of a keyed
/// relation at most once per sign (two inserts with one key, or two deletes, would leave
/// which one wins to the order of lines). Stops at the first error, which names the
/// change's line.
///
/// Named changes are resolved into positional ones first ([`resolve_named`]) and each
/// value is read into its column ([`conform_changes`]).
pub fn check_changes<'s>(
    mut changes: Vec<Change>,
    lookup: impl Fn(&str) -> Option<&'s RelationSchema>,
) -> Result<ChangeSet, ChangeError> {
    resolve_named(&mut changes, &lookup)?;
    conform_changes(&mut changes, &lookup)?;
    check_change_slice(&changes, lookup)?;
    Ok(ChangeSet { changes })
}

/// Reads each value of `changes` into its column (a column's type decides how its value
/// is read: an int or a decimal into a `decimal(p, s)`, a string into a `date`, `null`
/// into a `T?`; see `crate::conform`), before [`check_change_slice`] checks them. Changes
/// of an unknown relation or with another arity are left for that check to report.
pub fn conform_changes<'s>(
    changes: &mut [Change],
    lookup: impl Fn(&str) -> Option<&'s RelationSchema>,
) -> Result<(), ChangeError> {
    for change in changes.iter_mut() {
        let Some(schema) = lookup(&change.relation) else {
            continue;
        };
        if change.values.len() + change.wildcards.len() != schema.arity() {
            continue;
        }
        let columns: Vec<usize> = (0..schema.arity())
            .filter(|c| change.wildcards.binary_search(c).is_err())
            .collect();
        for (value, &column) in change.values.iter_mut().zip(&columns) {
            let attribute = &schema.attributes[column];
            let read = conform(
                std::mem::replace(value, Value::Null),
                attribute.column_type(),
            );
            *value = read.map_err(|why| ChangeError {
                source: change.source.clone(),
                line: change.line,
                column: None,
                message: value_error(column, schema, &why),
            })?;
        }
    }
    Ok(())
}

/// [`check_changes`] on borrowed changes: the same checks, the same first error.
pub fn check_change_slice<'s>(
    changes: &[Change],
    lookup: impl Fn(&str) -> Option<&'s RelationSchema>,
) -> Result<(), ChangeError> {
    let mut named = NamedOnce::default();
    // Each relation's column types, found once.
    let mut types_of: HashMap<&str, Vec<ColumnType>> = HashMap::new();
    for (index, change) in changes.iter().enumerate() {
        let error = |message: String| ChangeError {
            source: change.source.clone(),
            line: change.line,
            column: None,
            message,
        };
        let schema = lookup(&change.relation)
            .ok_or_else(|| error(format!("unknown relation `{}`", change.relation)))?;
        let types = types_of
            .entry(change.relation.as_str())
            .or_insert_with(|| schema.types());
        check_against_schema(change, schema, types).map_err(error)?;
        named.note(changes, index, schema).map_err(error)?;
    }
    Ok(())
}

/// `value N of R (A) …`: what is wrong with the value at `column` of a change of `schema`.
fn value_error(column: usize, schema: &RelationSchema, why: &str) -> String {
    let attribute = &schema.attributes[column].name;
    let joint = if why.starts_with("must be") || why.starts_with("is ") {
        " "
    } else {
        ": "
    };
    format!(
        "value {} of {} ({attribute}){joint}{why}",
        column + 1,
        schema.name
    )
}

/// One change against its relation's schema: arity, each value's type, each `_`, and the
/// size of what it stores (a delete by key stores nothing: only its key must fit a key).
fn check_against_schema(
    change: &Change,
    schema: &RelationSchema,
    types: &[ColumnType],
) -> Result<(), String> {
    debug_assert!(change.names.is_empty(), "resolve_named runs first");
    if change.sign == Sign::Update && schema.key_columns().is_none() {
        return Err(format!(
            "an update by key (`~`) needs a keyed relation, and {} has no key: delete the \
             tuple and insert the new one",
            schema.name
        ));
    }
    let pattern = change.pattern();
    if pattern.len() != schema.arity() {
        return Err(format!(
            "{} takes {} value{}, found {}",
            schema.name,
            schema.arity(),
            if schema.arity() == 1 { "" } else { "s" },
            pattern.len()
        ));
    }
    for (position, (term, attribute)) in pattern.iter().zip(&schema.attributes).enumerate() {
        match term {
            Some(value) if !attribute.column_type().holds(value) => {
                let why = conform((*value).clone(), attribute.column_type())
                    .err()
                    .unwrap_or_else(|| "read it into its column first (conform_changes)".into());
                return Err(value_error(position, schema, &why));
            }
            Some(_) => {}
            None => check_wildcard(change, schema, position)?,
        }
    }
    let checked = if change.is_exact() {
        check_tuple(&change.values, types)
    } else {
        let key = schema.key_columns().unwrap_or_default();
        let values: Vec<Value> = key.iter().filter_map(|&c| pattern[c].cloned()).collect();
        let types: Vec<ColumnType> = key
            .iter()
            .map(|&c| schema.attributes[c].column_type())
            .collect();
        check_tuple(&values, &types)
    };
    match checked {
        Ok(_) => Ok(()),
        Err(TupleError::TooLarge { bytes }) => Err(format!(
            "tuple of {} encodes to {bytes} bytes, more than the limit of {TUPLE_BYTES_MAX}",
            schema.name
        )),
        Err(other) => Err(other.to_string()),
    }
}

/// What a change set has named so far: each tuple once, and each key of a keyed relation
/// once per sign (an update's key not at all besides). Only looked up, never iterated.
#[derive(Default)]
struct NamedOnce<'c> {
    /// Where each tuple was first named: (relation, values) -> index of its change.
    tuples: HashMap<(&'c str, &'c [Value]), usize>,
    /// Where each key of a keyed relation was first named, per sign.
    keys: HashMap<(&'c str, Vec<&'c Value>), KeyUses>,
}

/// The changes (by index) that name one key, one slot per sign.
#[derive(Default)]
struct KeyUses {
    insert: Option<usize>,
    delete: Option<usize>,
    update: Option<usize>,
}

impl KeyUses {
    /// The earlier change that `sign` may not meet: one with the same sign, and for an
    /// update any other (an update next to an insert or delete of its key would leave the
    /// result to the order of lines).
    fn clash(&self, sign: Sign) -> Option<usize> {
        match sign {
            Sign::Insert => self.insert.or(self.update),
            Sign::Delete => self.delete.or(self.update),
            Sign::Update => self.update.or(self.insert).or(self.delete),
        }
    }

    fn slot(&mut self, sign: Sign) -> &mut Option<usize> {
        match sign {
            Sign::Insert => &mut self.insert,
            Sign::Delete => &mut self.delete,
            Sign::Update => &mut self.update,
        }
    }
}

impl<'c> NamedOnce<'c> {
    /// Notes `changes[index]`; an error when it names a tuple, or a key with the same sign,
    /// that an earlier change named.
    fn note(
        &mut self,
        changes: &'c [Change],
        index: usize,
        schema: &RelationSchema,
    ) -> Result<(), String> {
        let change = &changes[index];
        if change.is_exact() && change.sign != Sign::Update {
            if let Some(&first) = self
                .tuples
                .get(&(change.relation.as_str(), &change.values[..]))
            {
                return Err(format!(
                    "{} is already changed {}",
                    clip(&change.tuple().to_string()),
                    place_of(&changes[first], change)
                ));
            }
            self.tuples
                .insert((change.relation.as_str(), &change.values[..]), index);
        }
        let Some(key) = schema.key_columns() else {
            return Ok(());
        };
        let pattern = change.pattern();
        let values: Vec<&Value> = key.iter().filter_map(|&c| pattern[c]).collect();
        let uses = self
            .keys
            .entry((&change.relation, values.clone()))
            .or_default();
        if let Some(first) = uses.clash(change.sign) {
            let verb = match changes[first].sign {
                Sign::Insert => "inserted",
                Sign::Delete => "deleted",
                Sign::Update => "updated",
            };
            return Err(format!(
                "{} key {} is already {verb} {} (a change set names each key at most once \
                 per sign, and an updated key nowhere else)",
                schema.name,
                key_text(schema, &values),
                place_of(&changes[first], change)
            ));
        }
        *uses.slot(change.sign) = Some(index);
        Ok(())
    }
}

/// Whether `_` may stand at `position` of `change`: only in a delete (the parser refuses it
/// in an insert), only from a keyed relation, and only for a non-key attribute.
fn check_wildcard(change: &Change, schema: &RelationSchema, position: usize) -> Result<(), String> {
    let attribute = &schema.attributes[position].name;
    let Some(key) = schema.key_columns() else {
        return Err(format!(
            "`_` (value {} of {}) is allowed only in a delete from a keyed relation, \
             and {} has no key: a delete names the whole tuple",
            position + 1,
            schema.name,
            schema.name
        ));
    };
    if change.sign == Sign::Insert {
        return Err(format!(
            "`_` (value {} of {}) is allowed only in a delete or an update: an insert names \
             every value",
            position + 1,
            schema.name
        ));
    }
    if key.contains(&position) {
        return Err(format!(
            "`_` (value {} of {}) stands for `{attribute}`, a key attribute: a delete by key \
             names every key value (key({}))",
            position + 1,
            schema.name,
            schema.key_names().join(", ")
        ));
    }
    Ok(())
}

/// Where `first` was written, as seen from `later`: `on line 3`, or `in FILE, line 3` when
/// the two came from different sources.
fn place_of(first: &Change, later: &Change) -> String {
    match &first.source {
        Some(source) if first.source != later.source => {
            format!("in {source}, line {}", first.line)
        }
        _ => format!("on line {}", first.line),
    }
}

/// A key's values with their names: `id=7`, or `(id=7, day=3)` for a key of several
/// attributes.
pub fn key_text(schema: &RelationSchema, values: &[&Value]) -> String {
    let parts: Vec<String> = schema
        .key_names()
        .into_iter()
        .zip(values)
        .map(|(name, value)| clip(&format!("{name}={value}")).into_owned())
        .collect();
    if parts.len() == 1 {
        parts.into_iter().next().unwrap_or_default()
    } else {
        format!("({})", parts.join(", "))
    }
}
