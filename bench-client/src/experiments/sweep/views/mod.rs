//! The sweep's views, drawn from its record: `SWEEP.md` and its plots. Its code stamp leaves
//! them out: a change here needs `redraw`, not a rerun.

pub mod plots;
pub mod sweep_md;

use crate::Error;
use crate::experiments::sweep::SweepReport;
use crate::report::View;

/// The sweep's views: its plots, then `SWEEP.md`.
pub fn views(sweep: &SweepReport) -> Result<Vec<View>, Error> {
    let mut views = plots::sweep_plots(sweep)?;
    views.push(("SWEEP.md".to_owned(), sweep_md::sweep_markdown(sweep)));
    Ok(views)
}
