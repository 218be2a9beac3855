//! The command line's tests: what each flag parses to, and what it refuses.

use std::path::PathBuf;

use clap::FromArgMatches as _;
use demo_contract::Route;

use super::*;
use crate::experiments::comparison::ComparisonArgs;
use crate::experiments::sweep::{SweepArgs, SweepPlan};
use burst_meter::case::Plan;
use burst_meter::target::{self, Target};
use burst_meter::work::WorkPath;

fn argv<'a>(args: &[&'a str]) -> Vec<&'a str> {
    std::iter::once("bench-client")
        .chain(args.iter().copied())
        .collect()
}

fn parse(args: &[&str]) -> Result<Parsed, clap::Error> {
    parse_from(argv(args))
}

/// The comparison's arguments of the bare command line `args`.
fn comparison(args: &[&str]) -> Result<ComparisonArgs, clap::Error> {
    ComparisonArgs::from_arg_matches(&command().try_get_matches_from(argv(args))?)
}

/// The sweep's arguments of `sweep ARGS`.
fn sweep(args: &[&str]) -> SweepArgs {
    let matches = command()
        .try_get_matches_from(argv(&[&["sweep"], args].concat()))
        .unwrap();
    let (name, sub) = matches.subcommand().expect("a subcommand");
    assert_eq!(name, "sweep");
    SweepArgs::from_arg_matches(sub).unwrap()
}

#[test]
fn defaults_reproduce_the_original_experiment() {
    let args = comparison(&[]).unwrap();
    assert_eq!(args.plan(), Plan::default());
    assert!(args.spawn.servers.is_empty() && args.urls.is_empty());
    assert_eq!(args.out, PathBuf::from("results"));
    assert!(args.is_full_comparison());
    assert!(!comparison(&["-n", "3"]).unwrap().is_full_comparison());
    let subset = comparison(&["--servers", "demo-axum"]).unwrap();
    assert!(!subset.is_full_comparison());
    assert!(matches!(
        parse(&[]).unwrap(),
        Parsed::Experiment { entry, .. } if entry.name() == "comparison"
    ));
}

#[test]
fn every_experiment_with_a_subcommand_is_one_and_the_builtins_are_not() {
    for entry in crate::experiments::ALL {
        if entry.subcommand().is_some() {
            let parsed = parse(&[entry.name()]).unwrap();
            assert!(
                matches!(parsed, Parsed::Experiment { entry: found, .. } if found.name() == entry.name()),
                "{}",
                entry.name()
            );
        }
    }
    assert!(matches!(
        parse(&["redraw"]).unwrap(),
        Parsed::Builtin(Builtin::Redraw(_))
    ));
    assert!(matches!(
        parse(&["all", "--stale"]).unwrap(),
        Parsed::Builtin(Builtin::All(AllArgs {
            stale: true,
            plan: false
        }))
    ));
}

#[test]
fn subsets_and_urls_are_read() {
    let args = comparison(&[
        "--servers",
        "demo-axum,demo-hyper-smol",
        "--url",
        "fastapi=http://127.0.0.1:8000",
        "--routes",
        "/bad,/ok-def",
        "-n",
        "3",
        "--sleep-ms",
        "20",
        "--ping-every-ms",
        "5",
    ])
    .unwrap();
    assert_eq!(args.spawn.servers, ["demo-axum", "demo-hyper-smol"]);
    assert_eq!(args.urls[0].0, "fastapi");
    assert_eq!(args.urls[0].1.port, 8000);
    assert_eq!(
        args.routes
            .iter()
            .map(|r| (r.route(), r.path()))
            .collect::<Vec<_>>(),
        [(Route::Bad, "/bad"), (Route::OkBlocking, "/ok-def")],
        "an alias is sent as given"
    );
    assert_eq!(
        (args.concurrency, args.sleep_ms, args.ping_every_ms),
        (3, 20, 5)
    );
}

#[test]
fn bad_flags_are_usage_errors_that_say_what_is_wrong() {
    for (args, says) in [
        (&["--concurrency", "0"][..], "0"),
        (&["--concurrency", "banana"], "banana"),
        (&["--servers", "demo-nowhere"], "demo-actix, demo-axum"),
        (&["--url", "http://127.0.0.1:1"], "LABEL=URL"),
        (&["--url", "x=https://example"], "http://"),
        (&["--routes", "/ping"], "not a work route"),
        (&["--sleep-ms", "10001"], "10001"),
        (&["race", "--trials", "0"], "0"),
        (&["uring", "--servers", "demo-axum"], "demo-axum"),
    ] {
        let error = parse(args).unwrap_err();
        assert_eq!(error.exit_code(), 2, "{args:?}");
        assert!(error.to_string().contains(says), "{args:?}: {error}");
    }
}

#[test]
fn the_sweep_reads_its_lists() {
    let args = sweep(&[]);
    assert_eq!(args.plan(), SweepPlan::default());
    assert_eq!(args.out, PathBuf::from("results/sweep"));
    let args = sweep(&[
        "-n",
        "1,50,5000",
        "--routes",
        "/ok-await",
        "--servers",
        "demo-actix",
        "--threads",
        "2",
    ]);
    assert_eq!(args.plan().concurrency, [1, 50, 5000]);
    assert_eq!(args.plan().routes, [WorkPath::canonical(Route::OkAwait)]);
    assert_eq!(args.plan().threads, 2);
    assert_eq!(args.spawn.targets(stacks::names()).0.len(), 1);
}

#[test]
fn the_sweep_refuses_bad_lists() {
    for args in [
        &["sweep", "-n", "1,0"][..],
        &["sweep", "-n", "1,x"],
        &["sweep", "-n", ""],
        &["sweep", "--routes", "/ping"],
        &["-n", "3", "sweep"],
    ] {
        assert_eq!(parse(args).unwrap_err().exit_code(), 2, "{args:?}");
    }
}

#[test]
fn the_thread_matrix_is_a_list() {
    let args = comparison(&["--threads", "1,2,4"]).unwrap();
    assert_eq!(args.plan().threads, [1, 2, 4]);
    assert_eq!(parse(&["--threads", "1,0"]).unwrap_err().exit_code(), 2);
}

#[test]
fn all_names_every_server() {
    let args = sweep(&["--servers", "all"]);
    let (targets, notes) = args.spawn.targets(stacks::names());
    let names: Vec<&str> = targets.iter().map(Target::label).collect();
    assert_eq!(
        names.len() + notes.len(),
        target::all_servers().len(),
        "{names:?} {notes:?}"
    );
    assert_eq!(names[..stacks::names().len()], *stacks::names());
}

#[test]
fn a_url_alone_spawns_nothing() {
    let args = comparison(&["--url", "x=http://127.0.0.1:9"]).unwrap();
    let (targets, _) = args.targets();
    assert_eq!(targets.len(), 1);
    assert!(matches!(&targets[0], Target::External { label, .. } if label == "x"));
}
