//! `--connect before`: every connection of the burst is accepted by the server before the
//! first request is written. A stub server counts its accepts and notes the count when the
//! first request arrives.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use burst_meter::burst::{self, Connect};
use burst_meter::http::Endpoint;

/// Connections accepted so far, and how many there were when the first request came.
#[derive(Debug, Default)]
struct Accepts {
    total: AtomicUsize,
    at_first_request: AtomicUsize,
}

/// A server on loopback that counts accepts, takes a millisecond over each, and answers every
/// request at once.
async fn counting_stub(accepts: Arc<Accepts>) -> Endpoint {
    common::loopback_stub(move |stream| {
        accepts.total.fetch_add(1, Ordering::SeqCst);
        let accepts = accepts.clone();
        async move {
            // A slow accept loop: requests written right after connecting would reach it
            // before it has accepted every connection.
            tokio::time::sleep(Duration::from_millis(1)).await;
            common::answer_each(stream, move || {
                let seen = accepts.total.load(Ordering::SeqCst);
                let _ = accepts.at_first_request.compare_exchange(
                    0,
                    seen,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
                std::future::ready(())
            });
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_connection_is_accepted_before_the_first_request() {
    // More than CONNECTS_IN_FLIGHT, so that the connects come in several waves.
    const N: usize = 300;
    let accepts = Arc::new(Accepts::default());
    let endpoint = counting_stub(accepts.clone()).await;
    let burst = burst::fire(&endpoint, "/x", N, Duration::from_secs(20), Connect::Before).await;
    assert_eq!(burst.ok(), N, "{:?}", burst.errors());
    assert_eq!(
        accepts.total.load(Ordering::SeqCst),
        N,
        "one connection per request"
    );
    assert_eq!(
        accepts.at_first_request.load(Ordering::SeqCst),
        N,
        "the first request came before every connection was accepted"
    );
}
