//! The measurement: both checks over every server crate (`crates/demo-*` with a `main.rs`) and
//! the contract crate, each route's handler judged by what each check reports inside it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::clippy::{self, Warning};
use crate::list::CallList;
use crate::routes;
use crate::source::{FnDef, Sources};
use crate::walk::{Checker, Finding, Limit, Site, Walked};

/// What a check said about one route's handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Catch {
    /// A route that blocks the reactor, reported.
    Caught,
    /// A route that blocks the reactor, not reported.
    Missed,
    /// A route that does not block the reactor, reported.
    FalseAlarm,
    /// A route that does not block the reactor, not reported.
    Silent,
}

impl Catch {
    pub fn of(blocks: bool, reported: bool) -> Catch {
        match (blocks, reported) {
            (true, true) => Catch::Caught,
            (true, false) => Catch::Missed,
            (false, true) => Catch::FalseAlarm,
            (false, false) => Catch::Silent,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Catch::Caught => "caught",
            Catch::Missed => "missed",
            Catch::FalseAlarm => "false alarm",
            Catch::Silent => "silent",
        }
    }
}

/// One route on one stack.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub stack: String,
    pub route: String,
    /// A `/bad*` route: its handler blocks the reactor.
    pub blocks: bool,
    /// `Type::name` of its handler, and where it starts and ends.
    pub handler: String,
    pub handler_site: Site,
    #[serde(skip)]
    pub handler_end: usize,
    pub clippy: Catch,
    pub clippy_warnings: Vec<Warning>,
    pub check: Catch,
    pub check_findings: Vec<Finding>,
    pub check_limits: Vec<Limit>,
}

/// A clippy warning in no route's handler, with the function it lies in.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Elsewhere {
    pub warning: Warning,
    pub function: String,
}

/// A call the check reports from a reactor root that is no route's handler.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Unrouted {
    pub call: String,
    pub site: Site,
    /// The roots (async fns and async blocks) that reach it.
    pub roots: Vec<String>,
}

/// Everything one measurement found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Measured {
    pub stacks: Vec<String>,
    pub rows: Vec<Row>,
    pub clippy_elsewhere: Vec<Elsewhere>,
    pub check_unrouted: Vec<Unrouted>,
    /// The crates clippy ran on, and the folders the check parsed.
    pub clippy_packages: Vec<String>,
    pub check_parsed: Vec<String>,
}

/// The server crates: every stack the workspace at `root` describes, in the stacks' order.
pub fn server_crates(root: &Path) -> Result<Vec<String>, String> {
    let stacks = stacks::read(root).map_err(|error| error.to_string())?;
    Ok(stacks.into_iter().map(|stack| stack.name).collect())
}

/// The packages clippy checks: the contract and every server.
fn clippy_packages(stacks: &[String]) -> Vec<String> {
    let mut packages = vec!["demo-contract".to_owned()];
    packages.extend(stacks.iter().cloned());
    packages
}

/// Runs clippy as [`measure`] does and keeps nothing: a build step, after which `measure`'s
/// clippy replays its warnings instead of checking every crate and its dependencies.
pub fn check_ahead(root: &Path, clippy_conf: &Path) -> Result<(), String> {
    let packages = clippy_packages(&server_crates(root)?);
    clippy::run(root, clippy_conf, &packages).map(drop)
}

/// Runs both checks from the workspace at `root` and judges every work route of every server.
pub fn measure(root: &Path, clippy_conf: &Path, list: &CallList) -> Result<Measured, String> {
    let stacks = server_crates(root)?;
    let packages = clippy_packages(&stacks);
    // The contract's own workspace dependency is parsed too: its calls are the workspace's.
    let mut parsed: Vec<PathBuf> = ["demo-contract", "reactor-watch"]
        .iter()
        .map(|name| PathBuf::from(format!("crates/{name}/src")))
        .collect();
    parsed.extend(
        stacks
            .iter()
            .map(|name| PathBuf::from(format!("crates/{name}/src"))),
    );
    let sources = Sources::read(root, &parsed)?;
    let warnings = clippy::run(root, clippy_conf, &packages)?;
    let mut checker = Checker::new(&sources, list);
    let roots = checker.roots();
    let mut rows = Vec::new();
    for stack in &stacks {
        rows.extend(stack_rows(root, &sources, &checker, stack, &warnings)?);
    }
    Ok(Measured {
        clippy_elsewhere: clippy_elsewhere(&sources, &checker, &warnings, &rows),
        check_unrouted: unrouted(roots, &rows),
        stacks,
        rows,
        clippy_packages: packages,
        check_parsed: parsed.iter().map(|dir| dir.display().to_string()).collect(),
    })
}

/// Route path to handler function name on `stack`, as its description gives them.
fn handler_names(root: &Path, stack: &str) -> Result<BTreeMap<String, String>, String> {
    let description = root.join("crates").join(stack).join(stacks::FILE);
    let stack = stacks::read_one(&description).map_err(|error| error.to_string())?;
    Ok(stack.handlers)
}

fn stack_rows(
    root: &Path,
    sources: &Sources,
    checker: &Checker<'_>,
    stack: &str,
    warnings: &[Warning],
) -> Result<Vec<Row>, String> {
    let route_rs = sources
        .file_index("crates/demo-contract/src/route.rs")
        .ok_or("route.rs was not parsed")?;
    let paths = routes::paths(&sources.files[route_rs].ast);
    let names = handler_names(root, stack)?;
    let main_rs = format!("crates/{stack}/src/main.rs");
    let mut rows = Vec::new();
    for (variant, path) in &paths {
        if variant == "Stalls" || variant == "Events" {
            continue;
        }
        let Some(name) = names.get(path) else {
            continue;
        };
        let (index, function) = checker
            .functions()
            .iter()
            .enumerate()
            .find(|(_, f)| sources.files[f.file].name == main_rs && &f.name() == name)
            .ok_or_else(|| format!("{stack}: no handler {name} for {path}"))?;
        rows.push(row(
            sources,
            stack,
            path,
            variant,
            (index, *function),
            warnings,
            checker,
        ));
    }
    Ok(rows)
}

fn row(
    sources: &Sources,
    stack: &str,
    path: &str,
    variant: &str,
    (index, function): (usize, FnDef<'_>),
    warnings: &[Warning],
    checker: &Checker<'_>,
) -> Row {
    let file = &sources.files[function.file].name;
    let inside = |site: &Site| {
        &site.file == file && (function.first_line()..=function.last_line()).contains(&site.line)
    };
    let clippy_warnings: Vec<Warning> = warnings
        .iter()
        .filter(|w| inside(&w.site))
        .cloned()
        .collect();
    let walked: Walked = checker.reached(index).unwrap_or_default();
    let blocks = variant.starts_with("Bad");
    Row {
        stack: stack.to_owned(),
        route: path.to_owned(),
        blocks,
        handler: function.label(),
        handler_site: Site {
            file: file.clone(),
            line: function.first_line(),
        },
        handler_end: function.last_line(),
        clippy: Catch::of(blocks, !clippy_warnings.is_empty()),
        clippy_warnings,
        check: Catch::of(blocks, !walked.findings.is_empty()),
        check_findings: walked.findings,
        check_limits: walked.limits,
    }
}

/// The innermost parsed function whose lines hold `site`.
fn enclosing(sources: &Sources, checker: &Checker<'_>, site: &Site) -> String {
    checker
        .functions()
        .iter()
        .filter(|f| sources.files[f.file].name == site.file)
        .filter(|f| (f.first_line()..=f.last_line()).contains(&site.line))
        .min_by_key(|f| f.last_line() - f.first_line())
        .map_or_else(|| "(no function)".to_owned(), FnDef::label)
}

fn in_handler(rows: &[Row], site: &Site) -> bool {
    rows.iter().any(|row| {
        row.handler_site.file == site.file
            && (row.handler_site.line..=row.handler_end).contains(&site.line)
    })
}

fn clippy_elsewhere(
    sources: &Sources,
    checker: &Checker<'_>,
    warnings: &[Warning],
    rows: &[Row],
) -> Vec<Elsewhere> {
    warnings
        .iter()
        .filter(|warning| !in_handler(rows, &warning.site))
        .map(|warning| Elsewhere {
            warning: warning.clone(),
            function: enclosing(sources, checker, &warning.site),
        })
        .collect()
}

/// The check's findings from roots that are no route's handler, by call site.
fn unrouted(roots: Vec<(String, Site, Walked)>, rows: &[Row]) -> Vec<Unrouted> {
    let mut by_site: BTreeMap<(Site, String), Vec<String>> = BTreeMap::new();
    for (label, site, walked) in roots {
        if rows.iter().any(|row| row.handler_site == site) {
            continue;
        }
        for finding in walked.findings {
            let root = format!("{label} ({site})");
            let roots = by_site.entry((finding.site, finding.call)).or_default();
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
    }
    by_site
        .into_iter()
        .map(|((site, call), roots)| Unrouted { call, site, roots })
        .collect()
}
