//! The context-aware check. It walks what runs on the reactor: the body of an `async fn` or an
//! async block, and every function of the parsed files it calls (found by name), but not the
//! closure handed to an offload (`spawn_blocking`, `web::block`, `unblock`, ...), which runs
//! on another thread. A listed blocking call met on that walk is a finding, with the chain of
//! calls that led to it.
//!
//! Its limits, by construction: functions are resolved by name (every function of that name
//! in the parsed files, calls into unparsed crates not followed); a method is matched by its
//! name in a file that names its crate; a closure counts where it is written, not where it is
//! called; a call whose result is awaited counts as an async API; a macro other than std's
//! formatting and assertion macros is not expanded (reported as a limit, its arguments walked
//! when they parse as expressions).

use std::collections::{HashMap, HashSet};

use syn::punctuated::Punctuated;
use syn::visit::Visit;

pub use crate::found::{Finding, Limit, Site, Walked};
use crate::list::{CallList, Kind};
use crate::source::{FnDef, SourceFile, Sources};

/// Std macros that evaluate their arguments and call nothing else that blocks.
const PLAIN_MACROS: &[&str] = &[
    "format",
    "format_args",
    "vec",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "write",
    "writeln",
    "concat",
    "stringify",
    "matches",
    "line",
    "file",
    "column",
];

/// The check over a set of parsed sources.
#[derive(Debug)]
pub struct Checker<'a> {
    sources: &'a Sources,
    list: &'a CallList,
    functions: Vec<FnDef<'a>>,
    by_name: HashMap<String, Vec<usize>>,
    /// What each function's body reaches on the reactor, once walked.
    done: HashMap<usize, Walked>,
    /// Functions being walked: a call back into one of them adds nothing new.
    walking: HashSet<usize>,
}

impl<'a> Checker<'a> {
    pub fn new(sources: &'a Sources, list: &'a CallList) -> Checker<'a> {
        let functions = sources.functions();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, function) in functions.iter().enumerate() {
            by_name.entry(function.name()).or_default().push(index);
        }
        Checker {
            sources,
            list,
            functions,
            by_name,
            done: HashMap::new(),
            walking: HashSet::new(),
        }
    }

    pub fn functions(&self) -> &[FnDef<'a>] {
        &self.functions
    }

    /// What the body of function `index` reaches when it runs on the reactor.
    pub fn reach(&mut self, index: usize) -> Walked {
        if let Some(done) = self.done.get(&index) {
            return done.clone();
        }
        if !self.walking.insert(index) {
            return Walked::default();
        }
        let function = self.functions[index];
        let file = &self.sources.files[function.file];
        let mut walk = Walk {
            checker: self,
            file,
            file_index: function.file,
            self_ty: function.self_ty.map(ToString::to_string),
            out: Walked::default(),
        };
        walk.visit_block(function.body);
        let out = walk.out;
        self.walking.remove(&index);
        self.done.insert(index, out.clone());
        out
    }

    /// What function `index` reaches on the reactor, if [`Checker::roots`] or
    /// [`Checker::reach`] walked it.
    pub fn reached(&self, index: usize) -> Option<Walked> {
        self.done.get(&index).cloned()
    }

    /// What an async block at the top of a function that is not async reaches (such as the
    /// one `main` hands to `block_on`).
    pub fn reach_block(&mut self, file_index: usize, block: &syn::Block) -> Walked {
        let file = &self.sources.files[file_index];
        let mut walk = Walk {
            checker: self,
            file,
            file_index,
            self_ty: None,
            out: Walked::default(),
        };
        walk.visit_block(block);
        walk.out
    }

    /// Every reactor root of the sources with what it reaches: each `async fn`, and each async
    /// block written in a function that is not async.
    pub fn roots(&mut self) -> Vec<(String, Site, Walked)> {
        let mut out = Vec::new();
        for index in 0..self.functions.len() {
            let function = self.functions[index];
            let file = self.sources.files[function.file].name.clone();
            let site = Site {
                file,
                line: function.first_line(),
            };
            if function.is_async() {
                out.push((function.label(), site, self.reach(index)));
                continue;
            }
            let mut blocks = AsyncBlocks(Vec::new());
            blocks.visit_block(function.body);
            for block in blocks.0 {
                let site = Site {
                    line: block.async_token.span.start().line,
                    ..site.clone()
                };
                let label = format!("async block in {}", function.label());
                out.push((label, site, self.reach_block(function.file, &block.block)));
            }
        }
        out
    }

    /// The functions a call of `path` (as written) in file `from` may be: those of its last
    /// segment's name, narrowed to `Type::name` when the segment before is a type, then to
    /// the file of the module the path names (`for_tokio::run`), or to file `from` for a bare
    /// name, when such a function exists.
    fn resolve_path(&self, path: &[String], self_ty: Option<&str>, from: usize) -> Vec<usize> {
        let Some(name) = path.last() else {
            return Vec::new();
        };
        let owner = path
            .len()
            .checked_sub(2)
            .map(|at| path[at].as_str())
            .map(|owner| {
                if owner == "Self" {
                    self_ty.unwrap_or(owner)
                } else {
                    owner
                }
            });
        let candidates: Vec<usize> = self
            .named_from(name, from)
            .filter(|&index| {
                let function = &self.functions[index];
                match (owner, function.self_ty) {
                    (Some(owner), Some(ty)) if owner.starts_with(char::is_uppercase) => ty == owner,
                    (Some(owner), None) => !owner.starts_with(char::is_uppercase),
                    (None, None) => true,
                    _ => false,
                }
            })
            .collect();
        match owner {
            Some(module) => narrowed(candidates, |index| self.file_stem(index) == Some(module)),
            None => narrowed(candidates, |index| self.functions[index].file == from),
        }
    }

    /// The methods a call `.name(..)` may be; on `self`, narrowed to the methods of `self_ty`
    /// when it has one of that name.
    fn resolve_method(
        &self,
        name: &str,
        on_self: bool,
        self_ty: Option<&str>,
        from: usize,
    ) -> Vec<usize> {
        let candidates = self
            .named_from(name, from)
            .filter(|&index| self.functions[index].has_receiver())
            .collect();
        match self_ty {
            Some(ty) if on_self => narrowed(candidates, |index| {
                self.functions[index].self_ty.is_some_and(|own| own == ty)
            }),
            _ => candidates,
        }
    }

    /// The functions called `name` that file `from` can call: those of its own crate, and
    /// those of a crate it names (`use reactor_watch::..`, `reactor_watch::f()`).
    fn named_from(&self, name: &str, from: usize) -> impl Iterator<Item = usize> + '_ {
        let caller = &self.sources.files[from];
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(move |&index| {
                let own = &self.sources.files[self.functions[index].file].crate_name;
                *own == caller.crate_name || caller.crates.contains(own)
            })
    }

    fn file_stem(&self, index: usize) -> Option<&str> {
        let name = &self.sources.files[self.functions[index].file].name;
        std::path::Path::new(name).file_stem()?.to_str()
    }
}

/// `candidates` narrowed to those `closer` accepts, if any: with none, all stay (a name is
/// all a parser knows).
fn narrowed(candidates: Vec<usize>, closer: impl Fn(usize) -> bool) -> Vec<usize> {
    let close: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&index| closer(index))
        .collect();
    if close.is_empty() { candidates } else { close }
}

/// The async blocks of a body, not those nested in another async block.
struct AsyncBlocks<'ast>(Vec<&'ast syn::ExprAsync>);

impl<'ast> Visit<'ast> for AsyncBlocks<'ast> {
    fn visit_expr_async(&mut self, block: &'ast syn::ExprAsync) {
        self.0.push(block);
    }
}

/// One walk of code that runs on the reactor.
struct Walk<'c, 'a> {
    checker: &'c mut Checker<'a>,
    file: &'a SourceFile,
    file_index: usize,
    self_ty: Option<String>,
    out: Walked,
}

fn site_of(file: &SourceFile, span: proc_macro2::Span) -> Site {
    Site {
        file: file.name.clone(),
        line: span.start().line,
    }
}

impl Walk<'_, '_> {
    fn found(&mut self, call: &str, span: proc_macro2::Span) {
        let site = site_of(self.file, span);
        self.out.findings.push(Finding {
            call: call.to_owned(),
            site,
            via: Vec::new(),
        });
    }

    /// Adds what the workspace functions `candidates` reach, as called from here.
    fn follow(&mut self, candidates: Vec<usize>) {
        for index in candidates {
            let function = self.checker.functions[index];
            let step = format!(
                "{} ({}:{})",
                function.label(),
                self.checker.sources.files[function.file].name,
                function.first_line()
            );
            let reached = self.checker.reach(index);
            for mut finding in reached.findings {
                finding.via.insert(0, step.clone());
                self.out.findings.push(finding);
            }
            self.out.limits.extend(reached.limits);
        }
    }

    /// Walks the arguments of an offload: a closure (or a function named by path) runs off
    /// the reactor and is skipped; anything else is evaluated here.
    fn offload_args<'x>(&mut self, args: impl IntoIterator<Item = &'x syn::Expr>) {
        for arg in args {
            if !matches!(arg, syn::Expr::Closure(_) | syn::Expr::Path(_)) {
                self.visit_expr(arg);
            }
        }
    }

    fn call(&mut self, call: &syn::ExprCall, awaited: bool) {
        let syn::Expr::Path(callee) = &*call.func else {
            return syn::visit::visit_expr_call(self, call);
        };
        let path = self.file.expand(&callee.path);
        let joined = path.join("::");
        let list = self.checker.list;
        if list.path_call(Kind::Offload, &joined).is_some() {
            return self.offload_args(&call.args);
        }
        let blocking = list
            .path_call(Kind::Blocking, &joined)
            .map(ToOwned::to_owned)
            .or_else(|| self.glob_blocking(&path));
        match blocking {
            Some(entry) if !awaited => self.found(&entry, callee_span(&callee.path)),
            _ => {
                let candidates =
                    self.checker
                        .resolve_path(&path, self.self_ty.as_deref(), self.file_index);
                self.follow(candidates);
            }
        }
        for arg in &call.args {
            self.visit_expr(arg);
        }
    }

    /// A bare name brought in by `use a::b::*;` that is a listed call.
    fn glob_blocking(&self, path: &[String]) -> Option<String> {
        let [name] = path else { return None };
        self.file.globs.iter().find_map(|prefix| {
            let full = format!("{}::{name}", prefix.join("::"));
            self.checker
                .list
                .path_call(Kind::Blocking, &full)
                .map(ToOwned::to_owned)
        })
    }

    fn method(&mut self, call: &syn::ExprMethodCall, awaited: bool) {
        let name = call.method.to_string();
        let list = self.checker.list;
        self.visit_expr(&call.receiver);
        if list
            .method_call(Kind::Offload, &name, &self.file.crates)
            .is_some()
        {
            return self.offload_args(&call.args);
        }
        match list.method_call(Kind::Blocking, &name, &self.file.crates) {
            Some(entry) if !awaited => self.found(entry, call.method.span()),
            _ => {
                let on_self =
                    matches!(&*call.receiver, syn::Expr::Path(p) if p.path.is_ident("self"));
                let self_ty = self.self_ty.as_deref();
                let candidates =
                    self.checker
                        .resolve_method(&name, on_self, self_ty, self.file_index);
                self.follow(candidates);
            }
        }
        for arg in &call.args {
            self.visit_expr(arg);
        }
    }

    fn unseen_macro(&mut self, mac: &syn::Macro) {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let parsed = mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated);
        if !PLAIN_MACROS.contains(&name.as_str()) || parsed.is_err() {
            let what = format!("macro `{name}!` not expanded");
            let site = site_of(self.file, callee_span(&mac.path));
            self.out.limits.push(Limit { what, site });
        }
        for expr in parsed.iter().flatten() {
            self.visit_expr(expr);
        }
    }
}

fn callee_span(path: &syn::Path) -> proc_macro2::Span {
    path.segments
        .last()
        .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span())
}

impl<'ast> Visit<'ast> for Walk<'_, '_> {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        self.call(call, false);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.method(call, false);
    }

    fn visit_expr_await(&mut self, awaited: &'ast syn::ExprAwait) {
        match &*awaited.base {
            syn::Expr::Call(call) => self.call(call, true),
            syn::Expr::MethodCall(call) => self.method(call, true),
            other => self.visit_expr(other),
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.unseen_macro(mac);
    }

    /// A function written inside a body is indexed nowhere and runs only if called: skipped.
    fn visit_item_fn(&mut self, _: &'ast syn::ItemFn) {}
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
