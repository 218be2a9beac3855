//! The timeline's legend, under the time axis: what the bars, the guide and the pings' marks
//! mean.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{GUIDE, LATE, PROBE_TIMEOUT_MS, PROMPT, PROMPT_MS, REQUEST, SMALL_SIZE, TIMED_OUT};
use super::{PlotError, text_style};

/// What the marks mean, under the time axis.
pub(super) fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    top: u32,
    sleep_ms: f64,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let left = Pos::new(HPos::Left, VPos::Center);
    let style = text_style(SMALL_SIZE, BLACK, left);
    let (y1, y2) = (top as i32 + 14, top as i32 + 36);
    let mut x = 12;
    root.draw(&Rectangle::new(
        [(x, y1 - 4), (x + 22, y1 + 4)],
        REQUEST.filled(),
    ))?;
    let request_text = "a request, sent to answered (black: failed)";
    root.draw(&Text::new(request_text, (x + 28, y1), style.clone()))?;
    x = 380;
    let guide = DashedPathElement::new(
        [(x + 11, y1 - 8), (x + 11, y1 + 8)],
        4,
        3,
        GUIDE.stroke_width(1),
    );
    root.draw(&guide)?;
    root.draw(&Text::new(
        format!("one sleep ({sleep_ms} ms)"),
        (x + 22, y1),
        style.clone(),
    ))?;
    x = 12;
    let classes = [
        (
            PROMPT,
            format!("a ping, dot at its send, line to its answer: within {PROMPT_MS} ms"),
        ),
        (LATE, format!("within {} s", PROBE_TIMEOUT_MS / 1000.0)),
        (
            TIMED_OUT,
            format!("later: a {} s probe fails", PROBE_TIMEOUT_MS / 1000.0),
        ),
    ];
    for (colour, text) in classes {
        root.draw(&Circle::new((x + 4, y2), 4, colour.filled()))?;
        root.draw(&Text::new(text.clone(), (x + 14, y2), style.clone()))?;
        x += 22 + (text.chars().count() as i32) * 7;
    }
    root.draw(&Cross::new((x + 4, y2), 4, BLACK.stroke_width(1)))?;
    root.draw(&Text::new("ping failed", (x + 14, y2), style))?;
    Ok(())
}
