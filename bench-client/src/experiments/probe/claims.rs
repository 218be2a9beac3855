//! What the pages say the probe's own check showed ([`crate::experiments::claims`]).

use super::ProbeReport;
use super::subjects::{ALL_ROUTES_ON, AsExpected, own_check};
use crate::experiments::claims::{Claim, Kind, Shortfall, expect, present};
use burst_meter::target::Folders;

const PROBE: &str = "results/probe";

pub const CLAIMS: &[Claim<ProbeReport>] = &[
    Claim {
        name: "probe.every-route-of-its-own-check-gets-its-verdict",
        dir: PROBE,
        kind: Kind::Observed,
        holds: |report, _on| {
            let subjects = own_check(&Folders::or_default(None, None));
            // A server the run could not start for want of what runs it (python3 for the stubs
            // and the FastAPI app) has no route probed: the run lacks it.
            let left_out: Vec<&str> = (subjects.iter())
                .map(|subject| subject.target.label())
                .filter(|label| !report.routes.iter().any(|probe| probe.server == *label))
                .collect();
            if !left_out.is_empty() {
                let what = format!("not probed in this run: {left_out:?}");
                return Err(Shortfall::Lacks(what));
            }
            expect(report.failures.is_empty(), || {
                format!("{:?}", report.failures)
            })?;
            let planned: usize = (subjects.iter()).map(|subject| subject.routes.len()).sum();
            let judged = report
                .routes
                .iter()
                .filter(|probe| probe.expected.is_some());
            expect(judged.clone().count() == planned, || {
                format!("{} routes judged of {planned}", judged.clone().count())
            })?;
            expect(
                report.routes.iter().any(|p| p.server == ALL_ROUTES_ON),
                || format!("no route of {ALL_ROUTES_ON}"),
            )?;
            report.routes.iter().try_for_each(|probe| {
                expect(probe.as_expected() != Some(AsExpected::No), || {
                    format!(
                        "{} {}: {}",
                        probe.server,
                        probe.call,
                        probe.finding().says()
                    )
                })
            })
        },
    },
    Claim {
        name: "probe.blames-neither-large-file-fix",
        dir: PROBE,
        kind: Kind::Observed,
        holds: |report, _on| {
            let fixes: Vec<_> = (report.routes.iter())
                .filter(|probe| probe.server == ALL_ROUTES_ON)
                .filter(|probe| probe.call.path.starts_with("/ok-file"))
                .collect();
            present((fixes.len() >= 2).then_some(()), || {
                format!("{} file fixes probed", fixes.len())
            })?;
            expect(fixes.len() == 2, || {
                format!("{} file fixes probed", fixes.len())
            })?;
            let holds: Vec<_> = fixes
                .iter()
                .map(|probe| probe.finding().holds_health)
                .collect();
            expect(!holds.contains(&Some(true)), || {
                format!("{holds:?}: blamed the server")
            })
        },
    },
];
