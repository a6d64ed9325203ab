//! `rnt serve` as a hostile environment treats it (issue 36): a dead server's entry never
//! sends a store's commands to another store's server or to another program; requests a
//! browser sends for another site change nothing; hostile peers hold their own connections
//! and never the server's memory or its descriptors. Counts and durations are small by
//! default (RNT_SERVE_HOSTILE_SECONDS raises the hold).

mod common;

use common::http::{get, request, send};
use common::{Run, Shop};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free port on 127.0.0.1 (free when asked; the tests then listen on it at once).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `rnt serve` and the HTTP address it printed.
struct Server {
    child: Child,
    address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `rnt serve --http HTTP EXTRA…` (Postgres on any free port unless EXTRA names one) in `shop` (through `sh -c
/// PREFIX exec …` when `prefix` is given, e.g. a `ulimit`).
fn serve_at(shop: &Shop, http: &str, extra: &[&str], prefix: Option<&str>) -> Server {
    let mut args = vec!["serve", "--http", http];
    if !extra.contains(&"--pg") {
        args.extend(["--pg", "127.0.0.1:0"]);
    }
    args.extend_from_slice(extra);
    let mut command = match prefix {
        None => shop.command(&args),
        Some(prefix) => {
            let mut command = Command::new("sh");
            let words: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
            command
                .arg("-c")
                .arg(format!(
                    "{prefix} && exec '{}' {}",
                    common::RNT,
                    words.join(" ")
                ))
                .current_dir(shop.dir());
            command
        }
    };
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn rnt serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let address = first
        .rsplit_once("http://")
        .map(|(_, a)| a.split_whitespace().next().unwrap_or("").to_string())
        .unwrap_or_else(|| panic!("the server did not start: {first:?}"));
    // The Postgres line, when there is one, names its address.
    std::thread::spawn(move || for _ in lines {});
    Server { child, address }
}

/// Sends signal `name` to a process.
fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// The rows `relation` holds in `shop`'s store, read in-process.
fn count(shop: &Shop, relation: &str) -> usize {
    let out = shop.ok(&["--no-server", "show", relation, "--format", "json"]);
    serde_json::from_str::<Vec<serde_json::Value>>(&out)
        .unwrap()
        .len()
}

/// Two stores; `a`'s server on `address` stops by `stop` (a signal), and `b`'s server
/// takes the address. Then every command in `a` runs on `a` (or fails naming a), and `b`
/// is untouched.
fn another_store_on_the_same_port(stop: &str) {
    let a = Shop::init();
    a.ok(&["sql", "CREATE TABLE a_only (id INT PRIMARY KEY)"]);
    let b = Shop::init();
    b.ok(&["sql", "CREATE TABLE t (id INT PRIMARY KEY)"]);
    let b_head = b.head();
    let address = format!("127.0.0.1:{}", free_port());
    let mut first = serve_at(&a, &address, &[], None);
    signal(&first.child, stop);
    let _ = first.child.wait();
    let _b_server = serve_at(&b, &address, &[], None);
    // status: a's own relation, a's own head.
    let status: serde_json::Value =
        serde_json::from_str(&a.ok(&["status", "--format", "json"])).unwrap();
    let names: Vec<&str> = status["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a_only"], "{status}");
    assert_eq!(status["commit"].as_str(), a.head().as_deref());
    // A write meant for b's table fails in a (no such table), and b is untouched.
    let refused: Run = a.run(&["sql", "INSERT INTO t VALUES (42)"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    a.ok(&["sql", "INSERT INTO a_only VALUES (1)"]);
    assert_eq!(count(&a, "a_only"), 1);
    assert_eq!(count(&b, "t"), 0);
    assert_eq!(b.head(), b_head, "b's history moved");
    // The stale entry was replaced, and a server on a starts.
    assert!(!a.store().join("server").exists());
    let again = serve_at(&a, "127.0.0.1:0", &[], None);
    assert_eq!(get(&again.address, "/api/status").status, 200);
}

#[test]
fn after_kill_9_a_store_never_talks_to_another_stores_server() {
    another_store_on_the_same_port("KILL");
}

#[test]
fn after_sighup_a_store_never_talks_to_another_stores_server() {
    another_store_on_the_same_port("HUP");
}

/// A program on the entry's address that is not rnt: one that answers nonsense, one that
/// accepts and says nothing. Either way, commands run here.
#[test]
fn another_program_on_the_entrys_port_never_gets_a_command() {
    for silent in [false, true] {
        let a = Shop::init();
        a.ok(&["sql", "CREATE TABLE t (id INT PRIMARY KEY)"]);
        let address = format!("127.0.0.1:{}", free_port());
        let mut server = serve_at(&a, &address, &[], None);
        signal(&server.child, "KILL");
        let _ = server.child.wait();
        let listener = TcpListener::bind(&address).unwrap();
        let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = std::sync::Arc::clone(&heard);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let keep = std::sync::Arc::clone(&keep);
                std::thread::spawn(move || impostor(stream, silent, &keep));
            }
        });
        let started = Instant::now();
        a.ok(&["sql", "INSERT INTO t VALUES (7)"]);
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(count(&a, "t"), 1);
        let heard = heard.lock().unwrap().join("\n");
        assert!(
            !heard.contains("INSERT"),
            "the command reached the impostor: {heard}"
        );
        assert!(
            !heard.to_ascii_lowercase().contains("authorization"),
            "{heard}"
        );
    }
}

/// Reads what a peer sends (kept in `heard`), then answers nonsense or nothing.
fn impostor(mut stream: TcpStream, silent: bool, heard: &std::sync::Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut buffer = [0u8; 4096];
    let read = stream.read(&mut buffer).unwrap_or(0);
    heard
        .lock()
        .unwrap()
        .push(String::from_utf8_lossy(&buffer[..read]).into_owned());
    if silent {
        std::thread::sleep(Duration::from_secs(5));
    } else {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    }
}

/// A served store with one table, its head, and the server's secret.
fn served_table() -> (Shop, Server, String) {
    let shop = Shop::init();
    shop.ok(&["sql", "CREATE TABLE t (id INT PRIMARY KEY)"]);
    let server = serve_at(&shop, "127.0.0.1:0", &[], None);
    let secret = shop.server_secret();
    (shop, server, secret)
}

#[test]
fn a_request_a_browser_sends_for_another_site_changes_nothing() {
    let (shop, server, secret) = served_table();
    let address = server.address.as_str();
    let port = address.rsplit_once(':').unwrap().1;
    let head = shop.head();
    let own = format!("Host: {address}\r\n");
    let bearer = format!("Authorization: Bearer {secret}\r\n");
    let foreign = "Origin: http://evil.example\r\n";
    let plain = "Content-Type: text/plain\r\n";
    let form = "Content-Type: application/x-www-form-urlencoded\r\n";
    let insert = b"INSERT INTO t VALUES (1)".as_slice();
    let cases: Vec<(&str, String, &str, &[u8], u16)> = vec![
        (
            "a text/plain POST from another origin",
            format!("{own}{foreign}{plain}"),
            "/api/sql",
            insert,
            403,
        ),
        (
            "the same with the secret",
            format!("{own}{bearer}{foreign}{plain}"),
            "/api/sql",
            insert,
            403,
        ),
        (
            "a form POST",
            format!("{own}{foreign}{form}"),
            "/api/commit?message=evil",
            b"+t(1)\n",
            403,
        ),
        (
            "a form POST from an opaque origin",
            format!("{own}Origin: null\r\n{form}{bearer}"),
            "/api/commit?message=evil",
            b"+t(1)\n",
            403,
        ),
        (
            "a same-site fetch",
            format!("{own}{bearer}Sec-Fetch-Site: same-site\r\n"),
            "/api/sql",
            insert,
            403,
        ),
        (
            "a cross-site fetch",
            format!("{own}{bearer}Sec-Fetch-Site: cross-site\r\n"),
            "/api/sql",
            insert,
            403,
        ),
        (
            "a command line from a page",
            format!("{own}{bearer}{foreign}"),
            "/api/cli",
            b"{\"argv\":[\"rnt\",\"reset\",\"HEAD~1\"],\"inputs\":[]}\n",
            403,
        ),
        (
            "a rebound name, with the secret",
            format!("Host: evil.example:{port}\r\n{bearer}"),
            "/api/sql",
            insert,
            403,
        ),
        (
            "a POST without a token",
            own.clone(),
            "/api/sql",
            insert,
            401,
        ),
        (
            "a POST with a guessed token",
            format!("{own}Authorization: Bearer guessed-guessed-guessed\r\n"),
            "/api/sql",
            insert,
            401,
        ),
    ];
    for (what, headers, path, body, status) in &cases {
        let answer = send(address, "POST", path, headers, body);
        assert_eq!(answer.status, *status, "{what}: {}", answer.body);
        assert_eq!(shop.head(), head, "{what} changed the store");
    }
    // Reading by a rebound name is refused too (DNS rebinding reads nothing).
    let rebound = send(
        address,
        "GET",
        "/api/status",
        &format!("Host: evil.example:{port}\r\n"),
        b"",
    );
    assert_eq!(rebound.status, 403);
    // Programs (no browser headers) with the secret, the server's own pages, and `bearer`
    // in lower case go through.
    let from_a_script = send(
        address,
        "POST",
        "/api/sql",
        &format!("{own}authorization: bearer {secret}\r\n{plain}"),
        insert,
    );
    assert_eq!(from_a_script.status, 200, "{}", from_a_script.body);
    let same_origin = send(
        address,
        "POST",
        "/api/sql",
        &format!("{own}{bearer}Origin: http://{address}\r\nSec-Fetch-Site: same-origin\r\n"),
        b"INSERT INTO t VALUES (2)",
    );
    assert_eq!(same_origin.status, 200, "{}", same_origin.body);
    for host in [address.to_string(), format!("localhost:{port}")] {
        let page = send(address, "GET", "/", &format!("Host: {host}\r\n"), b"");
        assert_eq!(page.status, 200, "{host}: {}", page.body);
        assert!(
            page.head
                .contains("content-security-policy: default-src 'none'"),
            "{}",
            page.head
        );
        assert!(
            page.head.contains("x-content-type-options: nosniff"),
            "{}",
            page.head
        );
    }
    // The CLI goes through the server.
    let mut through = shop.command(&["sql", "INSERT INTO t VALUES (3)"]);
    through.env("RNT_REQUIRE_SERVER", shop.store());
    let ran = through.output().unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(count(&shop, "t"), 3);
}

#[test]
fn allow_host_names_a_host_the_server_answers_to() {
    let shop = Shop::init();
    let server = serve_at(&shop, "127.0.0.1:0", &["--allow-host", "rnt.example"], None);
    let named = send(
        &server.address,
        "GET",
        "/api/status",
        "Host: rnt.example\r\n",
        b"",
    );
    assert_eq!(named.status, 200, "{}", named.body);
    let other = send(
        &server.address,
        "GET",
        "/api/status",
        "Host: other.example\r\n",
        b"",
    );
    assert_eq!(other.status, 403);
    assert!(other.body.contains("--allow-host"), "{}", other.body);
}

/// The resident memory of process `pid`, in MiB.
fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

/// The read token of the resource test's server.
const READ_TOKEN: &str = "rrrrrrrrrrrrrrrrrrrr";

/// The bound the resource test holds the server to.
const RSS_BOUND_MIB: u64 = 150;

/// Hostile peers from a Python process (it raises its own descriptor limit): `plan` is
/// `KIND:N,…` with kinds `idle_pg`, `half_header`, `half_body`, `half_startup`, `huge_pg`
/// (a startup packet claiming 64 MiB, 8 MiB of it sent);
/// it opens them all, prints `held`, holds them until its standard input closes.
fn hostile(http: &str, pg: &str, plan: &str) -> Child {
    let script = r#"
import resource, socket, struct, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
http, pg, plan = sys.argv[1], sys.argv[2], sys.argv[3]
def connect(address):
    host, port = address.rsplit(":", 1)
    s = socket.socket()
    s.connect((host, int(port)))
    return s
held = []
for part in plan.split(","):
    kind, n = part.split(":")
    for _ in range(int(n)):
        try:
            if kind == "idle_pg":
                s = connect(pg)
            elif kind == "half_header":
                s = connect(http); s.send(b"GET /api/status HTTP/1.1\r\nHost: x")
            elif kind == "half_body":
                s = connect(http)
                s.send(("POST /api/sql HTTP/1.1\r\nHost: %s\r\nContent-Length: 60000000\r\n\r\nSELECT" % http).encode())
            elif kind == "half_startup":
                s = connect(pg); s.send(struct.pack("!ii", 9000, 196608) + b"user\0")
            elif kind == "huge_pg":
                s = connect(pg)
                try:
                    s.sendall(struct.pack("!ii", 64 << 20, 196608) + b"x" * (8 << 20))
                except OSError:
                    pass
            held.append(s)
        except OSError:
            pass
print("held", len(held), flush=True)
sys.stdin.read()
"#;
    let mut child = Command::new("python3")
        .args(["-c", script, http, pg, plan])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("held"), "{line:?}");
    child
}

/// Probes the server every 100 ms for `hold`: each GET must be answered within a second,
/// and the server's memory stay under the bound.
fn answered_throughout(server: &Server, token: &str, hold: Duration) -> (u64, usize) {
    let end = Instant::now() + hold;
    let (mut peak, mut probes) = (0, 0);
    while Instant::now() < end {
        let started = Instant::now();
        let answer = request(&server.address, "GET", "/api/status", Some(token), b"");
        let took = started.elapsed();
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(
            took < Duration::from_secs(1),
            "a normal request took {took:?}"
        );
        peak = peak.max(rss_mib(server.child.id()));
        assert!(peak < RSS_BOUND_MIB, "the server holds {peak} MiB");
        probes += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    (peak, probes)
}

#[test]
fn hostile_peers_hold_their_own_connections_not_the_server() {
    let hold = Duration::from_secs(
        std::env::var("RNT_SERVE_HOSTILE_SECONDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3),
    );
    let shop = Shop::init();
    shop.ok(&["sql", "CREATE TABLE t (id INT PRIMARY KEY)"]);
    shop.write("tokens", &format!("read {READ_TOKEN}\n"));
    let pg = format!("127.0.0.1:{}", free_port());
    // A server at a 1,024-descriptor limit, tokens required (so Postgres peers stay
    // unauthenticated).
    let server = serve_at(
        &shop,
        "127.0.0.1:0",
        &["--token-file", "tokens", "--pg", &pg],
        Some("ulimit -n 1024"),
    );
    let mixed = "idle_pg:300,half_header:300,half_body:150,half_startup:150,huge_pg:16";
    let mut peers = hostile(&server.address, &pg, mixed);
    let (peak, probes) = answered_throughout(&server, READ_TOKEN, hold);
    eprintln!("mixed peers: peak {peak} MiB over {probes} probes");
    drop(peers.stdin.take());
    let _ = peers.wait();
    // 1,100 requests that never finish their headers, at the descriptor limit.
    let mut peers = hostile(&server.address, &pg, "half_header:1100");
    let (peak, probes) = answered_throughout(&server, READ_TOKEN, hold);
    eprintln!("1,100 half-open requests: peak {peak} MiB over {probes} probes");
    // A Postgres client is answered too (its startup gets the password request).
    let mut client = TcpStream::connect(&pg).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let parameters = b"user\0u\0\0";
    let mut startup = Vec::new();
    startup.extend_from_slice(&(8 + i32::try_from(parameters.len()).unwrap()).to_be_bytes());
    startup.extend_from_slice(&196_608i32.to_be_bytes());
    startup.extend_from_slice(parameters);
    client.write_all(&startup).unwrap();
    let mut answer = [0u8; 1];
    client.read_exact(&mut answer).unwrap();
    assert_eq!(answer[0], b'R', "the password request");
    drop(peers.stdin.take());
    let _ = peers.wait();
}

/// An entry naming a server on another machine (a bucket shared by machines; a folder on a
/// network disk) is not for this one: commands run here and leave it as it is.
#[test]
fn an_entry_for_another_machine_is_left_to_it() {
    let (shop, server, _secret) = served_table();
    let path = shop.store().join("server");
    let mut entry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    entry["machine"] = serde_json::Value::from("another-machine");
    let text = entry.to_string();
    std::fs::write(&path, &text).unwrap();
    // Required to go through a server, the command says why it cannot.
    let mut required = shop.command(&["status"]);
    required.env("RNT_REQUIRE_SERVER", shop.store());
    let refused = required.output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("another-machine"), "{stderr}");
    // Otherwise it runs here, and the entry stays.
    shop.ok(&["sql", "INSERT INTO t VALUES (1)"]);
    assert_eq!(count(&shop, "t"), 1);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    drop(server);
}

/// A write whose server dies before committing says so, from the store itself: HEAD has
/// not moved, nothing changed, run it again.
#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
)]
fn a_write_cut_off_by_a_dying_server_says_whether_it_landed() {
    let shop = Shop::init();
    shop.ok(&["sql", "CREATE TABLE t (id INT PRIMARY KEY)"]);
    let head = shop.head().unwrap();
    let mut command = shop.command(&["serve", "--http", "127.0.0.1:0", "--pg", "127.0.0.1:0"]);
    // The server aborts where its first commit's manifest would replace the old one.
    command.env(rnt_store::fault::FAULT_ENV, "manifest-rename:1");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let cut = shop.run(&["sql", "INSERT INTO t VALUES (1)"]);
    let _ = child.wait();
    assert_ne!(cut.code, 0);
    assert!(
        cut.stderr.contains("before the command committed")
            && cut.stderr.contains(&head[..12])
            && cut.stderr.contains("run it again"),
        "{}",
        cut.stderr
    );
    assert_eq!(shop.head().as_deref(), Some(head.as_str()));
}

/// Every store has an id of its own: `init` makes one, a clone makes a new one (no transfer
/// copies it), and so does the store a first push creates.
#[test]
fn init_clone_and_a_first_push_give_each_store_its_own_id() {
    let id = |store: &std::path::Path| {
        let text = std::fs::read_to_string(store.join("id")).expect("an id file");
        let id = text.trim().to_string();
        assert!(
            id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id:?}"
        );
        id
    };
    let origin = Shop::init();
    origin.ok(&["sql", "CREATE TABLE t (id INT PRIMARY KEY)"]);
    let origin_id = id(&origin.store());
    let copies = Shop::bare();
    let origin_path = origin.store().display().to_string();
    copies.ok(&["clone", &origin_path, "cloned"]);
    let cloned_id = id(&copies.dir().join("cloned/.rnt"));
    let pushed = copies.dir().join("pushed");
    let pushed_path = pushed.display().to_string();
    origin.ok(&["remote", "add", "pushed", &pushed_path]);
    origin.ok(&["push", "pushed", "main"]);
    let pushed_id = id(&pushed);
    let ids: std::collections::BTreeSet<_> = [&origin_id, &cloned_id, &pushed_id].into();
    assert_eq!(ids.len(), 3, "{ids:?}");
}
