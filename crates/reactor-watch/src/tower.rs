//! A tower [`Layer`] that wraps every request future of a service (feature `tower`): for axum,
//! hyper (through `hyper_util::service::TowerToHyperService`) and tonic.

use std::fmt;
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use crate::{Label, Watch, Watched};

/// Wraps each request future of the service under it with [`Watch::wrap`], under the label
/// `label_of` gives the request.
///
/// `label_of` is called in the service's `call`, once per request, on the thread that takes
/// the request. Call [`Label::new`] in it with the route's template (`"/users/{id}"`), never
/// the raw path, since every distinct label is kept for the life of the process: each thread
/// keeps the labels it has made, so from a thread's second request to a route on, this takes
/// no lock and allocates nothing.
///
/// With axum, add it with `Router::route_layer`, so that it runs after routing and
/// `MatchedPath` is in the request's extensions:
///
/// ```
/// # use std::time::Duration;
/// use axum::{Router, extract::{MatchedPath, Request}, routing::get};
/// use reactor_watch::{Config, Label, Watch, tower::WatchLayer};
///
/// let watch = Watch::start(Config::default());
/// let app: Router = Router::new().route("/", get(|| async { "hi" })).route_layer(
///     WatchLayer::new(watch, |req: &Request| {
///         Label::new(req.extensions().get::<MatchedPath>().map_or("?", MatchedPath::as_str))
///     }),
/// );
/// ```
#[derive(Clone)]
pub struct WatchLayer<F> {
    watch: Watch,
    label_of: F,
}

impl<F> WatchLayer<F> {
    /// A layer that wraps each request future in `watch` under `label_of(&request)`.
    pub fn new(watch: Watch, label_of: F) -> WatchLayer<F> {
        WatchLayer { watch, label_of }
    }
}

impl<F> fmt::Debug for WatchLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchLayer")
            .field("watch", &self.watch)
            .finish_non_exhaustive()
    }
}

impl<S, F: Clone> Layer<S> for WatchLayer<F> {
    type Service = WatchService<S, F>;

    fn layer(&self, inner: S) -> WatchService<S, F> {
        WatchService {
            inner,
            watch: self.watch.clone(),
            label_of: self.label_of.clone(),
        }
    }
}

/// The service [`WatchLayer`] makes: the inner service, its futures wrapped.
#[derive(Clone)]
pub struct WatchService<S, F> {
    inner: S,
    watch: Watch,
    label_of: F,
}

impl<S, F> fmt::Debug for WatchService<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchService")
            .field("watch", &self.watch)
            .finish_non_exhaustive()
    }
}

impl<S, F, R> Service<R> for WatchService<S, F>
where
    S: Service<R>,
    F: Fn(&R) -> Label,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Watched<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Watched<S::Future> {
        let label = (self.label_of)(&request);
        self.watch.wrap(label, self.inner.call(request))
    }
}
