//! `rnt`, the command-line tool: parses arguments, runs one subcommand against the store,
//! prints tables, CSV or JSON, and maps errors to exit codes.
//!
//! Exit codes (the contract in `docs/design.md`): 0 success (including "nothing to commit"),
//! 1 a user error (bad input, unknown reference, usage error, store in use), 2 a commit
//! refused by a denial, 3 corruption or a failed verify. Errors go to stderr as one line
//! `error: ...`; program errors print their rendered diagnostics with source snippets.

mod breakdown;
mod cmd;
mod graph;
mod internal;
mod line_diff;
mod memory;
mod output;
mod progress;
mod serve;
mod settings;
mod store_id;
mod store_open;
mod time;

use clap::{Parser, Subcommand};
use rnt_db::DbError;
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Every allocation is counted, so long work can stop at the memory budget.
#[global_allocator]
static ALLOCATOR: memory::CountingAllocator = memory::CountingAllocator;

/// What `rnt --help` says of the column types, after the commands.
const TYPES_HELP: &str = "\
Column types (in declarations: `relation r(id: int, amount: decimal(10, 2), note: str?)`):
  int              i64: -12
  str              UTF-8 text: \"a\\\"b\" in change files
  bool             true, false (CSV also: TRUE True t 1, FALSE False f 0)
  decimal(p, s)    exact, 1 <= p <= 38 digits, s after the point: 12.50 (never rounded)
  date             2013-01-01; date(\"2013-01-01\") in rules
  timestamp        2013-01-01T05:00:00Z (UTC; fraction optional)
  T?               T or null (an empty CSV field); null follows SQL (see the README)";

/// rnt: a content-addressed relational store with history.
#[derive(Debug, Parser)]
#[command(
    name = "rnt",
    version,
    about,
    propagate_version = true,
    after_help = TYPES_HELP
)]
pub struct Cli {
    /// The store folder (what `rnt init` creates), or an object-store URL
    /// (`s3://bucket/prefix`, endpoint and credentials from the AWS_* variables); default:
    /// the nearest `.rnt/` from the current folder upward.
    #[arg(long, global = true, value_name = "PATH|URL")]
    store: Option<PathBuf>,
    /// The most memory a command may use (e.g. 512M, 4G, none); work that needs more stops
    /// with exit 1 and commits nothing. Default: RNT_MEMORY_BUDGET, else half the memory.
    #[arg(long, global = true, value_name = "SIZE")]
    memory_budget: Option<String>,
    /// How many threads a commit maintains views on (views that do not read each other run
    /// at the same time; the states are the same at any count). Default: RNT_THREADS, else
    /// the cores. Through a running server, the server's own setting applies.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// Run here even when `rnt serve` holds the store (by default a command goes through
    /// the running server, which answers as this process would, from its warm state).
    #[arg(long, global = true)]
    no_server: bool,
    /// The subcommand.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Create an empty store (`.rnt/` in the current folder, or at --store PATH).
    Init(cmd::init::InitArgs),
    /// Set or change the program (declarations and rules); makes a commit.
    Define(cmd::define::DefineArgs),
    /// Change a base relation's schema in place (add, drop, rename, rename-to, type, key,
    /// drop-relation), the program rewritten with it; one commit.
    Alter(cmd::alter::AlterArgs),
    /// Commit a set of changes: `+orders(1, 7, 30)` inserts, `-orders(1, 7, 25)` deletes,
    /// `~orders(id: 1, amount: 25)` updates by key.
    Commit(cmd::commit::CommitArgs),
    /// Insert every row of a CSV file (header row = attribute names, in any order) in one
    /// commit.
    Import(cmd::import::ImportArgs),
    /// The history from REF (default HEAD), newest first, first-parent order: commit id,
    /// state hash, time, message, change counts (--graph: every parent, drawn as git draws
    /// it; --all: every branch and tag; --views: view change counts too).
    Log(cmd::log::LogArgs),
    /// The tuples of a relation, in key order (or by --order COL[,COL], a page with --limit
    /// and --offset).
    Show(cmd::show::ShowArgs),
    /// Evaluate ad-hoc rules and print the first head's tuples.
    Query(cmd::query::QueryArgs),
    /// SQL: queries, CREATE TABLE / [MATERIALIZED] VIEW, INSERT, UPDATE, DELETE, BEGIN …
    /// COMMIT; each DDL or DML statement a commit. Without SQL or -f, a prompt.
    Sql(cmd::sql::SqlArgs),
    /// The tuples that differ between two states (or REF's first parent and REF; `REF REL`:
    /// one relation's changes in REF), as a change file; `--program` diffs the programs.
    Diff(cmd::diff::DiffArgs),
    /// How a derived relation is maintained: each rule's cost class and the plan of each
    /// delta term, every read with its bound columns and the tree or index serving it.
    Explain(cmd::explain::ExplainArgs),
    /// The canonical program text of a state.
    Program(cmd::program::ProgramArgs),
    /// Check every materialized view against a recomputation from its base relations.
    Verify(cmd::verify::VerifyArgs),
    /// Read and re-hash every chunk any ref reaches; report damage and the refs and states
    /// it touches (--repair: fetch damaged chunks again, rebuild indexes).
    Fsck(cmd::fsck::FsckArgs),
    /// Why a tuple is there: the rule instances that derive it, down to base tuples, each
    /// with the commit that last wrote it.
    Why(cmd::why::WhyArgs),
    /// The commit that last wrote each tuple of a relation (or of one tuple).
    Blame(cmd::blame::BlameArgs),
    /// The head commit, its state hash, and every relation with its count.
    Status(cmd::status::StatusArgs),
    /// List branches (the current one marked), create NAME at REF, or delete one (-d).
    Branch(cmd::branch::BranchArgs),
    /// Make branch NAME the current branch; HEAD follows it.
    Switch(cmd::switch::SwitchArgs),
    /// List tags, create NAME at REF (default HEAD), or delete one (-d).
    Tag(cmd::tag::TagArgs),
    /// Move the current branch to REF (nothing is deleted; the reflog keeps the old head).
    Reset(cmd::reset::ResetArgs),
    /// Commit the inverse of REF's base changes.
    Revert(cmd::revert::RevertArgs),
    /// Merge branch NAME into the current branch (fast-forward, or a three-way merge); key
    /// conflicts: --conflicts lists them, --ours, --theirs or --resolve FILE resolves them.
    Merge(cmd::merge::MergeArgs),
    /// Every value the current branch has held, newest first.
    Reflog(cmd::reflog::ReflogArgs),
    /// List the remotes (-v: with their URLs), add one (`add NAME URL`) or remove one.
    Remote(cmd::remote::RemoteArgs),
    /// A new store holding every branch of the store at URL and every chunk they reach.
    Clone(cmd::clone::CloneArgs),
    /// Copy what a remote's branches reach into this store; move the NAME/BRANCH refs.
    Fetch(cmd::fetch::FetchArgs),
    /// Copy what a branch reaches to a remote, then move the remote's branch (fast-forward,
    /// or --force); the first push to an empty place creates the store there.
    Push(cmd::push::PushArgs),
    /// Fetch from a remote, then merge NAME/BRANCH into the current branch.
    Pull(cmd::pull::PullArgs),
    /// Delete the chunks no branch, tag or reflog entry reaches; report the bytes freed.
    Gc(cmd::gc::GcArgs),
    /// Walk through rnt in a temporary store, printing each command and its output.
    Demo(cmd::demo::DemoArgs),
    /// Serve the store: an HTTP API, a web view of history at `/`, and subscriptions to a
    /// relation's changes; `rnt` commands on the store go through it while it runs.
    Serve(serve::ServeArgs),
}

/// What every subcommand gets besides its own arguments.
#[derive(Clone)]
pub struct Context {
    /// The store folder named by `--store`, if any.
    pub store: Option<PathBuf>,
    /// Inside `rnt serve`: the server's warm database and what the client sent with the
    /// command (`None` in a command run by itself).
    pub served: Option<std::sync::Arc<serve::Served>>,
}

/// Runs a parsed command line, writing its output to `out`.
pub fn execute(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    memory::install_budget(cli.memory_budget.as_deref()).map_err(DbError::user)?;
    settings::install_threads(cli.threads.map(usize::from)).map_err(DbError::user)?;
    if matches!(cli.command, Command::Demo(_)) && cli.store.is_some() {
        return Err(DbError::user(
            "`rnt demo` makes its own temporary store, so --store does not apply (use `rnt demo --keep` to keep it)",
        )
        .into());
    }
    let context = Context {
        store: cli.store,
        served: None,
    };
    run_with(&context, cli.command, out)
}

/// Runs one subcommand in `context`.
pub(crate) fn run_with(
    context: &Context,
    command: Command,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let context = context.clone();
    match command {
        Command::Init(args) => cmd::init::run(&context, args, out),
        Command::Define(args) => cmd::define::run(&context, args, out),
        Command::Alter(args) => cmd::alter::run(&context, args, out),
        Command::Commit(args) => cmd::commit::run(&context, args, out),
        Command::Import(args) => cmd::import::run(&context, args, out),
        Command::Log(args) => cmd::log::run(&context, args, out),
        Command::Show(args) => cmd::show::run(&context, args, out),
        Command::Query(args) => cmd::query::run(&context, args, out),
        Command::Sql(args) => cmd::sql::run(&context, args, out),
        Command::Diff(args) => cmd::diff::run(&context, args, out),
        Command::Explain(args) => cmd::explain::run(&context, args, out),
        Command::Program(args) => cmd::program::run(&context, args, out),
        Command::Verify(args) => cmd::verify::run(&context, args, out),
        Command::Fsck(args) => cmd::fsck::run(&context, args, out),
        Command::Why(args) => cmd::why::run(&context, args, out),
        Command::Blame(args) => cmd::blame::run(&context, args, out),
        Command::Status(args) => cmd::status::run(&context, args, out),
        Command::Branch(args) => cmd::branch::run(&context, args, out),
        Command::Switch(args) => cmd::switch::run(&context, args, out),
        Command::Tag(args) => cmd::tag::run(&context, args, out),
        Command::Reset(args) => cmd::reset::run(&context, args, out),
        Command::Revert(args) => cmd::revert::run(&context, args, out),
        Command::Merge(args) => cmd::merge::run(&context, args, out),
        Command::Reflog(args) => cmd::reflog::run(&context, args, out),
        Command::Remote(args) => cmd::remote::run(&context, args, out),
        Command::Clone(args) => cmd::clone::run(&context, args, out),
        Command::Fetch(args) => cmd::fetch::run(&context, args, out),
        Command::Push(args) => cmd::push::run(&context, args, out),
        Command::Pull(args) => cmd::pull::run(&context, args, out),
        Command::Gc(args) => cmd::gc::run(&context, args, out),
        Command::Demo(args) => cmd::demo::run(args, out),
        Command::Serve(args) => serve::run(&context, args, out),
    }
}

/// The stack the command runs on. Evaluation recurses once per link of a chain of
/// ephemeral relations; a program with thousands of them overflowed the main thread's
/// 8 MiB. The memory is reserved, not used, until a computation goes that deep.
const STACK_BYTES: usize = 1 << 30;

fn main() -> ExitCode {
    breakdown::mark_start();
    // A panic is a bug, never the user's fault: say so, and exit as an internal error does.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal error: {info} (this is a bug in rnt; please report it)");
        std::process::exit(i32::from(EXIT_INTERNAL));
    }));
    let worker = std::thread::Builder::new()
        .name("rnt".into())
        .stack_size(STACK_BYTES)
        .spawn(run_command);
    match worker.map(std::thread::JoinHandle::join) {
        Ok(Ok(code)) => code,
        // Without the big stack, run on this one.
        Err(_) => run_command(),
        Ok(Err(_)) => ExitCode::from(EXIT_INTERNAL),
    }
}

/// Parses the command line, runs it, reports an error, and returns the exit code.
fn run_command() -> ExitCode {
    #[cfg(feature = "fault-injection")]
    store_open::arm_fault_points();
    let cli = match parse_args(std::env::args_os()) {
        Ok(cli) => cli,
        Err(error) => return ExitCode::from(report_usage(&error)),
    };
    if let Some(code) = serve::forward::through_server(&cli) {
        return ExitCode::from(code);
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = execute(cli, &mut out).and_then(|()| out.flush().map_err(anyhow::Error::from));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // Whatever was printed before the error is still worth seeing.
            let _ = out.flush();
            ExitCode::from(report(&error))
        }
    }
}

/// Parses a command line. Changes given to `commit` as arguments are moved behind a `--`
/// first, so that a deletion such as `-orders(1, 7, 25)` is never read as an option, and
/// options may follow the changes (`rnt commit +r(1) -m MSG`).
pub fn parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    Cli::try_parse_from(changes_last(args.into_iter().map(Into::into).collect()))
}

/// Options of `rnt commit` (and the global one) that take a value as the next argument.
const OPTIONS_WITH_VALUE: [&str; 8] = [
    "-m",
    "--message",
    "-f",
    "--file",
    "--store",
    "--memory-budget",
    "--threads",
    "--witnesses",
];

/// Rewrites `rnt [..] commit A B C` so that the arguments that look like changes
/// (`+name(` or `-name(`) come last, after `--`. Other command lines are returned as they
/// are.
fn changes_last(args: Vec<OsString>) -> Vec<OsString> {
    let mut index = 1;
    let command = loop {
        match args.get(index).and_then(|a| a.to_str()) {
            Some("--store" | "--memory-budget" | "--threads") => index += 2,
            Some(arg) if arg.starts_with('-') => index += 1,
            Some(arg) => break arg,
            None => return args,
        }
    };
    if command != "commit" {
        return args;
    }
    let mut kept: Vec<OsString> = args[..=index].to_vec();
    let mut changes = Vec::new();
    let mut rest = args[index + 1..].iter();
    while let Some(arg) = rest.next() {
        let text = arg.to_str().unwrap_or("");
        if text == "--" {
            changes.extend(rest.by_ref().cloned());
        } else if OPTIONS_WITH_VALUE.contains(&text) {
            kept.push(arg.clone());
            kept.extend(rest.next().cloned());
        } else if looks_like_change(text) {
            changes.push(arg.clone());
        } else {
            kept.push(arg.clone());
        }
    }
    if !changes.is_empty() {
        kept.push("--".into());
        kept.extend(changes);
    }
    kept
}

/// Whether `arg` starts like a change: a sign, a relation name, `(` (blanks allowed).
fn looks_like_change(arg: &str) -> bool {
    let Some(rest) = arg.trim_start().strip_prefix(['+', '-']) else {
        return false;
    };
    let rest = rest.trim_start();
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    name_end > 0
        && rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && rest[name_end..].trim_start().starts_with('(')
}

/// Prints a clap error and returns the exit code: 0 for `--help` and `--version`, 1 for
/// usage errors (clap's own 2 would read as "refused by a denial").
fn report_usage(error: &clap::Error) -> u8 {
    use clap::error::ErrorKind;
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            0
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = error.print();
            1
        }
        _ => {
            eprintln!("{}", output::usage_error_line(&error.render().to_string()));
            1
        }
    }
}

/// Prints `error` on stderr and returns its exit code.
pub fn report(error: &anyhow::Error) -> u8 {
    if is_broken_pipe(error) {
        // The reader went away (`rnt show r | head`): nothing more to say.
        return 0;
    }
    eprint!("{}", output::error_text(error));
    exit_code(error)
}

/// The exit code of an internal error (a broken invariant or a panic): EX_SOFTWARE.
pub const EXIT_INTERNAL: u8 = 70;

/// The exit code for an error: the database's own mapping, 1 for anything else.
pub fn exit_code(error: &anyhow::Error) -> u8 {
    if let Some(failure) = error.downcast_ref::<cmd::sql::SqlFailure>() {
        return failure.code;
    }
    match error.downcast_ref::<DbError>() {
        Some(db) => u8::try_from(db.exit_code()).unwrap_or(1),
        None => 1,
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reorder(line: &str) -> Vec<String> {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        changes_last(args)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn changes_move_behind_a_separator() {
        assert_eq!(
            reorder("rnt commit -orders(1) -m x"),
            ["rnt", "commit", "-m", "x", "--", "-orders(1)"]
        );
        assert_eq!(
            reorder("rnt commit -m -m(1) -m(2)"),
            ["rnt", "commit", "-m", "-m(1)", "--", "-m(2)"]
        );
        assert_eq!(
            reorder("rnt --store s commit +a(1) -- -b(2)"),
            ["rnt", "--store", "s", "commit", "--", "+a(1)", "-b(2)"]
        );
        assert_eq!(
            reorder("rnt show -orders(1)"),
            ["rnt", "show", "-orders(1)"]
        );
        assert_eq!(reorder("rnt commit -m x"), ["rnt", "commit", "-m", "x"]);
        assert_eq!(
            reorder("rnt --memory-budget 1G commit -r(1) -m x"),
            [
                "rnt",
                "--memory-budget",
                "1G",
                "commit",
                "-m",
                "x",
                "--",
                "-r(1)"
            ]
        );
    }

    #[test]
    fn what_looks_like_a_change() {
        assert!(looks_like_change("+orders(1, 2)"));
        assert!(looks_like_change(" - orders ("));
        assert!(!looks_like_change("-m"));
        assert!(!looks_like_change("--file"));
        assert!(!looks_like_change("-1(2)"));
        assert!(!looks_like_change("+(1)"));
    }

    #[test]
    fn internal_errors_exit_70_and_say_so() {
        let error = anyhow::Error::from(DbError::internal("a group with matches has no extreme"));
        assert_eq!(exit_code(&error), EXIT_INTERNAL);
        let text = output::error_text(&error);
        assert!(text.starts_with("error: internal error: "), "{text}");
        assert!(text.contains("please report it"), "{text}");
        let corrupted = anyhow::Error::from(DbError::corrupted("a stored tuple does not decode"));
        assert_eq!(exit_code(&corrupted), 3);
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
