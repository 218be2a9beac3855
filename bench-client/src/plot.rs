//! SVG plots of the concurrency sweep and of latency distributions.
//!
//! Two figures, both rendered with plotters' SVG backend into a `String`:
//!
//! - [`wall_vs_concurrency`]: how long N concurrent requests take, against N, one line per
//!   stack, with an optional reference line at "one sleep" (the ideal when nothing blocks);
//! - [`latency_cdf`]: the empirical CDF of latency samples, one line per stack, which shows
//!   the whole distribution where a percentile table shows only a few points of it.
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
//!   stack keeps its colour.
//! - The legend goes into whichever corner of the plot (or middle of its top or bottom edge)
//!   the data leaves emptiest, on a semi-opaque white background, so it does not hide data.
//! - With no data at all, the figure is still drawn, with default ranges and a "no data" note:
//!   a report that links to the file then shows why it is empty instead of a broken image.
//!
//! plotters is built without its `ttf` feature: the SVG backend writes text as `<text>`
//! elements and the viewer lays it out, so no system font library is needed. plotters then
//! estimates text sizes (for the legend box) from a fixed average character width.

use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every figure, in pixels.
pub const WIDTH: u32 = 800;
/// Height of every figure, in pixels.
pub const HEIGHT: u32 = 500;

/// The value that zero and negative values are clamped to on a log axis: 0.01, i.e. 10 µs
/// when the unit is milliseconds, well below anything these benchmarks resolve.
pub const LOG_FLOOR: f64 = 0.01;

/// At most this many steps are drawn per CDF line. 1 000 steps resolve the fraction to 0.001,
/// finer than the plot's pixels, and keep the SVG small however many samples there are.
const MAX_CDF_STEPS: usize = 1000;

/// Default x range (concurrency) of a wall-time figure without data: a typical sweep.
const DEFAULT_CONCURRENCY: Range<f64> = 1.0..10_000.0;
/// Default y range (ms) of a wall-time figure without data.
const DEFAULT_WALL_MS: Range<f64> = 1.0..1_000.0;
/// Default x range (ms) of a CDF figure without data.
const DEFAULT_LATENCY_MS: Range<f64> = 0.1..1_000.0;
/// y range of a CDF figure: a little above 1 so that the top of the curves is not hidden
/// under the frame.
const FRACTION_RANGE: Range<f64> = 0.0..1.05;

/// Okabe–Ito colours: distinct for the five stacks, including for readers with the common
/// colour-vision deficiencies. Series beyond the seventh reuse them (with another marker).
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
];
/// Marker shapes, paired with the colours: they tell the series apart in grey print and
/// where two stacks' points coincide, which colour alone cannot.
const MARKERS: [Marker; 5] = [
    Marker::Disc,
    Marker::Triangle,
    Marker::Square,
    Marker::Diamond,
    Marker::TriangleDown,
];
/// Half the width of a marker, in pixels.
const MARKER_SIZE: i32 = 4;
/// The reference line is grey and dashed: a guide, not a measurement.
const REFERENCE_COLOUR: RGBColor = RGBColor(110, 110, 110);

const FONT: &str = "sans-serif";
/// plotters writes `font-size = size / PLOTTERS_FONT_SCALE` into the SVG; the sizes below
/// are before that division.
const PLOTTERS_FONT_SCALE: f64 = 1.24;
const TITLE_SIZE: u32 = 22;
const AXIS_DESC_SIZE: u32 = 18;
const TICK_LABEL_SIZE: u32 = 16;
const LEGEND_SIZE: u32 = 16;
const NOTE_SIZE: u32 = 20;

/// One line of a plot: a label for the legend and its points (x, y).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// The raw latency samples of one stack, in milliseconds, in any order.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencySamples {
    pub label: String,
    pub latencies_ms: Vec<f64>,
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
/// of N. `reference_ms`, e.g. `Some((20.0, "one sleep (20 ms)"))`, adds a dashed horizontal
/// line: the wall time of a perfectly concurrent server, which the reader compares the
/// stacks against. Coordinates at or below zero are clamped to [`LOG_FLOOR`]; points with a
/// non-finite coordinate are skipped (see the module documentation).
pub fn wall_vs_concurrency(
    title: &str,
    series: &[Series],
    reference_ms: Option<(f64, &str)>,
) -> Result<String, PlotError> {
    let mut lines: Vec<Line> = series
        .iter()
        .enumerate()
        .map(|(i, s)| Line {
            label: s.label.clone(),
            points: sorted_by_x(log_points(&s.points)),
            kind: LineKind::Data {
                colour: colour(i),
                marker: Some(MARKERS[i % MARKERS.len()]),
            },
        })
        .collect();
    let has_data = lines.iter().any(|l| !l.points.is_empty());
    let x = x_range(&lines, DEFAULT_CONCURRENCY);

    let reference = reference_ms.filter(|(ms, _)| ms.is_finite());
    let reference_y = reference.map(|(ms, _)| clamp_log(ms));
    let y = if has_data || reference_y.is_some() {
        let ys = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
        log_range(ys.chain(reference_y))
    } else {
        DEFAULT_WALL_MS
    };

    if let (Some((_, label)), Some(ms)) = (reference, reference_y) {
        lines.push(Line {
            label: label.to_owned(),
            points: vec![(x.start, ms), (x.end, ms)],
            kind: LineKind::Reference,
        });
    }

    let figure = Figure {
        title,
        x_desc: "concurrent requests (N)",
        y_desc: "wall time (ms)",
        lines,
        has_data,
    };
    render(&figure, x, y.log_scale(), log_tick)
}

/// The empirical CDF of latency samples, one line per stack: x is the latency in ms (log
/// axis), y the fraction of that stack's samples at or below it (0 to 1).
///
/// A curve that rises steeply and early is a stack whose requests are all fast; a curve that
/// crawls along the right edge is a heavy tail. Samples at or below zero are clamped to
/// [`LOG_FLOOR`], non-finite ones skipped (see the module documentation).
pub fn latency_cdf(title: &str, samples: &[LatencySamples]) -> Result<String, PlotError> {
    let lines: Vec<Line> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| Line {
            label: s.label.clone(),
            points: cdf_points(&s.latencies_ms),
            kind: LineKind::Data {
                colour: colour(i),
                // Thousands of steps: markers would only blot the line.
                marker: None,
            },
        })
        .collect();
    let has_data = lines.iter().any(|l| !l.points.is_empty());
    let x = x_range(&lines, DEFAULT_LATENCY_MS);

    let figure = Figure {
        title,
        x_desc: "latency (ms)",
        y_desc: "fraction of samples at or below x",
        lines,
        has_data,
    };
    let y: RangedCoordf64 = FRACTION_RANGE.into();
    render(&figure, x, y, format_tick)
}

/// The step line of the empirical CDF of `samples`: from (smallest, 0) up to (largest, 1).
///
/// Each sample x at rank r (1-based, in sorted order) of n raises the curve from (r-1)/n to
/// r/n at x. With more than [`MAX_CDF_STEPS`] samples, only every (n / MAX_CDF_STEPS)-th rank
/// is kept, always including the largest sample: the curve is then exact at those ranks and
/// off by less than 1/MAX_CDF_STEPS in between. Values at or below zero are clamped to
/// [`LOG_FLOOR`]; non-finite ones are skipped and do not count in n.
pub fn cdf_points(samples: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .map(clamp_log)
        .collect();
    sorted.sort_by(f64::total_cmp);

    let n = sorted.len();
    let steps = n.min(MAX_CDF_STEPS);
    let mut points = Vec::with_capacity(2 * steps);
    let mut below = 0.0;
    for k in 1..=steps {
        // The rank of the k-th of `steps` evenly spaced quantiles, rounded up: `n` for k = steps.
        let rank = (k * n).div_ceil(steps);
        let x = sorted[rank - 1];
        let fraction = rank as f64 / n as f64;
        points.push((x, below));
        points.push((x, fraction));
        below = fraction;
    }
    points
}

/// A log-axis range for `values`: padded, then widened to bounds of 1, 2 or 5 times a power
/// of ten, and to at least one power of ten inside, because plotters labels a log axis only at
/// powers of ten (and at their multiples when a decade is all there is). Non-finite values are
/// ignored and values at or below zero count as [`LOG_FLOOR`]; with nothing left, the range
/// is that of the values 1 and 10.
///
/// Examples: 1..10 000 becomes 0.5..20 000; a single 20 becomes 10..50.
pub fn log_range(values: impl IntoIterator<Item = f64>) -> Range<f64> {
    // Room around the data, as a factor: keeps markers off the frame.
    const PADDING: f64 = 1.2;

    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .map(clamp_log)
        .fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
        .unwrap_or((1.0, 10.0));

    let start = nice_below(lo / PADDING);
    let end = nice_above(hi * PADDING);
    let first_decade = 10f64.powf(start.log10().ceil());
    if first_decade > end * (1.0 + 1e-9) {
        // No power of ten between `start` and `end`: extend down to the one below.
        return 10f64.powf(start.log10().floor())..end;
    }
    start..end
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

/// The largest 1, 2 or 5 times a power of ten that is at most `v` (`v` > 0).
fn nice_below(v: f64) -> f64 {
    let decade = 10f64.powf(v.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&nice| nice <= v * (1.0 + 1e-9))
        .unwrap_or(decade)
}

/// The smallest 1, 2 or 5 times a power of ten that is at least `v` (`v` > 0).
fn nice_above(v: f64) -> f64 {
    let decade = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&nice| nice >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * decade)
}

/// A tick label, rounded to three significant digits but never past the decimal point, without
/// trailing zeros ("0.05", "2.5", "20", "10000"), because plotters computes log ticks by multiplication and would otherwise print
/// 0.30000000000000004.
fn format_tick(v: &f64) -> String {
    let v = *v;
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A tick label on a log axis: only at 1, 2 and 5 times a power of ten, where plotters puts
/// ticks at every multiple and their labels collide near the end of a decade.
fn log_tick(v: &f64) -> String {
    let mantissa = *v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (mantissa - m).abs() < 1e-6)
    {
        format_tick(v)
    } else {
        String::new()
    }
}

/// Clamps a value for a log axis: see [`LOG_FLOOR`].
fn clamp_log(v: f64) -> f64 {
    v.max(LOG_FLOOR)
}

/// The points of a series made drawable on two log axes: non-finite coordinates dropped, the
/// rest clamped.
fn log_points(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|&(x, y)| (clamp_log(x), clamp_log(y)))
        .collect()
}

/// Points sorted by x, so that the line joins them from left to right whatever order the
/// sweep recorded them in.
fn sorted_by_x(mut points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// The colour of the `index`-th series.
fn colour(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// A figure once the data has become lines, ready for [`render`].
struct Figure<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    lines: Vec<Line>,
    /// False when no series has a drawable point: the figure then carries a "no data" note.
    has_data: bool,
}

/// One line of a [`Figure`], in data coordinates.
struct Line {
    label: String,
    points: Vec<(f64, f64)>,
    kind: LineKind,
}

impl Line {
    /// The line's legend entry. A series without points still gets one, marked "(no data)",
    /// so that a stack that produced nothing is visibly absent rather than silently missing.
    fn legend_label(&self) -> String {
        if self.points.is_empty() {
            format!("{} (no data)", self.label)
        } else {
            self.label.clone()
        }
    }
}

#[derive(Clone, Copy)]
enum LineKind {
    /// A measured series: solid, in its colour, with `marker` on every point if there is one.
    Data {
        colour: RGBColor,
        marker: Option<Marker>,
    },
    /// A guide such as "one sleep": grey and dashed.
    Reference,
}

/// The shape drawn on each point of a series; see [`MARKERS`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Marker {
    Disc,
    Triangle,
    Square,
    Diamond,
    TriangleDown,
}

/// Draws `figure` with a log x axis over `x` and the y axis `y` (log or linear), returning
/// the SVG text.
fn render<Y>(
    figure: &Figure,
    x: Range<f64>,
    y: Y,
    y_ticks: fn(&f64) -> String,
) -> Result<String, PlotError>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(figure.title, (FONT, title_size(figure.title)))
            .margin(12)
            // The last x tick label is centred on the right edge: leave it room.
            .margin_right(30)
            .x_label_area_size(55)
            .y_label_area_size(80)
            .build_cartesian_2d(x.log_scale(), y)?;

        chart
            .configure_mesh()
            .x_desc(figure.x_desc)
            .y_desc(figure.y_desc)
            .x_label_formatter(&log_tick)
            .y_label_formatter(&y_ticks)
            .label_style((FONT, TICK_LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .bold_line_style(BLACK.mix(0.15))
            // plotters draws a light line at every minor step of a log axis; near a decade
            // boundary they crowd into a grey band. The labelled lines are grid enough.
            .light_line_style(TRANSPARENT)
            .draw()?;

        for line in &figure.lines {
            draw_line(&mut chart, line)?;
        }
        if !figure.has_data {
            draw_no_data_note(chart.plotting_area())?;
        }
        if !figure.lines.is_empty() {
            let position = legend_position(&chart, &figure.lines);
            chart
                .configure_series_labels()
                .position(position)
                .label_font((FONT, LEGEND_SIZE))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.4))
                .margin(10)
                .draw()?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// The title's font size: [`TITLE_SIZE`], or smaller for a title too long to fit the width.
fn title_size(title: &str) -> u32 {
    // Generous average character width, as a fraction of the SVG font size.
    const CHAR_WIDTH: f64 = 0.6;
    let room = f64::from(WIDTH) - 40.0;
    let svg_size_that_fits = room / (CHAR_WIDTH * title.chars().count().max(1) as f64);
    let fits = (svg_size_that_fits * PLOTTERS_FONT_SCALE).floor() as u32;
    fits.clamp(12, TITLE_SIZE)
}

/// Draws one line and registers its legend entry.
fn draw_line<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    line: &Line,
) -> Result<(), PlotError>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let label = line.legend_label();
    let points = line.points.iter().copied();
    match line.kind {
        LineKind::Data { colour, marker } => {
            let style = colour.stroke_width(2);
            if let Some(marker) = marker {
                let at_point = |p| EmptyElement::at(p) + marker_polygon((0, 0), marker, colour);
                chart.draw_series(points.clone().map(at_point))?;
            }
            let annotation = chart
                .draw_series(LineSeries::new(points, style))?
                .label(label);
            // The legend's sample: 20 px of the line, with the marker in its middle.
            let swatch =
                move |at| EmptyElement::at(at) + PathElement::new([(0, 0), (20, 0)], style);
            match marker {
                Some(marker) => annotation
                    .legend(move |at| swatch(at) + marker_polygon((10, 0), marker, colour)),
                None => annotation.legend(swatch),
            };
        }
        LineKind::Reference => {
            let style = REFERENCE_COLOUR.stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(points, 8, 6, style))?
                .label(label)
                .legend(move |(x, y)| DashedPathElement::new([(x, y), (x + 20, y)], 5, 3, style));
        }
    }
    Ok(())
}

/// A filled marker of shape `marker` centred on `center`, in pixels: offsets from a point
/// of the plot, or a position in the legend.
///
/// Every shape is a polygon so that all markers have one element type, which plotters needs
/// to draw them as a series; the disc is a 12-gon, round enough at this size.
fn marker_polygon(center: (i32, i32), marker: Marker, colour: RGBColor) -> Polygon<(i32, i32)> {
    let r = f64::from(MARKER_SIZE);
    let outline: Vec<(f64, f64)> = match marker {
        Marker::Disc => (0..12)
            .map(|i| f64::from(i) * std::f64::consts::TAU / 12.0)
            .map(|a| (r * a.cos(), r * a.sin()))
            .collect(),
        // The triangles are a little larger, to look as heavy as the others.
        Marker::Triangle => vec![(0.0, -1.3 * r), (1.2 * r, 0.8 * r), (-1.2 * r, 0.8 * r)],
        Marker::TriangleDown => vec![(0.0, 1.3 * r), (1.2 * r, -0.8 * r), (-1.2 * r, -0.8 * r)],
        Marker::Square => vec![(-r, -r), (r, -r), (r, r), (-r, r)],
        Marker::Diamond => vec![
            (0.0, -1.3 * r),
            (1.3 * r, 0.0),
            (0.0, 1.3 * r),
            (-1.3 * r, 0.0),
        ],
    };
    let (cx, cy) = center;
    let vertices: Vec<(i32, i32)> = outline
        .into_iter()
        .map(|(x, y)| (cx + x.round() as i32, cy + y.round() as i32))
        .collect();
    Polygon::new(vertices, colour.filled())
}

/// Writes "no data" in the middle of the plotting area.
fn draw_no_data_note<DB, CT>(area: &DrawingArea<DB, CT>) -> Result<(), PlotError>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    let area = area.strip_coord_spec();
    let (w, h) = area.dim_in_pixel();
    let style = TextStyle::from((FONT, NOTE_SIZE).into_font())
        .color(&REFERENCE_COLOUR)
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(
        "no data to plot",
        (w as i32 / 2, h as i32 / 2),
        style,
    ))?;
    Ok(())
}

/// Where in the plotting area the legend hides the least of the lines: one of the corners or
/// the middle of the top or bottom edge.
///
/// The lines are sampled every few pixels along their segments (a segment crossing a corner
/// hides as much as a vertex in it), and each spot is scored by how many samples fall in a
/// box the size of the legend there. Ties go to upper left, then lower right, upper right,
/// lower left and the middles: upper left first because rising curves leave it empty, the
/// middles last because a legend there reads as part of the data.
fn legend_position<DB, X, Y>(
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    lines: &[Line],
) -> SeriesLabelPosition
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let (x_px, y_px) = chart.plotting_area().get_pixel_range();
    let origin = (x_px.start, y_px.start);
    let area = (x_px.end - x_px.start, y_px.end - y_px.start);
    let pixel_lines: Vec<Vec<(i32, i32)>> = lines
        .iter()
        .map(|line| {
            line.points
                .iter()
                .map(|p| {
                    let (x, y) = chart.backend_coord(p);
                    (x - origin.0, y - origin.1)
                })
                .collect()
        })
        .collect();
    let labels: Vec<String> = lines.iter().map(Line::legend_label).collect();
    let legend = legend_size(labels.iter().map(String::as_str));
    emptiest_spot(&pixel_lines, area, legend)
}

/// An estimate of the legend box (width, height) in pixels, on the generous side: a little
/// wider per character than the DejaVu Sans most viewers fall back to.
fn legend_size<'a>(labels: impl Iterator<Item = &'a str>) -> (i32, i32) {
    let font_px = f64::from(LEGEND_SIZE) / PLOTTERS_FONT_SCALE;
    let (count, longest) = labels.fold((0, 0), |(n, w), l| (n + 1, w.max(l.chars().count())));
    let width = 30.0 + 20.0 + 0.62 * font_px * longest as f64;
    let height = 20.0 + 1.3 * font_px * count as f64;
    (width.round() as i32, height.round() as i32)
}

/// The pure part of [`legend_position`]: `lines` in pixels relative to the plotting area of
/// size `area`, the legend of size `legend`.
fn emptiest_spot(
    lines: &[Vec<(i32, i32)>],
    area: (i32, i32),
    legend: (i32, i32),
) -> SeriesLabelPosition {
    use SeriesLabelPosition::{
        LowerLeft, LowerMiddle, LowerRight, UpperLeft, UpperMiddle, UpperRight,
    };
    // plotters puts the legend 5 px from the edges of the plotting area.
    const INSET: i32 = 5;
    let (w, h) = area;
    let (lw, lh) = (legend.0 + INSET, legend.1 + INSET);
    let candidates = [
        (UpperLeft, (0, 0)),
        (LowerRight, (w - lw, h - lh)),
        (UpperRight, (w - lw, 0)),
        (LowerLeft, (0, h - lh)),
        (UpperMiddle, ((w - lw) / 2, 0)),
        (LowerMiddle, ((w - lw) / 2, h - lh)),
    ];
    let samples: Vec<(i32, i32)> = lines.iter().flat_map(|l| sample_path(l)).collect();
    let hidden = |&(x0, y0): &(i32, i32)| {
        samples
            .iter()
            .filter(|&&(x, y)| (x0..x0 + lw).contains(&x) && (y0..y0 + lh).contains(&y))
            .count()
    };
    // `min_by_key` keeps the first of equal candidates: the order above breaks ties.
    candidates
        .into_iter()
        .min_by_key(|(_, top_left)| hidden(top_left))
        .map_or(UpperLeft, |(position, _)| position)
}

/// Points every 4 pixels or so along a polyline, its vertices included.
fn sample_path(path: &[(i32, i32)]) -> Vec<(i32, i32)> {
    const STEP_PX: f64 = 4.0;
    let mut samples: Vec<(i32, i32)> = path.first().copied().into_iter().collect();
    for pair in path.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        let (dx, dy) = (f64::from(x1 - x0), f64::from(y1 - y0));
        let steps = (dx.hypot(dy) / STEP_PX).ceil().max(1.0) as i32;
        for i in 1..=steps {
            let t = f64::from(i) / f64::from(steps);
            samples.push((x0 + (dx * t).round() as i32, y0 + (dy * t).round() as i32));
        }
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_range_pads_to_nice_bounds() {
        assert_eq!(log_range([1.0, 10_000.0]), 0.5..20_000.0);
        assert_eq!(log_range([0.1, 100_000.0]), 0.05..200_000.0);
        assert_eq!(log_range([20.0, 800.0]), 10.0..1000.0);
    }

    #[test]
    fn log_range_always_contains_a_power_of_ten() {
        // 25..35 would pad to 20..50, which has no power of ten: extended down to 10.
        assert_eq!(log_range([25.0, 35.0]), 10.0..50.0);
        assert_eq!(log_range([20.0]), 10.0..50.0);
        assert_eq!(log_range([300.0]), 100.0..500.0);
    }

    #[test]
    fn log_range_clamps_and_defaults() {
        assert_eq!(log_range([]), 0.5..20.0);
        assert_eq!(log_range([f64::NAN, f64::INFINITY]), 0.5..20.0);
        let range = log_range([0.0, -3.0, 5.0]);
        assert!(range.start > 0.0 && range.start <= LOG_FLOOR, "{range:?}");
    }

    #[test]
    fn cdf_points_is_a_staircase_from_0_to_1() {
        let points = cdf_points(&[3.0, 1.0, 2.0]);
        let third = 1.0 / 3.0;
        assert_eq!(
            points,
            vec![
                (1.0, 0.0),
                (1.0, third),
                (2.0, third),
                (2.0, 2.0 * third),
                (3.0, 2.0 * third),
                (3.0, 1.0)
            ]
        );
    }

    #[test]
    fn cdf_points_thins_large_inputs_but_keeps_the_maximum() {
        let samples: Vec<f64> = (1..=100_000).map(f64::from).collect();
        let points = cdf_points(&samples);
        assert_eq!(points.len(), 2 * MAX_CDF_STEPS);
        assert_eq!(points.last(), Some(&(100_000.0, 1.0)));
        assert_eq!(points[1], (100.0, 0.001));
    }

    #[test]
    fn cdf_points_clamps_zero_and_skips_nan() {
        assert_eq!(
            cdf_points(&[0.0, f64::NAN, -1.0]),
            vec![
                (LOG_FLOOR, 0.0),
                (LOG_FLOOR, 0.5),
                (LOG_FLOOR, 0.5),
                (LOG_FLOOR, 1.0)
            ]
        );
        assert!(cdf_points(&[]).is_empty());
    }

    #[test]
    fn log_ticks_label_one_two_five_only() {
        let labelled: Vec<String> = [10.0, 20.0, 30.0, 50.0, 90.0, 100.0, 200.0, 0.5, 0.7]
            .iter()
            .map(log_tick)
            .collect();
        assert_eq!(
            labelled,
            ["10", "20", "", "50", "", "100", "200", "0.5", ""]
        );
    }

    #[test]
    fn tick_labels_are_short() {
        let cases = [
            (0.30000000000000004, "0.3"),
            (0.05, "0.05"),
            (1.0, "1"),
            (2.5, "2.5"),
            (20.0, "20"),
            (100_000.0, "100000"),
            (0.0, "0"),
        ];
        for (value, text) in cases {
            assert_eq!(format_tick(&value), text);
        }
    }

    #[test]
    fn long_titles_get_a_smaller_font() {
        let title = "/ok-blocking: wall time for N concurrent requests, sleep 20 ms";
        assert_eq!(title_size(title), TITLE_SIZE);
        let long = title.repeat(2);
        assert!((12..TITLE_SIZE).contains(&title_size(&long)));
        assert_eq!(title_size(&long.repeat(10)), 12);
    }

    #[test]
    fn legend_avoids_the_crowded_corner() {
        use SeriesLabelPosition::*;
        let area = (600, 400);
        let legend = (150, 80);
        // A line rising from lower left to upper right crosses both of those corners.
        let rising = vec![vec![(0, 400), (600, 0)]];
        assert!(matches!(emptiest_spot(&rising, area, legend), UpperLeft));
        // A line along the top: the legend goes to the bottom.
        let top = vec![vec![(0, 10), (600, 10)]];
        assert!(matches!(emptiest_spot(&top, area, legend), LowerRight));
        // Vertical lines near both sides: only the middle of an edge is free.
        let sides = vec![vec![(50, 0), (50, 400)], vec![(550, 0), (550, 400)]];
        assert!(matches!(emptiest_spot(&sides, area, legend), UpperMiddle));
    }
}
