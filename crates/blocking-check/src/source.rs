//! The parsed sources: each file's syntax tree, its `use` aliases and the crates it names, and
//! an index of the functions of all files by name (the only resolution a parser can do
//! without types).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// One parsed file.
pub struct SourceFile {
    /// As the report names it (relative to the workspace root when read from it).
    pub name: String,
    pub ast: syn::File,
    /// `use a::b::c as d;` maps `d` to `[a, b, c]`; `use a::b;` maps `b` to `[a, b]`.
    pub aliases: HashMap<String, Vec<String>>,
    /// The prefixes of `use a::b::*;`.
    pub globs: Vec<Vec<String>>,
    /// The first segments of every path and `use` in the file: the crates it names.
    pub crates: HashSet<String>,
    /// The crate it belongs to, as code names it: the folder above `src`, `-` as `_`
    /// (`crates/demo-contract/src/lib.rs`: `demo_contract`); empty if there is none.
    pub crate_name: String,
}

impl std::fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceFile")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl SourceFile {
    pub fn parse(name: &str, text: &str) -> Result<SourceFile, String> {
        let ast = syn::parse_file(text).map_err(|error| format!("{name}: {error}"))?;
        let mut names = Names::default();
        names.visit_file(&ast);
        let components: Vec<&str> = name.split('/').collect();
        let crate_name = components
            .iter()
            .position(|component| *component == "src")
            .and_then(|at| at.checked_sub(1))
            .map_or_else(String::new, |at| components[at].replace('-', "_"));
        Ok(SourceFile {
            name: name.to_owned(),
            ast,
            crate_name,
            aliases: names.aliases,
            globs: names.globs,
            crates: names.crates,
        })
    }

    /// `path` with its first segment replaced by what a `use` made it stand for.
    pub fn expand(&self, path: &syn::Path) -> Vec<String> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        match segments.split_first() {
            Some((first, rest)) => match self.aliases.get(first) {
                Some(prefix) => prefix.iter().chain(rest).cloned().collect(),
                None => segments,
            },
            None => segments,
        }
    }
}

/// Collects a file's `use` aliases, glob imports and the crates its paths start with.
#[derive(Default)]
struct Names {
    aliases: HashMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
    crates: HashSet<String>,
}

impl Names {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) if name.ident == "self" => {
                if let Some(last) = prefix.last() {
                    self.aliases.insert(last.clone(), prefix.clone());
                }
            }
            syn::UseTree::Name(name) => {
                let mut full = prefix.clone();
                full.push(name.ident.to_string());
                self.aliases.insert(name.ident.to_string(), full);
            }
            syn::UseTree::Rename(rename) => {
                let mut full = prefix.clone();
                full.push(rename.ident.to_string());
                self.aliases.insert(rename.rename.to_string(), full);
            }
            syn::UseTree::Glob(_) => self.globs.push(prefix.clone()),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if let syn::UseTree::Path(path) = &item.tree {
            self.crates.insert(path.ident.to_string());
        }
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() > 1 {
            self.crates.insert(path.segments[0].ident.to_string());
        }
        syn::visit::visit_path(self, path);
    }
}

/// A function or method with a body, in one of the files.
#[derive(Clone, Copy)]
pub struct FnDef<'a> {
    /// Index of its file in [`Sources::files`].
    pub file: usize,
    /// The type of its `impl` (its last segment), for a method or associated function.
    pub self_ty: Option<&'a syn::Ident>,
    pub sig: &'a syn::Signature,
    pub body: &'a syn::Block,
}

impl std::fmt::Debug for FnDef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FnDef({} in file {})", self.label(), self.file)
    }
}

impl FnDef<'_> {
    pub fn name(&self) -> String {
        self.sig.ident.to_string()
    }

    /// `Type::name` or `name`.
    pub fn label(&self) -> String {
        match self.self_ty {
            Some(ty) => format!("{ty}::{}", self.sig.ident),
            None => self.name(),
        }
    }

    pub fn is_async(&self) -> bool {
        self.sig.asyncness.is_some()
    }

    pub fn has_receiver(&self) -> bool {
        self.sig.receiver().is_some()
    }

    pub fn first_line(&self) -> usize {
        self.sig.fn_token.span.start().line
    }

    pub fn last_line(&self) -> usize {
        self.body.brace_token.span.close().end().line
    }
}

/// All parsed files and their functions.
#[derive(Debug, Default)]
pub struct Sources {
    pub files: Vec<SourceFile>,
}

impl Sources {
    /// Parses every `.rs` file under each of `dirs`, named relative to `root`.
    pub fn read(root: &Path, dirs: &[PathBuf]) -> Result<Sources, String> {
        let mut paths = Vec::new();
        for dir in dirs {
            rust_files(&root.join(dir), &mut paths)?;
        }
        paths.sort();
        let mut sources = Sources::default();
        for path in paths {
            let text = std::fs::read_to_string(&path)
                .map_err(|error| format!("{}: {error}", path.display()))?;
            let name = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            sources.files.push(SourceFile::parse(&name, &text)?);
        }
        Ok(sources)
    }

    /// Every function with a body outside `#[cfg(test)]` code, in file order.
    pub fn functions(&self) -> Vec<FnDef<'_>> {
        let mut out = Vec::new();
        for (file, source) in self.files.iter().enumerate() {
            collect_items(file, &source.ast.items, &mut out);
        }
        out
    }

    pub fn file_index(&self, name: &str) -> Option<usize> {
        self.files.iter().position(|file| file.name == name)
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|error| error.to_string())?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Whether the item is test code (`#[cfg(test)]` or `#[test]`), which no server runs.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("test")
            || (attr.path().is_ident("cfg")
                && attr
                    .parse_args::<syn::Ident>()
                    .is_ok_and(|ident| ident == "test"))
    })
}

fn collect_items<'a>(file: usize, items: &'a [syn::Item], out: &mut Vec<FnDef<'a>>) {
    for item in items {
        match item {
            syn::Item::Fn(f) if !is_test(&f.attrs) => out.push(FnDef {
                file,
                self_ty: None,
                sig: &f.sig,
                body: &f.block,
            }),
            syn::Item::Impl(imp) if !is_test(&imp.attrs) => {
                let self_ty = match &*imp.self_ty {
                    syn::Type::Path(ty) => ty.path.segments.last().map(|s| &s.ident),
                    _ => None,
                };
                for item in &imp.items {
                    if let syn::ImplItem::Fn(f) = item {
                        out.push(FnDef {
                            file,
                            self_ty,
                            sig: &f.sig,
                            body: &f.block,
                        });
                    }
                }
            }
            syn::Item::Trait(tr) if !is_test(&tr.attrs) => {
                for item in &tr.items {
                    if let syn::TraitItem::Fn(f) = item
                        && let Some(body) = &f.default
                    {
                        out.push(FnDef {
                            file,
                            self_ty: Some(&tr.ident),
                            sig: &f.sig,
                            body,
                        });
                    }
                }
            }
            syn::Item::Mod(module) if !is_test(&module.attrs) => {
                if let Some((_, items)) = &module.content {
                    collect_items(file, items, out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_aliases_renames_and_self() {
        let file = SourceFile::parse(
            "x.rs",
            "use std::thread::sleep as nap; use std::fs::{self, read}; use rusqlite::*;",
        )
        .unwrap();
        let path = |text: &str| file.expand(&syn::parse_str::<syn::Path>(text).unwrap());
        assert_eq!(path("nap"), ["std", "thread", "sleep"]);
        assert_eq!(path("fs::write"), ["std", "fs", "write"]);
        assert_eq!(path("read"), ["std", "fs", "read"]);
        assert_eq!(path("other::f"), ["other", "f"]);
        assert_eq!(file.globs, [vec!["rusqlite".to_owned()]]);
        assert_eq!(file.crate_name, "");
        let named = SourceFile::parse("crates/demo-contract/src/lib.rs", "").unwrap();
        assert_eq!(named.crate_name, "demo_contract");
        assert!(file.crates.contains("rusqlite") && file.crates.contains("std"));
    }

    #[test]
    fn indexes_functions_methods_and_skips_tests() {
        let text = "fn a() {} struct S; impl S { async fn b(&self) {} }
                    #[cfg(test)] mod tests { fn t() {} }
                    mod inner { fn c() {} }";
        let sources = Sources {
            files: vec![SourceFile::parse("x.rs", text).unwrap()],
        };
        let labels: Vec<String> = sources.functions().iter().map(FnDef::label).collect();
        assert_eq!(labels, ["a", "S::b", "c"]);
        let b = sources.functions()[1];
        assert!(b.is_async() && b.has_receiver());
    }
}
