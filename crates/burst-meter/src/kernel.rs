//! What the kernel knows about our connections (Linux; elsewhere these read as "not
//! available"): whether a listener has accepted every connection made to it, asked of the
//! kernel's `sock_diag` netlink interface, and the TCP counters in `/proc` that say whether
//! connections were dropped or retransmitted, so that no figure set by the kernel's queues is
//! taken for the server's.

use std::time::{Duration, Instant};

use netlink_packet_core::{
    NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload,
};
use netlink_packet_sock_diag::SockDiagMessage;
use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
use netlink_packet_sock_diag::inet::{
    ExtensionFlags, InetRequest, InetResponse, SocketId, StateFlags,
};
use netlink_sys::protocols::NETLINK_SOCK_DIAG;
use netlink_sys::{Socket, SocketAddr};
use serde::{Deserialize, Serialize};

/// The server's side of a local port: what its listeners hold, and what is still on its way
/// to them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortState {
    /// Connections waiting to be accepted, over every listener on the port (with
    /// `SO_REUSEPORT`, compio has one per thread): a listener's receive queue.
    pub accept_queue: u32,
    /// Handshakes the server's kernel has not finished (`SYN_RECV`): the client saw the
    /// SYN-ACK, but its last ACK was dropped (a full accept queue) or is on its way. Such a
    /// connection is open on the client's side and not yet in any queue on the server's.
    pub half_open: u32,
    /// The listeners' backlog, over every listener on the port: the `listen()` backlog as the
    /// kernel keeps it (capped by `net.core.somaxconn`), a listener's send queue in
    /// `sock_diag`. A listener holds one connection more than this; past that, the kernel
    /// drops the SYN and the client sends it again a second later.
    pub backlog: u32,
    /// The fewest connections one listener on the port can still queue (its backlog and one,
    /// less its accept queue): with several listeners, the kernel picks one per connection.
    pub room: u32,
}

/// The [`PortState`] of local `port`, IPv4 and IPv6, or `None` where `sock_diag` cannot be
/// asked or no listener on `port` is visible.
///
/// Listeners sit in a table of their own, which `sock_diag` lists in microseconds; half-open
/// handshakes sit in the table of every connection, which it walks bucket by bucket (about
/// 2.5 ms per family here, whatever the load): so the half-open ones are asked for only in
/// the families a listener on `port` could have them in (a dual-stack IPv6 listener keeps
/// its IPv4 handshakes as IPv4 sockets).
pub fn port_state(port: u16) -> Option<PortState> {
    let socket = diag_socket()?;
    let (mut state, families) = listeners_on(&socket, port)?;
    for family in families {
        let half_open = tcp_sockets(&socket, family, StateFlags::SYN_RECV)?;
        state.half_open += (half_open.iter())
            .filter(|response| response.header.socket_id.source_port == port)
            .count() as u32;
    }
    Some(state)
}

/// The listeners' side of local `port` alone: `half_open` is not asked for, and reads 0.
/// Cheap enough to ask every millisecond ([`port_state`] says why).
pub fn listeners(port: u16) -> Option<PortState> {
    listeners_on(&diag_socket()?, port).map(|(state, _)| state)
}

/// A `sock_diag` socket, bound and connected to the kernel.
fn diag_socket() -> Option<Socket> {
    let mut socket = Socket::new(NETLINK_SOCK_DIAG).ok()?;
    socket.bind_auto().ok()?;
    socket.connect(&SocketAddr::new(0, 0)).ok()?;
    Some(socket)
}

/// The listeners on `port`, and the families their half-open handshakes can be in: IPv4
/// for an IPv4 listener, both for an IPv6 one. `None` if there is none.
fn listeners_on(socket: &Socket, port: u16) -> Option<(PortState, Vec<u8>)> {
    let mut state = PortState {
        room: u32::MAX,
        ..PortState::default()
    };
    let mut listening = [false; 2];
    for (index, family) in [AF_INET, AF_INET6].into_iter().enumerate() {
        for response in tcp_sockets(socket, family, StateFlags::LISTEN)? {
            let header = &response.header;
            if header.socket_id.source_port == port {
                listening[index] = true;
                state.accept_queue += header.recv_queue;
                state.backlog += header.send_queue;
                let room = (header.send_queue + 1).saturating_sub(header.recv_queue);
                state.room = state.room.min(room);
            }
        }
    }
    let families = match listening {
        [_, true] => vec![AF_INET, AF_INET6],
        [true, false] => vec![AF_INET],
        [false, false] => return None,
    };
    Some((state, families))
}

/// Every TCP socket of `family` in `states`: one `sock_diag` dump.
fn tcp_sockets(socket: &Socket, family: u8, states: StateFlags) -> Option<Vec<InetResponse>> {
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_DUMP;
    let socket_id = match family {
        AF_INET => SocketId::new_v4(),
        _ => SocketId::new_v6(),
    };
    let request = SockDiagMessage::InetRequest(InetRequest {
        family,
        protocol: IPPROTO_TCP,
        extensions: ExtensionFlags::empty(),
        states,
        socket_id,
    });
    let mut message = NetlinkMessage::new(header, request.into());
    message.finalize();
    let mut bytes = vec![0; message.buffer_len()];
    message.serialize(&mut bytes);
    socket.send(&bytes, 0).ok()?;
    let mut sockets = Vec::new();
    loop {
        let (datagram, _) = socket.recv_from_full().ok()?;
        let mut rest = &datagram[..];
        while !rest.is_empty() {
            let message = NetlinkMessage::<SockDiagMessage>::deserialize(rest).ok()?;
            match message.payload {
                NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(response)) => {
                    sockets.push(*response);
                }
                NetlinkPayload::Done(_) => return Some(sockets),
                NetlinkPayload::Error(_) => return None,
                _ => {}
            }
            let length = message.header.length as usize;
            rest = rest.get(length.max(1)..)?;
        }
    }
}

/// Waits until every listener on `port` has room for one more connection; returns how many
/// connections can be opened without any overflowing its queue ([`PortState::room`]), at
/// most `most`: `most` where there is no way to tell, `None` if there was no room within
/// `within`.
pub async fn wait_for_room(port: u16, most: usize, within: Duration) -> Option<usize> {
    let deadline = Instant::now() + within;
    loop {
        let Some(state) = listeners(port) else {
            return Some(most);
        };
        if state.room > 0 {
            return Some((state.room as usize).min(most));
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Waits until the server on `port` has accepted every connection made to it: no handshake
/// is unfinished on its side and its listeners have nothing left to accept. Gives up after
/// `within`, or at once where the kernel cannot tell; returns whether it saw them all
/// accepted. The listeners are watched until their queues are empty, and only then the
/// half-open handshakes counted ([`port_state`] says why).
pub async fn wait_until_accepted(port: u16, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let Some(listening) = listeners(port) else {
            return false;
        };
        if listening.accept_queue == 0 {
            let Some(state) = port_state(port) else {
                return false;
            };
            if state.accept_queue == 0 && state.half_open == 0 {
                return true;
            }
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The machine-wide TCP counters that tell of connections the kernel dropped or had to
/// retransmit. Each is a count since boot; a case records the difference over itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpCounters {
    /// Connections that found the accept queue full (`TcpExt: ListenOverflows`): their
    /// handshake's last ACK was dropped, and the client will retransmit after a timeout.
    pub listen_overflows: u64,
    /// SYNs or ACKs dropped at a listener for any reason, overflows included
    /// (`TcpExt: ListenDrops`).
    pub listen_drops: u64,
    /// Segments sent again (`Tcp: RetransSegs`): each costs the connection at least one
    /// retransmission timeout, 200 ms or more, which is the kernel's time, not the server's.
    pub retrans_segs: u64,
    /// Retransmission timeouts that fired (`TcpExt: TCPTimeouts`).
    pub tcp_timeouts: u64,
}

impl TcpCounters {
    /// The counters now, or `None` where `/proc/net/netstat` and `/proc/net/snmp` are not
    /// to be read.
    pub fn read() -> Option<TcpCounters> {
        let netstat = std::fs::read_to_string("/proc/net/netstat").ok()?;
        let snmp = std::fs::read_to_string("/proc/net/snmp").ok()?;
        TcpCounters::parse(&netstat, &snmp)
    }

    /// The counters of a `/proc/net/netstat` and a `/proc/net/snmp` text.
    pub fn parse(netstat: &str, snmp: &str) -> Option<TcpCounters> {
        Some(TcpCounters {
            listen_overflows: counter(netstat, "TcpExt", "ListenOverflows")?,
            listen_drops: counter(netstat, "TcpExt", "ListenDrops")?,
            retrans_segs: counter(snmp, "Tcp", "RetransSegs")?,
            tcp_timeouts: counter(netstat, "TcpExt", "TCPTimeouts")?,
        })
    }

    /// What each counter rose by since `before`.
    pub fn since(self, before: TcpCounters) -> TcpCounters {
        TcpCounters {
            listen_overflows: self
                .listen_overflows
                .saturating_sub(before.listen_overflows),
            listen_drops: self.listen_drops.saturating_sub(before.listen_drops),
            retrans_segs: self.retrans_segs.saturating_sub(before.retrans_segs),
            tcp_timeouts: self.tcp_timeouts.saturating_sub(before.tcp_timeouts),
        }
    }

    /// Each counter's rise here and in `other` added up: for figures pooled over runs.
    pub fn plus(self, other: TcpCounters) -> TcpCounters {
        TcpCounters {
            listen_overflows: self.listen_overflows + other.listen_overflows,
            listen_drops: self.listen_drops + other.listen_drops,
            retrans_segs: self.retrans_segs + other.retrans_segs,
            tcp_timeouts: self.tcp_timeouts + other.tcp_timeouts,
        }
    }

    /// Whether any connection was dropped or any segment retransmitted.
    pub fn any(self) -> bool {
        self != TcpCounters::default()
    }
}

/// One counter of a `/proc/net/{netstat,snmp}` text, where each group is a line of names
/// (`TcpExt: A B ...`) followed by a line of values (`TcpExt: 1 2 ...`).
fn counter(text: &str, group: &str, name: &str) -> Option<u64> {
    let prefix = format!("{group}:");
    let mut lines = text.lines().filter(|line| line.starts_with(&prefix));
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let index = names.split_whitespace().position(|field| field == name);
        if let Some(index) = index {
            return values.split_whitespace().nth(index)?.parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded on this project's machine (Linux 6.18), shortened to the fields read.
    const NETSTAT: &str = "\
TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPTimeouts
TcpExt: 0 950 951 952
IpExt: InNoRoutes InTruncatedPkts
IpExt: 0 0
";
    const SNMP: &str = "\
Ip: Forwarding DefaultTTL
Ip: 1 64
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 54105 53773 309 161 0 607567 605671 953 0 447 0
";

    #[test]
    fn counters_are_read_by_name() {
        let counters = TcpCounters::parse(NETSTAT, SNMP).unwrap();
        assert_eq!(
            counters,
            TcpCounters {
                listen_overflows: 950,
                listen_drops: 951,
                retrans_segs: 953,
                tcp_timeouts: 952,
            }
        );
        let later = TcpCounters {
            retrans_segs: 960,
            ..counters
        };
        let rise = later.since(counters);
        assert_eq!(rise.retrans_segs, 7);
        assert!(rise.any());
        assert!(!counters.since(counters).any());
        assert_eq!(TcpCounters::parse("TcpExt: A\nTcpExt: 1\n", SNMP), None);
    }

    #[tokio::test]
    async fn the_servers_side_shows_the_queue_until_it_accepts() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let _client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let within = Duration::from_millis(200);
        assert!(!wait_until_accepted(port, within).await, "not accepted yet");
        let queued = port_state(port).expect("sock_diag sees the listener");
        assert_eq!((queued.accept_queue, queued.half_open), (1, 0));
        assert_eq!(
            listeners(port),
            Some(queued),
            "no half-open one to leave out"
        );
        let _accepted = listener.accept().unwrap();
        assert!(wait_until_accepted(port, Duration::from_secs(5)).await);
        drop(listener);
        assert_eq!(port_state(port), None, "no listener on the port");
    }

    #[tokio::test]
    async fn a_listeners_backlog_is_the_one_it_asked_for() {
        // socketserver's default, far below `net.core.somaxconn`, which caps it.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(([127, 0, 0, 1], 0).into()).unwrap();
        let listener = socket.listen(5).unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(port_state(port).map(|state| state.backlog), Some(5));
        let within = Duration::from_millis(50);
        assert_eq!(
            wait_for_room(port, 1024, within).await,
            Some(6),
            "its backlog and one"
        );
        assert_eq!(wait_for_room(port, 4, within).await, Some(4));
        let _queued: Vec<_> = (0..6)
            .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        assert_eq!(wait_for_room(port, 4, within).await, None, "full");
    }

    #[test]
    fn this_machine_shows_its_counters() {
        if cfg!(target_os = "linux") {
            assert!(TcpCounters::read().is_some());
        }
    }
}
