//! What the network did to a route's connections, told apart from what the route did. The
//! kernel's counters are machine-wide, so each connection is judged on its own: a SYN the
//! server's listener had no room for is dropped, and the client's kernel resends it a second
//! later, so that connection's connect takes a second or more. Beside it, the server's
//! listener as its kernel shows it (`sock_diag`): its backlog, and how full its queue got
//! while each round ran.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;

use super::Trial;
use burst_meter::kernel::port_state;

/// A connect that took this long, in ms, had its SYN resent: Linux resends an unanswered SYN
/// after its initial retransmission timeout, 1 s (`TCP_TIMEOUT_INIT`), and nothing else on a
/// loopback connect takes a fraction of that.
pub const SYN_RESENT_MS: f64 = 900.0;

/// How often the listener is looked at while a round runs: a queue that overflows stays full
/// until the server accepts, for a request's time or more, and a look costs the cores the
/// round measures a little each time.
const LOOK_EVERY: Duration = Duration::from_millis(10);

/// The server's listener while a round ran, as its kernel showed it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listener {
    /// Its backlog: it holds one connection more than this waiting to be accepted, and drops
    /// the SYNs that come past that.
    pub backlog: u32,
    /// The most connections seen waiting to be accepted, at a look every [`LOOK_EVERY`]: a
    /// queue the server empties at once may be full between two looks.
    pub queue_max: u32,
    /// The most handshakes seen unfinished by its kernel: a last ACK dropped at a full queue.
    pub half_open_max: u32,
}

impl Listener {
    /// The fullest of this and `other`, each figure on its own.
    fn fullest(self, other: Listener) -> Listener {
        Listener {
            backlog: self.backlog.max(other.backlog),
            queue_max: self.queue_max.max(other.queue_max),
            half_open_max: self.half_open_max.max(other.half_open_max),
        }
    }
}

/// Looks at the listener on a port every [`LOOK_EVERY`], on a thread off the runtime's
/// workers (each look is a blocking `sock_diag` request), until stopped.
#[derive(Debug)]
pub struct ListenerWatch {
    stop: Arc<AtomicBool>,
    task: JoinHandle<Option<Listener>>,
}

impl ListenerWatch {
    /// Starts watching the listener on local `port`.
    pub fn start(port: u16) -> ListenerWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let task = tokio::task::spawn_blocking(move || {
            let mut seen: Option<Listener> = None;
            loop {
                if let Some(state) = port_state(port) {
                    let now = Listener {
                        backlog: state.backlog,
                        queue_max: state.accept_queue,
                        half_open_max: state.half_open,
                    };
                    seen = Some(seen.map_or(now, |seen| seen.fullest(now)));
                }
                if stopped.load(Ordering::Relaxed) {
                    return seen;
                }
                std::thread::sleep(LOOK_EVERY);
            }
        });
        ListenerWatch { stop, task }
    }

    /// What it saw; `None` where the kernel shows no listener on the port.
    pub async fn stop(self) -> Option<Listener> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.ok().flatten()
    }
}

/// What the network did to one route's connections over its rounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Network {
    /// Route requests sent in the rounds.
    pub requests: usize,
    /// Of those, the ones whose SYN was resent: dropped at the server's listener.
    pub requests_resent: usize,
    /// Health checks answered during the rounds.
    pub checks: usize,
    /// Of those, the ones whose SYN was resent.
    pub checks_resent: usize,
    /// The listener over the rounds: its backlog and the fullest its queue got; `None` where
    /// the kernel did not show it (a server on another machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listener: Option<Listener>,
}

impl Network {
    /// What the connections of `trials` went through.
    pub fn of(trials: &[Trial]) -> Network {
        let resent = |connects: &[f64]| {
            let resent = connects.iter().filter(|&&ms| ms >= SYN_RESENT_MS);
            resent.count()
        };
        let listeners = trials.iter().filter_map(|trial| trial.listener);
        Network {
            requests: trials.iter().map(|trial| trial.done_ms.len()).sum(),
            requests_resent: trials.iter().map(|trial| resent(&trial.connect_ms)).sum(),
            checks: trials.iter().map(|t| t.health_during_ms.len()).sum(),
            checks_resent: trials.iter().map(|t| resent(&t.health_connect_ms)).sum(),
            listener: listeners.reduce(Listener::fullest),
        }
    }

    /// What the server's listener did, and what to do about it; `None` if it dropped no
    /// connection and never filled.
    pub fn says(&self) -> Option<String> {
        let backlog = |listener: Option<Listener>| {
            listener.map_or(String::new(), |l| format!(" of {}", l.backlog))
        };
        let backlog = backlog(self.listener);
        if self.requests_resent + self.checks_resent > 0 {
            let checks = match self.checks_resent {
                0 => String::new(),
                k => format!(" and {k} of {} health checks", self.checks),
            };
            return Some(format!(
                "the server's listen backlog{backlog} dropped {} of {} connections to the \
                 route{checks}, each resent a second later: raise it (the verdict leaves \
                 that wait out)",
                self.requests_resent, self.requests
            ));
        }
        let listener = self.listener?;
        (listener.half_open_max > 0 && listener.queue_max > listener.backlog).then(|| {
            format!(
                "the server's listen queue (backlog{backlog}) filled, and {} connections \
                 waited half-open: raise the backlog",
                listener.half_open_max
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_connections_a_second_late_count_as_dropped() {
        let trial = Trial {
            connect_ms: vec![0.2, 0.3, 1003.0, 3010.0],
            done_ms: vec![200.0, 201.0, 1203.0, 3210.0],
            health_during_ms: vec![1.0, 1004.0],
            health_connect_ms: vec![0.2, 1001.0],
            listener: Some(Listener {
                backlog: 5,
                queue_max: 6,
                half_open_max: 0,
            }),
            ..Trial::default()
        };
        let network = Network::of(&[trial.clone(), trial]);
        assert_eq!(
            (network.requests, network.requests_resent),
            (8, 4),
            "{network:?}"
        );
        assert_eq!((network.checks, network.checks_resent), (4, 2));
        let says = network.says().unwrap();
        assert!(says.contains("backlog of 5 dropped 4 of 8"), "{says}");
        assert!(says.contains("2 of 4 health checks"), "{says}");
        assert_eq!(Network::of(&[Trial::default()]).says(), None);
    }
}
