//! PostgreSQL's catalog, read-only, derived from a state's program: what `psql`, drivers
//! and BI tools ask before anything else (`docs/postgres.md`).
//!
//! ```text
//! Program ──PgCatalog::of──▶ relations (tables `r`, materialized views `m`, views `v`,
//!                            the indexes of PRIMARY KEY and UNIQUE `i`), columns,
//!                            constraints, each with an oid
//!         ──tables──▶ the rows of pg_catalog.* and information_schema.* (lent to a query
//!                     as facts, as the history tables are)
//!         ──rewrite──▶ PostgreSQL's functions and operators in a query (`format_type`,
//!                      `pg_get_constraintdef`, `::regclass`, `OPERATOR(pg_catalog.~)`, …)
//!                      as the SQL rnt compiles
//! ```
//!
//! Helper relations of the SQL compiler (`_` names) and the denials that implement
//! constraints never appear as relations. An oid is a hash of the object's name, so one
//! object keeps its oid from state to state (psql reads an oid, then asks by it).

mod empty;
mod regex;
mod rewrite;
mod tables;

pub use rewrite::rewrite;
pub use tables::SystemTable;

use crate::error::ConstraintKind;
use rnt_lang::check::Program;
use rnt_lang::schema::is_internal;
use rnt_lang::syntax::ast::{HeadTerm, Literal, RelationKind, Term, TermKind};
use rnt_lang::value::Type;

/// The oid of namespace `pg_catalog`.
pub const PG_CATALOG_OID: i64 = 11;
/// The oid of namespace `public`, where every relation of rnt lives.
pub const PUBLIC_OID: i64 = 2200;
/// The oid of namespace `information_schema`.
pub const INFORMATION_SCHEMA_OID: i64 = 13_000;
/// The oid of the one role, `rnt`, owner of everything.
pub const OWNER_OID: i64 = 10;
/// The name of the one database a server serves (any name a client connects with reaches it).
pub const DATABASE: &str = "rnt";
/// The version `version()` reports (psql and drivers read the number after `PostgreSQL`).
pub const VERSION: &str = "PostgreSQL 15.0 (rnt)";
/// Oids below this one are PostgreSQL's own; an object of a program hashes above it.
const FIRST_USER_OID: u32 = 16_384;

/// A column of a relation.
#[derive(Clone, Debug)]
pub struct PgColumn {
    /// Its name.
    pub name: String,
    /// Its type (`None`: a helper's column whose type was not inferred; shown as text).
    pub ty: Option<Type>,
    /// NOT NULL.
    pub not_null: bool,
}

/// A relation as `pg_class` lists it.
#[derive(Clone, Debug)]
pub struct PgRelation {
    /// Its oid.
    pub oid: i64,
    /// Its name.
    pub name: String,
    /// `r` table, `m` materialized view, `v` view, `i` index.
    pub kind: char,
    /// Its columns (an index's: the columns it covers).
    pub columns: Vec<PgColumn>,
    /// A view's rules in the rule language (`pg_get_viewdef`); an index's definition.
    pub definition: Option<String>,
}

/// A constraint as `pg_constraint` lists it.
#[derive(Clone, Debug)]
pub struct PgConstraint {
    /// Its oid.
    pub oid: i64,
    /// Its name (PostgreSQL's: `t_pkey`, `t_c_key`, `t_c_fkey`, `t_check`).
    pub name: String,
    /// `p` primary key, `u` unique, `f` foreign key, `c` check.
    pub kind: char,
    /// The table's oid and name.
    pub table: (i64, String),
    /// The constrained columns, 1-based.
    pub columns: Vec<i64>,
    /// A foreign key's parent table (oid, name) and referred columns (1-based).
    pub parent: Option<((i64, String), Vec<i64>)>,
    /// The oid of the index a primary key or unique constraint has (0: none).
    pub index: i64,
    /// Its definition as `pg_get_constraintdef` gives it (`PRIMARY KEY (id)`).
    pub definition: String,
}

/// The catalog of one state.
#[derive(Clone, Debug, Default)]
pub struct PgCatalog {
    /// Tables, views and indexes, by name.
    pub relations: Vec<PgRelation>,
    /// Constraints, by name.
    pub constraints: Vec<PgConstraint>,
}

/// A stable oid for object `name` of kind `what` (FNV-1a, above PostgreSQL's own oids).
pub fn oid_of(what: &str, name: &str) -> i64 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in what.bytes().chain([0]).chain(name.bytes()) {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    i64::from(FIRST_USER_OID + hash % (i32::MAX as u32 - FIRST_USER_OID))
}

impl PgCatalog {
    /// The catalog of `program`: its tables and views (no helper, no denial), the indexes
    /// of their keys, and their constraints.
    pub fn of(program: &Program) -> PgCatalog {
        let mut catalog = PgCatalog::default();
        for (name, relation) in &program.relations {
            let declaration = &relation.declaration;
            let kind = match declaration.kind {
                RelationKind::Relation => 'r',
                RelationKind::View => 'm',
                RelationKind::Ephemeral => 'v',
                RelationKind::Denial => continue,
            };
            if is_internal(name) {
                continue;
            }
            let key: Vec<&str> = declaration
                .key
                .iter()
                .flat_map(|k| k.columns.iter().map(|c| c.name.as_str()))
                .collect();
            let columns: Vec<PgColumn> = declaration
                .attributes
                .iter()
                .filter(|a| a.name.name != crate::catalog::COUNT_COLUMN)
                .map(|a| PgColumn {
                    name: a.name.name.clone(),
                    ty: Some(a.ty),
                    not_null: !a.nullable || key.contains(&a.name.name.as_str()),
                })
                .collect();
            let definition = (kind != 'r').then(|| rules_of(relation));
            let table = (oid_of("relation", name), name.clone());
            if !key.is_empty() {
                let positions = positions(&columns, &key);
                catalog.add_keyed(&table, &columns, &positions, 'p', &format!("{name}_pkey"));
            }
            catalog.relations.push(PgRelation {
                oid: table.0,
                name: name.clone(),
                kind,
                columns,
                definition,
            });
        }
        catalog.add_denials(program);
        catalog.relations.sort_by(|a, b| a.name.cmp(&b.name));
        catalog.constraints.sort_by(|a, b| a.name.cmp(&b.name));
        catalog
    }

    /// A primary key or unique constraint of `table` on `positions` (0-based), with its
    /// index.
    fn add_keyed(
        &mut self,
        table: &(i64, String),
        columns: &[PgColumn],
        positions: &[i64],
        kind: char,
        name: &str,
    ) {
        let names: Vec<&str> = positions
            .iter()
            .filter_map(|&p| columns.get(usize::try_from(p - 1).ok()?))
            .map(|c| c.name.as_str())
            .collect();
        let index = oid_of("index", name);
        let what = if kind == 'p' { "PRIMARY KEY" } else { "UNIQUE" };
        self.relations.push(PgRelation {
            oid: index,
            name: name.to_string(),
            kind: 'i',
            columns: names
                .iter()
                .filter_map(|n| columns.iter().find(|c| c.name == *n).cloned())
                .collect(),
            definition: Some(format!(
                "CREATE UNIQUE INDEX {name} ON public.{} USING btree ({})",
                table.1,
                names.join(", ")
            )),
        });
        self.constraints.push(PgConstraint {
            oid: oid_of("constraint", name),
            name: name.to_string(),
            kind,
            table: table.clone(),
            columns: positions.to_vec(),
            parent: None,
            index,
            definition: format!("{what} ({})", names.join(", ")),
        });
    }

    /// The constraints CREATE TABLE made as denials: UNIQUE, FOREIGN KEY, CHECK.
    fn add_denials(&mut self, program: &Program) {
        for (name, relation) in &program.relations {
            if relation.declaration.kind != RelationKind::Denial {
                continue;
            }
            let kind = ConstraintKind::of_denial(name);
            let Some(owner) = self.owner(name) else {
                continue;
            };
            let columns = self.relation(&owner).map(|r| r.columns.clone());
            let columns = columns.unwrap_or_default();
            let table = (oid_of("relation", &owner), owner.clone());
            let constrained: Vec<&str> = relation
                .declaration
                .attributes
                .iter()
                .map(|a| a.name.name.as_str())
                .collect();
            let at = positions(&columns, &constrained);
            match kind {
                ConstraintKind::Unique => self.add_keyed(&table, &columns, &at, 'u', name),
                ConstraintKind::ForeignKey => {
                    let parent = foreign_parent(relation);
                    self.add_foreign(name, &table, &columns, at, parent)
                }
                ConstraintKind::Check => self.constraints.push(PgConstraint {
                    oid: oid_of("constraint", name),
                    name: name.clone(),
                    kind: 'c',
                    table,
                    columns: Vec::new(),
                    parent: None,
                    index: 0,
                    definition: format!("CHECK (rule: {})", rules_of(relation)),
                }),
                _ => {}
            }
        }
    }

    fn add_foreign(
        &mut self,
        name: &str,
        table: &(i64, String),
        columns: &[PgColumn],
        at: Vec<i64>,
        parent: Option<(String, Vec<usize>)>,
    ) {
        let names = |cs: &[PgColumn], at: &[i64]| -> Vec<String> {
            at.iter()
                .filter_map(|&p| cs.get(usize::try_from(p - 1).ok()?))
                .map(|c| c.name.clone())
                .collect()
        };
        let child = names(columns, &at);
        let parent = parent.map(|(parent, referred)| {
            let referred: Vec<i64> = referred
                .iter()
                .map(|&p| i64::try_from(p + 1).unwrap_or(0))
                .collect();
            ((oid_of("relation", &parent), parent), referred)
        });
        let definition = match &parent {
            Some(((_, p), referred)) => {
                let parent_columns = self
                    .relation(p)
                    .map(|r| names(&r.columns, referred))
                    .unwrap_or_default();
                format!(
                    "FOREIGN KEY ({}) REFERENCES {p}({})",
                    child.join(", "),
                    parent_columns.join(", ")
                )
            }
            None => format!("FOREIGN KEY ({})", child.join(", ")),
        };
        self.constraints.push(PgConstraint {
            oid: oid_of("constraint", name),
            name: name.to_string(),
            kind: 'f',
            table: table.clone(),
            columns: at,
            parent,
            index: 0,
            definition,
        });
    }

    /// The table whose constraint made denial `denial`: the longest table name it extends.
    fn owner(&self, denial: &str) -> Option<String> {
        self.relations
            .iter()
            .filter(|r| r.kind == 'r' && denial.starts_with(&format!("{}_", r.name)))
            .max_by_key(|r| r.name.len())
            .map(|r| r.name.clone())
    }

    /// The relation named `name`.
    pub fn relation(&self, name: &str) -> Option<&PgRelation> {
        self.relations.iter().find(|r| r.name == name)
    }

    /// The relation with oid `oid`.
    pub fn relation_by_oid(&self, oid: i64) -> Option<&PgRelation> {
        self.relations.iter().find(|r| r.oid == oid)
    }
}

/// A relation's rules as written, in the rule language.
fn rules_of(relation: &rnt_lang::check::Relation) -> String {
    relation
        .sources
        .iter()
        .map(rnt_lang::canonical::rule_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The 1-based positions of `names` among `columns`.
fn positions(columns: &[PgColumn], names: &[&str]) -> Vec<i64> {
    names
        .iter()
        .filter_map(|n| columns.iter().position(|c| c.name == *n))
        .map(|p| i64::try_from(p + 1).unwrap_or(0))
        .collect()
}

/// A foreign key denial's parent table and the parent's columns it refers to (0-based, in
/// the order of the child's columns): the atom its rule negates (`not parent(c0, _, …)`).
fn foreign_parent(denial: &rnt_lang::check::Relation) -> Option<(String, Vec<usize>)> {
    let rule = denial.sources.first()?;
    let head: Vec<Option<rnt_lang::syntax::ast::VarId>> = rule
        .head
        .terms
        .iter()
        .map(|t| match t {
            HeadTerm::Term(Term {
                kind: TermKind::Var(v),
                ..
            }) => Some(*v),
            _ => None,
        })
        .collect();
    rule.body.iter().find_map(|literal| match literal {
        Literal::Negative { atom, .. } => {
            let referred = head
                .iter()
                .filter_map(|var| {
                    atom.terms.iter().position(
                        |t| matches!((&t.kind, var), (TermKind::Var(a), Some(b)) if a == b),
                    )
                })
                .collect();
            Some((atom.relation.name.clone(), referred))
        }
        _ => None,
    })
}

/// Whether `name` (as `names::object` gives it) names a table of the catalog:
/// `pg_catalog.x`, `information_schema.x`, or a bare `pg_x` of pg_catalog.
pub fn is_system(name: &str) -> bool {
    tables::SystemTable::knows(name)
}

/// PostgreSQL's name and oid of a column type, and its `atttypmod`.
pub fn pg_type(ty: Option<Type>) -> (&'static str, i64, i64) {
    match ty {
        Some(Type::Int) => ("bigint", 20, -1),
        Some(Type::Str) | None => ("text", 25, -1),
        Some(Type::Bool) => ("boolean", 16, -1),
        Some(Type::Decimal { precision, scale }) => (
            "numeric",
            1700,
            ((i64::from(precision) << 16) | i64::from(scale)) + 4,
        ),
        Some(Type::Date) => ("date", 1082, -1),
        Some(Type::Timestamp) => ("timestamp without time zone", 1114, -1),
        Some(Type::Double) => ("double precision", 701, -1),
        Some(Type::Real) => ("real", 700, -1),
    }
}

/// `format_type(oid, typmod)` of a column type: `numeric(10,2)`, `bigint`, ….
pub fn formatted(ty: Option<Type>) -> String {
    match ty {
        Some(Type::Decimal { precision, scale }) => format!("numeric({precision},{scale})"),
        other => pg_type(other).0.to_string(),
    }
}
