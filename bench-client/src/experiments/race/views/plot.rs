//! The race figure: a strip plot of the closed-loop ping's slowest wait, one dot per trial,
//! one row per stack and connect mode.
//!
//! Each trial of the race is a `/bad` burst of N requests that each block the reactor for one
//! sleep; its dot sits at the slowest wait of the original's pinger, in sleeps, on a linear
//! axis from 0 to N: near 1 the ping got in between every sleep, near N it waited behind the
//! whole burst. The rows follow the report's tallies (each connect mode in turn, every stack
//! at each), the colour tells the connect mode apart, and the dashed guides are the race's
//! verdict lines ([`GotIn::of`](crate::experiments::race::GotIn::of)): 1.5 sleeps and 0.8 × (N − 1).
//!
//! A trial that failed has no verdict and no dot (RACE.md counts them). The dots are
//! semi-transparent and jittered up or down by an amount fixed by the trial's index, so that
//! trials with the same wait stay countable and a figure redrawn from the same report is the
//! same file.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::experiments::race::{GotIn, INTERLEAVED_BELOW, RaceReport, Tally, WAITED_FOR_ALL_SHARE};
use crate::plot::PlotError;
use crate::plot::figure::{FONT, REFERENCE_COLOUR, colour, draw_no_data_note};
use burst_meter::burst::Connect;

/// About what a repository page shows, as the timeline's figure.
const WIDTH: u32 = 900;
const TITLE_H: u32 = 30;
const LEGEND_H: u32 = 24;
/// Above the rows: room for the guides' labels.
const GUIDE_BAND_H: u32 = 24;
const ROW_H: u32 = 28;
/// The x axis' tick labels and description under the rows.
const X_AXIS_H: u32 = 48;
const BOTTOM_MARGIN: u32 = 4;
/// A report without rows still gets room for its "no data" note.
const MIN_ROWS: usize = 2;

const TITLE_SIZE: u32 = 20;
const LABEL_SIZE: u32 = 16;
const SMALL_SIZE: u32 = 14;
/// Generous width of a row label's character at [`LABEL_SIZE`], in pixels: the label area
/// must hold the longest stack name.
const LABEL_CHAR_W: u32 = 8;
/// The average width of a character at [`SMALL_SIZE`], in pixels.
const APPROX_SMALL_CHAR_W: i32 = 6;

const DOT_RADIUS: i32 = 4;
/// Opacity of a dot: where trials pile up the colour deepens.
const DOT_OPACITY: f64 = 0.5;
/// The jitter's full height, in rows: as much as keeps dots off the neighbouring rows'.
const JITTER: f64 = 0.6;

/// One trial's mark: its slowest wait (sleeps), its height (rows) and its connect mode.
struct Dot {
    sleeps: f64,
    height: f64,
    connect: Connect,
}

/// The colour of a connect mode, the same in every race figure.
fn connect_colour(connect: Connect) -> RGBColor {
    match connect {
        Connect::During => colour(0),
        Connect::Before => colour(1),
    }
}

/// A connect mode in the legend's words.
fn connect_label(connect: Connect) -> &'static str {
    match connect {
        Connect::During => "during: connections opened with the requests",
        Connect::Before => "before: all connections opened first",
    }
}

/// A trial's offset from its row's centre, in rows: the golden ratio's multiples spread any
/// run of indices evenly over the jitter's height, with no randomness to vary between redraws.
fn jitter(index: usize) -> f64 {
    const GOLDEN: f64 = 0.618_033_988_75;
    ((index as f64 * GOLDEN).fract() - 0.5) * JITTER
}

/// The height of row `row` of `rows`: the first row at the top.
fn row_height(row: usize, rows: usize) -> f64 {
    (rows - 1 - row) as f64
}

/// Each trial with a verdict and a slowest wait, placed in the row of its stack and mode.
fn dots(report: &RaceReport) -> Vec<Dot> {
    let rows = report.tallies.len();
    let drawable = (report.trials.iter())
        .filter(|t| t.outcome != GotIn::Failed)
        .filter_map(|t| Some((t, t.slowest_sleeps.filter(|s| s.is_finite())?)));
    drawable
        .filter_map(|(trial, sleeps)| {
            let row = (report.tallies.iter())
                .position(|tally| tally.target == trial.target && tally.connect == trial.connect)?;
            Some(Dot {
                sleeps,
                height: row_height(row, rows) + jitter(trial.index),
                connect: trial.connect,
            })
        })
        .collect()
}

/// The x axis, in sleeps: from 0 to half a sleep past N, further if a wait was longer, so
/// that no dot falls off the right edge.
fn sleeps_range(concurrency: usize, dots: &[Dot]) -> Range<f64> {
    let longest = dots.iter().map(|d| d.sleeps).fold(0.0, f64::max);
    0.0..(concurrency as f64).max(longest.ceil()) + 0.5
}

/// The strip plot of the race's trials, returning the SVG text (see the module
/// documentation). A report without trials is drawn with a "no data" note.
pub fn race(report: &RaceReport) -> Result<String, PlotError> {
    let rows = report.tallies.len();
    let height = TITLE_H
        + LEGEND_H
        + GUIDE_BAND_H
        + rows.max(MIN_ROWS) as u32 * ROW_H
        + X_AXIS_H
        + BOTTOM_MARGIN;
    let plan = &report.plan;
    let title = format!(
        "Closed-loop ping (the original's pinger): its slowest wait per trial, \
         {} concurrent /bad × {} ms",
        plan.concurrency, plan.sleep_ms
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let centred = Pos::new(HPos::Center, VPos::Center);
        let title_at = ((WIDTH / 2) as i32, (TITLE_H / 2) as i32);
        root.draw(&Text::new(
            title,
            title_at,
            text_style(TITLE_SIZE, BLACK, centred),
        ))?;
        draw_legend(&root, &plan.connects)?;
        let (_, lower) = root.split_vertically(TITLE_H + LEGEND_H);
        draw_strips(&root, &lower, report)?;
        root.present()?;
    }
    Ok(svg)
}

type Strips<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The rows with their labels, the x axis, the guides and the dots, in `area`.
fn draw_strips<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    report: &RaceReport,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let dots = dots(report);
    let rows = report.tallies.len();
    let longest = (report.tallies.iter())
        .map(|tally| row_label(tally).chars().count())
        .max()
        .unwrap_or(0) as u32;
    let sleeps = sleeps_range(report.plan.concurrency, &dots);
    // The rows sit at whole heights, the top one at rows − 1; the band above holds the guides'
    // labels, and empty rows below the last make up for missing ones.
    let top = rows as f64 - 0.5 + f64::from(GUIDE_BAND_H) / f64::from(ROW_H);
    let bottom = rows as f64 - 0.5 - rows.max(MIN_ROWS) as f64;
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(24)
        .margin_bottom(BOTTOM_MARGIN)
        .x_label_area_size(X_AXIS_H)
        .y_label_area_size((longest * LABEL_CHAR_W + 16).max(90))
        .build_cartesian_2d(sleeps.clone(), bottom..top)?;
    chart
        .configure_mesh()
        .x_desc(format!(
            "the closed-loop ping's slowest wait, in sleeps of {} ms",
            report.plan.sleep_ms
        ))
        // Whole sleeps, at most a dozen labels: plotters steps them by 1, 2 or 5 × 10^k.
        .x_labels(12)
        .x_label_formatter(&|sleeps| format!("{sleeps}"))
        .disable_y_mesh()
        // The rows' lines and names stand for a y axis; a vertical line there would cross the
        // guide's label in the band above.
        .disable_y_axis()
        .label_style((FONT, SMALL_SIZE))
        .axis_desc_style((FONT, SMALL_SIZE))
        .bold_line_style(BLACK.mix(0.1))
        .light_line_style(TRANSPARENT)
        .axis_style(BLACK.mix(0.4))
        .draw()?;
    draw_rows(root, &mut chart, report)?;
    draw_guides(root, &mut chart, report.plan.concurrency, (bottom, top))?;
    let marks = dots.iter().map(|dot| {
        let style = connect_colour(dot.connect).mix(DOT_OPACITY).filled();
        Circle::new((dot.sleeps, dot.height), DOT_RADIUS, style)
    });
    chart.draw_series(marks)?;
    if dots.is_empty() {
        draw_no_data_note(chart.plotting_area())?;
    }
    Ok(())
}

/// A row's name: its stack's, and how many of its trials failed, which have no dot.
fn row_label(tally: &Tally) -> String {
    match tally.failed {
        0 => tally.target.clone(),
        failed => format!("{} ({failed} failed)", tally.target),
    }
}

/// Each row a faint line through its centre, with its stack's name left of the plot in its
/// connect mode's colour; a darker line between the connect modes' blocks of rows.
fn draw_rows<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut Strips<'_, DB>,
    report: &RaceReport,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let rows = report.tallies.len();
    let x_range = chart.x_range();
    let right = Pos::new(HPos::Right, VPos::Center);
    for (row, tally) in report.tallies.iter().enumerate() {
        let height = row_height(row, rows);
        let ends = [(x_range.start, height), (x_range.end, height)];
        chart.draw_series([PathElement::new(ends, BLACK.mix(0.12).stroke_width(1))])?;
        let (x, y) = chart.backend_coord(&(x_range.start, height));
        let name = text_style(LABEL_SIZE, connect_colour(tally.connect), right);
        root.draw(&Text::new(row_label(tally), (x - 10, y), name))?;
        let new_block = row > 0 && report.tallies[row - 1].connect != tally.connect;
        if new_block {
            let between = height + 0.5;
            let ends = [(x_range.start, between), (x_range.end, between)];
            chart.draw_series([PathElement::new(ends, BLACK.mix(0.5).stroke_width(1))])?;
        }
    }
    Ok(())
}

/// The verdict lines, dashed, with the outcome each zone names: "got in between every sleep"
/// left of 1.5 sleeps, "got in somewhere" between the lines, "waited for all" right of
/// 0.8 × (N − 1).
fn draw_guides<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut Strips<'_, DB>,
    concurrency: usize,
    (bottom, top): (f64, f64),
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let waited_for_all = WAITED_FOR_ALL_SHARE * concurrency.saturating_sub(1) as f64;
    let guides = [INTERLEAVED_BELOW, waited_for_all].map(|sleeps| {
        let style = REFERENCE_COLOUR.stroke_width(1);
        DashedPathElement::new([(sleeps, bottom), (sleeps, top)], 5, 4, style)
    });
    chart.draw_series(guides)?;
    // The labels are drawn on the whole figure: the left one may reach over the row labels'
    // column, which is empty at the band's height.
    let band = top - 0.5 * f64::from(GUIDE_BAND_H) / f64::from(ROW_H);
    let (left, _) = chart.backend_coord(&(INTERLEAVED_BELOW, band));
    let (right, y) = chart.backend_coord(&(waited_for_all, band));
    let label = |pos| text_style(SMALL_SIZE, REFERENCE_COLOUR, Pos::new(pos, VPos::Center));
    let between = "got in between every sleep";
    // With few requests the guide is near the left edge: keep the label in the figure.
    let fits = APPROX_SMALL_CHAR_W * between.chars().count() as i32 + 8;
    let between_end = (left - 6).max(fits);
    root.draw(&Text::new(between, (between_end, y), label(HPos::Right)))?;
    let middle = (left + right) / 2;
    let somewhere = "got in somewhere";
    root.draw(&Text::new(somewhere, (middle, y), label(HPos::Center)))?;
    root.draw(&Text::new(
        "waited for all",
        (right + 6, y),
        label(HPos::Left),
    ))?;
    Ok(())
}

/// What the colours mean, in a line under the title: the connect modes the race ran, each
/// with its dot.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    connects: &[Connect],
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let style = text_style(SMALL_SIZE, BLACK, Pos::new(HPos::Left, VPos::Center));
    let y = (TITLE_H + LEGEND_H / 2) as i32;
    let mut x = 60;
    let mut shown: Vec<Connect> = connects.to_vec();
    shown.dedup();
    for connect in shown {
        let dot_style = connect_colour(connect).mix(DOT_OPACITY).filled();
        root.draw(&Circle::new((x, y), DOT_RADIUS, dot_style))?;
        let text = connect_label(connect);
        root.draw(&Text::new(text, (x + 10, y), style.clone()))?;
        x += 36 + text.chars().count() as i32 * APPROX_SMALL_CHAR_W;
    }
    let note = text_style(SMALL_SIZE, REFERENCE_COLOUR, style.pos);
    root.draw(&Text::new(
        "one dot a trial, failed ones left out",
        (x, y),
        note,
    ))?;
    Ok(())
}

fn text_style(size: u32, colour: RGBColor, pos: Pos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, size).into_font(),
        color: colour.to_backend_color(),
        pos,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::race::{RacePlan, Trial, tally};
    use burst_meter::environment::Environment;

    fn trial(target: &str, connect: Connect, index: usize, sleeps: f64) -> Trial {
        let plan = RacePlan::default();
        let outcome = GotIn::of(
            sleeps * plan.sleep_ms as f64,
            plan.sleep_ms,
            plan.concurrency,
        );
        Trial {
            target: target.to_owned(),
            connect,
            index,
            outcome,
            slowest_sleeps: Some(sleeps),
            open_scheduled: 0,
            open_over_timeout: 0,
            open_errors: Vec::new(),
        }
    }

    /// Two stacks in both modes, with repeated waits, a failed trial and a wait past N.
    fn report() -> RaceReport {
        let mut trials = Vec::new();
        for connect in [Connect::During, Connect::Before] {
            for index in 0..8 {
                let late = 9.0 + 0.1 * (index % 3) as f64;
                trials.push(trial("demo-actix-web", connect, index, late));
                let early = if index % 4 == 0 { 4.0 } else { 1.05 };
                trials.push(trial("demo-axum", connect, index, early));
            }
        }
        trials.push(trial("demo-axum", Connect::Before, 8, 10.7));
        trials[0].outcome = GotIn::Failed;
        let environment = Environment {
            date: String::new(),
            git_commit: String::new(),
            code_stamp: String::new(),
            rustc: String::new(),
            cpu: String::new(),
            cores: 2,
            memory: String::new(),
            os: String::new(),
            kernel: String::new(),
            crates: Vec::new(),
            stacks: Vec::new(),
        };
        RaceReport {
            environment,
            plan: RacePlan::default(),
            command: String::new(),
            tallies: tally(&trials),
            trials,
            arrival: Vec::new(),
            arrival_trials: Vec::new(),
            variants: Vec::new(),
            failures: Vec::new(),
        }
    }

    #[test]
    fn every_trial_with_a_verdict_is_a_dot_and_the_legend_names_both_modes() {
        let report = report();
        let svg = race(&report).unwrap();
        let kept = (report.trials.iter())
            .filter(|t| t.outcome != GotIn::Failed)
            .count();
        // The legend's entries are dots too, one per connect mode.
        let legend_dots = report.plan.connects.len();
        assert_eq!(svg.matches("<circle").count(), kept + legend_dots);
        assert!(svg.contains(connect_label(Connect::During)));
        assert!(svg.contains(connect_label(Connect::Before)));
        assert!(svg.contains("got in between every sleep"));
        assert!(svg.contains("got in somewhere"));
        assert!(svg.contains("closed-loop ping"));
        assert!(svg.contains("waited for all"));
        assert!(!svg.contains("no data to plot"));
    }

    #[test]
    fn a_report_without_trials_says_so() {
        let mut report = report();
        report.trials.clear();
        report.tallies.clear();
        assert!(race(&report).unwrap().contains("no data to plot"));
    }

    #[test]
    fn jitter_keeps_dots_in_their_row() {
        assert!((0..100).all(|index| jitter(index).abs() <= JITTER / 2.0));
        assert_ne!(jitter(1), jitter(2));
    }
}
