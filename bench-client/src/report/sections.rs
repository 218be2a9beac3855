//! The sections every Markdown document of a run shares: its heading, with the command that
//! wrote it and the machine it ran on, and the list of what failed.

use std::fmt::Write as _;

use super::text::reactor_threads;
use burst_meter::environment::Environment;
use burst_meter::session::Failure;

/// A report's title, the command that wrote it, and the machine it ran on.
pub fn heading(title: &str, command: &str, environment: &Environment) -> String {
    format!(
        "# {title}\n\nWritten by `{command}`; every figure below comes from that run. Do not \
         edit by hand: run the command again.\n\n## Environment\n\n{}",
        environment.to_markdown()
    )
}

/// A whole document: its heading, its sections in order, then the list of what failed (without
/// each failure's reactor threads).
pub fn document(
    title: &str,
    command: &str,
    environment: &Environment,
    sections: &[String],
    failed: &[Failure],
) -> String {
    let mut out = heading(title, command, environment);
    for section in sections {
        out.push_str(section);
    }
    out.push_str(&failures(failed, false));
    out
}

/// The "Failures" section, or nothing; `with_threads` names the reactor threads of each.
pub fn failures(failures: &[Failure], with_threads: bool) -> String {
    if failures.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Failures\n\n");
    for failure in failures {
        let threads = if with_threads {
            format!(" ({})", reactor_threads(failure.reactor_threads))
        } else {
            String::new()
        };
        let route = failure
            .route
            .as_deref()
            .map(|route| format!(", {route}"))
            .unwrap_or_default();
        let reason = failure.reason.replace('\n', " ");
        let _ = writeln!(out, "- {}{threads}{route}: {reason}", failure.target);
    }
    out
}
