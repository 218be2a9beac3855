//! The server's own order of events (`--events`, `GET /events`): when it accepted each
//! connection, and when each request's handler started and ended, on one monotonic clock
//! counted from the server's start.
//!
//! Each stack's glue records them where its own machinery hands over: `accepted` where its
//! accept loop (or, on actix-web, the worker) takes a new connection, `started` and `ended`
//! around every request future, from the router (or the service) down, for every path but
//! `/events` itself. So a client can tell, after a burst, in which order the server took the
//! connections and ran the handlers, which the client's own clock cannot show.
//!
//! Without `--events` nothing is recorded and no lock is taken: every call checks one
//! `Option` first.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::Route;
use crate::body::{Event, EventsBody, What};

/// The record of one server: off, or the events since the last drain.
#[derive(Debug)]
pub struct EventLog {
    recording: Option<Recording>,
}

#[derive(Debug)]
struct Recording {
    /// The server's start: every `at_us` counts from here.
    start: Instant,
    events: Mutex<Vec<Event>>,
}

impl EventLog {
    /// A log that records nothing (`--events` not given).
    pub const fn off() -> EventLog {
        EventLog { recording: None }
    }

    /// A log that records if `on`, its clock starting now.
    pub fn start(on: bool) -> EventLog {
        EventLog {
            recording: on.then(|| Recording {
                start: Instant::now(),
                events: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Whether `--events` was given.
    pub fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// Records that a connection from port `peer` was accepted, now.
    pub fn accepted(&self, peer: u16) {
        self.push(What::Accepted, peer, None);
    }

    /// One request from the client at port `peer` to `path` (without the query): read it
    /// before the request is handed on, then wrap the request's future with
    /// [`RequestEvents::around`]. `/events` itself is not recorded.
    pub fn request(&self, peer: u16, path: &str) -> RequestEvents<'_> {
        let route = (self.is_recording() && path != Route::Events.path()).then(|| path.to_owned());
        RequestEvents {
            log: self,
            peer,
            route,
        }
    }

    /// The body of `GET /events`: every event recorded since the last call, which are
    /// forgotten.
    pub fn drain(&self) -> EventsBody {
        match &self.recording {
            None => EventsBody {
                recording: false,
                events: Vec::new(),
            },
            Some(recording) => EventsBody {
                recording: true,
                events: std::mem::take(&mut *recording.lock()),
            },
        }
    }

    fn push(&self, what: What, peer: u16, route: Option<String>) {
        let Some(recording) = &self.recording else {
            return;
        };
        let mut events = recording.lock();
        // Read under the lock, so that the order of the list is the order of the clock.
        let at_us = u64::try_from(recording.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        events.push(Event {
            at_us,
            what,
            peer,
            route,
        });
    }
}

/// The events of one request, to be recorded around its future ([`EventLog::request`]).
#[derive(Debug)]
pub struct RequestEvents<'log> {
    log: &'log EventLog,
    peer: u16,
    /// `None`: not recorded (no `--events`, or `/events` itself).
    route: Option<String>,
}

impl<'log> RequestEvents<'log> {
    /// Wraps a request's future (handler included) so that `started` is recorded when it is
    /// first polled and `ended` when it returns its response.
    pub async fn around<F: Future>(self, request: F) -> F::Output {
        let Some(route) = self.route else {
            return request.await;
        };
        self.log.push(What::Started, self.peer, Some(route.clone()));
        let response = request.await;
        self.log.push(What::Ended, self.peer, Some(route));
        response
    }
}

impl Recording {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Event>> {
        // A panic while holding the lock cannot leave the list half-written: take it anyway.
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poll_ready;

    #[test]
    fn off_records_nothing() {
        let log = EventLog::off();
        log.accepted(1);
        assert_eq!(poll_ready(log.request(1, "/bad").around(async { 7 })), 7);
        assert_eq!(
            log.drain(),
            EventsBody {
                recording: false,
                events: Vec::new()
            }
        );
        assert!(!EventLog::start(false).is_recording());
    }

    #[test]
    fn records_in_order_and_drains() {
        let log = EventLog::start(true);
        log.accepted(40_000);
        let request = log.request(40_000, "/ok-def").around(async {
            std::thread::sleep(std::time::Duration::from_millis(2));
            "answer"
        });
        // Nothing is recorded before the request is polled.
        assert_eq!(log.drain().events.len(), 1);
        assert_eq!(poll_ready(request), "answer");
        let body = log.drain();
        assert!(body.recording);
        let seen: Vec<(What, u16, Option<&str>)> = body
            .events
            .iter()
            .map(|event| (event.what, event.peer, event.route.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                (What::Started, 40_000, Some("/ok-def")),
                (What::Ended, 40_000, Some("/ok-def")),
            ]
        );
        assert!(
            body.events[1].at_us >= body.events[0].at_us + 2_000,
            "{body:?}"
        );
        assert!(log.drain().events.is_empty(), "drained");
    }

    #[test]
    fn events_itself_is_not_recorded() {
        let log = EventLog::start(true);
        poll_ready(log.request(1, "/events").around(async {}));
        assert!(log.drain().events.is_empty());
    }
}
