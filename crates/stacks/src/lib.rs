//! The stacks, as each describes itself: a server crate of this workspace is a stack if its
//! folder holds a `stack.toml` ([`FILE`]), as a framework of TechEmpower's benchmarks is a
//! folder with its `benchmark_config.json`. Everything that runs, checks or draws the stacks
//! finds them here, in one order ([`all`]): nothing else lists them, so that a new stack
//! joins by its folder alone.
//!
//! The reference app (`reference/fastapi/`) describes itself the same way ([`reference`]);
//! it is not a stack of the workspace, and [`all`] leaves it out.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// The description's file name, in a stack's crate folder.
pub const FILE: &str = "stack.toml";

/// One stack: what its crate's [`FILE`] says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stack {
    /// The crate's name, which is its binary's and the results' name for it.
    pub name: String,
    /// How the pages name it: the framework, and the runtime where the framework has others.
    pub display: String,
    /// One line for the server's `--help`.
    pub about: String,
    /// The async runtime its reactor threads run.
    pub runtime: String,
    pub driver: Driver,
    /// How its reactor threads are arranged, in a sentence.
    pub threads: String,
    pub placement: Placement,
    /// Whether its server sees each connection as it accepts it, so that `--events` records
    /// the accept before the handlers: false where the framework binds and accepts with no
    /// hook for it. Its server then refuses `--events`, and the experiments that read the
    /// record leave it out.
    #[serde(default = "seen")]
    pub sees_accepts: bool,
    /// Its listener's backlog, where its framework binds the listener itself with one the
    /// server cannot set; absent where the server binds with the contract's (`listen`, up
    /// to `net.core.somaxconn`). A burst that connects all at once may overflow a small one:
    /// the kernel then drops connects, and the client resends them a second and more later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen_backlog: Option<u32>,
    /// How long its server takes to exit after SIGTERM by its framework's design, in ms,
    /// where the framework sleeps on its way out; absent where the server exits once its
    /// connections close. The main job's floor counts it once for each server it starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_delay_ms: Option<u64>,
    pub pool: Pool,
    /// The fix that keeps the blocking call: the runtime's blocking pool.
    pub offload: Fix,
    /// The fix that removes it: the runtime's own timer, in place of `std::thread::sleep`.
    pub timer: Fix,
    /// The runtime's yield: the task goes to the back of the queue.
    pub yield_now: String,
    /// The async HTTP client `/ok-http-await` awaits, on this runtime's sockets.
    pub http_client: String,
    /// The runtime's async file read as `/ok-file-await` calls it, and what it does
    /// underneath.
    pub file_api: String,
    /// What to watch for with its fixes, if anything: one sentence, for the fix page.
    #[serde(default)]
    pub bites: String,
    /// What the fix page says of its fixes above its two handlers (Markdown, its links
    /// relative to `docs/`).
    #[serde(default)]
    pub fix_notes: String,
    /// Each route's handler: the route's path, and the function in `src/main.rs` that serves
    /// it (blocking-check reads the routes from here).
    #[serde(default)]
    pub handlers: BTreeMap<String, String>,
    /// Whether some of its variants need a build with `RUSTFLAGS="--cfg tokio_unstable"`
    /// (tokio's unstable API), which the scripts then make, into a target folder of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tokio_unstable: bool,
    /// Whether the README's glance figure, a few stacks cut from the full timeline, shows it
    /// (for the reference app: on its last event loop).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub glance: bool,
    /// The server's variants (`--variant NAME`), in the order the experiments run them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantOf>,
    /// The reference app's event loops: one target each, named `{name}-{loop}` (a script of
    /// that name in its `bin/`). Empty for a stack of the workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<String>,
}

/// One variant as its stack describes it: the server started with `--variant NAME` differs
/// from its stock self in one arrangement, so that an experiment can tell that arrangement's
/// effect apart from everything else about the stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantOf {
    /// Its name on the server's command line.
    pub name: String,
    /// What it changes, in a few words: the results name it `{stack} ({label})`.
    pub label: String,
    /// Whether it runs at any `--threads`; most change one arrangement of a one-thread
    /// server, and need `--threads 1`.
    #[serde(default)]
    pub any_threads: bool,
    /// The experiments that start it, by their tags (docs/add-your-stack.md lists them).
    #[serde(default)]
    pub runs_in: Vec<String>,
    /// What it changes, in a sentence, for `--help` and the results.
    pub about: String,
}

/// The system call its reactor threads wait on for readiness or completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    /// Readiness: epoll, on a work-stealing or shared runtime.
    Epoll,
    /// Completion: io_uring, thread-per-core.
    IoUring,
}

impl Driver {
    pub const ALL: [Driver; 2] = [Driver::Epoll, Driver::IoUring];

    /// As the pages write it.
    pub fn word(self) -> &'static str {
        match self {
            Driver::Epoll => "epoll",
            Driver::IoUring => "io_uring",
        }
    }
}

impl fmt::Display for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// Which reactor thread a new connection lands on; it stays there on every stack but the
/// work-stealing ones' tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// One listener that every reactor thread may accept from; tasks may move.
    Shared,
    /// An accept thread hands each connection to one worker, round-robin.
    AcceptThread,
    /// A listener per thread with `SO_REUSEPORT`: the kernel picks one by the connection's
    /// hash, so two connections may land on one thread while another is idle.
    ReusePort,
}

/// The blocking pool the offload runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    /// Its default size in threads, where it is one number whatever the machine.
    pub threads: Option<usize>,
    /// Its size and scope, in a sentence (per runtime, per worker, shared).
    pub about: String,
}

/// One fix: the call, and the `use` lines it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fix {
    pub call: String,
    #[serde(rename = "use", default)]
    pub uses: Vec<String>,
    /// The type its `.await` gives back (the offload's handle, `T` the closure's), if the
    /// fix has one.
    #[serde(default)]
    pub gives: String,
}

/// A description that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub path: PathBuf,
    pub reason: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for Error {}

fn seen() -> bool {
    true
}

impl Stack {
    /// A description from its text.
    pub fn parse(text: &str) -> Result<Stack, String> {
        toml::from_str(text).map_err(|error| error.to_string())
    }

    /// How the pages name it: its display name, with its driver where that is not epoll.
    pub fn heading(&self) -> String {
        match self.driver {
            Driver::Epoll => self.display.clone(),
            driver => format!("{} ({driver})", self.display),
        }
    }

    /// The runtime it runs on, without what the description adds in brackets: "tokio" for
    /// "tokio (actix-rt)".
    pub fn runtime_name(&self) -> &str {
        self.runtime.split_whitespace().next().unwrap_or_default()
    }

    /// Whether the kernel places its connections ([`Placement::ReusePort`]).
    pub fn reuse_port(&self) -> bool {
        self.placement == Placement::ReusePort
    }

    /// The reference app's targets, one per event loop ([`Stack::loops`]).
    pub fn targets(&self) -> Vec<String> {
        (self.loops.iter())
            .map(|event_loop| format!("{}-{event_loop}", self.name))
            .collect()
    }
}

/// The workspace these descriptions are read from: where this crate was built.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The stacks of the workspace at `root`: every `crates/*/stack.toml`, by driver (epoll
/// first), then by name. The order every run, table and figure follows.
pub fn read(root: &Path) -> Result<Vec<Stack>, Error> {
    let crates = root.join("crates");
    let entries = std::fs::read_dir(&crates).map_err(|error| Error {
        path: crates.clone(),
        reason: error.to_string(),
    })?;
    let mut stacks = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path().join(FILE);
        if path.is_file() {
            stacks.push(read_one(&path)?);
        }
    }
    stacks.sort_by(|a, b| (a.driver, &a.name).cmp(&(b.driver, &b.name)));
    Ok(stacks)
}

/// One description, which must name the folder it is in.
pub fn read_one(path: &Path) -> Result<Stack, Error> {
    let failed = |reason: String| Error {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|error| failed(error.to_string()))?;
    let stack = Stack::parse(&text).map_err(failed)?;
    let folder = path.parent().and_then(Path::file_name);
    let named_for_folder = folder.is_some_and(|folder| *folder == *stack.name);
    if path.starts_with(workspace().join("crates")) && !named_for_folder {
        return Err(failed(format!("names `{}`, not its folder", stack.name)));
    }
    Ok(stack)
}

static ALL: LazyLock<Vec<Stack>> =
    LazyLock::new(|| read(&workspace()).unwrap_or_else(|error| panic!("a stack: {error}")));

static NAMES: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| ALL.iter().map(|stack| stack.name.as_str()).collect());

/// The workspace's stacks, in their order ([`read`]). Panics, naming the file, if a
/// description cannot be read: a test reads them all first.
pub fn all() -> &'static [Stack] {
    &ALL
}

/// Their names, in the same order.
pub fn names() -> &'static [&'static str] {
    &NAMES
}

/// Whether the server `name` keeps a record of its accepts (`--events`): every server but a
/// stack whose description says it does not see them ([`Stack::sees_accepts`]).
pub fn records_accepts(name: &str) -> bool {
    named(name).is_none_or(|stack| stack.sees_accepts)
}

/// The stack named `name`, if the workspace has it.
pub fn named(name: &str) -> Option<&'static Stack> {
    all().iter().find(|stack| stack.name == name)
}

/// How long the server labelled `name` takes to stop by its framework's design
/// ([`Stack::stop_delay_ms`]); zero for one that does not say, or is no stack.
pub fn stop_delay(name: &str) -> std::time::Duration {
    let delay = named(name).and_then(|stack| stack.stop_delay_ms);
    std::time::Duration::from_millis(delay.unwrap_or(0))
}

/// The stacks on `driver`, in order.
pub fn of(driver: Driver) -> impl Iterator<Item = &'static Stack> {
    all().iter().filter(move |stack| stack.driver == driver)
}

static ON: LazyLock<[Vec<&'static str>; 2]> = LazyLock::new(|| {
    Driver::ALL.map(|driver| of(driver).map(|stack| stack.name.as_str()).collect())
});

/// The names of the stacks on `driver`, in order.
pub fn on(driver: Driver) -> &'static [&'static str] {
    &ON[driver as usize]
}

/// Whether `name` is a stack whose kernel places its connections ([`Placement::ReusePort`]):
/// what several experiments' claims tell apart.
pub fn reuse_port(name: &str) -> bool {
    named(name).is_some_and(Stack::reuse_port)
}

/// The reference app's description (`reference/fastapi/stack.toml`).
pub fn reference() -> Result<Stack, Error> {
    read_one(&workspace().join("reference/fastapi").join(FILE))
}

static REFERENCE_TARGETS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let reference = reference().unwrap_or_else(|error| panic!("the reference: {error}"));
    (reference.targets().into_iter())
        .map(|name| &*Box::leak(name.into_boxed_str()))
        .collect()
});

/// The reference app's targets, one per event loop, in its description's order.
pub fn reference_targets() -> &'static [&'static str] {
    &REFERENCE_TARGETS
}

/// The targets of the README's glance figure: the stacks whose descriptions say so, in their
/// order, then the reference app on its last event loop if its description says so.
pub fn glance() -> Vec<&'static str> {
    let stacks = all().iter().filter(|stack| stack.glance);
    let reference = reference().is_ok_and(|reference| reference.glance);
    let last_loop = reference_targets().last().copied().filter(|_| reference);
    stacks
        .map(|stack| stack.name.as_str())
        .chain(last_loop)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_description_reads_and_names_its_crate() {
        let stacks = read(&workspace()).unwrap();
        assert!(!stacks.is_empty());
        for stack in &stacks {
            let main = workspace()
                .join("crates")
                .join(&stack.name)
                .join("src/main.rs");
            let code = std::fs::read_to_string(&main).unwrap();
            for (route, handler) in &stack.handlers {
                assert!(
                    code.contains(&format!("fn {handler}(")),
                    "{}: {route}'s handler `{handler}` is not in src/main.rs",
                    stack.name
                );
            }
        }
        reference().unwrap();
    }

    #[test]
    fn the_scripts_find_the_unstable_builds_by_their_line() {
        // scripts/unstable-stacks.sh greps for this line exactly.
        for stack in all() {
            let path = workspace().join("crates").join(&stack.name).join(FILE);
            let text = std::fs::read_to_string(path).unwrap();
            let line = text.lines().any(|line| line == "tokio_unstable = true");
            assert_eq!(line, stack.tokio_unstable, "{}", stack.name);
        }
    }

    #[test]
    fn the_order_is_by_driver_then_name() {
        let keys: Vec<(Driver, &str)> = (all().iter())
            .map(|stack| (stack.driver, stack.name.as_str()))
            .collect();
        assert!(keys.is_sorted());
        assert_eq!(names().len(), all().len());
    }

    #[test]
    fn the_add_your_stack_page_names_every_field_and_no_other() {
        let page = std::fs::read_to_string(workspace().join("docs/add-your-stack.md")).unwrap();
        let listed: Vec<&str> = (page.lines())
            .filter_map(|line| line.strip_prefix("| `")?.split_once('`'))
            .map(|(field, _)| field)
            .collect();
        // Every field, as a description written out in full has them, the optional ones given.
        let mut full = all()[0].clone();
        full.listen_backlog.get_or_insert(1024);
        full.stop_delay_ms.get_or_insert(350);
        full.glance = true;
        full.tokio_unstable = true;
        full.loops.push("asyncio".to_owned());
        let written = toml::to_string(&full).unwrap();
        let table: toml::Table = toml::from_str(&written).unwrap();
        let mut fields: Vec<&str> = table.keys().map(String::as_str).collect();
        fields.sort_unstable();
        let mut listed_sorted = listed.clone();
        listed_sorted.sort_unstable();
        assert_eq!(
            listed_sorted, fields,
            "docs/add-your-stack.md's table of fields"
        );
    }

    #[test]
    fn a_description_is_checked_field_by_field() {
        let error = Stack::parse("name = \"x\"\nspeed = 3\n").unwrap_err();
        assert!(
            error.contains("speed") || error.contains("missing"),
            "{error}"
        );
    }
}
