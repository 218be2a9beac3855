use super::*;

fn closed(latencies_ms: Vec<f64>, errors: Vec<String>) -> ProbeRecord {
    ProbeRecord::of(
        latencies_ms
            .into_iter()
            .map(Ok)
            .chain(errors.into_iter().map(Err)),
    )
}

#[test]
fn evenly_spaced_keeps_the_ends_and_spreads_the_rest() {
    let sorted: Vec<f64> = (0..=100).map(f64::from).collect();
    assert_eq!(evenly_spaced(&sorted, 5), [0.0, 25.0, 50.0, 75.0, 100.0]);
    assert_eq!(
        evenly_spaced(&sorted[..3], 5),
        [0.0, 1.0, 2.0],
        "fewer: all"
    );
    assert_eq!(evenly_spaced(&sorted, 1), [100.0]);
    assert!(evenly_spaced(&sorted, 0).is_empty());
}

#[test]
fn percentile_matches_the_original_on_known_inputs() {
    let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
    // p50: round(0.5 * 9) = round(4.5) = 4 (half to even) -> sorted[4] = 5
    assert_eq!(percentile(&sorted, 50.0), Some(5.0));
    // p95: round(0.95 * 9) = round(8.55) = 9 -> 10
    assert_eq!(percentile(&sorted, 95.0), Some(10.0));
    assert_eq!(percentile(&sorted, 0.0), Some(1.0));
    assert_eq!(percentile(&sorted, 100.0), Some(10.0));
    // Three samples: p50 -> round(1.0) = 1 -> the middle one.
    assert_eq!(percentile(&[1.0, 2.0, 30.0], 50.0), Some(2.0));
    // Two samples: round(0.5) = 0 (half to even), where round-half-up would say 1.
    assert_eq!(percentile(&[1.0, 2.0], 50.0), Some(1.0));
}

#[test]
fn percentile_of_nothing_and_of_one() {
    assert_eq!(percentile(&[], 50.0), None);
    assert_eq!(percentile(&[7.5], 50.0), Some(7.5));
    assert_eq!(percentile(&[7.5], 95.0), Some(7.5));
}

#[test]
fn ping_stats_summarise_unsorted_samples() {
    let stats = PingStats::from_record(closed(vec![3.0, 1.0, 2.0], vec!["timeout".into()]));
    assert_eq!(stats.samples, 3);
    assert_eq!(stats.errors, 1);
    assert_eq!(stats.mean_ms, Some(2.0));
    assert_eq!(stats.p50_ms, Some(2.0));
    assert_eq!(stats.p95_ms, Some(3.0));
    assert_eq!(stats.max_ms, Some(3.0));
    assert_eq!(
        stats.raw_ms,
        vec![3.0, 1.0, 2.0],
        "raw samples keep their order"
    );
}

#[test]
fn ping_stats_of_no_samples_are_empty_not_zero() {
    let stats = PingStats::from_record(ProbeRecord::default());
    assert_eq!(
        (stats.samples, stats.mean_ms, stats.p50_ms, stats.max_ms),
        (0, None, None, None)
    );
    assert_eq!(stats.percentile_ms(99.0), None);
}

#[test]
fn any_ping_percentile_is_the_answered_ones_nearest_rank() {
    let latencies: Vec<f64> = (1..=200).rev().map(|ms| f64::from(ms) / 7.0).collect();
    let stats = PingStats::from_record(closed(latencies, vec!["reset".into()]));
    // Sorted, the k-th value (from 0) is (k + 1) / 7; rank round(p / 100 × 199), by hand:
    // p50 → round(99.5) = 100 (half to even), p90 → 179, p99 → round(197.01) = 197.
    assert_eq!(stats.percentile_ms(50.0), Some(101.0 / 7.0));
    assert_eq!(stats.percentile_ms(90.0), Some(180.0 / 7.0));
    assert_eq!(stats.percentile_ms(99.0), Some(198.0 / 7.0));
    assert_eq!(
        stats.p50_ms,
        Some(101.0 / 7.0),
        "the p50 kept is the same rank"
    );
}

#[test]
fn open_loop_stats_take_the_nearest_rank_as_every_figure_does() {
    let answered = (1..=100).map(|ms| Ok(f64::from(ms)));
    let mut record = ProbeRecord::of(answered.chain([Err("reset".to_owned())]));
    for (ping, lag_ms) in record.pings.iter_mut().zip([0.1, 0.4, 0.2]) {
        ping.send_lag_ms = Some(lag_ms);
    }
    record.cpu_ms = Some(3.5);
    record.realtime = true;
    let stats = OpenLoopStats::from_record(record);
    assert_eq!(
        (stats.scheduled, stats.answered, stats.errors),
        (101, 100, 1)
    );
    // Ranks round(p/100 × 99), half to even: 50 (49.5), 89 and 98, from 0.
    assert_eq!(stats.p50_ms, Some(51.0));
    assert_eq!(stats.p90_ms, Some(90.0));
    assert_eq!(stats.p99_ms, Some(99.0));
    assert_eq!(stats.max_ms, Some(100.0));
    assert_eq!(stats.max_send_lag_ms, Some(0.4));
    assert_eq!(stats.probe_cpu_ms, Some(3.5));
    let empty = OpenLoopStats::from_record(ProbeRecord::default());
    assert_eq!((empty.p50_ms, empty.max_ms), (None, None));
}

#[test]
fn request_times_are_the_percentiles_of_the_answered() {
    let times = RequestTimes::from_ms(&[300.0, 100.0, 200.0, 100.0]);
    assert_eq!(times.answered, 4);
    // p50: round(0.5 * 3) = round(1.5) = 2 (half to even) -> the third of 100, 100, 200, 300.
    assert_eq!(times.p50_ms, Some(200.0));
    assert_eq!((times.p99_ms, times.max_ms), (Some(300.0), Some(300.0)));
    assert_eq!(RequestTimes::from_ms(&[]).max_ms, None);
}

#[test]
fn verdict_tells_the_original_cases_apart() {
    let ideals = Ideals::new(10, 500, 1);
    assert_eq!(ideals.serialised_ms, 5000.0);
    assert_eq!(ideals.verdict(5012.0, 0), Verdict::Serialises);
    assert_eq!(ideals.verdict(505.0, 0), Verdict::Concurrent);
    // The line between them is the geometric mean, about 1581 ms.
    assert_eq!(ideals.verdict(1500.0, 0), Verdict::Concurrent);
    assert_eq!(ideals.verdict(1700.0, 0), Verdict::Serialises);
    assert_eq!(ideals.times_ideal(5000.0), Some(10.0));
}

#[test]
fn verdict_scales_the_serialised_ideal_by_threads() {
    let ideals = Ideals::new(10, 500, 4);
    assert_eq!(
        ideals.serialised_ms, 1500.0,
        "three rounds: 4 + 4 + 2 requests"
    );
    assert_eq!(ideals.verdict(1500.0, 0), Verdict::Serialises);
    assert_eq!(Ideals::new(10, 500, 2).serialised_ms, 2500.0);
    assert_eq!(ideals.verdict(600.0, 0), Verdict::Concurrent);
}

#[test]
fn a_failed_request_makes_the_case_failed_whatever_its_wall() {
    let ideals = Ideals::new(10, 500, 1);
    assert_eq!(ideals.verdict(5012.0, 1), Verdict::Failed);
    assert_eq!(ideals.verdict(2.8, 10), Verdict::Failed);
    assert_eq!(Verdict::Failed.to_string(), "failed");
}

#[test]
fn cpu_ideals_respect_the_cores() {
    let pool = Ideals::cpu(10, 500, 1, 2, CpuPlace::CorePool);
    assert_eq!(
        (pool.best_ms, pool.concurrent_ms, pool.serialised_ms),
        (2500.0, 2500.0, 5000.0)
    );
    assert_eq!(
        Ideals::cpu(9, 500, 1, 2, CpuPlace::CorePool).best_ms,
        2500.0
    );
    assert_eq!(
        Ideals::cpu(9, 500, 1, 2, CpuPlace::ManyThreads).best_ms,
        2250.0
    );
    let reactor = Ideals::cpu(10, 500, 1, 2, CpuPlace::Reactor);
    assert_eq!(reactor.best_ms, 5000.0);
    assert_eq!(reactor.verdict(5010.0, 0), Verdict::Serialises);
    assert_eq!(pool.verdict(2510.0, 0), Verdict::Concurrent);
    assert_eq!(
        Ideals::cpu(10, 500, 4, 2, CpuPlace::Reactor).best_ms,
        2500.0
    );
    assert_eq!(pool.times_ideal(2750.0), Some(1.1));
}

#[test]
fn verdict_cannot_call_a_single_request_serialised() {
    let ideals = Ideals::new(1, 500, 1);
    assert_eq!(ideals.verdict(10_000.0, 0), Verdict::Concurrent);
    assert_eq!(Ideals::new(10, 0, 1).times_ideal(3.0), None);
}

#[test]
fn answers_less_than_half_a_sleep_apart_are_one_group() {
    assert_eq!(answer_groups(&[100.0, 200.0, 300.0], 100), 3);
    assert_eq!(answer_groups(&[300.0, 301.0, 302.0], 100), 1);
    assert_eq!(answer_groups(&[100.0, 300.0, 301.0], 100), 2);
    assert_eq!(answer_groups(&[], 100), 0);
}
