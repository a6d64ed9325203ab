//! `rnt serve` end to end, through the binary and plain HTTP/1.1 on loopback: the API
//! answers in the CLI's JSON shapes, a subscription receives exactly each commit's change of
//! a view and resumes from its last id, tokens guard every request, a CLI writer beside the
//! server is safe, a killed server's entry is ignored, malformed requests never stop it,
//! and readers and writers at once lose nothing. Counts and durations are small by default
//! (RNT_SERVE_FUZZ_REQUESTS, RNT_SERVE_LOAD_SECONDS, RNT_SERVE_KILLS raise them).

mod common;

use common::http::{get, read_events, request, subscribe};
use common::{Rng, Shop};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::time::{Duration, Instant};

/// A count from the environment, or `default`.
fn env_count(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A store with orders and a view over them, served.
struct Served {
    shop: Shop,
    server: Child,
    address: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

const PROGRAM: &str = "\
relation orders(id: int, customer: int, amount: int) key(id).
view per_customer(customer: int, total: int, n: int).
per_customer(c, sum(a), count()) :- orders(_, c, a).
";

impl Served {
    /// The writing server's secret: a write token.
    fn secret(&self) -> String {
        self.shop.server_secret()
    }
}

fn served(extra: &[&str]) -> Served {
    served_with(&[], extra)
}

/// As [`served`], with `files` written in the working folder before the server starts.
fn served_with(files: &[(&str, &str)], extra: &[&str]) -> Served {
    let shop = Shop::bare();
    for (name, text) in files {
        shop.write(name, text);
    }
    shop.ok(&["init"]);
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit("first", &["+orders(1, 7, 30)", "+orders(2, 7, 5)"]);
    let (server, address) = shop.serve(extra);
    Served {
        shop,
        server,
        address,
    }
}

#[test]
fn the_api_answers_in_the_cli_json_shapes() {
    let s = served(&[]);
    let cli = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["--no-server"];
        all.extend_from_slice(args);
        serde_json::from_str(&s.shop.ok(&all)).unwrap()
    };
    let status = get(&s.address, "/api/status");
    assert_eq!(status.status, 200);
    assert_eq!(status.json(), cli(&["status", "--format", "json"]));
    assert_eq!(
        get(&s.address, "/api/log?n=1").json(),
        cli(&["log", "--format", "json", "-n", "1"])
    );
    assert_eq!(
        get(&s.address, "/api/relations/orders?limit=1&offset=1").json(),
        cli(&["show", "orders", "--format", "json", "--limit", "1", "--offset", "1"])
    );
    assert_eq!(
        get(
            &s.address,
            "/api/diff?from=HEAD~1&to=HEAD&relation=per_customer"
        )
        .json(),
        cli(&["diff", "HEAD~1", "HEAD", "per_customer", "--format", "json"])
    );
    assert_eq!(
        get(&s.address, "/api/program").json(),
        cli(&["program", "--format", "json"])
    );
    assert_eq!(
        get(&s.address, "/api/explain/per_customer").json(),
        cli(&["explain", "per_customer", "--format", "json"])
    );
    assert_eq!(get(&s.address, "/api/verify").json()["ok"], true);
    // A commit through the API is a commit like any other; the view follows.
    let head = s.shop.head();
    let committed = request(
        &s.address,
        "POST",
        "/api/commit?message=api",
        Some(&s.secret()),
        b"+orders(3, 8, 1)\n",
    );
    assert_eq!(committed.status, 200, "{}", committed.body);
    assert_ne!(s.shop.head(), head);
    assert_eq!(s.shop.log()[0]["message"], "api");
    assert_eq!(
        s.shop.rows("per_customer", None),
        [
            vec![
                serde_json::json!(7),
                serde_json::json!(35),
                serde_json::json!(2)
            ],
            vec![
                serde_json::json!(8),
                serde_json::json!(1),
                serde_json::json!(1)
            ]
        ]
    );
    // Errors: a JSON error with the exit code, HEAD unchanged.
    let head = s.shop.head();
    let bad = request(
        &s.address,
        "POST",
        "/api/commit?message=x",
        Some(&s.secret()),
        b"+nope(1)\n",
    );
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(
        bad.json()["error"].as_str().unwrap().contains("nope"),
        "{}",
        bad.body
    );
    assert_eq!(bad.json()["exit_code"], 1);
    let unknown = get(&s.address, "/api/relations/nope");
    assert_eq!(unknown.status, 400);
    assert_eq!(s.shop.head(), head);
    // A value that looks like an option stays a value.
    let sneaky = get(&s.address, "/api/relations/orders?at=--store%3D/etc");
    assert_eq!(sneaky.status, 400, "{}", sneaky.body);
    assert_eq!(get(&s.address, "/api/nothing").status, 404);
}

#[test]
fn sql_over_http_is_a_commit_and_a_query() {
    let s = served(&[]);
    let inserted = request(
        &s.address,
        "POST",
        "/api/sql",
        Some(&s.secret()),
        b"INSERT INTO orders VALUES (9, 1, 4)",
    );
    assert_eq!(inserted.status, 200, "{}", inserted.body);
    let answer = request(
        &s.address,
        "POST",
        "/api/sql",
        Some(&s.secret()),
        b"SELECT amount FROM orders WHERE id = 9",
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.body.contains('4'), "{}", answer.body);
}

/// Applies the changes of events to a set of tuples.
fn apply(set: &mut BTreeSet<String>, events: &[(String, serde_json::Value)]) {
    for (_, data) in events {
        for change in data["changes"].as_array().unwrap() {
            let tuple = change[1].to_string();
            match change[0].as_str().unwrap() {
                "+" => assert!(set.insert(tuple), "inserted twice"),
                _ => assert!(set.remove(&tuple), "deleted what was not there"),
            }
        }
    }
}

#[test]
fn a_subscription_gets_each_commit_once_and_resumes_from_its_last_id() {
    let s = served(&[]);
    let from = s.shop.head().unwrap();
    let mut stream = subscribe(&s.address, "per_customer", &from);
    let mut expected = Vec::new();
    for i in 0..6 {
        s.shop.commit(
            &format!("c{i}"),
            &[&format!("+orders({}, {}, {})", 10 + i, i % 3, i + 1)],
        );
        expected.push(s.shop.head().unwrap());
    }
    let first = read_events(&mut stream, 3);
    drop(stream);
    // Killed after three; resumed from the last id seen, with commits made meanwhile.
    for i in 6..8 {
        s.shop.commit(
            &format!("c{i}"),
            &[&format!(
                "-orders({}, {}, {})",
                10 + i - 6,
                (i - 6) % 3,
                i - 5
            )],
        );
        expected.push(s.shop.head().unwrap());
    }
    let last_seen = first.last().unwrap().0.clone();
    let mut stream = subscribe(&s.address, "per_customer", &last_seen);
    let rest = read_events(&mut stream, expected.len() - first.len());
    let ids: Vec<String> = first
        .iter()
        .chain(&rest)
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(ids, expected, "each commit once, in order");
    for (id, data) in first.iter().chain(&rest) {
        assert_eq!(&data["commit"], id);
        assert_eq!(data["relation"], "per_customer");
    }
    // The deltas, applied in turn to the view at `from`, give the view at HEAD: the same
    // as `diff from HEAD per_customer`.
    let rows = |at: &str| -> BTreeSet<String> {
        s.shop
            .rows("per_customer", Some(at))
            .iter()
            .map(|row| serde_json::Value::Array(row.clone()).to_string())
            .collect()
    };
    let mut view = rows(&from);
    apply(&mut view, &first);
    apply(&mut view, &rest);
    assert_eq!(view, rows("HEAD"));
    let unknown = get(&s.address, &format!("/api/subscribe/nope?since={from}"));
    assert_eq!(unknown.status, 400);
    assert_eq!(get(&s.address, "/api/subscribe/per_customer").status, 400);
}

#[test]
fn tokens_guard_every_request_and_exposed_addresses_need_them() {
    let shop = Shop::init();
    let refused = shop.run(&["serve", "--http", "0.0.0.0:0"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--token-file"),
        "{}",
        refused.stderr
    );
    let refused = shop.run(&["serve", "--http", "127.0.0.2:0"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    let s = served_with(
        &[(
            "tokens",
            "read rrrrrrrrrrrrrrrrrrrr\nwrite wwwwwwwwwwwwwwwwwwww\n",
        )],
        &["--token-file", "tokens"],
    );
    let address_of = s.address.clone();
    assert_eq!(
        request(&address_of, "GET", "/api/status", None, b"").status,
        401
    );
    assert_eq!(
        request(&address_of, "GET", "/", Some("wrong-token-xxxxxxxx"), b"").status,
        401
    );
    assert_eq!(
        request(
            &address_of,
            "GET",
            "/api/status",
            Some("rrrrrrrrrrrrrrrrrrrr"),
            b""
        )
        .status,
        200
    );
    let denied = request(
        &address_of,
        "POST",
        "/api/commit?message=x",
        Some("rrrrrrrrrrrrrrrrrrrr"),
        b"+orders(5, 1, 1)\n",
    );
    assert_eq!(denied.status, 403);
    let allowed = request(
        &address_of,
        "POST",
        "/api/commit?message=x",
        Some("wwwwwwwwwwwwwwwwwwww"),
        b"+orders(5, 1, 1)\n",
    );
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    // The store's own users go through with the entry's token: a CLI commit works.
    s.shop.commit("through", &["+orders(6, 1, 1)"]);
    assert_eq!(s.shop.log()[0]["message"], "through");
}

/// Sends a signal to a process.
fn signal(child: &Child, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn a_cli_writer_beside_the_server_is_safe_and_a_dead_servers_entry_is_ignored() {
    let mut s = served(&[]);
    // A writer that does not go through the server: the server holds no lock between
    // its writes, and sees the commit at once.
    request(
        &s.address,
        "POST",
        "/api/commit?message=a",
        Some(&s.secret()),
        b"+orders(3, 1, 1)\n",
    );
    s.shop
        .ok(&["--no-server", "commit", "-m", "beside", "+orders(4, 1, 1)"]);
    let status = get(&s.address, "/api/status").json();
    assert_eq!(status["commit"].as_str(), s.shop.head().as_deref());
    assert_eq!(s.shop.log()[0]["message"], "beside");
    // SIGTERM: a graceful stop that takes its entry away.
    signal(&s.server, "TERM");
    let stopped = s.server.wait().unwrap();
    assert!(stopped.success(), "{stopped:?}");
    assert!(!s.shop.store().join("server").exists());
    // SIGKILL leaves the entry behind; commands see no server answer and run here.
    let (server, address) = s.shop.serve(&[]);
    s.server = server;
    s.address = address;
    signal(&s.server, "KILL");
    let _ = s.server.wait();
    assert!(s.shop.store().join("server").exists());
    s.shop.commit("after", &["+orders(5, 1, 1)"]);
    assert_eq!(s.shop.log()[0]["message"], "after");
}

/// One malformed or odd request.
fn noisy_request(noise: &mut Rng) -> Vec<u8> {
    let methods = ["GET", "POST", "PUT", "DELETE", "BREW", "", "GET /"];
    let paths = [
        "/",
        "/api/status",
        "/api/log?n=-1",
        "/api/log?n=99999999999999999999",
        "/api/relations/orders?limit=x",
        "/api/relations/%ff%fe",
        "/api/diff?from=HEAD~999",
        "/api/commit?message=",
        "/api/sql",
        "/api/cli",
        "/api/subscribe/orders?since=zz",
        "/commit/HEAD~1",
        "/relation/orders?order=nope",
        "/relation/orders?offset=-3",
        "/diff?from=..&to=../../etc",
        "/explain/orders",
        "/../../etc/passwd",
        "/verify?at=%00",
        "*",
        "",
    ];
    let bodies: [&[u8]; 7] = [
        b"",
        b"+orders(1, 2, 3)\n",
        b"+orders(1, 2\n",
        b"{\"argv\": [\"rnt\", \"gc\"], \"inputs\": []}\n",
        b"{\"argv\": [\"rnt\", \"status\"], \"inputs\": [[\"-\", 99]]}\n",
        b"SELECT * FROM orders; DROP TABLE orders",
        b"\xff\xfe\x00garbage",
    ];
    let mut out = format!(
        "{} {} HTTP/1.1\r\nHost: x\r\n",
        methods[noise.index(methods.len())],
        paths[noise.index(paths.len())]
    )
    .into_bytes();
    let body = bodies[noise.index(bodies.len())];
    match noise.below(5) {
        0 => out.extend_from_slice(format!("Content-Length: {}\r\n", body.len() + 10).as_bytes()),
        1 => out.extend_from_slice(b"Content-Length: -1\r\n"),
        2 => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        _ => out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes()),
    }
    if noise.below(3) == 0 {
        out.extend_from_slice(b"Authorization: Bearer nonsense\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    if noise.below(4) == 0 {
        let cut = noise.index(out.len().max(1));
        out.truncate(cut);
        for _ in 0..noise.below(40) {
            out.push(u8::try_from(noise.below(256)).unwrap());
        }
    }
    out
}

#[test]
fn malformed_requests_never_stop_the_server_nor_change_the_store_unasked() {
    let s = served(&[]);
    let requests = env_count("RNT_SERVE_FUZZ_REQUESTS", 300);
    let mut noise = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..requests {
        let bytes = noisy_request(&mut noise);
        let mut stream = TcpStream::connect(&s.address).expect("the server still listens");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let _ = stream.write_all(&bytes);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut answer = Vec::new();
        // An answer, or the connection dropped: never a hang (the read times out).
        let read = stream.read_to_end(&mut answer);
        assert!(
            read.is_ok(),
            "no answer within 20 s to {:?}",
            String::from_utf8_lossy(&bytes)
        );
        if answer.starts_with(b"HTTP/1.1 5") {
            panic!(
                "a server error for {:?}: {}",
                String::from_utf8_lossy(&bytes),
                String::from_utf8_lossy(&answer)
            );
        }
    }
    assert_eq!(get(&s.address, "/api/status").status, 200);
    assert_eq!(get(&s.address, "/api/verify").json()["ok"], true);
    s.shop.ok(&["--no-server", "fsck"]);
}

#[test]
fn readers_and_writers_at_once_lose_nothing() {
    let s = served(&[]);
    let seconds = env_count("RNT_SERVE_LOAD_SECONDS", 3);
    let readers = env_count("RNT_SERVE_READERS", 16);
    let writers = env_count("RNT_SERVE_WRITERS", 4);
    let end = Instant::now() + Duration::from_secs(seconds);
    let acknowledged = std::sync::Mutex::new(Vec::new());
    let errors = std::sync::atomic::AtomicU64::new(0);
    let secret = s.secret();
    std::thread::scope(|scope| {
        for _ in 0..readers {
            scope.spawn(|| {
                while Instant::now() < end {
                    if get(&s.address, "/api/status").status != 200 {
                        errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
        for writer in 0..writers {
            let (acknowledged, errors, address) = (&acknowledged, &errors, &s.address);
            let secret = &secret;
            scope.spawn(move || {
                let mut n = 0;
                while Instant::now() < end {
                    let id = 1000 * (writer + 1) + n;
                    let message = format!("w{writer}-{n}");
                    let answer = request(
                        address,
                        "POST",
                        &format!("/api/commit?message={message}"),
                        Some(secret),
                        format!("+orders({id}, {writer}, 1)\n").as_bytes(),
                    );
                    match answer.status {
                        200 => acknowledged.lock().unwrap().push(message),
                        _ => {
                            errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                    n += 1;
                }
            });
        }
    });
    assert_eq!(errors.into_inner(), 0);
    let acknowledged = acknowledged.into_inner().unwrap();
    assert!(!acknowledged.is_empty());
    let log = s.shop.log();
    let messages: BTreeSet<&str> = log.iter().map(|c| c["message"].as_str().unwrap()).collect();
    for message in &acknowledged {
        assert!(messages.contains(message.as_str()), "lost {message}");
    }
    assert_eq!(
        log.len(),
        acknowledged.len() + 2,
        "a linear history of every commit"
    );
    assert!(log
        .iter()
        .all(|c| c["parents"].as_array().unwrap().len() <= 1));
    s.shop.ok(&["verify"]);
}

#[test]
fn a_server_killed_mid_commit_keeps_every_acknowledged_commit() {
    let mut s = served(&[]);
    let kills = env_count("RNT_SERVE_KILLS", 4);
    let mut acknowledged = Vec::new();
    let mut noise = Rng(0x1234_5678_9abc_def1);
    for round in 0..kills {
        let address = s.address.clone();
        let committer = std::thread::spawn(move || {
            let mut kept = Vec::new();
            for n in 0.. {
                let message = format!("k{round}-{n}");
                let body = format!("+orders({}, 1, 1)\n", 100_000 * (round + 1) + n);
                let Ok(mut stream) = TcpStream::connect(&address) else {
                    break;
                };
                let head = format!(
                    "POST /api/commit?message={message} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                if stream
                    .write_all(head.as_bytes())
                    .and_then(|()| stream.write_all(body.as_bytes()))
                    .is_err()
                {
                    break;
                }
                let mut answer = String::new();
                if stream.read_to_string(&mut answer).is_err()
                    || !answer.starts_with("HTTP/1.1 200")
                {
                    break;
                }
                kept.push(message);
            }
            kept
        });
        std::thread::sleep(Duration::from_millis(50 + noise.next() % 300));
        signal(&s.server, "KILL");
        let _ = s.server.wait();
        acknowledged.extend(committer.join().unwrap());
        let (server, address) = s.shop.serve(&[]);
        s.server = server;
        s.address = address;
    }
    let messages: BTreeSet<String> = s
        .shop
        .log()
        .iter()
        .map(|c| c["message"].as_str().unwrap().to_string())
        .collect();
    for message in &acknowledged {
        assert!(
            messages.contains(message),
            "lost acknowledged commit {message}"
        );
    }
    s.shop.ok(&["--no-server", "fsck"]);
    s.shop.ok(&["verify"]);
}

#[test]
fn on_an_s3_store_commands_go_through_the_server_too() {
    let Some(url) = rnt_store_testkit::s3::fresh_location("serve") else {
        return;
    };
    let shop = Shop::bare();
    shop.ok(&["--store", &url, "init"]);
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["--store", &url, "define", "p.rnt"]);
    let (server, address) = shop.serve(&["--store", &url]);
    let mut server = server;
    shop.ok(&[
        "--store",
        &url,
        "commit",
        "-m",
        "through",
        "+orders(1, 7, 30)",
    ]);
    let status = get(&address, "/api/status").json();
    assert_eq!(status["relations"][0]["count"], 1, "{status}");
    // Proof that commands go through it: with the server stopped (SIGSTOP), a command
    // waits for it, while --no-server answers at once.
    signal(&server, "STOP");
    let mut waiting = shop
        .command(&["--store", &url, "status"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "the command did not wait for the server"
    );
    shop.ok(&["--store", &url, "--no-server", "status"]);
    signal(&server, "CONT");
    assert!(waiting.wait().unwrap().success());
    // SIGTERM takes the entry away: commands run here again, and a clone names no server.
    signal(&server, "TERM");
    assert!(server.wait().unwrap().success());
    shop.ok(&["--store", &url, "commit", "-m", "here", "+orders(2, 7, 5)"]);
    let log: Vec<serde_json::Value> =
        serde_json::from_str(&shop.ok(&["--store", &url, "log", "--format", "json"])).unwrap();
    let messages: Vec<&str> = log.iter().map(|c| c["message"].as_str().unwrap()).collect();
    assert_eq!(messages, ["here", "through", "define p.rnt"]);
}

#[test]
fn a_subscription_follows_the_branch_it_names() {
    let s = served(&[]);
    let from = s.shop.head().unwrap();
    s.shop.ok(&["branch", "side"]);
    s.shop.commit("on main", &["+orders(5, 9, 1)"]);
    s.shop.ok(&["switch", "side"]);
    s.shop.commit("on side", &["+orders(6, 8, 2)"]);
    let side = s.shop.head().unwrap();
    s.shop.ok(&["switch", "main"]);
    let mut stream = subscribe(&s.address, "per_customer", &format!("{from}&branch=side"));
    let events = read_events(&mut stream, 1);
    assert_eq!(events[0].0, side);
    assert_eq!(
        events[0].1["changes"],
        serde_json::json!([["+", [8, 2, 1]]])
    );
}

/// Polls `address`'s status until it names commit `commit`; returns how long that took.
fn until_seen(address: &str, commit: &str, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let status = get(address, "/api/status").json();
        if status["commit"].as_str() == Some(commit) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "{address} still shows {} after {within:?}, not {commit}",
            status["commit"]
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn read_replicas_on_one_bucket_follow_the_writing_server() {
    let Some(url) = rnt_store_testkit::s3::fresh_location("replicas") else {
        return;
    };
    // Three working folders: the writer's, and one for each replica.
    let writer = Shop::bare();
    writer.ok(&["--store", &url, "init"]);
    writer.write("p.rnt", PROGRAM);
    writer.ok(&["--store", &url, "define", "p.rnt"]);
    let (writer_server, writer_address) = writer.serve(&["--store", &url]);
    let first = Shop::bare();
    let (first_server, first_address) = first.serve(&["--store", &url, "--read-only"]);
    let second = Shop::bare();
    let (second_server, second_address) = second.serve(&["--store", &url, "--read-only"]);
    let _servers = [writer_server, first_server, second_server].map(Killed);
    let start = get(&first_address, "/api/status").json()["commit"]
        .as_str()
        .unwrap()
        .to_string();
    let mut events = subscribe(&first_address, "per_customer", &start);
    let mut commits = Vec::new();
    let mut slowest = Duration::ZERO;
    for n in 0..4 {
        // Through the writing server: the entry in the bucket names it.
        let mut commit = writer.command(&[
            "--store",
            &url,
            "commit",
            "-m",
            &format!("c{n}"),
            &format!("+orders({n}, 7, {n})"),
        ]);
        let done = commit.env("RNT_REQUIRE_SERVER", &url).output().unwrap();
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let head = get(&writer_address, "/api/status").json()["commit"]
            .as_str()
            .unwrap()
            .to_string();
        for replica in [&first_address, &second_address] {
            slowest = slowest.max(until_seen(replica, &head, Duration::from_secs(1)));
        }
        commits.push(head);
    }
    eprintln!("the replicas saw each commit within {slowest:?}");
    // The replica's subscriber got every commit once, in order.
    let got: Vec<String> = read_events(&mut events, commits.len())
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(got, commits);
    // A write to a replica is refused, by HTTP and by Postgres, and changes nothing.
    let refused = request(
        &first_address,
        "POST",
        "/api/commit?message=x",
        None,
        b"+orders(99, 1, 1)\n",
    );
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("read-only"), "{}", refused.body);
    assert_eq!(
        get(&second_address, "/api/status").json()["commit"].as_str(),
        commits.last().map(String::as_str)
    );
}

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
