//! The docs check on the project's own pages: `README.md` within
//! [`README_MAX_LINES`](doc_links::prose::README_MAX_LINES) lines, each lesson within
//! [`LESSON_MAX_LINES`](doc_links::prose::LESSON_MAX_LINES) and each reference page within
//! [`REFERENCE_MAX_LINES`](doc_links::prose::REFERENCE_MAX_LINES); no commit hash and no source line
//! number in the prose of `README.md` or `docs/*.md` outside generated blocks; and every
//! sentence there that states an outcome checked by a claim or named in
//! `docs/outcome-words.toml` ([`doc_links::outcomes`]).

use std::path::{Path, PathBuf};

use doc_links::outcomes::{self, AllowList};
use doc_links::prose;

/// The allow-list of the outcome-words lint, from the repository's root.
const ALLOW_LIST: &str = "docs/outcome-words.toml";

/// The workspace's root, two levels above this crate.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn the_readme_is_at_most_200_lines() {
    let readme = root().join("README.md");
    let lines = prose::too_long(&read(&readme), prose::README_MAX_LINES);
    assert_eq!(
        lines,
        None,
        "README.md has more than {} lines",
        prose::README_MAX_LINES
    );
}

#[test]
fn no_commit_hash_in_the_readme_and_docs_prose() {
    let found: Vec<String> = (pages().into_iter())
        .flat_map(|(page, text)| {
            let hashes = prose::commit_hashes(&text).into_iter();
            hashes.map(move |hash| format!("{page}:{}: {}", hash.line, hash.hash))
        })
        .collect();
    assert!(
        found.is_empty(),
        "{} commit hashes in prose (a figure's run is named once, in its generated block):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// `README.md` and every page under `docs/`, each with its name from the repository's root.
fn pages() -> Vec<(String, String)> {
    let mut paths = vec![root().join("README.md")];
    paths.extend(doc_links::markdown_under(&root().join("docs")).expect("the docs folder"));
    assert!(paths.len() > 1, "README.md and at least one page in docs/");
    (paths.iter())
        .map(|path| (name(path), read(path)))
        .collect()
}

fn name(path: &Path) -> String {
    let relative = path.strip_prefix(root()).unwrap_or(path);
    relative.display().to_string()
}

#[test]
fn every_page_is_within_its_limit_lessons_200_references_250() {
    let mut problems = Vec::new();
    for (page, text) in pages()
        .into_iter()
        .filter(|(page, _)| page.starts_with("docs/"))
    {
        let max = prose::max_lines(&page);
        if let Some(lines) = prose::too_long(&text, max) {
            problems.push(format!("{page}: {lines} lines, over {max}"));
        }
    }
    assert!(
        problems.is_empty(),
        "pages over their limit (a lesson: move a table of figures to the results file it comes \
         from and link it; a reference: split it by topic):\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_source_line_number_in_the_readme_and_docs_prose() {
    let found: Vec<String> = (pages().into_iter())
        .flat_map(|(page, text)| {
            let numbers = prose::line_numbers(&text).into_iter();
            numbers.map(move |number| format!("{page}:{}: {}", number.line, number.words))
        })
        .collect();
    assert!(
        found.is_empty(),
        "{} source line numbers in prose (cite code by its path and item name):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn every_outcome_sentence_is_claimed_or_allowed() {
    let allowed = AllowList::parse(&read(&root().join(ALLOW_LIST)))
        .unwrap_or_else(|error| panic!("{ALLOW_LIST}: {error}"));
    let pages = pages();
    let mut problems = Vec::new();
    for page in allowed.pages.keys() {
        if !pages.iter().any(|(name, _)| name == page) {
            problems.push(format!("{ALLOW_LIST}: no page {page}"));
        }
    }
    for (page, text) in &pages {
        let findings = outcomes::lint(page, text, &allowed);
        problems.extend((findings.unchecked.iter()).map(|(line, word, sentence)| {
            format!("{page}:{line}: \"{word}\" unchecked: {sentence}")
        }));
        problems.extend((findings.unused.iter()).map(|part| {
            format!("{ALLOW_LIST}: \"{part}\" finds no sentence with an outcome word on {page}")
        }));
    }
    assert!(
        problems.is_empty(),
        "{} outcome sentences unchecked or entries unused: give each sentence a claim \
         (`<!-- claim: NAME -->` after it, NAME a predicate in bench-client's claims), write it \
         from the results, or name it in {ALLOW_LIST} with the reason it states no outcome \
         ({} entries now):\n{}",
        problems.len(),
        allowed.len(),
        problems.join("\n")
    );
}
