//! `console-probe ADDR`: connects to the tokio-console server at ADDR and prints one JSON line
//! per warning the console's UI would show and per poll that lasts past `--poll-ms`, as each
//! update arrives (see the library's docs). Exits when the program it watches goes away.

use std::io::Write as _;
use std::time::Duration;

use clap::Parser;
use console_probe::Report;

#[derive(Debug, Parser)]
#[command(about = "Prints tokio-console's warnings and long polls as JSON lines")]
struct Cli {
    /// The console server's HOST:PORT, e.g. 127.0.0.1:6669.
    addr: String,
    /// Report a poll once it has lasted this long (milliseconds, at least 1).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    poll_ms: u64,
    /// How long to keep trying to connect (milliseconds).
    #[arg(long, default_value_t = 10_000)]
    connect_ms: u64,
    /// Print to stderr instead of stdout (to share a server's stderr).
    #[arg(long)]
    stderr: bool,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current_thread runtime builds");
    match runtime.block_on(probe(&cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("console-probe: {}: {error}", cli.addr);
            std::process::ExitCode::FAILURE
        }
    }
}

async fn probe(cli: &Cli) -> Result<(), console_probe::Error> {
    let connect_within = Duration::from_millis(cli.connect_ms);
    let mut client = console_probe::connect(&cli.addr, connect_within).await?;
    let print = |report: Report| print(cli.stderr, &report);
    print(Report::Connected {
        addr: cli.addr.clone(),
    });
    console_probe::watch(&mut client, Duration::from_millis(cli.poll_ms), print).await
}

/// One line, written whole and flushed, so that a reader sees it as it happens.
fn print(to_stderr: bool, report: &Report) {
    let line = serde_json::to_string(report).expect("a report serialises") + "\n";
    let _ = match to_stderr {
        true => std::io::stderr().lock().write_all(line.as_bytes()),
        false => {
            let mut out = std::io::stdout().lock();
            out.write_all(line.as_bytes()).and_then(|()| out.flush())
        }
    };
}
