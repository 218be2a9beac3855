use super::*;

fn work(thread: &str, on_reactor: bool) -> Work {
    Work {
        route: "/bad".into(),
        how: String::new(),
        slept_ms: 1,
        thread: thread.into(),
        thread_id: 1,
        on_reactor,
    }
}

#[test]
fn where_it_ran_names_each_thread_once() {
    let (thread, on_reactor) = where_it_ran(&[work("main", true), work("main", true)]);
    assert_eq!((thread.as_deref(), on_reactor), (Some("main"), Some(true)));
    let (thread, _) = where_it_ran(&[work("b", false), work("a", false), work("b", false)]);
    assert_eq!(thread.as_deref(), Some("a, b"));
}

#[test]
fn a_file_cases_floor_counts_its_reads() {
    let plan = Plan {
        concurrency: 10,
        file_mb: 256,
        ..Plan::default()
    };
    let floor = |route| {
        let route = WorkPath::canonical(route);
        CaseStep { route, plan: &plan }.floor("demo-axum", 1)
    };
    let read_ms = read_floor_ms(256);
    assert_eq!(read_ms, 100, "256 MiB at 2,560 MiB/s");
    let ms = |ms: f64| HEAD_START + Duration::from_secs_f64(ms / 1000.0);
    // Two reads alone, then ten one after another on the one reactor thread.
    assert_eq!(floor(Route::BadFile), ms(2.0 * 100.0 + 10.0 * 100.0));
    // Offloaded, the ten share the cores.
    let shared = 10.0 * 100.0 / cores() as f64;
    assert_eq!(floor(Route::OkFileBlocking), ms(2.0 * 100.0 + shared));
    assert_eq!(
        floor(Route::Bad),
        ms(500.0 * 10.0),
        "a sleep's floor is as it was"
    );
}

fn case(route: Route, unit_ms: u64) -> Case {
    let ideals = Ideals::new(10, unit_ms, 1);
    Case {
        target: "demo-axum".into(),
        runtime: None,
        reactor_threads: 1,
        route: WorkPath::canonical(route).path().into(),
        n: 10,
        sleep_ms: unit_ms,
        wall_ms: 1000.0,
        times_ideal: None,
        ok: 10,
        err: 0,
        errors: Vec::new(),
        verdict: ideals.verdict(1000.0, 0),
        sleep_thread: None,
        on_reactor: None,
        closed_loop: None,
        open_loop: None,
        requests: RequestTimes::from_ms(&[1000.0]),
        stalls: None,
        confounders: Confounders::default(),
        timeline: None,
        call: None,
    }
}

#[test]
fn a_measured_floor_reads_at_the_time_each_file_case_timed() {
    let plan = Plan {
        concurrency: 10,
        file_mb: 256,
        ..Plan::default()
    };
    let planned = Duration::from_secs(60);
    let at_plans_rate = [case(Route::BadFile, 100), case(Route::Bad, 500)];
    assert_eq!(plan.floor_measured(planned, &at_plans_rate), planned);
    // Two reads alone and ten in turn, each 50 ms slower than the plan's.
    let slower = [case(Route::BadFile, 150), case(Route::Bad, 500)];
    let more = Duration::from_millis(12 * 50);
    assert_eq!(plan.floor_measured(planned, &slower), planned + more);
    let quicker = [case(Route::BadFile, 40)];
    let less = Duration::from_millis(12 * 60);
    assert_eq!(plan.floor_measured(planned, &quicker), planned - less);
}

#[test]
fn where_it_ran_admits_disagreement_and_silence() {
    assert_eq!(where_it_ran(&[work("a", true), work("b", false)]).1, None);
    assert_eq!(where_it_ran(&[]), (None, None));
}
