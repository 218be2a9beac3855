//! Code the pages show from the project's sources: a fenced block right after a line
//! `<!-- from: PATH -->` must be a verbatim part of the file at `PATH` (from the repository's
//! root), whatever its indentation there, so that the pages show the code that was measured
//! and a change to it fails the docs check until the page shows the new code.

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
    let inner = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?;
    let path = inner.trim().strip_prefix("from:")?.trim();
    (!path.is_empty()).then_some(path)
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
    fn a_part_may_sit_indented_but_not_changed() {
        let source = "impl A {\n    fn a() {\n        one();\n    }\n\n    fn b() {}\n}\n";
        assert!(is_part_of("fn a() {\n    one();\n}\n\nfn b() {}\n", source));
        assert!(is_part_of("impl A {\n", source));
        assert!(!is_part_of("fn a() {\n    two();\n}\n", source));
        assert!(!is_part_of("fn a() {\n  one();\n}\n", source));
        assert!(!is_part_of("", source));
    }
}
