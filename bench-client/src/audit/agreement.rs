//! The probe's own check against the comparisons of the same routes: where the comparison
//! found a route serialised (at one reactor thread: the work routes, the CPU routes, the
//! hidden blockers), the probe must have seen one request at a time, and nowhere else. Both
//! measure the same servers with the same code, so a disagreement is a fault of one of them
//! on any machine. A route the probe could not judge is left out (its reason is in its
//! table), and so is one the comparison did not run.

use std::path::Path;

use crate::Error;
use crate::experiments::Experiment;
use crate::experiments::claims::{Standing, folder};
use crate::experiments::comparison::{Comparison, Report};
use crate::experiments::probe::verdict::Verdict;
use crate::experiments::probe::{Probe, ProbeReport};
use burst_meter::case::Case;

/// The comparisons the probe's own check repeats routes of.
const COMPARISONS: [&str; 3] = ["results", "results/cpu", "results/hidden"];

/// Where the agreement stands in the results folder `results`.
pub fn standing(results: &Path) -> Standing {
    let probe: ProbeReport = match read::<Probe>(&folder(results, "results/probe")) {
        Ok(Some(probe)) => probe,
        Ok(None) => return Standing::NotApplicable("the probe's own check not run".to_owned()),
        Err(why) => return Standing::Unreadable(why.to_string()),
    };
    let mut cases = Vec::new();
    for dir in COMPARISONS {
        match read::<Comparison>(&folder(results, dir)) {
            Ok(report) => cases.extend(report.into_iter().flat_map(|r: Report| r.cases)),
            Err(why) => return Standing::Unreadable(why.to_string()),
        }
    }
    cases.retain(|case| case.reactor_threads == 1);
    agree(&probe, &cases)
}

/// Whether the probe's verdicts agree with `cases` on every route both judged.
pub fn agree(probe: &ProbeReport, cases: &[Case]) -> Standing {
    let mut compared = 0;
    for route in &probe.routes {
        let path = route.call.path.split('?').next().unwrap_or_default();
        // The FastAPI app's threadpool route is the comparison's /ok-blocking.
        let path = if path == "/ok-def" {
            "/ok-blocking"
        } else {
            path
        };
        let found = cases
            .iter()
            .find(|c| c.target == route.server && c.route == path);
        let Some(case) = found else { continue };
        let finding = route.finding();
        let judged = [Verdict::Serialises, Verdict::Bounded, Verdict::Concurrent];
        if !judged.contains(&finding.verdict) {
            continue;
        }
        compared += 1;
        let serialised = case.verdict == Verdict::Serialises;
        if serialised != (finding.at_once == Some(1)) {
            return Standing::False(format!(
                "{} {path}: the comparison found it {}, the probe {}",
                route.server,
                case.verdict,
                finding.says()
            ));
        }
    }
    match compared {
        0 => Standing::NotApplicable("no route judged by both".to_owned()),
        _ => Standing::Holds,
    }
}

/// `E`'s record in `dir`, `None` if there is none.
fn read<E: Experiment>(dir: &Path) -> Result<Option<E::Record>, Error> {
    if !dir.join(E::RECORD).is_file() {
        return Ok(None);
    }
    crate::experiments::read_record::<E>(dir).map(Some)
}
