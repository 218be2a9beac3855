//! What a burst request costs in CPU: the client's beside the server's, so that a burst is
//! known to measure the server and not the client.
//!
//! - `per_request/client_raw`: this process, firing bursts on the burst's own HTTP/1.1
//!   ([`burst_meter::wire`]), as the comparison and the sweep do;
//! - `per_request/client_hyper`: this process, firing the same bursts on hyper's client
//!   connections (a handshake and a connection task per request), the burst's former path and
//!   still the probes';
//! - `per_request/server`: the server, demo-axum on one reactor thread, answering the raw
//!   bursts.
//!
//! Each burst is 1,000 concurrent `GET /ok-await` with a 10 ms sleep, each request on a
//! connection of its own opened as it is sent (`--connect during`): connecting is part of the
//! client's cost per request, accepting part of the server's. The "time" criterion reports is
//! CPU time per request, user and system, not wall time: the process's own CPU clock for the
//! client (every thread of it, as the sweep's figure), `/proc/PID/stat` for the server. Those
//! count in 10 ms ticks, so a sample is thousands of requests, always whole bursts.
//!
//! It needs the release server beside this bench's binary (`cargo build --release --bins`);
//! without it, it says so and measures nothing.

use std::time::Duration;

use burst_meter::burst::{self, Connect, REQUEST_TIMEOUT};
use burst_meter::cpu::process_cpu_ms;
use burst_meter::http::{Endpoint, get_once};
use burst_meter::target::{ServerProcess, default_bin_dir};
use criterion::{Criterion, SamplingMode};
use nix::time::{ClockId, clock_gettime};
use tokio::runtime::Runtime;

/// Requests per burst: enough that a sample's server CPU spans many 10 ms ticks.
const BURST: usize = 1_000;

/// The server measured, and its route.
const SERVER: &str = "demo-axum";
const ROUTE: &str = "/ok-await";

/// The route's sleep: short, so that a burst takes little more than its requests' own work.
const SLEEP_MS: u64 = 10;

/// Whose CPU a benchmark reads, on which client.
#[derive(Debug, Clone, Copy)]
enum Meter {
    ClientRaw,
    ClientHyper,
    Server,
}

/// The spawned server, stopped (SIGTERM, then SIGKILL) when dropped, within its runtime.
struct Server<'a> {
    process: Option<ServerProcess>,
    runtime: &'a Runtime,
}

impl<'a> Server<'a> {
    /// Starts the release server beside this binary, or says why it cannot.
    fn start(runtime: &'a Runtime) -> Result<Server<'a>, String> {
        let binary = default_bin_dir().join(SERVER);
        if !binary.is_file() {
            return Err(format!(
                "no {SERVER} at {}: build it first (`cargo build --release --bins`)",
                binary.display()
            ));
        }
        let args = ["--threads", "1", "--sleep-ms", &SLEEP_MS.to_string()].map(String::from);
        let process = runtime
            .block_on(ServerProcess::start(SERVER, &binary, &args))
            .map_err(|error| error.to_string())?;
        Ok(Server {
            process: Some(process),
            runtime,
        })
    }

    fn process(&self) -> &ServerProcess {
        self.process.as_ref().expect("stopped only when dropped")
    }
}

impl Drop for Server<'_> {
    fn drop(&mut self) {
        let _runtime = self.runtime.enter();
        drop(self.process.take());
    }
}

/// This process's CPU time so far, every thread of it, to the nanosecond.
fn this_process_cpu() -> Duration {
    let spent = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).expect("a process CPU clock");
    Duration::from(spent)
}

/// The server's CPU time so far, in 10 ms ticks.
fn server_cpu(pid: u32) -> Duration {
    let ms = process_cpu_ms(pid).expect("the server's /proc/PID/stat");
    Duration::from_secs_f64(ms / 1000.0)
}

/// One burst on the burst's own client; panics unless every request was answered 200.
async fn raw_burst(endpoint: &Endpoint, path: &str) {
    let burst = burst::fire(endpoint, path, BURST, REQUEST_TIMEOUT, Connect::During).await;
    assert_eq!(burst.ok(), BURST, "{:?}", burst.errors());
}

/// The same burst on hyper's client connections, a task and a connection per request as the
/// burst had them.
async fn hyper_burst(endpoint: &Endpoint, path: &str) {
    let requests: Vec<_> = (0..BURST)
        .map(|_| {
            let (endpoint, path) = (endpoint.clone(), path.to_owned());
            tokio::spawn(async move { get_once(&endpoint, &path, REQUEST_TIMEOUT).await })
        })
        .collect();
    for request in requests {
        let reply = request.await.expect("no panic").expect("an answer");
        assert_eq!(reply.status, 200);
    }
}

/// The CPU `meter` reads over enough whole bursts for `requests`, scaled to `requests`: the
/// time per request is criterion's division of it.
async fn cpu_for(meter: Meter, server: &ServerProcess, requests: u64) -> Duration {
    let (endpoint, pid) = (server.endpoint(), server.pid().expect("running"));
    let bursts = requests.div_ceil(BURST as u64);
    let read = || match meter {
        Meter::ClientRaw | Meter::ClientHyper => this_process_cpu(),
        Meter::Server => server_cpu(pid),
    };
    let before = read();
    for _ in 0..bursts {
        match meter {
            Meter::ClientRaw | Meter::Server => raw_burst(endpoint, ROUTE).await,
            Meter::ClientHyper => hyper_burst(endpoint, ROUTE).await,
        }
    }
    let spent = read().saturating_sub(before);
    spent.mul_f64(requests as f64 / (bursts * BURST as u64) as f64)
}

fn per_request(c: &mut Criterion, server: &Server<'_>) {
    let mut group = c.benchmark_group("per_request");
    // Each iteration is a request, each sample whole bursts: few samples, and flat ones.
    // Criterion plans the samples with the wall time of the warm-up's calls, bursts short of
    // 1,000 requests among them: a warm-up of several seconds gets to whole bursts, and then
    // each sample is about ten of them (some 10,000 requests, a second of the server's CPU).
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(3))
        .measurement_time(Duration::from_secs(10));
    for (name, meter) in [
        ("client_raw", Meter::ClientRaw),
        ("client_hyper", Meter::ClientHyper),
        ("server", Meter::Server),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|requests| {
                (server.runtime).block_on(cpu_for(meter, server.process(), requests))
            });
        });
    }
    group.finish();
}

fn main() {
    // As the bench client's binary runs: two workers, the bursts fired from the main thread.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let server = match Server::start(&runtime) {
        Ok(server) => server,
        Err(reason) => {
            eprintln!("burst_cpu: skipped: {reason}");
            return;
        }
    };
    let mut criterion = Criterion::default().configure_from_args();
    per_request(&mut criterion, &server);
    criterion.final_summary();
}
