//! Every relative link in the project's Markdown must lead somewhere: a file or folder that
//! exists and, for `file.md#anchor` or `#anchor`, a heading of that file. The test in
//! `tests/links.rs` runs this over `README.md`, `docs/*.md`, `results/**/*.md` and
//! `reference/fastapi/README.md`; a lesson that moved or a
//! heading that was renamed then fails the test command instead of a reader's click.
//!
//! Beside it, [`prose`] is the docs check: the README within [`prose::README_MAX_LINES`]
//! lines, each lesson within [`prose::LESSON_MAX_LINES`] and each reference page within
//! [`prose::REFERENCE_MAX_LINES`], and no commit hash or source line
//! number in the prose of the README or `docs/*.md`; and [`outcomes`] the outcome-words lint:
//! a sentence that says what a run showed is checked by a claim or named in the allow-list
//! (`tests/prose.rs`); [`excerpts`], code a page shows from a source file, verbatim
//! (`tests/excerpts.rs`); [`facts`], what a page says of the code (a crate's version, a
//! default) against the code (`tests/facts.rs`).
//!
//! Anchors follow GitHub's rule for heading ids: the heading's text, lower-cased, with every
//! character that is not a letter, a digit, a space, `-` or `_` removed, and spaces turned
//! into `-`; a repeated heading gets `-1`, `-2`, … after the first.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

pub mod excerpts;
pub mod facts;
pub mod outcomes;
pub mod prose;

/// A link or image in a Markdown file: where it points and the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub line: usize,
    pub target: String,
}

/// A link that does not resolve, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub file: PathBuf,
    pub link: Link,
    pub why: String,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (file, line) = (self.file.display(), self.link.line);
        write!(f, "{file}:{line}: {} ({})", self.link.target, self.why)
    }
}

fn parser(markdown: &str) -> Parser<'_> {
    Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES,
    )
}

/// Every link and image destination in `markdown`, in order.
pub fn links(markdown: &str) -> Vec<Link> {
    let line_of = |offset: usize| markdown[..offset].matches('\n').count() + 1;
    let events = parser(markdown).into_offset_iter();
    let targets = events.filter_map(|(event, range)| match event {
        Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
            Some((dest_url.into_string(), range.start))
        }
        _ => None,
    });
    targets
        .map(|(target, offset)| Link {
            line: line_of(offset),
            target,
        })
        .collect()
}

/// The anchors GitHub gives `markdown`'s headings.
pub fn anchors(markdown: &str) -> HashSet<String> {
    let mut anchors = HashSet::new();
    let mut heading: Option<String> = None;
    for event in parser(markdown) {
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                if let Some(id) = id {
                    anchors.insert(id.into_string());
                }
                heading = (level <= HeadingLevel::H6).then(String::new);
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = &mut heading {
                    heading.push_str(&text);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let slug = slug(&heading.take().unwrap_or_default());
                let unique = (0..)
                    .map(|n| match n {
                        0 => slug.clone(),
                        n => format!("{slug}-{n}"),
                    })
                    .find(|candidate| !anchors.contains(candidate));
                anchors.extend(unique);
            }
            _ => {}
        }
    }
    anchors
}

/// A heading's id, by GitHub's rule (see the crate's documentation).
pub fn slug(heading: &str) -> String {
    let kept = heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .collect::<String>();
    kept.replace(' ', "-")
}

/// The Markdown files under `dir` and its subfolders, sorted.
pub fn markdown_under(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            found.extend(markdown_under(&path)?);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// Whether a link leaves the repository (a URL) rather than pointing into it.
fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// The links of the Markdown file `file` that do not resolve.
pub fn check_file(file: &Path) -> std::io::Result<Vec<Broken>> {
    let markdown = std::fs::read_to_string(file)?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut broken = Vec::new();
    for link in links(&markdown) {
        if is_external(&link.target) {
            continue;
        }
        if let Some(why) = unresolved(file, dir, &markdown, &link.target) {
            broken.push(Broken {
                file: file.to_owned(),
                link,
                why,
            });
        }
    }
    Ok(broken)
}

/// Why `target`, a link in `file` (whose text is `markdown`), leads nowhere; `None` if it
/// resolves.
fn unresolved(file: &Path, dir: &Path, markdown: &str, target: &str) -> Option<String> {
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let linked = if path.is_empty() {
        file.to_owned()
    } else {
        dir.join(path)
    };
    if !linked.exists() {
        return Some(format!("no file {}", linked.display()));
    }
    let anchor = anchor?;
    let text = if path.is_empty() {
        markdown.to_owned()
    } else {
        std::fs::read_to_string(&linked).ok()?
    };
    let is_markdown = linked.extension().is_some_and(|ext| ext == "md");
    (is_markdown && !anchors(&text).contains(anchor))
        .then(|| format!("no heading #{anchor} in {}", linked.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_github() {
        assert_eq!(slug("What we don't know yet"), "what-we-dont-know-yet");
        assert_eq!(
            slug("The bounded pool: a staircase"),
            "the-bounded-pool-a-staircase"
        );
        assert_eq!(slug("Run it, by hand"), "run-it-by-hand");
        assert_eq!(slug("`/bad` on tokio"), "bad-on-tokio");
        assert_eq!(
            slug("ten requests – seven stacks"),
            "ten-requests--seven-stacks"
        );
    }

    #[test]
    fn headings_with_code_and_repeats_get_their_anchors() {
        let anchors = anchors("# A `fn` here\n\n## Notes\n\n## Notes\n");
        assert!(anchors.contains("a-fn-here"), "{anchors:?}");
        assert!(anchors.contains("notes") && anchors.contains("notes-1"));
    }

    #[test]
    fn links_and_images_are_found_with_their_lines() {
        let found = links("[a](x.md)\n\n![b](img.svg) and [c](https://e.org)\n");
        let targets: Vec<(usize, &str)> =
            found.iter().map(|l| (l.line, l.target.as_str())).collect();
        assert_eq!(targets, [(1, "x.md"), (3, "img.svg"), (3, "https://e.org")]);
    }

    #[test]
    fn missing_files_and_headings_are_caught() {
        let dir = std::env::temp_dir().join(format!("doc-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let other = dir.join("other.md");
        std::fs::write(&other, "# There\n").unwrap();
        let file = dir.join("page.md");
        let page = "# Here\n\n[ok](other.md#there) [self](#here) [web](https://x.org/nope)\n\
                    [gone](missing.md) [bad anchor](other.md#nowhere) [bad self](#nope)\n";
        std::fs::write(&file, page).unwrap();
        let broken = check_file(&file).unwrap();
        let targets: Vec<&str> = broken.iter().map(|b| b.link.target.as_str()).collect();
        assert_eq!(targets, ["missing.md", "other.md#nowhere", "#nope"]);
        assert!(broken.iter().all(|b| b.link.line == 4), "{broken:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
