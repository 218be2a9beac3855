use super::*;

fn span(sent_ms: f64, ended_ms: f64) -> Span {
    Span {
        sent_ms,
        ended_ms,
        ok: true,
    }
}

#[test]
fn pings_are_classed_by_their_wait() {
    assert_eq!(ping_colour(&span(100.0, 100.3)), PROMPT);
    assert_eq!(ping_colour(&span(100.0, 600.0)), LATE);
    assert_eq!(ping_colour(&span(100.0, 4600.0)), TIMED_OUT);
}

#[test]
fn the_time_axis_covers_the_head_start_and_the_last_answer() {
    let timeline = Timeline {
        requests: vec![span(0.0, 5004.0)],
        closed_loop: vec![span(-50.0, -49.7)],
        open_loop: Vec::new(),
    };
    let grid = TimelineGrid {
        title: String::new(),
        subtitle: String::new(),
        columns: vec![("/bad".into(), "sleeps on the reactor".into())],
        rows: vec![TimelineRow {
            label: "demo-axum".into(),
            panels: vec![Some(&timeline)],
        }],
        sleep_ms: 500.0,
    };
    let range = time_range(&grid, 0);
    assert!(range.start < -50.0 && range.start > -200.0, "{range:?}");
    assert_eq!(range.end, 6000.0);
    assert_eq!(time_label(2000.0), "2");
    assert_eq!(time_label(500.0), "0.5");
    assert_eq!(time_label(-0.0), "0");
}

#[test]
fn a_longer_column_is_wider_and_every_column_fits() {
    let places = column_places(&[0.0..6000.0, 0.0..600.0, 0.0..600.0]);
    let widths: Vec<u32> = places.iter().map(|(_, width)| *width).collect();
    assert!(
        widths[0] > widths[1] && widths[1] == widths[2],
        "{widths:?}"
    );
    assert!(
        widths.iter().all(|width| *width >= MIN_PANEL_W),
        "{widths:?}"
    );
    let (left, width) = places[2];
    assert!(left + width <= WIDTH - RIGHT_MARGIN, "{places:?}");
    // Too many columns for the least width: equal shares of the room.
    let many = column_places(&vec![0.0..1000.0; 9]);
    let (left, width) = many[8];
    assert!(left + width <= WIDTH - RIGHT_MARGIN, "{many:?}");
}

#[test]
fn the_note_says_when_the_answers_came() {
    let staircase: Vec<Span> = (1..=10).map(|k| span(0.0, 500.0 * k as f64)).collect();
    assert_eq!(
        answers_note(&staircase, 500.0),
        "10 answers, from 0.5 s to 5.0 s"
    );
    let together = vec![span(0.0, 5007.0); 10];
    assert_eq!(answers_note(&together, 500.0), "10 answers, all at 5.0 s");
    let mut failed = together.clone();
    failed[3].ok = false;
    assert_eq!(
        answers_note(&failed, 500.0),
        "9 answers, all at 5.0 s; 1 failed"
    );
    assert_eq!(answers_note(&failed[3..4], 500.0), "no answer; 1 failed");
}
