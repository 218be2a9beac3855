//! The outcome-words lint: a sentence that says what a run showed ("in every trial", "none got
//! in", "two of the stacks") must be checked against the results, or it goes stale at the next
//! run that moves the outcome.
//!
//! A page checks such a sentence with a *claim*: an HTML comment after the sentence, on its
//! line or the next, naming a predicate that the bench client evaluates against the committed
//! results (`bench-client audit`, which `scripts/run.sh` and CI run):
//!
//! ```markdown
//! With every connection accepted first, uvloop's pinger waited for all in every trial.
//! <!-- claim: race.uvloop-waits-for-all-when-accepted-first -->
//! ```
//!
//! The lint reads a page's prose as a reader reads it: paragraphs, list items, headings and
//! table cells, split into sentences, leaving out code blocks and the generated blocks that the
//! bench client writes (`<!-- NAME:begin ... -->` to `<!-- NAME:end -->`). A sentence with an
//! outcome word ([`OUTCOME_WORDS`], or a count of [`COUNTED`] things) and no claim must be named
//! in the allow-list (`docs/outcome-words.toml`, [`AllowList`]) with the reason it states no
//! run's outcome ([`Why`]). A "sentence" of fewer than [`MIN_WORDS`] words is a table's value or
//! a label, and is left out.

use std::collections::BTreeMap;
use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde::Deserialize;

use crate::prose::without_generated_blocks;

/// Words that state how many of something did or did not happen.
pub const OUTCOME_WORDS: &[&str] = &[
    "every", "all", "none", "never", "always", "each", "only", "most",
];

/// Things a count of which is an outcome: "2 of 20 trials", "three stacks".
pub const COUNTED: &[&str] = &[
    "trial", "trials", "stack", "stacks", "run", "runs", "server", "servers",
];

/// Fewer words than this are a table's value or a label, not a sentence ("none", "every N").
pub const MIN_WORDS: usize = 3;

/// Number words a count may be written in.
const NUMBER_WORDS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];

/// A sentence of a page's prose, as a reader reads it (inline code keeps its backticks; a
/// link is its text), with the claims that follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// The line it starts on.
    pub line: usize,
    pub text: String,
    /// The claims that check it, as written after `claim:` (a name, and the stacks after
    /// `on`, if any).
    pub claims: Vec<String>,
}

/// A claim named on a page: the line of its comment and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub line: usize,
    pub name: String,
    /// The stacks its sentence names, which the claim is checked on: `on A, B` after the
    /// name (`<!-- claim: NAME on demo-ntex, demo-rocket -->`); empty for a claim that
    /// names none, or finds its own from the record.
    pub on: Vec<String>,
}

/// The claims in an HTML comment or inline HTML, `<!-- claim: NAME -->` or
/// `<!-- claim: NAME on STACK, STACK -->` each, as written after `claim:`.
fn claim_names(html: &str) -> impl Iterator<Item = &str> {
    html.split("<!--").filter_map(|comment| {
        let inner = comment.split("-->").next()?.trim();
        let spec = inner.strip_prefix("claim:")?.trim();
        parse_claim(spec).is_some().then_some(spec)
    })
}

/// A claim as written after `claim:`: its name, and the stacks after `on`, if any.
fn parse_claim(spec: &str) -> Option<(&str, Vec<String>)> {
    let mut words = spec.splitn(3, char::is_whitespace);
    let name = words.next().filter(|name| !name.is_empty())?;
    match (words.next(), words.next()) {
        (None, _) => Some((name, Vec::new())),
        (Some("on"), Some(list)) => {
            let on: Vec<String> = list
                .split(',')
                .map(|stack| stack.trim().to_owned())
                .collect();
            let every_one_word = on.iter().all(|s| !s.is_empty() && !s.contains(' '));
            every_one_word.then_some((name, on))
        }
        _ => None,
    }
}

/// Every claim named on `markdown`, in order, outside code blocks.
pub fn claims(markdown: &str) -> Vec<Claim> {
    let claimed = sentences(markdown).into_iter().flat_map(|s| {
        let line = s.line;
        s.claims.into_iter().filter_map(move |spec| {
            let (name, on) = parse_claim(&spec)?;
            Some(Claim {
                line,
                name: name.to_owned(),
                on,
            })
        })
    });
    claimed.collect()
}

/// The sentences of `markdown`'s prose, in order (see the module's documentation).
pub fn sentences(markdown: &str) -> Vec<Sentence> {
    let text = without_generated_blocks(markdown);
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut reader = Reader::default();
    let options = Options::ENABLE_TABLES;
    for (event, range) in Parser::new_ext(&text, options).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => {
                reader.end_block();
                reader.in_code = true;
            }
            Event::End(TagEnd::CodeBlock) => reader.in_code = false,
            Event::Start(
                Tag::Paragraph
                | Tag::Heading { .. }
                | Tag::Item
                | Tag::TableCell
                | Tag::List(_)
                | Tag::BlockQuote(_),
            )
            | Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::TableCell
                | TagEnd::List(_)
                | TagEnd::BlockQuote(_),
            ) => reader.end_block(),
            _ if reader.in_code => {}
            Event::Text(words) => reader.push(&words, line_of(range.start)),
            Event::Code(code) => reader.push(&format!("`{code}`"), line_of(range.start)),
            Event::SoftBreak | Event::HardBreak => reader.push(" ", line_of(range.start)),
            Event::InlineHtml(html) => reader.claim(claim_names(&html)),
            Event::Html(html) => {
                reader.end_block();
                reader.claim(claim_names(&html));
            }
            _ => {}
        }
    }
    reader.end_block();
    reader.sentences
}

/// The sentences read so far, and the block being read: its text, and the line each of its
/// bytes came from.
#[derive(Default)]
struct Reader {
    sentences: Vec<Sentence>,
    text: String,
    lines: Vec<(usize, usize)>,
    /// Claims met inside the block: the offset in `text` they follow, and their names.
    marks: Vec<(usize, String)>,
    in_code: bool,
}

impl Reader {
    fn push(&mut self, words: &str, line: usize) {
        self.lines.push((self.text.len(), line));
        self.text.push_str(words);
    }

    /// Claims inside the block follow the text read so far; claims between blocks follow the
    /// last sentence read.
    fn claim<'a>(&mut self, names: impl Iterator<Item = &'a str>) {
        for name in names {
            if self.text.trim().is_empty() {
                if let Some(last) = self.sentences.last_mut() {
                    last.claims.push(name.to_owned());
                }
            } else {
                self.marks.push((self.text.len(), name.to_owned()));
            }
        }
    }

    /// Splits the block read into sentences; each claim goes to the sentence it ends or
    /// stands in: the last whose first word comes before it.
    fn end_block(&mut self) {
        let text = std::mem::take(&mut self.text);
        let lines = std::mem::take(&mut self.lines);
        let marks = std::mem::take(&mut self.marks);
        let first = self.sentences.len();
        for range in sentence_ranges(&text) {
            let blank = text[range.clone()].len() - text[range.clone()].trim_start().len();
            let line = (lines.iter().rev())
                .find(|(offset, _)| *offset <= range.start + blank)
                .map_or(0, |(_, line)| *line);
            let words = text[range].split_whitespace().collect::<Vec<_>>().join(" ");
            self.sentences.push(Sentence {
                line,
                text: words,
                claims: Vec::new(),
            });
        }
        let starts: Vec<usize> = sentence_ranges(&text)
            .map(|range| range.end - text[range.clone()].trim_start().len())
            .collect();
        for (offset, name) in marks {
            let begun = starts.iter().filter(|start| **start < offset).count();
            let index = first + begun.saturating_sub(1);
            if let Some(sentence) = self.sentences.get_mut(index) {
                sentence.claims.push(name);
            }
        }
    }
}

/// The byte ranges of `text`'s sentences, blank ones left out. A sentence ends at `.`, `?` or
/// `!` followed by a space and a capital, a digit, `` ` ``, `*`, `(` or `[`, unless the word
/// ending there is an abbreviation ("e.g.").
fn sentence_ranges(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut ends: Vec<usize> = Vec::new();
    for (at, c) in text.char_indices() {
        if !matches!(c, '.' | '?' | '!') || abbreviation_before(text, at) {
            continue;
        }
        let rest = &text[at + 1..];
        let next = rest.trim_start();
        let spaced = rest.len() > next.len();
        let starts = next
            .chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit() || "`*([\"".contains(c));
        if spaced && starts {
            ends.push(at + 1);
        }
    }
    ends.push(text.len());
    let mut start = 0;
    ends.into_iter().filter_map(move |end| {
        let range = start..end;
        start = end;
        (!text[range.clone()].trim().is_empty()).then_some(range)
    })
}

/// Whether the `.` at `at` ends an abbreviation such as "e.g." or "i.e.".
fn abbreviation_before(text: &str, at: usize) -> bool {
    let word = text[..at].rsplit(char::is_whitespace).next().unwrap_or("");
    matches!(word, "e.g" | "i.e" | "vs" | "cf" | "etc")
}

/// The first outcome word or count of `sentence`, if it has one.
pub fn outcome_word(sentence: &str) -> Option<String> {
    let words: Vec<String> = sentence
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    for (at, word) in words.iter().enumerate() {
        if OUTCOME_WORDS.contains(&word.as_str()) {
            return Some(word.clone());
        }
        let number = word.chars().all(|c| c.is_ascii_digit()) || NUMBER_WORDS.contains(&&**word);
        // "2 trials", "2 of 20 trials", "two of the stacks"
        let counted = (words[at + 1..].iter().take(4))
            .find(|next| !matches!(next.as_str(), "of" | "the") && !is_number(next));
        if number && counted.is_some_and(|next| COUNTED.contains(&next.as_str())) {
            return Some(format!("{word} {}", counted.expect("just found")));
        }
    }
    None
}

fn is_number(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_digit()) || NUMBER_WORDS.contains(&word)
}

/// Why a sentence with an outcome word needs no claim: what it states instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Why {
    /// How a runtime, the kernel or a library works, from its source or documentation.
    Mechanism,
    /// What you should do.
    Advice,
    /// What a word, a route, a flag or a figure means.
    Definition,
    /// What an experiment does (its steps, not what they showed).
    Method,
    /// What a page does not know, and what run would settle it.
    Question,
}

/// The sentences that state no run's outcome despite an outcome word: for each page, for each
/// reason, a part of each such sentence that finds it (as [`Sentence::text`] reads).
///
/// ```toml
/// ["docs/health-check.md"]
/// advice = ["Keep liveness and readiness apart."]
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct AllowList {
    pub pages: BTreeMap<String, BTreeMap<Why, Vec<String>>>,
}

impl AllowList {
    /// Reads an allow-list from its TOML.
    pub fn parse(toml: &str) -> Result<AllowList, toml::de::Error> {
        toml::from_str(toml)
    }

    /// How many sentences it names.
    pub fn len(&self) -> usize {
        let reasons = self.pages.values().flat_map(BTreeMap::values);
        reasons.map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parts of sentences it names on `page`, each with its reason.
    pub fn on(&self, page: &str) -> Vec<(Why, &str)> {
        let reasons = self.pages.get(page).into_iter().flatten();
        reasons
            .flat_map(|(why, parts)| parts.iter().map(move |part| (*why, part.as_str())))
            .collect()
    }
}

/// What the lint found on one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// Sentences with an outcome word, no claim and no entry: `(line, word, sentence)`.
    pub unchecked: Vec<(usize, String, String)>,
    /// Entries that find no sentence with an outcome word: stale, or never needed.
    pub unused: Vec<String>,
}

/// Lints `markdown`, the page `page` (as the allow-list names it), against `allowed`.
pub fn lint(page: &str, markdown: &str, allowed: &AllowList) -> Findings {
    let entries = allowed.on(page);
    let mut used = vec![false; entries.len()];
    let mut findings = Findings::default();
    for sentence in sentences(markdown) {
        if sentence.text.split_whitespace().count() < MIN_WORDS {
            continue;
        }
        let Some(word) = outcome_word(&sentence.text) else {
            continue;
        };
        let mut allowed = false;
        for ((_, part), used) in entries.iter().zip(&mut used) {
            if sentence.text.contains(part) {
                (*used, allowed) = (true, true);
            }
        }
        if !allowed && sentence.claims.is_empty() {
            (findings.unchecked).push((sentence.line, word, sentence.text));
        }
    }
    findings.unused = (entries.iter().zip(used))
        .filter(|(_, used)| !used)
        .map(|((_, part), _)| part.to_string())
        .collect();
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(markdown: &str) -> Vec<String> {
        sentences(markdown).into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn prose_is_split_into_sentences_as_a_reader_reads_it() {
        let page = "# A title\n\nOne `code` here. Two [a link](x.md)\nwraps, e.g. this. \
                    3 more?\n\n```sh\nEvery line of code.\n```\n\n- an item. And all.\n";
        assert_eq!(
            texts(page),
            [
                "A title",
                "One `code` here.",
                "Two a link wraps, e.g. this.",
                "3 more?",
                "an item.",
                "And all.",
            ]
        );
        let lines: Vec<usize> = sentences(page).iter().map(|s| s.line).collect();
        assert_eq!(lines, [1, 3, 3, 4, 10, 10]);
    }

    #[test]
    fn generated_blocks_and_code_are_no_prose() {
        let page = "Before.\n<!-- figures:begin x -->\nEvery trial.\n<!-- figures:end -->\n\
                    After.\n\n    indented every\n";
        assert_eq!(texts(page), ["Before.", "After."]);
    }

    #[test]
    fn a_claim_checks_the_sentence_it_follows() {
        let page = "It waited in every trial. <!-- claim: race.a --> Then all.\n\
                    <!-- claim: race.b -->\n\nNext, none.\n";
        let claimed: Vec<(String, Vec<String>)> = (sentences(page).into_iter())
            .map(|s| (s.text, s.claims))
            .collect();
        assert_eq!(
            claimed,
            [
                (
                    "It waited in every trial.".to_owned(),
                    vec!["race.a".to_owned()]
                ),
                ("Then all.".to_owned(), vec!["race.b".to_owned()]),
                ("Next, none.".to_owned(), vec![]),
            ]
        );
        let names: Vec<String> = claims(page).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["race.a", "race.b"]);
        let inside = "First. It waited in every trial, <!-- claim: race.c --> and most.\n";
        let claimed: Vec<Vec<String>> = sentences(inside).into_iter().map(|s| s.claims).collect();
        assert_eq!(claimed, [vec![], vec!["race.c".to_owned()]]);
    }

    #[test]
    fn a_claim_names_the_stacks_it_is_checked_on() {
        let page = "On ntex and rocket. <!-- claim: cpu.bunched on demo-ntex, demo-rocket -->\n\
                    Broken. <!-- claim: cpu.bunched demo-ntex -->\n";
        let found: Vec<(String, Vec<String>)> = (claims(page).into_iter())
            .map(|claim| (claim.name, claim.on))
            .collect();
        let on = vec!["demo-ntex".to_owned(), "demo-rocket".to_owned()];
        assert_eq!(found, [("cpu.bunched".to_owned(), on)]);
    }

    #[test]
    fn outcome_words_and_counts_are_found() {
        for (sentence, word) in [
            ("It got in on every stack.", "every"),
            ("None got in.", "none"),
            ("It waited in 2 of 20 trials.", "2 trials"),
            ("Two of the stacks let it in.", "two stacks"),
            ("Only uvloop did.", "only"),
        ] {
            assert_eq!(outcome_word(sentence).as_deref(), Some(word), "{sentence}");
        }
        for sentence in [
            "It waits one sleep.",
            "Ten requests of 500 ms.",
            "Overall fine.",
        ] {
            assert_eq!(outcome_word(sentence), None, "{sentence}");
        }
    }

    #[test]
    fn the_lint_names_unchecked_sentences_and_unused_entries() {
        let allowed = AllowList::parse(
            "[\"docs/a.md\"]\nadvice = [\"Keep every probe\", \"Gone\"]\n\
             mechanism = [\"Each poll\"]\n",
        )
        .expect("an allow-list");
        assert_eq!(allowed.len(), 3);
        let page = "Keep every probe apart. Each poll holds it. It failed in every trial.\n\
                    All got in. <!-- claim: x.y -->\n";
        let findings = lint("docs/a.md", page, &allowed);
        let unchecked = vec![(
            1,
            "every".to_owned(),
            "It failed in every trial.".to_owned(),
        )];
        assert_eq!(findings.unchecked, unchecked);
        assert_eq!(findings.unused, ["Gone"]);
    }

    #[test]
    fn an_unknown_reason_is_an_error() {
        assert!(AllowList::parse("[\"a.md\"]\nbecause = [\"x\"]\n").is_err());
    }
}
