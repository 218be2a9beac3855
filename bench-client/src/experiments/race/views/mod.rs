//! The race's views, drawn from its record: `RACE.md` and the plot of its trials. Its code
//! stamp leaves them out: a change here needs `redraw`, not a rerun.

pub mod plot;
pub mod race_md;

use crate::Error;
use crate::experiments::race::RaceReport;
use crate::report::View;

/// The race's figure: each trial's slowest closed-loop wait.
pub const RACE: &str = "race.svg";

/// The race's views: `RACE.md` and the plot of its trials.
pub fn views(race: &RaceReport) -> Result<Vec<View>, Error> {
    Ok(vec![
        ("RACE.md".to_owned(), race_md::race_markdown(race)),
        (RACE.to_owned(), plot::race(race)?),
    ])
}
