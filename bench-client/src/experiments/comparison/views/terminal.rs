//! The terminal: the original bench's block for each case as it ends, plus where the sleep
//! ran and what the open-loop probe saw.

use std::fmt::Write as _;

use super::where_it_ran;
use crate::report::text::{latency, with_failed};
use burst_meter::case::Case;

/// The original bench's block for one case.
pub fn block(case: &Case) -> String {
    let mut out = format!(
        "=== {} ({} concurrent, sleep={}s each) ===\n",
        case.route,
        case.n,
        case.sleep_ms as f64 / 1000.0
    );
    let _ = writeln!(out, "work wall_ms : {:.1}", case.wall_ms);
    let _ = writeln!(out, "work ok/err  : {}/{}", case.ok, case.err);
    for error in &case.errors {
        let _ = writeln!(out, "  {} × {}", error.count, error.reason);
    }
    let _ = writeln!(out, "slept on     : {}", where_it_ran(case));
    if let Some(ping) = &case.closed_loop {
        let _ = writeln!(out, "ping samples : {}", ping.samples);
        let _ = writeln!(out, "ping errors  : {}", ping.errors);
        let _ = writeln!(out, "ping mean_ms : {}", latency(ping.mean_ms));
        let _ = writeln!(out, "ping p50_ms  : {}", latency(ping.p50_ms));
        let _ = writeln!(out, "ping p95_ms  : {}", latency(ping.p95_ms));
        let _ = writeln!(out, "ping max_ms  : {}", latency(ping.max_ms));
    }
    if let Some(open) = &case.open_loop {
        let _ = writeln!(
            out,
            "open loop    : {} sent, {} answered, p50 {} / p99 {} / max {} ms",
            open.scheduled,
            with_failed(open.answered, open.errors),
            latency(open.p50_ms),
            latency(open.p99_ms),
            latency(open.max_ms)
        );
    }
    out
}
