//! The command line: what to run, parsed and checked before anything starts. The bare
//! command line is the comparison's; each other experiment of [`experiments::ALL`] is a
//! subcommand with the arguments its own folder declares; `redraw` and `all` measure nothing.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args as _, FromArgMatches as _, Subcommand as _};

use crate::experiments::comparison::Comparison;
use crate::experiments::{self, Entry, Planned};
use crate::redraw::Redraw;
use burst_meter::case::HEAD_START;

// The commands that are no experiment. (No doc comment: clap would make it the whole
// command line's about.)
#[derive(Debug, clap::Subcommand)]
pub enum Builtin {
    /// Redraws tables, plots and the pages' figures from the committed records, measuring
    /// nothing: for a change of format or figure, not of figures (no folder: everything)
    Redraw(RedrawArgs),
    /// The main job: every experiment whose results are committed, in order, into results/
    /// (and README.md's block), each one's duration recorded in results/main-job.md, where
    /// each one's command to run it alone is listed too. Run from the repository's root
    /// (scripts/run.sh does, after building)
    All(AllArgs),
    /// Stands a results folder against the code and the pages: each run fresh, stale or not
    /// run; each generated block against its results; each claim of the pages holds, differs
    /// (an observation of the reference run this run does not show), n/a (the run lacks what
    /// it needs) or false (physics this run contradicts). Exits 1 on a false claim or a block
    /// that does not match, never on a stale run or a claim that differs. Run from the
    /// repository's root
    Audit(AuditArgs),
}

/// `bench-client audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// The results folder to audit, laid out as results/ is (a rerun's, say); the pages'
    /// blocks are checked only against the repository's own results/, which they copy
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results: PathBuf,

    /// Leave out the fresh runs and the claims that hold: what is left, and the summary
    #[arg(long)]
    pub brief: bool,
}

/// `bench-client all`.
#[derive(Debug, clap::Args)]
pub struct AllArgs {
    /// Runs only the experiments whose results were measured by other code than this
    /// binary's (their recorded code stamp differs from the one it was built with), and says
    /// which and why; leaves results/main-job.md and README.md's sentence on the job as they
    /// are, since they tell of a whole run
    #[arg(long)]
    pub stale: bool,
    /// Lists each run of the job with its command and its floor (the time its plan takes as
    /// the protocol's ideals place its sleeps), and the whole job's, and runs nothing
    #[arg(long, conflicts_with = "stale")]
    pub plan: bool,
}

/// `bench-client redraw`.
#[derive(Debug, clap::Args)]
pub struct RedrawArgs {
    /// Folders holding an experiment's record (results.json, race.json, ...), e.g. results
    /// results/race; none: every folder under results/, the README's block and every page's
    /// figures (run from the repository's root)
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// Also rewrite this file's results block (README.md) from the first folder's results, if
    /// they are a complete run of the full default comparison
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,

    /// Also rewrite every figures block of README.md and docs/*.md from the results files
    /// they copy (run from the repository's root)
    #[arg(long)]
    pub pages: bool,
}

impl RedrawArgs {
    /// What to redraw: the folders named, or everything.
    pub fn plan(&self) -> Redraw {
        if self.dirs.is_empty() {
            return Redraw::everything(std::path::Path::new("."));
        }
        Redraw {
            dirs: self.dirs.clone(),
            readme: self.readme.clone(),
            pages: self.pages,
        }
    }
}

/// A command line, parsed.
pub enum Parsed {
    /// An experiment, planned.
    Experiment {
        entry: &'static dyn Entry,
        planned: Box<dyn Planned>,
    },
    /// A command that measures nothing.
    Builtin(Builtin),
}

impl std::fmt::Debug for Parsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Parsed::Experiment { entry, .. } => write!(f, "Experiment({})", entry.name()),
            Parsed::Builtin(builtin) => write!(f, "{builtin:?}"),
        }
    }
}

/// The whole command line, as clap sees it: the comparison's flags, then a subcommand per
/// experiment of [`experiments::ALL`] that has one, then `redraw` and `all`.
pub fn command() -> clap::Command {
    let root = clap::Command::new("bench-client").args_conflicts_with_subcommands(true);
    let mut root = crate::experiments::comparison::ComparisonArgs::augment_args(root);
    for entry in experiments::ALL {
        if let Some(subcommand) = entry.subcommand() {
            root = root.subcommand(subcommand);
        }
    }
    let about = long_about();
    let short = about.split("\n\n").next().unwrap_or_default().to_owned();
    // Last: the derives above set an about of their own.
    Builtin::augment_subcommands(root)
        .version(clap::crate_version!())
        .about(short)
        .long_about(about)
}

/// Parses this process's command line, exiting with clap's usage error or help as clap does.
pub fn parse() -> Parsed {
    parse_from(std::env::args_os()).unwrap_or_else(|error| error.exit())
}

/// Parses `args` (the first is the program's name).
pub fn parse_from<I, T>(args: I) -> Result<Parsed, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut root = command();
    let matches = root.try_get_matches_from_mut(args)?;
    let Some((name, sub)) = matches.subcommand() else {
        let planned = Comparison.planned(&matches)?;
        return Ok(Parsed::Experiment {
            entry: &Comparison,
            planned,
        });
    };
    match experiments::find(name) {
        Some(entry) => {
            // A refusal past clap's own checks is told with the subcommand's usage.
            let planned =
                entry
                    .planned(sub)
                    .map_err(|error| match root.find_subcommand_mut(name) {
                        Some(subcommand) => error.format(subcommand),
                        None => error.format(&mut root),
                    })?;
            Ok(Parsed::Experiment { entry, planned })
        }
        None => Ok(Parsed::Builtin(Builtin::from_arg_matches(&matches)?)),
    }
}

/// The long help: the experiment in a paragraph, with the protocol's own numbers.
fn long_about() -> String {
    format!(
        "Reproduces, on {} Rust async stacks at once, the FastAPI experiment in which one \
         handler that blocks the reactor stalls every other request.\n\n\
         For each target, and for each work route in turn (/bad: std::thread::sleep on the \
         reactor; /ok-blocking: the same sleep on the blocking pool; /ok-await: the async \
         timer), a pinger sends GET /ping on one keep-alive connection every --ping-every-ms, \
         and after a {} ms head start --concurrency requests of the route are fired at once, \
         each on its own connection. The burst's wall time says whether the sleeps ran one \
         after another (serialised) or side by side (concurrent); the pinger's latencies say \
         what every other client of that server saw meanwhile.\n\n\
         Without --servers or --url it runs the full comparison of the {} demo servers \
         (found beside this binary) and writes RESULTS.md and results.json into --out.",
        stacks::names().len(),
        HEAD_START.as_millis(),
        stacks::names().len(),
    )
}

#[cfg(test)]
mod tests;
