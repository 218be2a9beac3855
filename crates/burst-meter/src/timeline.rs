//! The timeline of one case: every burst request and every ping on one clock, in ms from the
//! burst's first send, so that a figure can show what waited behind what.
//!
//! The comparison's tables say *how long* things took; only the timeline says *when*: a
//! serialised burst is a staircase of answers one sleep apart, and a ping that waited behind
//! it is a mark whose answer lands on one of those steps.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::burst::Burst;
use crate::probe::{Ping, ProbeRecords};
use crate::units::millis;

/// Every request and ping of one case, in ms from the burst's first send (pings sent during
/// the probes' head start have negative times).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Each burst request, in the order sent.
    pub requests: Vec<Span>,
    /// Each closed-loop ping, from when it was sent, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closed_loop: Vec<Span>,
    /// Each open-loop ping, from its scheduled send time, in schedule order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_loop: Vec<Span>,
}

/// One request or ping: when it went and when it came back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// When it was sent (a ping: when it was due), in ms from the burst's first send.
    pub sent_ms: f64,
    /// When it was answered, or failed, on the same clock.
    pub ended_ms: f64,
    /// Whether it was answered 200.
    pub ok: bool,
}

impl Timeline {
    /// The timeline of one case, from its burst and its probes' records.
    pub fn new(burst: &Burst, probes: &ProbeRecords) -> Timeline {
        let origin = burst.start;
        let requests = (burst.sent.iter().zip(&burst.done).zip(burst.answered())).map(
            |((&sent, &done), ok)| Span {
                sent_ms: micros_precision(millis(sent)),
                ended_ms: micros_precision(millis(done)),
                ok,
            },
        );
        let pings = |record: Option<&crate::probe::ProbeRecord>| -> Vec<Span> {
            let pings = record.map_or(&[][..], |record| &record.pings[..]);
            pings.iter().map(|ping| ping_span(origin, ping)).collect()
        };
        Timeline {
            requests: requests.collect(),
            closed_loop: pings(probes.closed.as_ref()),
            open_loop: pings(probes.open.as_ref()),
        }
    }
}

fn ping_span(origin: Instant, ping: &Ping) -> Span {
    let sent_ms = signed_ms_since(origin, ping.due);
    Span {
        sent_ms: micros_precision(sent_ms),
        ended_ms: micros_precision(sent_ms + ping.latency_ms),
        ok: ping.answered(),
    }
}

/// `instant - origin` in ms, negative when `instant` came first.
fn signed_ms_since(origin: Instant, instant: Instant) -> f64 {
    match instant.checked_duration_since(origin) {
        Some(after) => millis(after),
        None => -millis(origin - instant),
    }
}

/// Rounded to the microsecond: finer than any figure drawn from it, and a smaller file.
fn micros_precision(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn times_before_the_origin_are_negative() {
        let origin = Instant::now();
        let later = origin + Duration::from_micros(1500);
        assert_eq!(signed_ms_since(origin, later), 1.5);
        assert_eq!(signed_ms_since(later, origin), -1.5);
    }

    #[test]
    fn a_ping_spans_from_its_due_time_to_its_answer() {
        let origin = Instant::now();
        let ping = Ping {
            due: origin + Duration::from_millis(25),
            send_lag_ms: Some(0.01),
            latency_ms: 475.0004,
            connect_ms: None,
            error: None,
        };
        let span = ping_span(origin, &ping);
        assert_eq!((span.sent_ms, span.ended_ms, span.ok), (25.0, 500.0, true));
        let failed = Ping {
            error: Some("reset".into()),
            ..ping
        };
        assert!(!ping_span(origin, &failed).ok);
    }
}
