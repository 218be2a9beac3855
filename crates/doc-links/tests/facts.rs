//! What the pages say about the code, against the code ([`doc_links::facts`]): every crate
//! version named on `README.md`, `docs/*.md`, the crates' READMEs and the FastAPI app's README
//! agrees with `Cargo.lock`, and every fact listed in `docs/code-facts.toml` (a default, a
//! limit, a size) is what its line of code sets.

use std::path::{Path, PathBuf};

use doc_links::facts::{self, Facts};

/// The list of facts, from the repository's root.
const FACTS: &str = "docs/code-facts.toml";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    let full = root().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("{}: {error}", full.display()))
}

/// The pages a reader reads, from the repository's root.
fn pages() -> Vec<String> {
    let mut pages = vec![
        "README.md".to_owned(),
        "reference/fastapi/README.md".to_owned(),
    ];
    let docs = doc_links::markdown_under(&root().join("docs")).expect("docs/");
    let crates = std::fs::read_dir(root().join("crates")).expect("crates/");
    let readmes = (crates.flatten()).map(|krate| krate.path().join("README.md"));
    for page in docs
        .into_iter()
        .chain(readmes.filter(|path| path.is_file()))
    {
        let page = page.strip_prefix(root()).expect("under the root");
        pages.push(page.display().to_string());
    }
    pages
}

#[test]
fn every_crate_version_on_the_pages_is_the_locked_one() {
    let locked = facts::locked_versions(&read("Cargo.lock")).expect("Cargo.lock parses");
    let mut wrong = Vec::new();
    let mut seen = 0;
    for page in pages() {
        for mention in facts::version_mentions(&read(&page), |name| locked.contains_key(name)) {
            seen += 1;
            let versions = &locked[&mention.name];
            if !versions.iter().any(|v| facts::agrees(&mention.version, v)) {
                wrong.push(format!(
                    "{page}:{}: {} {}, but Cargo.lock has {}",
                    mention.line,
                    mention.name,
                    mention.version,
                    versions.join(", ")
                ));
            }
        }
    }
    assert!(
        seen > 0,
        "the pages name no crate's version: is the pattern still right?"
    );
    assert!(
        wrong.is_empty(),
        "crate versions on the pages that Cargo.lock contradicts (write the locked version):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_listed_fact_on_the_pages_is_what_the_code_sets() {
    let listed = Facts::parse(&read(FACTS)).unwrap_or_else(|error| panic!("{FACTS}: {error}"));
    let mut wrong = Vec::new();
    for fact in &listed.fact {
        let what = &fact.what;
        let set = facts::values(&read(&fact.code), &fact.is);
        let said = facts::values(&read(&fact.page), &fact.says);
        let Some(value) = set.first() else {
            wrong.push(format!("{}: no `{}` any more ({what})", fact.code, fact.is));
            continue;
        };
        if set.iter().any(|other| other != value) {
            wrong.push(format!(
                "{}: `{}` sets {set:?} ({what})",
                fact.code, fact.is
            ));
        }
        if said.is_empty() {
            wrong.push(format!(
                "{}: no `{}` any more ({what})",
                fact.page, fact.says
            ));
        }
        for page_value in said
            .iter()
            .filter(|s| !facts::same_value(s, value, fact.times))
        {
            wrong.push(format!(
                "{}: says {page_value} for {what}, but {} sets {value}",
                fact.page, fact.code
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} facts in {FACTS} wrong: mend the page to the code, or the entry if the \
         sentence moved:\n{}",
        wrong.len(),
        listed.fact.len(),
        wrong.join("\n")
    );
}
