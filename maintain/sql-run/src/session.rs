//! Running SQL against a database: each statement a query, a define (DDL) or a commit
//! (DML); `BEGIN … COMMIT` one commit of many statements, a transaction of the database's
//! commit path ([`rnt_db::Transaction`]): each DML statement's change set is applied to
//! its working state (views maintained, reads inside see it), and COMMIT judges the
//! constraints once on the net change and lands only if the branch has not moved since
//! BEGIN.

use crate::error::Sql;
use crate::history::Reader;
use crate::parse::{parse, Stmt};
use crate::reads::StateReads;
use rnt_db::{
    Attribute, ChangeVec, CommitOutcome, Database, DbError, RelationSchema, Snapshot, Transaction,
    Value, COMMIT_ATTEMPTS_MAX,
};
use rnt_lang::syntax::ast::RelationKind;
use rnt_sql::as_of::AsOf;
use rnt_sql::catalog::Catalog;
use rnt_sql::dml::{Target, Written};
use rnt_sql::error::{SqlError, SqlErrorKind, SqlResult};
use rnt_sql::pg_catalog::PgCatalog;
use rnt_sql::{ddl, names, output};
use rnt_store::Address;
use sqlparser::ast::{CreateView, DescribeAlias, ObjectType, Spanned, Statement};

/// What one statement did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A query's answer.
    Rows {
        /// The columns: their names (the SELECT list's) and types.
        schema: RelationSchema,
        /// The rows, in order.
        rows: Vec<Vec<Value>>,
    },
    /// A commit was made.
    Committed {
        /// The commit's id.
        commit: Address,
        /// Its state.
        state: Address,
        /// What it was (`INSERT`, `CREATE TABLE`, …).
        what: String,
        /// The rows a DML statement wrote (PostgreSQL's count in `INSERT 0 n`); `None`
        /// for other statements.
        rows: Option<u64>,
    },
    /// A DML statement that made no commit of its own: inside a transaction (`pending`:
    /// its change waits for COMMIT), or outside one when it changed no tuple.
    Changed {
        /// What it was (`INSERT`, `UPDATE`, `DELETE`).
        what: String,
        /// The rows it wrote, as [`Outcome::Committed`] counts them.
        rows: u64,
        /// Whether a transaction holds its change.
        pending: bool,
    },
    /// The statement changed nothing: no commit.
    NothingToCommit,
    /// A transaction statement (`BEGIN`, a statement inside one, `ROLLBACK`).
    Note(String),
}

/// DuckDB's `SHOW TABLES`: the tables and views, by name.
const SHOW_TABLES: &str = "SELECT table_name AS name FROM information_schema.tables \
    WHERE table_schema = 'public' ORDER BY table_name";

/// DuckDB's `DESCRIBE t` (`NAME` the table's name, checked): `column_name`, `column_type`
/// (DuckDB's names), `null`, `key`, `default`, `extra`.
const DESCRIBE: &str = "SELECT c.column_name, \
    CASE c.data_type WHEN 'bigint' THEN 'BIGINT' WHEN 'text' THEN 'VARCHAR' \
    WHEN 'boolean' THEN 'BOOLEAN' WHEN 'date' THEN 'DATE' \
    WHEN 'timestamp without time zone' THEN 'TIMESTAMP' \
    WHEN 'double precision' THEN 'DOUBLE' WHEN 'real' THEN 'FLOAT' \
    WHEN 'numeric' THEN 'DECIMAL(' || CAST(c.numeric_precision AS TEXT) || ',' \
    || CAST(c.numeric_scale AS TEXT) || ')' ELSE upper(c.data_type) END AS column_type, \
    c.is_nullable AS \"null\", \
    (SELECT max('PRI') FROM information_schema.key_column_usage k \
     JOIN information_schema.table_constraints t ON t.constraint_name = k.constraint_name \
     WHERE k.table_name = c.table_name AND k.column_name = c.column_name \
     AND t.constraint_type = 'PRIMARY KEY') AS \"key\", \
    c.column_default AS \"default\", CAST(NULL AS TEXT) AS extra \
    FROM information_schema.columns c WHERE c.table_name = 'NAME' \
    ORDER BY c.ordinal_position";

/// A sequence of statements against one database.
pub struct Session<'d> {
    db: &'d Database,
    message: Option<String>,
    at: Option<String>,
    transaction: Option<Transaction<'d>>,
}

impl<'d> Session<'d> {
    /// A session on `db`.
    pub fn new(db: &'d Database) -> Session<'d> {
        Session {
            db,
            message: None,
            at: None,
            transaction: None,
        }
    }

    /// Commits take `message` (`-m`) instead of the statement's text.
    pub fn with_message(mut self, message: Option<String>) -> Session<'d> {
        self.message = message;
        self
    }

    /// Queries read the state `reference` names (`--at`); other statements are refused.
    pub fn at(mut self, reference: Option<String>) -> Session<'d> {
        self.at = reference;
        self
    }

    /// From now on, queries read the state `reference` names (`None`: the head again), as
    /// `SET rnt.at` asks over the Postgres protocol.
    pub fn set_at(&mut self, reference: Option<String>) {
        self.at = reference;
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.transaction.is_some()
    }

    /// The columns (names and types) of table `name` in the state statements write (the
    /// transaction's, else the head); `None` when no table has the name.
    pub fn table_columns(&self, name: &str) -> SqlResult<Option<Vec<(String, rnt_db::Type)>>> {
        let head = match &self.transaction {
            Some(transaction) => transaction.snapshot().clone(),
            None => self.db.head().sql()?,
        };
        let catalog = Catalog::of(&head.program);
        let Some(table) = catalog
            .get(name)
            .filter(|t| t.kind == RelationKind::Relation && !rnt_lang::is_internal(name))
        else {
            return Ok(None);
        };
        Ok(Some(
            table
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.ty.map_or(rnt_db::Type::Str, |t| t.ty)))
                .collect(),
        ))
    }

    /// Runs every statement of `text` in order; stops at the first error, returning what
    /// ran before it.
    pub fn run(&mut self, text: &str) -> Result<Vec<Outcome>, (Vec<Outcome>, SqlError)> {
        let statements = parse(text).map_err(|e| (Vec::new(), e))?;
        let mut outcomes = Vec::new();
        for parsed in &statements {
            let (line, column) = match &parsed.stmt {
                Stmt::Sql(statement) => {
                    let start = statement.span().start;
                    rnt_sql::split::in_script(parsed.start, start.line, start.column)
                }
                Stmt::Assertion { .. } => parsed.start,
            };
            let result = match &parsed.stmt {
                Stmt::Sql(statement) => self.statement(statement, &parsed.as_of),
                Stmt::Assertion { name, query } => self.assertion(name, query),
            };
            match result {
                Ok(outcome) => outcomes.push(outcome),
                Err(error) => return Err((outcomes, error.at(line, column))),
            }
        }
        Ok(outcomes)
    }

    /// The rules a statement compiles to (`rnt sql --rules`), changing nothing.
    pub fn rules(&self, text: &str) -> SqlResult<String> {
        let statements = parse(text)?;
        let head = self.read_snapshot()?;
        let catalog = Catalog::of(&head.program);
        let mut out = String::new();
        for parsed in &statements {
            let statement = match &parsed.stmt {
                Stmt::Sql(statement) => statement,
                Stmt::Assertion { name, query } => {
                    out.push_str(&ddl::create_assertion(
                        name,
                        query,
                        &catalog,
                        &head.program,
                    )?);
                    continue;
                }
            };
            let start = statement.span().start;
            let rules = match &**statement {
                Statement::Query(query) => {
                    rnt_sql::pipeline::lower_query(&catalog, query, None).map(|l| l.rules + "\n")
                }
                Statement::CreateTable(create) => ddl::create_table(create, &catalog),
                Statement::CreateView(create) => ddl::create_view(create, &catalog, &head.program),
                other => Err(SqlError::unsupported(format!(
                    "--rules of `{}` (of a query, CREATE TABLE or CREATE VIEW)",
                    rnt_sql::error::clip(other)
                ))),
            };
            let (line, column) = rnt_sql::split::in_script(parsed.start, start.line, start.column);
            out.push_str(&rules.map_err(|e| e.at(line, column))?);
        }
        Ok(out)
    }

    fn statement(&mut self, statement: &Statement, as_of: &[AsOf]) -> SqlResult<Outcome> {
        if self.at.is_some() && !matches!(statement, Statement::Query(_)) {
            return Err(SqlError::new(
                SqlErrorKind::ReadOnly,
                "--at reads a past state: only queries may run there",
            ));
        }
        if !as_of.is_empty() && !matches!(statement, Statement::Query(_)) {
            return Err(SqlError::unsupported(
                "AS OF outside a query (a view and a change read the current state)",
            ));
        }
        match statement {
            Statement::Query(query) => self.query(query, as_of),
            Statement::StartTransaction { .. } => self.begin(),
            Statement::Commit { .. } => self.commit_transaction(),
            Statement::Rollback { .. } => match self.transaction.take() {
                Some(_) => Ok(Outcome::Note("ROLLBACK".into())),
                None => Err(SqlError::new(
                    SqlErrorKind::NoActiveTransaction,
                    "ROLLBACK outside a transaction",
                )),
            },
            Statement::Insert(insert) => self.dml(statement, "INSERT", &|t| t.insert(insert)),
            Statement::Update(update) => self.dml(statement, "UPDATE", &|t| t.update(update)),
            Statement::Delete(delete) => self.dml(statement, "DELETE", &|t| t.delete(delete)),
            Statement::CreateTable(create) => {
                let head = self.head_outside_transaction("CREATE TABLE")?;
                let text = ddl::create_table(create, &Catalog::of(&head.program))?;
                self.define(&head, &text, statement, "CREATE TABLE")
            }
            Statement::CreateView(create) => self.create_view(create, statement),
            Statement::Drop {
                object_type,
                names: dropped,
                cascade,
                if_exists,
                ..
            } => self.drop(*object_type, dropped, *cascade, *if_exists, statement),
            Statement::AlterTable(alter) => self.alter_table(alter, statement),
            Statement::AlterView(alter) => self.alter_view(alter, statement),
            Statement::ShowTables { .. } => self.catalog_query(SHOW_TABLES),
            Statement::ShowVariable { variable } => {
                let name = variable
                    .iter()
                    .map(|part| part.value.replace('\'', ""))
                    .collect::<Vec<_>>()
                    .join(".");
                self.catalog_query(&format!(
                    "SELECT setting AS \"{}\" FROM pg_catalog.pg_settings WHERE lower(name) = '{}'",
                    name.replace('"', ""),
                    name.to_lowercase()
                ))
            }
            Statement::ExplainTable {
                describe_alias: DescribeAlias::Describe | DescribeAlias::Desc,
                table_name,
                ..
            } => self.describe(table_name),
            other => Err(SqlError::unsupported(format!(
                "the statement `{}`",
                rnt_sql::error::clip(other)
            ))),
        }
    }

    /// CREATE [OR REPLACE] [MATERIALIZED] VIEW: one define, one commit. A replacement
    /// takes the old view's place with what it owns (its readers must accept the new
    /// columns); the commit's diff is the view's change.
    fn create_view(&self, create: &CreateView, statement: &Statement) -> SqlResult<Outcome> {
        let head = self.head_outside_transaction("CREATE VIEW")?;
        let catalog = Catalog::of(&head.program);
        let text = ddl::create_view(create, &catalog, &head.program)?;
        let kind = if create.materialized {
            "MATERIALIZED VIEW"
        } else {
            "VIEW"
        };
        let name = names::object(&create.name)?;
        let Some(old) = catalog.get(&name).filter(|_| create.or_replace) else {
            return self.define(&head, &text, statement, &format!("CREATE {kind}"));
        };
        let same_kind = match old.kind {
            RelationKind::View => create.materialized,
            RelationKind::Ephemeral => !create.materialized,
            _ => false,
        };
        if !same_kind {
            return Err(SqlError::bind(format!(
                "`{name}` is not a {} (CREATE OR REPLACE {kind} replaces one)",
                kind.to_lowercase()
            )));
        }
        let without = rnt_sql::owned::program_without(&head.program, &name);
        if let Some(reader) = rnt_sql::owned::reader_of(&without, &name) {
            // Its readers were written against its columns: those must stay (PostgreSQL's
            // rule for CREATE OR REPLACE VIEW).
            let new = rnt_lang::syntax::parse(&text).program;
            let before = rnt_sql::owned::columns_of(&head.program.to_ast(), &name);
            if before != rnt_sql::owned::columns_of(&new, &name) {
                return Err(SqlError::bind(format!(
                    "cannot replace `{name}` with other columns: `{reader}` reads it (DROP {kind} {name} CASCADE, then CREATE)"
                )));
            }
        }
        let program = format!("{}\n{text}", rnt_lang::canonical::canonical_text(&without));
        self.define_program(&program, statement, &format!("CREATE OR REPLACE {kind}"))
    }

    /// ALTER TABLE: one `rnt alter`, one commit (`alter_table.rs`).
    fn alter_table(
        &self,
        alter: &sqlparser::ast::AlterTable,
        statement: &Statement,
    ) -> SqlResult<Outcome> {
        let head = self.head_outside_transaction("ALTER TABLE")?;
        let planned = rnt_sql::alter_table::plan(alter, &Catalog::of(&head.program))?;
        let message = self.message_for(statement);
        let altered = self
            .db
            .alter(
                &planned.relation,
                &planned.alteration,
                planned.default.as_deref(),
                &message,
            )
            .sql()?;
        Ok(match altered.outcome {
            CommitOutcome::Committed { commit, state, .. } => Outcome::Committed {
                commit,
                state,
                what: "ALTER TABLE".into(),
                rows: None,
            },
            CommitOutcome::NothingToCommit => Outcome::NothingToCommit,
        })
    }

    /// ALTER [MATERIALIZED] VIEW … RENAME TO: the view and the helpers it owns renamed in
    /// the program, and in every rule that reads them; one define, one commit.
    fn alter_view(
        &self,
        alter: &sqlparser::ast::AlterView,
        statement: &Statement,
    ) -> SqlResult<Outcome> {
        use sqlparser::ast::AlterViewOperation;
        let kind = if alter.materialized {
            "MATERIALIZED VIEW"
        } else {
            "VIEW"
        };
        let AlterViewOperation::RenameTo { new_name } = &alter.operation else {
            return Err(SqlError::unsupported(format!(
                "ALTER {kind} other than RENAME TO (CREATE OR REPLACE {kind} replaces one)"
            )));
        };
        let head = self.head_outside_transaction(&format!("ALTER {kind}"))?;
        let catalog = Catalog::of(&head.program);
        let (name, new) = (names::object(&alter.name)?, names::new_object(new_name)?);
        let Some(view) = catalog.get(&name) else {
            return match alter.if_exists {
                true => Ok(Outcome::NothingToCommit),
                false => Err(SqlError::unknown_relation(format!("unknown view `{name}`"))),
            };
        };
        let wanted = match alter.materialized {
            true => RelationKind::View,
            false => RelationKind::Ephemeral,
        };
        if view.kind != wanted {
            return Err(SqlError::bind(format!(
                "`{name}` is not a {} (ALTER {kind} renames one)",
                kind.to_lowercase()
            )));
        }
        if catalog.get(&new).is_some() {
            return Err(SqlError::new(
                SqlErrorKind::DuplicateRelation,
                format!("the relation `{new}` exists already"),
            ));
        }
        let renamed = rnt_sql::owned::renamed(&head.program, &name, &new);
        let program = rnt_lang::canonical::canonical_text(&renamed);
        self.define_program(&program, statement, &format!("ALTER {kind}"))
    }

    /// CREATE ASSERTION: a denial holding the query's rows.
    fn assertion(&mut self, name: &str, query: &sqlparser::ast::Query) -> SqlResult<Outcome> {
        if self.at.is_some() {
            return Err(SqlError::new(
                SqlErrorKind::ReadOnly,
                "--at reads a past state: only queries may run there",
            ));
        }
        let head = self.head_outside_transaction("CREATE ASSERTION")?;
        let text = ddl::create_assertion(name, query, &Catalog::of(&head.program), &head.program)?;
        let program = format!("{}\n{text}", head.state.program);
        let message = self
            .message
            .clone()
            .unwrap_or_else(|| format!("CREATE ASSERTION {name}"));
        match self.db.define(&program, "sql", &message).sql()? {
            CommitOutcome::Committed { commit, state, .. } => Ok(Outcome::Committed {
                commit,
                state,
                what: "CREATE ASSERTION".into(),
                rows: None,
            }),
            CommitOutcome::NothingToCommit => Ok(Outcome::NothingToCommit),
        }
    }

    /// The state a query reads: `--at`, the transaction's working state, or the head.
    fn read_snapshot(&self) -> SqlResult<Snapshot> {
        if let Some(reference) = &self.at {
            return self.db.resolve(reference).sql();
        }
        match &self.transaction {
            Some(transaction) => Ok(transaction.snapshot().clone()),
            None => self.db.head().sql(),
        }
    }

    fn query(&self, query: &sqlparser::ast::Query, as_of: &[AsOf]) -> SqlResult<Outcome> {
        let snapshot = self.read_snapshot()?;
        let catalog = Catalog::of(&snapshot.program);
        let db = self.db;
        let reader = Reader::new(db, &snapshot);
        let mut query = query.clone();
        let shown = rnt_sql::pg_catalog::rewrite(&mut query, &PgCatalog::of(&snapshot.program))?;
        let lowered = rnt_sql::pipeline::lower_query(&catalog, &query, Some((&reader, as_of)))?;
        let extra = reader.into_extra();
        let rules = format!("{}\n{}", lowered.rules, extra.text);
        let snapshot = crate::reads::readable(&snapshot, db);
        let answer = db.query_with(&snapshot, &extra.entries, &rules).sql()?;
        let rows = output::rows(
            answer.tuples,
            lowered.answer.bag,
            &lowered.order,
            lowered.offset,
            lowered.limit,
            lowered.visible,
        );
        let attributes = lowered.answer.columns[..lowered.visible]
            .iter()
            .zip(&answer.schema.attributes)
            .enumerate()
            .map(|(at, (column, inferred))| Attribute {
                name: shown
                    .iter()
                    .find(|(position, _)| *position == at)
                    .map_or_else(|| column.name.clone(), |(_, name)| name.clone()),
                ..inferred.clone()
            })
            .collect();
        let schema = RelationSchema::new("answer", attributes);
        Ok(Outcome::Rows { schema, rows })
    }

    /// A query of the catalog (`SHOW TABLES`, `DESCRIBE`), as if the user had written it.
    fn catalog_query(&self, text: &str) -> SqlResult<Outcome> {
        let parsed = parse(text)?;
        match parsed.first().map(|p| &p.stmt) {
            Some(Stmt::Sql(statement)) => match &**statement {
                Statement::Query(query) => self.query(query, &[]),
                _ => Err(SqlError::new(SqlErrorKind::Db(70), "a catalog query")),
            },
            _ => Err(SqlError::new(SqlErrorKind::Db(70), "a catalog query")),
        }
    }

    /// DuckDB's `DESCRIBE t`: each column's name, type, nullability and key.
    fn describe(&self, name: &sqlparser::ast::ObjectName) -> SqlResult<Outcome> {
        let name = names::object(name)?;
        let snapshot = self.read_snapshot()?;
        if Catalog::of(&snapshot.program).get(&name).is_none() || rnt_lang::is_internal(&name) {
            return Err(SqlError::unknown_relation(format!(
                "unknown table `{name}`"
            )));
        }
        self.catalog_query(&DESCRIBE.replace("NAME", &name))
    }

    /// A DML statement: its change set computed by `compute` on the state the statement
    /// begins on (the transaction's working state, or the head), never reading its own
    /// writes, then applied. Inside BEGIN … COMMIT it goes to the open transaction; alone,
    /// into a transaction of its own, committed at once — and when another writer moved
    /// the branch meanwhile, the statement runs again on the new head (its old change set,
    /// computed on another state, is never applied there).
    fn dml(
        &mut self,
        statement: &Statement,
        what: &str,
        compute: &dyn Fn(&Target<'_>) -> SqlResult<Written>,
    ) -> SqlResult<Outcome> {
        if let Some(transaction) = &mut self.transaction {
            let written = written_on(self.db, transaction.snapshot(), compute)?;
            transaction
                .apply(&mut ChangeVec::new(written.changes))
                .sql()?;
            return Ok(Outcome::Changed {
                what: what.to_string(),
                rows: written.rows,
                pending: true,
            });
        }
        let message = self.message_for(statement);
        for _ in 1..COMMIT_ATTEMPTS_MAX {
            match self.dml_once(&message, what, compute)? {
                Some(outcome) => return Ok(outcome),
                None => continue,
            }
        }
        let branch = self.db.current_branch().sql()?;
        Err(crate::error::from_db(DbError::Conflict(format!(
            "`{branch}` kept moving: other writers landed first {COMMIT_ATTEMPTS_MAX} times in a row; nothing was committed, run it again"
        ))))
    }

    /// One attempt of an auto-commit DML statement on the head as it is now; `None` when
    /// another writer moved the branch before its commit (nothing was written).
    fn dml_once(
        &self,
        message: &str,
        what: &str,
        compute: &dyn Fn(&Target<'_>) -> SqlResult<Written>,
    ) -> SqlResult<Option<Outcome>> {
        let mut transaction = self.db.begin().sql()?;
        let written = written_on(self.db, transaction.start(), compute)?;
        let rows = written.rows;
        let unchanged = Outcome::Changed {
            what: what.to_string(),
            rows,
            pending: false,
        };
        if written.changes.is_empty() {
            return Ok(Some(unchanged));
        }
        transaction
            .apply(&mut ChangeVec::new(written.changes))
            .sql()?;
        match transaction.commit(message) {
            Err(DbError::Conflict(_)) => Ok(None),
            Err(error) => Err(crate::error::from_db(error)),
            Ok(CommitOutcome::Committed { commit, state, .. }) => Ok(Some(Outcome::Committed {
                commit,
                state,
                what: what.to_string(),
                rows: Some(rows),
            })),
            Ok(CommitOutcome::NothingToCommit) => Ok(Some(unchanged)),
        }
    }

    fn head_outside_transaction(&self, what: &str) -> SqlResult<Snapshot> {
        if self.transaction.is_some() {
            return Err(SqlError::unsupported(format!(
                "{what} inside a transaction (yet)"
            )));
        }
        self.db.head().sql()
    }

    /// Defines the head's program with `additions` appended.
    fn define(
        &self,
        head: &Snapshot,
        additions: &str,
        statement: &Statement,
        what: &str,
    ) -> SqlResult<Outcome> {
        let program = format!("{}\n{additions}", head.state.program);
        self.define_program(&program, statement, what)
    }

    fn define_program(
        &self,
        program: &str,
        statement: &Statement,
        what: &str,
    ) -> SqlResult<Outcome> {
        let message = self.message_for(statement);
        // A program the language refuses is the compiler's limit (`from_db` says so).
        match self.db.define(program, "sql", &message).sql()? {
            CommitOutcome::Committed { commit, state, .. } => Ok(Outcome::Committed {
                commit,
                state,
                what: what.to_string(),
                rows: None,
            }),
            CommitOutcome::NothingToCommit => Ok(Outcome::NothingToCommit),
        }
    }

    /// DROP TABLE / VIEW: the relations, their helpers and (for a table) its constraints'
    /// denials leave the program; refused while another relation reads one, unless
    /// CASCADE, which drops those too.
    fn drop(
        &self,
        object_type: ObjectType,
        dropped: &[sqlparser::ast::ObjectName],
        cascade: bool,
        if_exists: bool,
        statement: &Statement,
    ) -> SqlResult<Outcome> {
        let head = self.head_outside_transaction("DROP")?;
        let catalog = Catalog::of(&head.program);
        let mut gone: Vec<String> = Vec::new();
        for name in dropped {
            let name = names::object(name)?;
            match (catalog.get(&name), object_type) {
                (None, _) if if_exists => continue,
                (None, _) => {
                    return Err(SqlError::unknown_relation(format!(
                        "unknown relation `{name}`"
                    )))
                }
                (Some(t), ObjectType::Table) if t.kind != RelationKind::Relation => {
                    return Err(SqlError::bind(format!(
                        "`{name}` is a view: DROP VIEW drops it"
                    )))
                }
                (Some(t), ObjectType::View) if t.kind == RelationKind::Relation => {
                    return Err(SqlError::bind(format!(
                        "`{name}` is a table: DROP TABLE drops it"
                    )))
                }
                (Some(_), ObjectType::Table | ObjectType::View | ObjectType::MaterializedView) => {}
                _ => return Err(SqlError::unsupported(format!("DROP {object_type}"))),
            }
            gone.push(name);
        }
        if gone.is_empty() {
            return Ok(Outcome::NothingToCommit);
        }
        let mut ast = head.program.to_ast();
        let owned = |relation: &str, dropped: &str| {
            rnt_sql::owned::owned_by(relation, dropped, &head.program)
        };
        loop {
            let mut grew = false;
            let removing: Vec<String> = ast
                .declarations
                .iter()
                .map(|d| d.name.name.clone())
                .filter(|n| gone.iter().any(|g| owned(n, g)))
                .collect();
            for rule in &ast.rules {
                let head_name = &rule.head.relation.name;
                if removing.contains(head_name) {
                    continue;
                }
                let reads: Vec<&str> = rule
                    .body
                    .iter()
                    .filter_map(|l| match l {
                        rnt_lang::syntax::ast::Literal::Positive(a)
                        | rnt_lang::syntax::ast::Literal::Negative { atom: a, .. }
                        | rnt_lang::syntax::ast::Literal::Optional { atom: a, .. } => {
                            Some(a.relation.name.as_str())
                        }
                        _ => None,
                    })
                    .collect();
                if let Some(read) = reads.iter().find(|r| removing.iter().any(|x| x == *r)) {
                    if !cascade {
                        return Err(SqlError::bind(format!(
                            "cannot drop `{read}`: `{head_name}` reads it (DROP … CASCADE drops it too)"
                        )));
                    }
                    if !gone.contains(head_name) {
                        gone.push(head_name.clone());
                        grew = true;
                    }
                }
            }
            if !grew {
                ast.declarations
                    .retain(|d| !removing.contains(&d.name.name));
                ast.rules
                    .retain(|r| !removing.contains(&r.head.relation.name));
                break;
            }
        }
        let program = rnt_lang::canonical::canonical_text(&ast);
        let what = format!("DROP {object_type}");
        self.define_program(&program, statement, &what)
    }

    /// BEGIN: a transaction of the database's commit path on the head as it is now.
    fn begin(&mut self) -> SqlResult<Outcome> {
        if self.transaction.is_some() {
            return Err(SqlError::new(
                SqlErrorKind::ActiveTransaction,
                "a transaction is open already (COMMIT or ROLLBACK it first)",
            ));
        }
        self.transaction = Some(self.db.begin().sql()?);
        Ok(Outcome::Note("BEGIN".into()))
    }

    /// COMMIT: the transaction's net change, its constraints judged once; a conflict when
    /// another writer moved the branch since BEGIN (nothing is committed).
    fn commit_transaction(&mut self) -> SqlResult<Outcome> {
        let Some(transaction) = self.transaction.take() else {
            return Err(SqlError::new(
                SqlErrorKind::NoActiveTransaction,
                "COMMIT outside a transaction",
            ));
        };
        let message = self.message.clone().unwrap_or_else(|| "transaction".into());
        match transaction.commit(&message).sql()? {
            CommitOutcome::Committed { commit, state, .. } => Ok(Outcome::Committed {
                commit,
                state,
                what: "COMMIT".into(),
                rows: None,
            }),
            CommitOutcome::NothingToCommit => Ok(Outcome::NothingToCommit),
        }
    }

    /// A commit's message: `-m`, else the statement's text (its first ~60 characters).
    fn message_for(&self, statement: &Statement) -> String {
        self.message
            .clone()
            .unwrap_or_else(|| rnt_sql::error::clip(statement))
    }
}

/// The change set `compute` makes of a DML statement on `snapshot`.
fn written_on(
    db: &Database,
    snapshot: &Snapshot,
    compute: &dyn Fn(&Target<'_>) -> SqlResult<Written>,
) -> SqlResult<Written> {
    let catalog = Catalog::of(&snapshot.program);
    compute(&Target {
        reads: &StateReads { db, snapshot },
        catalog: &catalog,
    })
}
