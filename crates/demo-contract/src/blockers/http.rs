//! The slow upstream (`--upstream HOST:PORT`): the blocking call ([`ureq`]), hyper's async
//! HTTP/1 client over the stack's own sockets, and an async client of the stack's own.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty};

use super::{io_work, timed};
use crate::{ApiError, IoWork, Route, Stack, Work};

/// The blocking HTTP call, as the routes' `how` names it.
pub const BLOCKING_HTTP: &str = "ureq::Agent::get(..).call()";

/// How long the blocking client waits for the upstream's whole answer: longer than the
/// largest `?ms=`.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(15);

/// The slow upstream (`--upstream`): `GET /delay?ms=N` answers after N ms.
#[derive(Debug, Clone, Copy)]
pub struct Upstream {
    pub(super) addr: SocketAddr,
}

impl Upstream {
    /// The request's path and query.
    fn path(&self, delay: Duration) -> String {
        format!("/delay?ms={}", delay.as_millis())
    }

    fn failed(&self, error: impl std::fmt::Display) -> ApiError {
        ApiError::bad_gateway(format!("upstream {}: {error}", self.addr))
    }

    fn answered(
        &self,
        work: Work,
        status: u16,
        wall: Duration,
        cpu: Option<Duration>,
    ) -> Result<IoWork, ApiError> {
        if status != 200 {
            return Err(self.failed(format!("answered {status}")));
        }
        let detail = format!("upstream answered {status} after {} ms", work.slept_ms);
        Ok(io_work(work, wall, cpu, detail))
    }

    /// Asks the upstream to answer after `delay` with a blocking client, and waits for the
    /// whole answer on this thread.
    pub fn get_blocking(
        self,
        stack: &Stack,
        route: Route,
        delay: Duration,
    ) -> Result<IoWork, ApiError> {
        static AGENT: OnceLock<ureq::Agent> = OnceLock::new();
        let agent = AGENT.get_or_init(|| {
            ureq::Agent::config_builder()
                .timeout_global(Some(UPSTREAM_TIMEOUT))
                .http_status_as_error(false)
                .build()
                .new_agent()
        });
        let work = stack.work_here(route, delay);
        let url = format!("http://{}{}", self.addr, self.path(delay));
        let (answer, wall, cpu) = timed(|| {
            let mut response = agent.get(&url).call()?;
            response.body_mut().read_to_vec()?;
            Ok::<_, ureq::Error>(response.status().as_u16())
        });
        let status = answer.map_err(|error| self.failed(error))?;
        self.answered(work, status, wall, Some(cpu))
    }

    /// The same request through hyper's async HTTP/1 client, over the connection `connect`
    /// opens with the stack's own sockets (e.g. `tokio::net::TcpStream::connect` in
    /// `hyper_util::rt::TokioIo`). The connection's task is polled beside the request in
    /// this one future, so no executor is needed.
    pub async fn get_over<C, F, I>(
        self,
        stack: &Stack,
        route: Route,
        delay: Duration,
        connect: C,
    ) -> Result<IoWork, ApiError>
    where
        C: FnOnce(SocketAddr) -> F,
        F: Future<Output = io::Result<I>>,
        I: hyper::rt::Read + hyper::rt::Write + Unpin,
    {
        let work = stack.work_here(route, delay);
        let start = Instant::now();
        let io = connect(self.addr)
            .await
            .map_err(|error| self.failed(error))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|error| self.failed(error))?;
        let request = hyper::Request::get(self.path(delay))
            .header(hyper::header::HOST, self.addr.to_string())
            .body(Empty::<Bytes>::new())
            .expect("the request is well-formed");
        // `sender` moves in, so the connection ends once the answer is read.
        let exchange = async move {
            let response = sender.send_request(request).await?;
            let status = response.status().as_u16();
            response.into_body().collect().await?;
            Ok::<_, hyper::Error>(status)
        };
        let (status, connection) = futures_lite::future::zip(exchange, connection).await;
        let status = status.and_then(|status| connection.map(|()| status));
        let status = status.map_err(|error| self.failed(error))?;
        self.answered(work, status, start.elapsed(), None)
    }

    /// The same request through an async client that is not hyper's (ntex's own): `get`
    /// sends `GET url`, reads the whole answer and returns its status.
    pub async fn get_with<G, F, E>(
        self,
        stack: &Stack,
        route: Route,
        delay: Duration,
        get: G,
    ) -> Result<IoWork, ApiError>
    where
        G: FnOnce(String) -> F,
        F: Future<Output = Result<u16, E>>,
        E: std::fmt::Display,
    {
        let work = stack.work_here(route, delay);
        let start = Instant::now();
        let url = format!("http://{}{}", self.addr, self.path(delay));
        let status = get(url).await.map_err(|error| self.failed(error))?;
        self.answered(work, status, start.elapsed(), None)
    }
}
