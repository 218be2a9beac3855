//! What the pages say the race showed ([`crate::experiments::claims`]).

use demo_contract::variant::{self, runs_in};

use super::arrival::{PingAt, ServerOrder};
use super::{GotIn, RaceReport, Tally};
use crate::experiments::claims::{Claim, Kind, Shortfall, expect, named_on, present, stacks_of};
use crate::report::text::connect_text;
use burst_meter::burst::Connect;
use burst_meter::target::references;

mod one_thread;
mod per_core;

/// Every claim of the race, a group per file.
pub const GROUPS: &[&[Claim<RaceReport>]] = &[one_thread::CLAIMS, per_core::CLAIMS];

/// The race with its defaults, and at the comparison's sleep.
const RACE: &str = "results/race";
const RACE_500MS: &str = "results/race-500ms";
/// The race at two and at four reactor threads.
const TWO_THREADS: &str = "results/per-core/threads-2";
const FOUR_THREADS: &str = "results/per-core/threads-4";

/// With the connections arriving during the burst, the median slowest waits of the stacks
/// the page names were each shorter than every other Rust stack's.
fn apart_median_waits_shortest_of_rust(race: &RaceReport, on: &[String]) -> Result<(), Shortfall> {
    let apart_ones = named_on(on, 1)?;
    let median = |tally: &Tally| tally.slowest_sleeps.map(|[_, median, _]| median);
    all_measured(
        &race_stacks(race),
        during(race).map(|tally| tally.target.as_str()),
    )?;
    let rust = during(race).filter(|tally| tally.target.starts_with("demo-"));
    let (apart, others): (Vec<&Tally>, Vec<&Tally>) =
        rust.partition(|tally| apart_ones.contains(&tally.target.as_str()));
    let shortest_other = (others.iter())
        .map(|tally| median(tally).unwrap_or(0.0))
        .reduce(f64::min);
    let shortest_other = present(shortest_other, || "no other Rust stack".to_owned())?;
    for tally in apart {
        let own = median(tally);
        expect(own.is_some_and(|own| own < shortest_other), || {
            format!(
                "{} {own:?} sleeps, others from {shortest_other:.2}",
                tally.target
            )
        })?;
    }
    Ok(())
}

/// Each stack that deals its connections with `SO_REUSEPORT` counted more open-loop pings in
/// its trials than every other stack: their bursts lasted longest.
fn reuse_port_bursts_last_longest(race: &RaceReport, _on: &[String]) -> Result<(), Shortfall> {
    every_stack_tallied(race)?;
    let (reuse_port, others): (Vec<&Tally>, Vec<&Tally>) =
        (race.tallies.iter()).partition(|tally| stacks::reuse_port(tally.target.as_str()));
    let most_of_others = others.iter().map(|tally| tally.open_scheduled).max();
    let most_of_others = present(most_of_others, || {
        "no stack without SO_REUSEPORT".to_owned()
    })?;
    for tally in reuse_port {
        expect(tally.open_scheduled > most_of_others, || {
            format!(
                "{} {}, others up to {most_of_others}",
                tally.target, tally.open_scheduled
            )
        })?;
    }
    Ok(())
}

/// The stock server's tally and the race's variant `name`'s, from the variant's test.
fn variant<'a>(race: &'a RaceReport, name: &str) -> Result<(&'a Tally, &'a Tally), Shortfall> {
    let label = variant::in_experiment(runs_in::RACE, name).map_or(name, |v| v.label);
    let test = (race.variants.iter()).find(|test| test.variant == label);
    let tallies = test.map(|test| &test.tallies[..]);
    match tallies {
        Some([stock, variant]) => Ok((stock, variant)),
        _ => Err(Shortfall::Lacks(format!("no test of {label}"))),
    }
}

/// How many of `tally`'s open-loop pings failed with a reason that holds `reason`.
fn failed(tally: &Tally, reason: &str) -> usize {
    let errors = tally.open_errors.iter();
    let matching = errors.filter(|error| error.reason.contains(reason));
    matching.map(|error| error.count).sum()
}

/// The tally of `target`'s trials connecting as `connect`.
fn tally<'a>(race: &'a RaceReport, target: &str, connect: Connect) -> Result<&'a Tally, Shortfall> {
    let found = (race.tallies.iter()).find(|t| t.target == target && t.connect == connect);
    present(found, || {
        format!("no trials of {target}, {}", connect_text(connect))
    })
}

/// How many of `tally`'s trials came out as `outcome`.
fn count(tally: &Tally, outcome: GotIn) -> usize {
    match outcome {
        GotIn::Interleaved => tally.interleaved,
        GotIn::Partly => tally.partly,
        GotIn::WaitedForAll => tally.waited_for_all,
        GotIn::Failed => tally.failed,
    }
}

/// What `tally`'s trials came out as, in a few words.
fn outcomes(tally: &Tally) -> String {
    format!(
        "{}, {}: {} of {} trials got in between every sleep, {} somewhere, {} waited for all, \
         {} failed",
        tally.target,
        connect_text(tally.connect),
        tally.interleaved,
        tally.trials,
        tally.partly,
        tally.waited_for_all,
        tally.failed
    )
}

/// More than half of the trials with a verdict came out as `outcome`.
fn most(
    race: &RaceReport,
    target: &str,
    connect: Connect,
    outcome: GotIn,
) -> Result<(), Shortfall> {
    let tally = tally(race, target, connect)?;
    let judged = tally.trials - tally.failed;
    expect(2 * count(tally, outcome) > judged, || outcomes(tally))
}

/// How many of a tally's trials a claim about them needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Share {
    /// Every trial, none failed.
    Every,
    /// More than half of them.
    Most,
}

/// In `share` of the trials of the arrival's `points`, on every target, the ping was handled
/// after `ended(race)` burst requests had ended, as the server recorded.
fn handled_after(
    race: &RaceReport,
    points: &[PingAt],
    ended: fn(&RaceReport) -> usize,
    share: Share,
) -> Result<(), Shortfall> {
    for point in points {
        let at_point = (race.arrival.iter()).filter(|tally| tally.point == *point);
        all_measured(
            &recording_accepts(race),
            at_point.map(|tally| tally.target.as_str()),
        )
        .map_err(|why| why.context(&format!("{point:?}")))?;
    }
    let tallies = (race.arrival.iter()).filter(|tally| points.contains(&tally.point));
    for tally in tallies {
        let ended = ended(race);
        let matching = (tally.handled_after.iter())
            .filter(|(after, _)| *after == ended)
            .map(|(_, trials)| trials)
            .sum::<usize>();
        let holds = match share {
            Share::Every => tally.failed == 0 && matching == tally.trials,
            Share::Most => 2 * matching > tally.trials,
        };
        expect(holds, || {
            format!(
                "{}, {:?}: handled after (requests ended, trials) {:?}, {} failed",
                tally.target, tally.point, tally.handled_after, tally.failed
            )
        })?;
    }
    Ok(())
}

/// The stacks the run was to measure: every Rust server, and the FastAPI apps at one reactor
/// thread, the only count they run at.
fn stacks(race: &RaceReport) -> Vec<&str> {
    let fastapi = (references().iter().copied()).filter(|_| race.plan.threads == 1);
    race_stacks(race).into_iter().chain(fastapi).collect()
}

/// The stacks of the run whose arrival trials it runs: those that record their accepts
/// ([`stacks::records_accepts`]).
fn recording_accepts(race: &RaceReport) -> Vec<&str> {
    let mut every = stacks(race);
    every.retain(|stack| stacks::records_accepts(stack));
    every
}

/// The Rust stacks of the run ([`stacks_of`]).
fn race_stacks(race: &RaceReport) -> Vec<&str> {
    let measured: Vec<&str> = race.tallies.iter().map(|t| t.target.as_str()).collect();
    stacks_of(&race.environment, &measured)
}

/// Every one of `stacks` is among the targets `measured`; else the run lacks those left out
/// (python3 absent, say), and a claim over every stack cannot be read.
fn all_measured<'a>(
    stacks: &[&str],
    measured: impl Iterator<Item = &'a str>,
) -> Result<(), Shortfall> {
    let measured: Vec<&str> = measured.collect();
    let left_out: Vec<&&str> = (stacks.iter())
        .filter(|stack| !measured.contains(stack))
        .collect();
    match left_out.is_empty() {
        true => Ok(()),
        false => Err(Shortfall::Lacks(format!(
            "not measured in this run: {left_out:?}"
        ))),
    }
}

/// Every stack of the run has its trials tallied; else the run lacks those left out.
fn every_stack_tallied(race: &RaceReport) -> Result<(), Shortfall> {
    all_measured(
        &stacks(race),
        race.tallies.iter().map(|tally| tally.target.as_str()),
    )
}

/// The tallies of the trials connecting during the burst.
fn during(race: &RaceReport) -> impl Iterator<Item = &Tally> {
    (race.tallies.iter()).filter(|tally| tally.connect == Connect::During)
}
