//! The counters, as a plain snapshot and as the `/stalls` JSON body.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// A snapshot of a [`Watch`](crate::Watch)'s counters, from
/// [`Watch::stalls`](crate::Watch::stalls). Counts are totals since the watch started; take
/// two snapshots and subtract for a rate.
///
/// A *slow poll* is one call of a wrapped future's `poll` that took longer than the
/// threshold: for that long, the thread that ran it could run nothing else.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stalls {
    /// The threshold; zero when the watch is off.
    ///
    /// **Definition**: [`Config::threshold`](crate::Config::threshold).
    ///
    /// **Interpretation**: the longest a request handler may hold its thread in one poll
    /// before it counts as a stall. Every other figure here is relative to it; zero means
    /// nothing is measured and every count stays 0.
    pub threshold: Duration,

    /// The number of wrapped polls that returned after running longer than the threshold.
    ///
    /// **Definition**: incremented once per slow poll, by the polling thread, when the poll
    /// returns (whether `Ready` or `Pending`), if the watchdog saw it running (see the
    /// [crate docs](crate), "Why it is cheap"). A poll that never returns is not counted here
    /// (see [`still_running_reports`](Stalls::still_running_reports)). Nested wrappers count
    /// separately: a slow inner poll is also a slow poll of every wrapper around it.
    ///
    /// **Interpretation**: how often some handler blocked its thread. Every slow poll delayed
    /// every other task on the same thread (and, on a one-thread reactor, every accept and
    /// every read) by up to its duration. It should be 0 in a healthy async server; any
    /// increase names a route to fix in [`by_route`](Stalls::by_route).
    pub slow_polls: u64,

    /// The duration of the longest slow poll; zero if there was none.
    ///
    /// **Definition**: the maximum, over all slow polls that returned, of the time from just
    /// before the inner `poll` to just after it.
    ///
    /// **Interpretation**: the worst latency any co-located task could have suffered from a
    /// single stall: a request that arrived at that moment waited at least that long.
    pub longest: Duration,

    /// The same two counts per label (the route name as the caller gave it), sorted by name.
    ///
    /// **Definition**: for each label with at least one slow poll, the number of its slow
    /// polls and the longest of them. Labels without slow polls are absent.
    ///
    /// **Interpretation**: which handler blocks. The counts are of the blocker, not of its
    /// victims: a fast route that waited behind a slow one shows no stall here.
    pub by_route: BTreeMap<String, RouteStalls>,

    /// The number of "still running" reports the watchdog made.
    ///
    /// **Definition**: incremented when the watchdog thread, scanning every threshold/2, first
    /// sees a poll that has been running longer than the threshold: at most once per poll
    /// (and once per stall of a thread when wrappers nest).
    ///
    /// **Interpretation**: stalls caught while they were happening. It is at most
    /// `slow_polls` plus the number of polls still stuck: a value above `slow_polls` means
    /// some poll has not returned (a deadlock, or a blocking call with no timeout). A value
    /// below it means the watchdog missed polls that overran by less than its interval, or
    /// was itself starved of CPU.
    pub still_running_reports: u64,
}

/// The slow polls of one label, in [`Stalls::by_route`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RouteStalls {
    /// Slow polls of this label: as [`Stalls::slow_polls`], for this label only.
    pub slow_polls: u64,
    /// The longest of them: as [`Stalls::longest`], for this label only.
    pub longest: Duration,
}

impl Stalls {
    /// Renders the `/stalls` body, one line of JSON with the keys in this order:
    ///
    /// ```text
    /// {"threshold_ms":100,"slow_polls":3,"longest_ms":301.2,"by_route":{"GET /bad":{"slow_polls":3,"longest_ms":301.2}},"still_running_reports":3}
    /// ```
    ///
    /// Durations are in milliseconds, rounded to the microsecond and written without trailing
    /// zeros; labels are escaped as JSON strings.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(128 + 64 * self.by_route.len());
        out.push_str("{\"threshold_ms\":");
        push_ms(&mut out, self.threshold);
        let _ = write!(out, ",\"slow_polls\":{}", self.slow_polls);
        out.push_str(",\"longest_ms\":");
        push_ms(&mut out, self.longest);
        out.push_str(",\"by_route\":{");
        for (i, (route, stalls)) in self.by_route.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_string(&mut out, route);
            let _ = write!(out, ":{{\"slow_polls\":{}", stalls.slow_polls);
            out.push_str(",\"longest_ms\":");
            push_ms(&mut out, stalls.longest);
            out.push('}');
        }
        let _ = write!(
            out,
            "}},\"still_running_reports\":{}}}",
            self.still_running_reports
        );
        out
    }
}

/// A duration in milliseconds, rounded to the microsecond. Rust prints the shortest decimal
/// that reads back the same, never in exponent form: valid JSON.
pub(crate) fn push_ms(out: &mut String, duration: Duration) {
    let ms = duration.as_nanos() as f64 / 1e6;
    let _ = write!(out, "{}", (ms * 1e3).round() / 1e3);
}

/// A JSON string literal (RFC 8259 §7): quote, backslash and control characters escaped.
pub(crate) fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
