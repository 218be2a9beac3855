use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use std::fmt::Write as _;

use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::{CommandFactory, FromArgMatches, Parser};

use crate::{MAX_SLEEP_MS, Stack, variant};

/// The largest `--blocking-threads`: the `blocking` crate (async-std, smol) clamps the pool
/// size it reads from its environment variable to `1..=10000`; every stack takes that range.
const MAX_BLOCKING_THREADS: u64 = 10_000;

/// The largest `--stall-ms`: a minute. A poll held longer than that is a hang, not a stall.
const MAX_STALL_MS: u64 = 60_000;

/// The stall detector's threshold unless `--stall-ms` says otherwise: asyncio's
/// `slow_callback_duration`, so that both sides flag the same stalls.
pub const DEFAULT_STALL_MS: u64 = 100;

/// `--health-period-ms`' default: reactor-watch's, a kubelet's default probe period.
const DEFAULT_HEALTH_PERIOD_MS: u64 = reactor_watch::HealthCheck::DEFAULT_PERIOD.as_millis() as u64;

/// The command line every server takes (the CLI of the route contract, `docs/contract.md`).
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(
    after_help = "Routes: GET /ping, /bad, /ok-blocking (alias /ok-def), /ok-await, /bad-cpu, \
                  /ok-cpu-blocking, /ok-cpu-yield, /ok-cpu-pool, /bad-http, /ok-http-blocking, \
                  /ok-http-await (with --upstream), /bad-db, /ok-db-blocking, /ok-db-await (with \
                  --db), /bad-file, /ok-file-blocking, /ok-file-await (with --file), /stalls, \
                  /events; on the tokio servers, /ok-block-in-place, /join-block-in-place, \
                  /join-spawn-blocking, /bad-after-spawn; the sleep, CPU, HTTP, database and \
                  tokio routes take ?ms=0..10000.\n\
                  Prints `listening on http://HOST:PORT` on stdout once it accepts connections; \
                  SIGINT or SIGTERM stop it gracefully."
)]
pub struct Args {
    /// Address to bind. The default keeps the server on loopback.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,

    /// Port to bind; 0 picks any free port (the readiness line says which).
    #[arg(long, default_value_t = 8765)]
    pub port: u16,

    /// Threads that poll request futures (like `uvicorn --workers`).
    #[arg(long, default_value_t = 1, value_parser = RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub threads: usize,

    /// Sleep of a work route (CPU time of a CPU route) without `?ms=`, in milliseconds.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(0..=MAX_SLEEP_MS))]
    pub sleep_ms: u64,

    /// Threads of the offload pool (the runtime's blocking pool) [default: the runtime's own]
    #[arg(long, value_name = "K", value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_BLOCKING_THREADS))]
    pub blocking_threads: Option<usize>,

    /// Log and count (GET /stalls) every poll of a request future that holds its thread longer
    /// than N ms; 0 turns the detector off. The default is asyncio's `slow_callback_duration`
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STALL_MS, value_parser = clap::value_parser!(u64).range(0..=MAX_STALL_MS))]
    pub stall_ms: u64,

    /// Serve GET /health on 127.0.0.1:PORT from a thread no reactor runs (0 picks a free port,
    /// printed on stdout after the readiness line as `health on http://HOST:PORT/health`): 503
    /// naming the route while a request's poll holds its thread past --stall-ms, or did within
    /// --health-period-ms; 200 otherwise
    #[arg(long, value_name = "PORT")]
    pub health_port: Option<u16>,

    /// How long a stall that ended still fails GET /health: the probe's period, so that a
    /// probe sees every stall, not only the ones it lands in [default: Kubernetes' 10 s]
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_HEALTH_PERIOD_MS, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub health_period_ms: u64,

    /// Record the server's order of events: each connection accepted, each handler started and
    /// ended (microseconds since start, client port, path); GET /events reads and drains it
    #[arg(long)]
    pub events: bool,

    /// The slow upstream the HTTP routes call, as `GET /delay?ms=N` (it answers after N ms)
    #[arg(long, value_name = "HOST:PORT")]
    pub upstream: Option<SocketAddr>,

    /// The SQLite database the database routes query; created, with its table, if absent
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// The file the file routes read, whole
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,

    /// Run as one of this server's variants, each of which changes one arrangement that an
    /// experiment tests (listed below); repeatable; most need --threads 1
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,

    /// Print this stack's description (its crate's stack.toml: runtime, driver, fixes,
    /// handlers) and exit
    #[arg(long)]
    pub describe: bool,
}

impl Args {
    /// Parses `std::env::args` under the server's own name, exiting with a usage error (2)
    /// or the help text as clap does.
    pub fn parse_for(stack: &'static Stack) -> Args {
        let args =
            Args::try_parse_for(stack, std::env::args_os()).unwrap_or_else(|error| error.exit());
        if args.describe {
            print!("{}", stack.description);
            std::process::exit(0);
        }
        args
    }

    /// Parses the given arguments (the first is the program name).
    pub fn try_parse_for<I, T>(stack: &'static Stack, args: I) -> Result<Args, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut command = with_variants(
            Args::command()
                .name(stack.server)
                .bin_name(stack.server)
                .about(stack.about),
            stack.variants,
        );
        let matches = command.try_get_matches_from_mut(args)?;
        let args = Args::from_arg_matches(&matches).map_err(|error| error.format(&mut command))?;
        let one_thread_only = (stack.variants.iter())
            .filter(|variant| !variant.any_threads)
            .any(|variant| variant.requested(&args));
        if one_thread_only && args.threads != 1 {
            // Each variant changes one arrangement of a one-thread server.
            return Err(command.error(
                clap::error::ErrorKind::ArgumentConflict,
                "this --variant needs --threads 1",
            ));
        }
        if args.events && !stack.sees_accepts {
            // Its record would have handlers without the accepts they follow.
            return Err(command.error(
                clap::error::ErrorKind::ArgumentConflict,
                "--events: this server does not see its connections accepted (its framework \
                 accepts them with no hook), so it keeps no record of events",
            ));
        }
        if args.health_port.is_some() && args.stall_ms == 0 {
            // With the detector off, the health check could only ever answer 200: a lie.
            return Err(command.error(
                clap::error::ErrorKind::ArgumentConflict,
                "--health-port needs the stall detector: --stall-ms must not be 0",
            ));
        }
        Ok(args)
    }

    /// Whether it was started as the variant `name` (`--variant NAME`), which the stack's
    /// description lists ([`variant`]).
    pub fn wants(&self, name: &str) -> bool {
        self.variants.iter().any(|given| given == name)
    }

    /// The address to bind.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.host, self.port)
    }
}

/// `command` with `--variant` taking the server's own `variants` only, listed with what each
/// changes after the help; hidden on a server that has none.
fn with_variants(command: clap::Command, variants: &[variant::Variant]) -> clap::Command {
    let names: Vec<&str> = variants.iter().map(|variant| variant.name).collect();
    if variants.is_empty() {
        // No value is one of its variants: every --variant is a usage error.
        return command.mut_arg("variants", |arg| {
            arg.hide(true)
                .value_parser(PossibleValuesParser::new(names))
        });
    }
    let mut list = String::from("Variants (--variant NAME):");
    for variant in variants {
        let _ = write!(list, "\n  {}: {}", variant.name, variant.about);
    }
    let after = command
        .get_after_help()
        .map(ToString::to_string)
        .unwrap_or_default();
    command
        .mut_arg("variants", |arg| {
            arg.value_parser(PossibleValuesParser::new(names))
        })
        .after_help(format!("{after}\n\n{list}"))
}

#[cfg(test)]
mod tests {
    use std::sync::LazyLock;

    use super::*;

    static STACK: Stack = Stack {
        server: "demo-test",
        about: "a test server",
        offload: "",
        timer: "",
        yield_now: "",
        http_client: "",
        file_api: "",
        description: "",
        sees_accepts: true,
        variants: &[],
    };

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_for(
            &STACK,
            std::iter::once("demo-test").chain(args.iter().copied()),
        )
    }

    #[test]
    fn defaults_match_the_contract() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.addr(), "127.0.0.1:8765".parse().unwrap());
        assert_eq!(args.threads, 1);
        assert_eq!(args.sleep_ms, 500);
        assert_eq!(args.blocking_threads, None, "the runtime's own pool size");
        assert_eq!(args.stall_ms, 100, "asyncio's slow_callback_duration");
        assert!(!args.events, "no order of events unless asked");
        assert_eq!(args.health_port, None, "no health check unless asked");
        assert_eq!((args.upstream, args.db, args.file), (None, None, None));
    }

    #[test]
    fn every_flag_is_read() {
        let args = parse(&[
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--threads",
            "4",
            "--sleep-ms",
            "20",
            "--blocking-threads",
            "3",
            "--stall-ms",
            "250",
            "--events",
            "--health-port",
            "0",
            "--health-period-ms",
            "1000",
            "--upstream",
            "127.0.0.1:9000",
            "--db",
            "/tmp/demo.sqlite",
            "--file",
            "/tmp/demo.bin",
        ])
        .unwrap();
        assert_eq!(args.upstream, Some("127.0.0.1:9000".parse().unwrap()));
        assert_eq!(args.db, Some(PathBuf::from("/tmp/demo.sqlite")));
        assert_eq!(args.file, Some(PathBuf::from("/tmp/demo.bin")));
        assert_eq!(args.addr(), "0.0.0.0:0".parse().unwrap());
        assert_eq!(args.threads, 4);
        assert_eq!(args.sleep_ms, 20);
        assert_eq!(args.blocking_threads, Some(3));
        assert_eq!(args.stall_ms, 250);
        assert!(args.events);
        assert_eq!(args.health_port, Some(0));
        assert_eq!(args.health_period_ms, 1000);
        for edge in ["0", "60000"] {
            let args = parse(&["--stall-ms", edge]).unwrap();
            assert_eq!(args.stall_ms, edge.parse::<u64>().unwrap());
        }
        for edge in ["1", "10000"] {
            let args = parse(&["--blocking-threads", edge]).unwrap();
            assert_eq!(args.blocking_threads, Some(edge.parse().unwrap()));
        }
    }

    #[test]
    fn bad_values_are_usage_errors() {
        for bad in [
            &["--threads", "0"][..],
            &["--threads", "many"],
            &["--port", "70000"],
            &["--sleep-ms", "10001"],
            &["--blocking-threads", "0"],
            &["--blocking-threads", "10001"],
            &["--blocking-threads", "-1"],
            &["--stall-ms", "60001"],
            &["--stall-ms", "-1"],
            &["--stall-ms", "1.5"],
            &["--host", "nowhere"],
            &["--frobnicate"],
            &["--events", "yes"],
            &["--upstream", "localhost"],
            &["--upstream", "127.0.0.1"],
            &["--db"],
            &["--health-port", "70000"],
            &["--health-port", "0", "--stall-ms", "0"],
            &["--health-period-ms", "-1"],
        ] {
            let error = parse(bad).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{bad:?}");
        }
    }

    /// A server that does not see its accepts.
    static BLIND: Stack = Stack {
        sees_accepts: false,
        ..STACK
    };

    #[test]
    fn a_server_that_does_not_see_its_accepts_refuses_events() {
        let parse_blind = |args: &[&str]| {
            Args::try_parse_for(
                &BLIND,
                std::iter::once("demo-test").chain(args.iter().copied()),
            )
        };
        assert!(parse_blind(&[]).is_ok());
        let error = parse_blind(&["--events"]).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(error.to_string().contains("accepted"), "{error}");
        assert!(parse(&["--events"]).is_ok());
    }

    /// A server that has variants, as its description lists them.
    static NTEX: LazyLock<Stack> =
        LazyLock::new(|| Stack::described(include_str!("../../demo-ntex/stack.toml")));

    #[test]
    fn a_variant_is_one_of_the_servers_own_at_one_thread() {
        let parse_ntex = |args: &[&str]| {
            Args::try_parse_for(
                &NTEX,
                std::iter::once("demo-ntex").chain(args.iter().copied()),
            )
        };
        let args = parse_ntex(&["--variant", "epoll", "--variant", "direct-write"]).unwrap();
        assert_eq!(args.variants, ["epoll", "direct-write"]);
        assert!(args.wants("epoll"));
        assert!(!args.wants("event-interval-2"));
        for bad in [
            &["--variant", "sqpoll"][..],
            &["--variant", "epoll", "--threads", "2"],
        ] {
            assert_eq!(parse_ntex(bad).unwrap_err().exit_code(), 2, "{bad:?}");
        }
        let help = parse_ntex(&["--help"]).unwrap_err().to_string();
        assert!(help.contains("--variant <NAME>"), "{help}");
        assert!(
            help.contains("  epoll: ntex-net's polling reactor"),
            "{help}"
        );
        assert_eq!(parse(&["--variant", "epoll"]).unwrap_err().exit_code(), 2);
        let help = parse(&["--help"]).unwrap_err().to_string();
        assert!(
            !help.contains("--variant"),
            "a server without variants: {help}"
        );
    }

    #[test]
    fn help_names_the_server() {
        let help = parse(&["--help"]).unwrap_err().to_string();
        assert!(help.contains("demo-test"), "{help}");
        assert!(help.contains("a test server"), "{help}");
        assert!(help.contains("--sleep-ms"), "{help}");
        assert!(help.contains("--blocking-threads <K>"), "{help}");
        assert!(help.contains("--stall-ms <N>"), "{help}");
        assert!(help.contains("/stalls"), "{help}");
        assert!(help.contains("--events"), "{help}");
        assert!(help.contains("/events"), "{help}");
        assert!(help.contains("/ok-cpu-pool"), "{help}");
        assert!(help.contains("--upstream <HOST:PORT>"), "{help}");
        assert!(help.contains("--health-port <PORT>"), "{help}");
        assert!(help.contains("/ok-file-await"), "{help}");
    }
}
