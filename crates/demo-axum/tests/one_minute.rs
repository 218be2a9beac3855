//! The README's "See it yourself in one minute", run as a reader runs it, against the
//! `demo-axum` this test was built with: its `cargo build` line is left out (the tree is
//! built), and the server starts on `--port 0` (a test never takes a fixed port), the block's
//! port then read from the server's readiness line. Everything else runs as written, and the
//! test checks what the README says it shows: three `/bad` answered one sleep after another,
//! three `/ok-await` side by side, and the server's stderr naming `/bad` as the route that held
//! its thread, and never `/ok-await`.

use std::path::Path;
use std::time::Duration;

use demo_testkit::script::run_script;

/// The README section, and the lines of its block the test replaces.
const SECTION: &str = "## See it yourself in one minute";
const BUILD: &str = "cargo build --release -p demo-axum";
const START: &str = "target/release/demo-axum &";
const PORT: &str = "8765";

/// The server started on a free port, and `PORT` set from its readiness line.
const START_ON_PORT_0: &str = r#""$DEMO_AXUM" --port 0 > "$TMP_OUT" &
until grep -q 'listening on' "$TMP_OUT"; do sleep 0.05; done
PORT=$(sed -n 's|.*listening on http://127.0.0.1:||p' "$TMP_OUT")"#;

/// The first ```` ```sh ```` block after `SECTION` in `readme`.
fn demo_block(readme: &str) -> &str {
    let section = &readme[readme.find(SECTION).expect("the one-minute section")..];
    let start = section.find("```sh\n").expect("its ```sh block") + "```sh\n".len();
    let length = section[start..].find("\n```").expect("the block's end");
    &section[start..start + length + 1]
}

/// `block` as the test runs it (see the module's documentation).
fn as_tested(block: &str) -> String {
    let mut script = String::new();
    for line in block.lines() {
        let command = line.split('#').next().unwrap_or_default().trim();
        if command == BUILD {
            continue;
        }
        let line = match command == START {
            true => START_ON_PORT_0.to_owned(),
            false => line.replace(PORT, "$PORT"),
        };
        script.push_str(&line);
        script.push('\n');
    }
    script
}

/// The sleep each request asks for, from the block's `?ms=`.
fn sleep_of(block: &str) -> Duration {
    let ms = block.split("?ms=").nth(1).expect("a ?ms= in the block");
    let digits: String = ms.chars().take_while(char::is_ascii_digit).collect();
    Duration::from_millis(digits.parse().expect("?ms= is a number"))
}

/// The times curl printed for `route` (`ROUTE SECONDS s`), sorted.
fn times(stdout: &str, route: &str) -> Vec<Duration> {
    let mut times: Vec<Duration> = (stdout.lines())
        .filter_map(|line| line.strip_prefix(route)?.strip_prefix(' '))
        .map(|rest| {
            rest.trim_end_matches(" s")
                .parse()
                .expect("curl's time_total")
        })
        .map(Duration::from_secs_f64)
        .collect();
    times.sort();
    times
}

#[test]
fn the_readmes_one_minute_demo_shows_what_it_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let block = demo_block(&readme);
    for line in [BUILD, START] {
        assert!(
            block.contains(line),
            "the README's block no longer has `{line}`:\n{block}"
        );
    }
    let sleep = sleep_of(block);
    let out = tempfile_path("one-minute-demo.out");
    let run = run_script(
        &as_tested(block),
        &root,
        &[
            ("DEMO_AXUM", env!("CARGO_BIN_EXE_demo-axum")),
            ("TMP_OUT", &out),
        ],
        Duration::from_secs(60),
    );
    let _ = std::fs::remove_file(&out);
    assert!(
        run.status.is_some_and(|s| s.success()),
        "the block failed: {run:?}"
    );

    let bad = times(&run.stdout, "/bad");
    assert_eq!(bad.len(), 3, "three /bad answered: {run:?}");
    for (answered, time) in bad.iter().enumerate() {
        // The n-th answer waited for n sleeps in turn (0.8 × n: curl's own start-up is in it).
        let floor = sleep.mul_f64(0.8 * (answered + 1) as f64);
        assert!(
            *time >= floor,
            "/bad answered at {bad:?}: not one sleep after another"
        );
    }
    let ok = times(&run.stdout, "/ok-await");
    assert_eq!(ok.len(), 3, "three /ok-await answered: {run:?}");
    assert!(
        ok.iter().all(|time| *time >= sleep && *time < sleep * 2),
        "/ok-await answered at {ok:?}: not side by side within two sleeps of {sleep:?}"
    );

    let held =
        |route: &str| (run.stderr.lines()).any(|line| line.contains(&format!("{route} held")));
    assert!(
        held("GET /bad"),
        "no stall of /bad on stderr: {}",
        run.stderr
    );
    assert!(
        !held("GET /ok-await"),
        "a stall of /ok-await: {}",
        run.stderr
    );
}

/// A path for the server's output, unique to this process.
fn tempfile_path(name: &str) -> String {
    let path = std::env::temp_dir().join(format!("{}-{name}", std::process::id()));
    path.display().to_string()
}
