//! The claims and the pages, whatever `results/` holds: every claim an experiment has is named
//! by a page, and every claim a page names is an experiment's. Whether the results bear them
//! out is `bench-client audit`'s question (`tests/physics.rs` tests its answers on fixtures).

use std::path::{Path, PathBuf};

use bench_client::experiments::claims::{self, Kind};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_claim_is_named_by_a_page() {
    let unnamed = claims::unnamed(&root());
    assert!(
        unnamed.is_empty(),
        "claims no page names (remove them, or name each after its sentence): {unnamed:?}"
    );
}

#[test]
fn every_claim_a_page_names_is_an_experiments() {
    let named = claims::named(&root());
    assert!(named.len() >= 5, "only {} claims on the pages", named.len());
    let unknown: Vec<String> = (named.iter())
        .filter(|(_, claim)| claims::kind(&claim.name).is_none())
        .map(|(page, claim)| format!("{page}:{}: {}", claim.line, claim.name))
        .collect();
    assert!(unknown.is_empty(), "claims no experiment has: {unknown:#?}");
}

/// What an observed claim's sentence must say: that the reference machine showed it, since
/// another machine's run may not (`bench-client audit` then says it differs).
const SEEN_ON_THE_REFERENCE: [&str; 2] = ["reference machine", "reference run"];

#[test]
fn every_observed_claims_sentence_says_it_was_seen_on_the_reference_machine() {
    let root = root();
    let mut unsaid = Vec::new();
    for page in bench_client::report::pages::pages(&root) {
        let text = std::fs::read_to_string(&page).unwrap();
        for sentence in doc_links::outcomes::sentences(&text) {
            let observed = (sentence.claims.iter())
                .filter(|name| claims::kind(name) == Some(Kind::Observed))
                .collect::<Vec<_>>();
            let said = SEEN_ON_THE_REFERENCE
                .iter()
                .any(|words| sentence.text.to_lowercase().contains(words));
            if !observed.is_empty() && !said {
                let page = page.strip_prefix(&root).unwrap().display().to_string();
                unsaid.push(format!("{page}:{}: {observed:?}", sentence.line));
            }
        }
    }
    assert!(
        unsaid.is_empty(),
        "{} sentences state an observation of the reference run without saying so (name the \
         reference machine or run in each, or make its claim physics if the run's figures \
         determine it):\n{}",
        unsaid.len(),
        unsaid.join("\n")
    );
}
