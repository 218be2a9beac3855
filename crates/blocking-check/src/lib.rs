//! Static checks for blocking calls in async code, measured on the demo servers.
//!
//! - [`clippy`]: clippy's `disallowed_methods` with the experiment's configuration
//!   (`clippy/clippy.toml`), run as a user runs it, its warnings read from cargo's JSON.
//! - [`walk`]: a context-aware check on `syn`'s syntax trees: a blocking call counts only where
//!   it runs on the reactor (an `async fn`, an async block, and the workspace functions they
//!   call), not in the closure an offload runs on another thread.
//! - [`measure`] judges every work route of every server with both, [`report`] writes the
//!   table (`results/static/`).

pub mod clippy;
pub mod found;
pub mod list;
pub mod measure;
pub mod report;
pub mod routes;
pub mod source;
pub mod walk;
