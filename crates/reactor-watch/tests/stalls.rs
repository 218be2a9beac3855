//! The watch against real blocking, on a tiny std-only executor. Margins are generous: the
//! tests check the shape of the timings (which poll, how many reports, roughly how long), not
//! exact values, on a machine that may be busy.

mod common;

use std::collections::BTreeMap;
use std::future::{Future, poll_fn};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::Poll;
use std::thread;
use std::time::Duration;

use common::{Capture, block_on, burn, watch, watch_with};
use reactor_watch::{CpuTime, Report, RouteStalls, Stalls, current_label};

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// How long a slow poll holds the thread in these tests, at a threshold of 50 ms: the
/// watchdog (every 25 ms) must report it while it runs, exactly once, and a window of
/// 250 ms leaves it room to be late on a busy machine (a window of 70 ms did not).
const STALL: Duration = Duration::from_millis(300);

#[test]
fn slow_poll_is_reported_while_running_and_when_it_returns() {
    let returned = Arc::new(AtomicBool::new(false));
    // What the sink saw: (label, had the poll returned yet?) per "still running" report.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let all = Capture::default();
    let w = {
        let (returned, seen, all) = (Arc::clone(&returned), Arc::clone(&seen), all.clone());
        watch_with(50, move |report| {
            if let Report::StillRunning { label, .. } = report {
                seen.lock()
                    .unwrap()
                    .push((*label, returned.load(Ordering::SeqCst)));
            }
            eprintln!("captured: {report}");
            all.push(report.clone());
        })
    };
    let bad = w.label("GET /bad");
    block_on(w.wrap(bad, {
        let returned = Arc::clone(&returned);
        async move {
            thread::sleep(STALL);
            returned.store(true, Ordering::SeqCst);
        }
    }));

    assert_eq!(*seen.lock().unwrap(), [("GET /bad", false)]);
    let stalls = w.stalls();
    assert_eq!(stalls.threshold_ms, 50.0);
    assert_eq!(stalls.slow_polls, 1);
    assert_eq!(stalls.still_running_reports, 1);
    assert!(
        stalls.longest_ms >= STALL.as_secs_f64() * 1e3 * 0.8,
        "{stalls:?}"
    );
    assert!(stalls.longest_ms < 2_000.0, "{stalls:?}");
    assert_eq!(stalls.by_route.keys().collect::<Vec<_>>(), ["GET /bad"]);
    assert_eq!(stalls.by_route["GET /bad"].slow_polls, 1);
    assert_eq!(stalls.by_route["GET /bad"].longest_ms, stalls.longest_ms);

    let reports = all.reports();
    assert_eq!(reports.len(), 2, "{reports:?}");
    let Report::StillRunning {
        blocked, threshold, ..
    } = &reports[0]
    else {
        panic!("first report should be StillRunning: {reports:?}");
    };
    assert!(*blocked > ms(50) && *blocked < STALL, "{blocked:?}");
    assert_eq!(*threshold, ms(50));
    let Report::Returned {
        label,
        thread,
        held,
        ..
    } = &reports[1]
    else {
        panic!("second report should be Returned: {reports:?}");
    };
    assert_eq!(*label, "GET /bad");
    assert_eq!(&**thread, thread::current().name().unwrap());
    // The watch's clock is coarse: a duration can read one tick short.
    assert!(
        *held + reactor_watch::clock_resolution() >= STALL,
        "{held:?}"
    );
    let line = reports[1].to_string();
    assert!(
        line.starts_with(&format!(
            "GET /bad held reactor thread {} for ",
            thread::current().name().unwrap()
        )),
        "{line}"
    );
    assert!(line.contains(" ms (limit 50 ms; "), "{line}");
}

#[test]
fn a_poll_that_never_returns_is_caught_by_the_watchdog() {
    let (report_tx, report_rx) = mpsc::channel::<Report>();
    let report_tx = Mutex::new(report_tx);
    let w = watch_with(30, move |report| {
        let _ = report_tx.lock().unwrap().send(report.clone());
    });
    let stuck = w.label("GET /stuck");
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let poller = thread::Builder::new()
        .name("stuck-reactor".into())
        .spawn({
            let w = w.clone();
            move || {
                // Blocks inside one poll until the test lets it go: to the watchdog, a poll
                // that never returns.
                block_on(w.wrap(stuck, async move {
                    release_rx.recv_timeout(Duration::from_secs(10)).ok();
                }));
            }
        })
        .unwrap();

    let report = report_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(!poller.is_finished());
    assert_eq!(w.stalls().slow_polls, 0, "nothing returned yet");
    assert_eq!(w.stalls().still_running_reports, 1);
    let Report::StillRunning { label, thread, .. } = &report else {
        panic!("expected StillRunning, got {report:?}");
    };
    assert_eq!((*label, &**thread), ("GET /stuck", "stuck-reactor"));
    assert!(
        report
            .to_string()
            .starts_with("reactor thread stuck-reactor blocked for ")
    );
    assert!(
        report
            .to_string()
            .ends_with(" ms in GET /stuck (still running)")
    );

    // Still stuck a while later: reported once only.
    thread::sleep(ms(150));
    assert!(!poller.is_finished());
    assert_eq!(w.stalls().still_running_reports, 1);

    release_tx.send(()).unwrap();
    poller.join().unwrap();
    let returned = report_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(matches!(
        returned,
        Report::Returned {
            label: "GET /stuck",
            ..
        }
    ));
    assert_eq!(w.stalls().slow_polls, 1);
    assert!(w.stalls().longest_ms >= 150.0);
}

#[test]
fn a_slow_future_with_short_polls_is_not_a_stall() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let label = w.label("GET /slow-but-async");
    let polls = Arc::new(AtomicUsize::new(0));
    let started = std::time::Instant::now();
    // Pending at once, woken by another thread after 150 ms: slow overall, every poll short.
    let done = Arc::new(AtomicBool::new(false));
    block_on(w.wrap(label, {
        let polls = Arc::clone(&polls);
        poll_fn(move |cx| {
            polls.fetch_add(1, Ordering::SeqCst);
            if done.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            if polls.load(Ordering::SeqCst) == 1 {
                let (done, waker) = (Arc::clone(&done), cx.waker().clone());
                thread::spawn(move || {
                    thread::sleep(ms(150));
                    done.store(true, Ordering::SeqCst);
                    waker.wake();
                });
            }
            Poll::Pending
        })
    }));
    assert!(started.elapsed() >= ms(150));
    assert!(polls.load(Ordering::SeqCst) >= 2);
    assert_eq!(w.stalls().slow_polls, 0);
    assert_eq!(w.stalls().still_running_reports, 0);
    assert_eq!(capture.reports(), []);
}

#[test]
fn a_poll_under_the_threshold_is_not_a_stall() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let label = w.label("GET /quick");
    block_on(w.wrap(label, async { thread::sleep(ms(10)) }));
    // Give a late watchdog a chance to misreport.
    thread::sleep(ms(60));
    assert_eq!(w.stalls().slow_polls, 0);
    assert_eq!(w.stalls().still_running_reports, 0);
    assert_eq!(capture.reports(), []);
}

#[test]
fn nested_wrappers_restore_the_outer_label() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let (outer, inner) = (w.label("nested /outer"), w.label("nested /inner"));
    assert_eq!(current_label(), None);
    block_on(w.wrap(outer, {
        let w = w.clone();
        async move {
            assert_eq!(current_label(), Some(outer));
            w.wrap(inner, async move {
                assert_eq!(current_label(), Some(inner));
            })
            .await;
            assert_eq!(current_label(), Some(outer));
            // A stall after the inner future returned belongs to the outer label.
            thread::sleep(STALL);
        }
    }));
    assert_eq!(current_label(), None);

    let still: Vec<_> = capture.still_running().iter().map(Report::label).collect();
    assert_eq!(still, ["nested /outer"]);
    let returned: Vec<_> = capture.returned().iter().map(Report::label).collect();
    assert_eq!(returned, ["nested /outer"]);
    assert_eq!(
        w.stalls().by_route.keys().collect::<Vec<_>>(),
        ["nested /outer"]
    );
}

#[test]
fn a_slow_inner_poll_is_reported_once_and_counted_for_both_wrappers() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let (outer, inner) = (w.label("nested2 /outer"), w.label("nested2 /inner"));
    block_on(w.wrap(outer, {
        let w = w.clone();
        async move {
            w.wrap(inner, async { thread::sleep(STALL) }).await;
        }
    }));
    // The watchdog names the innermost label, once for the one stall of the thread...
    let still: Vec<_> = capture.still_running().iter().map(Report::label).collect();
    assert_eq!(still, ["nested2 /inner"]);
    // ...and each wrapper counts its own slow poll, the inner one first.
    let returned: Vec<_> = capture.returned().iter().map(Report::label).collect();
    assert_eq!(returned, ["nested2 /inner", "nested2 /outer"]);
    let stalls = w.stalls();
    assert_eq!(stalls.slow_polls, 2);
    assert_eq!(stalls.still_running_reports, 1);
    assert!(
        stalls.by_route["nested2 /outer"].longest_ms
            >= stalls.by_route["nested2 /inner"].longest_ms
    );
    // The watchdog's CPU sample of the inner poll was taken during the outer one: both use it.
    if cfg!(target_os = "linux") {
        for report in capture.returned() {
            let Report::Returned { cpu, .. } = report else {
                unreachable!()
            };
            assert!(matches!(cpu, CpuTime::Sampled { .. }), "{cpu:?}");
        }
    }
}

#[test]
fn polls_on_two_threads_get_their_own_slots() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let threads: Vec<_> = [("reactor-a", "GET /a"), ("reactor-b", "GET /b")]
        .into_iter()
        .map(|(name, route)| {
            let w = w.clone();
            thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    let label = w.label(route);
                    block_on(w.wrap(label, async {
                        assert_eq!(current_label(), Some(label));
                        thread::sleep(STALL);
                        assert_eq!(current_label(), Some(label));
                    }));
                })
                .unwrap()
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }

    let pairs = |reports: Vec<Report>| -> BTreeMap<String, String> {
        reports
            .iter()
            .map(|r| (r.thread().to_owned(), r.label().to_owned()))
            .collect()
    };
    let expected = BTreeMap::from([
        ("reactor-a".to_owned(), "GET /a".to_owned()),
        ("reactor-b".to_owned(), "GET /b".to_owned()),
    ]);
    assert_eq!(capture.still_running().len(), 2);
    assert_eq!(pairs(capture.still_running()), expected);
    assert_eq!(capture.returned().len(), 2);
    assert_eq!(pairs(capture.returned()), expected);
    let stalls = w.stalls();
    assert_eq!(stalls.slow_polls, 2);
    assert_eq!(stalls.still_running_reports, 2);
    assert_eq!(stalls.by_route["GET /a"].slow_polls, 1);
    assert_eq!(stalls.by_route["GET /b"].slow_polls, 1);
}

/// Runs one poll of [`STALL`] (threshold 50 ms) and returns its CPU figure and duration.
fn cpu_of_slow_poll(label: &str, body: impl Future<Output = ()>) -> (CpuTime, Duration) {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let label = w.label(label);
    block_on(w.wrap(label, body));
    let returned = capture.returned();
    assert_eq!(returned.len(), 1, "{returned:?}");
    let Report::Returned { cpu, held, .. } = &returned[0] else {
        unreachable!()
    };
    if let CpuTime::Sampled { on_cpu, window } = cpu {
        assert!(on_cpu <= window && window < held, "{cpu:?}, held {held:?}");
        // The watchdog first sees the poll within 25 ms (its interval) of the start, later
        // if it is starved of CPU itself.
        assert!(*window >= ms(25), "{cpu:?}");
    }
    (*cpu, *held)
}

/// This thread's CPU time, read independently of the crate (Linux only).
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        stat.split_whitespace().next()?.parse().ok()?,
    ))
}

/// Two scheduler ticks at HZ=100: how far tick-granular readings may be off.
const TICKS: Duration = Duration::from_millis(21);

#[test]
fn a_cpu_burning_poll_reports_cpu_close_to_its_wall_time() {
    let total = Arc::new(Mutex::new(None));
    let (cpu, held) = cpu_of_slow_poll("cpu /burn", {
        let total = Arc::clone(&total);
        async move {
            let before = thread_cpu();
            burn(STALL);
            *total.lock().unwrap() = Some((thread_cpu(), before));
        }
    });
    if !cfg!(target_os = "linux") {
        assert_eq!(cpu, CpuTime::Unavailable);
        return;
    }
    let CpuTime::Sampled { on_cpu, window } = cpu else {
        panic!("expected a CPU sample, got {cpu:?}");
    };
    // Against the thread's own CPU time over the whole poll: the report's window misses at
    // most the part of the poll before the watchdog's sample.
    let (Some(after), Some(before)) = total.lock().unwrap().unwrap() else {
        panic!("schedstat unreadable")
    };
    let poll_cpu = after - before;
    assert!(on_cpu <= poll_cpu + TICKS, "{cpu:?} vs {poll_cpu:?}");
    assert!(
        on_cpu + (held - window) + TICKS >= poll_cpu,
        "{cpu:?} vs {poll_cpu:?} in {held:?}"
    );
    // Close to the window on an idle machine (119 ms of 121 ms, typically); on an
    // oversubscribed one, the thread's share of a core, which can drop below a fifth. Either
    // way far from the sleeping poll's zero.
    assert!(on_cpu >= ms(5), "{cpu:?}");
}

#[test]
fn a_sleeping_poll_reports_cpu_near_zero() {
    let (cpu, _) = cpu_of_slow_poll("cpu /sleep", async { thread::sleep(STALL) });
    if !cfg!(target_os = "linux") {
        assert_eq!(cpu, CpuTime::Unavailable);
        return;
    }
    let CpuTime::Sampled { on_cpu, .. } = cpu else {
        panic!("expected a CPU sample, got {cpu:?}");
    };
    assert!(on_cpu <= TICKS, "{cpu:?}");
}

#[test]
fn a_panicking_poll_leaves_the_slot_clean() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let label = w.label("GET /panics");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(w.wrap(label, async {
            assert_eq!(current_label(), Some(label));
            panic!("handler bug");
        }));
    }));
    assert!(caught.is_err());
    assert_eq!(current_label(), None);
    // The thread's slot still works afterwards.
    block_on(w.wrap(label, async move {
        assert_eq!(current_label(), Some(label));
    }));
    assert_eq!(current_label(), None);
}

#[test]
fn stalls_json_golden() {
    let stalls = Stalls {
        threshold_ms: 100.0,
        slow_polls: 3,
        longest_ms: 301.2,
        by_route: BTreeMap::from([(
            "GET /bad".to_owned(),
            RouteStalls {
                slow_polls: 3,
                longest_ms: 301.2,
            },
        )]),
        still_running_reports: 3,
    };
    assert_eq!(
        stalls.to_json(),
        r#"{"threshold_ms":100,"slow_polls":3,"longest_ms":301.2,"by_route":{"GET /bad":{"slow_polls":3,"longest_ms":301.2}},"still_running_reports":3}"#
    );
}

#[test]
fn stalls_json_rounds_to_the_microsecond_and_escapes_labels() {
    let route = |slow_polls, longest_ms| RouteStalls {
        slow_polls,
        longest_ms,
    };
    let stalls = Stalls {
        threshold_ms: 2.5,
        slow_polls: 3,
        longest_ms: 150.123_456_7,
        by_route: BTreeMap::from([
            ("GET /\"quoted\"\\back".to_owned(), route(1, 150.123_456_7)),
            ("tab\tnew\nline\u{1}é".to_owned(), route(2, 0.000_4)),
        ]),
        still_running_reports: 0,
    };
    assert_eq!(
        stalls.to_json(),
        concat!(
            r#"{"threshold_ms":2.5,"slow_polls":3,"longest_ms":150.123,"by_route":{"#,
            r#""GET /\"quoted\"\\back":{"slow_polls":1,"longest_ms":150.123},"#,
            r#""tab\tnew\nline\u0001é":{"slow_polls":2,"longest_ms":0}},"#,
            r#""still_running_reports":0}"#
        )
    );
    assert_eq!(
        Stalls::default().to_json(),
        r#"{"threshold_ms":0,"slow_polls":0,"longest_ms":0,"by_route":{},"still_running_reports":0}"#
    );
}

#[test]
fn a_live_watch_renders_its_counters() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let label = w.label("GET /json \"live\"");
    block_on(w.wrap(label, async { thread::sleep(STALL) }));
    let json = w.stalls_json();
    assert!(
        json.starts_with(r#"{"threshold_ms":50,"slow_polls":1,"longest_ms":"#),
        "{json}"
    );
    assert!(
        json.contains(r#","by_route":{"GET /json \"live\"":{"slow_polls":1,"longest_ms":"#),
        "{json}"
    );
    assert!(json.ends_with(r#"}},"still_running_reports":1}"#), "{json}");
}

#[test]
fn handles_are_send_sync_clone_and_debug() {
    fn shared<T: Send + Sync + Clone + std::fmt::Debug>(_: &T) {}
    fn movable<T: Send + Unpin + std::fmt::Debug>(_: &T) {}
    let capture = Capture::default();
    let on = watch(100, &capture);
    shared(&on);
    shared(&reactor_watch::Watch::disabled());
    let label = on.label("GET /debug");
    let future = on.wrap(label, async { 1 });
    movable(&future);
    assert_eq!(
        format!("{future:?}"),
        r#"Watched { label: Label("GET /debug"), enabled: true, .. }"#
    );
    assert!(format!("{on:?}").starts_with("Watch { enabled: true, id: "));
    assert_eq!(
        format!("{:?}", reactor_watch::Watch::disabled()),
        "Watch { enabled: false }"
    );
    assert_eq!(block_on(future), 1);
}
