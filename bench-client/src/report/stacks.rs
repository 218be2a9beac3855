//! The pages' blocks drawn from the stacks' descriptions (each crate's `stack.toml`), not
//! from a run: `<!-- stacks:begin TABLE -->`. A stack added to the workspace appears in them
//! at the next `bench-client redraw`, and the audit fails a page whose table is behind.

use std::fmt::Write as _;

use stacks::{Driver, Stack};

use super::block::{Block, BlockError};

/// A table of the stacks' facts.
pub const STACKS: Block = Block { name: "stacks" };

/// The body of a stacks block: `fixes` (the README's: each stack's two fixes) or
/// `fixes-in-full` (the fix page's: what each `.await` gives, and what bites).
pub fn body(spec: &str) -> Result<String, BlockError> {
    let reference = stacks::reference().map_err(|error| BlockError::Io {
        path: error.path.display().to_string(),
        source: std::io::Error::other(error.reason),
    })?;
    match spec {
        "fixes" => Ok(fixes(stacks::all(), &reference)),
        "fixes-in-full" => Ok(fixes_in_full(stacks::all(), &reference)),
        other => Err(BlockError::NoTable(other.to_owned())),
    }
}

/// The stacks whose fixes read the same, one row each, their names joined: axum and hyper on
/// tokio share theirs.
fn rows(stacks: &[Stack]) -> Vec<(String, &Stack)> {
    let mut rows: Vec<(String, &Stack)> = Vec::new();
    for stack in stacks {
        let name = match stack.driver {
            Driver::Epoll => stack.display.clone(),
            driver => format!("{} ({driver})", stack.display),
        };
        let same = |(_, other): &&mut (String, &Stack)| {
            (other.offload.call == stack.offload.call && other.timer.call == stack.timer.call)
                && (other.bites == stack.bites && other.driver == stack.driver)
        };
        match rows.iter_mut().find(|row| same(row)) {
            Some((names, _)) => write!(names, ", {name}").expect("a String"),
            None => rows.push((name, stack)),
        }
    }
    rows
}

/// `text`, or `text: what bites` where something does.
fn with_bites(text: String, stack: &Stack) -> String {
    match stack.bites.is_empty() {
        true => text,
        false => format!("{text}: {}", stack.bites),
    }
}

fn fixes(stacks: &[Stack], reference: &Stack) -> String {
    let mut out = String::from(
        "| stack | the blocking pool (rule 2) | the timer (rule 3) |\n|---|---|---|\n",
    );
    for (name, stack) in rows(stacks)
        .into_iter()
        .chain([(reference.display.clone(), reference)])
    {
        let pool = with_bites(format!("`{}`", stack.offload.call), stack);
        let _ = writeln!(out, "| {name} | {pool} | `{}` |", stack.timer.call);
    }
    out
}

fn fixes_in_full(stacks: &[Stack], reference: &Stack) -> String {
    let mut out = String::from(
        "| stack | the blocking pool | its `.await` gives | the timer | what bites |\n\
         |---|---|---|---|---|\n",
    );
    for (name, stack) in rows(stacks)
        .into_iter()
        .chain([(reference.display.clone(), reference)])
    {
        let gives = match stack.offload.gives.as_str() {
            "" => String::new(),
            gives => format!("`{gives}`"),
        };
        let _ = writeln!(
            out,
            "| {name} | `{}` | {gives} | `{}` | {} |",
            stack.offload.call, stack.timer.call, stack.bites
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stack_is_in_the_tables_once() {
        let readme = body("fixes").unwrap();
        let full = body("fixes-in-full").unwrap();
        for stack in stacks::all() {
            for table in [&readme, &full] {
                assert_eq!(
                    table.matches(&format!("`{}`", stack.offload.call)).count(),
                    1,
                    "{}: {table}",
                    stack.name
                );
                assert!(table.contains(&stack.display), "{}", stack.name);
            }
        }
        assert!(matches!(body("speeds"), Err(BlockError::NoTable(_))));
    }
}
