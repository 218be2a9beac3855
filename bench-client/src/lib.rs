//! The bench client: drives every demo server identically and reports. The protocol it
//! follows is described in `docs/protocol.md`, the contract it relies on in
//! `docs/contract.md`.
//!
//! - [`target`]: which servers run and where they are; starting and stopping each by its
//!   own PID;
//! - [`session`]: the life of one target in a run, shared by the comparison and the sweep;
//! - [`http`]: hyper's client connections, one per request or one kept alive, for the probes;
//! - [`cpu`]: the CPU time of the client and of the server during each case;
//! - [`kernel`]: what `/proc` says of our connections: accept queues, drops, retransmits;
//! - [`probe`]: the two probes of `/ping`, closed loop and open loop, in one vocabulary;
//! - [`burst`]: N concurrent requests of one route;
//! - [`fixtures`]: the hidden blockers' slow upstream, large file and database folder;
//! - [`wire`]: the burst's own HTTP/1.1 on plain TCP, a request encoded once, answers parsed
//!   with `httparse`;
//! - [`timeline`]: every request and ping of a case on one clock;
//! - [`bench`]: the comparison, the original experiment; [`sweep`]: the concurrency sweep;
//! - [`command`]: one command of the command line, run; [`job`]: the main job, every
//!   experiment in turn; [`progress`]: the view of where a run is and when it ends;
//! - [`race`]: the `/bad` case repeated, to count whether the health check gets in, and
//!   [`arrival`]: the same with the ping sent at chosen points of the burst;
//! - [`stalls`]: what a server's own stall detector reported during each case;
//!   [`detectors`]: the ways of catching a blocked reactor, each on the same workload;
//! - [`rest`]: at rest, a lone `/ping` and the thread wake-ups behind it;
//! - [`stats`]: percentiles, summaries and verdicts, derived in one place;
//! - [`units`]: milliseconds, the unit of every figure;
//! - [`report`]: the terminal, tables, findings, README block, plots and files;
//!   [`plot`]: drawing the SVG figures;
//! - [`environment`]: the machine and build every figure is recorded with;
//! - [`work`]: a work route as asked for, alias and all;
//! - [`cli`]: the command line.

pub mod arrival;
pub mod bench;
pub mod burst;
pub mod cli;
pub mod command;
pub mod cpu;
pub mod detectors;
pub mod environment;
pub mod fixtures;
pub mod http;
pub mod job;
pub mod kernel;
pub mod plot;
pub mod probe;
pub mod progress;
pub mod race;
pub mod report;
pub mod rest;
pub mod session;
pub mod stalls;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod timeline;
pub mod units;
pub mod wire;
pub mod work;
