//! The UI's warnings on known inputs: each lint's check alone, then the updates' flow that
//! decides when never-yielded fires for a task stuck in one poll.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use console_api as proto;
use console_probe::task::{Identity, Stats, Task};
use console_probe::warnings::{Lint, Warning};
use console_probe::{Console, PollState, Report};
use proto::field::{Name, Value};

const MS: Duration = Duration::from_millis(1);

fn t0() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000)
}

/// A task of `kind` polled `polls` times, its last poll started at t0 and still running.
fn running(kind: &str, polls: u64) -> Task {
    Task {
        identity: Identity {
            kind: kind.into(),
            ..Identity::default()
        },
        stats: Stats {
            polls,
            last_poll_started: Some(t0()),
            last_poll_ended: (polls > 1).then(|| t0() - MS),
            waker_clones: 1,
            ..Stats::default()
        },
    }
}

#[test]
fn never_yielded_waits_for_one_second_of_a_first_poll() {
    let task = running("task", 1);
    let check = |after| Lint::NeverYielded.check(&task, t0() + after);
    assert_eq!(check(999 * MS), Warning::Recheck);
    assert_eq!(check(1000 * MS), Warning::Warn);
    assert_eq!(
        Lint::NeverYielded.format(&task, t0() + 1500 * MS),
        "This task has never yielded (1.5s)"
    );
}

#[test]
fn never_yielded_spares_a_second_poll_a_blocking_task_and_an_idle_one() {
    let late = t0() + 5000 * MS;
    assert_eq!(
        Lint::NeverYielded.check(&running("task", 2), late),
        Warning::Ok
    );
    assert_eq!(
        Lint::NeverYielded.check(&running("blocking", 1), late),
        Warning::Ok
    );
    let mut idle = running("task", 1);
    idle.stats.last_poll_ended = Some(t0() + 3000 * MS);
    idle.stats.busy = 3000 * MS;
    assert_eq!(Lint::NeverYielded.check(&idle, late), Warning::Ok);
}

#[test]
fn lost_waker_is_a_live_idle_task_with_no_waker_left() {
    let mut task = running("task", 2);
    task.stats.last_poll_ended = Some(t0() + MS);
    assert_eq!(Lint::LostWaker.check(&task, t0()), Warning::Ok);
    task.stats.waker_drops = 1;
    assert_eq!(Lint::LostWaker.check(&task, t0()), Warning::Warn);
    task.stats.last_wake = Some(t0() + 2 * MS);
    assert_eq!(Lint::LostWaker.check(&task, t0()), Warning::Ok, "woken");
}

#[test]
fn self_wakes_is_strictly_over_half_of_the_wakes() {
    let mut task = running("task", 2);
    task.stats.wakes = 10;
    task.stats.self_wakes = 5;
    assert_eq!(Lint::SelfWakes.check(&task, t0()), Warning::Ok);
    task.stats.self_wakes = 6;
    assert_eq!(Lint::SelfWakes.check(&task, t0()), Warning::Warn);
    task.stats.wakes = 0;
    task.stats.self_wakes = 0;
    assert_eq!(Lint::SelfWakes.check(&task, t0()), Warning::Ok, "no wakes");
}

#[test]
fn future_sizes_warn_at_1024_bytes_and_when_boxed() {
    let mut task = running("task", 1);
    task.identity.size_bytes = Some(1023);
    assert_eq!(Lint::LargeFuture.check(&task, t0()), Warning::Ok);
    task.identity.size_bytes = Some(1024);
    assert_eq!(Lint::LargeFuture.check(&task, t0()), Warning::Warn);
    let mut boxed = running("blocking", 1);
    boxed.identity.size_bytes = Some(16);
    boxed.identity.original_size_bytes = Some(20_000);
    assert_eq!(Lint::AutoBoxedFuture.check(&boxed, t0()), Warning::Warn);
    assert_eq!(Lint::LargeFuture.check(&boxed, t0()), Warning::Ok);
}

// === the updates' flow ===

const SPAN: u64 = 7;
const META: u64 = 3;

fn stamp(at: SystemTime) -> Option<prost_types::Timestamp> {
    Some(at.into())
}

/// The metadata of tokio's task span: its field names, by index.
fn metadata() -> proto::RegisterMetadata {
    let names = ["kind", "task.id", "spawn.location"];
    proto::RegisterMetadata {
        metadata: vec![proto::register_metadata::NewMetadata {
            id: Some(proto::MetaId { id: META }),
            metadata: Some(proto::Metadata {
                field_names: names.map(String::from).to_vec(),
                ..proto::Metadata::default()
            }),
        }],
    }
}

fn field(index: u64, value: Value) -> proto::Field {
    proto::Field {
        name: Some(Name::NameIdx(index)),
        value: Some(value),
        metadata_id: Some(proto::MetaId { id: META }),
    }
}

/// Stats of a task polled once, its poll started at t0 and running unless `ended`.
fn stats(ended: Option<SystemTime>) -> proto::tasks::Stats {
    proto::tasks::Stats {
        created_at: stamp(t0()),
        waker_clones: 1,
        poll_stats: Some(proto::PollStats {
            polls: 1,
            last_poll_started: stamp(t0()),
            last_poll_ended: ended.and_then(stamp),
            ..proto::PollStats::default()
        }),
        ..proto::tasks::Stats::default()
    }
}

/// An update sent at `at`: the new task (with its first stats) or only changed stats.
fn update(
    at: SystemTime,
    new: bool,
    changed: Option<proto::tasks::Stats>,
) -> proto::instrument::Update {
    let task = proto::tasks::Task {
        id: Some(proto::Id { id: SPAN }),
        metadata: Some(proto::MetaId { id: META }),
        fields: vec![
            field(0, Value::StrVal("task".into())),
            field(1, Value::U64Val(42)),
        ],
        location: Some(proto::Location {
            file: Some("src/for_tokio.rs".into()),
            line: Some(40),
            column: Some(47),
            ..proto::Location::default()
        }),
        ..proto::tasks::Task::default()
    };
    proto::instrument::Update {
        now: stamp(at),
        task_update: Some(proto::tasks::TaskUpdate {
            new_tasks: if new { vec![task] } else { Vec::new() },
            stats_update: changed
                .map(|s| (SPAN, s))
                .into_iter()
                .collect::<HashMap<_, _>>(),
            dropped_events: 0,
        }),
        new_metadata: new.then(metadata),
        ..proto::instrument::Update::default()
    }
}

fn warnings(reports: &[Report]) -> Vec<Lint> {
    (reports.iter())
        .filter_map(|report| match report {
            Report::Warning { lint, .. } => Some(*lint),
            _ => None,
        })
        .collect()
}

#[test]
fn a_task_stuck_in_its_first_poll_is_warned_of_once_after_a_second_of_updates() {
    let mut console = Console::new(100 * MS);
    let at = |ms: u64| t0() + Duration::from_millis(ms);
    // The first update shows the task running for 300 ms: a long poll, no warning yet.
    let first = console.update(update(at(300), true, Some(stats(None))), at(300));
    assert_eq!(warnings(&first), []);
    let [
        Report::Poll {
            poll,
            ms,
            polls,
            task,
        },
    ] = &first[..]
    else {
        panic!("one long poll: {first:?}");
    };
    assert_eq!((*poll, *ms, *polls), (PollState::Running, 300.0, 1));
    assert_eq!(task.task_id, Some(42));
    assert_eq!(
        (task.kind.as_str(), task.location.as_str()),
        ("task", "src/for_tokio.rs:40:47")
    );
    // Its stats do not change while it is stuck, so no update carries them: the UI's recheck
    // is what fires the warning, once.
    let second = console.update(update(at(1300), false, None), at(1300));
    assert_eq!(warnings(&second), [Lint::NeverYielded]);
    let third = console.update(update(at(2300), false, None), at(2300));
    assert_eq!(third, [], "said once");
}

#[test]
fn a_first_poll_under_a_second_is_never_warned_of() {
    let mut console = Console::new(100 * MS);
    let at = |ms: u64| t0() + Duration::from_millis(ms);
    console.update(update(at(500), true, Some(stats(None))), at(500));
    let ended = console.update(
        update(at(1500), false, Some(stats(Some(at(900))))),
        at(1500),
    );
    assert_eq!(warnings(&ended), []);
    let [Report::Poll { poll, ms, .. }] = &ended[..] else {
        panic!("the ended poll: {ended:?}");
    };
    assert_eq!((*poll, *ms), (PollState::Ended, 900.0));
    assert_eq!(console.update(update(at(2500), false, None), at(2500)), []);
}

#[test]
fn a_blocking_task_is_neither_warned_of_nor_reported() {
    let mut console = Console::new(100 * MS);
    let mut blocking = update(t0() + 2000 * MS, true, Some(stats(None)));
    let tasks = blocking.task_update.as_mut().unwrap();
    tasks.new_tasks[0].fields[0] = field(0, Value::StrVal("blocking".into()));
    assert_eq!(console.update(blocking, t0() + 2000 * MS), []);
}
