//! `rnt demo`: a walk through rnt in a temporary store. Each step is printed as the shell
//! command a user would type (`$ rnt ...`), then its output, so the transcript doubles as
//! a tutorial. The store and files live in a fresh folder under the system's temporary
//! folder, removed at the end unless `--keep`.

use crate::{execute, parse_args};
use anyhow::Context as _;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `rnt demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the demo folder (its path is printed) instead of removing it.
    #[arg(long)]
    keep: bool,
}

/// The demo's program.
const PROGRAM: &str = "\
# A shop: customers on plans, and their orders.
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).

# Materialized views, maintained at every commit from the changes alone.
view order_plan(id: int, plan: str).
view plan_total(plan: str, total: int, n: int).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).

# Must stay empty: every order's customer exists.
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
";

/// The second commit's change file: an update (`-old`, `+new`) and two inserts.
const CHANGES: &str = "\
# order 2 grows; a new customer orders
-orders(2, 2, 250)
+orders(2, 2, 275)
+customers(3, \"pro\")
+orders(3, 3, 990)
";

/// One step of the demo: a command line to run, or a file to show.
enum Step {
    Run(&'static [&'static str]),
    /// A command expected to fail: its error is shown as part of the transcript.
    Fail(&'static [&'static str]),
    Cat(&'static str),
}

const STEPS: &[Step] = &[
    Step::Run(&["init"]),
    Step::Cat("shop.rnt"),
    Step::Run(&["define", "shop.rnt"]),
    Step::Run(&[
        "commit",
        "-m",
        "first customers and orders",
        "+customers(1, \"free\")",
        "+customers(2, \"pro\")",
        "+orders(1, 1, 30)",
        "+orders(2, 2, 250)",
    ]),
    Step::Cat("changes.txt"),
    Step::Run(&[
        "commit",
        "-m",
        "order 2 grows; customer 3 joins",
        "-f",
        "changes.txt",
    ]),
    Step::Fail(&["commit", "-m", "a typo", "+orders(4, \"three\", 10)"]),
    Step::Fail(&["commit", "-m", "an order for nobody", "+orders(4, 9, 10)"]),
    Step::Run(&["log"]),
    Step::Run(&["show", "orders"]),
    Step::Run(&["show", "orders", "--at", "HEAD~1"]),
    Step::Run(&["show", "plan_total"]),
    Step::Run(&["show", "customers", "--format", "csv"]),
    Step::Run(&["diff", "HEAD~1", "HEAD"]),
    Step::Run(&["diff", "HEAD~1", "HEAD", "plan_total"]),
    Step::Run(&["status"]),
    Step::Run(&["status", "--format", "json"]),
    Step::Run(&["verify"]),
];

/// Runs the demo.
pub fn run(args: DemoArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let folder = demo_folder()?;
    let original = std::env::current_dir().context("cannot read the current folder")?;
    let cleanup = Cleanup {
        folder: folder.clone(),
        original,
        keep: args.keep,
    };
    std::fs::write(folder.join("shop.rnt"), PROGRAM)?;
    std::fs::write(folder.join("changes.txt"), CHANGES)?;
    // Commands name files relative to the demo folder, as the transcript shows them.
    std::env::set_current_dir(&folder)
        .with_context(|| format!("cannot enter {}", folder.display()))?;
    writeln!(out, "# rnt demo in {}", folder.display())?;
    for step in STEPS {
        writeln!(out)?;
        match step {
            Step::Cat(file) => {
                writeln!(out, "$ cat {file}")?;
                write!(out, "{}", std::fs::read_to_string(file)?)?;
            }
            Step::Run(words) | Step::Fail(words) => {
                writeln!(
                    out,
                    "$ rnt {}",
                    words
                        .iter()
                        .map(|w| shell_quote(w))
                        .collect::<Vec<_>>()
                        .join(" ")
                )?;
                let cli = parse_args(std::iter::once("rnt").chain(words.iter().copied()))
                    .map_err(|e| anyhow::anyhow!("demo step does not parse: {e}"))?;
                match (execute(cli, out), step) {
                    (Ok(()), Step::Run(_)) => {}
                    (Err(error), Step::Fail(_)) => {
                        write!(out, "{}", crate::output::error_text(&error))?;
                        writeln!(
                            out,
                            "# exit status {}; nothing was committed",
                            crate::exit_code(&error)
                        )?;
                    }
                    (Ok(()), _) => {
                        anyhow::bail!("demo step `{}` should have failed", words.join(" "))
                    }
                    (Err(error), _) => {
                        return Err(error.context(format!("demo step `rnt {}`", words.join(" "))))
                    }
                }
            }
        }
    }
    writeln!(out)?;
    if args.keep {
        writeln!(
            out,
            "# kept the demo folder: cd {} to try more commands",
            folder.display()
        )?;
    }
    drop(cleanup);
    Ok(())
}

/// A new, empty folder under the system's temporary folder.
fn demo_folder() -> anyhow::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let folder = std::env::temp_dir().join(format!("rnt-demo-{}-{nanos:09}", std::process::id()));
    std::fs::create_dir(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    Ok(folder)
}

/// Returns to the original folder and removes the demo folder (unless kept), also when a
/// step fails.
struct Cleanup {
    folder: PathBuf,
    original: PathBuf,
    keep: bool,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::env::set_current_dir(&self.original);
        if !self.keep {
            remove_folder(&self.folder);
        }
    }
}

fn remove_folder(folder: &Path) {
    // The store is closed by now (each step drops its handle); sled's threads may hold
    // files for a few more milliseconds, which removal does not mind on Unix.
    let _ = std::fs::remove_dir_all(folder);
}

/// `word` as a POSIX shell would need it written: bare when it is safe, otherwise in
/// single quotes.
fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:~,+@%".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("HEAD~1"), "HEAD~1");
        assert_eq!(shell_quote("+orders(1, 1, 30)"), "'+orders(1, 1, 30)'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
