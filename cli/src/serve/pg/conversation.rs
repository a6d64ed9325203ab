//! One connection's conversation after startup: simple queries (`Q`, statements split at
//! `;`, each answered in turn) and the extended protocol (`P`arse, `B`ind, `D`escribe,
//! `E`xecute, `S`ync, `C`lose, `H` flush). Statements run in one `rnt_sql_run::Session` per
//! connection, so `BEGIN … COMMIT` spans messages; a statement that may write runs as the
//! server's one writer (`gate`). After an error in the extended protocol, messages are
//! skipped until `Sync`, as Postgres does.

use super::copy;
use super::values;
use super::wire::{self, Message, Reader};
use super::{begun, Tracked};
use crate::serve::access::Access;
use crate::serve::connections::{Activity, Phase};
use crate::serve::Server;
use rnt_sql_run::{ConstraintKind, SqlErrorKind};
use rnt_sql_run::{Outcome, Session, SqlError};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{BufWriter, Read, Write};
use std::net::TcpStream;

/// A parsed statement: its text and its parameters' type OIDs.
struct Prepared {
    sql: String,
    oids: Vec<i32>,
}

/// A bound statement, and its outcome once run (a Describe of a query runs it).
struct Portal {
    sql: String,
    ran: Option<Vec<Outcome>>,
}

/// An error as Postgres reports it: its SQLSTATE and message.
pub struct Failure {
    code: &'static str,
    message: String,
}

impl Failure {
    fn new(code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// An rnt SQL error with its SQLSTATE.
    fn of(error: &SqlError, text: &str) -> Failure {
        Failure {
            code: sqlstate(&error.kind),
            message: error.render(text),
        }
    }
}

/// The SQLSTATE of an error kind, from PostgreSQL's table (Appendix A, "PostgreSQL Error
/// Codes"); a kind PostgreSQL has no code for takes its class's general one.
pub fn sqlstate(kind: &SqlErrorKind) -> &'static str {
    match kind {
        SqlErrorKind::Parse => "42601",
        SqlErrorKind::Bind => "42000",
        SqlErrorKind::UnknownRelation => "42P01",
        SqlErrorKind::UnknownColumn => "42703",
        SqlErrorKind::DuplicateRelation => "42P07",
        SqlErrorKind::Unsupported => "0A000",
        SqlErrorKind::Constraint(kind) => match kind {
            ConstraintKind::PrimaryKey | ConstraintKind::Unique => "23505",
            ConstraintKind::NotNull => "23502",
            ConstraintKind::ForeignKey => "23503",
            ConstraintKind::Check => "23514",
            ConstraintKind::Denial => "23000",
        },
        SqlErrorKind::DivisionByZero => "22012",
        SqlErrorKind::Overflow => "22003",
        SqlErrorKind::Conflict => "40001",
        SqlErrorKind::ActiveTransaction => "25001",
        SqlErrorKind::NoActiveTransaction => "25P01",
        SqlErrorKind::ReadOnly => "25006",
        // Exit codes: 2 a refused commit, 3 damaged data, 70 a bug in rnt, else the
        // database refused the input.
        SqlErrorKind::Db(2) => "23000",
        SqlErrorKind::Db(3) => "XX001",
        SqlErrorKind::Db(70) => "XX000",
        SqlErrorKind::Db(_) => "22000",
    }
}

/// An `ErrorResponse`.
pub fn error_message(code: &str, message: &str) -> Message {
    Message::new(b'E')
        .byte(b'S')
        .string("ERROR")
        .byte(b'V')
        .string("ERROR")
        .byte(b'C')
        .string(code)
        .byte(b'M')
        .string(message)
        .byte(0)
}

/// The state of one connection.
pub struct Conversation<'s> {
    server: &'s Server,
    access: Access,
    prepared: BTreeMap<String, Prepared>,
    portals: BTreeMap<String, Portal>,
    /// A statement failed inside the open transaction: until it ends, every statement but
    /// COMMIT and ROLLBACK (both roll it back) is refused with 25P02, as in PostgreSQL.
    aborted: Cell<bool>,
}

impl<'s> Conversation<'s> {
    pub fn new(server: &'s Server, access: Access) -> Conversation<'s> {
        Conversation {
            server,
            access,
            prepared: BTreeMap::new(),
            portals: BTreeMap::new(),
            aborted: Cell::new(false),
        }
    }

    /// Answers messages until the client says goodbye or the connection breaks.
    pub fn run(mut self, stream: TcpStream, activity: &Activity) -> std::io::Result<()> {
        let db = self.server.db.clone();
        let mut session = Session::new(&db);
        let mut input = Tracked::new(stream.try_clone()?, activity);
        let mut out = BufWriter::new(Tracked::new(stream, activity));
        ready(&mut out, self.status(&session))?;
        let mut failed = false;
        loop {
            activity.enter(Phase::Idle);
            let (kind, body) =
                wire::read_message(&mut input, wire::MESSAGE_BYTES_MAX, begun(activity))?;
            activity.enter(Phase::Busy);
            let answered = match kind {
                b'X' => return Ok(()),
                b'S' => {
                    failed = false;
                    self.portals.remove("");
                    ready(&mut out, self.status(&session))?;
                    continue;
                }
                b'H' => {
                    out.flush()?;
                    continue;
                }
                _ if failed => continue,
                b'Q' => {
                    let text = Reader::new(&body).string()?;
                    self.simple_query(&mut input, &mut out, &mut session, &text)?;
                    ready(&mut out, self.status(&session))?;
                    continue;
                }
                b'P' => self.parse(&body).map(|()| vec![Message::new(b'1')]),
                b'B' => self.bind(&body).map(|()| vec![Message::new(b'2')]),
                b'D' => self.describe(&mut session, &body),
                b'E' => self.execute(&mut session, &body),
                b'C' => self.close(&body).map(|()| vec![Message::new(b'3')]),
                other => Err(Failure::new(
                    "08P01",
                    format!("unexpected message type `{}`", char::from(other)),
                )),
            };
            match answered {
                Ok(messages) => {
                    for message in messages {
                        message.write_to(&mut out)?;
                    }
                }
                Err(failure) => {
                    error_message(failure.code, &failure.message).write_to(&mut out)?;
                    failed = true;
                }
            }
        }
    }

    /// A simple query: each statement answered in turn; the first error ends it.
    fn simple_query(
        &self,
        input: &mut impl Read,
        out: &mut impl Write,
        session: &mut Session,
        text: &str,
    ) -> std::io::Result<()> {
        let pieces = rnt_sql_run::split::statements(text);
        if pieces.is_empty() {
            return Message::new(b'I').write_to(out);
        }
        for piece in pieces {
            if first_word(&piece.text) == "COPY" {
                if let Err(failure) = self.copy(input, out, session, &piece.text)? {
                    return error_message(failure.code, &failure.message).write_to(out);
                }
                continue;
            }
            match self.run_statement(session, &piece.text) {
                Ok(outcomes) => {
                    for outcome in &outcomes {
                        for message in answer(outcome, &piece.text, true) {
                            message.write_to(out)?;
                        }
                    }
                }
                Err(failure) => {
                    return error_message(failure.code, &failure.message).write_to(out);
                }
            }
        }
        Ok(())
    }

    /// COPY … TO STDOUT (its rows as CopyData) or COPY … FROM STDIN (the client's CopyData,
    /// then one INSERT of its rows); the tag is `COPY n`.
    fn copy(
        &self,
        input: &mut impl Read,
        out: &mut impl Write,
        session: &mut Session,
        text: &str,
    ) -> std::io::Result<Result<(), Failure>> {
        let failure = |error: SqlError| Failure::new(sqlstate(&error.kind), error.message);
        let plan = match rnt_sql_run::copy::plan(text) {
            Ok(Some(plan)) => plan,
            Ok(None) => return Ok(Err(Failure::new("42601", "not a COPY statement"))),
            Err(error) => return Ok(Err(failure(error))),
        };
        if plan.to {
            let (names, rows) = match self.run_statement(session, &plan.query) {
                Ok(outcomes) => match outcomes.into_iter().next() {
                    Some(Outcome::Rows { schema, rows }) => (
                        schema
                            .attribute_names()
                            .map(str::to_string)
                            .collect::<Vec<_>>(),
                        rows,
                    ),
                    _ => return Ok(Err(Failure::new("XX000", "COPY's query gave no rows"))),
                },
                Err(f) => return Ok(Err(f)),
            };
            copy::response(b'H', names.len()).write_to(out)?;
            for line in copy::lines(&plan, &names, &rows) {
                line.write_to(out)?;
            }
            Message::new(b'c').write_to(out)?;
            return Message::new(b'C')
                .string(&format!("COPY {}", rows.len()))
                .write_to(out)
                .map(Ok);
        }
        self.copy_in(input, out, session, &plan)
    }

    /// COPY … FROM STDIN: asks for the data, reads it, inserts its rows.
    fn copy_in(
        &self,
        input: &mut impl Read,
        out: &mut impl Write,
        session: &mut Session,
        plan: &rnt_sql_run::copy::CopyPlan,
    ) -> std::io::Result<Result<(), Failure>> {
        let failure = |error: SqlError| Failure::new(sqlstate(&error.kind), error.message);
        let table = plan.table.as_deref().unwrap_or_default();
        let width = match session.table_columns(table) {
            Ok(Some(columns)) if plan.columns.is_empty() => columns.len(),
            Ok(Some(_)) => plan.columns.len(),
            Ok(None) => {
                let unknown = SqlError::unknown_relation(format!("unknown table `{table}`"));
                return Ok(Err(failure(unknown)));
            }
            Err(error) => return Ok(Err(failure(error))),
        };
        copy::response(b'G', width).write_to(out)?;
        out.flush()?;
        let data = match copy::receive(input)? {
            Ok(data) => data,
            Err(why) => return Ok(Err(Failure::new("57014", why))),
        };
        let rows = match copy::rows(plan, &data) {
            Ok(rows) => rows,
            Err(why) => return Ok(Err(Failure::new("22P04", why))),
        };
        let mut written = 0;
        if !rows.is_empty() {
            let sql = match rnt_sql_run::copy::insert_sql(session, plan, &rows) {
                Ok(sql) => sql,
                Err(error) => return Ok(Err(failure(error))),
            };
            match self.run_statement(session, &sql) {
                Ok(outcomes) => {
                    written = match outcomes.first() {
                        Some(Outcome::Committed { rows: Some(n), .. })
                        | Some(Outcome::Changed { rows: n, .. }) => *n,
                        _ => 0,
                    };
                }
                Err(f) => return Ok(Err(Failure::new(f.code, clip_sql(&f.message)))),
            }
        }
        Message::new(b'C')
            .string(&format!("COPY {written}"))
            .write_to(out)
            .map(Ok)
    }

    /// The transaction status ReadyForQuery reports: idle, in a transaction, or in a
    /// failed one.
    fn status(&self, session: &Session) -> u8 {
        match (session.in_transaction(), self.aborted.get()) {
            (false, _) => b'I',
            (true, false) => b'T',
            (true, true) => b'E',
        }
    }

    /// Runs one statement, refusing it in a failed transaction; an error inside a
    /// transaction fails it.
    fn run_statement(&self, session: &mut Session, text: &str) -> Result<Vec<Outcome>, Failure> {
        if self.aborted.get() && session.in_transaction() {
            if !matches!(
                first_word(text).as_str(),
                "ROLLBACK" | "COMMIT" | "END" | "ABORT"
            ) {
                return Err(Failure::new(
                    "25P02",
                    "current transaction is aborted, commands ignored until end of transaction block",
                ));
            }
            self.aborted.set(false);
            session
                .run("ROLLBACK")
                .map_err(|(_, error)| Failure::of(&error, text))?;
            return Ok(vec![Outcome::Note("ROLLBACK".into())]);
        }
        self.aborted.set(false);
        let result = self.run_one(session, text);
        if result.is_err() && session.in_transaction() {
            self.aborted.set(true);
        }
        result
    }

    /// Runs one statement: `SET rnt.at` here, a read as it is, anything else as the
    /// server's one writer (refused for a read-only token or server).
    fn run_one(&self, session: &mut Session, text: &str) -> Result<Vec<Outcome>, Failure> {
        if let Some(outcome) = set_statement(session, text)? {
            return Ok(vec![outcome]);
        }
        let run = |session: &mut Session| {
            session
                .run(text)
                .map_err(|(_, error)| Failure::of(&error, text))
        };
        if is_read(text) {
            return run(session);
        }
        if self.server.read_only {
            return Err(Failure::new(
                "25006",
                "this server may only read (rnt serve --read-only)",
            ));
        }
        if self.access == Access::Read {
            return Err(Failure::new(
                "42501",
                "this connection may only read (a read token)",
            ));
        }
        self.server
            .gate
            .write(&self.server.db, || run(session))
            .map_err(|e| Failure::new("40001", crate::output::one_line(&e.to_string())))?
    }

    fn parse(&mut self, body: &[u8]) -> Result<(), Failure> {
        let mut reader = Reader::new(body);
        let bad = |e: std::io::Error| Failure::new("08P01", e.to_string());
        let name = reader.string().map_err(bad)?;
        let sql = reader.string().map_err(bad)?;
        let count = reader.count().map_err(bad)?;
        let oids = (0..count)
            .map(|_| reader.i32())
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(bad)?;
        self.prepared.insert(name, Prepared { sql, oids });
        Ok(())
    }

    fn bind(&mut self, body: &[u8]) -> Result<(), Failure> {
        let mut reader = Reader::new(body);
        let bad = |e: std::io::Error| Failure::new("08P01", e.to_string());
        let portal = reader.string().map_err(bad)?;
        let statement = reader.string().map_err(bad)?;
        let formats = (0..reader.count().map_err(bad)?)
            .map(|_| reader.i16())
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(bad)?;
        let prepared = self
            .prepared
            .get(&statement)
            .ok_or_else(|| Failure::new("26000", format!("no prepared statement `{statement}`")))?;
        let count = reader.count().map_err(bad)?;
        let mut parameters = Vec::with_capacity(count);
        for index in 0..count {
            let value = reader.value().map_err(bad)?;
            // No codes: all text; one: for every parameter; else one each.
            let format = match formats.len() {
                0 => 0,
                1 => formats[0],
                _ => formats.get(index).copied().unwrap_or(0),
            };
            let oid = prepared.oids.get(index).copied().unwrap_or(0);
            let text = value
                .map(|bytes| values::parameter_text(bytes, format, oid))
                .transpose()
                .map_err(|message| Failure::new("22P03", message))?;
            parameters.push(text);
        }
        let results = (0..reader.count().map_err(bad)?)
            .map(|_| reader.i16())
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(bad)?;
        if results.iter().any(|&f| f != 0) {
            return Err(Failure::new(
                "0A000",
                "binary results are not supported (ask for text)",
            ));
        }
        let sql = values::bind(&prepared.sql, &parameters, &prepared.oids)
            .map_err(|message| Failure::new("22023", message))?;
        self.portals.insert(portal, Portal { sql, ran: None });
        Ok(())
    }

    fn describe(&mut self, session: &mut Session, body: &[u8]) -> Result<Vec<Message>, Failure> {
        let mut reader = Reader::new(body);
        let bad = |e: std::io::Error| Failure::new("08P01", e.to_string());
        let what = reader.take(1).map_err(bad)?[0];
        let name = reader.string().map_err(bad)?;
        if what == b'S' {
            let prepared = self
                .prepared
                .get(&name)
                .ok_or_else(|| Failure::new("26000", format!("no prepared statement `{name}`")))?;
            let count = parameter_count(&prepared.sql);
            let mut description = Message::new(b't').i16(i16::try_from(count).unwrap_or(i16::MAX));
            for index in 0..count {
                description = description.i32(prepared.oids.get(index).copied().unwrap_or(25));
            }
            // Rows are described when a portal is (a query runs then).
            return Ok(vec![description, Message::new(b'n')]);
        }
        let sql = self
            .portals
            .get(&name)
            .map(|p| p.sql.clone())
            .ok_or_else(|| Failure::new("34000", format!("no portal `{name}`")))?;
        if !is_read(&sql) {
            return Ok(vec![Message::new(b'n')]);
        }
        let outcomes = self.run_statement(session, &sql)?;
        let description = match outcomes.first() {
            Some(Outcome::Rows { schema, .. }) => row_description(schema),
            _ => Message::new(b'n'),
        };
        if let Some(portal) = self.portals.get_mut(&name) {
            portal.ran = Some(outcomes);
        }
        Ok(vec![description])
    }

    fn execute(&mut self, session: &mut Session, body: &[u8]) -> Result<Vec<Message>, Failure> {
        let mut reader = Reader::new(body);
        let name = reader
            .string()
            .map_err(|e| Failure::new("08P01", e.to_string()))?;
        let portal = self
            .portals
            .get_mut(&name)
            .ok_or_else(|| Failure::new("34000", format!("no portal `{name}`")))?;
        let sql = portal.sql.clone();
        let outcomes = match portal.ran.take() {
            Some(outcomes) => outcomes,
            None => self.run_statement(session, &sql)?,
        };
        Ok(outcomes
            .iter()
            .flat_map(|outcome| answer(outcome, &sql, false))
            .collect())
    }

    fn close(&mut self, body: &[u8]) -> Result<(), Failure> {
        let mut reader = Reader::new(body);
        let bad = |e: std::io::Error| Failure::new("08P01", e.to_string());
        let what = reader.take(1).map_err(bad)?[0];
        let name = reader.string().map_err(bad)?;
        match what {
            b'S' => self.prepared.remove(&name).map(|_| ()),
            _ => self.portals.remove(&name).map(|_| ()),
        };
        Ok(())
    }
}

/// An error's message without the statement it points into (COPY's INSERT is the
/// server's, not the user's).
fn clip_sql(message: &str) -> String {
    message.lines().next().unwrap_or_default().to_string()
}

/// `ReadyForQuery`, with the transaction status, and a flush.
fn ready(out: &mut impl Write, status: u8) -> std::io::Result<()> {
    Message::new(b'Z').byte(status).write_to(out)?;
    out.flush()
}

/// The messages answering one outcome (`describe`: a query's RowDescription first, as the
/// simple protocol sends it).
fn answer(outcome: &Outcome, text: &str, describe: bool) -> Vec<Message> {
    let mut messages = Vec::new();
    match outcome {
        Outcome::Rows { schema, rows } => {
            if describe {
                messages.push(row_description(schema));
            }
            for row in rows {
                let mut data = Message::new(b'D').i16(i16::try_from(row.len()).unwrap_or(i16::MAX));
                for value in row {
                    data = data.value(values::text(value).as_deref().map(str::as_bytes));
                }
                messages.push(data);
            }
            messages.push(Message::new(b'C').string(&format!("SELECT {}", rows.len())));
        }
        Outcome::Committed {
            what,
            rows: Some(rows),
            ..
        }
        | Outcome::Changed { what, rows, .. } => {
            messages.push(Message::new(b'C').string(&counted_tag(what, *rows)));
        }
        Outcome::Committed { what, .. } | Outcome::Note(what) => {
            messages.push(Message::new(b'C').string(what));
        }
        Outcome::NothingToCommit => messages.push(Message::new(b'C').string(&command_tag(text))),
    }
    messages
}

/// A RowDescription of a query's columns (text format).
fn row_description(schema: &rnt_db::RelationSchema) -> Message {
    let types = schema.types();
    let names: Vec<&str> = schema.attribute_names().collect();
    let mut message = Message::new(b'T').i16(i16::try_from(names.len()).unwrap_or(i16::MAX));
    for (name, column) in names.iter().zip(&types) {
        message = message
            .string(name)
            .i32(0)
            .i16(0)
            .i32(values::type_oid(column.ty))
            .i16(-1)
            .i32(-1)
            .i16(0);
    }
    message
}

/// The command tag of a DML statement with the rows it wrote: `INSERT 0 n` (the 0 is the
/// OID PostgreSQL no longer gives), `UPDATE n`, `DELETE n`.
fn counted_tag(what: &str, rows: u64) -> String {
    match what {
        "INSERT" => format!("INSERT 0 {rows}"),
        other => format!("{other} {rows}"),
    }
}

/// The command tag of a statement that made no commit: its first words.
fn command_tag(text: &str) -> String {
    let words: Vec<String> = text
        .split_whitespace()
        .take(2)
        .map(str::to_ascii_uppercase)
        .collect();
    match words.first().map(String::as_str) {
        Some("CREATE" | "DROP" | "ALTER") => words.join(" "),
        Some("START") => "BEGIN".to_string(),
        Some(word) => word.to_string(),
        None => String::new(),
    }
}

/// A statement's first word, in capitals.
fn first_word(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_ascii_uppercase()
}

/// Whether a statement only reads (runs outside the writers' gate).
fn is_read(text: &str) -> bool {
    let first = first_word(text);
    matches!(
        first.as_str(),
        "SELECT"
            | "WITH"
            | "VALUES"
            | "TABLE"
            | "BEGIN"
            | "START"
            | "ROLLBACK"
            | "SHOW"
            | "DESCRIBE"
            | "DESC"
    )
}

/// The highest `$n` in a statement.
fn parameter_count(sql: &str) -> usize {
    let mut highest = 0;
    let bytes = sql.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'$' {
            let digits: String = bytes[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .map(|&c| char::from(c))
                .collect();
            highest = highest.max(digits.parse().unwrap_or(0));
        }
    }
    highest
}

/// `SET rnt.at = 'REF'` (or `TO`), `RESET rnt.at`, `SET rnt.at TO DEFAULT`; other `SET`s
/// are accepted and ignored (drivers set their encoding and date style).
fn set_statement(session: &mut Session, text: &str) -> Result<Option<Outcome>, Failure> {
    let trimmed = text.trim();
    let upper = trimmed.to_ascii_uppercase();
    if upper.starts_with("RESET RNT.AT") {
        session.set_at(None);
        return Ok(Some(Outcome::Note("RESET".into())));
    }
    if !upper.starts_with("SET ") {
        return Ok(None);
    }
    let rest = trimmed[4..].trim_start();
    let Some(value) = rest
        .strip_prefix("rnt.at")
        .or_else(|| rest.strip_prefix("RNT.AT"))
    else {
        return Ok(Some(Outcome::Note("SET".into())));
    };
    let value = value.trim_start();
    let value = value
        .strip_prefix('=')
        .or_else(|| {
            value
                .get(..2)
                .filter(|t| t.eq_ignore_ascii_case("to"))
                .map(|_| &value[2..])
        })
        .ok_or_else(|| Failure::new("42601", "write SET rnt.at = 'REF'"))?
        .trim();
    if value.eq_ignore_ascii_case("default") {
        session.set_at(None);
    } else {
        let reference = value
            .strip_prefix('\'')
            .and_then(|v| v.strip_suffix('\''))
            .ok_or_else(|| {
                Failure::new("42601", "write SET rnt.at = 'REF' (a quoted reference)")
            })?;
        session.set_at(Some(reference.replace("''", "'")));
    }
    Ok(Some(Outcome::Note("SET".into())))
}
