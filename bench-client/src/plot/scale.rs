//! The axes' arithmetic: log ranges with "nice" bounds, tick labels, the clamping of values
//! a log axis cannot show, and the empirical CDF's steps.

use std::ops::Range;

/// The value that zero and negative values are clamped to on a log axis: 0.01, i.e. 10 µs
/// when the unit is milliseconds, well below anything these benchmarks resolve.
pub const LOG_FLOOR: f64 = 0.01;

/// At most this many steps are drawn per CDF line. 1 000 steps resolve the fraction to 0.001,
/// finer than the plot's pixels, and keep the SVG small however many samples there are.
const MAX_CDF_STEPS: usize = 1000;

/// The step line of the empirical CDF of `samples`: from (smallest, 0) up to (largest, 1).
///
/// Each sample x at rank r (1-based, in sorted order) of n raises the curve from (r-1)/n to
/// r/n at x. With more than [`MAX_CDF_STEPS`] samples, only every (n / MAX_CDF_STEPS)-th rank
/// is kept, always including the largest sample: the curve is then exact at those ranks and
/// off by less than 1/MAX_CDF_STEPS in between. Values at or below zero are clamped to
/// [`LOG_FLOOR`]; non-finite ones are skipped and do not count in n.
pub fn cdf_points(samples: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .map(clamp_log)
        .collect();
    sorted.sort_by(f64::total_cmp);

    let n = sorted.len();
    let steps = n.min(MAX_CDF_STEPS);
    let mut points = Vec::with_capacity(2 * steps);
    let mut below = 0.0;
    for k in 1..=steps {
        // The rank of the k-th of `steps` evenly spaced quantiles, rounded up: `n` for k = steps.
        let rank = (k * n).div_ceil(steps);
        let x = sorted[rank - 1];
        let fraction = rank as f64 / n as f64;
        points.push((x, below));
        points.push((x, fraction));
        below = fraction;
    }
    points
}

/// A log-axis range for `values`: padded, then widened to bounds of 1, 2 or 5 times a power
/// of ten, and to at least one power of ten inside, because plotters labels a log axis only at
/// powers of ten (and at their multiples when a decade is all there is). Non-finite values are
/// ignored and values at or below zero count as [`LOG_FLOOR`]; with nothing left, the range
/// is that of the values 1 and 10.
///
/// Examples: 1..10 000 becomes 0.5..20 000; a single 20 becomes 10..50.
pub fn log_range(values: impl IntoIterator<Item = f64>) -> Range<f64> {
    // Room around the data, as a factor: keeps markers off the frame.
    const PADDING: f64 = 1.2;

    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .map(clamp_log)
        .fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
        .unwrap_or((1.0, 10.0));

    let start = nice_below(lo / PADDING);
    let end = nice_above(hi * PADDING);
    let first_decade = 10f64.powf(start.log10().ceil());
    if first_decade > end * (1.0 + 1e-9) {
        // No power of ten between `start` and `end`: extend down to the one below.
        return 10f64.powf(start.log10().floor())..end;
    }
    start..end
}

/// The largest 1, 2 or 5 times a power of ten that is at most `v` (`v` > 0).
fn nice_below(v: f64) -> f64 {
    let decade = 10f64.powf(v.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&nice| nice <= v * (1.0 + 1e-9))
        .unwrap_or(decade)
}

/// The smallest 1, 2 or 5 times a power of ten that is at least `v` (`v` > 0).
fn nice_above(v: f64) -> f64 {
    let decade = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&nice| nice >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * decade)
}

/// A tick label, rounded to three significant digits but never past the decimal point, without
/// trailing zeros ("0.05", "2.5", "20", "10000"), because plotters computes log ticks by multiplication and would otherwise print
/// 0.30000000000000004.
pub(super) fn format_tick(v: &f64) -> String {
    let v = *v;
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A tick label on a log axis: only at 1, 2 and 5 times a power of ten, where plotters puts
/// ticks at every multiple and their labels collide near the end of a decade.
pub(super) fn log_tick(v: &f64) -> String {
    let mantissa = *v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (mantissa - m).abs() < 1e-6)
    {
        format_tick(v)
    } else {
        String::new()
    }
}

/// Clamps a value for a log axis: see [`LOG_FLOOR`].
fn clamp_log(v: f64) -> f64 {
    v.max(LOG_FLOOR)
}

/// The points of a series made drawable on two log axes: non-finite coordinates dropped, the
/// rest clamped.
pub(super) fn log_points(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|&(x, y)| (clamp_log(x), clamp_log(y)))
        .collect()
}

/// Points sorted by x, so that the line joins them from left to right whatever order the
/// sweep recorded them in.
pub(super) fn sorted_by_x(mut points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_range_pads_to_nice_bounds() {
        assert_eq!(log_range([1.0, 10_000.0]), 0.5..20_000.0);
        assert_eq!(log_range([0.1, 100_000.0]), 0.05..200_000.0);
        assert_eq!(log_range([20.0, 800.0]), 10.0..1000.0);
    }

    #[test]
    fn log_range_always_contains_a_power_of_ten() {
        // 25..35 would pad to 20..50, which has no power of ten: extended down to 10.
        assert_eq!(log_range([25.0, 35.0]), 10.0..50.0);
        assert_eq!(log_range([20.0]), 10.0..50.0);
        assert_eq!(log_range([300.0]), 100.0..500.0);
    }

    #[test]
    fn log_range_clamps_and_defaults() {
        assert_eq!(log_range([]), 0.5..20.0);
        assert_eq!(log_range([f64::NAN, f64::INFINITY]), 0.5..20.0);
        let range = log_range([0.0, -3.0, 5.0]);
        assert!(range.start > 0.0 && range.start <= LOG_FLOOR, "{range:?}");
    }

    #[test]
    fn cdf_points_is_a_staircase_from_0_to_1() {
        let points = cdf_points(&[3.0, 1.0, 2.0]);
        let third = 1.0 / 3.0;
        assert_eq!(
            points,
            vec![
                (1.0, 0.0),
                (1.0, third),
                (2.0, third),
                (2.0, 2.0 * third),
                (3.0, 2.0 * third),
                (3.0, 1.0)
            ]
        );
    }

    #[test]
    fn cdf_points_thins_large_inputs_but_keeps_the_maximum() {
        let samples: Vec<f64> = (1..=100_000).map(f64::from).collect();
        let points = cdf_points(&samples);
        assert_eq!(points.len(), 2 * MAX_CDF_STEPS);
        assert_eq!(points.last(), Some(&(100_000.0, 1.0)));
        assert_eq!(points[1], (100.0, 0.001));
    }

    #[test]
    fn cdf_points_clamps_zero_and_skips_nan() {
        assert_eq!(
            cdf_points(&[0.0, f64::NAN, -1.0]),
            vec![
                (LOG_FLOOR, 0.0),
                (LOG_FLOOR, 0.5),
                (LOG_FLOOR, 0.5),
                (LOG_FLOOR, 1.0)
            ]
        );
        assert!(cdf_points(&[]).is_empty());
    }

    #[test]
    fn log_ticks_label_one_two_five_only() {
        let labelled: Vec<String> = [10.0, 20.0, 30.0, 50.0, 90.0, 100.0, 200.0, 0.5, 0.7]
            .iter()
            .map(log_tick)
            .collect();
        assert_eq!(
            labelled,
            ["10", "20", "", "50", "", "100", "200", "0.5", ""]
        );
    }

    #[test]
    fn tick_labels_are_short() {
        let cases = [
            (0.30000000000000004, "0.3"),
            (0.05, "0.05"),
            (1.0, "1"),
            (2.5, "2.5"),
            (20.0, "20"),
            (100_000.0, "100000"),
            (0.0, "0"),
        ];
        for (value, text) in cases {
            assert_eq!(format_tick(&value), text);
        }
    }
}
