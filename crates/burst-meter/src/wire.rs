//! The burst's HTTP/1.1 on plain TCP: one request encoded once for the whole burst and written
//! as is on each connection, each answer read into a buffer of its own and parsed with
//! `httparse`. On hyper's client connections (a handshake, a task of its own to drive each
//! connection, a request built and sent to it through a channel) the client spent more CPU on
//! a burst than the server it measured, and a figure where the client is the heavier is not
//! the server's alone ([`crate::cpu`]). Here a request costs the client a write, a read and
//! the close, little more than the kernel's own work; `benches/burst_cpu.rs` measures both
//! clients beside a server.
//!
//! The request is what hyper's client wrote: `GET`, the path, a `host` header, HTTP/1.1 and
//! so keep-alive; the server answers and waits for more, and the client closes the connection
//! once it has the whole answer. The probes keep hyper's client ([`crate::http`]).

use std::io;
use std::net::SocketAddr;

use bytes::Bytes;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::http::{Endpoint, HttpError, Reply, ResponseError};

/// The most headers an answer may have (the demo servers send three or four).
const MAX_HEADERS: usize = 32;

/// The most bytes an answer's head may take: past it, the answer is refused, not awaited.
pub const MAX_HEAD: usize = 64 * 1024;

/// The buffer each answer is read into at first: a demo server's whole answer (some 250
/// bytes) fits in it, and 10,000 of them at once take 5 MB.
const READ_BUFFER: usize = 512;

/// A request as the bytes to write, encoded once and shared by every request of a burst.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request(Bytes);

impl Request {
    /// `GET prefix + path_and_query` to `endpoint`, with its `host` header.
    pub fn get(endpoint: &Endpoint, path_and_query: &str) -> Request {
        Request::new(endpoint, "GET", path_and_query, &[], b"")
    }

    /// `method prefix + path_and_query` to `endpoint`, with its `host` header, then
    /// `headers` as given, then `body` with its `content-length` (none for an empty body).
    pub fn new(
        endpoint: &Endpoint,
        method: &str,
        path_and_query: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Request {
        let mut head = format!(
            "{method} {}{path_and_query} HTTP/1.1\r\nhost: {}\r\n",
            endpoint.prefix,
            endpoint.authority()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() {
            head.push_str(&format!("content-length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        Request(Bytes::from([head.as_bytes(), body].concat()))
    }

    /// What is written on each connection.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Where a burst connects: the endpoint's addresses, looked up once for the whole burst.
#[derive(Debug)]
pub struct Peer {
    authority: String,
    addresses: io::Result<Vec<SocketAddr>>,
}

impl Peer {
    /// Looks `endpoint` up; a failure is kept, and each connect reports it.
    pub async fn resolve(endpoint: &Endpoint) -> Peer {
        let found = tokio::net::lookup_host((endpoint.host.as_str(), endpoint.port)).await;
        Peer {
            authority: endpoint.authority(),
            addresses: found.map(Iterator::collect),
        }
    }

    /// A new connection, `TCP_NODELAY` so that the request leaves at once.
    pub async fn connect(&self) -> Result<TcpStream, HttpError> {
        let failed = |error| HttpError::Connect(self.authority.clone(), error);
        let addresses = match &self.addresses {
            Ok(addresses) => addresses.as_slice(),
            Err(error) => return Err(failed(io::Error::new(error.kind(), error.to_string()))),
        };
        // One address, the usual case, is connected to without a list copied per connect.
        let stream = match addresses {
            [address] => TcpStream::connect(address).await,
            addresses => TcpStream::connect(addresses).await,
        };
        let stream = stream.map_err(failed)?;
        stream.set_nodelay(true).map_err(failed)?;
        Ok(stream)
    }
}

/// Writes `request` on `stream` and reads the whole answer. A failed write does not end it:
/// a server that answered and closed before reading (actix-web's 408 on a connection left
/// idle) may have its answer waiting, and that answer is the outcome; the write's error is,
/// only if no complete answer is there.
pub async fn exchange(stream: &mut TcpStream, request: &Request) -> Result<Reply, HttpError> {
    let written = stream.write_all(request.bytes()).await;
    receive(stream, written).await
}

/// Reads the whole answer to a request already written on `stream`; `written` is how the
/// write went (its error is the outcome only if no complete answer comes).
pub async fn receive(stream: &mut TcpStream, written: io::Result<()>) -> Result<Reply, HttpError> {
    let mut buffer = Vec::with_capacity(READ_BUFFER);
    loop {
        let closed = match stream.read_buf(&mut buffer).await {
            Ok(read) => read == 0,
            Err(error) => {
                return Err(written
                    .err()
                    .map_or(HttpError::Read(error), HttpError::Write));
            }
        };
        match parse(&buffer, closed) {
            Ok(Some(reply)) => return Ok(reply),
            Ok(None) => {}
            Err(error) => return Err(written.err().map_or(error.into(), HttpError::Write)),
        }
    }
}

/// The answer in `bytes`, if they hold a whole one; `None` if more are to come. `closed`:
/// the server has closed the connection after these bytes, so there will be no more (an
/// answer then is whole or an error, never `None`). Bytes after the answer are ignored.
pub fn parse(bytes: &[u8], closed: bool) -> Result<Option<Reply>, ResponseError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut head = httparse::Response::new(&mut headers);
    let head_len = match head.parse(bytes).map_err(ResponseError::Head)? {
        httparse::Status::Complete(len) => len,
        httparse::Status::Partial if closed => return Err(ResponseError::Truncated(bytes.len())),
        httparse::Status::Partial if bytes.len() > MAX_HEAD => {
            return Err(ResponseError::HeadTooLarge(MAX_HEAD));
        }
        httparse::Status::Partial => return Ok(None),
    };
    let status = head.code.expect("a complete head has a status");
    let content_type = header(head.headers, "content-type")
        .and_then(|value| std::str::from_utf8(value).ok())
        .map(str::to_owned);
    let body = &bytes[head_len..];
    let body = match Framing::of(status, head.headers)? {
        Framing::Empty => Some(Bytes::new()),
        Framing::Length(len) if body.len() >= len => Some(Bytes::copy_from_slice(&body[..len])),
        Framing::Length(_) => None,
        Framing::UntilClose => closed.then(|| Bytes::copy_from_slice(body)),
        Framing::Chunked => dechunk(body)?.map(Bytes::from),
    };
    match body {
        Some(body) => Ok(Some(Reply {
            status,
            content_type,
            body,
        })),
        None if closed => Err(ResponseError::Truncated(bytes.len())),
        None => Ok(None),
    }
}

/// How an answer's body ends (RFC 9112, section 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// No body, whatever the headers say: 1xx, 204 and 304 answers.
    Empty,
    /// `Content-Length` bytes.
    Length(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Neither header: the body runs until the server closes the connection.
    UntilClose,
}

impl Framing {
    fn of(status: u16, headers: &[httparse::Header<'_>]) -> Result<Framing, ResponseError> {
        if matches!(status, 100..=199 | 204 | 304) {
            return Ok(Framing::Empty);
        }
        let text = |value: &[u8]| String::from_utf8_lossy(value).into_owned();
        // Transfer-Encoding overrides Content-Length.
        if let Some(coding) = header(headers, "transfer-encoding") {
            return if coding.eq_ignore_ascii_case(b"chunked") {
                Ok(Framing::Chunked)
            } else {
                Err(ResponseError::TransferEncoding(text(coding)))
            };
        }
        let Some(length) = header(headers, "content-length") else {
            return Ok(Framing::UntilClose);
        };
        let parsed = std::str::from_utf8(length).ok().map(|s| s.trim().parse());
        match parsed {
            Some(Ok(length)) => Ok(Framing::Length(length)),
            _ => Err(ResponseError::ContentLength(text(length))),
        }
    }
}

/// The value of the header `name` (the first, if repeated).
fn header<'b>(headers: &[httparse::Header<'b>], name: &str) -> Option<&'b [u8]> {
    (headers.iter())
        .find(|header| header.name.eq_ignore_ascii_case(name))
        .map(|header| header.value)
}

/// A chunked body decoded, if `body` holds all of it (its last chunk and trailers included);
/// `None` if more is to come.
fn dechunk(body: &[u8]) -> Result<Option<Vec<u8>>, ResponseError> {
    let (mut decoded, mut at) = (Vec::new(), 0);
    loop {
        let (used, size) = match httparse::parse_chunk_size(&body[at..]) {
            Ok(httparse::Status::Complete(found)) => found,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(httparse::InvalidChunkSize) => return Err(ResponseError::Chunk("bad chunk size")),
        };
        at += used;
        if size == 0 {
            // The trailer section, empty or not, ends the body.
            let mut trailers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            return match httparse::parse_headers(&body[at..], &mut trailers) {
                Ok(httparse::Status::Complete(_)) => Ok(Some(decoded)),
                Ok(httparse::Status::Partial) => Ok(None),
                Err(_) => Err(ResponseError::Chunk("bad trailers")),
            };
        }
        let too_large = ResponseError::Chunk("chunk too large");
        let size = usize::try_from(size).map_err(|_| too_large.clone())?;
        let end = (at.checked_add(size)).and_then(|end| end.checked_add(2));
        let Some(data_and_crlf) = body.get(at..end.ok_or(too_large)?) else {
            return Ok(None);
        };
        if &data_and_crlf[size..] != b"\r\n" {
            return Err(ResponseError::Chunk("no CRLF after a chunk's data"));
        }
        decoded.extend_from_slice(&data_and_crlf[..size]);
        at += size + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`parse`] of a whole answer, which must be complete with nothing more to come.
    fn whole(bytes: &[u8]) -> Reply {
        parse(bytes, false)
            .expect("a valid answer")
            .expect("a complete answer")
    }

    #[test]
    fn the_request_is_hypers_get_with_its_host() {
        let endpoint = Endpoint::parse("http://127.0.0.1:8000/api").unwrap();
        let request = Request::get(&endpoint, "/ok-await?ms=5");
        assert_eq!(
            request.bytes(),
            b"GET /api/ok-await?ms=5 HTTP/1.1\r\nhost: 127.0.0.1:8000\r\n\r\n"
        );
    }

    #[test]
    fn a_content_length_body_is_read_to_its_length_and_no_further() {
        // Recorded from demo-axum's /ok-await, with a stray byte after the body.
        let answer = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                       content-length: 14\r\ndate: Thu, 03 Dec 2026 15:37:36 GMT\r\n\r\n\
                       {\"slept_ms\":5}X";
        let reply = whole(answer);
        assert_eq!(reply.status, 200);
        assert_eq!(reply.content_type.as_deref(), Some("application/json"));
        assert_eq!(&reply.body[..], b"{\"slept_ms\":5}");
        // One byte short, the answer is awaited, or truncated if the server has closed.
        let short = &answer[..answer.len() - 3];
        assert!(parse(short, false).unwrap().is_none());
        assert_eq!(
            parse(short, true).unwrap_err(),
            ResponseError::Truncated(short.len())
        );
    }

    #[test]
    fn a_body_without_length_runs_until_the_server_closes() {
        let answer = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\npart one, part two";
        assert!(parse(answer, false).unwrap().is_none(), "more may come");
        let reply = parse(answer, true).unwrap().expect("closed: whole");
        assert_eq!(
            (reply.status, &reply.body[..]),
            (200, &b"part one, part two"[..])
        );
        assert_eq!(reply.content_type, None);
    }

    #[test]
    fn a_chunked_body_is_decoded_across_chunks_and_trailers() {
        let answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                       4\r\nRust\r\nA;ext=1\r\n, on tokio\r\n0\r\nx-trailer: 1\r\n\r\n";
        assert_eq!(&whole(answer).body[..], b"Rust, on tokio");
        // Cut anywhere before the end, it is not whole yet.
        for cut in [60, answer.len() - 20, answer.len() - 1] {
            assert!(
                parse(&answer[..cut], false).unwrap().is_none(),
                "cut at {cut}"
            );
            assert!(parse(&answer[..cut], true).is_err(), "cut at {cut}, closed");
        }
    }

    #[test]
    fn bad_chunks_and_other_codings_are_refused() {
        let head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
        let bad_size = format!("{head}zz\r\nRust\r\n0\r\n\r\n");
        assert!(matches!(
            parse(bad_size.as_bytes(), false),
            Err(ResponseError::Chunk(_))
        ));
        let no_crlf = format!("{head}4\r\nRustXX0\r\n\r\n");
        assert!(matches!(
            parse(no_crlf.as_bytes(), false),
            Err(ResponseError::Chunk(_))
        ));
        let gzip = b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n";
        assert_eq!(
            parse(gzip, false).unwrap_err(),
            ResponseError::TransferEncoding("gzip".into())
        );
    }

    #[test]
    fn actix_webs_408_is_an_answer_not_an_error() {
        // What actix-web 4 writes on a connection whose request head did not come within its
        // client_request_timeout, just before it closes the connection.
        let answer = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\
                       connection: close\r\ndate: Thu, 03 Dec 2026 15:37:36 GMT\r\n\r\n";
        for closed in [false, true] {
            let reply = parse(answer, closed).unwrap().expect("whole");
            assert_eq!((reply.status, reply.body.len()), (408, 0));
        }
    }

    #[tokio::test]
    async fn a_408_sent_before_the_request_is_read_off_the_closed_connection() {
        // As actix-web does: answer 408 on a connection that sent nothing, then close it.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let answer = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n";
            stream.write_all(answer).await.unwrap();
        });
        let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}")).unwrap();
        let mut stream = Peer::resolve(&endpoint).await.connect().await.unwrap();
        server.await.unwrap();
        // A first byte on the closed connection draws the server's reset: the request's own
        // write then fails, and the answer must still be read.
        stream.write_all(b"G").await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let request = Request::get(&endpoint, "/ok-await");
        let reply = exchange(&mut stream, &request)
            .await
            .expect("the 408 is read");
        assert_eq!(reply.status, 408);
    }

    #[test]
    fn truncated_and_malformed_heads_are_errors_once_nothing_more_can_come() {
        let cut = b"HTTP/1.1 200 OK\r\ncontent-le";
        assert!(parse(cut, false).unwrap().is_none());
        assert_eq!(
            parse(cut, true).unwrap_err(),
            ResponseError::Truncated(cut.len())
        );
        assert_eq!(parse(b"", true).unwrap_err(), ResponseError::Truncated(0));
        assert!(matches!(
            parse(b"HTTP/1.1 abc OK\r\n\r\n", false),
            Err(ResponseError::Head(_))
        ));
        let length = b"HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\n";
        assert_eq!(
            parse(length, false).unwrap_err(),
            ResponseError::ContentLength("ten".into())
        );
        let endless = [b"HTTP/1.1 200 OK\r\nx: ".as_slice(), &[b'a'; MAX_HEAD]].concat();
        assert_eq!(
            parse(&endless, false).unwrap_err(),
            ResponseError::HeadTooLarge(MAX_HEAD)
        );
    }

    #[test]
    fn no_content_has_no_body_whatever_the_length_says() {
        let reply = whole(b"HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n");
        assert_eq!((reply.status, reply.body.len()), (204, 0));
    }

    #[test]
    fn errors_describe_themselves_through_http_error() {
        let error = HttpError::from(ResponseError::Truncated(12));
        assert_eq!(
            error.describe(),
            "connection closed after 12 bytes, before the response was complete"
        );
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let described = HttpError::Read(reset).describe();
        assert!(
            described.starts_with("cannot read the answer: "),
            "{described}"
        );
        assert_eq!(described.matches("reset").count(), 1, "{described}");
    }
}
