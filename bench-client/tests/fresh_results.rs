//! How a results file tells the code that measured it. Every results file records the code
//! stamp of its experiment: a digest, made from `bench-client/build.rs`'s digests, of the
//! sources that measure it (its `Code`, and what `bench-client/src/stamps.rs` shares: the
//! measuring core, the servers and their crates, the reference app, the build's settings),
//! not of those that write reports. `bench-client audit` lists the runs whose stamp is not
//! this build's as stale, and `scripts/run.sh all --stale` reruns exactly those.

use bench_client::stale::recorded_field;

#[test]
fn a_file_without_the_stamp_or_with_another_is_told_apart() {
    let dir = std::env::temp_dir().join(format!("fresh-results-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stamp = "0123456789abcdef";
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        recorded_field(&path, "code_stamp", "code stamp")
    };
    let json = format!(r#"{{"environment": {{"code_stamp": "{stamp}"}}}}"#);
    assert_eq!(write("a.json", json).as_deref(), Some(stamp));
    assert_eq!(write("b.json", r#"{"environment": {}}"#.into()), None);
    let markdown = format!("## Environment\n\n- date: x\n- code stamp: `{stamp}`\n");
    assert_eq!(write("c.md", markdown).as_deref(), Some(stamp));
    assert_eq!(
        write("d.md", "- code stamp: `0123`\n".into()).as_deref(),
        Some("0123")
    );
    assert_eq!(write("e.md", "no environment\n".into()), None);
    std::fs::remove_dir_all(&dir).unwrap();
}
