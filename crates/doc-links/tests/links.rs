//! The project's own Markdown: every relative link and anchor in `README.md`, `docs/*.md`,
//! the results' Markdown (`results/**/*.md`) and `reference/fastapi/README.md` resolves.

use std::path::{Path, PathBuf};

/// The workspace's root, two levels above this crate.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn documents() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    for dir in ["docs", "results"] {
        pages.extend(doc_links::markdown_under(&root().join(dir)).expect("a readable folder"));
    }
    pages.push(root().join("reference/fastapi/README.md"));
    pages
}

#[test]
fn every_relative_link_in_the_projects_markdown_resolves() {
    let documents = documents();
    let in_results = documents
        .iter()
        .filter(|page| page.starts_with(root().join("results")));
    assert!(in_results.count() > 0, "the results' Markdown is checked");
    let mut broken = Vec::new();
    for document in &documents {
        broken.extend(doc_links::check_file(document).expect("a readable document"));
    }
    let list: Vec<String> = broken.iter().map(ToString::to_string).collect();
    assert!(
        list.is_empty(),
        "links that lead nowhere:\n{}",
        list.join("\n")
    );
}
