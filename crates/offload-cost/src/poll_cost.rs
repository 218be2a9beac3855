//! `results/poll-cost.md`: what reactor-watch adds to each poll it wraps, from the crate's own
//! criterion bench (`crates/reactor-watch/benches/per_poll.rs`), beside tokio-metrics'
//! `TaskMonitor`, the other detector that wraps polls, and the clock read a wrapped poll
//! makes.

use std::fmt::Write as _;
use std::path::Path;

use crate::estimates::{self, Estimate};
use crate::report::format_estimate;

/// The bench's groups: `pending` (one poll of a future wrapped once: the per-poll cost) and
/// `ready` (wrap a ready future and poll it once: the per-future cost, with the wrapper's box).
pub const GROUPS: [(&str, &str); 2] = [
    (
        "pending",
        "one poll of a future that stays pending (per poll)",
    ),
    (
        "ready",
        "wrapping a ready future and polling it once (per future)",
    ),
];

/// Each group's functions, in the table's order; the first is the baseline. `wrapped_metrics`
/// comes from the bench's build with reactor-watch's `metrics` feature.
pub const WRAPPERS: [(&str, &str); 5] = [
    ("unwrapped", "bare"),
    ("wrapped", "reactor-watch, on"),
    ("wrapped_metrics", "reactor-watch, on, with metrics"),
    ("disabled", "reactor-watch, off"),
    ("tokio_metrics", "tokio-metrics TaskMonitor"),
];

/// The clock reads, one each, in the group `clock`.
pub const CLOCKS: [(&str, &str); 2] = [
    ("coarse", "one read of the coarse clock reactor-watch uses"),
    (
        "instant_now",
        "one `Instant::now()`, the clock it used before",
    ),
];

/// What a tower `WatchLayer` adds to one request, in the group `request`.
pub const REQUEST: [(&str, &str); 4] = [
    (
        "label",
        "`Label::new` of a route this thread has labelled before",
    ),
    (
        "label_two_threads",
        "the same on two threads at once, each call",
    ),
    (
        "label_formatted",
        "the same after `format!` of method and route",
    ),
    (
        "layer",
        "one `WatchService` call: the label, the wrap, one poll of a ready future",
    ),
];

/// Every median the report shows, by (group, function).
#[derive(Debug, Clone, PartialEq)]
pub struct Medians(Vec<((&'static str, &'static str), Estimate)>);

impl Medians {
    /// Reads every benchmark of the report from `criterion_dir`.
    pub fn read(criterion_dir: &Path) -> Result<Medians, estimates::Error> {
        let wrapped = GROUPS
            .iter()
            .flat_map(|&(group, _)| WRAPPERS.map(|(f, _)| (group, f)));
        let clocks = CLOCKS.iter().map(|&(f, _)| ("clock", f));
        let request = REQUEST.iter().map(|&(f, _)| ("request", f));
        (wrapped.chain(clocks).chain(request))
            .map(|key| {
                let path = criterion_dir
                    .join(key.0)
                    .join(key.1)
                    .join("new/estimates.json");
                Ok((key, estimates::read_median_at(path)?))
            })
            .collect::<Result<_, _>>()
            .map(Medians)
    }

    fn get(&self, group: &str, function: &str) -> Option<Estimate> {
        (self.0.iter()).find_map(|(key, estimate)| (*key == (group, function)).then_some(*estimate))
    }
}

/// The whole file.
pub fn render(
    environment: &str,
    load_average: Option<&str>,
    criterion_dir: &str,
    medians: &Medians,
) -> String {
    let mut out = String::from(
        "# The stall detector's price per poll\n\nWhat reactor-watch adds to each poll of a \
         future it wraps, beside tokio-metrics' `TaskMonitor`, and the clock read that makes \
         most of it. Written by `scripts/poll-cost.sh` from criterion's own output files of \
         `cargo bench -p reactor-watch`; rerun it rather than edit the figures.\n\n\
         ## Environment\n\n",
    );
    out.push_str(environment);
    if let Some(load) = load_average {
        let _ = writeln!(
            out,
            "- load average (1, 5, 15 min) right after the run: {load}"
        );
    }
    let _ = writeln!(
        out,
        "\n## How it was measured\n\n- [`benches/per_poll.rs`](../crates/reactor-watch/benches/per_poll.rs): \
         each future polled with a no-op waker on the bench's thread; the watch's threshold \
         and the monitor's slow-poll threshold are 100 ms, so no poll is slow. \"with \
         metrics\": a second build of the bench, with reactor-watch's `metrics` feature and a \
         Prometheus recorder installed.\n- Median time \
         per iteration; in brackets, criterion's 95 % confidence interval of that median; \
         \"over bare\" is the median minus the bare one's. Raw data: \
         `{criterion_dir}/<group>/<function>/new/`.\n"
    );
    for (group, about) in GROUPS {
        let _ = writeln!(
            out,
            "## {group}: {about}\n\n| wrapper | time | over bare |\n|---|---|---:|"
        );
        let bare = medians.get(group, WRAPPERS[0].0);
        for (function, name) in WRAPPERS {
            let Some(median) = medians.get(group, function) else {
                continue;
            };
            let over = bare.map_or_else(String::new, |bare| {
                format!("{:+.1} ns", median.point_estimate - bare.point_estimate)
            });
            let _ = writeln!(out, "| {name} | {} | {over} |", format_estimate(median));
        }
        out.push('\n');
    }
    out.push_str("## clock: what the wrapped poll cannot avoid\n\n| read | time |\n|---|---|\n");
    for (function, name) in CLOCKS {
        if let Some(median) = medians.get("clock", function) {
            let _ = writeln!(out, "| {name} | {} |", format_estimate(median));
        }
    }
    out.push_str(
        "\n## request: what the tower layer adds to one request\n\n| step | time |\n|---|---|\n",
    );
    for (function, name) in REQUEST {
        if let Some(median) = medians.get("request", function) {
            let _ = writeln!(out, "| {name} | {} |", format_estimate(median));
        }
    }
    out
}
