//! The HTTP client of the probes and the warm-up: hyper 1's own client connections on tokio,
//! one TCP connection each, so that the pinger keeps exactly one keep-alive connection, as the
//! original bench's client did. The burst writes its requests itself ([`crate::wire`]); its
//! outcomes share the [`Reply`] and [`HttpError`] defined here.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Method, Request, Uri, header};
use hyper_util::rt::TokioIo;
use serde::de::DeserializeOwned;
use tokio::net::TcpStream;

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("cannot connect to {0}: {1}")]
    Connect(String, #[source] std::io::Error),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("HTTP error: {0}")]
    Http(#[from] hyper::Error),
    #[error("bad request line: {0}")]
    Request(#[from] hyper::http::Error),
    /// The burst's own client ([`crate::wire`]) could not write its request.
    #[error("cannot write the request: {0}")]
    Write(#[source] std::io::Error),
    /// The burst's own client could not read the answer.
    #[error("cannot read the answer: {0}")]
    Read(#[source] std::io::Error),
    /// The burst's own client read bytes that are not a whole HTTP/1.1 answer.
    #[error(transparent)]
    Response(#[from] ResponseError),
}

/// Why the bytes a server sent the burst's own client ([`crate::wire`]) are not an
/// answer. Defined here, beside [`HttpError`] that carries it, so that the wire depends on
/// this module and not the other way round.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    #[error("malformed response head: {0}")]
    Head(httparse::Error),
    #[error("response head larger than {0} bytes")]
    HeadTooLarge(usize),
    #[error("bad Content-Length {0:?}")]
    ContentLength(String),
    #[error("unsupported Transfer-Encoding {0:?}: only chunked is decoded")]
    TransferEncoding(String),
    #[error("malformed chunked body: {0}")]
    Chunk(&'static str),
    #[error("connection closed after {0} bytes, before the response was complete")]
    Truncated(usize),
}

impl HttpError {
    /// The error with its causes, e.g. `HTTP error: connection error: Connection reset by peer`:
    /// hyper's own message alone rarely says what happened.
    pub fn describe(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(error) = cause {
            let more = error.to_string();
            if !text.ends_with(&more) {
                text = format!("{text}: {more}");
            }
            cause = error.source();
        }
        text
    }
}

/// A URL the bench client cannot talk to, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url:?} {why}")]
pub struct BadUrl {
    pub url: String,
    pub why: String,
}

/// Where a server listens: `http://host:port`, with an optional path prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    /// Prepended to every route, without a trailing slash (usually empty).
    pub prefix: String,
}

impl Endpoint {
    /// Parses an `http://` URL; HTTPS is not something these servers speak.
    pub fn parse(url: &str) -> Result<Endpoint, BadUrl> {
        let bad = |why| BadUrl {
            url: url.to_owned(),
            why,
        };
        let uri: Uri = (url.parse()).map_err(|error| bad(format!("is not a URL: {error}")))?;
        if uri.scheme_str() != Some("http") {
            return Err(bad("must start with http://".to_owned()));
        }
        let authority = (uri.authority()).ok_or_else(|| bad("names no host".to_owned()))?;
        Ok(Endpoint {
            host: authority.host().trim_matches(['[', ']']).to_owned(),
            port: authority.port_u16().unwrap_or(80),
            prefix: uri.path().trim_end_matches('/').to_owned(),
        })
    }

    /// `host:port`, as a `Host` header gives it.
    pub(crate) fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "http://{}{}", self.authority(), self.prefix)
    }
}

/// A complete answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Bytes,
}

impl Reply {
    /// Whether its status is a success, 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON of type `T`, if it is that.
    pub fn json<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// One HTTP/1.1 connection, kept alive across requests.
#[derive(Debug)]
pub struct Connection {
    sender: SendRequest<Empty<Bytes>>,
    endpoint: Endpoint,
    /// This end's port: how the server's side of the connection is found in `/proc`.
    local_port: u16,
}

impl Connection {
    pub async fn open(endpoint: &Endpoint) -> Result<Connection, HttpError> {
        let authority = endpoint.authority();
        let stream = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(|error| HttpError::Connect(authority.clone(), error))?;
        // Small requests must leave at once, not wait for Nagle's algorithm.
        stream
            .set_nodelay(true)
            .map_err(|error| HttpError::Connect(authority.clone(), error))?;
        let local_port = stream
            .local_addr()
            .map_err(|error| HttpError::Connect(authority, error))?
            .port();
        let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
        // The connection's I/O runs as its own task; it ends when `sender` is dropped or the
        // server closes the connection.
        tokio::spawn(connection);
        Ok(Connection {
            sender,
            endpoint: endpoint.clone(),
            local_port,
        })
    }

    /// The port of this end of the connection.
    pub fn local_port(&self) -> u16 {
        self.local_port
    }

    /// Whether the server has closed this connection.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// `METHOD prefix + path_and_query` with an empty body, whole answer read.
    pub async fn send(&mut self, method: Method, path_and_query: &str) -> Result<Reply, HttpError> {
        self.send_asking(method, path_and_query, false).await
    }

    /// [`Connection::send`] as the last request of this connection: it asks the server to
    /// close it (`connection: close`), and this end drops it once the answer is read, as a
    /// client that keeps no connection does (Kubernetes' prober: `DisableKeepAlives`). A server
    /// that serves one connection at a time is then free for the next client.
    pub async fn send_last(
        mut self,
        method: Method,
        path_and_query: &str,
    ) -> Result<Reply, HttpError> {
        self.send_asking(method, path_and_query, true).await
    }

    /// The request, with `connection: close` if `close`.
    async fn send_asking(
        &mut self,
        method: Method,
        path_and_query: &str,
        close: bool,
    ) -> Result<Reply, HttpError> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path_and_query}", self.endpoint.prefix))
            .header(header::HOST, self.endpoint.authority());
        if close {
            request = request.header(header::CONNECTION, "close");
        }
        let request = request.body(Empty::new())?;
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let body = response.into_body().collect().await?.to_bytes();
        Ok(Reply {
            status,
            content_type,
            body,
        })
    }
}

/// One request on a connection of its own, connecting included in `timeout`.
pub async fn get_once(
    endpoint: &Endpoint,
    path_and_query: &str,
    timeout: Duration,
) -> Result<Reply, HttpError> {
    tokio::time::timeout(timeout, async {
        Connection::open(endpoint)
            .await?
            .send(Method::GET, path_and_query)
            .await
    })
    .await
    .map_err(|_| HttpError::Timeout(timeout))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_from_http_urls() {
        let endpoint = Endpoint::parse("http://127.0.0.1:8000").unwrap();
        assert_eq!(
            (
                endpoint.host.as_str(),
                endpoint.port,
                endpoint.prefix.as_str()
            ),
            ("127.0.0.1", 8000, "")
        );
        assert_eq!(endpoint.to_string(), "http://127.0.0.1:8000");
        let endpoint = Endpoint::parse("http://localhost/api/").unwrap();
        assert_eq!((endpoint.port, endpoint.prefix.as_str()), (80, "/api"));
        let endpoint = Endpoint::parse("http://[::1]:9/").unwrap();
        assert_eq!(endpoint.to_string(), "http://[::1]:9");
    }

    #[test]
    fn non_http_urls_are_refused_with_a_reason() {
        for url in ["https://127.0.0.1", "127.0.0.1:80", "http://", "not a url"] {
            assert!(Endpoint::parse(url).is_err(), "{url}");
        }
    }
}
