//! The bench client: drives every demo server identically (DESIGN.md §3) and reports.
//!
//! - [`target`]: finding, starting and stopping the servers;
//! - [`http`]: hyper's client connections, one per request or one kept alive;
//! - [`probe`]: the closed-loop pinger of the original; [`open_loop`]: the open-loop one;
//! - [`burst`]: N concurrent requests of one route;
//! - [`bench`]: the protocol that puts them together, one case at a time;
//! - [`stats`]: percentiles and verdicts; [`report`]: the terminal, Markdown and JSON;
//! - [`sweep`]: the concurrency sweep; [`plot`]: its SVG plots and the latency CDFs;
//! - [`environment`]: the machine and build every figure is recorded with.

pub mod bench;
pub mod burst;
pub mod cli;
pub mod environment;
pub mod http;
pub mod open_loop;
pub mod plot;
pub mod probe;
pub mod report;
pub mod stats;
pub mod sweep;
pub mod target;
