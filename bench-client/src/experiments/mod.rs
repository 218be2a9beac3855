//! The experiments, one room each: its plan (what it runs, with its defaults), its run and
//! the record it keeps. Each measures with [`crate::measure`] and writes its report with
//! [`crate::report`]; the main job ([`crate::job`]) lists them.
//!
//! - [`comparison`]: the original experiment, each work route beside the health check; the
//!   connect-before, thread-matrix, CPU-bound, hidden-blocker and detector on/off runs are
//!   this experiment with other parameters;
//! - [`sweep`]: the concurrency sweep (and the scale, staircase and detector-at-scale runs);
//! - [`race`]: the `/bad` case repeated to count whether the health check gets in, with the
//!   ping's arrival controlled ([`race::arrival`]) and the variants' flips;
//! - [`detectors`]: the ways of catching a blocked reactor, each on the same workload;
//! - [`rest`]: at rest, a lone `/ping` and the thread wake-ups behind it;
//! - [`health`]: the health check under a block, the stock `/ping` beside reactor-watch's
//!   `/health`, probed as a kubelet does;
//! - [`uring`]: where io_uring differs, held answers and the order of service, with the
//!   flips that change them;
//! - [`scripts`]: the criterion benches run as experiments: the offload's price and the
//!   stall detector's price per poll.

pub mod comparison;
pub mod detectors;
pub mod health;
pub mod race;
pub mod rest;
pub mod scripts;
pub mod sweep;
pub mod uring;

/// Why an experiment's results could not be written into `out`: one wording for every
/// experiment's writer.
fn cannot_write(out: &std::path::Path) -> impl FnOnce(std::io::Error) -> String + '_ {
    move |error| format!("cannot write {}: {error}", out.display())
}
