use super::*;

/// An audit of one claim standing as `standing`, every run fresh, the blocks matching.
fn audit_of(kind: Kind, standing: Standing) -> Audit {
    Audit {
        results: PathBuf::from("results"),
        runs: vec![RunLine {
            name: "at rest",
            rerun: "scripts/run.sh rest".to_owned(),
            standing: RunStanding::Fresh,
        }],
        blocks: Some((3, Vec::new())),
        claims: vec![ClaimLine {
            page: "README.md".to_owned(),
            line: 3,
            name: "rest.x".to_owned(),
            kind: Some(kind),
            standing,
        }],
        agreement: Standing::Holds,
        unclaimed: Vec::new(),
    }
}

#[test]
fn it_fails_on_a_false_claim_and_never_on_one_that_differs_or_a_stale_run() {
    let differs = audit_of(Kind::Observed, Standing::Differs("p50 2 ms".to_owned()));
    assert!(!differs.fails(), "{}", differs.text(false));
    let mut stale = audit_of(Kind::Physics, Standing::NotApplicable("not run".to_owned()));
    stale.runs[0].standing = RunStanding::Stale("recorded a, now b".to_owned());
    assert!(!stale.fails(), "{}", stale.text(false));
    let false_ = audit_of(Kind::Physics, Standing::False("wall 900 ms".to_owned()));
    assert!(false_.fails());
    let text = false_.text(true);
    assert!(
        text.contains("  false    README.md:3 rest.x (physics): wall 900 ms"),
        "{text}"
    );
    assert!(
        text.contains("0 hold, 0 differ, 0 n/a, 1 false; FAILED"),
        "{text}"
    );
}

#[test]
fn it_fails_on_a_block_that_does_not_match_and_says_how_to_mend_it() {
    let mut audit = audit_of(Kind::Observed, Standing::Holds);
    audit.blocks = Some((3, vec!["docs/x.md: a figures block differs".to_owned()]));
    assert!(audit.fails());
    let text = audit.text(true);
    assert!(text.contains("blocks: 3, on 1 pages that differ"), "{text}");
    assert!(text.contains("`bench-client redraw`"), "{text}");
}

#[test]
fn a_claim_no_experiment_has_fails() {
    let mut audit = audit_of(Kind::Observed, Standing::Holds);
    audit.claims[0].kind = None;
    assert!(audit.fails());
}
