//! The docs check: the README stays short enough to read in minutes, and no page's prose
//! labels a fact by a commit hash (how a finding changed between runs is not a lesson; a
//! figure comes from a generated block that names its run once).
//!
//! Generated blocks, written by the bench client between `<!-- NAME:begin ... -->` and
//! `<!-- NAME:end -->` lines, are left out, and so are code blocks, HTML and link
//! destinations: the check reads what a reader reads as sentences, inline code included.
//! A commit hash is a word of 7 to 40 lower-case hex digits with at least one digit and one
//! letter: `3e63dfa` is one; `1234567`, `deadbeef`, `0x1f2e3d4`, `#ff8800` and a 64-digit
//! SHA-256 are not. A word inside a URL (`https://…/commit/…`) is not prose either.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The most lines the README may have.
pub const README_MAX_LINES: usize = 200;

/// The most lines a lesson page may have, its prose and generated blocks together: the answer,
/// the code, what to do, one figure and a link to its evidence, which stays in `results/`.
pub const LESSON_MAX_LINES: usize = 200;

/// The most lines a reference page may have: one topic of the contract or the protocol.
pub const REFERENCE_MAX_LINES: usize = 250;

/// The references under `docs/`, looked things up in rather than read in order: what every
/// server answers (`contract.md`) and what the client sends (`protocol.md`), each split by
/// topic into `NAME-TOPIC.md` pages. Every other page is a lesson.
pub const REFERENCES: &[&str] = &["contract", "protocol"];

/// Whether `page`, named from the repository's root, is a reference page.
pub fn is_reference(page: &str) -> bool {
    let Some(name) = page
        .strip_prefix("docs/")
        .and_then(|name| name.strip_suffix(".md"))
    else {
        return false;
    };
    REFERENCES.iter().any(|reference| {
        name == *reference
            || name
                .strip_prefix(reference)
                .is_some_and(|topic| topic.starts_with('-'))
    })
}

/// The most lines `page`, named from the repository's root, may have.
pub fn max_lines(page: &str) -> usize {
    match is_reference(page) {
        true => REFERENCE_MAX_LINES,
        false => LESSON_MAX_LINES,
    }
}

/// A commit hash found in prose: the line it is on and the hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hash {
    pub line: usize,
    pub hash: String,
}

/// How many lines `markdown` has, if more than `max`.
pub fn too_long(markdown: &str, max: usize) -> Option<usize> {
    let lines = markdown.lines().count();
    (lines > max).then_some(lines)
}

/// A source line number in prose: the page's line and the words that give it ("line 189",
/// "`accept.rs:458`"). Code is cited by path and item name, which survive an edit above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineNumber {
    pub line: usize,
    pub words: String,
}

/// The source line numbers in `markdown`'s prose, in order.
pub fn line_numbers(markdown: &str) -> Vec<LineNumber> {
    let mut found = Vec::new();
    for sentence in crate::outcomes::sentences(markdown) {
        let words: Vec<&str> = sentence.text.split_whitespace().collect();
        for pair in words.windows(2) {
            let noun = pair[0].trim_start_matches(['(', '`']).to_lowercase();
            let numbered = pair[1].starts_with(|c: char| c.is_ascii_digit());
            if matches!(noun.as_str(), "line" | "lines") && numbered {
                let words = pair.join(" ");
                found.push(LineNumber {
                    line: sentence.line,
                    words,
                });
            }
        }
        let cited = (words.iter())
            .filter(|word| source_and_line(word.trim_matches(|c: char| "`(),;.".contains(c))));
        found.extend(cited.map(|word| LineNumber {
            line: sentence.line,
            words: word.to_string(),
        }));
    }
    found
}

/// Whether `word` is `FILE.EXT:LINE`, a source file with a line number.
fn source_and_line(word: &str) -> bool {
    let Some((file, line)) = word.rsplit_once(':') else {
        return false;
    };
    let source = [".rs", ".py", ".c", ".h"]
        .iter()
        .any(|ext| file.ends_with(ext));
    source && !line.is_empty() && line.chars().all(|c| c.is_ascii_digit() || c == '-')
}

/// Whether `word`, a run of letters and digits, looks like a git commit hash.
pub fn is_commit_hash(word: &str) -> bool {
    let hex = word
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, 'a'..='f'));
    let digit = word.chars().any(|c| c.is_ascii_digit());
    let letter = word.chars().any(|c| c.is_ascii_alphabetic());
    (7..=40).contains(&word.len()) && hex && digit && letter
}

/// The byte ranges of `markdown`'s generated blocks, each from its begin line to the end of
/// its end line. A block left open runs to the end of the text.
pub fn generated_blocks(markdown: &str) -> Vec<Range<usize>> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, usize)> = None;
    let mut offset = 0;
    for line in markdown.split_inclusive('\n') {
        let next = offset + line.len();
        match (&open, marker(line)) {
            (None, Some((name, Marker::Begin))) => open = Some((name.to_owned(), offset)),
            (Some((open_name, start)), Some((name, Marker::End))) if open_name == name => {
                blocks.push(*start..next);
                open = None;
            }
            _ => {}
        }
        offset = next;
    }
    blocks.extend(open.map(|(_, start)| start..markdown.len()));
    blocks
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Begin,
    End,
}

/// The generated block's name and kind if `line` is `<!-- NAME:begin ... -->` or
/// `<!-- NAME:end -->`.
fn marker(line: &str) -> Option<(&str, Marker)> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    let word = inner.split_whitespace().next()?;
    let (name, kind) = word.rsplit_once(':')?;
    let kind = match kind {
        "begin" => Marker::Begin,
        "end" => Marker::End,
        _ => return None,
    };
    (!name.is_empty()).then_some((name, kind))
}

/// `markdown` with its generated blocks blanked out, every line kept (so lines still count).
pub fn without_generated_blocks(markdown: &str) -> String {
    let mut text = markdown.to_owned();
    for block in generated_blocks(markdown).into_iter().rev() {
        let blank: String = markdown[block.clone()]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        text.replace_range(block, &blank);
    }
    text
}

/// The commit hashes in `markdown`'s prose, in order (see the module's documentation).
pub fn commit_hashes(markdown: &str) -> Vec<Hash> {
    let text = without_generated_blocks(markdown);
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut in_code_block = false;
    let mut found = Vec::new();
    for (event, range) in Parser::new_ext(&text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code_block = true,
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Text(prose) | Event::Code(prose) if !in_code_block => {
                let line = line_of(range.start);
                found.extend(hashes_in(&prose).map(|hash| Hash { line, hash }));
            }
            _ => {}
        }
    }
    found
}

/// The commit hashes among the words of `prose`, leaving out the words of URLs.
fn hashes_in(prose: &str) -> impl Iterator<Item = String> + '_ {
    let not_urls = prose
        .split_whitespace()
        .filter(|chunk| !chunk.contains("://"));
    not_urls
        .flat_map(|chunk| chunk.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|word| is_commit_hash(word))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hashes found, as `LINE:HASH`.
    fn hashes(markdown: &str) -> Vec<String> {
        let found = commit_hashes(markdown).into_iter();
        found
            .map(|hash| format!("{}:{}", hash.line, hash.hash))
            .collect()
    }

    #[test]
    fn source_line_numbers_in_prose_are_found() {
        let page = "In `mod.rs` (line 189), lines 818–880 run it.\n\n\
                    See `accept.rs:458` and `selector_events.py:154-172`.\n\n\
                    The README has 200 lines; `Cargo.toml:deps` is no line.\n\n\
                    ```text\nline 12\n```\n";
        let found: Vec<String> = (line_numbers(page).into_iter())
            .map(|number| format!("{}:{}", number.line, number.words))
            .collect();
        assert_eq!(
            found,
            [
                "1:(line 189),",
                "1:lines 818–880",
                "3:`accept.rs:458`",
                "3:`selector_events.py:154-172`.",
            ]
        );
    }

    #[test]
    fn hashes_are_told_from_other_hex_looking_words() {
        for hash in [
            "3e63dfa",
            "0a9a4fd",
            "229e887",
            "0a9a4fdd37d9fdf88bbf866ffa4d07a53c938b05",
        ] {
            assert!(is_commit_hash(hash), "{hash}");
        }
        let sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        for word in [
            "1234567",
            "deadbeef",
            "0x1f2e3d4",
            "ff8800",
            "3E63DFA",
            "abc123",
            sha256,
        ] {
            assert!(!is_commit_hash(word), "{word}");
        }
        assert!(!is_commit_hash("facaded"), "letters only");
    }

    #[test]
    fn hashes_in_prose_and_inline_code_are_found_with_their_lines() {
        let page = "# Title\n\nIn the run of `67c1205` the race\nwent on (229e887, 3e63dfa).\n";
        assert_eq!(hashes(page), ["3:67c1205", "4:229e887", "4:3e63dfa"]);
    }

    #[test]
    fn code_blocks_urls_and_link_targets_are_no_prose() {
        let page = "Text.\n\n```text\nbuilt 3e63dfa\n```\n\n    indented 229e887\n\n\
                    [the source](https://github.com/o/r/blob/0a9a4fd/x.rs) and \
                    https://github.com/o/r/commit/67c1205 here\n";
        assert!(hashes(page).is_empty(), "{:?}", hashes(page));
        assert_eq!(hashes("[run 67c1205](x.md)\n"), ["1:67c1205"]);
    }

    #[test]
    fn generated_blocks_are_left_out_and_lines_still_count() {
        let page = "one\n<!-- results:begin (written by bench-client; do not edit) -->\n\
                    run of 3e63dfa\n<!-- results:end -->\nafter 229e887\n";
        assert_eq!(hashes(page), ["5:229e887"]);
        let begin = page.find("<!--").unwrap();
        let end = page.find("after").unwrap();
        assert_eq!(generated_blocks(page), vec![Range { start: begin, end }]);
    }

    #[test]
    fn an_end_of_another_name_does_not_close_a_block_and_an_open_one_runs_to_the_end() {
        let page = "<!-- a:begin -->\n3e63dfa\n<!-- b:end -->\n229e887\n";
        assert!(hashes(page).is_empty(), "{:?}", hashes(page));
        assert_eq!(
            generated_blocks(page),
            vec![Range {
                start: 0,
                end: page.len()
            }]
        );
        assert_eq!(hashes("<!-- not a marker -->\n3e63dfa\n"), ["2:3e63dfa"]);
    }

    #[test]
    fn references_and_their_topics_are_reference_pages() {
        for page in [
            "docs/protocol.md",
            "docs/protocol-race.md",
            "docs/contract-bodies.md",
        ] {
            assert!(is_reference(page), "{page}");
            assert_eq!(max_lines(page), REFERENCE_MAX_LINES);
        }
        for page in [
            "docs/tokio.md",
            "docs/protocols.md",
            "README.md",
            "protocol.md",
        ] {
            assert!(!is_reference(page), "{page}");
        }
        assert_eq!(max_lines("docs/scale.md"), LESSON_MAX_LINES);
    }

    #[test]
    fn the_line_limit_counts_lines() {
        assert_eq!(too_long("a\nb\n", 2), None);
        assert_eq!(too_long("a\nb\nc", 2), Some(3));
        assert_eq!(too_long(&"x\n".repeat(201), README_MAX_LINES), Some(201));
        assert_eq!(too_long(&"x\n".repeat(200), README_MAX_LINES), None);
    }
}
