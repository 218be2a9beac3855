//! The main job's floors of the two criterion scripts (`bench-client all --plan`) are what
//! their benches' settings force: each benchmark's warm-up and measurement, one after another.

use std::time::Duration;

use bench_client::experiments::scripts::{OFFLOAD_COST, POLL_COST};
use offload_cost::poll_cost::{CLOCKS, GROUPS, REQUEST, WRAPPERS};
use offload_cost::{Case, Runtime, SETTINGS};

#[test]
fn the_offload_floor_is_every_case_on_every_runtime() {
    let benchmarks = Case::ALL.len() * Runtime::ALL.len();
    let each = SETTINGS.warm_up + SETTINGS.measurement;
    assert_eq!(OFFLOAD_COST.floor, each * benchmarks as u32);
}

/// The poll-cost bench's settings live in its own file (reactor-watch's bench cannot depend
/// on this crate), so they are read from its source.
#[test]
fn the_poll_cost_floor_is_every_benchmark_its_report_reads() {
    let source = include_str!("../../reactor-watch/benches/per_poll.rs");
    let settings = [
        ".warm_up_time(Duration::from_millis(500))",
        ".measurement_time(Duration::from_secs(1))",
    ];
    for setting in settings {
        assert!(source.contains(setting), "per_poll.rs has no {setting}");
    }
    let each = Duration::from_millis(500) + Duration::from_secs(1);
    // The first run has every wrapper but `wrapped_metrics`; the second, with the `metrics`
    // feature, only `wrapped_metrics`: each of the groups' wrappers once in all.
    let benchmarks = GROUPS.len() * WRAPPERS.len() + CLOCKS.len() + REQUEST.len();
    assert_eq!(POLL_COST.floor, each * benchmarks as u32);
}
