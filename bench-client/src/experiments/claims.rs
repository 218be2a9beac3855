//! Claims: what a sentence of the pages says a run showed, checked against the committed
//! results. A page names the claim after its sentence, `<!-- claim: NAME -->`; the claim is a
//! predicate over one results folder's record, beside the experiment that writes it (its
//! `claims.rs`, listed as [`Experiment::CLAIMS`]). `tests/claims.rs` fails the test command
//! when a claim no longer holds, when a page names one that no experiment has, or when an
//! experiment has one that no page names; `bench-client redraw` says which claims the results
//! it draws no longer support.
//!
//! A claim's name is its experiment's name, a dot, and what it says, in words joined by `-`:
//! `race.uvloop-waits-for-all-when-accepted-first`.

use std::path::Path;

use doc_links::outcomes;

use super::{ALL, Experiment};
use crate::report::pages;

/// The servers whose threads each accept on a `SO_REUSEPORT` listener of their own, so that
/// the kernel's hash, not the load, deals them the connections: what several experiments'
/// claims tell apart.
pub const REUSE_PORT: [&str; 3] = [
    "demo-axum-compio",
    "demo-hyper-glommio",
    "demo-hyper-monoio",
];

/// One claim over the record of `E`'s results in one folder.
#[derive(Debug)]
pub struct Claim<R: 'static> {
    /// Its name on the pages.
    pub name: &'static str,
    /// The results folder whose record it reads, from the repository's root.
    pub dir: &'static str,
    /// `Ok` if the record supports the sentence; else what in the record contradicts it.
    pub holds: fn(&R) -> Result<(), String>,
}

/// Why a claim named on a page could not be upheld.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unheld {
    /// No experiment has a claim of that name.
    Unknown,
    /// Its record could not be read.
    Unreadable(String),
    /// The record contradicts it: what does.
    Contradicted(String),
}

impl std::fmt::Display for Unheld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unheld::Unknown => write!(f, "no experiment has this claim"),
            Unheld::Unreadable(why) => write!(f, "its results cannot be read: {why}"),
            Unheld::Contradicted(what) => write!(f, "the results say otherwise: {what}"),
        }
    }
}

/// Every claim's name, in the order of [`ALL`].
pub fn names() -> Vec<&'static str> {
    ALL.iter().flat_map(|entry| entry.claims()).collect()
}

/// Checks the claim `name` against the results under the repository's root `root`.
pub fn check(name: &str, root: &Path) -> Result<(), Unheld> {
    let mut checked = ALL.iter().filter_map(|entry| entry.check(name, root));
    checked.next().unwrap_or(Err(Unheld::Unknown))
}

/// Checks `E`'s claim `name`, if it has one, against the results under `root`.
pub(super) fn check_one<E: Experiment>(name: &str, root: &Path) -> Option<Result<(), Unheld>> {
    let claim = E::CLAIMS.iter().find(|claim| claim.name == name)?;
    let record = super::read_record::<E>(&root.join(claim.dir));
    Some(match record {
        Ok(record) => (claim.holds)(&record).map_err(Unheld::Contradicted),
        Err(error) => Err(Unheld::Unreadable(error.to_string())),
    })
}

/// Every claim the pages under the repository's root `root` name that the results there do
/// not uphold, as `PAGE:LINE: claim NAME: why`.
pub fn unheld(root: &Path) -> Vec<String> {
    let mut unheld = Vec::new();
    for (page, claim) in named(root) {
        if let Err(why) = check(&claim.name, root) {
            let (line, name) = (claim.line, &claim.name);
            unheld.push(format!("{page}:{line}: claim {name}: {why}"));
        }
    }
    unheld
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

/// Ok if `holds`, else `what` contradicts the claim: the one line most claims end with.
pub fn expect(holds: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if holds { Ok(()) } else { Err(what()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_names_are_one_each_and_start_with_their_experiment() {
        let mut seen = std::collections::BTreeSet::new();
        for entry in ALL {
            for name in entry.claims() {
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
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert_eq!(check("race.no-such-claim", &root), Err(Unheld::Unknown));
    }
}
