//! What the kernel knows about our connections, read from `/proc` (Linux; elsewhere these
//! read as "not available"): whether a listener has accepted every connection made to it,
//! and the TCP counters that say whether connections were dropped or retransmitted, so that
//! no figure set by the kernel's queues is taken for the server's.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How many connections wait in the accept queue of the listener on `port` (loopback or
/// any address), from `/proc/net/tcp` and `tcp6`: for a listening socket the kernel shows
/// that queue's length as `rx_queue`. `None` if no such listener is visible.
pub fn accept_queue(port: u16) -> Option<u64> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .find_map(|table| listen_queue_in(&table, port))
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

/// Waits until the listener on `port` has no connection left to accept, or `within` has
/// passed, or there is no way to tell (no `/proc`): returns whether it saw the queue empty.
pub async fn wait_until_accepted(port: u16, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        match accept_queue(port) {
            Some(0) => return true,
            None => return false,
            Some(_) if Instant::now() >= deadline => return false,
            Some(_) => tokio::time::sleep(Duration::from_millis(1)).await,
        }
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
    fn this_machine_shows_its_counters() {
        if cfg!(target_os = "linux") {
            assert!(TcpCounters::read().is_some());
        }
    }
}
