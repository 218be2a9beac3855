//! The unit every figure is kept in: milliseconds, as `f64`. Its own module because both
//! the probes, which time each ping, and the statistics, which summarise the probes'
//! records, need it: in either of them, the other would have to import it back.

use std::time::Duration;

/// A duration in milliseconds, the unit of every figure in the reports.
pub fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// A duration in whole milliseconds, as the progress view's bar counts them.
pub fn whole_millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
