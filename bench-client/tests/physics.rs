//! The physics claims on other machine shapes. A physics claim follows from what its run
//! records (threads, sleeps, N, the cores), so it must hold on any machine whose figures are
//! what physics gives there. These tests take the reference run's records
//! (`tests/fixtures/reference/`, the committed results as they were measured on two cores,
//! their timelines left out), record them as run on one, two and four cores with the CPU-bound
//! figures physics sets for that many (the protocol's formulas: a pool of one thread per core
//! answers in waves of the cores; more threads than cores share them), and stand every
//! physics claim against them: each must hold. A claim that assumes two cores fails here on
//! one or four.
//!
//! The fixtures are made from `results/` by `cargo test -p bench-client --test physics --
//! --ignored make_fixtures`, after a rerun of the experiments that a physics claim reads.

use std::path::{Path, PathBuf};

use bench_client::audit::Audit;
use bench_client::experiments::claims::{self, Kind, Standing};
use serde_json::Value;

/// The fixtures, laid out as `results/` is.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference")
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every folder (as a claim names it, `results/...`) that a physics claim reads, with the
/// record it reads there.
fn physics_dirs() -> Vec<(&'static str, &'static str)> {
    let mut dirs: Vec<(&str, &str)> = (claims::all().into_iter())
        .filter(|about| about.kind == Kind::Physics)
        .map(|about| (about.dir, about.record))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A scratch results folder: every fixture, as recorded on `cores` cores with the figures
/// physics sets there, each record passed through `edit` last.
fn results_on(cores: usize, name: &str, edit: impl Fn(&str, &mut Value)) -> PathBuf {
    let out = std::env::temp_dir().join(format!("physics-{name}-{cores}-{}", std::process::id()));
    for (dir, record) in physics_dirs() {
        let mut json = read(&claims::folder(&fixtures(), dir).join(record));
        on_cores(&mut json, cores);
        edit(dir, &mut json);
        let to = claims::folder(&out, dir);
        std::fs::create_dir_all(&to).unwrap();
        std::fs::write(to.join(record), json.to_string()).unwrap();
    }
    out
}

/// `record`, measured on two cores, as physics says it would have been on `cores`.
fn on_cores(record: &mut Value, cores: usize) {
    let reference = record["environment"]["cores"].as_u64().unwrap() as usize;
    record["environment"]["cores"] = cores.into();
    let Some(cases) = record.get_mut("cases").and_then(Value::as_array_mut) else {
        return;
    };
    for case in cases {
        let (n, threads) = (
            case["n"].as_u64().unwrap() as usize,
            case["reactor_threads"].as_u64().unwrap() as usize,
        );
        let rust = case["target"].as_str().unwrap().starts_with("demo-");
        let (wall, median) = match case["route"].as_str().unwrap() {
            // A pool of one thread (or process) per core: waves of the cores.
            "/ok-cpu-pool" => {
                let waves = |k: usize, c: usize| k.div_ceil(c) as f64;
                let median = median_rank(n) + 1;
                let wall = waves(n, cores) / waves(n, reference);
                (wall, waves(median, cores) / waves(median, reference))
            }
            // The blocking pool runs all at once: they share the cores.
            "/ok-cpu-blocking" if rust => {
                let by = shared(n, n, cores) / shared(n, n, reference);
                (by, by)
            }
            // The reactor threads each run theirs: at most one core each.
            "/bad-cpu" | "/ok-cpu-yield" if rust => {
                let by = shared(n, threads, cores) / shared(n, threads, reference);
                (by, by)
            }
            _ => continue,
        };
        scale(case, wall, median);
    }
}

/// The time `workers` threads take for `n` jobs of one unit on `cores` cores.
fn shared(n: usize, workers: usize, cores: usize) -> f64 {
    match workers <= cores {
        true => n.div_ceil(workers) as f64,
        false => n as f64 / cores as f64,
    }
}

/// The rank (from 0) of the median of `n`, as the bench client takes percentiles.
fn median_rank(n: usize) -> usize {
    (0.5 * n.saturating_sub(1) as f64).round_ties_even() as usize
}

/// `case`'s burst `wall` times as long, its median answer `median` times as soon.
fn scale(case: &mut Value, wall: f64, median: f64) {
    let times = |value: &mut Value, by: f64| {
        if let Some(ms) = value.as_f64() {
            *value = (ms * by).into();
        }
    };
    times(&mut case["wall_ms"], wall);
    times(&mut case["times_ideal"], wall);
    times(&mut case["requests"]["max_ms"], wall);
    times(&mut case["requests"]["p99_ms"], wall);
    times(&mut case["requests"]["p90_ms"], wall);
    times(&mut case["requests"]["p50_ms"], median);
}

/// Every physics claim's standing against `results`, on the stacks each page names after it.
fn physics_standings(results: &Path) -> Vec<(String, Standing)> {
    let physics: Vec<&str> = (claims::all().into_iter())
        .filter(|about| about.kind == Kind::Physics)
        .map(|about| about.name)
        .collect();
    let named = claims::named(&repository())
        .into_iter()
        .map(|(_, claim)| claim);
    named
        .filter(|claim| physics.contains(&claim.name.as_str()))
        .map(|claim| {
            let standing = claims::check(&claim.name, &claim.on, results).unwrap();
            (claim.name, standing)
        })
        .collect()
}

#[test]
fn every_physics_claim_holds_on_one_two_and_four_cores() {
    assert!(physics_dirs().len() >= 5, "{:?}", physics_dirs());
    for cores in [1, 2, 4] {
        let results = results_on(cores, "holds", |_, _| {});
        let standings = physics_standings(&results);
        std::fs::remove_dir_all(&results).unwrap();
        let wrong: Vec<_> = standings
            .iter()
            .filter(|(_, s)| *s != Standing::Holds)
            .collect();
        assert!(
            wrong.is_empty(),
            "on {cores} cores, as physics gives them: {wrong:#?}"
        );
    }
}

/// What physics forbids is false: on one core, a process pool that finishes in half the loop's
/// time would have used two.
#[test]
fn a_figure_physics_forbids_makes_its_claim_false() {
    let name = "comparison.cpu-fastapi-process-pool-uses-the-cores";
    let results = results_on(1, "forbidden", |dir, record| {
        if dir != "results/cpu" {
            return;
        }
        for case in record["cases"].as_array_mut().unwrap() {
            if case["route"] == "/ok-cpu-pool" && case["target"] == "fastapi-asyncio" {
                scale(case, 0.5, 0.5);
            }
        }
    });
    let standing = claims::check(name, &[], &results).unwrap();
    std::fs::remove_dir_all(&results).unwrap();
    assert!(matches!(standing, Standing::False(_)), "{standing:?}");
}

/// A run without the FastAPI app (no python3) lacks its rows: every claim that reads them is
/// n/a, none false.
#[test]
fn a_run_without_the_fastapi_app_is_not_applicable_where_it_lacks_it() {
    let results = results_on(2, "no-fastapi", |_, record| {
        if let Some(cases) = record.get_mut("cases").and_then(Value::as_array_mut) {
            cases.retain(|case| !case["target"].as_str().unwrap().starts_with("fastapi"));
        }
    });
    let standings = physics_standings(&results);
    std::fs::remove_dir_all(&results).unwrap();
    let false_: Vec<_> = standings.iter().filter(|(_, s)| s.fails()).collect();
    assert!(false_.is_empty(), "{false_:#?}");
    let not_applicable = |name: &str| {
        let (_, standing) = standings.iter().find(|(n, _)| *n == name).unwrap();
        standing.word() == "n/a"
    };
    assert!(not_applicable("comparison.eleven-stacks"));
    assert!(not_applicable(
        "comparison.cpu-fastapi-process-pool-uses-the-cores"
    ));
}

/// The audit of a folder holding only these records: the other experiments not run (n/a),
/// the pages' blocks not checked (they copy results/), no claim false; with a forbidden
/// figure, it fails.
#[test]
fn the_audit_passes_a_partial_run_and_fails_a_false_claim() {
    let results = results_on(1, "audit", |_, _| {});
    let audit = Audit::of(&repository(), &results);
    let text = audit.text(true);
    assert!(!audit.fails(), "{text}");
    assert!(audit.blocks.is_none(), "{text}");
    assert!(text.contains("not run"), "{text}");
    let record = claims::folder(&results, "results/cpu").join("results.json");
    let mut json = read(&record);
    for case in json["cases"].as_array_mut().unwrap() {
        if case["route"] == "/ok-cpu-pool" && case["target"] == "fastapi-asyncio" {
            scale(case, 0.5, 0.5);
        }
    }
    std::fs::write(&record, json.to_string()).unwrap();
    let audit = Audit::of(&repository(), &results);
    std::fs::remove_dir_all(&results).unwrap();
    assert!(audit.fails(), "{}", audit.text(true));
}

/// Makes the fixtures from the committed results: each record a physics claim reads, with
/// its timelines (drawn in plots, read by no claim) left out.
#[test]
#[ignore = "writes tests/fixtures from results/: run by hand after a rerun"]
fn make_fixtures() {
    let results = repository().join("results");
    let _ = std::fs::remove_dir_all(fixtures());
    for (dir, record) in physics_dirs() {
        let mut json = read(&claims::folder(&results, dir).join(record));
        if let Some(cases) = json.get_mut("cases").and_then(Value::as_array_mut) {
            for case in cases {
                case.as_object_mut().unwrap().remove("timeline");
            }
        }
        let to = claims::folder(&fixtures(), dir);
        std::fs::create_dir_all(&to).unwrap();
        let compact = serde_json::to_string(&json).unwrap() + "\n";
        std::fs::write(to.join(record), compact).unwrap();
    }
}
