//! How figures and names are printed, the same in every table, finding and legend.

use burst_meter::burst::Connect;
use burst_meter::cpu::CpuUse;
use burst_meter::kernel::TcpCounters;
use burst_meter::stalls::StallsSeen;

/// A latency, or any short time, in ms for a table: one decimal, two below 1 ms (loopback
/// pings take tens of µs); "-" for none.
pub fn latency(value: Option<f64>) -> String {
    match value {
        Some(value) if value < 1.0 => format!("{value:.2}"),
        Some(value) => format!("{value:.1}"),
        None => "-".to_owned(),
    }
}

/// "12", or "11 (+1 failed)".
pub fn with_failed(answered: usize, failed: usize) -> String {
    if failed == 0 {
        answered.to_string()
    } else {
        format!("{answered} (+{failed} failed)")
    }
}

/// A figure rounded to a whole number ("12"), "-" for none.
pub fn whole(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), |value| format!("{value:.0}"))
}

/// A wall time in ideals, the `× ideal` column: two decimals ("1.02"), "-" for none.
pub fn times_ideal(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), |times| format!("{times:.2}"))
}

/// Table cells cannot hold a bare `|` (actix-web names its threads `actix-rt|system:0|...`).
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// "1 reactor thread", "4 reactor threads".
pub fn reactor_threads(n: usize) -> String {
    format!("{n} reactor thread{}", if n == 1 { "" } else { "s" })
}

/// What the kernel did to a case's connections, if anything: "kernel: 950 listen overflows,
/// 952 retransmitted segments". `None` when the counters did not move or were not read.
pub fn kernel_note(counters: Option<TcpCounters>) -> Option<String> {
    let counters = counters.filter(|c| c.any())?;
    let parts = [
        (counters.listen_overflows, "listen overflows"),
        (counters.listen_drops, "listen drops"),
        (counters.retrans_segs, "retransmitted segments"),
        (counters.tcp_timeouts, "retransmission timeouts"),
    ];
    let said: Vec<String> = parts
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, what)| format!("{count} {what}"))
        .collect();
    Some(format!("kernel: {}", said.join(", ")))
}

/// What the server's own stall detector said of a case: "10 slow polls, longest 501 ms",
/// "none", "off", or "not reported" by a server without `/stalls`.
pub fn stalls(seen: Option<&StallsSeen>) -> String {
    match seen {
        None => "not reported".to_owned(),
        Some(seen) if seen.threshold_ms <= 0.0 => "off".to_owned(),
        Some(seen) if seen.slow_polls == 0 => "none".to_owned(),
        Some(seen) => {
            let polls = if seen.slow_polls == 1 {
                "poll"
            } else {
                "polls"
            };
            match seen.longest_ms {
                Some(ms) => format!("{} slow {polls}, longest {ms:.0} ms", seen.slow_polls),
                None => format!("{} slow {polls}", seen.slow_polls),
            }
        }
    }
}

/// How a burst's connections were made, in a sentence's words.
pub fn connect_text(connect: Connect) -> &'static str {
    match connect {
        Connect::During => "opened as each request is sent (the original client)",
        Connect::Before => "all opened and accepted before the first request is written",
    }
}

/// The client's and the server's CPU cells, the client's in bold where it used more.
pub fn cpu_cells(cpu: Option<CpuUse>) -> String {
    let Some(cpu) = cpu else {
        return "- | -".to_owned();
    };
    let server = whole(cpu.server_ms);
    if cpu.client_heavier() {
        format!("**{:.0}** | {server}", cpu.client_ms)
    } else {
        format!("{:.0} | {server}", cpu.client_ms)
    }
}

/// Many pool threads make a long list; the table needs the gist: `blocking-* (10 threads)`
/// when the names differ only in their number.
pub fn shorten(threads: &str) -> String {
    let names: Vec<&str> = threads.split(", ").collect();
    if names.len() <= 2 {
        return threads.to_owned();
    }
    let stem = |name: &'_ str| {
        name.trim_end_matches(|c: char| c.is_ascii_digit())
            .to_owned()
    };
    let first = stem(names[0]);
    if names.iter().all(|name| stem(name) == first) {
        format!("{first}* ({} threads)", names.len())
    } else {
        format!("{}, {}, … ({} threads)", names[0], names[1], names.len())
    }
}

/// The smallest and the largest of `values`; `None` for none.
fn min_max(values: &[f64]) -> Option<(f64, f64)> {
    let min = values.iter().copied().reduce(f64::min)?;
    let max = values.iter().copied().reduce(f64::max)?;
    Some((min, max))
}

/// `min / median / max` ([`burst_meter::stats::spread`]), one decimal, or `-`.
pub fn spread(values: Option<[f64; 3]>) -> String {
    spread_to(values, 1)
}

/// `min / median / max`, with `decimals` places, or `-`.
pub fn spread_to(values: Option<[f64; 3]>, decimals: usize) -> String {
    values.map_or("-".to_owned(), |[min, median, max]| {
        format!("{min:.decimals$} / {median:.decimals$} / {max:.decimals$}")
    })
}

/// "12" or "12–40", with `decimals` places; "-" for nothing.
pub fn range(values: &[f64], decimals: usize) -> String {
    match min_max(values) {
        Some((min, max)) if format!("{min:.decimals$}") == format!("{max:.decimals$}") => {
            format!("{min:.decimals$}")
        }
        Some((min, max)) => format!("{min:.decimals$}–{max:.decimals$}"),
        None => "-".to_owned(),
    }
}

/// A range of latencies, each end as the tables print it ("0.04–0.61", "2408.4–4960.3").
pub fn latency_range(values: &[f64]) -> String {
    let (min, max) = min_max(values).unzip();
    match (latency(min), latency(max)) {
        (min, max) if min == max => min,
        (min, max) => format!("{min}–{max}"),
    }
}

/// A range of differences in ms, signed, two decimals ("-0.04 to +0.10"); "-" for nothing.
pub fn signed_range(values: &[f64]) -> String {
    match min_max(values) {
        Some((min, max)) => format!("{min:+.2} to {max:+.2}"),
        None => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lists_keep_their_gist() {
        assert_eq!(shorten("main"), "main");
        assert_eq!(shorten("a, b"), "a, b");
        assert_eq!(
            shorten("blocking-1, blocking-10, blocking-2"),
            "blocking-* (3 threads)"
        );
        assert_eq!(shorten("x-1, y-2, z-3"), "x-1, y-2, … (3 threads)");
    }

    #[test]
    fn ranges_collapse_when_equal_and_say_dash_when_empty() {
        assert_eq!(range(&[1.04, 1.01], 1), "1.0");
        assert_eq!(range(&[3.0, 12.0], 0), "3–12");
        assert_eq!(range(&[], 1), "-");
        assert_eq!(latency_range(&[0.04, 0.61]), "0.04–0.61");
        assert_eq!(latency_range(&[0.5, 2408.44]), "0.50–2408.4");
        assert_eq!(latency_range(&[]), "-");
    }
}
