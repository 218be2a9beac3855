//! How many of a round's requests the server served at a time, judged from each request's
//! own time once its connection was established: a connection the listener had no room for
//! is connected a second or more late (its SYN resent), and then waits no longer than any
//! other. The kernel's wait is not the route's, and a request connected late is no second
//! wave of a pool.
//!
//! - *The first wave*: if the first answer came within [`FIRST_WAVE`] × one request's time of
//!   its own connect (one request's time: alone, or the round's quickest once connected, if
//!   sooner), it and every answer after it until the first gap of [`WAVE_GAP`] × one request's
//!   time, counted where the most of them were connected at one moment. A pool of K answers K
//!   of the requests waiting together in its first wave, then waits a request's time for the
//!   next; a gap, not a deadline, ends the wave, so a wave slowed as a whole stays one wave
//!   and a staircase whose steps come quicker than alone stays a staircase.
//! - *Shared*: requests sharing the cores all finish late together: N × one request's time
//!   over the time some request was connected and waiting, rounded up past
//!   [`PARTIAL_WAVE`] (two cores get through two at a time; a last wave of fewer than K
//!   lowers the mean below K).
//!
//! The larger of the two, at most the most requests connected at one moment (what the server
//! had to serve at once): 1, one after another; all of those, all at once.

use serde::{Deserialize, Serialize};

/// A round has a first wave if its first answer came within this many times one request's
/// time of its connect; else its requests shared what served them, and only the mean counts.
pub const FIRST_WAVE: f64 = 2.0;

/// A gap between two answers (each from its own connect) of this many times one request's
/// time ends the first wave: a pool's next wave waits about a whole request's time.
pub const WAVE_GAP: f64 = 0.5;

/// How far past a whole number of requests at a time the mean must be to count the next:
/// 1.2 at a time is one, 1.5 is two.
pub const PARTIAL_WAVE: f64 = 0.25;

/// One request of a round: when its connection was established and when it was answered,
/// both from the round's first send, in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Served {
    pub connected_ms: f64,
    pub done_ms: f64,
}

impl Served {
    /// From its connect to its answer.
    fn once_connected_ms(self) -> f64 {
        self.done_ms - self.connected_ms
    }
}

/// What one round showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// How many requests the server served at a time.
    pub at_once: usize,
    /// The most requests connected and waiting at one moment: what it had to serve at once.
    pub offered: usize,
}

impl Round {
    /// Whether it served all it had at once (and had more than one).
    pub fn all(self) -> bool {
        self.offered > 1 && self.at_once == self.offered
    }
}

/// How many of `requests` the server served at a time, a request alone taking `alone_ms`.
pub fn round(requests: &[Served], alone_ms: f64) -> Round {
    let offered = most_at_one_moment(requests.iter().copied()).max(1);
    let one = (requests.iter())
        .map(|request| request.once_connected_ms())
        .fold(alone_ms, f64::min);
    let first_wave = most_at_one_moment(first_wave(requests, one).into_iter());
    let busy_ms = busy_ms(requests);
    let shared = match busy_ms > 0.0 {
        true => (requests.len() as f64 * one / busy_ms - PARTIAL_WAVE).ceil(),
        false => 0.0,
    };
    Round {
        at_once: first_wave.max(shared.max(0.0) as usize).clamp(1, offered),
        offered,
    }
}

/// The requests of the round's first wave, one request taking `one_ms` (see the module's doc).
fn first_wave(requests: &[Served], one_ms: f64) -> Vec<Served> {
    let mut by_answer = requests.to_vec();
    by_answer.sort_by(|a, b| a.once_connected_ms().total_cmp(&b.once_connected_ms()));
    match by_answer.first() {
        Some(first) if first.once_connected_ms() <= FIRST_WAVE * one_ms => {}
        _ => return Vec::new(),
    }
    let gap = |pair: &[Served]| pair[1].once_connected_ms() - pair[0].once_connected_ms();
    let wave = (by_answer.windows(2))
        .position(|pair| gap(pair) >= WAVE_GAP * one_ms)
        .map_or(by_answer.len(), |last| last + 1);
    by_answer.truncate(wave);
    by_answer
}

/// The most of `requests` connected and not yet answered at one moment.
fn most_at_one_moment(requests: impl Iterator<Item = Served>) -> usize {
    // An answer at the very moment another connects: the first is gone, not beside it.
    let mut events: Vec<(f64, i32)> = requests
        .flat_map(|request| [(request.connected_ms, 1), (request.done_ms, -1)])
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, change) in events {
        now += change;
        most = most.max(now);
    }
    most as usize
}

/// How long some request was connected and waiting for its answer: the union of each one's
/// span from its connect to its answer.
fn busy_ms(requests: &[Served]) -> f64 {
    let mut spans: Vec<(f64, f64)> = (requests.iter())
        .map(|request| (request.connected_ms, request.done_ms))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut busy, mut reached) = (0.0, f64::NEG_INFINITY);
    for (start, end) in spans {
        let from = start.max(reached);
        if end > from {
            busy += end - from;
        }
        reached = reached.max(end);
    }
    busy
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests connected at `connected` and answered at `done`, ms, pairwise.
    fn served(connected: &[f64], done: &[f64]) -> Vec<Served> {
        (connected.iter().zip(done))
            .map(|(&connected_ms, &done_ms)| Served {
                connected_ms,
                done_ms,
            })
            .collect()
    }

    /// `n` requests all connected at once, answered at `done`.
    fn together(done: &[f64]) -> Vec<Served> {
        served(&vec![0.0; done.len()], done)
    }

    #[test]
    fn connected_together_the_first_wave_counts() {
        let staircase: Vec<f64> = (1..=10).map(|i| 100.0 * i as f64).collect();
        assert_eq!(round(&together(&staircase), 100.0).at_once, 1);
        let pool: Vec<f64> = (0..10).map(|i| 100.0 * (1 + i / 4) as f64).collect();
        assert_eq!(round(&together(&pool), 100.0).at_once, 4);
        let all = round(&together(&[105.0; 10]), 100.0);
        assert_eq!((all.at_once, all.offered, all.all()), (10, 10, true));
    }

    #[test]
    fn a_request_faster_in_the_round_than_alone_does_not_make_a_staircase_a_pool() {
        let done: Vec<f64> = (1..=10).map(|i| 270.0 * i as f64).collect();
        assert_eq!(round(&together(&done), 367.0).at_once, 1);
    }

    #[test]
    fn a_wave_slowed_as_a_whole_stays_one_wave() {
        // A pool of forty sleeping ten requests of 155 ms alone, answered from 1.05× to 1.6×.
        let done: Vec<f64> = (0..10).map(|i| 163.0 + 10.0 * i as f64).collect();
        assert!(round(&together(&done), 155.0).all());
    }

    #[test]
    fn a_staircase_quicker_than_alone_stays_one_at_a_time() {
        // One thread reading a file: its second answer within twice the time alone.
        let done = [
            165.0, 321.0, 494.0, 670.0, 853.0, 1036.0, 1209.0, 1371.0, 1524.0, 1731.0,
        ];
        assert_eq!(round(&together(&done), 181.0).at_once, 1);
    }

    #[test]
    fn requests_answered_late_together_share_rather_than_wave() {
        // Ten file reads sharing two cores: the first answer at 5.7× alone, then in clumps.
        let done = [
            860.0, 860.0, 860.0, 932.0, 932.0, 932.0, 1015.0, 1036.0, 1057.0, 1146.0,
        ];
        assert_eq!(round(&together(&done), 151.0).at_once, 2);
    }

    #[test]
    fn a_partial_last_wave_still_counts_a_whole_one() {
        let at_once = |wall: f64| round(&together(&[wall; 10]), 150.0).at_once;
        assert_eq!(at_once(1000.0), 2, "1.5 at a time");
        assert_eq!(at_once(1250.0), 1, "1.2 at a time");
        assert_eq!(at_once(1500.0), 1);
    }

    #[test]
    fn connections_the_backlog_let_in_late_are_no_second_wave() {
        // A thread per connection; three SYNs resent a second later.
        let mut connected = vec![0.0; 7];
        connected.extend([1010.0, 1012.0, 1015.0]);
        let mut done = vec![205.0; 7];
        done.extend([1215.0, 1216.0, 1219.0]);
        let concurrent = round(&served(&connected, &done), 202.0);
        assert_eq!((concurrent.at_once, concurrent.offered), (7, 7));
        assert!(concurrent.all());
    }

    #[test]
    fn one_thread_stays_one_at_a_time_whenever_its_connections_came() {
        // Six in the queue at once; two connected a second late, two three seconds late, the
        // last of which found the server idle.
        let connected = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1000.0, 1000.0, 3000.0, 3000.0];
        let done = [
            200.0, 400.0, 600.0, 800.0, 1000.0, 1200.0, 1400.0, 1600.0, 3200.0, 3400.0,
        ];
        let one = round(&served(&connected, &done), 200.0);
        assert_eq!(one.at_once, 1);
        assert!(one.offered >= 6, "{one:?}");
        // A pool of four, three connections late.
        let mut connected = vec![0.0; 7];
        connected.extend([1000.0; 3]);
        let mut done = vec![200.0, 200.0, 200.0, 200.0, 400.0, 400.0, 400.0];
        done.extend([1200.0; 3]);
        assert_eq!(round(&served(&connected, &done), 200.0).at_once, 4);
    }

    #[test]
    fn the_busy_time_is_the_union_of_the_spans() {
        let spans = served(&[0.0, 50.0, 300.0], &[100.0, 120.0, 400.0]);
        assert_eq!(busy_ms(&spans), 220.0);
        assert_eq!(most_at_one_moment(spans.into_iter()), 2);
        // One answered as the next connects: never two at once.
        let relay = served(&[0.0, 100.0], &[100.0, 200.0]);
        assert_eq!(most_at_one_moment(relay.into_iter()), 1);
    }
}
