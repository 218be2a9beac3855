//! The experiments' server variants. A server started with `--variant NAME` differs from its
//! stock self in one arrangement, so that an experiment can tell that arrangement's effect
//! apart from everything else about a stack. Each stack describes its own variants in its
//! `stack.toml` (`[[variants]]`: name, label, what it changes, and the experiments that start
//! it, by the tags of [`runs_in`]); each server's `--help` lists its own ([`of_server`]), and
//! the parser refuses any other. Its arrangement lives beside the stack's stock one, in the
//! glue its `main` calls, which asks for it by name ([`Args::wants`]).
//!
//! One variant is every tokio stack's that serves tokio's own routes, without a line in its
//! description: `multi-thread` ([`MULTI_THREAD`]), a `multi_thread` runtime at any
//! `--threads`, the runtime `block_in_place` needs.

use std::sync::LazyLock;

use crate::{Args, Route};

/// The flag that selects a variant: `--variant NAME`, repeatable.
pub const FLAG: &str = "--variant";

/// The experiments' tags, as a variant's `runs_in` names them: an experiment starts the
/// variants that carry its tag, on whichever stacks describe them.
pub mod runs_in {
    /// At rest: the arrangements of the threads, to tell the cost of one thread waking
    /// another.
    pub const REST: &str = "rest";
    /// The race: a setting that may decide whether a request arriving during a burst is
    /// answered within it.
    pub const RACE: &str = "race";
    /// Where io_uring differs: how (or when) a queued operation reaches the kernel; bursts
    /// only.
    pub const URING: &str = "uring";
    /// The same, with the ping's order-of-service trials too.
    pub const URING_ORDER: &str = "uring-order";
    /// The contract check of `/ok-cpu-yield` on an io_uring server: a runtime that polls its
    /// ring often enough for a yield to let other work in.
    pub const CPU_YIELD: &str = "cpu-yield";
    /// Catching it: a detector of the stack's own ecosystem.
    pub const DETECTORS: &str = "detectors";
    /// tokio's own answers: a flip of tokio's scheduler.
    pub const TOKIO: &str = "tokio";
    /// The blocking pool side by side: the stack's other ways to run its offload.
    pub const POOL: &str = "pool";
    /// Every tag a description may use.
    pub const ALL: [&str; 8] = [
        REST,
        RACE,
        URING,
        URING_ORDER,
        CPU_YIELD,
        DETECTORS,
        TOKIO,
        POOL,
    ];
}

/// One variant: which server, its name on that server's command line (`--variant NAME`), and
/// its name in the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub server: &'static str,
    pub name: &'static str,
    /// `{server} ({what it changes})`.
    pub label: &'static str,
    /// Whether it runs at any `--threads`; most change one arrangement of a one-thread
    /// server, and need `--threads 1`.
    pub any_threads: bool,
    /// What it changes, in a sentence, for the results.
    pub about: &'static str,
    /// The experiments that start it ([`runs_in`]).
    pub runs_in: &'static [String],
}

/// The `multi-thread` variants' name, the same on every tokio server.
pub const MULTI_THREAD: &str = "multi-thread";

/// Whether a tokio server was started as its `multi-thread` variant.
pub fn multi_thread_requested(args: &Args) -> bool {
    args.wants(MULTI_THREAD)
}

/// Leaked once per process, as the descriptions themselves are.
fn keep(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// The variants `stack` describes, then its `multi-thread` one if it serves tokio's own routes
/// (its description names a handler for [`Route::OkBlockInPlace`]).
fn of_stack(stack: &'static stacks::Stack) -> impl Iterator<Item = Variant> {
    let described = stack.variants.iter().map(move |variant| Variant {
        server: stack.name.as_str(),
        name: variant.name.as_str(),
        label: keep(format!("{} ({})", stack.name, variant.label)),
        any_threads: variant.any_threads,
        about: variant.about.as_str(),
        runs_in: &variant.runs_in,
    });
    let serves_tokio = stack.handlers.contains_key(Route::OkBlockInPlace.path());
    let multi_thread = serves_tokio.then(|| Variant {
        server: stack.name.as_str(),
        name: MULTI_THREAD,
        label: keep(format!("{} (multi_thread)", stack.name)),
        any_threads: true,
        about: "tokio's multi_thread runtime at every --threads, 1 included (one worker \
                thread beside main, instead of current_thread on main): the runtime \
                tokio::task::block_in_place needs",
        runs_in: &[],
    });
    described.chain(multi_thread)
}

/// The variants the description `stack` lists, as its own server reads them from the
/// `stack.toml` built into it.
pub fn of_description(stack: &'static stacks::Stack) -> Vec<Variant> {
    of_stack(stack).collect()
}

static EVERY: LazyLock<Vec<Variant>> =
    LazyLock::new(|| stacks::all().iter().flat_map(of_stack).collect());

/// Every variant of every stack, in the stacks' order, then each description's.
pub fn every() -> impl Iterator<Item = &'static Variant> {
    EVERY.iter()
}

/// The variants of the server named `server`, which its `--variant` accepts (as its own
/// description lists them: [`of_description`]).
pub fn of_server(server: &str) -> impl Iterator<Item = &'static Variant> + '_ {
    every().filter(move |variant| variant.server == server)
}

/// The variants that the experiment tagged `tag` starts ([`runs_in`]), in [`every`]'s order.
pub fn running_in(tag: &str) -> impl Iterator<Item = &'static Variant> + '_ {
    every().filter(move |variant| variant.runs_in.iter().any(|runs| runs == tag))
}

/// The variant `name` of the experiment tagged `tag`, where one stack describes it.
pub fn in_experiment(tag: &str, name: &str) -> Option<&'static Variant> {
    running_in(tag).find(|variant| variant.name == name)
}

impl Variant {
    /// Whether this server was started as the variant (`--variant NAME`; the parser allows it
    /// with one reactor thread only, unless it runs at [any](Variant::any_threads)).
    pub fn requested(&self, args: &Args) -> bool {
        args.wants(self.name)
    }

    /// The arguments that start its server as it: `--variant NAME`.
    pub fn args(&self) -> [&'static str; 2] {
        [FLAG, self.name]
    }

    /// What it changes, without the server's name: the label's words in brackets.
    pub fn change(&self) -> &'static str {
        let inner = (self.label.split_once(" (")).map_or(self.label, |(_, change)| change);
        inner.strip_suffix(')').unwrap_or(inner)
    }

    /// Whether the experiment tagged `tag` starts it.
    pub fn runs_in(&self, tag: &str) -> bool {
        self.runs_in.iter().any(|runs| runs == tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_never_has_two_variants_of_one_name() {
        for variant in every() {
            let same = of_server(variant.server).filter(|v| v.name == variant.name);
            assert_eq!(same.count(), 1, "{variant:?}");
        }
    }

    #[test]
    fn the_add_your_stack_page_names_every_tag() {
        let page = stacks::workspace().join("docs/add-your-stack.md");
        let page = std::fs::read_to_string(page).unwrap();
        for tag in runs_in::ALL {
            assert!(
                page.contains(&format!("`{tag}`")),
                "docs/add-your-stack.md lacks `{tag}`"
            );
        }
    }

    #[test]
    fn every_variant_runs_in_known_experiments_and_its_glue_asks_for_it() {
        let root = stacks::workspace();
        let read = |dir: std::path::PathBuf| -> String {
            let files = std::fs::read_dir(&dir).unwrap().filter_map(Result::ok);
            (files.map(|file| file.path()))
                .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
                .map(|path| std::fs::read_to_string(path).unwrap())
                .collect()
        };
        let glue = read(root.join("crates/demo-contract/src"));
        for variant in every() {
            for tag in variant.runs_in {
                assert!(runs_in::ALL.contains(&tag.as_str()), "{variant:?}: `{tag}`");
            }
            let own = read(root.join("crates").join(variant.server).join("src"));
            let quoted = format!("\"{}\"", variant.name);
            assert!(
                glue.contains(&quoted) || own.contains(&quoted),
                "{}: no code asks for `{}` (args.wants({quoted}))",
                variant.server,
                variant.name
            );
        }
    }
}
