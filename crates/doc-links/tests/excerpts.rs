//! The code the pages show from the servers is the servers' code: every block marked
//! `<!-- from: PATH -->` on `README.md`, `docs/*.md` and the crates' READMEs is a verbatim
//! part of `PATH`
//! ([`doc_links::excerpts`]), and every Rust block there is such an excerpt or a marked
//! quotation of a third party's source; the README shows demo-axum's three handlers, and the
//! fix pages both fixes of every Rust server.

use std::path::{Path, PathBuf};

use doc_links::excerpts::{Excerpt, excerpts, is_part_of, unsourced_rust_blocks};

/// The pages that show each server's fix as code: every stack's, and glommio's and monoio's
/// beside the pool each one needs.
const FIX_PAGES: [&str; 3] = [
    "docs/fixes-on-epoll.md",
    "docs/fixes-on-io-uring.md",
    "docs/glommio-monoio.md",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The excerpts of the page at `page`, from the root.
fn excerpts_of(page: &str) -> Vec<Excerpt> {
    excerpts(&read(&root().join(page)))
}

/// Every Rust demo server's `main.rs`, from the root.
fn servers() -> Vec<String> {
    let crates = std::fs::read_dir(root().join("crates")).expect("crates/");
    let mut mains: Vec<String> = (crates.flatten())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("demo-"))
        .map(|name| format!("crates/{name}/src/main.rs"))
        .filter(|main| root().join(main).is_file())
        .collect();
    mains.sort();
    mains
}

/// `README.md`, `docs/*.md` and every crate's README, from the root.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_owned()];
    for page in doc_links::markdown_under(&root().join("docs")).expect("docs/") {
        let page = page.strip_prefix(root()).expect("under the root");
        pages.push(page.display().to_string());
    }
    for krate in std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
    {
        let readme = krate.path().join("README.md");
        if readme.is_file() {
            let readme = readme.strip_prefix(root()).expect("under the root");
            pages.push(readme.display().to_string());
        }
    }
    pages
}

#[test]
fn every_excerpt_is_part_of_its_source() {
    let mut wrong = Vec::new();
    for page in &pages() {
        for excerpt in excerpts_of(page) {
            let source = std::fs::read_to_string(root().join(&excerpt.from)).unwrap_or_default();
            if !is_part_of(&excerpt.code, &source) {
                wrong.push(format!("{page}:{}: not in {}", excerpt.line, excerpt.from));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "code on the pages that differs from its source (show the source as it stands):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_rust_block_is_an_excerpt_or_a_quotation() {
    let mut unsourced = Vec::new();
    for page in pages() {
        let text = read(&root().join(&page));
        let lines = unsourced_rust_blocks(&text).into_iter();
        unsourced.extend(lines.map(|line| format!("{page}:{line}")));
    }
    assert!(
        unsourced.is_empty(),
        "Rust blocks cut from no source: make each a part of code that builds, marked \
         `<!-- from: PATH -->` on the line before its fence, or, quoting a third party's \
         source, mark it `<!-- quote: CRATE VERSION, PATH -->`:\n{}",
        unsourced.join("\n")
    );
}

#[test]
fn the_readme_shows_demo_axums_three_handlers() {
    let shown = excerpts_of("README.md");
    let shows = |handler: &str| {
        (shown.iter()).any(|e| e.from == "crates/demo-axum/src/main.rs" && e.code.contains(handler))
    };
    for handler in [
        "async fn bad(",
        "async fn ok_blocking(",
        "async fn ok_await(",
    ] {
        assert!(
            shows(handler),
            "README.md shows no {handler} from demo-axum"
        );
    }
}

#[test]
fn the_fix_pages_show_both_fixes_of_every_server() {
    let shown: Vec<Excerpt> = FIX_PAGES
        .iter()
        .flat_map(|page| excerpts_of(page))
        .collect();
    let servers = servers();
    assert!(servers.len() >= 7, "the servers: {servers:?}");
    for main in servers {
        let both = (shown.iter()).any(|e| {
            e.from == main
                && e.code.contains("async fn ok_blocking(")
                && e.code.contains("async fn ok_await(")
        });
        assert!(
            both,
            "no page of {FIX_PAGES:?} shows ok_blocking and ok_await from {main}"
        );
    }
}
