//! The README shows demo-axum's three handlers "as they stand": its first Rust code block must
//! be a verbatim part of `crates/demo-axum/src/main.rs`, so that a change to the handlers
//! fails here until the README shows the new code.

use std::path::Path;

/// The text of the first fenced block of `markdown` opened with ```` ```rust ````.
fn first_rust_block(markdown: &str) -> Option<&str> {
    let start = markdown.find("```rust\n")? + "```rust\n".len();
    let length = markdown[start..].find("\n```")?;
    Some(&markdown[start..start + length + 1])
}

#[test]
fn the_readme_shows_demo_axums_handlers_as_they_stand() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let main = std::fs::read_to_string(root.join("crates/demo-axum/src/main.rs")).unwrap();
    let block = first_rust_block(&readme).expect("a Rust code block in README.md");
    for handler in [
        "async fn bad(",
        "async fn ok_blocking(",
        "async fn ok_await(",
    ] {
        assert!(block.contains(handler), "the README's code lacks {handler}");
    }
    assert!(
        main.contains(block),
        "README.md's handlers differ from crates/demo-axum/src/main.rs:\n{block}"
    );
}

#[test]
fn the_first_rust_block_is_found_and_cut_at_its_fence() {
    let markdown =
        "text\n```sh\nls\n```\n```rust\nfn a() {}\n```\nafter\n```rust\nfn b() {}\n```\n";
    assert_eq!(first_rust_block(markdown), Some("fn a() {}\n"));
    assert_eq!(first_rust_block("no code"), None);
}
