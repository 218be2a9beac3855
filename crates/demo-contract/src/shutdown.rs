//! The graceful stop of the servers served by tokio or by compio: requested once, by SIGINT or
//! SIGTERM, seen by every task and thread that serves, and bounded by [`SHUTDOWN_GRACE`].
//! Only the signal handlers and the timer are the runtime's own (`for_tokio`, `for_compio`):
//! the channel below is tokio's `watch`, which needs no tokio runtime.

use std::future::{Future, IntoFuture};
use std::io;
use std::time::Duration;

use tokio::sync::watch;

use crate::SHUTDOWN_GRACE;

/// Whether a stop was requested, as every server task and thread sees it.
#[derive(Debug, Clone)]
pub struct Shutdown {
    requested: watch::Receiver<bool>,
}

impl Shutdown {
    /// A stop not requested yet, and the call that requests it, for the task that waits for
    /// the signals.
    pub(crate) fn channel() -> (impl FnOnce() + Send + 'static, Shutdown) {
        let (tell, requested) = watch::channel(false);
        let request = move || {
            eprintln!("{}", crate::STOPPING);
            tell.send_replace(true);
        };
        (request, Shutdown { requested })
    }

    /// Completes once a stop was requested.
    pub fn requested(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut requested = self.requested.clone();
        async move {
            // An error means the signal task is gone, i.e. the runtime is shutting down.
            let _ = requested.wait_for(|&stop| stop).await;
        }
    }

    /// Runs `server` to its end, or gives up on it [`SHUTDOWN_GRACE`] after a stop was
    /// requested, timed by `sleep`, the runtime's own timer: a graceful shutdown must not wait
    /// for ever on a slow client.
    pub(crate) async fn bounded_by<F, S>(
        &self,
        server: F,
        sleep: impl FnOnce(Duration) -> S,
    ) -> io::Result<()>
    where
        F: IntoFuture<Output = io::Result<()>>,
        S: Future<Output = ()>,
    {
        let grace_over = async {
            self.requested().await;
            sleep(SHUTDOWN_GRACE).await;
            eprintln!("{}", crate::GRACE_OVER);
            Ok(())
        };
        futures_lite::future::or(server.into_future(), grace_over).await
    }
}
