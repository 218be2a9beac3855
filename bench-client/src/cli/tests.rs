//! The command line's tests: what each flag parses to, and what it refuses.

use super::*;
use crate::experiments::sweep::SweepPlan;
use crate::measure::target::SERVERS;
use demo_contract::Route;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("bench-client").chain(args.iter().copied()))
}

#[test]
fn defaults_reproduce_the_original_experiment() {
    let cli = parse(&[]).unwrap();
    assert_eq!(cli.plan(), Plan::default());
    assert!(cli.spawn.servers.is_empty() && cli.urls.is_empty() && cli.command.is_none());
    assert_eq!(cli.out, PathBuf::from("results"));
    assert!(cli.is_full_comparison());
    assert!(!parse(&["-n", "3"]).unwrap().is_full_comparison());
    assert!(
        !parse(&["--servers", "demo-axum"])
            .unwrap()
            .is_full_comparison()
    );
}

#[test]
fn subsets_and_urls_are_read() {
    let cli = parse(&[
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
    assert_eq!(cli.spawn.servers, ["demo-axum", "demo-hyper-smol"]);
    assert_eq!(cli.urls[0].0, "fastapi");
    assert_eq!(cli.urls[0].1.port, 8000);
    assert_eq!(
        cli.routes
            .iter()
            .map(|r| (r.route(), r.path()))
            .collect::<Vec<_>>(),
        [(Route::Bad, "/bad"), (Route::OkBlocking, "/ok-def")],
        "an alias is sent as given"
    );
    assert_eq!(
        (cli.concurrency, cli.sleep_ms, cli.ping_every_ms),
        (3, 20, 5)
    );
}

#[test]
fn bad_flags_are_usage_errors_that_say_what_is_wrong() {
    for (args, says) in [
        (&["--concurrency", "0"][..], "0"),
        (&["--concurrency", "banana"], "banana"),
        (&["--servers", "demo-rocket"], "demo-axum, demo-actix"),
        (&["--url", "http://127.0.0.1:1"], "LABEL=URL"),
        (&["--url", "x=https://example"], "http://"),
        (&["--routes", "/ping"], "not a work route"),
        (&["--sleep-ms", "10001"], "10001"),
    ] {
        let error = parse(args).unwrap_err();
        assert_eq!(error.exit_code(), 2, "{args:?}");
        assert!(error.to_string().contains(says), "{args:?}: {error}");
    }
}

#[test]
fn the_sweep_reads_its_lists() {
    let cli = parse(&["sweep"]).unwrap();
    let Some(Command::Sweep(sweep)) = cli.command else {
        panic!("a sweep")
    };
    assert_eq!(sweep.plan(), SweepPlan::default());
    assert_eq!(sweep.out, PathBuf::from("results/sweep"));
    let cli = parse(&[
        "sweep",
        "-n",
        "1,50,5000",
        "--routes",
        "/ok-await",
        "--servers",
        "demo-actix",
        "--threads",
        "2",
    ])
    .unwrap();
    let Some(Command::Sweep(sweep)) = cli.command else {
        panic!("a sweep")
    };
    assert_eq!(sweep.plan().concurrency, [1, 50, 5000]);
    assert_eq!(sweep.plan().routes, [WorkPath::canonical(Route::OkAwait)]);
    assert_eq!(sweep.plan().threads, 2);
    assert_eq!(sweep.spawn.targets(&SERVERS).0.len(), 1);
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
    assert_eq!(
        parse(&["--threads", "1,2,4"]).unwrap().plan().threads,
        [1, 2, 4]
    );
    assert_eq!(parse(&["--threads", "1,0"]).unwrap_err().exit_code(), 2);
}

#[test]
fn all_names_every_server() {
    let cli = parse(&["sweep", "--servers", "all"]).unwrap();
    let Some(Command::Sweep(sweep)) = cli.command else {
        panic!("a sweep")
    };
    let (targets, notes) = sweep.spawn.targets(&SERVERS);
    let names: Vec<&str> = targets.iter().map(Target::label).collect();
    assert_eq!(
        names.len() + notes.len(),
        target::all_servers().len(),
        "{names:?} {notes:?}"
    );
    assert_eq!(names[..SERVERS.len()], SERVERS);
}

#[test]
fn a_url_alone_spawns_nothing() {
    let cli = parse(&["--url", "x=http://127.0.0.1:9"]).unwrap();
    let (targets, _) = cli.targets();
    assert_eq!(targets.len(), 1);
    assert!(matches!(&targets[0], Target::External { label, .. } if label == "x"));
}
