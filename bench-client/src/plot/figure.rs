//! Drawing one figure: a log x axis, a log or linear y axis, one line per series in its
//! colour, an optional dashed reference line, a legend in a fixed corner, and a "no data"
//! note when there is nothing to draw.

use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{HEIGHT, Mark, PlotError, WIDTH};

/// Okabe–Ito's seven colours, distinct for readers with the common colour-vision
/// deficiencies, then four of Paul Tol's muted scheme. Series beyond the eleventh (a stack
/// added to the workspace) get hues of their own ([`colour`]).
pub(super) const PALETTE: [RGBColor; 11] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(136, 34, 85),   // wine
    RGBColor(153, 153, 51),  // olive
    RGBColor(51, 34, 136),   // indigo
    RGBColor(68, 170, 153),  // teal
];
/// The radius of a measured point's dot, in pixels.
const DOT_RADIUS: i32 = 3;
/// The reference line is grey and dashed: a guide, not a measurement.
pub const REFERENCE_COLOUR: RGBColor = RGBColor(110, 110, 110);

/// A mark such as the probe timeout: dark red, apart from the series' colours.
const MARK_COLOUR: RGBColor = RGBColor(160, 20, 20);
/// The band above the plot that holds the marks' labels, in pixels.
const MARK_BAND: u32 = 22;

pub const FONT: &str = "sans-serif";
/// plotters writes `font-size = size / PLOTTERS_FONT_SCALE` into the SVG; the sizes below
/// are before that division.
const PLOTTERS_FONT_SCALE: f64 = 1.24;
const TITLE_SIZE: u32 = 22;
const AXIS_DESC_SIZE: u32 = 18;
const TICK_LABEL_SIZE: u32 = 16;
const LEGEND_SIZE: u32 = 16;
const NOTE_SIZE: u32 = 20;

/// The colour of the `index`-th series: the palette's, then, for as many series as there
/// are, hues a golden angle apart (each as far as it can be from those before it), at a
/// lightness that reads on white.
pub fn colour(index: usize) -> RGBColor {
    match PALETTE.get(index) {
        Some(&colour) => colour,
        None => {
            let hue = ((index - PALETTE.len()) as f64 * 137.508 + 20.0) % 360.0;
            hsl(hue, 0.65, 0.42)
        }
    }
}

/// An sRGB colour from hue (degrees), saturation and lightness (0 to 1).
fn hsl(hue: f64, saturation: f64, lightness: f64) -> RGBColor {
    let chroma = (1.0 - (2.0 * lightness - 1.0).abs()) * saturation;
    let sector = hue / 60.0;
    let x = chroma * (1.0 - (sector % 2.0 - 1.0).abs());
    let (r, g, b) = match sector as u32 {
        0 => (chroma, x, 0.0),
        1 => (x, chroma, 0.0),
        2 => (0.0, chroma, x),
        3 => (0.0, x, chroma),
        4 => (x, 0.0, chroma),
        _ => (chroma, 0.0, x),
    };
    let lift = lightness - chroma / 2.0;
    let byte = |channel: f64| ((channel + lift) * 255.0).round() as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

/// A figure once the data has become lines, ready to render.
pub struct Figure<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub lines: Vec<Line>,
    /// Vertical lines with their meaning, e.g. a probe's timeout.
    pub marks: Vec<Mark>,
    /// False when no series has a drawable point: the figure then carries a "no data" note.
    pub has_data: bool,
    /// Where the legend goes: a corner the figure's lines leave empty.
    pub legend: SeriesLabelPosition,
}

/// One line of a [`Figure`], in data coordinates.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub kind: LineKind,
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
pub enum LineKind {
    /// A measured series: solid, in its colour, with a dot on every point if `dots`.
    Data { colour: RGBColor, dots: bool },
    /// A guide such as "one sleep": grey and dashed.
    Reference,
}

impl Figure<'_> {
    /// Draws the figure with a log x axis over `x` and the y axis `y` (log or linear),
    /// returning the SVG text.
    pub fn render<Y>(
        &self,
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
            let mut chart = ChartBuilder::on(&self.titled(&root)?)
                // Room between the title and the plot for the marks' labels, off the curves
                // and the legend.
                .margin_top(if self.marks.is_empty() { 0 } else { MARK_BAND })
                .x_label_area_size(55)
                .y_label_area_size(80)
                .build_cartesian_2d(x.log_scale(), y)?;
            chart
                .configure_mesh()
                .x_desc(self.x_desc)
                .y_desc(self.y_desc)
                .x_label_formatter(&super::scale::log_tick)
                .y_label_formatter(&y_ticks)
                .label_style((FONT, TICK_LABEL_SIZE))
                .axis_desc_style((FONT, AXIS_DESC_SIZE))
                .bold_line_style(BLACK.mix(0.15))
                // plotters draws a light line at every minor step of a log axis; near a
                // decade boundary they crowd into a grey band. The labelled lines suffice.
                .light_line_style(TRANSPARENT)
                .draw()?;
            for line in &self.lines {
                chart.draw_line(line)?;
            }
            for mark in &self.marks {
                chart.draw_mark(&root, mark)?;
            }
            if !self.has_data {
                draw_no_data_note(chart.plotting_area())?;
            }
            if !self.lines.is_empty() {
                chart
                    .configure_series_labels()
                    .position(self.legend.clone())
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
}

impl Figure<'_> {
    /// The figure's title drawn at the top of `root`, within its margins; the area under it.
    fn titled<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<DrawingArea<DB, plotters::coord::Shift>, PlotError>
    where
        DB::ErrorType: 'static,
    {
        // The last x tick label is centred on the right edge: leave it room.
        let framed = root.margin(12, 12, 12, 30);
        Ok(framed.titled(self.title, (FONT, title_size(self.title)))?)
    }
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

/// What a figure draws on its chart, whatever its axes: the bounds drawing needs, written once.
trait DrawOnChart<DB: DrawingBackend> {
    /// Draws one line and registers its legend entry.
    fn draw_line(&mut self, line: &Line) -> Result<(), PlotError>;

    /// A mark's line, dark and dashed across the plot and up into the band above it, where its
    /// label ends at the line.
    fn draw_mark(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
        mark: &Mark,
    ) -> Result<(), PlotError>;
}

impl<'a, DB, X, Y> DrawOnChart<DB> for ChartContext<'a, DB, Cartesian2d<X, Y>>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    fn draw_line(&mut self, line: &Line) -> Result<(), PlotError> {
        let label = line.legend_label();
        let points = line.points.iter().copied();
        match line.kind {
            LineKind::Data { colour, dots } => {
                let style = colour.stroke_width(2);
                if dots {
                    let dot = |p| Circle::new(p, DOT_RADIUS, colour.filled());
                    self.draw_series(points.clone().map(dot))?;
                }
                self.draw_series(LineSeries::new(points, style))?
                    .label(label)
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
            }
            LineKind::Reference => {
                let style = REFERENCE_COLOUR.stroke_width(2);
                self.draw_series(DashedLineSeries::new(points, 8, 6, style))?
                    .label(label)
                    .legend(move |(x, y)| {
                        DashedPathElement::new([(x, y), (x + 20, y)], 5, 3, style)
                    });
            }
        }
        Ok(())
    }

    fn draw_mark(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
        mark: &Mark,
    ) -> Result<(), PlotError> {
        let y = self.y_range();
        let (x, top) = self.backend_coord(&(mark.x, y.end));
        let (_, bottom) = self.backend_coord(&(mark.x, y.start));
        let style = MARK_COLOUR.stroke_width(2);
        let band_top = top - MARK_BAND as i32;
        root.draw(&DashedPathElement::new(
            [(x, band_top), (x, bottom)],
            6,
            4,
            style,
        ))?;
        let label = TextStyle::from((FONT, TICK_LABEL_SIZE).into_font())
            .color(&MARK_COLOUR)
            .pos(Pos::new(HPos::Right, VPos::Center));
        let at = (x - 6, band_top + MARK_BAND as i32 / 2);
        root.draw(&Text::new(mark.label.clone(), at, label))?;
        Ok(())
    }
}

/// Writes "no data to plot" in the middle of the plotting area.
pub fn draw_no_data_note<DB, CT>(area: &DrawingArea<DB, CT>) -> Result<(), PlotError>
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_titles_get_a_smaller_font() {
        let title = "/ok-blocking: wall time for N concurrent requests, sleep 20 ms";
        assert_eq!(title_size(title), TITLE_SIZE);
        let long = title.repeat(2);
        assert!((12..TITLE_SIZE).contains(&title_size(&long)));
        assert_eq!(title_size(&long.repeat(10)), 12);
    }

    #[test]
    fn the_palette_grows_with_the_series() {
        let colours: Vec<RGBColor> = (0..40).map(colour).collect();
        for (index, one) in colours.iter().enumerate() {
            assert!(
                !colours[..index].contains(one),
                "series {index} repeats a colour"
            );
        }
        assert_eq!(hsl(0.0, 1.0, 0.5), RGBColor(255, 0, 0));
        assert_eq!(hsl(240.0, 1.0, 0.5), RGBColor(0, 0, 255));
    }
}
