//! Every figures block of the README and the lesson pages is what the committed results say:
//! `bench-client redraw --pages` would change nothing. A page whose block is stale, or names
//! a section that no results file has, fails here, not in a reader's hands.

use std::path::Path;

use bench_client::report::block::FIGURES;
use bench_client::report::pages;

#[test]
fn every_figures_block_matches_the_results_it_copies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stale = Vec::new();
    let mut blocks = 0;
    for page in pages::pages(&root) {
        let text = std::fs::read_to_string(&page).unwrap();
        blocks += FIGURES.count(&text);
        match pages::refresh(&text, &page, &root) {
            Ok(fresh) if fresh == text => {}
            Ok(_) => stale.push(format!(
                "{}: a block differs from its results",
                page.display()
            )),
            Err(why) => stale.push(why),
        }
    }
    assert!(blocks >= 10, "only {blocks} figures blocks in the pages");
    assert!(
        stale.is_empty(),
        "run `bench-client redraw --pages` from the repository's root:\n{}",
        stale.join("\n")
    );
}
