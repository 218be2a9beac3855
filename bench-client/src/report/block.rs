//! The generated blocks of the Markdown pages, in one format: a block opens with
//! `<!-- NAME:begin SPEC -->` and closes with `<!-- NAME:end -->`, and everything between is
//! the bench client's to rewrite. SPEC is what the block copies (`FILE#HEADING` for a
//! page's figures), or who writes it. The README's results block, the main job's sentence and
//! every page's figures are blocks of this kind; the docs check reads the same markers.

/// Why a page's generated block could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum BlockError {
    /// A block that opens and never closes.
    #[error("line {line}: a {name} block without its `{end}`")]
    Unclosed {
        line: usize,
        name: &'static str,
        end: String,
    },
    /// A block whose body could not be drawn, at the line that opens it.
    #[error("line {line}: {source}")]
    Body {
        line: usize,
        #[source]
        source: Box<BlockError>,
    },
    /// A page that holds no block of the kind it should.
    #[error("no `{0}` block")]
    Missing(String),
    /// A figures block's spec names no section: it must be `FILE#HEADING`.
    #[error("`{0}` names no section: write FILE#HEADING")]
    NoSection(String),
    /// A stacks block asks for a table there is none of.
    #[error("no stacks table or list `{0}`")]
    NoTable(String),
    /// The results file a block copies has no such heading.
    #[error("{file} has no section headed `{heading}`")]
    NoHeading { file: String, heading: String },
    /// The page, or the results file a block copies, could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// One kind of generated block, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub name: &'static str,
}

/// The README's results block, written from the full comparison.
pub const RESULTS: Block = Block { name: "results" };
/// A page's figures: one section of a results file.
pub const FIGURES: Block = Block { name: "figures" };

/// The SPEC of the blocks that copy nothing: who writes them.
pub const WRITTEN: &str = "(written by bench-client; do not edit)";

impl Block {
    /// The line that opens a block of this kind with `spec`.
    pub fn begin(&self, spec: &str) -> String {
        format!("<!-- {}:begin {spec} -->", self.name)
    }

    /// The line that closes a block of this kind.
    pub fn end(&self) -> String {
        format!("<!-- {}:end -->", self.name)
    }

    /// The SPEC of `line`, if it opens a block of this kind.
    pub fn opens<'a>(&self, line: &'a str) -> Option<&'a str> {
        let rest = line.strip_prefix("<!-- ")?.strip_prefix(self.name)?;
        let spec = rest
            .strip_prefix(":begin")?
            .trim_end()
            .strip_suffix("-->")?;
        Some(spec.trim())
    }

    /// `text` with the body of each block of this kind rewritten: `body_of(spec)` gives the
    /// new body, whole lines, each ending in a newline. An error names the block's line.
    pub fn rewrite(
        &self,
        text: &str,
        mut body_of: impl FnMut(&str) -> Result<String, BlockError>,
    ) -> Result<String, BlockError> {
        let end = self.end();
        let mut out = String::with_capacity(text.len());
        let mut lines = text.lines().enumerate();
        while let Some((number, line)) = lines.next() {
            out.push_str(line);
            out.push('\n');
            let Some(spec) = self.opens(line) else {
                continue;
            };
            let line = number + 1;
            let body = body_of(spec).map_err(|source| BlockError::Body {
                line,
                source: Box::new(source),
            })?;
            let closed = lines.by_ref().any(|(_, line)| line.trim() == end);
            if !closed {
                let name = self.name;
                return Err(BlockError::Unclosed { line, name, end });
            }
            out.push_str(&body);
            out.push_str(&end);
            out.push('\n');
        }
        Ok(out)
    }

    /// How many blocks of this kind `text` opens.
    pub fn count(&self, text: &str) -> usize {
        text.lines()
            .filter(|line| self.opens(line).is_some())
            .count()
    }
}

/// Rewrites the body of every block `block` in the file at `path` with `body`, atomically;
/// a file with no such block is an error.
pub fn replace_in(path: &std::path::Path, block: Block, body: &str) -> Result<(), BlockError> {
    let io = |source| BlockError::Io {
        path: path.display().to_string(),
        source,
    };
    let text = std::fs::read_to_string(path).map_err(io)?;
    if block.count(&text) == 0 {
        return Err(BlockError::Missing(block.begin("...")));
    }
    let fresh = block.rewrite(&text, |_| Ok(body.to_owned()))?;
    super::write_atomically(path, fresh.as_bytes()).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_found_by_its_kind_and_rewritten_between_its_markers() {
        let text = "# Page\n\n<!-- figures:begin results/RESULTS.md#Findings -->\nold\n\
                    <!-- figures:end -->\n<!-- results:begin (written by bench-client; do not edit) -->\n\
                    kept\n<!-- results:end -->\nAfter.\n";
        let fresh = FIGURES
            .rewrite(text, |spec| Ok(format!("from {spec}\n")))
            .unwrap();
        assert!(
            fresh.contains(
                "#Findings -->\nfrom results/RESULTS.md#Findings\n<!-- figures:end -->\n"
            ),
            "{fresh}"
        );
        assert!(
            fresh.contains("-->\nkept\n<!-- results:end -->\nAfter.\n"),
            "{fresh}"
        );
        assert_eq!(RESULTS.opens(&RESULTS.begin(WRITTEN)), Some(WRITTEN));
        assert_eq!(FIGURES.opens("<!-- results:begin x -->"), None);
        assert_eq!(FIGURES.count(text), 1);
    }

    #[test]
    fn a_block_that_never_ends_is_an_error_naming_its_line() {
        let text = "one\n<!-- figures:begin a.md#B -->\nno end\n";
        let error = FIGURES.rewrite(text, |_| Ok(String::new())).unwrap_err();
        assert!(error.to_string().starts_with("line 2: "), "{error}");
    }
}
