//! The progress view: which experiment a run is in, which stack and step, step k of K, how
//! long it has run and when it should end. On a terminal it is one line, redrawn in place
//! (indicatif); elsewhere, in a CI log or a pipe, it is a plain line per step.
//!
//! The time left comes from the plan, not from a guess: every step knows what its sleeps and
//! the protocol's fixed waits add up to ([`burst_meter::session::Step::floor`]), so the whole
//! run's length is known before it starts. Steps rarely take exactly their estimate (starting
//! servers, connecting thousands of sockets, a machine's noise), so the time left is the
//! estimate of what remains scaled by how the steps done so far compared with theirs.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use burst_meter::session::{Event, Failure, PAUSE, Step};
use burst_meter::target::Target;
use burst_meter::units::whole_millis;

/// One experiment of a run, as planned: its name, its steps and what they should take.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    pub name: String,
    pub steps: usize,
    /// What the view expects it to take: its steps' floors and pauses (a script: its usual
    /// time, since its work is not a plan's).
    pub estimate: Duration,
}

impl Stage {
    /// A stage of nothing to do, named `name`.
    pub fn empty(name: String) -> Stage {
        Stage {
            name,
            steps: 0,
            estimate: Duration::ZERO,
        }
    }

    /// `steps` on each (target, reactor threads) pair of `schedule`, with [`PAUSE`] after
    /// each, as a stage named `name`; each pair is one server started and stopped, whose
    /// framework may delay its stop by design ([`stacks::stop_delay`]).
    pub fn of<S: Step>(name: &str, schedule: &[(&Target, usize)], steps: &[S]) -> Stage {
        let per_target = |target: &Target, threads: usize| -> Duration {
            let steps: Duration = (steps.iter())
                .map(|step| step.floor(target.label(), threads) + PAUSE)
                .sum();
            steps + stacks::stop_delay(target.label())
        };
        Stage {
            name: name.to_owned(),
            steps: schedule.len() * steps.len(),
            estimate: schedule
                .iter()
                .map(|&(target, threads)| per_target(target, threads))
                .sum(),
        }
    }
}

/// The view of a run of one or more [`Stage`]s.
#[derive(Debug)]
pub struct Progress {
    /// Hidden (indicatif draws nothing) when stderr is not a terminal.
    bar: ProgressBar,
    stages: Vec<Stage>,
    /// The stage running, from 0; `stages.len()` once all are done.
    stage: usize,
    /// Steps started in this stage.
    step: usize,
    /// The estimates of the steps finished, earlier stages included, and of the one running.
    done: Duration,
    running: Duration,
    started: Instant,
}

/// The bar's length and position are in ms of the plan's estimates.
const TEMPLATE: &str = "{elapsed_precise} [{bar:20}] {percent:>3}% ETA {eta_from_plan}  {msg}";

impl Progress {
    /// A view of `stages`, run in order, drawn on stderr.
    pub fn new(stages: Vec<Stage>) -> Progress {
        let total: Duration = stages.iter().map(|stage| stage.estimate).sum();
        let bar = ProgressBar::new(whole_millis(total));
        let style = ProgressStyle::with_template(TEMPLATE)
            .expect("a valid template")
            .with_key("eta_from_plan", eta_from_plan)
            .progress_chars("=> ");
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_secs(1));
        Progress {
            bar,
            stages,
            stage: 0,
            step: 0,
            done: Duration::ZERO,
            running: Duration::ZERO,
            started: Instant::now(),
        }
    }

    /// A view of one experiment.
    pub fn single(stage: Stage) -> Progress {
        Progress::new(vec![stage])
    }

    /// Whether the view is redrawn in place (stderr is a terminal).
    pub fn on_terminal(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// A step starts: `target`, what it measures, and what it should take.
    pub fn step(&mut self, target: &str, what: &str, estimate: Duration) {
        self.done += self.running;
        self.running = estimate;
        self.step += 1;
        self.bar.set_position(whole_millis(self.done));
        let line = format!(
            "{} · {target} {what} ({}/{})",
            self.stage_name(),
            self.step,
            self.steps()
        );
        if self.on_terminal() {
            self.bar.set_message(line);
        } else {
            eprintln!(
                "[{} ETA {}] {line}",
                clock(self.started.elapsed()),
                self.eta_text()
            );
        }
    }

    /// The stage running has ended: the view moves to the start of the next, whatever its
    /// steps took or skipped (a target that failed to start skips its steps).
    pub fn next_stage(&mut self) {
        self.done = self
            .stages
            .iter()
            .take(self.stage + 1)
            .map(|stage| stage.estimate)
            .sum();
        self.running = Duration::ZERO;
        self.stage += 1;
        self.step = 0;
        self.bar.set_position(whole_millis(self.done));
    }

    /// A line printed above the view (or as it is, without a terminal).
    pub fn print(&self, line: &str) {
        if self.on_terminal() {
            self.bar.suspend(|| eprintln!("{line}"));
        } else {
            eprintln!("{line}");
        }
    }

    /// Text for stdout (the comparison's case blocks), printed above the view.
    pub fn print_out(&self, text: &str) {
        self.bar.suspend(|| println!("{text}"));
    }

    /// Shows a session's events: each step as it starts, each failure as a line.
    pub fn on_event<T>(&mut self, event: &Event<'_, T>) {
        match event {
            Event::Running {
                target,
                step,
                estimate,
            } => self.step(target, step, *estimate),
            Event::Failed(failure) => self.print(&failed_line(failure)),
            Event::Starting { .. } | Event::Measured(_) => {}
        }
    }

    /// Removes the view from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn stage_name(&self) -> String {
        match (self.stages.get(self.stage), self.stages.len()) {
            (Some(stage), 1) => stage.name.clone(),
            (Some(stage), count) => format!("{}/{count} {}", self.stage + 1, stage.name),
            (None, _) => "done".to_owned(),
        }
    }

    fn steps(&self) -> usize {
        self.stages.get(self.stage).map_or(0, |stage| stage.steps)
    }

    fn eta_text(&self) -> String {
        let total = whole_millis(self.stages.iter().map(|stage| stage.estimate).sum());
        let eta = time_left(self.started.elapsed(), whole_millis(self.done), total);
        clock(eta)
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A failure, as the progress view reports it.
pub fn failed_line(failure: &Failure) -> String {
    let route = failure
        .route
        .as_deref()
        .map(|route| format!(" {route}"))
        .unwrap_or_default();
    format!("FAILED {}{route}: {}", failure.target, failure.reason)
}

/// The time left: the estimate of what remains, scaled by elapsed / done (the estimates of
/// the steps finished); before any step has finished, the estimate itself.
pub fn time_left(elapsed: Duration, done_ms: u64, total_ms: u64) -> Duration {
    let left_ms = total_ms.saturating_sub(done_ms);
    let pace = if done_ms == 0 {
        1.0
    } else {
        elapsed.as_secs_f64() * 1000.0 / done_ms as f64
    };
    Duration::from_secs_f64(left_ms as f64 * pace / 1000.0)
}

/// indicatif's key for the time left from the plan.
fn eta_from_plan(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    let total = state.len().unwrap_or(0);
    let _ = write!(
        out,
        "{}",
        clock(time_left(state.elapsed(), state.pos(), total))
    );
}

/// `h:mm:ss`, or `m:ss` under an hour.
pub fn clock(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut text = String::new();
    if hours > 0 {
        let _ = write!(text, "{hours}:{minutes:02}:{seconds:02}");
    } else {
        let _ = write!(text, "{minutes}:{seconds:02}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_is_the_plan_scaled_by_the_pace_so_far() {
        let left = time_left(Duration::from_secs(20), 10_000, 40_000);
        assert_eq!(left, Duration::from_secs(60), "twice as slow as planned");
        let left = time_left(Duration::from_secs(5), 10_000, 40_000);
        assert_eq!(left, Duration::from_secs(15), "twice as fast");
        assert_eq!(
            time_left(Duration::from_secs(3), 0, 8_000),
            Duration::from_secs(8)
        );
        assert_eq!(
            time_left(Duration::from_secs(3), 9_000, 8_000),
            Duration::ZERO
        );
    }

    #[test]
    fn clocks_read_as_minutes_or_hours() {
        assert_eq!(clock(Duration::from_secs(75)), "1:15");
        assert_eq!(clock(Duration::from_secs(3_725)), "1:02:05");
        assert_eq!(clock(Duration::ZERO), "0:00");
    }

    #[test]
    fn the_view_moves_through_stages_by_their_estimates() {
        let stage = |name: &str, secs| Stage {
            name: name.into(),
            steps: 2,
            estimate: Duration::from_secs(secs),
        };
        let mut progress = Progress::new(vec![stage("a", 10), stage("b", 30)]);
        progress.step("x", "/bad", Duration::from_secs(4));
        progress.step("x", "/ok", Duration::from_secs(4));
        assert_eq!(progress.done, Duration::from_secs(4));
        assert_eq!(progress.stage_name(), "1/2 a");
        progress.next_stage();
        assert_eq!(
            progress.done,
            Duration::from_secs(10),
            "a stage ends at its planned end"
        );
        assert_eq!(progress.stage_name(), "2/2 b");
        progress.next_stage();
        assert_eq!(progress.stage_name(), "done");
    }
}
