//! The timeline figure: small multiples, a row per stack and a column per route, each panel
//! the case's requests and pings on one clock.
//!
//! In a panel, time runs left to right from the burst's first send, on the same scale in
//! every panel of a column, so that down a column the stacks compare at a glance. Each column
//! is as wide as its time needs, beside a least width: a route that serialises (answers one
//! sleep apart, out to ten sleeps) gets the room, a fix whose answers all came near one sleep
//! a narrow column that still shows them apart from its guide. From the top:
//!
//! - each burst request, a bar from when it was sent to when it was answered (black if it
//!   failed), the first answered at the top;
//! - the closed-loop ping (the original's pinger), then the open-loop ping: each ping a dot
//!   at the time it was sent (the open loop: scheduled), coloured by how long it waited for
//!   its answer, with a faint line to the answer when that took longer than
//!   [`PROMPT_MS`]; a failed ping is a black cross.
//!
//! Above the bars, each panel says in words when its answers came ("10 answers, from 0.5 s
//! to 5.0 s", or "all at 5.0 s"), from the same data, so that a caption need not claim it.
//!
//! The colour classes are the health check's: answered promptly, answered late, and later
//! than [`PROBE_TIMEOUT_MS`], Kubernetes' default probe timeout, where a liveness probe
//! would have counted a failure.

use std::ops::Range;

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod legend;

use super::PlotError;
use super::figure::{FONT, PALETTE, REFERENCE_COLOUR};
use burst_meter::timeline::{Span, Timeline};
use legend::draw_legend;

/// A ping answered within this many ms was answered promptly.
pub const PROMPT_MS: f64 = 10.0;
/// Kubernetes' default probe timeout: a ping slower than this would have failed a probe.
pub use burst_meter::probe::PROBE_TIMEOUT_MS;

/// The figure's width in pixels: about what a repository page shows, so text stays legible.
const WIDTH: u32 = 960;
/// The title and, under it, the subtitle.
const TITLE_H: u32 = 58;
const HEADER_H: u32 = 42;
/// The stack names, left of the panels.
const LABEL_W: u32 = 176;
/// The longest row label drawn on one line in [`LABEL_W`].
const LABEL_CHARS: usize = 22;
const RIGHT_MARGIN: u32 = 14;
const PANEL_GAP: u32 = 18;
/// A column's least width: room for its note on when the answers came.
const MIN_PANEL_W: u32 = 190;
/// The least room between two labelled ticks, in pixels.
const MIN_TICK_GAP: u32 = 32;
const ROW_H: u32 = 112;
const ROW_GAP: u32 = 10;
/// The time axis under the last row, its labels and their description.
const AXIS_H: u32 = 48;
const LEGEND_H: u32 = 52;

const TITLE_SIZE: u32 = 21;
const HEADER_SIZE: u32 = 17;
const LABEL_SIZE: u32 = 16;
const SMALL_SIZE: u32 = 13;

/// The colours, from the palette every figure uses: requests blue, pings from bluish green
/// (prompt) through orange (late) to vermillion (a probe would have failed); guides grey.
const REQUEST: RGBColor = PALETTE[0];
const PROMPT: RGBColor = PALETTE[2];
const LATE: RGBColor = PALETTE[4];
const TIMED_OUT: RGBColor = PALETTE[1];
const GUIDE: RGBColor = REFERENCE_COLOUR;

/// The panel's vertical layout, in its own units: the open-loop lane at the bottom, the
/// closed-loop lane above it, the requests' band above both.
const OPEN_LANE: f64 = 0.8;
const CLOSED_LANE: f64 = 2.4;
const REQUESTS: Range<f64> = 3.6..14.0;
/// The top of a panel: above the requests, a line for the note on their answers.
const PANEL_TOP: f64 = 16.4;

/// One figure: the title and subtitle, the columns' headings (route, what it does), the
/// rows.
#[derive(Debug)]
pub struct TimelineGrid<'a> {
    pub title: String,
    pub subtitle: String,
    pub columns: Vec<(String, String)>,
    pub rows: Vec<TimelineRow<'a>>,
    /// One sleep, in ms: drawn as a dashed guide, where a concurrent burst ends.
    pub sleep_ms: f64,
}

/// One stack: its label and its case per column (`None` where that case did not run).
#[derive(Debug)]
pub struct TimelineRow<'a> {
    pub label: String,
    pub panels: Vec<Option<&'a Timeline>>,
}

/// How long a ping waited, as the figure colours it.
fn ping_colour(span: &Span) -> RGBColor {
    match span.ended_ms - span.sent_ms {
        waited if waited <= PROMPT_MS => PROMPT,
        waited if waited <= PROBE_TIMEOUT_MS => LATE,
        _ => TIMED_OUT,
    }
}

/// The time axis every panel of `column` shares: from the probes' head start to the last
/// answer.
fn time_range(grid: &TimelineGrid, column: usize) -> Range<f64> {
    let panels = grid.rows.iter().filter_map(|row| row.panels.get(column));
    let timelines = panels.flatten();
    let spans = timelines.flat_map(|t| t.requests.iter().chain(&t.closed_loop).chain(&t.open_loop));
    let (first, last) = spans.fold((0.0_f64, grid.sleep_ms), |(first, last), span| {
        (first.min(span.sent_ms), last.max(span.ended_ms))
    });
    let step = tick_step(last);
    (first - step / 10.0)..(last / step).ceil() * step
}

/// Each column's left edge and width: [`MIN_PANEL_W`] each, and the rest of the figure's
/// width shared by the length of each column's time axis.
fn column_places(times: &[Range<f64>]) -> Vec<(u32, u32)> {
    let columns = times.len().max(1) as u32;
    let room = WIDTH - LABEL_W - RIGHT_MARGIN - PANEL_GAP * (columns - 1);
    let spare = room.saturating_sub(MIN_PANEL_W * columns) as f64;
    let total: f64 = times.iter().map(|time| time.end - time.start).sum();
    let mut left = LABEL_W;
    let mut places = Vec::new();
    for time in times {
        let share = match total > 0.0 {
            true => (time.end - time.start) / total,
            false => 1.0 / columns as f64,
        };
        let width = MIN_PANEL_W.min(room / columns) + (spare * share) as u32;
        places.push((left, width));
        left += width + PANEL_GAP;
    }
    places
}

/// The time between labelled ticks: a second for a long figure, less for a short one.
fn tick_step(last_ms: f64) -> f64 {
    match last_ms {
        ms if ms > 2500.0 => 1000.0,
        ms if ms > 1000.0 => 500.0,
        _ => 100.0,
    }
}

/// A tick's label, in seconds: "0", "0.5", "2".
fn time_label(ms: f64) -> String {
    let seconds = (ms / 100.0).round() / 10.0;
    format!("{}", seconds + 0.0)
}

/// Draws the figure, returning the SVG text.
pub fn timeline(grid: &TimelineGrid) -> Result<String, PlotError> {
    let rows = grid.rows.len() as u32;
    let height = TITLE_H + HEADER_H + rows * (ROW_H + ROW_GAP) + AXIS_H + LEGEND_H;
    let times: Vec<Range<f64>> = (0..grid.columns.len())
        .map(|column| time_range(grid, column))
        .collect();
    let places = column_places(&times);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let centred = Pos::new(HPos::Center, VPos::Center);
        let title = text_style(TITLE_SIZE, BLACK, centred);
        root.draw(&Text::new(
            grid.title.clone(),
            ((WIDTH / 2) as i32, 17),
            title,
        ))?;
        let subtitle = text_style(HEADER_SIZE - 2, BLACK, centred);
        let at = ((WIDTH / 2) as i32, 42);
        root.draw(&Text::new(grid.subtitle.clone(), at, subtitle))?;
        for ((route, runs), (left, width)) in grid.columns.iter().zip(&places) {
            let x = (left + width / 2) as i32;
            let y = TITLE_H as i32;
            root.draw(&Text::new(
                route.clone(),
                (x, y + 10),
                text_style(HEADER_SIZE, BLACK, centred),
            ))?;
            root.draw(&Text::new(
                runs.clone(),
                (x, y + 29),
                text_style(SMALL_SIZE, GUIDE, centred),
            ))?;
        }
        for (index, row) in grid.rows.iter().enumerate() {
            let top = TITLE_H + HEADER_H + index as u32 * (ROW_H + ROW_GAP);
            let last = index + 1 == grid.rows.len();
            draw_row_label(&root, row, top)?;
            for ((panel, (left, width)), time) in row.panels.iter().zip(&places).zip(&times) {
                let axis = if last { AXIS_H - 22 } else { 0 };
                let area = root.clone().shrink((*left, top), (*width, ROW_H + axis));
                draw_panel(&area, *panel, time, grid.sleep_ms, last)?;
            }
        }
        let axis_desc_y = (height - LEGEND_H - 12) as i32;
        let desc = "seconds from the burst's first send";
        let x = (LABEL_W + (WIDTH - LABEL_W - RIGHT_MARGIN) / 2) as i32;
        root.draw(&Text::new(
            desc,
            (x, axis_desc_y),
            text_style(SMALL_SIZE, BLACK, centred),
        ))?;
        draw_legend(&root, height - LEGEND_H, grid.sleep_ms)?;
        root.present()?;
    }
    Ok(svg)
}

fn text_style(size: u32, colour: RGBColor, pos: Pos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, size).into_font(),
        color: colour.to_backend_color(),
        pos,
    }
}

/// The stack's name beside its requests, the probes' names beside their lanes.
fn draw_row_label<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    row: &TimelineRow,
    top: u32,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let right = Pos::new(HPos::Right, VPos::Center);
    let x = (LABEL_W - 8) as i32;
    // The panel's units map to pixels from the bottom of the row up.
    let y_of = |units: f64| (top as f64 + ROW_H as f64 * (1.0 - units / PANEL_TOP)) as i32;
    let name_y = y_of((REQUESTS.start + REQUESTS.end) / 2.0);
    // A variant's label is its server's name and, on a line of its own, what it changes:
    // on one line it would run off the figure's left edge.
    let lines = match row.label.split_once(" (") {
        Some((server, variant)) if row.label.len() > LABEL_CHARS => {
            vec![server.to_owned(), format!("({variant}")]
        }
        _ => vec![row.label.clone()],
    };
    let first_y = name_y - (lines.len() as i32 - 1) * LABEL_SIZE as i32 / 2;
    for (line, text) in lines.into_iter().enumerate() {
        let y = first_y + line as i32 * LABEL_SIZE as i32;
        root.draw(&Text::new(
            text,
            (x, y),
            text_style(LABEL_SIZE, BLACK, right),
        ))?;
    }
    let small = text_style(SMALL_SIZE - 2, GUIDE, right);
    root.draw(&Text::new(
        "closed-loop ping",
        (x, y_of(CLOSED_LANE)),
        small.clone(),
    ))?;
    root.draw(&Text::new("open-loop ping", (x, y_of(OPEN_LANE)), small))?;
    Ok(())
}

/// One case: its requests' bars, its pings' marks, the one-sleep guide.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    timeline: Option<&Timeline>,
    time: &Range<f64>,
    sleep_ms: f64,
    with_axis: bool,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .x_label_area_size(if with_axis { AXIS_H - 22 } else { 0 })
        .build_cartesian_2d(time.clone(), 0.0..PANEL_TOP)?;
    // No closer than a label's width: a narrow column gets fewer, plotters picks round ones.
    let step = tick_step(time.end);
    let fit = (area.dim_in_pixel().0 / MIN_TICK_GAP).max(2) as usize;
    let ticks = (((time.end / step).round() as usize) + 1).min(fit);
    let mut mesh = chart.configure_mesh();
    mesh.disable_y_mesh()
        .disable_y_axis()
        .x_labels(ticks)
        .x_label_formatter(&|ms| time_label(*ms))
        .label_style((FONT, SMALL_SIZE))
        .bold_line_style(BLACK.mix(0.08))
        .light_line_style(TRANSPARENT)
        .axis_style(BLACK.mix(0.3));
    if !with_axis {
        mesh.disable_x_axis();
    }
    mesh.draw()?;
    let frame = [(time.start, 0.0), (time.end, REQUESTS.end)];
    chart.draw_series([Rectangle::new(frame, BLACK.mix(0.25).stroke_width(1))])?;
    chart.draw_series([DashedPathElement::new(
        [(sleep_ms, 0.0), (sleep_ms, REQUESTS.end)],
        4,
        3,
        GUIDE.stroke_width(1),
    )])?;
    let Some(timeline) = timeline else {
        let note = text_style(SMALL_SIZE, GUIDE, Pos::new(HPos::Center, VPos::Center));
        let (w, h) = area.dim_in_pixel();
        area.draw(&Text::new(
            "not measured",
            (w as i32 / 2, h as i32 / 2),
            note,
        ))?;
        return Ok(());
    };
    let note = text_style(SMALL_SIZE, BLACK, Pos::new(HPos::Right, VPos::Center));
    let at = (time.end, (REQUESTS.end + PANEL_TOP) / 2.0);
    let text = answers_note(&timeline.requests, sleep_ms);
    chart.draw_series([Text::new(text, at, note)])?;
    draw_requests(&mut chart, &timeline.requests)?;
    draw_pings(&mut chart, &timeline.closed_loop, CLOSED_LANE)?;
    draw_pings(&mut chart, &timeline.open_loop, OPEN_LANE)?;
    Ok(())
}

type Panel<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// When the answers came, in words: "10 answers, all at 5.0 s" when they came within half a
/// sleep of each other, else "10 answers, from 0.5 s to 5.0 s"; and how many failed.
pub fn answers_note(requests: &[Span], sleep_ms: f64) -> String {
    let seconds = |ms: f64| format!("{:.1} s", ms / 1000.0);
    let answers = requests
        .iter()
        .filter(|span| span.ok)
        .map(|span| span.ended_ms);
    let (first, last) = answers.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), ms| {
        (lo.min(ms), hi.max(ms))
    });
    let answered = requests.iter().filter(|span| span.ok).count();
    let when = match answered {
        0 => "no answer".to_owned(),
        1 => format!("1 answer, at {}", seconds(last)),
        n if last - first < sleep_ms / 2.0 => format!("{n} answers, all at {}", seconds(last)),
        n => format!("{n} answers, from {} to {}", seconds(first), seconds(last)),
    };
    match requests.len() - answered {
        0 => when,
        failed => format!("{when}; {failed} failed"),
    }
}

/// Each request a bar in a lane of its own, the first answered at the top: a serialised
/// burst is then a staircase. (The requests leave together, so their order says nothing.)
fn draw_requests<DB: DrawingBackend>(
    chart: &mut Panel<'_, DB>,
    requests: &[Span],
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let lane = (REQUESTS.end - REQUESTS.start) / requests.len().max(1) as f64;
    let mut in_order: Vec<&Span> = requests.iter().collect();
    in_order.sort_by(|a, b| a.ended_ms.total_cmp(&b.ended_ms));
    let bars = in_order.into_iter().enumerate().map(|(index, span)| {
        let top = REQUESTS.end - lane * index as f64 - lane * 0.15;
        let bottom = top - lane * 0.7;
        let colour = if span.ok { REQUEST } else { BLACK };
        Rectangle::new(
            [(span.sent_ms, top), (span.ended_ms, bottom)],
            colour.filled(),
        )
    });
    chart.draw_series(bars)?;
    Ok(())
}

/// Each ping a dot where it was sent, coloured by its wait, with a faint line to its answer.
fn draw_pings<DB: DrawingBackend>(
    chart: &mut Panel<'_, DB>,
    pings: &[Span],
    lane: f64,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let waits = pings
        .iter()
        .filter(|span| span.ok && span.ended_ms - span.sent_ms > PROMPT_MS);
    let lines = waits.map(|span| {
        let colour = ping_colour(span).mix(0.5);
        PathElement::new(
            [(span.sent_ms, lane), (span.ended_ms, lane)],
            colour.stroke_width(2),
        )
    });
    chart.draw_series(lines)?;
    let dots = pings.iter().filter(|span| span.ok);
    chart.draw_series(
        dots.map(|span| Circle::new((span.sent_ms, lane), 2, ping_colour(span).filled())),
    )?;
    let failed = pings.iter().filter(|span| !span.ok);
    chart.draw_series(
        failed.map(|span| Cross::new((span.sent_ms, lane), 3, BLACK.stroke_width(1))),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests;
