//! The web view in a real headless Chromium (Debian's `chromium`; `.ci/run` installs it):
//! the commit graph loads, a commit's link leads to its page and its diff with a view's
//! change shown, a 100,000-row relation pages forward by its "next page" links, and a
//! commit made through the API appears on the next load. Each page is what Chromium
//! rendered (`--dump-dom`); links are followed by their `href` in that DOM. A screenshot of
//! the commit page is kept in `target/browser/commit.png`.
//!
//! `RNT_CHROMIUM` names the browser (default `chromium`); without one the test fails saying
//! so, unless `RNT_SKIP_BROWSER_TESTS=1` skips it (loudly).

mod common;

use common::Shop;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Rows of the big relation.
const ROWS: usize = 100_000;

/// The browser to drive, or `None` when the test is to be skipped.
fn chromium() -> Option<String> {
    if std::env::var_os("RNT_SKIP_BROWSER_TESTS").is_some() {
        eprintln!("SKIPPED: the browser test (RNT_SKIP_BROWSER_TESTS is set)");
        return None;
    }
    let browser = std::env::var("RNT_CHROMIUM").unwrap_or_else(|_| "chromium".to_string());
    let found = Command::new(&browser).arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "no `{browser}` here: install Debian's chromium (.ci/run does), set RNT_CHROMIUM, or RNT_SKIP_BROWSER_TESTS=1"
    );
    Some(browser)
}

/// Chromium's flags for a headless run on a closed machine, with a fresh profile in `profile`.
fn flags(profile: &Path) -> Vec<String> {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1200,900",
    ]
    .iter()
    .map(|f| f.to_string())
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect()
}

/// The DOM Chromium rendered for `url`.
fn render(browser: &str, profile: &Path, url: &str) -> String {
    let output = Command::new(browser)
        .args(flags(profile))
        .args(["--dump-dom", url])
        .output()
        .expect("run chromium");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The `href` of the first link in `dom` whose opening tag holds `marker` (after `after`).
fn link(dom: &str, after: &str, marker: &str) -> String {
    let from = dom
        .find(after)
        .unwrap_or_else(|| panic!("no {after:?} in the page"));
    let rest = &dom[from..];
    let tag_start = rest
        .match_indices("<a ")
        .map(|(i, _)| i)
        .find(|&i| {
            rest[i..]
                .split('>')
                .next()
                .is_some_and(|tag| tag.contains(marker))
        })
        .unwrap_or_else(|| panic!("no link marked {marker:?} after {after:?}"));
    let tag = rest[tag_start..].split('>').next().unwrap();
    let href = tag
        .split("href=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    href.replace("&amp;", "&")
}

/// The text of the first `<td>` after `after`.
fn first_cell_after(dom: &str, after: &str) -> String {
    let rest = &dom[dom.find(after).expect("the marker")..];
    let cell = rest.split("<td>").nth(1).expect("a cell");
    cell.split("</td>").next().unwrap().to_string()
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/browser");
    std::fs::create_dir_all(&dir).expect("artifact folder");
    dir
}

#[test]
fn the_web_view_in_a_real_browser() {
    let Some(browser) = chromium() else { return };
    let shop = Shop::bare();
    shop.ok(&["init"]);
    shop.write(
        "p.rnt",
        "relation orders(id: int, customer: int, amount: int) key(id).\n\
         view per_customer(customer: int, total: int).\n\
         per_customer(c, sum(a)) :- orders(_, c, a).\n",
    );
    shop.ok(&["define", "p.rnt"]);
    let mut csv = String::from("id,customer,amount\n");
    for id in 1..=ROWS {
        csv.push_str(&format!("{id},{},{}\n", id % 50, id % 7));
    }
    shop.write("orders.csv", &csv);
    shop.ok(&[
        "import",
        "orders",
        "orders.csv",
        "-m",
        "a hundred thousand orders",
    ]);
    shop.commit("a big order", &["+orders(100001, 3, 1000)"]);
    let head = shop.head().unwrap();
    let (server, address) = shop.serve(&[]);
    let _server = Stopped(server);
    let base = format!("http://{address}");
    let profile = tempfile::tempdir().unwrap();
    let profile = profile.path();

    // The commit graph, with the head commit linked.
    let index = render(&browser, profile, &format!("{base}/"));
    assert!(index.contains("<h2 id=\"graph\">Commits</h2>"), "{index}");
    assert!(
        index.contains("a big order") && index.contains(&head[..12]),
        "{index}"
    );

    // Follow the head commit to its page: the view's change is there, counted and listed.
    let commit_href = link(&index, "<h2 id=\"graph\">", &format!("/commit/{head}"));
    let commit = render(&browser, profile, &format!("{base}{commit_href}"));
    assert!(commit.contains("<caption>views</caption>"), "{commit}");
    assert!(commit.contains("+per_customer(3, "), "{commit}");
    assert!(commit.contains("-per_customer(3, "), "{commit}");
    let status = Command::new(&browser)
        .args(flags(profile))
        .arg(format!(
            "--screenshot={}",
            artifacts().join("commit.png").display()
        ))
        .arg(format!("{base}{commit_href}"))
        .output()
        .unwrap();
    assert!(status.status.success());
    // …and on to its diff, views included.
    let diff_href = link(&commit, "<h2>Tuples</h2>", "/diff?");
    let diff = render(&browser, profile, &format!("{base}{diff_href}"));
    assert!(diff.contains("+orders(100001, 3, 1000)"), "{diff}");
    assert!(
        diff.contains("<td>per_customer</td><td>view</td>"),
        "{diff}"
    );

    // Page through the 100,000 rows by the next-page links.
    let mut page = render(
        &browser,
        profile,
        &format!("{base}/relation/orders?at={head}"),
    );
    assert!(page.contains("of 100001"), "{page}");
    for expected_first in [101, 201, 301] {
        let next = link(&page, "aria-label=\"pages\"", "rel=\"next\"");
        page = render(&browser, profile, &format!("{base}{next}"));
        assert_eq!(
            first_cell_after(&page, "<tbody>"),
            expected_first.to_string()
        );
    }

    // A commit through the API appears on the next load.
    let authorization = format!("Authorization: Bearer {}", shop.server_secret());
    let api = Command::new("curl")
        .args([
            "-sf",
            "-X",
            "POST",
            "-H",
            &authorization,
            "--data-binary",
            "+orders(100002, 1, 1)",
        ])
        .arg(format!(
            "{base}/api/commit?message=seen%20in%20the%20browser"
        ))
        .output();
    match api {
        Ok(output) if output.status.success() => {}
        _ => {
            // No curl: commit through the CLI, which goes through the server too.
            shop.commit("seen in the browser", &["+orders(100002, 1, 1)"]);
        }
    }
    let index = render(&browser, profile, &format!("{base}/"));
    assert!(index.contains("seen in the browser"), "{index}");
}

/// A server stopped when the test ends, however it ends.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A site the user visits, served by Python on another port: `/form` submits a text/plain
/// form to rnt whose body is a valid change file (`+orders(666, 6, 6)`, then `#=` as a
/// comment), `/fetch` POSTs to rnt with `fetch` and then tells its own server (`POST
/// /done`, recorded in `done`) that rnt answered.
fn evil_site(rnt: &str, done: &Path) -> (std::process::Child, String) {
    let script = r#"
import http.server, socketserver, sys
rnt, done = sys.argv[1], sys.argv[2]
FORM = ('<form method="post" enctype="text/plain" action="http://%s/api/commit?message=evil">'
        '<input name="+orders(666, 6, 6)&#10;#" value=""></form>'
        '<script>document.forms[0].submit()</script>') % rnt
FETCH = ('<script>fetch("http://%s/api/sql", {method: "POST", mode: "no-cors", '
         'headers: {"Content-Type": "text/plain"}, body: "INSERT INTO orders VALUES (667, 6, 6)"})'
         '.then(() => fetch("/done", {method: "POST"}))</script>') % rnt
class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def do_GET(self):
        page = FORM if self.path == "/form" else FETCH
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(page.encode())
    def do_POST(self):
        open(done, "a").write(self.path + "\n")
        self.send_response(204)
        self.end_headers()
server = socketserver.TCPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;
    let mut child = Command::new("python3")
        .args(["-c", script, rnt])
        .arg(done)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut port = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut port,
    )
    .unwrap();
    (child, format!("http://127.0.0.1:{}", port.trim()))
}

#[test]
fn a_page_of_another_site_cannot_change_the_store() {
    let Some(browser) = chromium() else { return };
    let shop = Shop::bare();
    shop.ok(&["init"]);
    shop.ok(&[
        "sql",
        "CREATE TABLE orders (id INT PRIMARY KEY, customer INT, amount INT)",
    ]);
    let head = shop.head();
    let (server, address) = shop.serve(&[]);
    let _server = Stopped(server);
    let work = tempfile::tempdir().unwrap();
    let done = work.path().join("done");
    let (site, origin) = evil_site(&address, &done);
    let _site = Stopped(site);
    let profile = work.path().join("profile");
    let run = |url: &str| {
        let output = Command::new(&browser)
            .args(flags(&profile))
            .args(["--virtual-time-budget=5000", "--dump-dom", url])
            .output()
            .expect("run chromium");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    // The form's navigation lands on rnt's refusal.
    let landed = run(&format!("{origin}/form"));
    assert!(
        landed.contains("a browser sent this request from another"),
        "{landed}"
    );
    // The fetch reached rnt and came back (the page then told its own server so).
    run(&format!("{origin}/fetch"));
    let told = std::fs::read_to_string(&done).unwrap_or_default();
    assert!(told.contains("/done"), "the page's fetch never completed");
    assert_eq!(
        shop.head(),
        head,
        "a page of another site changed the store"
    );
    assert!(shop
        .ok(&["--no-server", "show", "orders", "--format", "json"])
        .trim()
        .eq("[]"));
}
