//! Every sentence of the pages that carries a claim (`<!-- claim: NAME -->`) is upheld by the
//! committed results: a rerun that moves an outcome fails here, naming the sentence's page
//! and line and the value that contradicts it, instead of leaving the sentence behind.

use std::path::{Path, PathBuf};

use bench_client::experiments::claims;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_claim_on_the_pages_holds() {
    let root = root();
    let named = claims::named(&root);
    assert!(named.len() >= 5, "only {} claims on the pages", named.len());
    let unheld = claims::unheld(&root);
    assert!(
        unheld.is_empty(),
        "{} claims on the pages no longer hold; mend each sentence (and its claim) to what \
         the results say:\n{}",
        unheld.len(),
        unheld.join("\n")
    );
}

#[test]
fn every_claim_is_named_by_a_page() {
    let unnamed = claims::unnamed(&root());
    assert!(
        unnamed.is_empty(),
        "claims no page names (remove them, or name each after its sentence): {unnamed:?}"
    );
}

/// A results value changed under a claim makes it fail, naming the value.
#[test]
fn a_claim_fails_when_its_results_change() {
    let scratch = std::env::temp_dir().join(format!("claims-{}", std::process::id()));
    let race = scratch.join("results/race");
    std::fs::create_dir_all(&race).unwrap();
    let json = std::fs::read_to_string(root().join("results/race/race.json")).unwrap();
    let mut record: serde_json::Value = serde_json::from_str(&json).unwrap();
    let tallies = record["tallies"].as_array_mut().unwrap();
    let uvloop = (tallies.iter_mut())
        .find(|tally| tally["target"] == "fastapi-uvloop" && tally["connect"] == "before")
        .expect("uvloop's trials with the connections accepted first");
    uvloop["partly"] = uvloop["trials"].clone();
    uvloop["waited_for_all"] = 0.into();
    std::fs::write(race.join("race.json"), record.to_string()).unwrap();
    let name = "race.uvloop-mostly-waits-for-all-when-accepted-first";
    let checked = claims::check(name, &scratch);
    std::fs::remove_dir_all(&scratch).unwrap();
    let Err(claims::Unheld::Contradicted(what)) = checked else {
        panic!("{name} held on changed results: {checked:?}");
    };
    assert!(what.contains(" 0 waited for all"), "{what}");
}
