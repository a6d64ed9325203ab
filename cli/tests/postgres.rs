//! The Postgres protocol of `rnt serve --pg`, with real clients: Debian's `psql` (the simple
//! protocol) and `psycopg` from PyPI (the extended protocol: parameters, prepared
//! statements). DDL and DML are commits, `BEGIN … COMMIT` is one, a refused statement
//! carries PostgreSQL's SQLSTATE for its error class and leaves HEAD where it was, `AS OF`
//! and `SET rnt.at` read the past, tokens are passwords, and malformed messages never stop
//! the server. Command tags count rows (`INSERT 0 n`, psycopg's `rowcount`), parameters
//! come in binary, psql's `\dt \dv \dm \d \l \d TABLE` read a catalog that lists no
//! helper relation, and `\copy` goes both ways (`docs/postgres.md`).
//!
//! `.ci/run` installs both clients; without them the tests fail saying so, unless
//! `RNT_SKIP_PG_CLIENT_TESTS=1` skips them (loudly).

mod common;

use common::{Rng, Shop};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output};
use std::time::Duration;

/// A server with the Postgres protocol, stopped at the end of the test.
struct Served {
    shop: Shop,
    server: Child,
    port: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

fn skip(client: &str) -> bool {
    if std::env::var_os("RNT_SKIP_PG_CLIENT_TESTS").is_some() {
        eprintln!("SKIPPED: the {client} test (RNT_SKIP_PG_CLIENT_TESTS is set)");
        return true;
    }
    false
}

/// A store served with `--pg 127.0.0.1:0` (and `extra`), files written first.
fn served(files: &[(&str, &str)], extra: &[&str]) -> Served {
    let shop = Shop::bare();
    for (name, text) in files {
        shop.write(name, text);
    }
    shop.ok(&["init"]);
    let mut args = vec!["serve", "--http", "127.0.0.1:0", "--pg", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut server = shop
        .command(&args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn rnt serve");
    let mut reader = std::io::BufReader::new(server.stdout.take().unwrap());
    let mut port = String::new();
    for _ in 0..2 {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        if let Some(address) = line.trim().strip_prefix("postgres at ") {
            port = address.rsplit_once(':').unwrap().1.to_string();
        }
    }
    assert!(!port.is_empty(), "the server named no Postgres address");
    Served { shop, server, port }
}

/// Runs `psql` with `commands` (one `-c` each), stopping at the first error.
fn psql(served: &Served, password: Option<&str>, commands: &[&str]) -> Output {
    psql_with(served, password, &["-q"], commands)
}

/// Runs `psql` with `options` before the usual ones and `commands` (one `-c` each).
fn psql_with(
    served: &Served,
    password: Option<&str>,
    options: &[&str],
    commands: &[&str],
) -> Output {
    let mut command = Command::new("psql");
    command
        .current_dir(served.shop.dir())
        .args(options)
        .args([
            "-X",
            "-A",
            "-t",
            "-h",
            "127.0.0.1",
            "-p",
            &served.port,
            "-U",
            "u",
            "-d",
            "d",
        ])
        .args(["-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose"])
        .env_remove("PGPASSWORD");
    if let Some(password) = password {
        command.env("PGPASSWORD", password);
    }
    for c in commands {
        command.args(["-c", c]);
    }
    command
        .output()
        .expect("psql runs (install Debian's postgresql-client)")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn psql_runs_ddl_and_dml_as_commits_and_a_duplicate_key_carries_23505() {
    if skip("psql") {
        return;
    }
    let s = served(&[], &[]);
    let ok = psql(
        &s,
        None,
        &[
            "CREATE TABLE orders (id INT PRIMARY KEY, amount DECIMAL(10, 2) NOT NULL)",
            "CREATE MATERIALIZED VIEW big AS SELECT id FROM orders WHERE amount > 10",
            "INSERT INTO orders VALUES (1, 30.50), (2, 5)",
        ],
    );
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert_eq!(s.shop.log().len(), 3, "one commit per statement");
    let head = s.shop.head();
    let refused = psql(&s, None, &["INSERT INTO orders VALUES (1, 1)"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("23505"),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(s.shop.head(), head, "a refused statement commits nothing");
    let syntax = psql(&s, None, &["SELEC 1"]);
    assert!(
        text(&syntax.stderr).contains("42601"),
        "{}",
        text(&syntax.stderr)
    );
    // BEGIN … COMMIT is one commit.
    let transaction = psql(
        &s,
        None,
        &[
            "BEGIN",
            "INSERT INTO orders VALUES (3, 12)",
            "INSERT INTO orders VALUES (4, 1)",
            "COMMIT",
        ],
    );
    assert!(
        transaction.status.success(),
        "{}",
        text(&transaction.stderr)
    );
    assert_eq!(s.shop.log().len(), 4);
    let rows = psql(&s, None, &["SELECT id FROM big ORDER BY id"]);
    assert_eq!(text(&rows.stdout), "1\n3\n");
    // The past: AS OF, and SET rnt.at for every query after it.
    let first = s.shop.log()[1]["commit"].as_str().unwrap().to_string();
    let past = psql(
        &s,
        None,
        &[&format!("SELECT count(*) FROM orders AS OF '{first}'")],
    );
    assert_eq!(text(&past.stdout), "2\n", "{}", text(&past.stderr));
    let set = psql(
        &s,
        None,
        &[
            &format!("SET rnt.at = '{first}'"),
            "SELECT count(*) FROM orders",
        ],
    );
    assert_eq!(text(&set.stdout), "2\n", "{}", text(&set.stderr));
    s.shop.ok(&["verify"]);
}

#[test]
fn a_token_is_the_password() {
    if skip("psql") {
        return;
    }
    let s = served(
        &[(
            "tokens",
            "read rrrrrrrrrrrrrrrrrrrr\nwrite wwwwwwwwwwwwwwwwwwww\n",
        )],
        &["--token-file", "tokens"],
    );
    let none = psql(&s, None, &["SELECT 1"]);
    assert!(!none.status.success());
    let wrong = psql(&s, Some("wrong-password-xxxxxx"), &["SELECT 1"]);
    // psql shows a failed connection's message (the SQLSTATE is 28P01).
    assert!(
        text(&wrong.stderr).contains("password authentication failed"),
        "{}",
        text(&wrong.stderr)
    );
    let write = psql(
        &s,
        Some("wwwwwwwwwwwwwwwwwwww"),
        &["CREATE TABLE t (x INT PRIMARY KEY)"],
    );
    assert!(write.status.success(), "{}", text(&write.stderr));
    let read = psql(
        &s,
        Some("rrrrrrrrrrrrrrrrrrrr"),
        &["SELECT count(*) FROM t"],
    );
    assert_eq!(text(&read.stdout), "0\n", "{}", text(&read.stderr));
    let head = s.shop.head();
    let denied = psql(
        &s,
        Some("rrrrrrrrrrrrrrrrrrrr"),
        &["INSERT INTO t VALUES (1)"],
    );
    assert!(
        text(&denied.stderr).contains("42501"),
        "{}",
        text(&denied.stderr)
    );
    assert_eq!(s.shop.head(), head);
}

#[test]
fn command_tags_count_the_rows_written() {
    if skip("psql") {
        return;
    }
    let s = served(&[], &[]);
    // psql prints each command's tag (without -q).
    let run = psql_with(
        &s,
        None,
        &[],
        &[
            "CREATE TABLE k (id INT PRIMARY KEY, x INT)",
            "CREATE TABLE b (x INT)",
            "INSERT INTO k VALUES (1, 1), (2, 2), (3, 3)",
            "INSERT INTO b VALUES (1), (1), (2)",
            "UPDATE k SET x = x WHERE id < 3",
            "UPDATE b SET x = 5 WHERE x = 1",
            "DELETE FROM b WHERE x = 5",
            "DELETE FROM k WHERE id = 99",
            "INSERT INTO k VALUES (3, 0), (4, 4) ON CONFLICT DO NOTHING",
            "BEGIN",
            "INSERT INTO k VALUES (5, 5), (6, 6)",
            "DELETE FROM k WHERE id > 4",
            "COMMIT",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let tags: Vec<String> = text(&run.stdout)
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        .map(str::to_string)
        .collect();
    assert_eq!(
        tags,
        [
            "CREATE TABLE",
            "CREATE TABLE",
            "INSERT 0 3",
            "INSERT 0 3",
            "UPDATE 2",
            "UPDATE 2",
            "DELETE 2",
            "DELETE 0",
            "INSERT 0 1",
            "BEGIN",
            "INSERT 0 2",
            "DELETE 2",
            "COMMIT",
        ],
        "{}",
        text(&run.stdout)
    );
}

const ROWCOUNT_SCRIPT: &str = r#"
import sys
import psycopg
port = int(sys.argv[1])
with psycopg.connect(host="127.0.0.1", port=port, user="u", dbname="d", autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, x INT)")
    cur.executemany("INSERT INTO t VALUES (%s, %s)", [(1, 1), (2, 2)])
    print("executemany", cur.rowcount)
    cur.execute("INSERT INTO t VALUES (%s, %s), (%s, %s), (%s, %s)", (3, 3, 4, 4, 5, 5))
    print("insert", cur.rowcount)
    cur.execute("UPDATE t SET x = %s WHERE id > %s", (0, 2))
    print("update", cur.rowcount)
    cur.execute("UPDATE t SET x = x WHERE id = %s", (1,))
    print("same", cur.rowcount)
    cur.execute("DELETE FROM t WHERE id = %s", (99,))
    print("none", cur.rowcount)
    cur.execute("SELECT id FROM t WHERE id > %s", (1,))
    print("select", cur.rowcount)
with psycopg.connect(host="127.0.0.1", port=port, user="u", dbname="d") as conn:
    cur = conn.cursor()
    cur.execute("DELETE FROM t WHERE x = %s", (0,))
    print("in transaction", cur.rowcount)
"#;

#[test]
fn psycopg_rowcount_after_insert_update_and_delete() {
    if skip("psycopg") {
        return;
    }
    let s = served(&[], &[]);
    let script = s.shop.write("rowcount.py", ROWCOUNT_SCRIPT);
    let run = Command::new("python3")
        .arg(&script)
        .arg(&s.port)
        .output()
        .expect("python3");
    let out = text(&run.stdout);
    assert!(run.status.success(), "{out}{}", text(&run.stderr));
    assert_eq!(
        out,
        "executemany 2\ninsert 3\nupdate 3\nsame 1\nnone 0\nselect 4\nin transaction 3\n"
    );
    assert_eq!(s.shop.rows("t", None).len(), 2);
}

const PSYCOPG_SCRIPT: &str = r#"
import sys
from decimal import Decimal
import psycopg
port = int(sys.argv[1])
with psycopg.connect(host="127.0.0.1", port=port, user="u", dbname="d", autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute("CREATE TABLE orders (id INT PRIMARY KEY, amount DECIMAL(10, 2) NOT NULL, note TEXT)")
    cur.execute("INSERT INTO orders VALUES (%s, %s, %s)", (1, Decimal("30.50"), "it's"))
    cur.execute("INSERT INTO orders VALUES (%s, %s, %s)", (2, Decimal("5"), None))
    cur.execute("SELECT id, amount, note FROM orders WHERE id = %s", (1,))
    print("row", cur.fetchall())
    try:
        cur.execute("INSERT INTO orders VALUES (%s, %s, %s)", (1, Decimal("1"), "x"))
    except psycopg.Error as error:
        print("refused", error.sqlstate)
    for _ in range(6):
        cur.execute("SELECT count(*) FROM orders WHERE amount > %s", (Decimal("1"),), prepare=True)
    print("prepared", cur.fetchall())
with psycopg.connect(host="127.0.0.1", port=port, user="u", dbname="d") as conn:
    with conn.transaction():
        conn.execute("INSERT INTO orders VALUES (3, 1, 'a')")
        conn.execute("INSERT INTO orders VALUES (4, 1, 'b')")
    print("count", conn.execute("SELECT count(*) FROM orders").fetchall())
"#;

#[test]
fn psycopg_binds_parameters_prepares_statements_and_commits_a_transaction_once() {
    if skip("psycopg") {
        return;
    }
    let s = served(&[], &[]);
    let script = s.shop.write("client.py", PSYCOPG_SCRIPT);
    let run = Command::new("python3")
        .arg(&script)
        .arg(&s.port)
        .output()
        .expect("python3");
    let out = text(&run.stdout);
    assert!(
        run.status.success(),
        "{}{} (install psycopg: pip install 'psycopg[binary]')",
        out,
        text(&run.stderr)
    );
    assert!(
        out.contains("row [(1, Decimal('30.50'), \"it's\")]"),
        "{out}"
    );
    assert!(out.contains("refused 23505"), "{out}");
    assert!(out.contains("prepared [(2,)]"), "{out}");
    assert!(out.contains("count [(4,)]"), "{out}");
    // CREATE, two INSERTs, one transaction: four commits.
    assert_eq!(s.shop.log().len(), 4);
    s.shop.ok(&["verify"]);
}

/// Each statement (or statements) run by psycopg in autocommit, printing its SQLSTATE.
const SQLSTATE_SCRIPT: &str = r#"
import sys
import psycopg
port = int(sys.argv[1])
conn = psycopg.connect(host="127.0.0.1", port=port, user="u", dbname="d", autocommit=True)
def run(name, *statements):
    try:
        for s in statements:
            conn.execute(s)
        print(name, "ok")
    except psycopg.Error as e:
        print(name, e.sqlstate)
run("setup", "CREATE TABLE p (id INT PRIMARY KEY)",
    "CREATE TABLE c (id INT PRIMARY KEY, p INT REFERENCES p(id), u INT UNIQUE, n INT NOT NULL, k INT CHECK (k > 0))",
    "INSERT INTO p VALUES (1)", "INSERT INTO c VALUES (1, 1, 1, 1, 1)",
    "CREATE MATERIALIZED VIEW m AS SELECT id, 10 // (id - 2) AS q FROM p")
run("primary_key", "INSERT INTO c VALUES (1, 1, 2, 1, 1)")
run("unique", "INSERT INTO c VALUES (2, 1, 1, 1, 1)")
run("not_null", "INSERT INTO c VALUES (3, 1, 3, NULL, 1)")
run("foreign_key", "INSERT INTO c VALUES (4, 9, 4, 1, 1)")
run("check", "INSERT INTO c VALUES (5, 1, 5, 1, -1)")
run("assertion", "CREATE ASSERTION few CHECK (NOT EXISTS (SELECT * FROM p WHERE id > 100))",
    "INSERT INTO p VALUES (101)")
run("unknown_table", "SELECT * FROM nope")
run("unknown_table_dml", "DELETE FROM nope")
run("unknown_column", "SELECT nope FROM c")
run("unknown_column_dml", "UPDATE c SET nope = 1")
run("syntax", "SELEC 1")
run("duplicate_table", "CREATE TABLE p (x INT)")
run("not_supported", "CREATE INDEX i ON c (u)")
run("division_by_zero", "SELECT 5 % 0")
run("division_by_zero_in_a_commit", "INSERT INTO p VALUES (2)")
run("overflow", "SELECT id + 9223372036854775807 FROM p")
run("commit_outside", "COMMIT")
run("begin_inside", "BEGIN", "BEGIN")
run("failed_transaction", "SELECT 1")
run("rollback", "ROLLBACK")
run("read_only", "SET rnt.at = 'HEAD'", "INSERT INTO p VALUES (7)")
"#;

#[test]
fn every_error_class_carries_postgresqls_sqlstate() {
    if skip("psycopg") {
        return;
    }
    let s = served(&[], &[]);
    let script = s.shop.write("codes.py", SQLSTATE_SCRIPT);
    let run = Command::new("python3")
        .arg(&script)
        .arg(&s.port)
        .output()
        .expect("python3");
    let out = text(&run.stdout);
    assert!(run.status.success(), "{out}{}", text(&run.stderr));
    // PostgreSQL's Appendix A, "PostgreSQL Error Codes".
    let expected = [
        ("setup", "ok"),
        ("primary_key", "23505"),        // unique_violation
        ("unique", "23505"),             // unique_violation
        ("not_null", "23502"),           // not_null_violation
        ("foreign_key", "23503"),        // foreign_key_violation
        ("check", "23514"),              // check_violation
        ("assertion", "23000"),          // integrity_constraint_violation
        ("unknown_table", "42P01"),      // undefined_table
        ("unknown_table_dml", "42P01"),  // undefined_table
        ("unknown_column", "42703"),     // undefined_column
        ("unknown_column_dml", "42703"), // undefined_column
        ("syntax", "42601"),             // syntax_error
        ("duplicate_table", "42P07"),    // duplicate_table
        ("not_supported", "0A000"),      // feature_not_supported
        ("division_by_zero", "22012"),   // division_by_zero
        ("division_by_zero_in_a_commit", "22012"),
        ("overflow", "22003"),           // numeric_value_out_of_range
        ("commit_outside", "25P01"),     // no_active_sql_transaction
        ("begin_inside", "25001"),       // active_sql_transaction
        ("failed_transaction", "25P02"), // in_failed_sql_transaction
        ("rollback", "ok"),
        ("read_only", "25006"), // read_only_sql_transaction
    ];
    let expected: String = expected
        .iter()
        .map(|(name, code)| format!("{name} {code}\n"))
        .collect();
    assert_eq!(out, expected);
    assert_eq!(
        s.shop.rows("p", None).len(),
        1,
        "nothing refused was written"
    );
}

#[test]
fn a_wrong_password_is_28p01() {
    let s = served(
        &[("tokens", "write wwwwwwwwwwwwwwwwwwww\n")],
        &["--token-file", "tokens"],
    );
    let mut stream = TcpStream::connect(format!("127.0.0.1:{}", s.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(&startup()).unwrap();
    let mut asked = [0u8; 9];
    stream.read_exact(&mut asked).unwrap();
    assert_eq!(
        asked,
        [b'R', 0, 0, 0, 8, 0, 0, 0, 3],
        "a cleartext password asked for"
    );
    let password = b"wrong-password-xxxxxx\0";
    let mut message = vec![b'p'];
    message.extend_from_slice(&i32::try_from(password.len() + 4).unwrap().to_be_bytes());
    message.extend_from_slice(password);
    stream.write_all(&message).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert_eq!(answer.first(), Some(&b'E'), "{answer:?}");
    assert!(answer.windows(6).any(|w| w == b"C28P01"), "{answer:?}");
}

/// Tables, views and constraints whose compiled rules need helper relations (a HAVING and
/// a LEFT JOIN make them): the catalog must list the user's relations and no helper.
const CATALOG_SQL: [&str; 6] = [
    "CREATE TABLE airlines (carrier TEXT PRIMARY KEY, name TEXT NOT NULL)",
    "CREATE TABLE flights (id INT PRIMARY KEY, carrier TEXT REFERENCES airlines(carrier), \
     dep_delay DECIMAL(6, 1), day DATE, code TEXT UNIQUE, n INT CHECK (n > 0))",
    "CREATE TABLE bag (x INT)",
    "CREATE MATERIALIZED VIEW busy AS SELECT carrier, count(*) AS n FROM flights \
     GROUP BY carrier HAVING count(*) > 1",
    "CREATE VIEW named AS SELECT f.id, a.name FROM flights f LEFT JOIN airlines a \
     ON a.carrier = f.carrier",
    "INSERT INTO airlines VALUES ('AA', 'American')",
];

/// `psql` with its default (aligned) output, headers and footers included.
fn psql_aligned(served: &Served, commands: &[&str]) -> String {
    let mut command = Command::new("psql");
    command.args([
        "-X",
        "-h",
        "127.0.0.1",
        "-p",
        &served.port,
        "-U",
        "u",
        "-d",
        "d",
    ]);
    command.args(["-v", "ON_ERROR_STOP=1"]);
    for c in commands {
        command.args(["-c", c]);
    }
    let run = command.output().expect("psql runs");
    assert!(run.status.success(), "{commands:?}: {}", text(&run.stderr));
    text(&run.stdout)
}

#[test]
fn psql_lists_and_describes_the_users_relations_and_no_helper() {
    if skip("psql") {
        return;
    }
    let s = served(&[], &[]);
    let made = psql(&s, None, &CATALOG_SQL);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let status = s.shop.ok(&["status", "--internal", "--format", "json"]);
    assert!(status.contains("\"_"), "the views have helpers: {status}");
    let listed = |command: &str| {
        let run = psql(&s, None, &[command]);
        assert!(run.status.success(), "{command}: {}", text(&run.stderr));
        text(&run.stdout)
    };
    assert_eq!(
        listed("\\dt"),
        "public|airlines|table|rnt\npublic|bag|table|rnt\npublic|flights|table|rnt\n"
    );
    assert_eq!(listed("\\dv"), "public|named|view|rnt\n");
    assert_eq!(listed("\\dm"), "public|busy|materialized view|rnt\n");
    assert_eq!(
        listed("\\d"),
        "public|airlines|table|rnt\npublic|bag|table|rnt\npublic|busy|materialized view|rnt\n\
         public|flights|table|rnt\npublic|named|view|rnt\n"
    );
    assert!(
        listed("\\l").starts_with("rnt|rnt|UTF8|"),
        "{}",
        listed("\\l")
    );
    let flights = psql_aligned(&s, &["\\d flights"]);
    for line in [
        "Table \"public.flights\"",
        " id        | bigint       |           | not null | ",
        " dep_delay | numeric(6,1) |           |          | ",
        " day       | date         |           |          | ",
        "    \"flights_pkey\" PRIMARY KEY, btree (id)",
        "    \"flights_code_key\" UNIQUE CONSTRAINT, btree (code)",
        "Check constraints:",
        "    \"flights_carrier_fkey\" FOREIGN KEY (carrier) REFERENCES airlines(carrier)",
    ] {
        assert!(flights.contains(line), "no `{line}` in\n{flights}");
    }
    let airlines = psql_aligned(&s, &["\\d airlines"]);
    assert!(
        airlines.contains("TABLE \"flights\" CONSTRAINT \"flights_carrier_fkey\""),
        "{airlines}"
    );
    assert!(psql_aligned(&s, &["\\d busy"]).contains("Materialized view \"public.busy\""));
    assert!(psql_aligned(&s, &["\\d named"]).contains("View \"public.named\""));
    // The catalog is the state read's: at the first commit, one table.
    let first = s.shop.log().last().unwrap()["commit"]
        .as_str()
        .unwrap()
        .to_string();
    let past = psql(&s, None, &[&format!("SET rnt.at = '{first}'"), "\\dt"]);
    assert_eq!(
        text(&past.stdout),
        "public|airlines|table|rnt\n",
        "{}",
        text(&past.stderr)
    );
}

#[test]
fn show_tables_describe_information_schema_and_version_answer() {
    if skip("psql") {
        return;
    }
    let s = served(&[], &[]);
    let made = psql(&s, None, &CATALOG_SQL);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let run = psql(
        &s,
        None,
        &[
            "SHOW TABLES",
            "DESCRIBE flights",
            "SELECT table_name, table_type FROM information_schema.tables ORDER BY 1",
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns \
             WHERE table_name = 'airlines' ORDER BY ordinal_position",
            "SELECT constraint_name, constraint_type FROM information_schema.table_constraints \
             WHERE table_name = 'flights' ORDER BY 1",
            "SELECT version(), current_schema(), current_database()",
            "SHOW server_version",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        text(&run.stdout),
        "airlines\nbag\nbusy\nflights\nnamed\n\
         id|BIGINT|NO|PRI||\ncarrier|VARCHAR|YES|||\ndep_delay|DECIMAL(6,1)|YES|||\n\
         day|DATE|YES|||\ncode|VARCHAR|YES|||\nn|BIGINT|YES|||\n\
         airlines|BASE TABLE\nbag|BASE TABLE\nbusy|VIEW\nflights|BASE TABLE\nnamed|VIEW\n\
         carrier|text|NO\nname|text|NO\n\
         flights_carrier_fkey|FOREIGN KEY\nflights_code_key|UNIQUE\nflights_n_check|CHECK\n\
         flights_pkey|PRIMARY KEY\n\
         PostgreSQL 15.0 (rnt)|public|rnt\n\
         15.0\n"
    );
}

const CATALOG_SCRIPT: &str = r#"
import sys
import psycopg
port = int(sys.argv[1])
with psycopg.connect(host="127.0.0.1", port=port, user="u", dbname="d", autocommit=True) as conn:
    print("server", conn.info.server_version)
    cur = conn.execute(
        "SELECT c.relname, c.relkind FROM pg_catalog.pg_class c "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'v', 'm') ORDER BY 1", ("public",))
    print("classes", cur.fetchall())
    cur = conn.execute(
        "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull "
        "FROM pg_catalog.pg_attribute a WHERE a.attrelid = %s::regclass AND a.attnum > 0 "
        "ORDER BY a.attnum", ("flights",))
    print("columns", cur.fetchall())
"#;

#[test]
fn psycopg_reads_the_catalog_with_parameters() {
    if skip("psycopg") {
        return;
    }
    let s = served(&[], &[]);
    let made = psql(&s, None, &CATALOG_SQL);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let script = s.shop.write("catalog.py", CATALOG_SCRIPT);
    let run = Command::new("python3")
        .arg(&script)
        .arg(&s.port)
        .output()
        .expect("python3");
    let out = text(&run.stdout);
    assert!(run.status.success(), "{out}{}", text(&run.stderr));
    assert_eq!(
        out,
        "server 150000\n\
         classes [('airlines', 'r'), ('bag', 'r'), ('busy', 'm'), ('flights', 'r'), ('named', 'v')]\n\
         columns [('id', 'bigint', True), ('carrier', 'text', False), \
         ('dep_delay', 'numeric(6,1)', False), ('day', 'date', False), ('code', 'text', False), \
         ('n', 'bigint', False)]\n"
    );
}

/// Every parameter in binary (`%b`): int2, int4, int8, numeric, bool, date, timestamp,
/// timestamptz, float8, text; then psycopg's defaults (`%s`).
const BINARY_SCRIPT: &str = r#"
import sys, datetime
from decimal import Decimal
import psycopg
from psycopg.types.numeric import Int2, Int4, Int8
port = int(sys.argv[1])
with psycopg.connect(host="127.0.0.1", port=port, user="u", dbname="d", autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, small INT, four INT, amount DECIMAL(12, 3), ok BOOLEAN, day DATE, at TIMESTAMP, atz TIMESTAMP, ratio DECIMAL(10, 3), note TEXT)")
    utc = datetime.timezone.utc
    rows = [
        (Int8(1), Int2(-7), Int4(70000), Decimal("-12345.678"), True, datetime.date(2013, 1, 1),
         datetime.datetime(2013, 1, 1, 5, 30, 0, 250000), datetime.datetime(2013, 6, 1, 12, 0, tzinfo=utc), 0.125, "it's"),
        (Int8(2), Int2(0), Int4(-1), Decimal("0.001"), False, datetime.date(1999, 12, 31),
         datetime.datetime(1970, 1, 1), datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2))), 2.5, None),
    ]
    for row in rows:
        cur.execute("INSERT INTO t VALUES (%b, %b, %b, %b, %b, %b, %b, %b, %b, %b)", row)
    cur.execute("SELECT * FROM t WHERE day >= %b AND amount < %b ORDER BY id", (datetime.date(1990, 1, 1), Decimal("1")))
    for row in cur.fetchall():
        print(row)
    cur.execute("SELECT id FROM t WHERE at = %b", (datetime.datetime(2013, 1, 1, 5, 30, 0, 250000),))
    print("at", cur.fetchall())
    cur.execute("SELECT id FROM t WHERE id = %s AND day = %s", (1, datetime.date(2013, 1, 1)))
    print("default", cur.fetchall())
"#;

#[test]
fn psycopg_binary_parameters_of_every_type_drivers_send() {
    if skip("psycopg") {
        return;
    }
    let s = served(&[], &[]);
    let script = s.shop.write("binary.py", BINARY_SCRIPT);
    let run = Command::new("python3")
        .arg(&script)
        .arg(&s.port)
        .output()
        .expect("python3");
    let out = text(&run.stdout);
    assert!(run.status.success(), "{out}{}", text(&run.stderr));
    assert_eq!(
        out,
        "(1, -7, 70000, Decimal('-12345.678'), True, datetime.date(2013, 1, 1), \
         datetime.datetime(2013, 1, 1, 5, 30, 0, 250000), datetime.datetime(2013, 6, 1, 12, 0), \
         Decimal('0.125'), \"it's\")\n\
         (2, 0, -1, Decimal('0.001'), False, datetime.date(1999, 12, 31), \
         datetime.datetime(1970, 1, 1, 0, 0), datetime.datetime(1999, 12, 31, 22, 0), \
         Decimal('2.500'), None)\n\
         at [(1,)]\n\
         default [(1,)]\n"
    );
}

#[test]
fn psql_copies_in_and_out_as_text_and_csv() {
    if skip("psql") {
        return;
    }
    let s = served(&[], &[]);
    s.shop.write(
        "in.csv",
        "id,name,amount,day,ok\n1,\"Smith, J\",10.50,2013-01-01,t\n\
         2,\"say \"\"hi\"\"\",,2013-01-02,f\n3,\"two\nlines\",-1,,true\n",
    );
    s.shop.write("in.txt", "4\tfour\t\\N\t2013-02-01\tt\n");
    let run = psql_with(
        &s,
        None,
        &[],
        &[
            "CREATE TABLE t (id INT PRIMARY KEY, name TEXT, amount DECIMAL(8, 2), day DATE, \
             ok BOOLEAN)",
            "\\copy t from 'in.csv' with (format csv, header)",
            "\\copy t from 'in.txt'",
            "\\copy t to 'out.csv' csv header",
            "\\copy (SELECT id, name FROM t WHERE id > 1 ORDER BY id) to 'out.txt'",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        text(&run.stdout),
        "CREATE TABLE\nCOPY 3\nCOPY 1\nCOPY 4\nCOPY 3\n"
    );
    // CREATE, then one commit per COPY FROM.
    assert_eq!(s.shop.log().len(), 3);
    let read = |name: &str| std::fs::read_to_string(s.shop.dir().join(name)).unwrap();
    assert_eq!(
        read("out.csv"),
        "id,name,amount,day,ok\n1,\"Smith, J\",10.50,2013-01-01,t\n\
         2,\"say \"\"hi\"\"\",,2013-01-02,f\n3,\"two\nlines\",-1.00,,t\n4,four,,2013-02-01,t\n"
    );
    assert_eq!(read("out.txt"), "2\tsay \"hi\"\n3\ttwo\\nlines\n4\tfour\n");
    // A refused COPY commits nothing; a path on the server is never opened.
    let head = s.shop.head();
    let again = psql(
        &s,
        None,
        &["\\copy t from 'in.csv' with (format csv, header)"],
    );
    assert!(
        text(&again.stderr).contains("23505"),
        "{}",
        text(&again.stderr)
    );
    let file = psql(&s, None, &["COPY t FROM '/etc/hostname'"]);
    assert!(
        text(&file.stderr).contains("0A000"),
        "{}",
        text(&file.stderr)
    );
    assert_eq!(s.shop.head(), head);
}

/// psycopg's `cursor.copy()`: rows written in, the table read out as CSV.
const COPY_SCRIPT: &str = r#"
import sys
import psycopg
port = int(sys.argv[1])
with psycopg.connect(host="127.0.0.1", port=port, user="u", dbname="d", autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute("CREATE TABLE c (id INT PRIMARY KEY, name TEXT)")
    with cur.copy("COPY c (id, name) FROM STDIN") as copy:
        copy.write_row((1, "one"))
        copy.write_row((2, None))
    print("in", cur.rowcount)
    with cur.copy("COPY c TO STDOUT (FORMAT csv)") as copy:
        print("out", b"".join(bytes(b) for b in copy).decode())
"#;

#[test]
fn psycopg_copies_rows_in_and_out() {
    if skip("psycopg") {
        return;
    }
    let s = served(&[], &[]);
    let script = s.shop.write("copy_rows.py", COPY_SCRIPT);
    let run = Command::new("python3")
        .arg(&script)
        .arg(&s.port)
        .output()
        .expect("python3");
    let out = text(&run.stdout);
    assert!(run.status.success(), "{out}{}", text(&run.stderr));
    assert_eq!(out, "in 2\nout 1,one\n2,\n\n");
    assert_eq!(s.shop.log().len(), 2, "CREATE, then the COPY: one commit");
}

/// A startup packet for protocol 3.0.
fn startup() -> Vec<u8> {
    let mut body = 196_608i32.to_be_bytes().to_vec();
    body.extend_from_slice(b"user\0u\0database\0d\0\0");
    let mut packet = i32::try_from(body.len() + 4)
        .unwrap()
        .to_be_bytes()
        .to_vec();
    packet.extend_from_slice(&body);
    packet
}

#[test]
fn malformed_postgres_messages_drop_only_their_connection() {
    let s = served(&[], &[]);
    let messages = std::env::var("RNT_SERVE_PG_FUZZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300u64);
    let kinds = [
        b'Q', b'P', b'B', b'D', b'E', b'S', b'C', b'H', b'p', b'Z', 0, 0xff,
    ];
    let mut rng = Rng(0x51_7cc1_b727_220a);
    for round in 0..messages {
        let mut bytes = if round % 5 == 0 {
            Vec::new()
        } else {
            startup()
        };
        for _ in 0..1 + rng.next() % 4 {
            let kind = kinds[rng.index(kinds.len())];
            let length = match rng.next() % 4 {
                0 => -1i32,
                1 => i32::MAX,
                _ => i32::try_from(rng.next() % 40).unwrap(),
            };
            bytes.push(kind);
            bytes.extend_from_slice(&length.to_be_bytes());
            for _ in 0..rng.next() % 48 {
                bytes.push(u8::try_from(rng.next() % 256).unwrap());
            }
        }
        let mut stream = TcpStream::connect(format!("127.0.0.1:{}", s.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let _ = stream.write_all(&bytes);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut answer = Vec::new();
        // An answer, or the connection dropped (a reset when bytes were left unread):
        // never a hang.
        if let Err(error) = stream.read_to_end(&mut answer) {
            assert!(
                !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "no answer within 20 s to {bytes:?}"
            );
        }
    }
    // Still serving, and nothing was written.
    let mut stream = TcpStream::connect(format!("127.0.0.1:{}", s.port)).unwrap();
    stream.write_all(&startup()).unwrap();
    let mut query = vec![b'Q'];
    let sql = b"SELECT 1 AS one\0";
    query.extend_from_slice(&i32::try_from(sql.len() + 4).unwrap().to_be_bytes());
    query.extend_from_slice(sql);
    stream.write_all(&query).unwrap();
    stream.write_all(&[b'X', 0, 0, 0, 4]).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    assert!(answer.windows(3).any(|w| w == b"one"), "{answer:?}");
    assert!(s.shop.log().is_empty());
}
