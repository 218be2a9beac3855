//! SVG plots of the concurrency sweep, of latency distributions and of the cases' timelines.
//!
//! Four figures, each rendered with plotters' SVG backend into a `String`:
//!
//! - [`wall_vs_concurrency`]: how long N concurrent requests take, against N, one line per
//!   stack, with an optional guide line for the ideal (one sleep when nothing blocks, a
//!   staircase for a bounded pool);
//! - [`latency_cdf`]: the empirical CDF of latency samples, one line per stack, which shows
//!   the whole distribution where a percentile table shows only a few points of it;
//! - [`timeline::timeline`]: every request and ping of the comparison's cases on one clock,
//!   a panel per stack and route (its own module documents its marks);
//! - the race's plot (`experiments/race/views/plot.rs`): the race's trials, a dot per trial at the closed-loop ping's slowest
//!   wait in sleeps, a row per stack and connect mode (its own module documents its marks).
//!
//! The caller writes the figure (the reports write every file atomically).
//!
//! Choices a reader of the figures should know about:
//!
//! - Both x axes, and the wall-time y axis, are logarithmic: the sweep goes from 1 to 10 000
//!   requests and wall times from a fraction of a millisecond to minutes, and on a log axis
//!   "linear growth" (the blocking case) and "flat" (the concurrent case) are both easy to
//!   tell apart at every scale.
//! - A log axis cannot show zero or negative values. Such values are **clamped** to
//!   [`LOG_FLOOR`] rather than dropped, so a measurement that rounded down to zero still
//!   appears (at the bottom of the plot) and a CDF still counts every sample. Values that are
//!   not finite (NaN, infinities) cannot be drawn anywhere and are skipped.
//! - Axis ranges come from the data, padded and widened to "nice" bounds (1, 2 or 5 times a
//!   power of ten) that always include at least one power of ten, so every log axis has
//!   labelled ticks; see [`log_range`].
//! - Colours follow the order of the series (the Okabe–Ito palette, readable with the common
//!   colour-vision deficiencies): pass the stacks in the same order to every figure and each
//!   stack keeps its colour. Measured points are drawn as dots.
//! - The legend goes where the lines leave room: upper left for wall times (they rise to the
//!   right); for a CDF, upper left when most samples are slow and lower right when most are
//!   fast (the curve reaches 1 early); on a semi-opaque white background, so what it covers
//!   still shows.
//! - With no data at all, the figure is still drawn, with default ranges and a "no data" note:
//!   a report that links to the file then shows why it is empty instead of a broken image.
//!
//! plotters is built without its `ttf` feature: the SVG backend writes text as `<text>`
//! elements and the viewer lays it out, so no system font library is needed. plotters then
//! estimates text sizes (for the legend box) from a fixed average character width.
//!
//! [`scale`] holds the axes' arithmetic (ranges, ticks, the CDF's steps), [`figure`] the
//! drawing.

pub(crate) mod figure;
pub mod scale;
pub mod timeline;

use std::ops::Range;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use figure::{Figure, Line, LineKind, colour};
pub use scale::{LOG_FLOOR, cdf_points, log_range};
use scale::{format_tick, log_points, log_tick, sorted_by_x};

/// Width of every figure, in pixels.
pub const WIDTH: u32 = 800;
/// Height of every figure, in pixels.
pub const HEIGHT: u32 = 500;

/// Default x range (concurrency) of a wall-time figure without data: a typical sweep.
const DEFAULT_CONCURRENCY: Range<f64> = 1.0..10_000.0;
/// Default y range (ms) of a wall-time figure without data.
const DEFAULT_WALL_MS: Range<f64> = 1.0..1_000.0;
/// Default x range (ms) of a CDF figure without data.
const DEFAULT_LATENCY_MS: Range<f64> = 0.1..1_000.0;
/// y range of a CDF figure: a little above 1 so that the top of the curves is not hidden
/// under the frame.
const FRACTION_RANGE: Range<f64> = 0.0..1.05;

/// One line of a plot: a label for the legend and its points (x, y).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// The raw latency samples of one stack, in milliseconds, in any order, and how many more
/// never got an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencySamples {
    pub label: String,
    pub latencies_ms: Vec<f64>,
    /// Pings (or requests) that failed: they count in the whole as if they took forever, so
    /// the curve stops short of 1 by their share and the legend says how many.
    pub failed: usize,
    /// How many answers `latencies_ms` stand for, where they are evenly spaced ones of more
    /// (a sweep point's completions); `None`: they are every answer.
    pub answered: Option<usize>,
}

impl LatencySamples {
    /// The answers the samples stand for, the failures aside.
    fn answered(&self) -> usize {
        (self.answered)
            .unwrap_or_else(|| self.latencies_ms.iter().filter(|ms| ms.is_finite()).count())
    }

    /// The legend's words: the label, and "k of n got no answer" when some failed.
    fn legend(&self) -> String {
        match self.failed {
            0 => self.label.clone(),
            failed => {
                let all = self.answered() + failed;
                format!("{}: {failed} of {all} got no answer", self.label)
            }
        }
    }

    /// The CDF's steps over every sample, failures included: the answered share at the end.
    fn steps(&self) -> Vec<(f64, f64)> {
        let answered = self.answered();
        let share = answered as f64 / (answered + self.failed).max(1) as f64;
        let points = cdf_points(&self.latencies_ms).into_iter();
        points.map(|(x, y)| (x, y * share)).collect()
    }
}

/// A vertical line across a figure at `x`, with its meaning written beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub label: String,
}

impl Mark {
    /// The line a probe's answer must come before: Kubernetes' default probe timeout.
    pub fn probe_timeout() -> Mark {
        Mark {
            x: burst_meter::probe::PROBE_TIMEOUT_MS,
            label: format!(
                "{} s: a Kubernetes probe's default timeout",
                burst_meter::probe::PROBE_TIMEOUT_MS / 1000.0
            ),
        }
    }
}

/// Why a figure could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// plotters failed while drawing (with the SVG backend, in practice only on a bug).
    #[error("drawing the plot failed: {0}")]
    Draw(String),
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for PlotError {
    fn from(err: DrawingAreaErrorKind<E>) -> Self {
        PlotError::Draw(err.to_string())
    }
}

/// Wall time against concurrency, both axes logarithmic, one line with point markers per
/// stack.
///
/// Each series' points are (N concurrent requests, wall time in ms); they are drawn in order
/// of N. `ideal`, e.g. "one sleep" at every N, is drawn as a dashed grey guide: the wall time
/// of a server that does no worse than the plan allows, which the reader compares the stacks
/// against. Coordinates at or below zero are clamped to [`LOG_FLOOR`]; points with a
/// non-finite coordinate are skipped (see the module documentation).
pub fn wall_vs_concurrency(
    title: &str,
    series: &[Series],
    ideal: Option<&Series>,
) -> Result<String, PlotError> {
    let data = series.iter().enumerate().map(|(i, s)| Line {
        label: s.label.clone(),
        points: sorted_by_x(log_points(&s.points)),
        kind: LineKind::Data {
            colour: colour(i),
            dots: true,
        },
    });
    let guide = ideal.map(|s| Line {
        label: s.label.clone(),
        points: sorted_by_x(log_points(&s.points)),
        kind: LineKind::Reference,
    });
    let lines: Vec<Line> = data.chain(guide).collect();
    let has_data = lines
        .iter()
        .any(|l| matches!(l.kind, LineKind::Data { .. }) && !l.points.is_empty());
    let x = x_range(&lines, DEFAULT_CONCURRENCY);
    let ys: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .collect();
    let y = if ys.is_empty() {
        DEFAULT_WALL_MS
    } else {
        log_range(ys)
    };
    let figure = Figure {
        title,
        x_desc: "concurrent requests (N)",
        y_desc: "wall time (ms)",
        lines,
        marks: Vec::new(),
        has_data,
        // The lines rise to the right: the upper left stays empty.
        legend: SeriesLabelPosition::UpperLeft,
    };
    figure.render(x, y.log_scale(), log_tick)
}

/// The empirical CDF of ping latencies, one line per stack: x is the latency in ms (log
/// axis), y the fraction of that stack's pings answered within x (0 to 1), with the
/// [probe timeout](Mark::probe_timeout) marked.
///
/// A curve that rises steeply and early is a stack whose pings are all fast; a curve that
/// crawls along the right edge is a heavy tail; a curve that ends below 1 lost pings, which
/// the legend counts. Samples at or below zero are clamped to [`LOG_FLOOR`], non-finite ones
/// skipped (see the module documentation).
pub fn latency_cdf(title: &str, samples: &[LatencySamples]) -> Result<String, PlotError> {
    let axes = (
        "wait from the ping's scheduled send to its answer (ms)",
        "fraction of pings answered within x",
    );
    cdf(title, axes, samples, Some(&Mark::probe_timeout()))
}

/// The empirical CDF of samples in ms, one line per stack, as [`latency_cdf`] draws it, with
/// the axes (x, y) described as given and an optional vertical mark.
///
/// Failed samples count in each stack's whole as if they had taken forever: its curve rises
/// only to the answered share and runs flat from its last sample to the right edge.
pub fn cdf(
    title: &str,
    (x_desc, y_desc): (&str, &str),
    samples: &[LatencySamples],
    mark: Option<&Mark>,
) -> Result<String, PlotError> {
    let mut lines: Vec<Line> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| Line {
            label: s.legend(),
            points: s.steps(),
            kind: LineKind::Data {
                colour: colour(i),
                // Thousands of steps: dots would only blot the line.
                dots: false,
            },
        })
        .collect();
    let has_data = lines.iter().any(|l| !l.points.is_empty());
    let mark_x = mark.map(|m| (m.x, 0.0));
    let x = match (mark_x, has_data) {
        (Some(at), true) => log_range(
            lines
                .iter()
                .flat_map(|l| &l.points)
                .chain([&at])
                .map(|p| p.0),
        ),
        _ => x_range(&lines, DEFAULT_LATENCY_MS),
    };
    // The failures' plateau: a line that stops short of 1 runs on to the right edge.
    for (line, s) in lines.iter_mut().zip(samples) {
        if let (Some(&(_, top)), true) = (line.points.last(), s.failed > 0) {
            line.points.push((x.end, top));
        }
    }
    let legend = cdf_legend(&lines, &x);
    let figure = Figure {
        title,
        x_desc,
        y_desc,
        lines,
        marks: mark.into_iter().cloned().collect(),
        has_data,
        legend,
    };
    let y: RangedCoordf64 = FRACTION_RANGE.into();
    figure.render(x, y, format_tick)
}

/// Where a CDF's legend hides the least: the curves climb from the lower left to the upper
/// right, leaving one of those two corners emptier, the upper left when the samples are slow
/// and the lower right when they are fast. Whichever corner, a box about the legend's size,
/// holds fewer of the lines' points gets it.
fn cdf_legend(lines: &[Line], x: &Range<f64>) -> SeriesLabelPosition {
    // The legend's share of the plot's width (log scale) and of its height, roughly.
    const WIDE: f64 = 0.45;
    const TALL: f64 = 0.45;
    let (start, end) = (x.start.log10(), x.end.log10());
    let across = |x: f64| (x.log10() - start) / (end - start);
    let points = lines.iter().flat_map(|line| line.points.iter());
    let (upper_left, lower_right) = points.fold((0, 0), |(ul, lr), &(x, y)| {
        let (x, y) = (across(x), y / FRACTION_RANGE.end);
        let in_upper_left = x < WIDE && y > 1.0 - TALL;
        let in_lower_right = x > 1.0 - WIDE && y < TALL;
        (
            ul + usize::from(in_upper_left),
            lr + usize::from(in_lower_right),
        )
    });
    if upper_left <= lower_right {
        SeriesLabelPosition::UpperLeft
    } else {
        SeriesLabelPosition::LowerRight
    }
}

/// The log x range of `lines`, or `default` when they have no points at all.
fn x_range(lines: &[Line], default: Range<f64>) -> Range<f64> {
    let mut xs = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .peekable();
    if xs.peek().is_none() {
        return default;
    }
    log_range(xs)
}
