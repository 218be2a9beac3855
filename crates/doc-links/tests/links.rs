//! The project's own Markdown: every relative link and anchor in `README.md` and `docs/*.md`
//! resolves.

use std::path::{Path, PathBuf};

/// The workspace's root, two levels above this crate.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn documents() -> Vec<PathBuf> {
    let docs = std::fs::read_dir(root().join("docs")).expect("the docs folder");
    let mut pages: Vec<PathBuf> = docs
        .map(|entry| entry.expect("a docs entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root().join("README.md"));
    pages
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let documents = documents();
    assert!(
        documents.len() > 1,
        "README.md and at least one page in docs/"
    );
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
