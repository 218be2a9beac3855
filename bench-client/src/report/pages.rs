//! The figures of the lesson pages: every number a page of `docs/` or the README states
//! stands in a generated block that copies one section of a results file, so that a run of
//! the main job (or `bench-client redraw --pages`) leaves every page true without anyone
//! re-reading it. Words are written by hand; numbers are not.
//!
//! A page asks for a section by the results file and the heading's text:
//!
//! ```text
//! <!-- figures:begin results/race/RACE.md#Outcomes -->
//! (rewritten from the section "Outcomes" of results/race/RACE.md)
//! <!-- figures:end -->
//! ```
//!
//! The block names its run once (date, machine, code stamp, from the file's Environment
//! section), says so when that run is stale (the code that measures it has changed since:
//! the caller's [`Stale`] notes), drops the section's own heading (the page gives its own), turns the section's
//! sub-headings into bold lines (so that a page's anchors are its own) and rebases relative
//! links from the results file's folder to the page's.

use std::path::{Component, Path, PathBuf};

use super::block::{BlockError, FIGURES};
use super::stacks::STACKS;
use crate::Error;

/// The pages whose blocks [`refresh_all`] rewrites, from the repository's root: the README
/// and every Markdown file directly under these folders.
pub const PAGES: &[&str] = &["README.md"];
pub const PAGE_FOLDERS: &[&str] = &["docs"];

/// Every page with figures blocks, from the repository's root.
pub fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = PAGES.iter().map(|page| root.join(page)).collect();
    for folder in PAGE_FOLDERS {
        let entries = std::fs::read_dir(root.join(folder)).into_iter().flatten();
        let mut markdown: Vec<PathBuf> = (entries.flatten().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        markdown.sort();
        pages.extend(markdown);
    }
    pages.retain(|page| page.exists());
    pages
}

/// The note each results file of a stale run carries into the blocks that copy it.
pub type Stale = [(PathBuf, String)];

/// The note of `stale` for the results file `file`, if its run is stale.
pub fn note_for<'a>(stale: &'a Stale, file: &Path) -> Option<&'a str> {
    let found = stale.iter().find(|(stale, _)| same_file(stale, file));
    found.map(|(_, note)| note.as_str())
}

/// Whether two paths name one file (one may be relative to the working folder, the other
/// not).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Rewrites every figures block of every page under `root`; returns the pages it changed.
pub fn refresh_all(root: &Path, stale: &Stale) -> Result<Vec<PathBuf>, Error> {
    let mut changed = Vec::new();
    for page in pages(root) {
        let text = std::fs::read_to_string(&page).map_err(Error::read(&page))?;
        let fresh = refresh(&text, &page, root, stale).map_err(|source| Error::Page {
            page: page.clone(),
            source,
        })?;
        if fresh != text {
            super::write_atomically(&page, fresh.as_bytes()).map_err(Error::write(&page))?;
            changed.push(page);
        }
    }
    Ok(changed)
}

/// `text` (the page at `page`) with each figures block rewritten from its results file, and
/// each stacks block from the stacks' descriptions.
pub fn refresh(text: &str, page: &Path, root: &Path, stale: &Stale) -> Result<String, BlockError> {
    let page_dir = relative_dir(page, root);
    let text = FIGURES.rewrite(text, |spec| block(root, &page_dir, spec, stale))?;
    super::stacks::inline(&STACKS.rewrite(&text, super::stacks::body)?)
}

/// The block for `spec` (`FILE#HEADING`, FILE from the repository's root), seen from a page
/// in `page_dir`.
fn block(root: &Path, page_dir: &Path, spec: &str, stale: &Stale) -> Result<String, BlockError> {
    let (file, heading) = spec
        .split_once('#')
        .ok_or_else(|| BlockError::NoSection(spec.to_owned()))?;
    let source = std::fs::read_to_string(root.join(file)).map_err(|source| BlockError::Io {
        path: file.to_owned(),
        source,
    })?;
    let body = section(&source, heading).ok_or_else(|| BlockError::NoHeading {
        file: file.to_owned(),
        heading: heading.to_owned(),
    })?;
    let source_dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let link = relative_path(page_dir, Path::new(file));
    let mut out = run_line(&source, &link);
    if let Some(note) = note_for(stale, &root.join(file)) {
        out.push_str(&format!(" {note}"));
    }
    out.push_str("\n\n");
    for line in body.trim_matches('\n').lines() {
        let line = match line.trim_start_matches('#') {
            rest if rest.len() < line.len() && rest.starts_with(' ') => {
                format!("**{}**", rest.trim())
            }
            _ => line.to_owned(),
        };
        out.push_str(&rebase_links(&line, source_dir, page_dir));
        out.push('\n');
    }
    Ok(out)
}

/// The lines under the heading whose text is `heading`, up to the next heading of the same
/// level or above.
pub fn section<'a>(markdown: &'a str, heading: &str) -> Option<&'a str> {
    let mut offset = 0;
    let mut start: Option<(usize, usize)> = None;
    for line in markdown.split_inclusive('\n') {
        let level = line.chars().take_while(|c| *c == '#').count();
        let is_heading = level > 0 && line[level..].starts_with(' ');
        match start {
            None if is_heading && line[level..].trim() == heading => {
                start = Some((offset + line.len(), level));
            }
            Some((from, at_level)) if is_heading && level <= at_level => {
                return Some(&markdown[from..offset]);
            }
            _ => {}
        }
        offset += line.len();
    }
    start.map(|(from, _)| &markdown[from..])
}

/// "From FILE, measured on DATE on CPU with RUSTC, code stamp `S`.", from the Environment list
/// a results file opens with.
fn run_line(source: &str, link: &Path) -> String {
    let field =
        |name: &str| (source.lines()).find_map(|line| line.strip_prefix(&format!("- {name}: ")));
    let date = field("date").map(|date| date.get(..10).unwrap_or(date));
    let cpu = field("CPU");
    let rustc = field("rustc").map(|rustc| rustc.split(" (").next().unwrap_or(rustc));
    let stamp = field("code stamp");
    let link = link.display();
    let mut out = format!("*From [{link}]({link})");
    if let Some(date) = date {
        out.push_str(&format!(", measured on {date}"));
    }
    if let Some(cpu) = cpu {
        out.push_str(&format!(" on {cpu}"));
    }
    if let Some(rustc) = rustc {
        out.push_str(&format!(" with {rustc}"));
    }
    if let Some(stamp) = stamp {
        out.push_str(&format!(", code stamp {stamp}"));
    }
    out.push_str(".*");
    out
}

/// `line` with each relative Markdown link target `](target)` moved from `from` to `to`
/// (both folders from the repository's root).
pub fn rebase_links(line: &str, from: &Path, to: &Path) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find("](") {
        let (head, tail) = rest.split_at(open + 2);
        out.push_str(head);
        let close = tail.find(')').unwrap_or(tail.len());
        out.push_str(&rebase_target(&tail[..close], from, to));
        rest = &tail[close..];
    }
    out.push_str(rest);
    out
}

/// One link target moved from `from` to `to`; absolute URLs and paths are left alone.
fn rebase_target(target: &str, from: &Path, to: &Path) -> String {
    if target.contains("://") || target.starts_with('/') || target.starts_with("mailto:") {
        return target.to_owned();
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        // A bare `#anchor` pointed into the results file itself; the caller's page is not it.
        return target.to_owned();
    } else {
        normalise(&from.join(path))
    };
    let mut out = relative_path(to, &file).display().to_string();
    if let Some(anchor) = anchor {
        out.push('#');
        out.push_str(anchor);
    }
    out
}

/// The folder of `page`, from `root`.
fn relative_dir(page: &Path, root: &Path) -> PathBuf {
    let page = page.strip_prefix(root).unwrap_or(page);
    page.parent().map(Path::to_owned).unwrap_or_default()
}

/// `path` with `.` and `name/..` taken out.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `to` (from the repository's root) as seen from the folder `from` (also from the root).
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let (from, to) = (normalise(from), normalise(to));
    let from: Vec<Component> = from.components().collect();
    let to_parts: Vec<Component> = to.components().collect();
    let shared = (from.iter().zip(&to_parts))
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in shared..from.len() {
        out.push("..");
    }
    for part in &to_parts[shared..] {
        out.push(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULTS: &str = "# Race\n\nIntro.\n\n## Environment\n\n- date: 2026-12-04T16:34:59Z\n\
        - CPU: Xeon (2 cores usable)\n- rustc: rustc 1.95.0 (5980 2026-04-14)\n- code stamp: `abc`\n\n## Outcomes\n\n| a | b |\n|---|---|\n\
        | 1 | 2 |\n\nSee [the plot](race.svg) and [top](../RESULTS.md#comparison).\n\n\
        ### demo-axum\n\nmore\n\n## Next\n\nnot this\n";

    #[test]
    fn a_section_runs_to_the_next_heading_of_its_level() {
        let outcomes = section(RESULTS, "Outcomes").unwrap();
        assert!(outcomes.contains("| 1 | 2 |"));
        assert!(outcomes.contains("### demo-axum"));
        assert!(!outcomes.contains("not this"));
        assert_eq!(section(RESULTS, "demo-axum").unwrap(), "\nmore\n\n");
        assert_eq!(section(RESULTS, "Next").unwrap(), "\nnot this\n");
        assert!(section(RESULTS, "Missing").is_none());
    }

    #[test]
    fn links_move_from_the_results_folder_to_the_page() {
        let from = Path::new("results/race");
        assert_eq!(
            rebase_links(
                "[p](race.svg) [t](../RESULTS.md#x)",
                from,
                Path::new("docs")
            ),
            "[p](../results/race/race.svg) [t](../results/RESULTS.md#x)"
        );
        assert_eq!(
            rebase_links("[p](race.svg) [w](https://a.b/c)", from, Path::new("")),
            "[p](results/race/race.svg) [w](https://a.b/c)"
        );
    }

    #[test]
    fn a_block_is_rewritten_from_its_section_and_names_its_run() {
        let root = std::env::temp_dir().join(format!("pages-{}", std::process::id()));
        std::fs::create_dir_all(root.join("results/race")).unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("results/race/RACE.md"), RESULTS).unwrap();
        let page = root.join("docs/health.md");
        let text = "# Page\n\nWords.\n\n<!-- figures:begin results/race/RACE.md#Outcomes -->\n\
            stale\n<!-- figures:end -->\n\nAfter.\n";
        let fresh = refresh(text, &page, &root, &[]).unwrap();
        assert!(fresh.contains(
            "*From [../results/race/RACE.md](../results/race/RACE.md), measured on 2026-12-04 \
             on Xeon (2 cores usable) with rustc 1.95.0, code stamp `abc`.*"
        ));
        assert!(fresh.contains("[the plot](../results/race/race.svg)"));
        assert!(fresh.contains("**demo-axum**"));
        assert!(!fresh.contains("stale"));
        let note = "*Stale: rerun.*".to_owned();
        let stale = [(root.join("results/race/RACE.md"), note.clone())];
        let marked = refresh(&fresh, &page, &root, &stale).unwrap();
        assert!(marked.contains(&format!("code stamp `abc`.* {note}\n\n| a | b |")));
        assert!(fresh.ends_with("<!-- figures:end -->\n\nAfter.\n"));
        assert_eq!(
            refresh(&fresh, &page, &root, &[]).unwrap(),
            fresh,
            "a second refresh changes nothing"
        );
        let missing = text.replace("#Outcomes", "#Nothing");
        assert!(
            refresh(&missing, &page, &root, &[])
                .unwrap_err()
                .to_string()
                .contains("no section headed")
        );
        let open = "<!-- figures:begin results/race/RACE.md#Outcomes -->\nno end\n";
        assert!(
            refresh(open, &page, &root, &[])
                .unwrap_err()
                .to_string()
                .contains("without its")
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
