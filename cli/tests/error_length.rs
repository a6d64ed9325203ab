//! Guards the contract that an error quotes at most ~80 characters of input around the
//! fault: every command `rnt --help` lists is run with huge inputs — a 20,000-character
//! name, ref, value, tuple, rule, program line, change-file line, CSV field or header,
//! path, URL or option value — and its stderr must stay short and hold no stretch of the
//! input longer than the quote allows. A command missing from the cases below fails the
//! test, so a new command comes with its own.

mod common;

use common::{Rng, Shop, SHOP};
use std::collections::BTreeSet;

/// Characters of each huge input.
const HUGE_CHARS: usize = 20_000;

/// The longest stretch of the input stderr may hold: the ~80 characters quoted around the
/// fault, with room for the quote's own ends.
const QUOTED_MAX: usize = 100;

/// The most stderr may hold: one error line, or a program error's snippets (at most ten,
/// each quoting at most ~80 characters of a line).
const STDERR_BYTES_MAX: usize = 4_096;

/// A huge input: random lowercase letters (any stretch of 20 is unique to its place),
/// starting with a letter so it reads as a name.
fn huge(rng: &mut Rng) -> String {
    (0..HUGE_CHARS)
        .map(|_| char::from(b'a' + u8::try_from(rng.below(26)).unwrap()))
        .collect()
}

/// A huge input of short words: what only a quote cut around the fault keeps short (a
/// word-by-word cut would not).
fn huge_words(rng: &mut Rng) -> String {
    let mut text = String::new();
    while text.len() < HUGE_CHARS {
        let word: String = (0..3 + rng.below(5))
            .map(|_| char::from(b'a' + u8::try_from(rng.below(26)).unwrap()))
            .collect();
        text.push_str(&word);
        text.push(' ');
    }
    text.trim_end().to_string()
}

/// Command lines that feed `w`, a huge input of short words, where it could be quoted
/// whole: a tuple's string, a value list, a rule, a program line, a CSV field, and a
/// program of many errors.
fn word_cases(shop: &Shop, w: &str) -> Vec<(&'static str, Vec<String>)> {
    let dup = format!("+customers(7, \"{w}\")");
    let values = w.split(' ').map(|_| "1").collect::<Vec<_>>().join(", ");
    shop.write(
        "words.rnt",
        &format!("{SHOP}view v(x: int).\nv(x) :- orders(x, _, _), x > {w}.\n"),
    );
    let many: String = w
        .split(' ')
        .take(2000)
        .enumerate()
        .map(|(i, name)| format!("view {name}{i}(x: int).\n{name}{i}(y) :- orders(x, _, _).\n"))
        .collect();
    shop.write("many.rnt", &format!("{SHOP}{many}"));
    shop.write("words.csv", &format!("id,customer,amount\n1,2,{w}\n"));
    shop.write("wide.csv", &format!("id,customer,amount\n1,2,3,{values}\n"));
    [
        vec!["commit", "-m", "x", &dup, &dup],
        vec!["commit", "-m", "x", &format!("+orders({values})")],
        vec!["commit", "-m", "x", &format!("+customers(8, {w})")],
        vec!["query", &format!("q(x) :- orders(x, _, _), x > {w}.")],
        vec!["sql", &format!("SELECT id FROM orders WHERE {w}")],
        vec!["define", "words.rnt"],
        vec!["define", "many.rnt"],
        vec!["import", "orders", "words.csv"],
        vec!["import", "orders", "wide.csv"],
    ]
    .into_iter()
    .map(|line| ("(words)", line.into_iter().map(str::to_string).collect()))
    .collect()
}

/// The longest stretch of `input` that `output` holds (by windows of `QUOTED_MAX + 1`).
fn quotes_too_much(output: &str, input: &str) -> bool {
    let bytes = input.as_bytes();
    bytes
        .windows(QUOTED_MAX + 1)
        .step_by(QUOTED_MAX / 2)
        .any(|window| output.contains(std::str::from_utf8(window).unwrap()))
}

/// The commands `rnt --help` lists.
fn commands(shop: &Shop) -> BTreeSet<String> {
    let help = shop.ok(&["--help"]);
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// A store with the shop program, a view, a few commits, a branch and a remote.
fn shop() -> Shop {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        &format!("{SHOP}view per_customer(customer: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n"),
    );
    shop.ok(&["define", "p.rnt"]);
    shop.commit("one", &["+orders(1, 1, 10)", "+customers(1, \"basic\")"]);
    shop.ok(&["branch", "side"]);
    let remote = shop.dir().join("remote");
    shop.ok(&[
        "clone",
        shop.store().to_str().unwrap(),
        remote.to_str().unwrap(),
    ]);
    shop.ok(&["remote", "add", "origin", remote.to_str().unwrap()]);
    shop
}

/// Each command with the command lines that feed it `h`, a huge input; files it reads are
/// written first.
fn cases(shop: &Shop, h: &str) -> Vec<(&'static str, Vec<String>)> {
    let dup = format!("+customers(7, \"{h}\")");
    shop.write("huge.rnt", &format!("relation {h}(a: int).\n"));
    shop.write(
        "line.rnt",
        &format!("{SHOP}view v(x: int).\nv(x) :- orders(x, _, _), x > {h}.\n"),
    );
    shop.write("huge.changes", &format!("+orders(1, 2, {h})\n"));
    shop.write("dup.changes", &format!("{dup}\n{dup}\n"));
    shop.write("field.csv", &format!("id,customer,amount\n1,2,{h}\n"));
    shop.write("header.csv", &format!("id,customer,{h}\n1,2,3\n"));
    let owned = |lines: &[&[&str]]| -> Vec<Vec<String>> {
        lines
            .iter()
            .map(|l| l.iter().map(|s| s.to_string()).collect())
            .collect()
    };
    let mut out = Vec::new();
    let mut add = |command: &'static str, lines: Vec<Vec<String>>| {
        out.extend(lines.into_iter().map(|line| (command, line)));
    };
    add(
        "init",
        owned(&[&["init", "--backend", h], &["--store", h, "init"]]),
    );
    add(
        "define",
        owned(&[
            &["define", "huge.rnt"],
            &["define", "line.rnt"],
            &["define", h],
        ]),
    );
    add(
        "commit",
        owned(&[
            &["commit", "-m", "x", &format!("+orders(1, 2, {h})")],
            &["commit", "-m", "x", &format!("+{h}(1)")],
            &["commit", "-m", "x", &dup, &dup],
            &["commit", "-m", "x", "-f", "huge.changes"],
            &["commit", "-m", "x", "-f", "dup.changes"],
            &["commit", "-m", h, "+orders(1, 2, \"no\")"],
        ]),
    );
    add(
        "import",
        owned(&[
            &["import", "orders", "field.csv"],
            &["import", "orders", "header.csv"],
            &["import", h, "field.csv"],
            &["import", "orders", h],
            &["import", "orders", "field.csv", "--delimiter", h],
        ]),
    );
    add("log", owned(&[&["log", h], &["log", "--relation", h]]));
    add(
        "show",
        owned(&[&["show", h], &["show", "orders", "--at", h]]),
    );
    add(
        "query",
        owned(&[
            &["query", &format!("q(x) :- orders(x, _, _), x > {h}.")],
            &["query", h],
        ]),
    );
    add(
        "sql",
        owned(&[
            &["sql", &format!("SELECT {h} FROM orders")],
            &["sql", &format!("SELECT * FROM orders WHERE id = '{h}'")],
            &["sql", h],
            &["sql", "SELECT 1", "--at", h],
        ]),
    );
    add(
        "diff",
        owned(&[&["diff", h, "HEAD"], &["diff", "HEAD", "HEAD", h]]),
    );
    add(
        "explain",
        owned(&[&["explain", h], &["explain", "per_customer", "--at", h]]),
    );
    add("program", owned(&[&["program", "--at", h]]));
    add("verify", owned(&[&["verify", "--at", h]]));
    add(
        "fsck",
        owned(&[&["fsck", "--repair", "--from", h], &["fsck", "--format", h]]),
    );
    add("status", owned(&[&["status", "--format", h]]));
    add(
        "branch",
        owned(&[&["branch", h], &["branch", "x", h], &["branch", "-d", h]]),
    );
    add("switch", owned(&[&["switch", h]]));
    add(
        "tag",
        owned(&[&["tag", h], &["tag", "x", h], &["tag", "-d", h]]),
    );
    add("reset", owned(&[&["reset", h]]));
    add("revert", owned(&[&["revert", h]]));
    add(
        "merge",
        owned(&[&["merge", h], &["merge", "main", "--resolve", h]]),
    );
    add(
        "serve",
        owned(&[
            &["serve", "--http", h],
            &["serve", "--token-file", h],
            &["serve", "--pg", h],
        ]),
    );
    add(
        "why",
        owned(&[
            &["why", h],
            &["why", &format!("orders(1, 2, \"{h}\")")],
            &["why", &format!("per_customer({h})")],
            &["why", "orders(1, 2, 3)", "--at", h],
            &["why", "orders(1, 2, 3)", "--limit", h],
        ]),
    );
    add(
        "blame",
        owned(&[
            &["blame", h],
            &["blame", "orders", &format!("orders({h})")],
            &["blame", "orders", "--at", h],
        ]),
    );
    add(
        "alter",
        owned(&[
            &["alter", h, "add", "x", "int?"],
            // Not names (a valid one would apply and change the store under later cases).
            &["alter", "orders", "add", &format!("{h}-"), "int?"],
            &["alter", "orders", "add", "x", h],
            &["alter", "orders", "add", "x", "int", "--default", h],
            &[
                "alter",
                "orders",
                "add",
                "x",
                "str",
                "--default",
                &format!("\"{h}"),
            ],
            &["alter", "orders", "drop", h],
            &["alter", "orders", "rename", h, "x"],
            &["alter", "orders", "rename", "amount", &format!("{h}-")],
            &["alter", "orders", "rename-to", &format!("{h}-")],
            &["alter", "orders", "type", h, "int?"],
            &["alter", "orders", "type", "amount", h],
            &["alter", "orders", "key", h],
            &["alter", "-m", h, "orders", "add", "x", "int"],
            &["alter", "orders", h],
        ]),
    );
    add("reflog", owned(&[&["reflog", "-n", h]]));
    add(
        "remote",
        owned(&[
            &["remote", "add", h, "/nowhere"],
            &["remote", "add", "x", h],
            &["remote", "remove", h],
        ]),
    );
    add(
        "clone",
        owned(&[&["clone", h], &["clone", &format!("s3://{h}")]]),
    );
    add("fetch", owned(&[&["fetch", h]]));
    add("push", owned(&[&["push", h], &["push", "origin", h]]));
    add("pull", owned(&[&["pull", h], &["pull", "origin", h]]));
    add("gc", owned(&[&["gc", "--format", h]]));
    add("demo", owned(&[&["demo", h]]));
    out.extend(
        [
            vec![
                "--memory-budget".to_string(),
                h.to_string(),
                "status".to_string(),
            ],
            vec!["--store".to_string(), h.to_string(), "status".to_string()],
            vec![h.to_string()],
        ]
        .into_iter()
        .map(|line| ("(global)", line)),
    );
    out
}

#[test]
fn every_command_quotes_little_of_a_huge_input() {
    let shop = shop();
    let mut rng = Rng(0xe770);
    let h = huge(&mut rng);
    let w = huge_words(&mut rng);
    let mut cases = cases(&shop, &h);
    cases.extend(word_cases(&shop, &w));
    let covered: BTreeSet<String> = cases.iter().map(|(c, _)| c.to_string()).collect();
    let missing: Vec<String> = commands(&shop).difference(&covered).cloned().collect();
    assert!(
        missing.is_empty(),
        "commands without a huge-input case: {missing:?}"
    );
    let mut failures = Vec::new();
    let mut longest = 0;
    for (command, line) in &cases {
        let args: Vec<&str> = line.iter().map(String::as_str).collect();
        let run = shop.run(&args);
        longest = longest.max(run.stderr.len());
        let shown: Vec<String> = args
            .iter()
            .map(|a| a.replace(h.as_str(), "HUGE").replace(w.as_str(), "WORDS"))
            .collect();
        let too_much = quotes_too_much(&run.stderr, &h) || quotes_too_much(&run.stderr, &w);
        if run.stderr.len() > STDERR_BYTES_MAX || too_much {
            failures.push(format!(
                "{command}: `rnt {}` wrote {} bytes to stderr: {}",
                shown.join(" "),
                run.stderr.len(),
                run.stderr.chars().take(300).collect::<String>()
            ));
        }
        assert_ne!(
            run.code,
            70,
            "`rnt {}` hit an internal error: {}",
            shown.join(" "),
            run.stderr
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs quote too much:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!(
        "error length: {} runs over {} commands, the longest stderr {longest} bytes",
        cases.len(),
        covered.len()
    );
}
