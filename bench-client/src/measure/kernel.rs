//! What the kernel knows about our connections, read from `/proc` (Linux; elsewhere these
//! read as "not available"): whether a listener has accepted every connection made to it,
//! and the TCP counters that say whether connections were dropped or retransmitted, so that
//! no figure set by the kernel's queues is taken for the server's.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How many connections wait in the accept queue of the listener on `port` (loopback or
/// any address), from `/proc/net/tcp` and `tcp6`: for a listening socket the kernel shows
/// that queue's length as `rx_queue`. `None` if no such listener is visible.
pub fn accept_queue(port: u16) -> Option<u64> {
    // IPv4 first: the servers listen on 127.0.0.1 by default, and tcp6 is read only if needed.
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|path| listen_queue_in(&std::fs::read_to_string(path).ok()?, port))
}

/// [`accept_queue`] of one `/proc/net/tcp` text.
pub fn listen_queue_in(table: &str, port: u16) -> Option<u64> {
    const LISTEN: &str = "0A";
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (local, state, queues) = (fields.get(1)?, fields.get(3)?, fields.get(4)?);
        let local_port = u16::from_str_radix(local.rsplit(':').next()?, 16).ok()?;
        if local_port != port || *state != LISTEN {
            return None;
        }
        u64::from_str_radix(queues.split(':').nth(1)?, 16).ok()
    })
}

/// Waits until the listener on `port` has fewer than `limit` connections waiting to be
/// accepted, or `within` has passed, or there is no way to tell.
pub async fn wait_until_queue_below(port: u16, limit: usize, within: Duration) {
    let deadline = Instant::now() + within;
    while accept_queue(port).is_some_and(|queued| queued >= limit as u64) {
        if Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The client ports of the established connections to local `port` that the server's side
/// of `/proc/net/tcp` (and `tcp6`) lists: a connection appears there once the server's
/// kernel has taken the handshake's last ACK, before or after the server accepts it.
pub fn established_peers(port: u16) -> HashSet<u16> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|table| peers_in(&table, port))
        .collect()
}

/// [`established_peers`] of one `/proc/net/tcp` text.
pub fn peers_in(table: &str, port: u16) -> HashSet<u16> {
    const ESTABLISHED: &str = "01";
    let hex_port = |address: &str| u16::from_str_radix(address.rsplit(':').next()?, 16).ok();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, remote, state) = (fields.get(1)?, fields.get(2)?, fields.get(3)?);
            (hex_port(local)? == port && *state == ESTABLISHED).then(|| hex_port(remote))?
        })
        .collect()
}

/// Waits until the server on `port` has accepted every connection from the client ports
/// `ours`: each is established on the server's side, and its listener has nothing left to
/// accept. Gives up after `within`, or at once where `/proc` cannot tell; returns whether
/// it saw them all accepted.
pub async fn wait_until_accepted(port: u16, ours: &HashSet<u16>, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let Some(queued) = accept_queue(port) else {
            return false;
        };
        if queued == 0 && ours.is_subset(&established_peers(port)) {
            return true;
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
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2231 00000000:0000 0A 00000000:00000003 00:00000000 00000000     0        0 64 1 0 100 0 0 10 0
   1: 0100007F:2231 0100007F:A4C2 01 00000000:00000000 00:00000000 00000000     0        0 65 1 0 20 4 30 10 -1
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

    #[test]
    fn the_accept_queue_is_the_listeners_rx_queue() {
        assert_eq!(listen_queue_in(TCP, 0x2231), Some(3));
        assert_eq!(listen_queue_in(TCP, 80), None, "no listener there");
    }

    #[test]
    fn established_peers_are_the_servers_side() {
        // Entry 1 is the server's side of a connection from client port 0xA4C2.
        assert_eq!(peers_in(TCP, 0x2231), HashSet::from([0xA4C2]));
        assert!(peers_in(TCP, 80).is_empty());
    }

    #[test]
    fn this_machine_shows_its_counters() {
        if cfg!(target_os = "linux") {
            assert!(TcpCounters::read().is_some());
        }
    }
}
