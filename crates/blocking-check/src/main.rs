//! `blocking-check measure`: both checks on every demo server, the table written to
//! `results/static/`. `blocking-check scan DIR...`: the context-aware check on your own code.

use std::path::PathBuf;
use std::process::ExitCode;

use blocking_check::list::CallList;
use blocking_check::source::Sources;
use blocking_check::walk::Checker;
use blocking_check::{measure, report};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "blocking-check",
    about = "Static checks for blocking calls in async code"
)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Runs clippy's disallowed_methods and the context-aware check on every demo server and
    /// writes RESULTS.md and results.json.
    Measure {
        /// The workspace's root.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Where the results go.
        #[arg(long, default_value = "results/static")]
        out: PathBuf,
    },
    /// Runs `measure`'s clippy and reports nothing: a build step, so that `measure` then
    /// times the checks, not a build.
    CheckAhead {
        /// The workspace's root.
        #[arg(long, default_value = ".")]
        root: PathBuf,
    },
    /// Reports the blocking calls reached on the reactor from every async fn and async block
    /// of the `.rs` files under DIRS.
    Scan {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// More calls, in blocking.txt's format, added to the built-in list.
        #[arg(long)]
        list: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Commands::Measure { root, out } => run_measure(root, out),
        Commands::CheckAhead { root } => check_ahead(root),
        Commands::Scan { dirs, list } => scan(&dirs, list),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("blocking-check: {error}");
            ExitCode::from(2)
        }
    }
}

/// clippy's configuration for the experiment, from the workspace's root.
const CLIPPY_CONF: &str = "crates/blocking-check/clippy";

fn canonical(root: PathBuf) -> Result<PathBuf, String> {
    root.canonicalize()
        .map_err(|error| format!("{}: {error}", root.display()))
}

fn check_ahead(root: PathBuf) -> Result<ExitCode, String> {
    let root = canonical(root)?;
    measure::check_ahead(&root, &root.join(CLIPPY_CONF))?;
    Ok(ExitCode::SUCCESS)
}

fn run_measure(root: PathBuf, out: PathBuf) -> Result<ExitCode, String> {
    let root = canonical(root)?;
    let conf = root.join(CLIPPY_CONF);
    let list = CallList::builtin();
    let measured = measure::measure(&root, &conf, &list)?;
    let command = format!("blocking-check measure --out {}", out.display());
    let env = report::Environment::here(&root, &command);
    report::write(&root.join(&out), &measured, &env)?;
    println!("wrote {}", out.join("RESULTS.md").display());
    Ok(ExitCode::SUCCESS)
}

/// Prints each finding as `file:line: call (from root via ...)`; fails if there is one.
fn scan(dirs: &[PathBuf], extra: Option<PathBuf>) -> Result<ExitCode, String> {
    let mut list = CallList::builtin();
    if let Some(path) = extra {
        let text = std::fs::read_to_string(&path)
            .map_err(|error| format!("{}: {error}", path.display()))?;
        list.extend(
            CallList::parse(&text).map_err(|error| format!("{}: {error}", path.display()))?,
        );
    }
    let sources = Sources::read(std::path::Path::new(""), dirs)?;
    let mut checker = Checker::new(&sources, &list);
    let mut found = 0;
    for (root, site, walked) in checker.roots() {
        for finding in walked.findings {
            found += 1;
            let mut chain = vec![format!("{root} ({site})")];
            chain.extend(finding.via);
            println!(
                "{}: blocking call `{}` on the reactor, from {}",
                finding.site,
                finding.call,
                chain.join(" → ")
            );
        }
        for limit in walked.limits {
            println!("{}: note: {} (in {root})", limit.site, limit.what);
        }
    }
    Ok(if found == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
