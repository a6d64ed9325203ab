//! The rows of each catalog table, from a [`PgCatalog`]. Columns follow PostgreSQL 15's
//! (those clients read; an array column is text such as `{1,2}`, a `regproc` its name);
//! every column is nullable. Tables rnt has nothing for (descriptions, inheritance,
//! column defaults as expressions) are there and empty, so the queries that read them run.

use super::{formatted, pg_type, PgCatalog, PgColumn, PgRelation};
use super::{DATABASE, INFORMATION_SCHEMA_OID, OWNER_OID, PG_CATALOG_OID, PUBLIC_OID};
use rnt_lang::value::{ColumnType, Type, Value};

/// One catalog table: its columns and rows.
#[derive(Clone, Debug)]
pub struct SystemTable {
    /// The columns, each nullable.
    pub columns: Vec<(String, ColumnType)>,
    /// The rows.
    pub rows: Vec<Vec<Value>>,
}

/// The tables of `pg_catalog` (also read without the schema, as PostgreSQL's search path
/// puts `pg_catalog` first).
const PG_CATALOG: [&str; 19] = [
    "pg_am",
    "pg_attrdef",
    "pg_attribute",
    "pg_class",
    "pg_collation",
    "pg_constraint",
    "pg_database",
    "pg_description",
    "pg_index",
    "pg_inherits",
    "pg_matviews",
    "pg_namespace",
    "pg_roles",
    "pg_settings",
    "pg_tables",
    "pg_type",
    "pg_user",
    "pg_views",
    "pg_proc",
];

/// The tables of `pg_catalog` that hold nothing of rnt's (policies, triggers, rules,
/// publications, statistics, sequences, inheritance, dependencies, …): a query reading one
/// first in its FROM has no rows.
pub const NOTHING: [&str; 24] = [
    "pg_policy",
    "pg_statistic_ext",
    "pg_statistic_ext_data",
    "pg_publication",
    "pg_publication_rel",
    "pg_publication_namespace",
    "pg_trigger",
    "pg_rewrite",
    "pg_partitioned_table",
    "pg_depend",
    "pg_sequence",
    "pg_foreign_table",
    "pg_event_trigger",
    "pg_extension",
    "pg_shdescription",
    "pg_seclabel",
    "pg_init_privs",
    "pg_opclass",
    "pg_operator",
    "pg_aggregate",
    "pg_cast",
    "pg_enum",
    "pg_range",
    "pg_default_acl",
];

/// The tables of `information_schema`.
const INFORMATION_SCHEMA: [&str; 6] = [
    "columns",
    "key_column_usage",
    "schemata",
    "table_constraints",
    "tables",
    "views",
];

fn int(n: i64) -> Value {
    Value::Int(n)
}

fn text(s: impl Into<String>) -> Value {
    Value::Str(s.into())
}

fn boolean(b: bool) -> Value {
    Value::Bool(b)
}

/// `spec`'s columns: `name t` pairs, `t` one of `i` (int), `s` (text), `b` (bool).
fn columns(spec: &str) -> Vec<(String, ColumnType)> {
    spec.split(',')
        .filter_map(|column| {
            let (name, ty) = column.trim().split_once(' ')?;
            let ty = match ty {
                "i" => Type::Int,
                "b" => Type::Bool,
                _ => Type::Str,
            };
            Some((name.to_string(), ColumnType::nullable(ty)))
        })
        .collect()
}

/// A PostgreSQL array of ints as text: `{1,2}`.
fn array(values: &[i64]) -> Value {
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    text(format!("{{{}}}", items.join(",")))
}

/// A PostgreSQL `int2vector` as text: `1 2`.
fn vector(values: &[i64]) -> Value {
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    text(items.join(" "))
}

/// The built-in types a column of rnt has (and a few drivers ask for by name):
/// (oid, name, length, category, collation).
const TYPES: [(i64, &str, i64, &str, i64); 15] = [
    (16, "bool", 1, "B", 0),
    (17, "bytea", -1, "U", 0),
    (18, "char", 1, "Z", 100),
    (19, "name", 64, "S", 950),
    (20, "int8", 8, "N", 0),
    (21, "int2", 2, "N", 0),
    (23, "int4", 4, "N", 0),
    (25, "text", -1, "S", 100),
    (26, "oid", 4, "N", 0),
    (700, "float4", 4, "N", 0),
    (701, "float8", 8, "N", 0),
    (1043, "varchar", -1, "S", 100),
    (1082, "date", 4, "D", 0),
    (1114, "timestamp", 8, "D", 0),
    (1700, "numeric", -1, "N", 0),
];

/// The built-in types' oids and names (`pg_type`).
pub fn type_names() -> impl Iterator<Item = (i64, &'static str)> {
    TYPES.iter().map(|t| (t.0, t.1))
}

impl SystemTable {
    /// Whether `name` (`pg_catalog.x`, `information_schema.x` or a bare `pg_x`) is a
    /// catalog table.
    pub fn knows(name: &str) -> bool {
        match name.split_once('.') {
            Some(("pg_catalog", table)) => PG_CATALOG.contains(&table) || NOTHING.contains(&table),
            Some(("information_schema", table)) => INFORMATION_SCHEMA.contains(&table),
            Some(_) => false,
            None => PG_CATALOG.contains(&name) || NOTHING.contains(&name),
        }
    }
}

impl PgCatalog {
    /// The catalog table `name` ([`SystemTable::knows`]), `None` for any other name.
    pub fn table(&self, name: &str) -> Option<SystemTable> {
        let (schema, table) = name.split_once('.').unwrap_or(("pg_catalog", name));
        let (spec, rows) = match (schema, table) {
            ("pg_catalog", "pg_namespace") => namespaces(),
            ("pg_catalog", "pg_class") => self.classes(),
            ("pg_catalog", "pg_attribute") => self.attributes(),
            ("pg_catalog", "pg_type") => types(),
            ("pg_catalog", "pg_index") => self.indexes(),
            ("pg_catalog", "pg_constraint") => self.constraint_rows(),
            ("pg_catalog", "pg_database") => database(),
            ("pg_catalog", "pg_settings") => settings(),
            ("pg_catalog", "pg_tables" | "pg_views" | "pg_matviews") => self.pg_views(table),
            ("pg_catalog", other) => empty(other)?,
            ("information_schema", "tables") => self.is_tables(),
            ("information_schema", "columns") => self.is_columns(),
            ("information_schema", "views") => self.is_views(),
            ("information_schema", "table_constraints") => self.is_constraints(),
            ("information_schema", "key_column_usage") => self.is_key_columns(),
            ("information_schema", "schemata") => schemata(),
            _ => return None,
        };
        Some(SystemTable {
            columns: columns(spec),
            rows,
        })
    }

    /// The tables and views a user sees (no index).
    fn user_relations(&self) -> impl Iterator<Item = &PgRelation> {
        self.relations.iter().filter(|r| r.kind != 'i')
    }

    fn classes(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "oid i, relname s, relnamespace i, reltype i, reloftype i, relowner i, \
            relam i, relfilenode i, reltablespace i, relpages i, reltuples i, relallvisible i, \
            reltoastrelid i, relhasindex b, relisshared b, relpersistence s, relkind s, \
            relnatts i, relchecks i, relhasrules b, relhastriggers b, relhassubclass b, \
            relrowsecurity b, relforcerowsecurity b, relispopulated b, relreplident s, \
            relispartition b, relrewrite i, relfrozenxid i, relminmxid i, relacl s, \
            reloptions s, relpartbound s";
        let rows = self
            .relations
            .iter()
            .map(|r| {
                let of = |kind: char| {
                    self.constraints
                        .iter()
                        .filter(|c| c.table.0 == r.oid && c.kind == kind)
                        .count()
                };
                let referenced = self
                    .constraints
                    .iter()
                    .any(|c| c.parent.as_ref().is_some_and(|(p, _)| p.0 == r.oid));
                let am = match r.kind {
                    'i' => 403,
                    'v' => 0,
                    _ => 2,
                };
                let mut row = vec![int(r.oid), text(&r.name), int(PUBLIC_OID), int(0), int(0)];
                row.extend([int(OWNER_OID), int(am), int(r.oid), int(0), int(0), int(0)]);
                row.extend([
                    int(0),
                    int(0),
                    boolean(of('p') + of('u') > 0),
                    boolean(false),
                ]);
                row.extend([text("p"), text(r.kind.to_string())]);
                row.extend([int(i64::try_from(r.columns.len()).unwrap_or(0))]);
                row.extend([int(i64::try_from(of('c')).unwrap_or(0)), boolean(false)]);
                row.extend([boolean(of('f') > 0 || referenced), boolean(false)]);
                row.extend([boolean(false), boolean(false), boolean(true), text("d")]);
                row.extend([boolean(false), int(0), int(0), int(0)]);
                row.extend([Value::Null, Value::Null, Value::Null]);
                row
            })
            .collect();
        (spec, rows)
    }

    fn attributes(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "attrelid i, attname s, atttypid i, attstattarget i, attlen i, attnum i, \
            attndims i, attcacheoff i, atttypmod i, attbyval b, attalign s, attstorage s, \
            attcompression s, attnotnull b, atthasdef b, atthasmissing b, attidentity s, \
            attgenerated s, attisdropped b, attislocal b, attinhcount i, attcollation i, \
            attacl s, attoptions s, attfdwoptions s, attmissingval s";
        let mut rows = Vec::new();
        for r in &self.relations {
            for (at, column) in r.columns.iter().enumerate() {
                let (_, oid, typmod) = pg_type(column.ty);
                let collation = if oid == 25 { 100 } else { 0 };
                let number = i64::try_from(at + 1).unwrap_or(0);
                let mut row = vec![int(r.oid), text(&column.name), int(oid), int(-1)];
                row.extend([int(-1), int(number), int(0), int(-1), int(typmod)]);
                row.extend([boolean(false), text("d"), text("x"), text("")]);
                row.extend([boolean(column.not_null), boolean(false), boolean(false)]);
                row.extend([text(""), text(""), boolean(false), boolean(true), int(0)]);
                row.extend([int(collation), Value::Null, Value::Null, Value::Null]);
                row.push(Value::Null);
                rows.push(row);
            }
        }
        (spec, rows)
    }

    fn indexes(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "indexrelid i, indrelid i, indnatts i, indnkeyatts i, indisunique b, \
            indisprimary b, indisexclusion b, indimmediate b, indisclustered b, indisvalid b, \
            indcheckxmin b, indisready b, indislive b, indisreplident b, indkey s, \
            indcollation s, indclass s, indoption s, indexprs s, indpred s, \
            indnullsnotdistinct b";
        let rows = self
            .constraints
            .iter()
            .filter(|c| c.index != 0)
            .map(|c| {
                let n = i64::try_from(c.columns.len()).unwrap_or(0);
                let mut row = vec![int(c.index), int(c.table.0), int(n), int(n)];
                row.extend([boolean(true), boolean(c.kind == 'p'), boolean(false)]);
                row.extend([boolean(true), boolean(false), boolean(true), boolean(false)]);
                row.extend([boolean(true), boolean(true), boolean(false)]);
                row.extend([vector(&c.columns), text(""), text(""), text("")]);
                row.extend([Value::Null, Value::Null, boolean(false)]);
                row
            })
            .collect();
        (spec, rows)
    }

    fn constraint_rows(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "oid i, conname s, connamespace i, contype s, condeferrable b, \
            condeferred b, convalidated b, conrelid i, contypid i, conindid i, conparentid i, \
            confrelid i, confupdtype s, confdeltype s, confmatchtype s, conislocal b, \
            coninhcount i, connoinherit b, conkey s, confkey s, conbin s";
        let rows = self
            .constraints
            .iter()
            .map(|c| {
                let (parent, referred) = match &c.parent {
                    Some(((oid, _), columns)) => (*oid, array(columns)),
                    None => (0, Value::Null),
                };
                let foreign = |code: &str| match c.kind {
                    'f' => text(code),
                    _ => text(" "),
                };
                let mut row = vec![int(c.oid), text(&c.name), int(PUBLIC_OID)];
                row.extend([text(c.kind.to_string()), boolean(false), boolean(false)]);
                row.extend([boolean(true), int(c.table.0), int(0), int(c.index), int(0)]);
                row.extend([int(parent), foreign("a"), foreign("a"), foreign("s")]);
                row.extend([boolean(true), int(0), boolean(true), array(&c.columns)]);
                row.extend([referred, Value::Null]);
                row
            })
            .collect();
        (spec, rows)
    }

    fn pg_views(&self, table: &str) -> (&'static str, Vec<Vec<Value>>) {
        let owner = || text(super::DATABASE);
        match table {
            "pg_tables" => (
                "schemaname s, tablename s, tableowner s, tablespace s, hasindexes b, \
                 hasrules b, hastriggers b, rowsecurity b",
                self.user_relations()
                    .filter(|r| r.kind == 'r')
                    .map(|r| {
                        let indexed = self
                            .constraints
                            .iter()
                            .any(|c| c.table.0 == r.oid && c.index != 0);
                        vec![text("public"), text(&r.name), owner(), Value::Null]
                            .into_iter()
                            .chain([boolean(indexed), boolean(false), boolean(false)])
                            .chain([boolean(false)])
                            .collect()
                    })
                    .collect(),
            ),
            "pg_views" => (
                "schemaname s, viewname s, viewowner s, definition s",
                self.user_relations()
                    .filter(|r| r.kind == 'v')
                    .map(|r| vec![text("public"), text(&r.name), owner(), definition(r)])
                    .collect(),
            ),
            _ => (
                "schemaname s, matviewname s, matviewowner s, tablespace s, hasindexes b, \
                 ispopulated b, definition s",
                self.user_relations()
                    .filter(|r| r.kind == 'm')
                    .map(|r| {
                        vec![text("public"), text(&r.name), owner(), Value::Null]
                            .into_iter()
                            .chain([boolean(false), boolean(true), definition(r)])
                            .collect()
                    })
                    .collect(),
            ),
        }
    }

    fn is_tables(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "table_catalog s, table_schema s, table_name s, table_type s, \
            self_referencing_column_name s, reference_generation s, \
            user_defined_type_catalog s, user_defined_type_schema s, \
            user_defined_type_name s, is_insertable_into s, is_typed s, commit_action s";
        let rows = self
            .user_relations()
            .map(|r| {
                let (kind, insertable) = match r.kind {
                    'r' => ("BASE TABLE", "YES"),
                    _ => ("VIEW", "NO"),
                };
                let mut row = vec![text(DATABASE), text("public"), text(&r.name), text(kind)];
                row.extend([
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
                row.extend([text(insertable), text("NO"), Value::Null]);
                row
            })
            .collect();
        (spec, rows)
    }

    fn is_columns(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "table_catalog s, table_schema s, table_name s, column_name s, \
            ordinal_position i, column_default s, is_nullable s, data_type s, \
            character_maximum_length i, numeric_precision i, numeric_precision_radix i, \
            numeric_scale i, datetime_precision i, udt_catalog s, udt_schema s, udt_name s, \
            is_identity s, is_generated s, is_updatable s";
        let mut rows = Vec::new();
        for r in self.user_relations() {
            for (at, column) in r.columns.iter().enumerate() {
                let mut row = vec![text(DATABASE), text("public"), text(&r.name)];
                row.extend([text(&column.name), int(i64::try_from(at + 1).unwrap_or(0))]);
                row.extend([
                    Value::Null,
                    text(if column.not_null { "NO" } else { "YES" }),
                ]);
                row.extend(column_type(column));
                row.extend([text(DATABASE), text("pg_catalog"), text(udt_name(column))]);
                row.extend([text("NO"), text("NEVER")]);
                row.push(text(if r.kind == 'r' { "YES" } else { "NO" }));
                rows.push(row);
            }
        }
        (spec, rows)
    }

    fn is_views(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "table_catalog s, table_schema s, table_name s, view_definition s, \
            check_option s, is_updatable s, is_insertable_into s, is_trigger_updatable s, \
            is_trigger_deletable s, is_trigger_insertable_into s";
        let rows = self
            .user_relations()
            .filter(|r| r.kind != 'r')
            .map(|r| {
                let mut row = vec![text(DATABASE), text("public"), text(&r.name), definition(r)];
                row.extend([text("NONE"), text("NO"), text("NO"), text("NO"), text("NO")]);
                row.push(text("NO"));
                row
            })
            .collect();
        (spec, rows)
    }

    fn is_constraints(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "constraint_catalog s, constraint_schema s, constraint_name s, \
            table_catalog s, table_schema s, table_name s, constraint_type s, \
            is_deferrable s, initially_deferred s, enforced s, nulls_distinct s";
        let rows = self
            .constraints
            .iter()
            .map(|c| {
                let kind = match c.kind {
                    'p' => "PRIMARY KEY",
                    'u' => "UNIQUE",
                    'f' => "FOREIGN KEY",
                    _ => "CHECK",
                };
                let mut row = vec![text(DATABASE), text("public"), text(&c.name)];
                row.extend([text(DATABASE), text("public"), text(&c.table.1), text(kind)]);
                row.extend([text("NO"), text("NO"), text("YES")]);
                row.push(match c.kind {
                    'u' => text("YES"),
                    _ => Value::Null,
                });
                row
            })
            .collect();
        (spec, rows)
    }

    fn is_key_columns(&self) -> (&'static str, Vec<Vec<Value>>) {
        let spec = "constraint_catalog s, constraint_schema s, constraint_name s, \
            table_catalog s, table_schema s, table_name s, column_name s, ordinal_position i, \
            position_in_unique_constraint i";
        let mut rows = Vec::new();
        for c in self.constraints.iter().filter(|c| c.kind != 'c') {
            let Some(table) = self.relation(&c.table.1) else {
                continue;
            };
            for (at, &number) in c.columns.iter().enumerate() {
                let Some(column) = usize::try_from(number - 1)
                    .ok()
                    .and_then(|n| table.columns.get(n))
                else {
                    continue;
                };
                let position = i64::try_from(at + 1).unwrap_or(0);
                let mut row = vec![text(DATABASE), text("public"), text(&c.name)];
                row.extend([text(DATABASE), text("public"), text(&c.table.1)]);
                row.extend([text(&column.name), int(position)]);
                row.push(match c.kind {
                    'f' => int(position),
                    _ => Value::Null,
                });
                rows.push(row);
            }
        }
        (spec, rows)
    }
}

/// A view's definition (its rules) or null.
fn definition(r: &PgRelation) -> Value {
    r.definition.clone().map_or(Value::Null, text)
}

/// information_schema's data_type, character_maximum_length, numeric_precision,
/// numeric_precision_radix, numeric_scale, datetime_precision of a column.
fn column_type(column: &PgColumn) -> [Value; 6] {
    let null = || Value::Null;
    match column.ty {
        Some(Type::Decimal { precision, scale }) => [
            text("numeric"),
            null(),
            int(i64::from(precision)),
            int(10),
            int(i64::from(scale)),
            null(),
        ],
        Some(Type::Int) => [text("bigint"), null(), int(64), int(2), int(0), null()],
        Some(Type::Date) => [text("date"), null(), null(), null(), null(), int(0)],
        Some(Type::Timestamp) => [
            text("timestamp without time zone"),
            null(),
            null(),
            null(),
            null(),
            int(6),
        ],
        other => [
            text(formatted(other)),
            null(),
            null(),
            null(),
            null(),
            null(),
        ],
    }
}

/// The `udt_name` of a column (`pg_type.typname`).
fn udt_name(column: &PgColumn) -> &'static str {
    let oid = pg_type(column.ty).1;
    TYPES.iter().find(|t| t.0 == oid).map_or("text", |t| t.1)
}

fn namespaces() -> (&'static str, Vec<Vec<Value>>) {
    let rows = [
        (PG_CATALOG_OID, "pg_catalog"),
        (PUBLIC_OID, "public"),
        (INFORMATION_SCHEMA_OID, "information_schema"),
    ]
    .into_iter()
    .map(|(oid, name)| vec![int(oid), text(name), int(OWNER_OID), Value::Null])
    .collect();
    ("oid i, nspname s, nspowner i, nspacl s", rows)
}

fn schemata() -> (&'static str, Vec<Vec<Value>>) {
    let rows = ["pg_catalog", "public", "information_schema"]
        .into_iter()
        .map(|name| {
            vec![text(DATABASE), text(name), text(DATABASE)]
                .into_iter()
                .chain([Value::Null, Value::Null, Value::Null, Value::Null])
                .collect()
        })
        .collect();
    (
        "catalog_name s, schema_name s, schema_owner s, default_character_set_catalog s, \
         default_character_set_schema s, default_character_set_name s, sql_path s",
        rows,
    )
}

fn types() -> (&'static str, Vec<Vec<Value>>) {
    let spec = "oid i, typname s, typnamespace i, typowner i, typlen i, typbyval b, \
        typtype s, typcategory s, typispreferred b, typisdefined b, typdelim s, typrelid i, \
        typelem i, typarray i, typinput s, typoutput s, typreceive s, typsend s, typmodin s, \
        typmodout s, typanalyze s, typalign s, typstorage s, typnotnull b, typbasetype i, \
        typtypmod i, typndims i, typcollation i, typdefaultbin s, typdefault s, typacl s";
    let rows = TYPES
        .iter()
        .map(|&(oid, name, length, category, collation)| {
            let mut row = vec![int(oid), text(name), int(PG_CATALOG_OID), int(OWNER_OID)];
            row.extend([int(length), boolean(length > 0 && length <= 8), text("b")]);
            row.extend([text(category), boolean(false), boolean(true), text(",")]);
            row.extend([int(0), int(0), int(0), text(format!("{name}in"))]);
            row.extend([text(format!("{name}out")), text(format!("{name}recv"))]);
            row.extend([text(format!("{name}send")), text("-"), text("-"), text("-")]);
            row.extend([
                text("i"),
                text("p"),
                boolean(false),
                int(0),
                int(-1),
                int(0),
            ]);
            row.extend([int(collation), Value::Null, Value::Null, Value::Null]);
            row
        })
        .collect();
    (spec, rows)
}

fn database() -> (&'static str, Vec<Vec<Value>>) {
    let spec = "oid i, datname s, datdba i, encoding i, datlocprovider s, datistemplate b, \
        datallowconn b, datconnlimit i, datfrozenxid i, datminmxid i, dattablespace i, \
        datcollate s, datctype s, daticulocale s, datcollversion s, datacl s";
    let mut row = vec![
        int(16_384),
        text(DATABASE),
        int(OWNER_OID),
        int(6),
        text("c"),
    ];
    row.extend([
        boolean(false),
        boolean(true),
        int(-1),
        int(0),
        int(1),
        int(1663),
    ]);
    row.extend([text("C.UTF-8"), text("C.UTF-8"), Value::Null, Value::Null]);
    row.push(Value::Null);
    (spec, vec![row])
}

fn settings() -> (&'static str, Vec<Vec<Value>>) {
    let spec = "name s, setting s, unit s, category s, short_desc s, extra_desc s, \
        context s, vartype s, source s, min_val s, max_val s, enumvals s, boot_val s, \
        reset_val s, sourcefile s, sourceline i, pending_restart b";
    let rows = [
        ("DateStyle", "ISO, MDY", "string"),
        ("TimeZone", "UTC", "string"),
        ("client_encoding", "UTF8", "string"),
        ("integer_datetimes", "on", "bool"),
        ("max_identifier_length", "63", "integer"),
        ("search_path", "public", "string"),
        ("server_encoding", "UTF8", "string"),
        ("server_version", "15.0", "string"),
        ("server_version_num", "150000", "integer"),
        ("standard_conforming_strings", "on", "bool"),
        ("transaction_isolation", "serializable", "enum"),
    ]
    .into_iter()
    .map(|(name, setting, kind)| {
        let mut row = vec![text(name), text(setting), Value::Null, text("rnt")];
        row.extend([Value::Null, Value::Null, text("internal"), text(kind)]);
        row.extend([text("default"), Value::Null, Value::Null, Value::Null]);
        row.extend([text(setting), text(setting), Value::Null, Value::Null]);
        row.push(boolean(false));
        row
    })
    .collect();
    (spec, rows)
}

/// The catalog tables that hold nothing of rnt's, or rnt's one row (roles, access methods,
/// collations), with their columns.
fn empty(table: &str) -> Option<(&'static str, Vec<Vec<Value>>)> {
    Some(match table {
        "pg_am" => (
            "oid i, amname s, amhandler s, amtype s",
            vec![
                vec![
                    int(2),
                    text("heap"),
                    text("heap_tableam_handler"),
                    text("t"),
                ],
                vec![int(403), text("btree"), text("bthandler"), text("i")],
            ],
        ),
        "pg_roles" | "pg_user" => (
            "oid i, rolname s, rolsuper b, rolinherit b, rolcreaterole b, rolcreatedb b, \
             rolcanlogin b, rolreplication b, rolconnlimit i, rolpassword s, \
             rolvaliduntil s, rolbypassrls b, rolconfig s, usename s, usesysid i",
            vec![
                vec![int(OWNER_OID), text(DATABASE), boolean(true), boolean(true)]
                    .into_iter()
                    .chain([boolean(true), boolean(true), boolean(true), boolean(false)])
                    .chain([int(-1), text("********"), Value::Null, boolean(true)])
                    .chain([Value::Null, text(DATABASE), int(OWNER_OID)])
                    .collect(),
            ],
        ),
        "pg_collation" => (
            "oid i, collname s, collnamespace i, collowner i, collprovider s, \
             collisdeterministic b, collencoding i, collcollate s, collctype s",
            vec![vec![
                int(100),
                text("default"),
                int(PG_CATALOG_OID),
                int(OWNER_OID),
            ]
            .into_iter()
            .chain([text("d"), boolean(true), int(-1), Value::Null, Value::Null])
            .collect()],
        ),
        "pg_attrdef" => ("oid i, adrelid i, adnum i, adbin s", Vec::new()),
        "pg_description" => (
            "objoid i, classoid i, objsubid i, description s",
            Vec::new(),
        ),
        "pg_inherits" => (
            "inhrelid i, inhparent i, inhseqno i, inhdetachpending b",
            Vec::new(),
        ),
        "pg_proc" => (
            "oid i, proname s, pronamespace i, proowner i, prorettype i, prokind s",
            Vec::new(),
        ),
        _ => return None,
    })
}
