//! The README defines its words before a newcomer needs them: `docs/glossary.md` is linked on
//! its first screen, the glossary defines every word of [`TERMS`] (the words the README's first
//! screens use that a Python developer may not know), and the first use of each in the README
//! comes after that link or is the word's own definition, written in italics (`*reactor*`).
//! The title is left out: it names what the first paragraph then defines.

use std::path::{Path, PathBuf};

/// How many lines a first screen is.
const FIRST_SCREEN: usize = 60;

/// The glossary, as the README links it.
const GLOSSARY: &str = "docs/glossary.md";

/// The words of the README's first screens that the glossary must define. A word matches its
/// longer forms ("poll" matches "polls") and a hyphen matches a space ("open loop",
/// "open-loop").
const TERMS: &[&str] = &[
    "reactor",
    "poll",
    "future",
    "blocking pool",
    "offload",
    "epoll",
    "io_uring",
    "thread-per-core",
    "open loop",
    "p50",
    "p99",
    "code stamp",
    "stale",
    "liveness probe",
];

fn read(path: &str) -> String {
    let full: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("{}: {error}", full.display()))
}

/// `text` lower-cased (ASCII), each run of spaces, line breaks and hyphens one space, with the
/// offset in `text` of each of its bytes.
fn folded_with_offsets(text: &str) -> (String, Vec<usize>) {
    let (mut folded, mut offsets) = (String::new(), Vec::new());
    for (at, c) in text.char_indices() {
        let c = match c {
            '-' | '\n' | '\t' => ' ',
            c => c.to_ascii_lowercase(),
        };
        if c == ' ' && folded.ends_with(' ') {
            continue;
        }
        offsets.extend(std::iter::repeat_n(at, c.len_utf8()));
        folded.push(c);
    }
    (folded, offsets)
}

fn folded(text: &str) -> String {
    folded_with_offsets(text).0
}

/// The byte offset of the first use of `term` in `text` (both folded) at or after `from`: at
/// the start of a word.
fn first_use(text: &str, term: &str, from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(found) = text[at..].find(term) {
        let start = at + found;
        let before = text[..start].chars().next_back();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return Some(start);
        }
        at = start + term.len();
    }
    None
}

/// The bold spans of `markdown` (`**term, other**`), folded: what the glossary defines.
fn defined(markdown: &str) -> Vec<String> {
    let spans = markdown.split("**").skip(1).step_by(2);
    spans.map(folded).collect()
}

#[test]
fn the_readme_links_the_glossary_on_its_first_screen_before_its_words() {
    let readme = read("README.md");
    let link = doc_links::links(&readme)
        .into_iter()
        .find(|link| link.target.split('#').next() == Some(GLOSSARY))
        .filter(|link| link.line <= FIRST_SCREEN);
    let Some(link) = link else {
        panic!("README.md links {GLOSSARY} nowhere in its first {FIRST_SCREEN} lines");
    };
    let linked_at = readme
        .find(&format!("]({GLOSSARY}"))
        .expect("the link just found");
    let (text, offsets) = folded_with_offsets(&readme);
    let title_end = readme.find('\n').unwrap_or(0);
    let body = (offsets.iter().position(|offset| *offset > title_end)).unwrap_or(text.len());
    let glossary = defined(&read(GLOSSARY));
    let mut problems = Vec::new();
    for term in TERMS {
        let term = folded(term);
        if !glossary.iter().any(|bold| bold.contains(&term)) {
            problems.push(format!("{GLOSSARY} defines no \"{term}\" (in bold)"));
        }
        let Some(at) = first_use(&text, &term, body) else {
            problems.push(format!(
                "README.md does not use \"{term}\": take it off TERMS"
            ));
            continue;
        };
        let italic = text[..at].ends_with('*');
        if offsets[at] < linked_at && !italic {
            let line = readme[..offsets[at]].matches('\n').count() + 1;
            problems.push(format!(
                "README.md:{line}: \"{term}\" before the glossary's link (line {}), undefined",
                link.line
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "words a newcomer meets before their meaning (define each in italics where it first \
         appears, link the glossary before it, or add it to the glossary):\n{}",
        problems.join("\n")
    );
}
