//! What the pages say of the race at two and at four reactor threads (`results/per-core/`).

use super::*;

pub const CLAIMS: &[Claim<RaceReport>] = &[
    Claim {
        name: "race.at-two-threads-the-pinger-rarely-waits-for-all-and-only-on-reuse-port",
        dir: TWO_THREADS,
        kind: Kind::Observed,
        holds: |race, _on| {
            every_stack_tallied(race)?;
            for tally in &race.tallies {
                let reuse_port = stacks::reuse_port(tally.target.as_str());
                let upheld = tally.failed == 0
                    && (tally.waited_for_all == 0 || reuse_port && tally.waited_for_all <= 2);
                expect(upheld, || outcomes(tally))?;
            }
            Ok(())
        },
    },
    Claim {
        name: "race.at-four-threads-the-pinger-gets-in-between-in-a-fifth-or-more-everywhere",
        dir: FOUR_THREADS,
        kind: Kind::Observed,
        holds: |race, _on| {
            every_stack_tallied(race)?;
            race.tallies.iter().try_for_each(|tally| {
                let fifth = 5 * tally.interleaved >= tally.trials - tally.failed;
                expect(fifth && tally.trials > tally.failed, || outcomes(tally))
            })
        },
    },
    Claim {
        name: "race.reuse-port-bursts-last-longest-at-two-threads",
        dir: TWO_THREADS,
        kind: Kind::Observed,
        holds: reuse_port_bursts_last_longest,
    },
    Claim {
        name: "race.reuse-port-bursts-last-longest-at-four-threads",
        dir: FOUR_THREADS,
        kind: Kind::Observed,
        holds: reuse_port_bursts_last_longest,
    },
];
