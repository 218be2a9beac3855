//! The measuring core: what every experiment measures with. Nothing here knows an
//! experiment (none of these modules imports `crate::experiments`).
//!
//! - [`target`]: which servers run and where they are; starting and stopping each by its
//!   own PID;
//! - [`session`]: the life of one target in a run, shared by the experiments;
//! - [`http`]: hyper's client connections, one per request or one kept alive, for the probes;
//! - [`wire`]: the burst's own HTTP/1.1 on plain TCP, a request encoded once, answers parsed
//!   with `httparse`;
//! - [`burst`]: N concurrent requests of one route;
//! - [`placed`]: a burst with a ping placed among it, on connections the client holds, read
//!   back against the server's record of events;
//! - [`probe`]: the two probes of `/ping`, closed loop and open loop, in one vocabulary;
//! - [`cpu`]: the CPU time of the client and of the server during each case;
//! - [`kernel`]: what `/proc` says of our connections: accept queues, drops, retransmits;
//! - [`fixtures`]: the hidden blockers' slow upstream, large file and database folder;
//! - [`timeline`]: every request and ping of a case on one clock;
//! - [`stalls`]: what a server's own stall detector reported during each case;
//! - [`stats`]: percentiles, summaries and verdicts, derived in one place;
//! - [`units`]: milliseconds, the unit of every figure;
//! - [`work`]: a work route as asked for, alias and all;
//! - [`environment`]: the machine and build every figure is recorded with.

pub mod burst;
pub mod case;
pub mod cpu;
pub mod environment;
pub mod fixtures;
pub mod http;
pub mod kernel;
pub mod placed;
pub mod probe;
pub mod session;
pub mod stalls;
pub mod stats;
pub mod target;
pub mod timeline;
pub mod units;
pub mod wire;
pub mod work;
