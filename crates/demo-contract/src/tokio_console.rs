//! tokio-console on a server, for the variant [`TOKIO_CONSOLE`](crate::variant::TOKIO_CONSOLE)
//! of a build with `--cfg tokio_unstable`: console-subscriber installed as its README says
//! (`ConsoleLayer::builder()...init()`), and its stream watched by `console-probe`, the
//! console's UI without the terminal (crates/console-probe).
//!
//! With tokio's `tracing` feature (console-subscriber turns it on) and that cfg, tokio opens a
//! span for every task it spawns and enters it around every poll; the subscriber stamps each
//! poll's start and end from those, and a thread of its own (`console_subscriber`, with its
//! own runtime) sends what changed every second to whoever watches. A task is named by where
//! it was spawned, not by route: a hyper connection's requests all run in the one task the
//! server spawned for the connection.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::process::{Command, Stdio};

/// The console server's port; unset or `0`, a free one.
pub const PORT_VARIABLE: &str = "DEMO_TOKIO_CONSOLE_PORT";

/// The probe's threshold for a long poll: every detector's threshold in the comparison.
pub const POLL_MS: u64 = 100;

/// Installs console-subscriber with its server on loopback and starts `console-probe`,
/// which prints on this process's stderr.
pub fn install() -> io::Result<()> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port()?));
    console_subscriber::ConsoleLayer::builder()
        .server_addr(addr)
        .init();
    eprintln!("tokio-console: the console's server listens on {addr}");
    start_probe(addr)
}

/// The port asked for in [`PORT_VARIABLE`], or one the kernel has just handed out and taken
/// back (console-subscriber binds the address itself, on its own thread).
fn port() -> io::Result<u16> {
    let asked = std::env::var(PORT_VARIABLE).unwrap_or_default();
    match asked.parse::<u16>() {
        Ok(port) if port != 0 => Ok(port),
        _ if !asked.is_empty() && asked != "0" => Err(io::Error::other(format!(
            "{PORT_VARIABLE}={asked:?} is not a port"
        ))),
        _ => Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
            .local_addr()?
            .port()),
    }
}

/// Starts `console-probe ADDR --stderr` from beside this server's binary, its lines on this
/// process's stderr; it exits when this process does, as its stream ends. A thread waits for
/// it, so that a probe that stops early is reaped and said.
fn start_probe(addr: SocketAddr) -> io::Result<()> {
    let probe = std::env::current_exe()?.with_file_name("console-probe");
    let mut child = Command::new(&probe)
        .arg(addr.to_string())
        .args(["--stderr", "--poll-ms", &POLL_MS.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|error| {
            io::Error::other(format!(
                "cannot start {}: {error} (build console-probe into the server's target folder)",
                probe.display()
            ))
        })?;
    std::thread::Builder::new()
        .name("console-probe-wait".into())
        .spawn(move || match child.wait() {
            Ok(status) => eprintln!("tokio-console: console-probe exited ({status})"),
            Err(error) => eprintln!("tokio-console: cannot wait for console-probe: {error}"),
        })?;
    Ok(())
}
