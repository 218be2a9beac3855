//! tokio-console's view of a running tokio program, read without its terminal UI: this crate
//! subscribes to the console's gRPC stream (`instrument.Instrument/WatchUpdates`, through
//! `console-api`'s client, as the UI's `src/conn.rs` does), keeps the tasks as the UI keeps
//! them, and works out the UI's warnings the way the UI does ([`warnings`]). It reports each
//! warning as a task gains it, and each poll that lasts past a threshold, which the UI shows
//! only as a task in the "running" state whose busy time grows.
//!
//! The program must be built with `RUSTFLAGS="--cfg tokio_unstable"` and run
//! console-subscriber; the subscriber sends an update every second by default
//! (`TOKIO_CONSOLE_PUBLISH_INTERVAL`), so what the probe says is at most that late.

pub mod console;
pub mod task;
pub mod warnings;

use std::time::{Duration, Instant, SystemTime};

use console_api::instrument::InstrumentRequest;
use console_api::instrument::instrument_client::InstrumentClient;
use tonic::transport::Channel;

pub use console::{Console, PollState, Report};

/// Why watching stopped.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Connects to the console server at `addr` (`HOST:PORT`), trying again for up to `within`
/// while it is not listening yet, as the UI retries.
pub async fn connect(addr: &str, within: Duration) -> Result<InstrumentClient<Channel>, Error> {
    let deadline = Instant::now() + within;
    loop {
        match InstrumentClient::connect(format!("http://{addr}")).await {
            Ok(client) => return Ok(client),
            Err(error) if Instant::now() >= deadline => return Err(error.into()),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Watches the stream of `client` until it ends, handing each report to `on` as its update
/// arrives; long polls are those of `poll_threshold` or more.
pub async fn watch(
    client: &mut InstrumentClient<Channel>,
    poll_threshold: Duration,
    mut on: impl FnMut(Report),
) -> Result<(), Error> {
    let mut updates = client
        .watch_updates(InstrumentRequest {})
        .await?
        .into_inner();
    let mut console = Console::new(poll_threshold);
    while let Some(update) = updates.message().await? {
        console
            .update(update, SystemTime::now())
            .into_iter()
            .for_each(&mut on);
    }
    Ok(())
}
