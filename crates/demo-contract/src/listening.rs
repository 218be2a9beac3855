//! The listening socket every server binds, the line it prints once it listens, and the
//! exit of an io_uring server where the kernel refuses io_uring.

use std::net::SocketAddr;

use crate::Stack;

/// How many connections may wait to be accepted. A burst of 10,000 connects must not find
/// the queue full while the reactor is busy (the kernel caps this at `net.core.somaxconn`).
pub const LISTEN_BACKLOG: i32 = 65_535;

/// Binds `addr` with a listen backlog of [`LISTEN_BACKLOG`], non-blocking, ready to hand to
/// any runtime (`tokio::net::TcpListener::from_std`, `HttpServer::listen`, ...). The
/// standard library's `bind` uses a backlog of 128, and each runtime its own.
pub fn listen(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    Ok(bind(addr, false)?.into())
}

/// `count` listeners on one address, each as [`listen`] makes it and all with `SO_REUSEPORT`,
/// for a thread-per-core server: one listener per thread. The kernel then deals each new
/// connection to one of them by a hash of its addresses and ports, and the connection stays
/// with the thread that owns that listener. With port 0 the first picks a free port and the
/// others join it.
pub fn listen_reuse_port(
    addr: SocketAddr,
    count: usize,
) -> std::io::Result<Vec<std::net::TcpListener>> {
    let first = bind(addr, true)?;
    let addr = first.local_addr()?.as_socket().unwrap_or(addr);
    let mut listeners = vec![first.into()];
    for _ in 1..count {
        listeners.push(bind(addr, true)?.into());
    }
    Ok(listeners)
}

fn bind(addr: SocketAddr, reuse_port: bool) -> std::io::Result<socket2::Socket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Restarting on the same port must not fail on the last run's sockets in TIME_WAIT.
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(reuse_port)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

/// What a server on io_uring says, as the start of its one line on stderr, when the kernel
/// refuses io_uring (an old kernel, a seccomp filter, `kernel.io_uring_disabled`): the tests
/// and the bench client look for it to report the server as not started.
pub const IO_URING_REFUSED: &str = "io_uring is not available here";

/// Says, in one line, that this server needs io_uring and the kernel refused it, and exits
/// with status 1.
pub fn exit_without_io_uring(stack: &Stack, error: impl std::fmt::Display) -> ! {
    eprintln!(
        "{}: {IO_URING_REFUSED} ({error}); this server runs only on io_uring",
        stack.server
    );
    std::process::exit(1)
}

/// The one line a server prints on stdout once it accepts connections (the readiness line of
/// `docs/contract.md`).
pub fn readiness_line(addr: SocketAddr) -> String {
    format!("listening on http://{addr}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_binds_a_free_port_non_blocking() {
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        assert_ne!(addr.port(), 0);
        assert_eq!(
            listener.accept().unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock
        );
        std::net::TcpStream::connect(addr).unwrap();
    }

    #[test]
    fn listen_reuse_port_binds_every_listener_to_one_port() {
        let listeners = listen_reuse_port("127.0.0.1:0".parse().unwrap(), 3).unwrap();
        let ports: Vec<u16> = listeners
            .iter()
            .map(|listener| listener.local_addr().unwrap().port())
            .collect();
        assert_eq!(ports.len(), 3);
        assert!(ports.iter().all(|&port| port == ports[0] && port != 0));
        // Without SO_REUSEPORT the same port is refused.
        let taken = SocketAddr::from(([127, 0, 0, 1], ports[0]));
        assert!(listen(taken).is_err());
    }

    #[test]
    fn readiness_line_is_exact() {
        let addr: SocketAddr = "127.0.0.1:4242".parse().unwrap();
        assert_eq!(readiness_line(addr), "listening on http://127.0.0.1:4242");
    }
}
