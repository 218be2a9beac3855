//! Reports: what a run measured, as records (the JSON schema), and every output made from
//! them, one module per output. (At rest's record, [`RestReport`], is its experiment's own,
//! in [`crate::experiments::rest`], which assembles it: here are only the files written from it.)
//!
//! - [`terminal`]: the original bench's block per case, as each case ends;
//! - [`results_md`]: `RESULTS.md`, the comparison's tables;
//! - [`sweep_md`]: `SWEEP.md`, the sweep's tables;
//! - [`rest_md`]: `REST.md`, the at-rest table;
//! - [`race_md`]: `RACE.md`, the health check's race over repeated trials;
//! - [`uring_md`]: `URING.md`, held answers and the order of service on io_uring;
//! - [`health_md`]: `HEALTH.md`, the stock `/ping` beside reactor-watch's `/health` under load;
//! - [`detectors_md`]: `DETECTORS.md`, the ways of catching a blocked reactor side by side;
//! - [`sections`]: the sections those three documents share (heading, failures);
//! - [`findings`]: plain sentences read from the figures;
//! - [`readme`]: the README's results block;
//! - [`pages`]: the figures blocks of the README and the lesson pages, copied from results;
//! - [`redraw`]: every view rewritten from the committed records, measuring nothing;
//! - [`plots`]: which figures a report draws, and from which figures;
//! - [`files`]: writing it all, atomically;
//! - [`text`]: how numbers and names are printed in all of them.

pub mod detectors_md;
pub mod files;
pub mod findings;
pub mod health_md;
pub mod pages;
pub mod plots;
pub mod race_md;
pub mod readme;
pub mod redraw;
pub mod rest_md;
pub mod results_md;
pub mod sections;
pub mod sweep_md;
pub mod terminal;
pub mod text;
pub mod uring_md;

use std::path::Path;

pub use crate::experiments::comparison::{Report, Timing};
pub use crate::experiments::detectors::DetectorsReport;
pub use crate::experiments::health::HealthReport;
pub use crate::experiments::race::RaceReport;
pub use crate::experiments::rest::RestReport;
pub use crate::experiments::sweep::SweepReport;
pub use crate::experiments::uring::UringReport;
pub use files::write_atomically;

impl RaceReport {
    /// Writes `race.json`, `RACE.md` and the plot of the trials into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("race.json".to_owned(), files::json(self))])?;
        self.write_views(dir)
    }

    /// Writes `RACE.md` and the plot, drawn from `race.json`, into `dir`.
    pub fn write_views(&self, dir: &Path) -> std::io::Result<()> {
        let plot = crate::plot::race::race(self).map_err(std::io::Error::other)?;
        let outputs = [
            ("RACE.md".to_owned(), race_md::race_markdown(self)),
            (plots::RACE.to_owned(), plot),
        ];
        files::write_all(dir, &outputs)
    }
}

impl UringReport {
    /// Writes `uring.json` and `URING.md` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("uring.json".to_owned(), files::json(self))])?;
        self.write_views(dir)
    }

    /// Writes `URING.md`, drawn from `uring.json`, into `dir`.
    pub fn write_views(&self, dir: &Path) -> std::io::Result<()> {
        let markdown = uring_md::uring_markdown(self);
        files::write_all(dir, &[("URING.md".to_owned(), markdown)])
    }
}

impl HealthReport {
    /// Writes `health.json` and `HEALTH.md` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("health.json".to_owned(), files::json(self))])?;
        self.write_views(dir)
    }

    /// Writes `HEALTH.md`, drawn from `health.json`, into `dir`.
    pub fn write_views(&self, dir: &Path) -> std::io::Result<()> {
        let markdown = health_md::health_markdown(self);
        files::write_all(dir, &[("HEALTH.md".to_owned(), markdown)])
    }
}

impl DetectorsReport {
    /// Writes `detectors.json` and `DETECTORS.md` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("detectors.json".to_owned(), files::json(self))])?;
        self.write_views(dir)
    }

    /// Writes `DETECTORS.md`, drawn from `detectors.json`, into `dir`.
    pub fn write_views(&self, dir: &Path) -> std::io::Result<()> {
        let markdown = detectors_md::detectors_markdown(self);
        files::write_all(dir, &[("DETECTORS.md".to_owned(), markdown)])
    }
}

impl RestReport {
    /// Writes `rest.json` and `REST.md` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("rest.json".to_owned(), files::json(self))])?;
        self.write_views(dir)
    }

    /// Writes `REST.md`, drawn from `rest.json`, into `dir`.
    pub fn write_views(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("REST.md".to_owned(), rest_md::rest_markdown(self))])
    }
}

impl Report {
    /// The targets that have cases, in the order they were measured.
    pub fn targets(&self) -> Vec<&str> {
        let mut targets: Vec<&str> = self.cases.iter().map(|case| case.target.as_str()).collect();
        targets.dedup();
        targets
    }

    /// `RESULTS.md`.
    pub fn to_markdown(&self) -> String {
        results_md::results_markdown(self)
    }

    /// `results.json`: every figure and the raw samples.
    pub fn to_json(&self) -> String {
        files::json(self)
    }

    /// Writes `RESULTS.md`, `results.json`, a latency CDF per route and the timeline into
    /// `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("results.json".to_owned(), self.to_json())])?;
        self.write_views(dir)
    }

    /// Writes what is drawn from `results.json`, `RESULTS.md`, the CDFs and the timeline, into `dir`,
    /// leaving `results.json` as it is.
    pub fn write_views(&self, dir: &Path) -> std::io::Result<()> {
        let mut outputs = plots::latency_cdfs(self).map_err(std::io::Error::other)?;
        outputs.extend(plots::timelines(self).map_err(std::io::Error::other)?);
        outputs.push(("RESULTS.md".to_owned(), self.to_markdown()));
        files::write_all(dir, &outputs)
    }
}

impl SweepReport {
    /// Writes `sweep.json`, `SWEEP.md` and one plot per route into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        files::write_all(dir, &[("sweep.json".to_owned(), files::json(self))])?;
        self.write_views(dir)
    }

    /// Writes `SWEEP.md` and the plots, drawn from `sweep.json`, into `dir`.
    pub fn write_views(&self, dir: &Path) -> std::io::Result<()> {
        let mut outputs = plots::sweep_plots(self).map_err(std::io::Error::other)?;
        outputs.push(("SWEEP.md".to_owned(), sweep_md::sweep_markdown(self)));
        files::write_all(dir, &outputs)
    }
}
