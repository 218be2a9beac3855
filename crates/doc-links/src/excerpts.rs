//! Code the pages show from the project's sources: a fenced block right after a line
//! `<!-- from: PATH -->` must be a verbatim part of the file at `PATH` (from the repository's
//! root), whatever its indentation there, so that the pages show the code that was measured
//! and a change to it fails the docs check until the page shows the new code.
//!
//! Every Rust block is either such an excerpt or a quotation of a third party's source, after
//! a line `<!-- quote: CRATE VERSION, PATH -->`, which no build of this project can check: a
//! snippet written by hand for the page would compile nowhere and go stale unseen.

use crate::prose::without_generated_blocks;

/// A fenced block a page says it took from a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The line of its `<!-- from: PATH -->` marker, from 1.
    pub line: usize,
    /// `PATH`, from the repository's root.
    pub from: String,
    /// The block's text, each line ended by `\n`.
    pub code: String,
}

/// Every excerpt of `markdown`, in order. A marker not followed by a fenced block is an
/// excerpt with no code, which no source contains.
pub fn excerpts(markdown: &str) -> Vec<Excerpt> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(from) = marker(line) else { continue };
        let mut code = String::new();
        let fence = lines.get(at + 1).filter(|next| next.starts_with("```"));
        if fence.is_some() {
            for line in lines[at + 2..]
                .iter()
                .take_while(|line| !line.starts_with("```"))
            {
                code.push_str(line);
                code.push('\n');
            }
        }
        found.push(Excerpt {
            line: at + 1,
            from: from.to_owned(),
            code,
        });
    }
    found
}

/// `PATH` of a line `<!-- from: PATH -->`.
fn marker(line: &str) -> Option<&str> {
    comment(line, "from:")
}

/// What follows `key` in a line `<!-- KEY WHAT -->`, if it says something.
fn comment<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let inner = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?;
    let what = inner.trim().strip_prefix(key)?.trim();
    (!what.is_empty()).then_some(what)
}

/// The lines, from 1, of the Rust blocks of `markdown` whose fence follows neither a
/// `<!-- from: PATH -->` nor a `<!-- quote: CRATE VERSION, PATH -->` line. Generated blocks
/// are the bench client's, and left out.
pub fn unsourced_rust_blocks(markdown: &str) -> Vec<usize> {
    let text = without_generated_blocks(markdown);
    let lines: Vec<&str> = text.lines().collect();
    let sourced = |line: &str| marker(line).is_some() || comment(line, "quote:").is_some();
    let fences =
        (lines.iter().enumerate()).filter(|(_, line)| line.trim_start().starts_with("```rust"));
    fences
        .filter(|(at, _)| {
            !at.checked_sub(1)
                .is_some_and(|before| sourced(lines[before]))
        })
        .map(|(at, _)| at + 1)
        .collect()
}

/// Whether `source` holds `code` line for line, each non-empty line indented alike (a method
/// shown outside its `impl`).
pub fn is_part_of(code: &str, source: &str) -> bool {
    if code.trim().is_empty() {
        return false;
    }
    let indents = source
        .lines()
        .map(|line| line.len() - line.trim_start().len());
    let mut indents: Vec<usize> = indents.collect();
    indents.sort_unstable();
    indents.dedup();
    indents.into_iter().any(|indent| {
        let pad = " ".repeat(indent);
        let indented: String = (code.lines())
            .map(|line| match line.is_empty() {
                true => "\n".to_owned(),
                false => format!("{pad}{line}\n"),
            })
            .collect();
        source.contains(&indented)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_the_block_after_its_marker() {
        let page = "text\n<!-- from: a.rs -->\n```rust\nfn a() {}\n\nfn b() {}\n```\n\
                    ```rust\nfn c() {}\n```\n<!-- from: b.rs -->\nno block\n";
        let found = excerpts(page);
        assert_eq!(
            found,
            [
                Excerpt {
                    line: 2,
                    from: "a.rs".into(),
                    code: "fn a() {}\n\nfn b() {}\n".into(),
                },
                Excerpt {
                    line: 11,
                    from: "b.rs".into(),
                    code: String::new(),
                },
            ]
        );
    }

    #[test]
    fn a_rust_block_needs_its_source_or_a_quotation() {
        let page = "<!-- from: a.rs -->\n```rust\nfn a() {}\n```\n\
                    <!-- quote: async-io 2.6.0, src/driver.rs -->\n```rust\nloop {}\n```\n\
                    text\n```rust\nfn b() {}\n```\n<!-- quote: -->\n  ```rust,ignore\n```\n\
                    ```text\nnot rust\n```\n\
                    <!-- figures:begin x -->\n```rust\ndrawn\n```\n<!-- figures:end -->\n";
        assert_eq!(unsourced_rust_blocks(page), [10, 14]);
    }

    #[test]
    fn a_part_may_sit_indented_but_not_changed() {
        let source = "impl A {\n    fn a() {\n        one();\n    }\n\n    fn b() {}\n}\n";
        assert!(is_part_of("fn a() {\n    one();\n}\n\nfn b() {}\n", source));
        assert!(is_part_of("impl A {\n", source));
        assert!(!is_part_of("fn a() {\n    two();\n}\n", source));
        assert!(!is_part_of("fn a() {\n  one();\n}\n", source));
        assert!(!is_part_of("", source));
    }
}
