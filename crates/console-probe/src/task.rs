//! One task as the console's UI holds it: its identity read from the task's span fields, its
//! statistics from the latest stats update, and the UI's derived figures (state, busy time,
//! waker count), each computed as tokio-console's `src/state/tasks.rs` computes it.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use console_api as proto;
use proto::field::{Name, Value};
use serde::Serialize;

/// The span fields the UI gives a meaning to (tokio-console `src/state/mod.rs`, `Field`).
const KIND: &str = "kind";
const NAME: &str = "task.name";
const TASK_ID: &str = "task.id";
const SIZE_BYTES: &str = "size.bytes";
const ORIGINAL_SIZE_BYTES: &str = "original_size.bytes";

/// Who a task is, as the UI's task list shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// tokio's task id (`task.id`), if the runtime recorded one.
    pub task_id: Option<u64>,
    /// The name given with `tokio::task::Builder::name`, if any.
    pub name: Option<String>,
    /// Where it was spawned: `file:line:column`.
    pub location: String,
    /// `task`, `local`, `blocking` or `block_on`.
    pub kind: String,
    #[serde(skip)]
    pub size_bytes: Option<u64>,
    #[serde(skip)]
    pub original_size_bytes: Option<u64>,
}

/// A task's statistics at its latest update (tokio-console `TaskStats`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub polls: u64,
    pub busy: Duration,
    pub last_poll_started: Option<SystemTime>,
    pub last_poll_ended: Option<SystemTime>,
    pub dropped_at: Option<SystemTime>,
    pub wakes: u64,
    pub waker_clones: u64,
    pub waker_drops: u64,
    pub last_wake: Option<SystemTime>,
    pub self_wakes: u64,
}

/// The UI's states (tokio-console `TaskState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Completed,
    Idle,
    Running,
    Scheduled,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub identity: Identity,
    pub stats: Stats,
}

impl Task {
    /// Whether a poll is under way (`is_running`).
    pub fn is_running(&self) -> bool {
        self.stats.last_poll_started > self.stats.last_poll_ended
    }

    pub fn is_scheduled(&self) -> bool {
        self.stats.last_wake > self.stats.last_poll_started
    }

    /// Blocking-pool and `block_on` tasks are left out of the lints (`is_blocking`).
    pub fn is_blocking(&self) -> bool {
        matches!(self.identity.kind.as_str(), "block_on" | "blocking")
    }

    /// The UI tells completion by a total time, which it has once the task was dropped.
    pub fn is_completed(&self) -> bool {
        self.stats.dropped_at.is_some()
    }

    pub fn state(&self) -> State {
        if self.is_completed() {
            State::Completed
        } else if self.is_running() {
            State::Running
        } else if self.is_scheduled() {
            State::Scheduled
        } else {
            State::Idle
        }
    }

    /// Busy time at `now`, the poll under way included (`busy`).
    pub fn busy(&self, now: SystemTime) -> Duration {
        self.current_poll(now)
            .map_or(self.stats.busy, |running| self.stats.busy + running)
    }

    /// How long the poll under way has lasted at `now`, if one is.
    pub fn current_poll(&self, now: SystemTime) -> Option<Duration> {
        let started = self.stats.last_poll_started.filter(|_| self.is_running())?;
        Some(now.duration_since(started).unwrap_or_default())
    }

    /// How long the last poll lasted, if it has ended.
    pub fn last_poll(&self) -> Option<Duration> {
        let (started, ended) = (self.stats.last_poll_started?, self.stats.last_poll_ended?);
        ended.duration_since(started).ok()
    }

    pub fn waker_count(&self) -> u64 {
        self.stats
            .waker_clones
            .saturating_sub(self.stats.waker_drops)
    }

    /// `self_wakes` as a percentage of `wakes`, truncated; 0 without wakes (the UI's
    /// `percent_of` casts NaN to 0).
    pub fn self_wake_percent(&self) -> u64 {
        (self.stats.self_wakes as f64 / self.stats.wakes as f64 * 100.0) as u64
    }

    /// Whether the task waits for the executor: never polled, or woken since its last poll.
    pub fn is_awakened(&self) -> bool {
        self.stats.polls == 0 || self.stats.last_wake > self.stats.last_poll_started
    }
}

impl From<proto::tasks::Stats> for Stats {
    fn from(pb: proto::tasks::Stats) -> Stats {
        let poll = pb.poll_stats.unwrap_or_default();
        Stats {
            polls: poll.polls,
            busy: poll.busy_time.map(duration).unwrap_or_default(),
            last_poll_started: poll.last_poll_started.map(time),
            last_poll_ended: poll.last_poll_ended.map(time),
            dropped_at: pb.dropped_at.map(time),
            wakes: pb.wakes,
            waker_clones: pb.waker_clones,
            waker_drops: pb.waker_drops,
            last_wake: pb.last_wake.map(time),
            self_wakes: pb.self_wakes,
        }
    }
}

/// A protobuf timestamp as a system time (the epoch if it is out of range).
pub fn time(pb: prost_types::Timestamp) -> SystemTime {
    SystemTime::try_from(pb).unwrap_or(SystemTime::UNIX_EPOCH)
}

fn duration(pb: prost_types::Duration) -> Duration {
    Duration::try_from(pb).unwrap_or_default()
}

/// A new task's identity from its span: each field's name is either given or an index into
/// the field names of the span's metadata (`field_names`, by metadata id), as the UI reads it.
pub fn identity(task: &proto::tasks::Task, field_names: &HashMap<u64, Vec<String>>) -> Identity {
    let names = (task.metadata.as_ref()).and_then(|meta| field_names.get(&meta.id));
    let mut identity = Identity {
        location: task.location.as_ref().map_or_else(
            || "<unknown location>".to_owned(),
            |location| location.to_string(),
        ),
        ..Identity::default()
    };
    for field in &task.fields {
        let name = match &field.name {
            Some(Name::StrName(name)) => Some(name.as_str()),
            Some(Name::NameIdx(index)) => names
                .and_then(|names| names.get(*index as usize))
                .map(String::as_str),
            None => None,
        };
        match (name, &field.value) {
            (Some(KIND), Some(value)) => identity.kind = text(value),
            (Some(NAME), Some(value)) => identity.name = Some(text(value)),
            (Some(TASK_ID), Some(Value::U64Val(id))) => identity.task_id = Some(*id),
            (Some(SIZE_BYTES), Some(Value::U64Val(size))) => identity.size_bytes = Some(*size),
            (Some(ORIGINAL_SIZE_BYTES), Some(Value::U64Val(size))) => {
                identity.original_size_bytes = Some(*size)
            }
            _ => {}
        }
    }
    identity
}

fn text(value: &Value) -> String {
    match value {
        Value::StrVal(text) | Value::DebugVal(text) => text.clone(),
        Value::U64Val(number) => number.to_string(),
        Value::I64Val(number) => number.to_string(),
        Value::BoolVal(flag) => flag.to_string(),
    }
}
