//! The pages' blocks drawn from the stacks' descriptions (each crate's `stack.toml`), not
//! from a run: a table (`<!-- stacks:begin TABLE -->`), or, inside a sentence, a count or a
//! list (`<!-- stacks: count epoll -->five<!-- /stacks -->`). A stack added to the workspace
//! appears in them at the next `bench-client redraw`, and the audit fails a page that is
//! behind.

use std::fmt::Write as _;

use stacks::{Driver, Stack};

use super::block::{Block, BlockError};

/// A table of the stacks' facts.
pub const STACKS: Block = Block { name: "stacks" };

/// What opens an inline count or list, and what closes it.
const INLINE: (&str, &str) = ("<!-- stacks: ", "<!-- /stacks -->");

/// `text` with every inline count and list of stacks drawn again: `count` (a number word,
/// capitalised as the old one), `names` (the crates, in code) or `displays` (as the tables
/// name them), of `all` stacks, those on `epoll` or `io_uring`, those `blind-to-accepts`
/// (whose description says the server cannot record its accepts), or the comparison's
/// `targets` (the stacks and the FastAPI app's two loops).
pub fn inline(text: &str) -> Result<String, BlockError> {
    let (open, close) = INLINE;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        let spec_end = rest[start..].find(" -->").map(|at| start + at);
        let body_end = rest[start..].find(close).map(|at| start + at);
        let (Some(spec_end), Some(body_end)) = (spec_end, body_end) else {
            return Err(BlockError::NoTable(
                rest[start..].lines().next().unwrap_or("").into(),
            ));
        };
        let spec = &rest[start + open.len()..spec_end];
        let old = &rest[spec_end + " -->".len()..body_end];
        out.push_str(&rest[..spec_end + " -->".len()]);
        out.push_str(&drawn(spec, old)?);
        rest = &rest[body_end..];
        out.push_str(close);
        rest = &rest[close.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

/// How many inline counts and lists `text` holds.
pub fn inline_count(text: &str) -> usize {
    text.matches(INLINE.0).count()
}

/// The text of one inline `spec` (`count epoll`), in place of `old`.
fn drawn(spec: &str, old: &str) -> Result<String, BlockError> {
    let unknown = || BlockError::NoTable(spec.to_owned());
    let (what, which) = spec.split_once(' ').ok_or_else(unknown)?;
    let stacks: Vec<&Stack> = match which {
        "all" | "targets" => stacks::all().iter().collect(),
        "epoll" => stacks::of(Driver::Epoll).collect(),
        "io_uring" => stacks::of(Driver::IoUring).collect(),
        "blind-to-accepts" => (stacks::all().iter())
            .filter(|stack| !stack.sees_accepts)
            .collect(),
        _ => return Err(unknown()),
    };
    let references = match which {
        "targets" => burst_meter::target::references().len(),
        _ => 0,
    };
    match what {
        "count" => Ok(capitalised_as(&number_word(stacks.len() + references), old)),
        "names" => Ok(listed(stacks.iter().map(|s| format!("`{}`", s.name)))),
        "displays" => Ok(listed(stacks.iter().map(|s| s.display.clone()))),
        _ => Err(unknown()),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn listed(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// `n` in words up to twenty, in digits beyond.
fn number_word(n: usize) -> String {
    const WORDS: [&str; 21] = [
        "no",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    WORDS
        .get(n)
        .map_or_else(|| n.to_string(), |word| (*word).to_owned())
}

/// `word` with a capital first letter if `old` had one.
fn capitalised_as(word: &str, old: &str) -> String {
    match old.chars().next().is_some_and(char::is_uppercase) {
        false => word.to_owned(),
        true => word[..1].to_uppercase() + &word[1..],
    }
}

/// The body of a stacks block: `fixes` (the README's: each stack's two fixes),
/// `fixes-in-full` (the fix page's: what each `.await` gives, and what bites) or
/// `fixes-code DRIVER` (the two handlers of each stack on `epoll` or `io_uring`, cut from its
/// `src/main.rs`, under its notes).
pub fn body(spec: &str) -> Result<String, BlockError> {
    let reference = stacks::reference().map_err(|error| BlockError::Io {
        path: error.path.display().to_string(),
        source: std::io::Error::other(error.reason),
    })?;
    match spec {
        "fixes" => Ok(fixes(stacks::all(), &reference)),
        "fixes-in-full" => Ok(fixes_in_full(stacks::all(), &reference)),
        "fixes-code epoll" => stacks::of(Driver::Epoll).map(fixes_code).collect(),
        "fixes-code io_uring" => stacks::of(Driver::IoUring).map(fixes_code).collect(),
        other => Err(BlockError::NoTable(other.to_owned())),
    }
}

/// The stacks whose fixes read the same, one row each, their names joined: axum and hyper on
/// tokio share theirs.
fn rows(stacks: &[Stack]) -> Vec<(String, &Stack)> {
    let mut rows: Vec<(String, &Stack)> = Vec::new();
    for stack in stacks {
        let name = stack.heading();
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

/// One stack's section of the fix page: its name, its notes, and its `/ok-blocking` and
/// `/ok-await` handlers as its `src/main.rs` has them (the docs check holds them to it).
fn fixes_code(stack: &Stack) -> Result<String, BlockError> {
    let main = format!("crates/{}/src/main.rs", stack.name);
    let source = std::fs::read_to_string(stacks::workspace().join(&main)).map_err(|source| {
        BlockError::Io {
            path: main.clone(),
            source,
        }
    })?;
    let mut code = Vec::new();
    for route in ["/ok-blocking", "/ok-await"] {
        let cut = (stack.handlers.get(route)).and_then(|name| function(&source, name));
        let what = || format!("{main}: no handler of {route}");
        code.push(cut.ok_or_else(|| BlockError::NoTable(what()))?);
    }
    let name = stack.heading();
    let notes = stack.fix_notes.trim();
    Ok(format!(
        "## {name}\n\n{notes}\n\n<!-- from: {main} -->\n```rust\n{}```\n\n",
        code.join("\n")
    ))
}

/// The function `name` of `source` as written there, with its doc comment and attributes,
/// each line less the indentation of its `fn` line (a method shown outside its `impl`).
fn function(source: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = source.lines().collect();
    let starts = |line: &&str| {
        let line = line.trim_start();
        let line = line.strip_prefix("async ").unwrap_or(line);
        line.starts_with(&format!("fn {name}("))
    };
    let at = lines.iter().position(starts)?;
    let indent = lines[at].len() - lines[at].trim_start().len();
    let above = (lines[..at].iter().rev())
        .take_while(|line| {
            let line = line.trim_start();
            line.starts_with("///") || line.starts_with("#[")
        })
        .count();
    let closing = format!("{}}}", &lines[at][..indent]);
    let end = at + lines[at..].iter().position(|line| *line == closing)?;
    let cut = lines[at - above..=end]
        .iter()
        .map(|line| line.get(indent..).unwrap_or(""));
    Some(cut.map(|line| format!("{line}\n")).collect())
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

    #[test]
    fn a_function_is_cut_whole_with_its_comment_and_attributes() {
        let source = "impl X {\n    /// Waits.\n    #[inline]\n    async fn wait(&self) {\n        \
                      sleep();\n    }\n\n    fn other() {}\n}\n";
        let cut = function(source, "wait").unwrap();
        assert_eq!(
            cut,
            "/// Waits.\n#[inline]\nasync fn wait(&self) {\n    sleep();\n}\n"
        );
        assert_eq!(function(source, "missing"), None);
        let code = body("fixes-code epoll").unwrap() + &body("fixes-code io_uring").unwrap();
        for stack in stacks::all() {
            assert!(code.contains(&format!("<!-- from: crates/{}/src/main.rs -->", stack.name)));
        }
    }

    #[test]
    fn inline_counts_and_lists_are_drawn_from_the_descriptions() {
        let n = stacks::all().len();
        let text = "On <!-- stacks: count all -->two<!-- /stacks --> stacks. \
                    <!-- stacks: count targets -->Three<!-- /stacks --> targets.";
        let drawn = inline(text).unwrap();
        let expected = format!(
            "On <!-- stacks: count all -->{}<!-- /stacks --> stacks. \
             <!-- stacks: count targets -->{}<!-- /stacks --> targets.",
            number_word(n),
            capitalised_as(&number_word(n + 2), "T")
        );
        assert_eq!(drawn, expected);
        assert_eq!(
            inline(&drawn).unwrap(),
            drawn,
            "drawing twice changes nothing"
        );
        assert_eq!(inline_count(text), 2);
        let names = inline("<!-- stacks: names io_uring -->x<!-- /stacks -->").unwrap();
        assert!(
            names.contains("`demo-ntex`") && names.contains(" and "),
            "{names}"
        );
        assert!(inline("<!-- stacks: count mars -->x<!-- /stacks -->").is_err());
        assert_eq!(
            listed(["a", "b", "c"].map(String::from).into_iter()),
            "a, b and c"
        );
    }
}
