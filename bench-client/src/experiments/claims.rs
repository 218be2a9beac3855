//! Claims: what a sentence of the pages says a run showed, checked against a results folder.
//! A page names the claim after its sentence, `<!-- claim: NAME -->`; the claim is a
//! predicate over one results folder's record, beside the experiment that writes it (its
//! `claims.rs`, listed as [`Experiment::CLAIMS`]). `bench-client audit` stands each claim the
//! pages name against a results folder ([`crate::audit`]); the tests check only that every
//! claim is named by a page and that the claims' logic gives the answers physics gives.
//!
//! A claim is of one of two kinds ([`Kind`]). **Physics** follows from what the run records
//! (its threads, sleeps, N and cores, by the protocol's formulas) and must hold on any
//! machine: it reads every such number from the record, never a constant. **Observed** is
//! what the reference run showed (an order of stacks within the run-to-run spread, a median
//! of a few samples); another machine may show otherwise, and its sentence says where it was
//! seen.
//!
//! A claim's name is its experiment's name, a dot, and what it says, in words joined by `-`:
//! `race.uvloop-waits-for-all-when-accepted-first`.

use std::path::{Path, PathBuf};

use doc_links::outcomes;

use super::{ALL, Experiment};
use crate::report::pages;
use burst_meter::environment::Environment;
use burst_meter::session::Confounders;

/// The stacks a run was to measure, which "every stack" means in a claim on it: the
/// workspace's stacks as its record lists them ([`Environment::stacks`]), so that a stack
/// added since leaves the run's claims as they were until the run is measured again (the
/// audit shows it stale). A record from before the list names none; then the workspace's
/// stacks among the targets it `measured` stand for them.
pub fn stacks_of<'a>(environment: &'a Environment, measured: &[&str]) -> Vec<&'a str> {
    match environment.stacks.is_empty() {
        false => environment.stacks.iter().map(String::as_str).collect(),
        true => (stacks::names().iter().copied())
            .filter(|stack| measured.contains(stack))
            .collect(),
    }
}

/// Those of [`stacks_of`] on `driver`, as the workspace describes them now; a stack it no
/// longer has is on neither.
pub fn stacks_on<'a>(
    environment: &'a Environment,
    measured: &[&str],
    driver: stacks::Driver,
) -> Vec<&'a str> {
    let on = stacks::on(driver);
    (stacks_of(environment, measured).into_iter())
        .filter(|stack| on.contains(stack))
        .collect()
}

/// Whether a claim must hold on any machine, or was seen on the reference machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Follows from what the run records (threads, sleeps, N, cores): a run that contradicts
    /// it makes its sentence false.
    Physics,
    /// What the reference run showed: another run may differ, and the sentence says so.
    Observed,
}

/// One claim over the record of `E`'s results in one folder.
#[derive(Debug)]
pub struct Claim<R: 'static> {
    /// Its name on the pages.
    pub name: &'static str,
    /// The results folder whose record it reads, `results/...` as the committed results lay
    /// it out (a folder audited in their place is read the same way).
    pub dir: &'static str,
    /// Physics or an observation.
    pub kind: Kind,
    /// `Ok` if the record supports the sentence; else what it lacks or what contradicts it.
    /// Given the stacks the page names after the claim (`<!-- claim: NAME on A, B -->`),
    /// which a claim about named stacks is checked on: the sentence names them, so the
    /// code does not.
    pub holds: fn(&R, &[String]) -> Result<(), Shortfall>,
}

/// Why a record does not bear a claim out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shortfall {
    /// The run lacks what the claim reads (a stack it left out, a case it did not run).
    Lacks(String),
    /// The record contradicts it: what does.
    Contradicts(String),
}

impl Shortfall {
    /// The same shortfall, its words after `context`.
    pub fn context(self, context: &str) -> Shortfall {
        match self {
            Shortfall::Lacks(what) => Shortfall::Lacks(format!("{context}: {what}")),
            Shortfall::Contradicts(what) => Shortfall::Contradicts(format!("{context}: {what}")),
        }
    }
}

impl From<String> for Shortfall {
    fn from(what: String) -> Shortfall {
        Shortfall::Contradicts(what)
    }
}

impl From<&str> for Shortfall {
    fn from(what: &str) -> Shortfall {
        Shortfall::Contradicts(what.to_owned())
    }
}

/// Where a claim stands against one results folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// The record bears it out.
    Holds,
    /// An observation of the reference run that this run does not show: what it shows.
    Differs(String),
    /// The run lacks what the claim needs (an experiment not run, a stack left out): what.
    NotApplicable(String),
    /// A physics claim this run contradicts: what does.
    False(String),
    /// Its record is there but cannot be read: why.
    Unreadable(String),
}

impl Standing {
    /// The word the audit prints for it.
    pub fn word(&self) -> &'static str {
        match self {
            Standing::Holds => "holds",
            Standing::Differs(_) => "differs",
            Standing::NotApplicable(_) => "n/a",
            Standing::False(_) => "false",
            Standing::Unreadable(_) => "unreadable",
        }
    }

    /// What it says beyond its word, if anything.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Standing::Holds => None,
            Standing::Differs(what)
            | Standing::NotApplicable(what)
            | Standing::False(what)
            | Standing::Unreadable(what) => Some(what),
        }
    }

    /// Whether the pages may not stand with it: a false claim, or a record that cannot be
    /// read.
    pub fn fails(&self) -> bool {
        matches!(self, Standing::False(_) | Standing::Unreadable(_))
    }

    /// The standing of a claim of `kind` whose record gave `checked`.
    fn of(kind: Kind, checked: Result<(), Shortfall>) -> Standing {
        match (checked, kind) {
            (Ok(()), _) => Standing::Holds,
            (Err(Shortfall::Lacks(what)), _) => Standing::NotApplicable(what),
            (Err(Shortfall::Contradicts(what)), Kind::Physics) => Standing::False(what),
            (Err(Shortfall::Contradicts(what)), Kind::Observed) => Standing::Differs(what),
        }
    }
}

/// What the lists around the claims read of one: its name, the folder it reads and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct About {
    pub name: &'static str,
    pub dir: &'static str,
    /// The record file it reads in `dir`.
    pub record: &'static str,
    pub kind: Kind,
}

impl About {
    /// What the lists read of `E`'s claim `claim`.
    pub fn of<E: Experiment>(claim: &Claim<E::Record>) -> About {
        About {
            name: claim.name,
            dir: claim.dir,
            record: E::RECORD,
            kind: claim.kind,
        }
    }
}

/// Every claim, in the order of [`ALL`].
pub fn all() -> Vec<About> {
    ALL.iter().flat_map(|entry| entry.claims()).collect()
}

/// Every claim's name, in the order of [`ALL`].
pub fn names() -> Vec<&'static str> {
    all().into_iter().map(|about| about.name).collect()
}

/// Where the claim `name`, on the stacks `on` its page names, stands against the results
/// folder `results` (the committed `results/`, or a rerun's folder laid out the same way);
/// `None` if no experiment has it.
pub fn check(name: &str, on: &[String], results: &Path) -> Option<Standing> {
    ALL.iter().find_map(|entry| entry.check(name, on, results))
}

/// The kind of the claim `name`, if an experiment has it.
pub fn kind(name: &str) -> Option<Kind> {
    all()
        .into_iter()
        .find(|about| about.name == name)
        .map(|about| about.kind)
}

/// Where the committed results live, from the repository's root: the folder every claim and
/// run of the job names its own within (`results/race`), and the pages copy.
pub const RESULTS: &str = "results";

/// The path `dir` (`results/...`, as a claim or a run of the job names it) within the results
/// folder `results`, which a rerun elsewhere lays out as `results/` is.
pub fn folder(results: &Path, dir: impl AsRef<Path>) -> PathBuf {
    let dir = dir.as_ref();
    results.join(dir.strip_prefix(RESULTS).unwrap_or(dir))
}

/// Where `E`'s claim `name` on `on`, if it has one, stands against the results folder
/// `results`.
pub(super) fn check_one<E: Experiment>(
    name: &str,
    on: &[String],
    results: &Path,
) -> Option<Standing> {
    let claim = (E::CLAIMS.iter().copied().flatten()).find(|claim| claim.name == name)?;
    let dir = folder(results, claim.dir);
    if !dir.join(E::RECORD).is_file() {
        let not_run = format!("not run: no {}", dir.join(E::RECORD).display());
        return Some(Standing::NotApplicable(not_run));
    }
    Some(match super::read_record::<E>(&dir) {
        Ok(record) => Standing::of(claim.kind, (claim.holds)(&record, on)),
        Err(error) => Standing::Unreadable(error.to_string()),
    })
}

/// Every claim some experiment has that no page under `root` names.
pub fn unnamed(root: &Path) -> Vec<&'static str> {
    let named: Vec<String> = named(root)
        .into_iter()
        .map(|(_, claim)| claim.name)
        .collect();
    (names().into_iter())
        .filter(|name| !named.iter().any(|named| named == name))
        .collect()
}

/// Every claim named on the pages under `root`, with its page from the root.
pub fn named(root: &Path) -> Vec<(String, outcomes::Claim)> {
    let mut named = Vec::new();
    for page in pages::pages(root) {
        let text = std::fs::read_to_string(&page).unwrap_or_default();
        let name = page
            .strip_prefix(root)
            .unwrap_or(&page)
            .display()
            .to_string();
        named.extend(
            outcomes::claims(&text)
                .into_iter()
                .map(|claim| (name.clone(), claim)),
        );
    }
    named
}

/// The stacks a page names after a claim (`on A, B`), at least `least` of them: a claim
/// about named stacks reads them there, beside the sentence that names them, so that no
/// list of stacks lives in the code.
pub fn named_on(on: &[String], least: usize) -> Result<Vec<&str>, Shortfall> {
    let stacks: Vec<&str> = on.iter().map(String::as_str).collect();
    match stacks.len() >= least {
        true => Ok(stacks),
        false => Err(Shortfall::Lacks(format!(
            "the page names {} stacks after the claim (`on A, B`), it needs {least}",
            stacks.len()
        ))),
    }
}

/// Ok if `holds`, else `what` contradicts the claim: the one line most claims end with.
pub fn expect(holds: bool, what: impl FnOnce() -> String) -> Result<(), Shortfall> {
    if holds {
        Ok(())
    } else {
        Err(Shortfall::Contradicts(what()))
    }
}

/// `found`, or what the run lacks: for a case, a point or a stack a claim reads that the run
/// did not measure.
pub fn present<T>(found: Option<T>, what: impl FnOnce() -> String) -> Result<T, Shortfall> {
    found.ok_or_else(|| Shortfall::Lacks(what()))
}

/// The cores the run could use, as its record says: what a physics claim of CPU-bound work
/// divides by.
pub fn cores(environment: &Environment) -> Result<usize, Shortfall> {
    match environment.cores {
        0 => Err(Shortfall::Lacks(
            "the run recorded no core count".to_owned(),
        )),
        cores => Ok(cores),
    }
}

/// The core time a step recorded going elsewhere than the server (the client's CPU, the
/// hypervisor's steal), in ms; none where it recorded no CPU: what may delay work that a
/// physics claim times on the server's threads.
pub fn taken_from_the_server_ms(confounders: &Confounders) -> f64 {
    (confounders.cpu).map_or(0.0, |cpu| cpu.taken_from_the_server_ms())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_names_are_one_each_and_start_with_their_experiment() {
        let mut seen = std::collections::BTreeSet::new();
        for entry in ALL {
            for About { name, .. } in entry.claims() {
                let prefix = format!("{}.", entry.name());
                assert!(name.starts_with(&prefix), "{name} is not {prefix}…");
                let words = &name[prefix.len()..];
                let kebab = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
                assert!(!words.is_empty() && words.chars().all(kebab), "{name}");
                assert!(seen.insert(name), "{name} twice");
            }
        }
    }

    #[test]
    fn an_unknown_claim_is_told() {
        assert_eq!(check("race.no-such-claim", &[], Path::new("results")), None);
    }

    #[test]
    fn a_claim_whose_experiment_did_not_run_is_not_applicable() {
        let empty = std::env::temp_dir().join(format!("claims-none-{}", std::process::id()));
        let name = "race.mostly-waits-for-all-when-accepted-first";
        let on = ["fastapi-uvloop".to_owned()];
        let standing = check(name, &on, &empty).expect("a claim of the race");
        assert_eq!(standing.word(), "n/a", "{standing:?}");
        assert!(!standing.fails());
    }

    #[test]
    fn a_contradiction_is_false_for_physics_and_differs_for_an_observation() {
        let contradicted = || Err(Shortfall::Contradicts("x".to_owned()));
        assert_eq!(Standing::of(Kind::Physics, contradicted()).word(), "false");
        assert_eq!(
            Standing::of(Kind::Observed, contradicted()).word(),
            "differs"
        );
        let lacks = Err(Shortfall::Lacks("no case".to_owned()));
        assert_eq!(Standing::of(Kind::Physics, lacks).word(), "n/a");
        assert!(Standing::of(Kind::Physics, contradicted()).fails());
        assert!(!Standing::of(Kind::Observed, contradicted()).fails());
    }

    #[test]
    fn a_claims_folder_is_found_within_any_results_folder() {
        let scratch = Path::new("/tmp/rerun");
        assert_eq!(folder(scratch, "results/race"), scratch.join("race"));
        assert_eq!(folder(scratch, "results"), scratch.to_owned());
    }
}
