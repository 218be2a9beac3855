//! The plots as a reader gets them: well-formed SVG that names what it shows, from realistic
//! sweep data and from degenerate inputs.
//!
//! Set `PLOT_SAMPLE_DIR=/some/dir` to also write the realistic figures there, to look at
//! them (e.g. `rsvg-convert wall_ok_blocking.svg -o wall.png`).

use bench_client::experiments::comparison::Report;
use bench_client::experiments::comparison::views::plots;
use bench_client::plot::timeline::{TimelineGrid, TimelineRow, timeline};
use bench_client::plot::{LatencySamples, Series, latency_cdf, wall_vs_concurrency};
use burst_meter::timeline::{Span, Timeline};

const STACKS: [&str; 5] = [
    "demo-axum",
    "demo-actix",
    "demo-hyper-tokio",
    "demo-hyper-async-std",
    "demo-hyper-smol",
];
const CONCURRENCY: [f64; 5] = [1.0, 10.0, 100.0, 1000.0, 10_000.0];

/// A series per stack, its wall time for each N given by `wall_ms(stack index, N)`.
fn sweep(wall_ms: impl Fn(usize, f64) -> f64) -> Vec<Series> {
    STACKS
        .iter()
        .enumerate()
        .map(|(i, stack)| Series {
            label: stack.to_string(),
            points: CONCURRENCY.iter().map(|&n| (n, wall_ms(i, n))).collect(),
        })
        .collect()
}

/// /bad: the sleep blocks the reactor, so N requests take N sleeps (a little less where a
/// stack runs several reactors, as actix does with one per core).
/// The guide line of a 20 ms sweep.
fn one_sleep() -> Series {
    Series {
        label: "one sleep (20 ms)".into(),
        points: vec![(1.0, 20.0), (10_000.0, 20.0)],
    }
}

fn bad_sweep() -> Vec<Series> {
    sweep(|i, n| {
        let reactors = if i == 1 { 2.0 } else { 1.0 };
        (n / reactors).max(1.0) * 20.0 + 1.5 * i as f64
    })
}

/// /ok-blocking: the sleep runs on a blocking pool, flat at one sleep until the pool (or the
/// machine) runs out, then stepping up.
fn ok_blocking_sweep() -> Vec<Series> {
    sweep(|i, n| {
        let base = 20.5 + i as f64;
        match n as u32 {
            0..=999 => base,
            1000..=9999 => 40.0 + 3.0 * i as f64,
            _ => 400.0 + 25.0 * i as f64,
        }
    })
}

/// /ok-await: the sleep is awaited, so it stays near one sleep, rising with the cost of
/// handling thousands of connections.
fn ok_await_sweep() -> Vec<Series> {
    sweep(|i, n| 20.0 + 0.08 * n * (1.0 + 0.1 * i as f64) + 2.0 * i as f64)
}

/// Deterministic pseudo-random numbers in [0, 1): a tiny LCG, so the test needs no crate.
fn uniform(seed: u64) -> impl Iterator<Item = f64> {
    let mut state = seed;
    std::iter::repeat_with(move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// Ping latencies per stack, 0.1 ms to 5 s: most fast, a share stuck behind blocked reactors
/// (that share differs per stack).
fn latency_samples() -> Vec<LatencySamples> {
    STACKS
        .iter()
        .enumerate()
        .map(|(i, stack)| {
            let blocked_share = [0.6, 0.3, 0.5, 0.15, 0.05][i];
            let mut u = uniform(i as u64 + 1);
            let latencies_ms = (0..5000)
                .map(|_| {
                    let (pick, spread) = (u.next().unwrap(), u.next().unwrap());
                    if pick < blocked_share {
                        // Log-uniform from 20 ms to 5 s.
                        20.0 * 250f64.powf(spread)
                    } else {
                        // Log-uniform from 0.1 ms to 2 ms.
                        0.1 * 20f64.powf(spread)
                    }
                })
                .collect();
            LatencySamples {
                label: stack.to_string(),
                latencies_ms,
                failed: 0,
                answered: None,
            }
        })
        .collect()
}

/// Parses `svg` as XML and returns the text of all its `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_owned()))
        .collect()
}

fn assert_has_text(texts: &[String], wanted: &str) {
    assert!(
        texts.iter().any(|t| t == wanted),
        "no <text> {wanted:?} in {texts:?}"
    );
}

/// Writes a figure to `$PLOT_SAMPLE_DIR`, when it is set.
fn keep_sample(name: &str, svg: &str) {
    if let Some(dir) = std::env::var_os("PLOT_SAMPLE_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join(name), svg).unwrap();
    }
}

#[test]
fn wall_plots_are_well_formed_and_labelled() {
    let cases = [
        ("/bad", bad_sweep(), "wall_bad.svg"),
        ("/ok-blocking", ok_blocking_sweep(), "wall_ok_blocking.svg"),
        ("/ok-await", ok_await_sweep(), "wall_ok_await.svg"),
    ];
    for (route, series, file) in cases {
        let title = format!("{route}: wall time for N concurrent requests, sleep 20 ms");
        let svg = wall_vs_concurrency(&title, &series, Some(&one_sleep())).unwrap();
        keep_sample(file, &svg);

        let texts = texts(&svg);
        assert_has_text(&texts, &title);
        assert_has_text(&texts, "concurrent requests (N)");
        assert_has_text(&texts, "wall time (ms)");
        assert_has_text(&texts, "one sleep (20 ms)");
        for stack in STACKS {
            assert_has_text(&texts, stack);
        }
    }
}

#[test]
fn cdf_plot_is_well_formed_and_labelled() {
    let title = "/ping latency during the /bad burst, N = 1000";
    let svg = latency_cdf(title, &latency_samples()).unwrap();
    keep_sample("cdf_ping.svg", &svg);

    let texts = texts(&svg);
    assert_has_text(&texts, title);
    assert_has_text(
        &texts,
        "wait from the ping's scheduled send to its answer (ms)",
    );
    assert_has_text(&texts, "fraction of pings answered within x");
    assert_has_text(&texts, PROBE_TIMEOUT_LABEL);
    for stack in STACKS {
        assert_has_text(&texts, stack);
    }
}

/// The vertical mark's label on every ping CDF.
const PROBE_TIMEOUT_LABEL: &str = "1 s: a Kubernetes probe's default timeout";

/// The highest point (smallest y, in pixels) of the line drawn in `colour`.
fn top_of_line(svg: &str, colour: &str) -> f64 {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let line = doc.descendants().find(|n| {
        n.has_tag_name("polyline")
            && n.attribute("stroke")
                .is_some_and(|c| c.eq_ignore_ascii_case(colour))
    });
    let points = line.and_then(|n| n.attribute("points")).expect("a line");
    let ys = points.split_whitespace().map(|xy| {
        let (_, y) = xy.split_once(',').expect("x,y");
        y.parse::<f64>().unwrap()
    });
    ys.fold(f64::INFINITY, f64::min)
}

#[test]
fn failed_pings_keep_a_cdf_from_reaching_one() {
    let answered: Vec<f64> = (1..=50).map(|k| k as f64 * 40.0).collect();
    let samples = [
        LatencySamples {
            label: "every ping answered".into(),
            latencies_ms: answered.clone(),
            failed: 0,
            answered: None,
        },
        LatencySamples {
            label: "half failed".into(),
            latencies_ms: answered,
            failed: 50,
            answered: None,
        },
    ];
    let svg = latency_cdf("pings", &samples).unwrap();
    keep_sample("cdf_failed.svg", &svg);
    let texts = texts(&svg);
    assert_has_text(&texts, "every ping answered");
    assert_has_text(&texts, "half failed: 50 of 100 got no answer");
    assert_has_text(&texts, PROBE_TIMEOUT_LABEL);
    // The first series is blue, the second vermillion; y grows downwards. The complete
    // curve climbs to 1, the other to 0.5: half the plot's height lower.
    let (full, half) = (top_of_line(&svg, "#0072B2"), top_of_line(&svg, "#D55E00"));
    assert!(half - full > 100.0, "tops at {full} and {half} px");
}

#[test]
fn labels_with_markup_characters_are_escaped() {
    let series = [Series {
        label: "a<b & c>d".into(),
        points: vec![(1.0, 2.0), (10.0, 3.0)],
    }];
    let svg = wall_vs_concurrency("x < y & z", &series, None).unwrap();
    let texts = texts(&svg);
    assert_has_text(&texts, "x < y & z");
    assert_has_text(&texts, "a<b & c>d");
}

#[test]
fn empty_inputs_draw_a_note_instead_of_panicking() {
    let svg = wall_vs_concurrency("nothing", &[], None).unwrap();
    assert_has_text(&texts(&svg), "no data to plot");

    let empty = [Series {
        label: "demo-axum".into(),
        points: vec![],
    }];
    let svg = wall_vs_concurrency("nothing", &empty, Some(&one_sleep())).unwrap();
    let found = texts(&svg);
    assert_has_text(&found, "no data to plot");
    assert_has_text(&found, "demo-axum (no data)");
    keep_sample("wall_empty.svg", &svg);

    let svg = latency_cdf("nothing", &[]).unwrap();
    assert_has_text(&texts(&svg), "no data to plot");
    let no_samples = [LatencySamples {
        label: "demo-axum".into(),
        latencies_ms: vec![],
        failed: 0,
        answered: None,
    }];
    let svg = latency_cdf("nothing", &no_samples).unwrap();
    assert_has_text(&texts(&svg), "demo-axum (no data)");
}

#[test]
fn single_points_and_zero_values_do_not_panic() {
    let single = [Series {
        label: "demo-axum".into(),
        points: vec![(100.0, 20.0)],
    }];
    let long_title = "a title much longer than usual, ".repeat(4);
    let svg = wall_vs_concurrency(&long_title, &single, None).unwrap();
    keep_sample("wall_single.svg", &svg);
    texts(&svg);

    let zeros = [Series {
        label: "demo-axum".into(),
        points: vec![(0.0, 0.0), (1.0, -5.0), (10.0, f64::NAN), (100.0, 20.0)],
    }];
    let svg = wall_vs_concurrency(
        "zeros",
        &zeros,
        Some(&Series {
            label: "zero".into(),
            points: vec![(1.0, 0.0)],
        }),
    )
    .unwrap();
    texts(&svg);

    let odd_samples = [
        LatencySamples {
            label: "one".into(),
            latencies_ms: vec![3.0],
            failed: 0,
            answered: None,
        },
        LatencySamples {
            label: "zeros".into(),
            latencies_ms: vec![0.0, 0.0, -1.0, f64::INFINITY],
            failed: 1,
            answered: None,
        },
        LatencySamples {
            label: "all equal".into(),
            latencies_ms: vec![5.0; 100],
            failed: 0,
            answered: None,
        },
    ];
    let svg = latency_cdf("odd samples", &odd_samples).unwrap();
    keep_sample("cdf_odd.svg", &svg);
    texts(&svg);
}

/// A case of ten requests of 500 ms, their answers one sleep apart (`serialised`) or all at
/// once, with a ping every 50 ms that waits for the next answer.
fn case_timeline(serialised: bool) -> Timeline {
    let answered = |k: usize| {
        if serialised {
            500.0 * (k + 1) as f64
        } else {
            501.0
        }
    };
    let span = |sent_ms: f64, ended_ms: f64| Span {
        sent_ms,
        ended_ms,
        ok: true,
    };
    let requests = (0..10).map(|k| span(0.0, answered(k))).collect();
    let last = answered(9);
    let pings = (0..(last / 50.0) as usize).map(|k| {
        let sent = k as f64 * 50.0 - 25.0;
        let next_answer = (0..10).map(answered).find(|&at| at > sent).unwrap_or(sent);
        span(sent, if serialised { next_answer } else { sent + 0.3 })
    });
    Timeline {
        requests,
        closed_loop: Vec::new(),
        open_loop: pings.collect(),
    }
}

/// The `<rect>` elements filled with `colour`.
fn rects_filled(svg: &str, colour: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let filled = |n: &roxmltree::Node| {
        n.attribute("fill")
            .is_some_and(|f| f.eq_ignore_ascii_case(colour))
    };
    doc.descendants()
        .filter(|n| n.has_tag_name("rect") && filled(n))
        .count()
}

#[test]
fn the_timeline_draws_every_request_and_names_every_panel() {
    let (bad, ok) = (case_timeline(true), case_timeline(false));
    let grid = TimelineGrid {
        title: "When each request and ping was answered".into(),
        subtitle: "10 concurrent requests of 500 ms".into(),
        columns: vec![
            ("/bad".into(), "sleeps on the reactor".into()),
            ("/ok-await".into(), "awaits the runtime's timer".into()),
        ],
        rows: vec![
            TimelineRow {
                label: "demo-axum".into(),
                panels: vec![Some(&bad), Some(&ok)],
            },
            TimelineRow {
                label: "demo-hyper-smol".into(),
                panels: vec![Some(&bad), None],
            },
        ],
        sleep_ms: 500.0,
    };
    let svg = timeline(&grid).expect("a figure");
    keep_sample("timeline.svg", &svg);
    // Three panels measured, ten request bars each, in the requests' blue.
    assert_eq!(
        rects_filled(&svg, "#0072B2"),
        30 + 1,
        "and one in the legend"
    );
    let texts = texts(&svg);
    for wanted in [
        "/bad",
        "/ok-await",
        "demo-axum",
        "demo-hyper-smol",
        "not measured",
    ] {
        assert_has_text(&texts, wanted);
    }
    assert_has_text(&texts, "5");
    assert_has_text(&texts, "When each request and ping was answered");
    assert_has_text(&texts, "10 concurrent requests of 500 ms");
    // Each measured panel says when its answers came.
    let count = |wanted: &str| texts.iter().filter(|t| *t == wanted).count();
    assert_eq!(count("10 answers, from 0.5 s to 5.0 s"), 2);
    assert_eq!(count("10 answers, all at 0.5 s"), 1);
}

/// The committed comparison, as `redraw` reads it.
fn committed_report() -> Report {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../results/results.json");
    let json = std::fs::read_to_string(path).expect("results/results.json");
    serde_json::from_str(&json).expect("a report")
}

#[test]
fn the_cut_timeline_shows_the_glance_stacks_only() {
    let report = committed_report();
    let figures = plots::timelines(&report).unwrap();
    let names: Vec<&str> = figures.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, [plots::TIMELINE, plots::TIMELINE_GLANCE]);
    let (full, glance) = (texts(&figures[0].1), texts(&figures[1].1));
    keep_sample("timeline-glance.svg", &figures[1].1);
    for target in report.targets() {
        assert_has_text(&full, target);
        let shown = glance.iter().any(|t| t == target);
        assert_eq!(shown, stacks::glance().contains(&target), "{target}");
    }
    let all = report.targets().len();
    let title = format!("When each request and ping was answered, on 3 of the {all} stacks");
    assert_has_text(&glance, &title);
    // Every measured panel of the cut figure carries its note: 3 stacks × the routes.
    let is_note = |t: &&String| {
        let count = t
            .split_once(" answer")
            .map(|(count, _)| count.parse::<usize>());
        count.is_some_and(|count| count.is_ok())
    };
    let notes = glance.iter().filter(is_note).count();
    assert_eq!(notes, 3 * report.plan.routes.len());
}

#[test]
fn the_cdfs_of_the_committed_comparison_count_their_failed_pings() {
    let report = committed_report();
    for route in plots::cdf_routes(&report) {
        let texts = texts(&plots::latency_cdf(&report, route).unwrap());
        assert_has_text(&texts, PROBE_TIMEOUT_LABEL);
        let cases = report.cases.iter().filter(|case| case.route == route);
        for open in cases.filter_map(|case| case.open_loop.as_ref()) {
            let failed = open.scheduled - open.raw_ms.len();
            let said = format!(": {failed} of {} got no answer", open.scheduled);
            assert_eq!(
                texts.iter().any(|t| t.ends_with(&said)),
                failed > 0,
                "{route}: {said}"
            );
        }
    }
}
