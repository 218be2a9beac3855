//! Which label a stall is reported and counted under: nested wrappers, polls on two threads,
//! a poll that panics. Margins are generous, as in `stalls.rs`.

mod common;

use std::collections::BTreeMap;
use std::thread;

use common::{Capture, STALL, block_on, watch};
use reactor_watch::{CpuTime, Label, Report, current_label};

#[test]
fn nested_wrappers_restore_the_outer_label() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let (outer, inner) = (Label::new("nested /outer"), Label::new("nested /inner"));
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
    let (outer, inner) = (Label::new("nested2 /outer"), Label::new("nested2 /inner"));
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
    assert!(stalls.by_route["nested2 /outer"].longest >= stalls.by_route["nested2 /inner"].longest);
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
                    let label = Label::new(route);
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

#[test]
fn a_panicking_poll_leaves_the_slot_clean() {
    let capture = Capture::default();
    let w = watch(50, &capture);
    let label = Label::new("GET /panics");
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
