//! The probe's command line: a server and its routes, or none for the probe's own check.

use std::net::{IpAddr, ToSocketAddrs as _};
use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use serde::{Deserialize, Serialize};

use super::defaults;
use burst_meter::http::Endpoint;
use burst_meter::stats::Verdict;
use burst_meter::target::Folders;

/// Points the probe at your server: for each --route, requests alone, one after another (for
/// their median), then --concurrency at once while the health check is sent every --every-ms,
/// repeated --trials times, every request on a connection of its own closed after its answer;
/// the verdict per route: serialises (one at a time, and your health check waited: the thread
/// that serves it was blocked), bounded (a few at a time: a pool, or the cores), concurrent,
/// inconclusive (with what would tell) or failed (with why), judged from each request's time
/// once connected; connections the server's listen backlog dropped are a finding of their
/// own. Without a URL it checks itself: stub servers, Python's standard-library servers and
/// uvicorn as they ship, the FastAPI app and the demo servers, each route with the verdict it
/// must get
#[derive(Debug, clap::Args)]
#[command(after_help = EXIT_STATUS)]
pub struct ProbeArgs {
    /// Your server, already running, e.g. http://127.0.0.1:8000 (loopback only, unless
    /// --allow-remote)
    #[arg(value_name = "URL", value_parser = Endpoint::parse)]
    pub url: Option<Endpoint>,

    /// A route to judge, repeatable: `[METHOD ]PATH[ BODY]`, e.g. `/report?days=30` or
    /// `POST /search {"q":"x"}`; give it the work it does in production
    #[arg(long = "route", value_name = "ROUTE", value_parser = Call::parse, requires = "url")]
    pub routes: Vec<Call>,

    /// The path of your health check, sent with GET
    #[arg(long, default_value = defaults::HEALTH, value_parser = path, requires = "url")]
    pub health: String,

    /// A header sent with every route request, repeatable, e.g. `content-type: application/json`
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = header, requires = "url")]
    pub headers: Vec<(String, String)>,

    /// Requests sent at once
    #[arg(short = 'n', long, default_value_t = defaults::CONCURRENCY, value_parser = RangedU64ValueParser::<usize>::new().range(2..=1000))]
    pub concurrency: usize,

    /// Requests sent alone, one after another, for the median a request takes
    #[arg(long, default_value_t = defaults::ALONE, value_parser = RangedU64ValueParser::<usize>::new().range(1..=50))]
    pub alone: usize,

    /// Rounds of --concurrency at once, per route
    #[arg(long, default_value_t = defaults::TRIALS, value_parser = RangedU64ValueParser::<usize>::new().range(1..=20))]
    pub trials: usize,

    /// How often the health check is sent, in milliseconds, whether or not the last returned
    #[arg(long, default_value_t = defaults::EVERY_MS, value_parser = clap::value_parser!(u64).range(5..=1000))]
    pub every_ms: u64,

    /// How long one request may take, in milliseconds, before it counts as failed
    #[arg(long, default_value_t = defaults::TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(100..=120_000))]
    pub timeout_ms: u64,

    /// Send the health checks on one connection kept alive, as a load balancer that pools
    /// its connections does [default: a new connection per check, closed after its answer,
    /// as Kubernetes' prober sends them]
    #[arg(long)]
    pub keep_alive_health: bool,

    /// Exit with status 3 if any route gets one of these verdicts, e.g. `serialises` or
    /// `serialises,bounded`: a gate for CI
    #[arg(long, value_name = "VERDICT[,VERDICT]", value_delimiter = ',', value_parser = verdict)]
    pub fail_on: Vec<Verdict>,

    /// Write the verdicts to stdout as JSON (verdicts.json's contents), for a script; the
    /// lines per route then go to stderr
    #[arg(long)]
    pub json: bool,

    /// Probe a server that is not on this machine's loopback (it gets bursts of requests:
    /// only one that is yours to load)
    #[arg(long, requires = "url")]
    pub allow_remote: bool,

    /// Folder of the demo server binaries, for the probe's own check [default: the folder of
    /// this binary]
    #[arg(long, value_name = "DIR", conflicts_with = "url")]
    pub bin_dir: Option<PathBuf>,

    /// Folder of the FastAPI reference app and its .venv, for the probe's own check
    /// [default: reference/fastapi in this repository]
    #[arg(long, value_name = "DIR", conflicts_with = "url")]
    pub reference_dir: Option<PathBuf>,

    /// Folder for PROBE.md, verdicts.json and probe.json
    #[arg(long, default_value = defaults::OUT)]
    pub out: PathBuf,
}

/// The exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "Exit status: 0 no route failed, and none got a verdict named by \
    --fail-on; 1 a route failed, or a server could not be probed; 2 a usage error (nothing \
    probed); 3 a route got a verdict named by --fail-on (whatever else failed)";

/// The status the probe exits with when a route got a verdict named by `--fail-on`.
pub const FAILED_ON_STATUS: u8 = 3;

/// The verdicts `--fail-on` takes, by the names the verdicts are printed with.
const VERDICTS: [Verdict; 5] = [
    Verdict::Serialises,
    Verdict::Bounded,
    Verdict::Concurrent,
    Verdict::Inconclusive,
    Verdict::Failed,
];

/// A verdict by its name: `serialises`, `bounded`, `concurrent`, `inconclusive`, `failed`.
fn verdict(value: &str) -> Result<Verdict, String> {
    let value = value.trim();
    (VERDICTS.into_iter())
        .find(|verdict| verdict.to_string() == value)
        .ok_or_else(|| {
            let names: Vec<String> = VERDICTS.iter().map(Verdict::to_string).collect();
            format!("{value:?} is not a verdict: one of {}", names.join(", "))
        })
}

impl ProbeArgs {
    /// What makes the command line unusable beyond what clap checks: a URL without a route,
    /// or one that is not on loopback without --allow-remote.
    pub fn refused(&self) -> Option<String> {
        let endpoint = self.url.as_ref()?;
        if self.routes.is_empty() {
            return Some(format!(
                "name the routes of {endpoint} to judge with --route, e.g. --route /report"
            ));
        }
        if self.allow_remote {
            return None;
        }
        match loopback(endpoint) {
            Ok(true) => None,
            Ok(false) => Some(format!(
                "{endpoint} is not on this machine's loopback: the probe sends it bursts of \
                 requests; pass --allow-remote if the server is yours to load"
            )),
            Err(error) => Some(format!("cannot resolve {}: {error}", endpoint.host)),
        }
    }

    /// Whether the server is on this machine, where the kernel shows its listener: the
    /// probe's own servers, or a URL on loopback.
    pub fn local(&self) -> bool {
        (self.url.as_ref()).is_none_or(|endpoint| loopback(endpoint).unwrap_or(false))
    }

    /// Where the probe's own check finds the servers it starts.
    pub fn folders(&self) -> Folders {
        Folders::or_default(self.bin_dir.clone(), self.reference_dir.clone())
    }
}

/// Whether every address `endpoint`'s host resolves to is a loopback address.
fn loopback(endpoint: &Endpoint) -> std::io::Result<bool> {
    if let Ok(ip) = endpoint.host.parse::<IpAddr>() {
        return Ok(ip.is_loopback());
    }
    let addresses: Vec<_> = (endpoint.host.as_str(), endpoint.port)
        .to_socket_addrs()?
        .collect();
    Ok(!addresses.is_empty() && addresses.iter().all(|address| address.ip().is_loopback()))
}

/// One route to judge: its method, its path and query, and its body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub method: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
}

impl Call {
    /// The path without its query.
    pub fn path_alone(&self) -> &str {
        self.path
            .split_once('?')
            .map_or(&self.path, |(path, _)| path)
    }

    /// `GET path`.
    pub fn get(path: &str) -> Call {
        Call {
            method: "GET".to_owned(),
            path: path.to_owned(),
            body: String::new(),
        }
    }

    /// `[METHOD ]PATH[ BODY]`: a method is a word of capitals, the path starts with `/`, the
    /// body is the rest.
    pub fn parse(value: &str) -> Result<Call, String> {
        let value = value.trim();
        let (method, rest) = match value.split_once(' ') {
            Some((word, rest))
                if !word.is_empty() && word.chars().all(|c| c.is_ascii_uppercase()) =>
            {
                (word, rest.trim_start())
            }
            _ if value.starts_with('/') => ("GET", value),
            _ => {
                return Err(format!(
                    "{value:?} is not [METHOD ]PATH[ BODY], e.g. /report or POST /search {{\"q\":1}}"
                ));
            }
        };
        let (path, body) = rest.split_once(' ').unwrap_or((rest, ""));
        let path = self::path(path)?;
        Ok(Call {
            method: method.to_owned(),
            path,
            body: body.trim().to_owned(),
        })
    }
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        if !self.body.is_empty() {
            write!(f, " {}", self.body)?;
        }
        Ok(())
    }
}

/// A path and query: starts with `/`, no spaces or control characters.
fn path(value: &str) -> Result<String, String> {
    let fine =
        value.starts_with('/') && !value.chars().any(|c| c.is_whitespace() || c.is_control());
    fine.then(|| value.to_owned())
        .ok_or_else(|| format!("{value:?} is not a path: it must start with / and hold no spaces"))
}

/// `NAME: VALUE`, a header as written on the wire.
fn header(value: &str) -> Result<(String, String), String> {
    let (name, field) = value
        .split_once(':')
        .ok_or_else(|| format!("{value:?} is not NAME: VALUE"))?;
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(format!("{name:?} is not a header name"));
    }
    if field.chars().any(|c| c.is_control()) {
        return Err(format!("the value of {name} holds a control character"));
    }
    Ok((name.to_owned(), field.trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_a_path_with_an_optional_method_and_body() {
        assert_eq!(
            Call::parse("/report?days=3").unwrap(),
            Call::get("/report?days=3")
        );
        let post = Call::parse(r#"POST /search {"q": 1}"#).unwrap();
        assert_eq!(
            (post.method.as_str(), post.path.as_str()),
            ("POST", "/search")
        );
        assert_eq!(post.body, r#"{"q": 1}"#);
        assert_eq!(post.to_string(), r#"POST /search {"q": 1}"#);
        for bad in ["report", "get /x", "POST", "/a\tb", ""] {
            assert!(Call::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn headers_are_name_colon_value() {
        assert_eq!(
            header("content-type: application/json").unwrap(),
            ("content-type".to_owned(), "application/json".to_owned())
        );
        for bad in ["no colon", ": x", "bad name: x", "x: a\r\nb"] {
            assert!(header(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_loopback_hosts_pass_without_the_flag() {
        let at = |url: &str| loopback(&Endpoint::parse(url).unwrap()).unwrap();
        assert!(at("http://127.0.0.1:1"));
        assert!(at("http://[::1]:1"));
        assert!(at("http://localhost:1"));
        assert!(!at("http://10.0.0.1:1"));
        assert!(!at("http://192.0.2.7:8000"));
    }
}
