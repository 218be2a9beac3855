//! The watch against real blocking, on a tiny std-only executor: which polls it reports, when,
//! and how often. Margins are generous: the tests check the shape of the timings (which poll,
//! how many reports, roughly how long), not exact values, on a machine that may be busy.

mod common;

use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::Poll;
use std::thread;
use std::time::Duration;

use common::{Capture, STALL, block_on, ms, watch, watch_with};
use reactor_watch::{Label, Report};

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
    let bad = Label::new("GET /bad");
    block_on(w.wrap(bad, {
        let returned = Arc::clone(&returned);
        async move {
            thread::sleep(STALL);
            returned.store(true, Ordering::SeqCst);
        }
    }));

    assert_eq!(*seen.lock().unwrap(), [("GET /bad", false)]);
    let stalls = w.stalls();
    assert_eq!(stalls.threshold, ms(50));
    assert_eq!(stalls.slow_polls, 1);
    assert_eq!(stalls.still_running_reports, 1);
    assert!(stalls.longest >= STALL.mul_f64(0.8), "{stalls:?}");
    assert!(stalls.longest < ms(2_000), "{stalls:?}");
    assert_eq!(stalls.by_route.keys().collect::<Vec<_>>(), ["GET /bad"]);
    assert_eq!(stalls.by_route["GET /bad"].slow_polls, 1);
    assert_eq!(stalls.by_route["GET /bad"].longest, stalls.longest);

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
    // The watch's clock is coarse: a duration can read one tick short, and a little more
    // when the kernel runs a tick late (300 ms once read as 296 ms less 7 ns, at 4 ms ticks).
    assert!(
        *held + 2 * reactor_watch::clock_resolution() >= STALL,
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
    let stuck = Label::new("GET /stuck");
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
    assert!(w.stalls().longest >= ms(150));
}

#[test]
fn a_slow_future_with_short_polls_is_not_a_stall() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let label = Label::new("GET /slow-but-async");
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
    let label = Label::new("GET /quick");
    block_on(w.wrap(label, async { thread::sleep(ms(10)) }));
    // Give a late watchdog a chance to misreport.
    thread::sleep(ms(60));
    assert_eq!(w.stalls().slow_polls, 0);
    assert_eq!(w.stalls().still_running_reports, 0);
    assert_eq!(capture.reports(), []);
}

#[test]
fn handles_are_send_sync_clone_and_debug() {
    fn shared<T: Send + Sync + Clone + std::fmt::Debug>(_: &T) {}
    fn movable<T: Send + Unpin + std::fmt::Debug>(_: &T) {}
    let capture = Capture::default();
    let on = watch(100, &capture);
    shared(&on);
    shared(&reactor_watch::Watch::disabled());
    let label = Label::new("GET /debug");
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
