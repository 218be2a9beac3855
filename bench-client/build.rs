//! Records, at build time, the digest of every source a code stamp may cover
//! (`src/stamps.rs`), from which each experiment's stamp is made, so that a results folder
//! written by older code is caught (`bench-client audit` and `bench-client all --stale`
//! compare the stamp each folder records with its experiment's).

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/stamps.rs"]
#[allow(dead_code)]
mod stamps;

fn main() {
    write_digests();
}

/// Writes `$OUT_DIR/digests.rs`: every file a code stamp may cover, with its digest, as
/// this build saw it (`stamps::digests`), which the library's `experiments::DIGESTS` reads;
/// and asks to be rerun when any of them changes, or a file is added beside them.
fn write_digests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut table = String::from("&[\n");
    for (path, digest) in stamps::digests(&root) {
        println!("cargo:rerun-if-changed={}", root.join(&path).display());
        let _ = writeln!(table, "    ({path:?}, {digest:?}),");
    }
    table.push(']');
    for folder in [
        stamps::EXPERIMENTS_DIR,
        stamps::SCRIPTS_DIR,
        stamps::STUBS_DIR,
        "crates",
        "bench-client/src",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(folder).display());
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("digests.rs"), table).expect("a writable OUT_DIR");
}
