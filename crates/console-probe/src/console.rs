//! The UI's task state, fed one `instrument.Update` at a time, and what it reports from each:
//! a warning as a task gains it, and a poll that has lasted past a threshold, while it runs
//! and when it ends.
//!
//! The updates follow tokio-console's `TasksState::update_tasks` (`src/state/tasks.rs`): new
//! tasks are linted as they arrive with their first stats, a task is linted again each time
//! its stats change, and a task whose lint said "check again" is linted at every update until
//! it says otherwise. That last rule is what lets never-yielded fire for a task stuck in one
//! poll: the subscriber sends a task's stats only when they change, and a task blocked in a
//! poll changes nothing.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime};

use console_api as proto;
use serde::Serialize;

use crate::task::{self, Identity, Task};
use crate::warnings::{Lint, Warning};

/// A line the probe prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Report {
    /// The probe watches the console's stream from now on.
    Connected { addr: String },
    /// A task gained one of the UI's warnings.
    Warning {
        lint: Lint,
        message: String,
        task: Identity,
    },
    /// A task's poll past the threshold, seen in an update: still running, or ended.
    Poll {
        poll: PollState,
        ms: f64,
        /// The task's polls so far.
        polls: u64,
        task: Identity,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PollState {
    Running,
    Ended,
}

/// A task and what has been reported of it.
#[derive(Debug)]
struct Tracked {
    task: Task,
    warnings: HashSet<Lint>,
    /// The start of the poll last reported as running, and the end of the one last reported
    /// as ended: each poll once in each state.
    running_reported: Option<SystemTime>,
    ended_reported: Option<SystemTime>,
}

/// The UI's view of the tasks, and the probe's threshold for a long poll.
#[derive(Debug)]
pub struct Console {
    field_names: HashMap<u64, Vec<String>>,
    tasks: HashMap<u64, Tracked>,
    pending_lint: HashSet<u64>,
    poll_threshold: Duration,
}

impl Console {
    pub fn new(poll_threshold: Duration) -> Console {
        Console {
            field_names: HashMap::new(),
            tasks: HashMap::new(),
            pending_lint: HashSet::new(),
            poll_threshold,
        }
    }

    /// Takes in one update, linting at `now` as the UI does when the update arrives.
    pub fn update(&mut self, update: proto::instrument::Update, now: SystemTime) -> Vec<Report> {
        let sent_at = update.now.map_or(now, task::time);
        for meta in update.new_metadata.into_iter().flat_map(|new| new.metadata) {
            if let (Some(id), Some(metadata)) = (meta.id, meta.metadata) {
                self.field_names.insert(id.id, metadata.field_names);
            }
        }
        let mut reports = Vec::new();
        if let Some(tasks) = update.task_update {
            self.update_tasks(tasks, now, &mut reports);
        }
        self.report_polls(sent_at, &mut reports);
        // A completed task gets no more updates: the UI keeps it on screen a while, its
        // warnings already said.
        self.tasks.retain(|_, tracked| !tracked.task.is_completed());
        reports
    }

    fn update_tasks(
        &mut self,
        update: proto::tasks::TaskUpdate,
        now: SystemTime,
        reports: &mut Vec<Report>,
    ) {
        let mut stats = update.stats_update;
        let mut next_pending = HashSet::new();
        for new in update.new_tasks {
            let Some(span) = new.id.as_ref().map(|id| id.id) else {
                continue;
            };
            // As the UI: a new task without its first stats is skipped.
            let Some(first) = stats.remove(&span) else {
                continue;
            };
            let task = Task {
                identity: task::identity(&new, &self.field_names),
                stats: first.into(),
            };
            let mut tracked = Tracked::new(task);
            if tracked.lint(now, reports) {
                next_pending.insert(span);
            }
            self.tasks.insert(span, tracked);
        }
        for (span, changed) in stats {
            let Some(tracked) = self.tasks.get_mut(&span) else {
                continue;
            };
            tracked.task.stats = changed.into();
            if tracked.lint(now, reports) {
                next_pending.insert(span);
            } else {
                self.pending_lint.remove(&span);
            }
        }
        for span in &self.pending_lint {
            if let Some(tracked) = self.tasks.get_mut(span)
                && tracked.lint(now, reports)
            {
                next_pending.insert(*span);
            }
        }
        self.pending_lint = next_pending;
    }

    /// Every poll past the threshold, once while it runs (at `sent_at`, the update's time)
    /// and once when an update shows it ended. An update carries a task's last poll only, so
    /// a long poll followed by short ones before the next update is seen only while it runs.
    /// Blocking-pool and `block_on` tasks are left out, as the UI's lints leave them out: a
    /// blocking task is "polled" for its whole closure.
    fn report_polls(&mut self, sent_at: SystemTime, reports: &mut Vec<Report>) {
        for tracked in self.tasks.values_mut() {
            let task = &tracked.task;
            if task.is_blocking() {
                continue;
            }
            let running = task.current_poll(sent_at);
            if let Some(held) = running.filter(|held| *held >= self.poll_threshold)
                && tracked.running_reported != task.stats.last_poll_started
            {
                tracked.running_reported = task.stats.last_poll_started;
                reports.push(poll_report(task, PollState::Running, held));
            }
            let ended = task.last_poll().filter(|_| running.is_none());
            if let Some(held) = ended.filter(|held| *held >= self.poll_threshold)
                && tracked.ended_reported != task.stats.last_poll_ended
            {
                tracked.ended_reported = task.stats.last_poll_ended;
                reports.push(poll_report(task, PollState::Ended, held));
            }
        }
    }
}

fn poll_report(task: &Task, poll: PollState, held: Duration) -> Report {
    Report::Poll {
        poll,
        ms: held.as_secs_f64() * 1000.0,
        polls: task.stats.polls,
        task: task.identity.clone(),
    }
}

impl Tracked {
    fn new(task: Task) -> Tracked {
        Tracked {
            task,
            warnings: HashSet::new(),
            running_reported: None,
            ended_reported: None,
        }
    }

    /// Runs every lint on the task, as the UI's `Task::lint`, reporting each warning the task
    /// did not have; returns whether a lint asked to be run again at the next update.
    fn lint(&mut self, now: SystemTime, reports: &mut Vec<Report>) -> bool {
        let mut recheck = false;
        let mut warnings = HashSet::new();
        for lint in Lint::ALL {
            match lint.check(&self.task, now) {
                Warning::Warn => {
                    warnings.insert(lint);
                    if !self.warnings.contains(&lint) {
                        reports.push(Report::Warning {
                            lint,
                            message: lint.format(&self.task, now),
                            task: self.task.identity.clone(),
                        });
                    }
                }
                Warning::Recheck => recheck = true,
                Warning::Ok => {}
            }
        }
        self.warnings = warnings;
        recheck
    }
}
