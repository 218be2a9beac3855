//! The comparison's views, drawn from its record: `RESULTS.md` with its findings, a latency
//! CDF per route and the timelines, the README's results block, and the original bench's
//! block per case on the terminal. Its code stamp leaves them out: a change here needs
//! `redraw`, not a rerun.

pub mod findings;
pub mod plots;
pub mod readme;
pub mod results_md;
pub mod terminal;

use crate::Error;
use crate::experiments::comparison::Report;
use crate::report::View;
use crate::report::text::shorten;
use burst_meter::case::Case;
use burst_meter::stats::Verdict;

/// The comparison's views: a latency CDF per route, the timelines, then `RESULTS.md`.
pub fn views(report: &Report) -> Result<Vec<View>, Error> {
    let mut views = plots::latency_cdfs(report)?;
    views.extend(plots::timelines(report)?);
    views.push((
        "RESULTS.md".to_owned(),
        results_md::results_markdown(report),
    ));
    Ok(views)
}

/// A case's verdict, with how many requests failed if any did: "failed 1/10".
pub fn verdict(case: &Case) -> String {
    match case.verdict {
        Verdict::Failed => format!("failed {}/{}", case.err, case.n),
        verdict => verdict.to_string(),
    }
}

/// "reactor: main", "pool: blocking-* (10 threads)", or what is known.
pub fn where_it_ran(case: &Case) -> String {
    let place = match case.on_reactor {
        Some(true) => "reactor",
        Some(false) => "pool",
        None => "mixed",
    };
    match &case.sleep_thread {
        Some(thread) => format!("{place}: {}", shorten(thread)),
        None => "not reported".to_owned(),
    }
}
