//! Targets: which servers a run measures (the ones asked for, or the defaults, less a
//! reference target that cannot run here), where their programs are, and how each is
//! started; [`process`] runs one: starting it on a free port, waiting for its readiness
//! line, and stopping it by its own PID.

pub mod process;

use std::path::{Path, PathBuf};
use std::time::Duration;

use demo_contract::variant::Variant;

use crate::http::Endpoint;
pub use process::{
    DROP_GRACE, HEALTH_PORT_FLAG, READY_WITHIN, STOP_WITHIN, ServerProcess, StderrTail, TargetError,
};

/// The original's own stack as reference targets: the project's FastAPI app
/// (`reference/fastapi/`) under uvicorn with one worker, one target per event loop its
/// description names (asyncio's with the h11 parser, uvloop's with httptools). Each is a
/// script of that name in the app's `bin/`, with the command line of the demo servers.
pub fn references() -> &'static [&'static str] {
    stacks::reference_targets()
}

/// The same for a reference target: Python imports FastAPI first, which on two busy cores
/// has taken more than 10 s.
pub const REFERENCE_READY_WITHIN: Duration = Duration::from_secs(30);

/// What to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A server we start, on a free port, for each thread count it supports.
    Spawn { name: String, launcher: Launcher },
    /// A server somebody else runs, e.g. the original FastAPI app. It gets the sleep as `?ms=`.
    External { label: String, endpoint: Endpoint },
}

impl Target {
    pub fn label(&self) -> &str {
        match self {
            Target::Spawn { name, .. } => name,
            Target::External { label, .. } => label,
        }
    }

    /// Whether this target can be run with `threads` reactor threads: an external one only
    /// once (its threads are not ours to set), a reference one only with one (uvicorn's
    /// workers are processes, not threads).
    pub fn runs_at(&self, threads: usize, first: bool) -> bool {
        match self {
            Target::Spawn { launcher, .. } => launcher.only_threads.is_none_or(|n| n == threads),
            Target::External { .. } => first,
        }
    }

    /// A demo server binary in `dir`.
    pub fn server(name: &str, dir: &Path) -> Target {
        Target::Spawn {
            name: name.to_owned(),
            launcher: Launcher::program(dir.join(name)),
        }
    }

    /// A server variant: its server in `dir`, started as it (`--variant NAME`), at one
    /// reactor thread unless it runs at [any](Variant::any_threads).
    pub fn variant(variant: &Variant, dir: &Path) -> Target {
        let mut target = Target::variants(variant.label, variant.server, &[variant], dir);
        if let Target::Spawn { launcher, .. } = &mut target
            && variant.any_threads
        {
            launcher.only_threads = None;
        }
        target
    }

    /// The server `server` in `dir` started as each of `variants` at once, at one reactor
    /// thread, named `name`.
    pub fn variants(name: &str, server: &str, variants: &[&Variant], dir: &Path) -> Target {
        Target::Spawn {
            name: name.to_owned(),
            launcher: Launcher {
                args: variants
                    .iter()
                    .flat_map(|variant| variant.args())
                    .map(str::to_owned)
                    .collect(),
                only_threads: Some(1),
                ..Launcher::program(dir.join(server))
            },
        }
    }

    /// A reference target: the script `name` of the FastAPI app in `dir`.
    pub fn reference(name: &str, dir: &Path) -> Target {
        Target::Spawn {
            name: name.to_owned(),
            launcher: Launcher {
                only_threads: Some(1),
                ready_within: REFERENCE_READY_WITHIN,
                ..Launcher::program(dir.join("bin").join(name))
            },
        }
    }
}

/// How to start a spawned target: a program taking the contract's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    pub program: PathBuf,
    /// Arguments it always gets before the run's own: the variants it runs as.
    pub args: Vec<String>,
    /// Variables set for it, beyond the client's own environment.
    pub env: Vec<(String, String)>,
    /// The one reactor-thread count it supports, if it supports only one.
    pub only_threads: Option<usize>,
    pub ready_within: Duration,
}

impl Launcher {
    /// `program`, with no variables of its own, at any thread count, with the demo servers'
    /// readiness limit.
    pub fn program(program: PathBuf) -> Launcher {
        Launcher {
            program,
            args: Vec::new(),
            env: Vec::new(),
            only_threads: None,
            ready_within: READY_WITHIN,
        }
    }

    /// Starts the target with `args`; see [`ServerProcess::start`].
    pub async fn start(&self, name: &str, args: &[String]) -> Result<ServerProcess, TargetError> {
        if !self.program.is_file() {
            return Err(TargetError::Missing {
                name: name.to_owned(),
                path: self.program.clone(),
            });
        }
        let args = [&self.args[..], args].concat();
        ServerProcess::spawn(name, &self.program, &args, &self.env, self.ready_within).await
    }
}

/// The Python of the reference app's virtual environment.
pub fn reference_python(dir: &Path) -> PathBuf {
    dir.join(".venv/bin/python")
}

/// Where the FastAPI reference app is by default: in this repository, beside the crates.
pub fn default_reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference/fastapi")
}

/// The `--servers` value that names every server.
pub const ALL: &str = "all";

/// The `--servers` prefix of an experiment's tag: `runs-in:TAG` names the stacks with a
/// variant that experiment starts, as their descriptions say.
pub const RUNS_IN: &str = "runs-in:";

/// The servers `name` stands for: itself, or the stacks a [`RUNS_IN`] tag selects, each once.
fn expand(name: &str) -> Vec<&str> {
    let Some(tag) = name.strip_prefix(RUNS_IN) else {
        return vec![name];
    };
    let mut servers: Vec<&str> = demo_contract::variant::running_in(tag)
        .map(|variant| variant.server)
        .collect();
    servers.dedup();
    servers
}

/// Every server the client can spawn: the workspace's stacks ([`stacks::names`], in their
/// order), then the reference targets.
pub fn all_servers() -> Vec<&'static str> {
    (stacks::names().iter().copied())
        .chain(references().iter().copied())
        .collect()
}

/// Where the servers to spawn are: the demo servers' binaries and the FastAPI reference app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folders {
    pub bin_dir: PathBuf,
    /// The reference app, with its `.venv`.
    pub reference_dir: PathBuf,
}

impl Folders {
    /// The folders given, each one not given where this repository's build puts it.
    pub fn or_default(bin_dir: Option<PathBuf>, reference_dir: Option<PathBuf>) -> Folders {
        Folders {
            bin_dir: bin_dir.unwrap_or_else(default_bin_dir),
            reference_dir: reference_dir.unwrap_or_else(default_reference_dir),
        }
    }
}

/// The servers to spawn: those `asked` for (every one for [`ALL`]), or `defaults` if none
/// were, with a note for each default left out: a reference target whose venv is not set up
/// (the Rust comparison never fails for want of Python). A server asked for by name that is
/// missing is still a target: it fails at its turn, by name, and the others run.
pub fn choose(
    asked: &[String],
    defaults: &[&str],
    folders: &Folders,
) -> (Vec<Target>, Vec<String>) {
    let named = !asked.is_empty() && asked != [ALL];
    let names: Vec<&str> = match asked {
        [] => defaults.to_vec(),
        [all] if all == ALL => all_servers(),
        servers => servers.iter().flat_map(|name| expand(name)).collect(),
    };
    let mut targets = Vec::new();
    let mut notes = Vec::new();
    for name in names {
        if !references().contains(&name) {
            targets.push(Target::server(name, &folders.bin_dir));
            continue;
        }
        let python = reference_python(&folders.reference_dir);
        if named || python.is_file() {
            targets.push(Target::reference(name, &folders.reference_dir));
        } else {
            notes.push(format!(
                "{name}: left out, no {} (reference/fastapi/setup.sh makes it)",
                python.display()
            ));
        }
    }
    (targets, notes)
}

/// The comparison's targets: the servers `asked` for, or if none were, every server unless
/// `externals` are given (then those alone); the spawned servers first, then `externals`.
pub fn for_comparison(
    asked: &[String],
    folders: &Folders,
    externals: Vec<Target>,
) -> (Vec<Target>, Vec<String>) {
    let defaults = if externals.is_empty() {
        all_servers()
    } else {
        Vec::new()
    };
    let (mut targets, notes) = choose(asked, &defaults, folders);
    targets.extend(externals);
    (targets, notes)
}

/// `targets` started as their variant named `variant`: each spawned server that has one
/// becomes it ([`Target::variant`]); every other target is left out, with a note.
pub fn as_variants(
    targets: Vec<Target>,
    variant: &str,
    bin_dir: &Path,
) -> (Vec<Target>, Vec<String>) {
    let mut kept = Vec::new();
    let mut notes = Vec::new();
    for target in targets {
        let label = target.label();
        let mut own = demo_contract::variant::of_server(label).filter(|v| v.name == variant);
        match own.next() {
            Some(variant) => kept.push(Target::variant(variant, bin_dir)),
            None => notes.push(format!("{label}: left out, no variant {variant:?}")),
        }
    }
    (kept, notes)
}

/// At rest's targets: the servers `asked` for, or if none were, the stock servers beside the
/// variants that add or take away a thread's hop (those its descriptions tag `rest`).
pub fn for_rest(asked: &[String], folders: &Folders) -> Vec<Target> {
    let (mut targets, _) = choose(asked, stacks::names(), folders);
    if asked.is_empty() {
        let variants = demo_contract::variant::running_in(demo_contract::variant::runs_in::REST);
        targets.extend(variants.map(|variant| Target::variant(variant, &folders.bin_dir)));
    }
    targets
}

/// The folder of the servers built with `RUSTFLAGS="--cfg tokio_unstable"` for tokio's unstable
/// API, beside the folder `bin_dir` of the workspace's own (`target/release` gives
/// `target/tokio-unstable/release`): `scripts/run.sh` and `scripts/test.sh` build them there,
/// with `--target-dir <target>/tokio-unstable`.
pub fn unstable_bin_dir(bin_dir: &Path) -> PathBuf {
    let profile = bin_dir.file_name().unwrap_or_default();
    let target = bin_dir.parent().unwrap_or(Path::new("."));
    target.join("tokio-unstable").join(profile)
}

/// Where the demo server binaries are by default: beside the running executable, in the
/// same target directory (a test binary sits one level deeper, in `deps/`).
pub fn default_bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let mut dir = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folders where no reference app's venv is set up.
    fn without_venv() -> Folders {
        Folders {
            bin_dir: PathBuf::from("/nonexistent/bin"),
            reference_dir: PathBuf::from("/nonexistent/reference"),
        }
    }

    fn labels(targets: &[Target]) -> Vec<&str> {
        targets.iter().map(Target::label).collect()
    }

    #[test]
    fn nothing_asked_for_is_the_defaults_less_a_reference_without_its_venv() {
        let (targets, notes) = choose(&[], &all_servers(), &without_venv());
        assert_eq!(labels(&targets), stacks::names());
        assert_eq!(notes.len(), references().len(), "{notes:?}");
        assert!(notes[0].starts_with("fastapi-asyncio: left out, no "));
    }

    #[test]
    fn a_reference_asked_for_by_name_is_kept_and_fails_at_its_turn() {
        let asked = ["demo-axum".to_owned(), "fastapi-uvloop".to_owned()];
        let (targets, notes) = choose(&asked, stacks::names(), &without_venv());
        assert_eq!(labels(&targets), ["demo-axum", "fastapi-uvloop"]);
        assert!(notes.is_empty());
        assert!(matches!(&targets[1], Target::Spawn { launcher, .. }
            if launcher.program == Path::new("/nonexistent/reference/bin/fastapi-uvloop")));
    }

    #[test]
    fn all_is_every_server_but_a_reference_without_its_venv() {
        let (targets, notes) = choose(&[ALL.to_owned()], &[], &without_venv());
        assert_eq!(labels(&targets), stacks::names());
        assert_eq!(notes.len(), references().len());
    }

    #[test]
    fn the_comparison_spawns_nothing_unasked_beside_an_external_target() {
        let external = Target::External {
            label: "x".into(),
            endpoint: Endpoint::parse("http://127.0.0.1:9").unwrap(),
        };
        let (targets, _) = for_comparison(&[], &without_venv(), vec![external.clone()]);
        assert_eq!(labels(&targets), ["x"]);
        let asked = ["demo-actix".to_owned()];
        let (targets, _) = for_comparison(&asked, &without_venv(), vec![external]);
        assert_eq!(labels(&targets), ["demo-actix", "x"]);
        let (targets, _) = for_comparison(&[], &without_venv(), Vec::new());
        assert_eq!(labels(&targets), stacks::names());
    }
}
