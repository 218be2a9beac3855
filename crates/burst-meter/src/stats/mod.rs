//! Statistics: every figure derived from the records in one place, with one percentile
//! method (the original bench's nearest rank, so that numbers compare), and the verdict.

use serde::{Deserialize, Serialize};

use crate::probe::ProbeRecord;

/// The original bench's nearest-rank percentile: `sorted[min(n-1, max(0, round(p/100*(n-1))))]`,
/// with Python's `round` (half to even). `None` for no samples.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let rank = (p / 100.0 * last as f64).round_ties_even().max(0.0) as usize;
    Some(sorted[rank.min(last)])
}

/// At most `k` of `sorted`, evenly spaced by rank from the first to the last: all of them if
/// there are no more than `k`. Drawn as a CDF, they give the curve of the whole.
pub fn evenly_spaced(sorted: &[f64], k: usize) -> Vec<f64> {
    if sorted.len() <= k {
        return sorted.to_vec();
    }
    if k < 2 {
        return sorted.last().into_iter().copied().take(k).collect();
    }
    let last = (sorted.len() - 1) as f64;
    (0..k)
        .map(|i| sorted[(i as f64 * last / (k - 1) as f64).round() as usize])
        .collect()
}

/// The smallest, the median ([`percentile`] 50) and the largest of `values`; `None` if there
/// are none.
pub fn spread(mut values: Vec<f64>) -> Option<[f64; 3]> {
    values.sort_by(f64::total_cmp);
    let median = percentile(&values, 50.0)?;
    Some([values[0], median, values[values.len() - 1]])
}

/// How many groups the answers at `times_ms` (sorted) came in, a gap of over half `sleep_ms`
/// starting one: as many groups as answers is one answer per sleep, one group is all at once.
pub fn answer_groups(times_ms: &[f64], sleep_ms: u64) -> usize {
    let gap = sleep_ms as f64 / 2.0;
    let gaps = times_ms.windows(2).filter(|pair| pair[1] - pair[0] > gap);
    usize::from(!times_ms.is_empty()) + gaps.count()
}

/// `items` in groups of equal `key`, each group in the order of its first item.
pub fn grouped<'a, T, K: PartialEq>(
    items: &'a [T],
    key: impl Fn(&'a T) -> K,
) -> Vec<(K, Vec<&'a T>)> {
    let mut groups: Vec<(K, Vec<&'a T>)> = Vec::new();
    for item in items {
        let k = key(item);
        match groups.iter_mut().find(|(known, _)| *known == k) {
            Some((_, group)) => group.push(item),
            None => groups.push((k, vec![item])),
        }
    }
    groups
}

/// Each distinct value of `values` with how often it came, in the order first seen.
pub fn counted<K: PartialEq>(values: impl IntoIterator<Item = K>) -> Vec<(K, usize)> {
    let mut counts: Vec<(K, usize)> = Vec::new();
    for value in values {
        match counts.iter_mut().find(|(known, _)| *known == value) {
            Some((_, count)) => *count += 1,
            None => counts.push((value, 1)),
        }
    }
    counts
}

/// When the requests of one burst were answered, from its first send: the nearest-rank
/// percentiles of the answered requests' completion times (the max is the wall time when
/// every request was answered).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestTimes {
    pub answered: usize,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
}

impl RequestTimes {
    pub fn from_ms(completions_ms: &[f64]) -> RequestTimes {
        let mut sorted = completions_ms.to_vec();
        sorted.sort_by(f64::total_cmp);
        RequestTimes {
            answered: sorted.len(),
            p50_ms: percentile(&sorted, 50.0),
            p90_ms: percentile(&sorted, 90.0),
            p99_ms: percentile(&sorted, 99.0),
            max_ms: sorted.last().copied(),
        }
    }
}

/// A hidden blocker's call, as the server timed it in each answer ([`demo_contract::IoWork`]):
/// the median wall time of the call, and the median CPU time its thread spent during it.
///
/// Interpretation: CPU near the wall time means the call worked (SQLite computing, the kernel
/// copying the file); CPU near zero means the thread only waited (for the upstream, for the
/// disk). Either way, on the reactor it is the same stall: the thread is not polling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallCost {
    /// Median wall time of one call, ms.
    pub call_ms: f64,
    /// Median CPU time of the calling thread during a blocking call, ms; `None` for awaited
    /// calls, which the server does not time on one thread.
    pub cpu_ms: Option<f64>,
    /// How many calls were in progress at once, on average over the burst: the calls' wall
    /// times added up, over the burst's wall time. 1 means one after another; N, all N side
    /// by side (however slowly each went, sharing the cores).
    pub overlap: f64,
}

/// Calls that overlapped less than this on average ran one after another: the verdict of a
/// hidden blocker's burst ([`CallCost::verdict`]).
pub const OVERLAP_LINE: f64 = 1.5;

impl CallCost {
    /// The medians over the answers that carry a call, and their overlap over a burst of
    /// `wall_ms`; `None` if no answer carries a call.
    pub fn of(answers: &[demo_contract::IoWork], wall_ms: f64) -> Option<CallCost> {
        let median = |values: Vec<f64>| spread(values).map(|[_, median, _]| median);
        let call_ms = median(answers.iter().map(|answer| answer.call_ms).collect())?;
        let cpu_ms = median(answers.iter().filter_map(|answer| answer.cpu_ms).collect());
        let total: f64 = answers.iter().map(|answer| answer.call_ms).sum();
        let overlap = if wall_ms > 0.0 { total / wall_ms } else { 0.0 };
        Some(CallCost {
            call_ms,
            cpu_ms,
            overlap,
        })
    }

    /// A hidden blocker's verdict, read from the calls the server timed rather than from
    /// ideals: their work (a query, a copy) takes longer per call when calls share the cores,
    /// so the wall time alone cannot tell "side by side on two cores" from "one after
    /// another". Serialised when the calls overlapped less than [`OVERLAP_LINE`] on average.
    pub fn verdict(&self, failed_requests: usize) -> Verdict {
        if failed_requests > 0 {
            Verdict::Failed
        } else if self.overlap < OVERLAP_LINE {
            Verdict::Serialises
        } else {
            Verdict::Concurrent
        }
    }
}

/// What the closed-loop pinger saw during one case: the original bench's statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PingStats {
    /// Answered pings (`answered` in a `rest.json` written before at rest used these
    /// statistics, which counted no errors).
    #[serde(alias = "answered")]
    pub samples: usize,
    #[serde(default)]
    pub errors: usize,
    pub mean_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Every latency, in the order sent (none in results recorded without them).
    #[serde(default)]
    pub raw_ms: Vec<f64>,
    /// Why the failed pings failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_reasons: Vec<String>,
}

impl PingStats {
    pub fn from_record(record: ProbeRecord) -> PingStats {
        let (raw_ms, error_reasons) = (record.latencies_ms(), record.errors());
        let mut sorted = raw_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let mean_ms =
            (!sorted.is_empty()).then(|| sorted.iter().sum::<f64>() / sorted.len() as f64);
        PingStats {
            samples: sorted.len(),
            errors: error_reasons.len(),
            mean_ms,
            p50_ms: percentile(&sorted, 50.0),
            p95_ms: percentile(&sorted, 95.0),
            max_ms: sorted.last().copied(),
            raw_ms,
            error_reasons,
        }
    }

    /// The nearest-rank percentile `p` of the answered pings' latencies, from every one of
    /// them: for a percentile beyond the three kept (at rest's p90 and p99). `None` for no
    /// samples, or none recorded.
    pub fn percentile_ms(&self, p: f64) -> Option<f64> {
        let mut sorted = self.raw_ms.clone();
        sorted.sort_by(f64::total_cmp);
        percentile(&sorted, p)
    }
}

/// What the open-loop probe saw during one case: its percentiles are taken as every other
/// figure's are ([`percentile`], nearest rank over every answered ping).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopStats {
    /// Pings the schedule called for.
    pub scheduled: usize,
    pub answered: usize,
    pub errors: usize,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// The latest any ping left after its scheduled time: the probe's own drift.
    pub max_send_lag_ms: Option<f64>,
    /// The 99th percentile (nearest rank) of how late the pings left: under a tenth of a
    /// millisecond, the open loop's figures are the server's, not the client's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_send_lag_ms: Option<f64>,
    /// How late each ping left after its scheduled time, in schedule order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub send_lag_ms: Vec<f64>,
    /// What keeping the schedule cost: the CPU time of the probe's clock and ping threads,
    /// in ms, sleeping, spinning and sending included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_cpu_ms: Option<f64>,
    /// Whether those threads ran at real-time priority (`None` in results from before it
    /// was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_realtime: Option<bool>,
    /// Every latency from its scheduled send time, in schedule order.
    pub raw_ms: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_reasons: Vec<String>,
}

impl OpenLoopStats {
    pub fn from_record(record: ProbeRecord) -> OpenLoopStats {
        let (latencies_ms, errors) = (record.latencies_ms(), record.errors());
        let send_lag_ms = record.send_lags_ms();
        let mut sorted = latencies_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let max_ms = sorted.last().copied();
        OpenLoopStats {
            scheduled: record.sent(),
            answered: latencies_ms.len(),
            errors: errors.len(),
            p50_ms: percentile(&sorted, 50.0),
            p90_ms: percentile(&sorted, 90.0),
            p99_ms: percentile(&sorted, 99.0),
            max_ms,
            max_send_lag_ms: send_lag_ms.iter().copied().reduce(f64::max),
            p99_send_lag_ms: {
                let mut lags = send_lag_ms.clone();
                lags.sort_by(f64::total_cmp);
                percentile(&lags, 99.0)
            },
            send_lag_ms,
            probe_cpu_ms: record.cpu_ms,
            probe_realtime: Some(record.realtime),
            raw_ms: latencies_ms,
            error_reasons: errors,
        }
    }
}

/// What a route does with N requests at once, the one word every experiment uses: the
/// comparison judges a burst against its two ideals (serialises or concurrent, or failed);
/// the probe, a route of a server it does not know, may also find it bounded by a pool, or
/// say it cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// One request at a time: each waits for the one before.
    #[serde(alias = "serialised")]
    Serialises,
    /// About K at a time, 1 < K < N: a pool or the cores.
    Bounded,
    /// All N side by side.
    Concurrent,
    /// The figures cannot tell, and say what would.
    Inconclusive,
    /// Some requests failed, so the wall time says neither.
    Failed,
}

impl Verdict {
    /// What a burst's route "was", for a sentence: serialised, bounded, concurrent,
    /// inconclusive, failed.
    pub fn was(self) -> &'static str {
        match self {
            Verdict::Serialises => "serialised",
            Verdict::Bounded => "bounded",
            Verdict::Concurrent => "concurrent",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Failed => "failed",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Serialises => "serialises",
            Verdict::Bounded => "bounded",
            Verdict::Concurrent => "concurrent",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Failed => "failed",
        })
    }
}

/// The ideals a burst is judged against: the two its verdict chooses between, and the best
/// its route can do, which `× ideal` divides by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ideals {
    /// Sleeps: every request side by side, one sleep. CPU work: every core busy to the end,
    /// N × work / cores.
    pub concurrent_ms: f64,
    /// Sleeps: each reactor thread working through its share one after another, rounded up
    /// to whole requests, ⌈N / threads⌉ × sleep (10 requests on 4 threads take three sleeps,
    /// not two and a half). CPU work: one core doing it all, N × work.
    pub serialised_ms: f64,
    /// The fastest this route can finish the burst on this machine.
    pub best_ms: f64,
}

/// Where a CPU route's work runs, which bounds how fast a burst of it can finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuPlace {
    /// On the reactor threads, in the handler (`/bad-cpu`, `/ok-cpu-yield`): at best every
    /// reactor thread on a core of its own, N × work / min(threads, cores).
    Reactor,
    /// On a pool of many threads (`/ok-cpu-blocking`) sharing the cores: N × work / cores.
    ManyThreads,
    /// On a pool of one thread per core (`/ok-cpu-pool`): whole rounds of `cores` requests,
    /// ⌈N / cores⌉ × work.
    CorePool,
}

impl Ideals {
    /// The ideals of `n` sleeps of `sleep_ms` on `threads` reactor threads.
    pub fn new(n: usize, sleep_ms: u64, threads: usize) -> Ideals {
        let sleep = sleep_ms as f64;
        let rounds = n.div_ceil(threads.max(1)).max(1) as f64;
        Ideals {
            concurrent_ms: sleep,
            serialised_ms: sleep * rounds,
            best_ms: sleep,
        }
    }

    /// The ideals of `n` requests of `work_ms` of CPU each, run at `place`, with `threads`
    /// reactor threads on `cores` cores: offloading CPU work does not make it cheaper, the
    /// cores are the limit.
    pub fn cpu(n: usize, work_ms: u64, threads: usize, cores: usize, place: CpuPlace) -> Ideals {
        let (n_f, work, cores) = (n as f64, work_ms as f64, cores.max(1));
        let best_ms = match place {
            CpuPlace::Reactor => n_f * work / threads.clamp(1, cores) as f64,
            CpuPlace::ManyThreads => n_f * work / cores as f64,
            CpuPlace::CorePool => n.div_ceil(cores) as f64 * work,
        };
        Ideals {
            concurrent_ms: n_f * work / cores as f64,
            serialised_ms: n_f * work,
            best_ms,
        }
    }

    /// Failed if any of the burst's requests failed: a request that errs early shortens the
    /// wall time, one that times out lengthens it. Otherwise serialised when the wall time
    /// is nearer (on a log scale: the geometric mean is the line) to the serialised ideal
    /// than to one sleep. When the two ideals coincide (n no larger than the threads),
    /// nothing can be told apart: concurrent.
    pub fn verdict(&self, wall_ms: f64, failed_requests: usize) -> Verdict {
        let line = (self.concurrent_ms * self.serialised_ms).sqrt();
        if failed_requests > 0 {
            Verdict::Failed
        } else if self.serialised_ms > self.concurrent_ms && wall_ms > line {
            Verdict::Serialises
        } else {
            Verdict::Concurrent
        }
    }

    /// The wall time against the best the route can do: 1.0 is that ideal (for sleeps, one
    /// sleep).
    pub fn times_ideal(&self, wall_ms: f64) -> Option<f64> {
        (self.best_ms > 0.0).then(|| wall_ms / self.best_ms)
    }
}

#[cfg(test)]
mod tests;
