//! The docs check on the project's own pages: `README.md` within
//! [`README_MAX_LINES`](doc_links::prose::README_MAX_LINES) lines, and no commit hash in the
//! prose of `README.md` or `docs/*.md` outside generated blocks.

use std::path::{Path, PathBuf};

use doc_links::prose;

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
    let mut pages = vec![root().join("README.md")];
    pages.extend(doc_links::markdown_under(&root().join("docs")).expect("the docs folder"));
    assert!(pages.len() > 1, "README.md and at least one page in docs/");
    let found: Vec<String> = (pages.iter())
        .flat_map(|page| {
            let name = page
                .strip_prefix(root())
                .unwrap_or(page)
                .display()
                .to_string();
            let hashes = prose::commit_hashes(&read(page));
            hashes
                .into_iter()
                .map(move |hash| format!("{name}:{}: {}", hash.line, hash.hash))
        })
        .collect();
    assert!(
        found.is_empty(),
        "{} commit hashes in prose (a figure's run is named once, in its generated block):\n{}",
        found.len(),
        found.join("\n")
    );
}
