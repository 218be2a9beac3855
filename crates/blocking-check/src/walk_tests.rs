//! Known answers: each case is a small source whose reactor roots the check must report (or
//! not) as blocking.

use super::*;

/// A root's label, its findings' entries and lines, and its limits' count.
type Root = (String, Vec<(String, usize)>, usize);

/// The roots of `text`.
fn check(text: &str) -> Vec<Root> {
    let sources = Sources {
        files: vec![SourceFile::parse("case.rs", text).unwrap()],
    };
    let list = CallList::builtin();
    let mut checker = Checker::new(&sources, &list);
    checker
        .roots()
        .into_iter()
        .map(|(label, _, walked)| {
            let found = walked
                .findings
                .iter()
                .map(|finding| (finding.call.clone(), finding.site.line))
                .collect();
            (label, found, walked.limits.len())
        })
        .collect()
}

fn found(text: &str, root: &str) -> Vec<String> {
    let roots = check(text);
    let (_, found, _) = roots
        .iter()
        .find(|(label, ..)| label == root)
        .expect("the root");
    found.iter().map(|(call, _)| call.clone()).collect()
}

#[test]
fn a_direct_call_in_an_async_fn_is_found_on_its_line() {
    let text = "async fn bad() {\n    std::thread::sleep(D);\n}";
    assert_eq!(
        check(text),
        [(
            "bad".to_owned(),
            vec![("std::thread::sleep".to_owned(), 2)],
            0
        )]
    );
}

#[test]
fn the_same_call_in_a_sync_fn_nobody_awaits_is_no_root() {
    assert!(check("fn setup() { std::fs::read(P); }").is_empty());
}

#[test]
fn the_offloads_closure_runs_off_the_reactor() {
    let text = "use actix_web::web;
        async fn tokio() { tokio::task::spawn_blocking(move || std::thread::sleep(D)).await; }
        async fn actix() { web::block(|| std::fs::read(P)).await; }
        async fn smol() { smol::unblock(|| std::fs::read(P)).await; }
        async fn thread() { std::thread::Builder::new().spawn(|| std::fs::read(P)); }";
    for root in ["tokio", "actix", "smol", "thread"] {
        assert_eq!(found(text, root), Vec::<String>::new(), "{root}");
    }
}

#[test]
fn a_helper_in_another_file_is_followed_by_name() {
    let helper = SourceFile::parse(
        "helper.rs",
        "pub struct Db; impl Db { pub fn query(&self) -> i64 { self.conn().query_row(Q) } }
         use rusqlite::Connection;",
    )
    .unwrap();
    let server = SourceFile::parse(
        "main.rs",
        "async fn bad(db: Db) { db.query(); }
         async fn ok(db: Db) { tokio::task::spawn_blocking(move || db.query()).await; }",
    )
    .unwrap();
    let sources = Sources {
        files: vec![helper, server],
    };
    let list = CallList::builtin();
    let mut checker = Checker::new(&sources, &list);
    let roots = checker.roots();
    let bad = &roots.iter().find(|(label, ..)| label == "bad").unwrap().2;
    assert_eq!(bad.findings.len(), 1);
    assert_eq!(bad.findings[0].call, "rusqlite::Connection::query_row");
    assert_eq!(bad.findings[0].site.file, "helper.rs");
    assert_eq!(bad.findings[0].via, ["Db::query (helper.rs:1)"]);
    let ok = &roots.iter().find(|(label, ..)| label == "ok").unwrap().2;
    assert!(ok.findings.is_empty());
}

#[test]
fn a_nested_closure_inherits_where_it_is_written() {
    let text = "async fn bad() { let f = || { let g = || std::fs::read(P); g() }; f(); }
        async fn ok() { smol::unblock(|| { let g = || std::fs::read(P); g() }).await; }
        async fn block() { tokio::task::spawn_blocking(|| async { std::fs::read(P) }); }";
    assert_eq!(found(text, "bad"), ["std::fs::read"]);
    assert_eq!(found(text, "ok"), Vec::<String>::new());
    // An async block inside an offload's closure is not walked: limits say so.
    assert_eq!(found(text, "block"), Vec::<String>::new());
}

#[test]
fn an_async_block_in_a_sync_fn_runs_on_the_reactor() {
    let text = "fn main() { rt.block_on(async {\n std::thread::sleep(D); }); }";
    assert_eq!(
        check(text),
        [(
            "async block in main".to_owned(),
            vec![("std::thread::sleep".to_owned(), 2)],
            0
        )]
    );
}

#[test]
fn aliases_by_use_are_resolved() {
    let text = "use std::thread::sleep as nap; use std::fs; use std::fs::read_to_string as slurp;
        use std::thread::*;
        async fn a() { nap(D); }
        async fn b() { fs::read(P); }
        async fn c() { slurp(P); }
        async fn d() { sleep(D); }";
    assert_eq!(found(text, "a"), ["std::thread::sleep"]);
    assert_eq!(found(text, "b"), ["std::fs::read"]);
    assert_eq!(found(text, "c"), ["std::fs::read_to_string"]);
    assert_eq!(found(text, "d"), ["std::thread::sleep"]);
}

#[test]
fn an_awaited_call_is_an_async_api() {
    let text = "async fn a(m: tokio::sync::Mutex<u8>) { m.lock().await; }
        async fn b(m: std::sync::Mutex<u8>) { m.lock(); }";
    assert_eq!(found(text, "a"), Vec::<String>::new());
    assert_eq!(found(text, "b"), ["std::sync::Mutex::lock"]);
}

#[test]
fn a_macro_is_a_limit_and_its_arguments_are_walked() {
    let text = "macro_rules! nap { () => { std::thread::sleep(D) }; }
        async fn hidden() { nap!(); }
        async fn args() { tokio::join!(async { std::fs::read(P) }); }
        async fn plain() { let s = format!(\"{}\", 1); }";
    let roots = check(text);
    let root = |name: &str| roots.iter().find(|(label, ..)| label == name).unwrap();
    // What `nap!` expands to is not seen: no finding, one limit.
    assert_eq!(root("hidden").1, vec![]);
    assert_eq!(root("hidden").2, 1);
    // `join!`'s arguments parse as expressions: walked, and still a limit.
    assert_eq!(root("args").1, vec![("std::fs::read".to_owned(), 3)]);
    assert_eq!(root("args").2, 1);
    // std's formatting macros are plain: no limit.
    assert_eq!(root("plain").2, 0);
}

#[test]
fn a_method_is_matched_by_name_where_its_crate_is_named() {
    let with = "use rusqlite::Connection; async fn a(c: Connection) { c.execute(Q, []); }";
    let without = "async fn a(c: Other) { c.execute(Q, []); }";
    assert_eq!(found(with, "a"), ["rusqlite::Connection::execute"]);
    assert_eq!(found(without, "a"), Vec::<String>::new());
}

#[test]
fn recursion_ends() {
    let text = "fn f() { g(); std::fs::read(P); } fn g() { f(); } async fn a() { f(); }";
    assert_eq!(found(text, "a"), ["std::fs::read"]);
}

/// The number of findings of each root of the files `(name, text)`.
fn counts(files: &[(&str, &str)]) -> Vec<(String, usize)> {
    let files = files
        .iter()
        .map(|(name, text)| SourceFile::parse(name, text).unwrap())
        .collect();
    let sources = Sources { files };
    let list = CallList::builtin();
    let mut checker = Checker::new(&sources, &list);
    let roots = checker.roots();
    roots
        .into_iter()
        .map(|(label, _, walked)| (label, walked.findings.len()))
        .collect()
}

#[test]
fn a_call_prefers_the_module_it_names_and_a_method_on_self_its_own_type() {
    let found = counts(&[
        ("src/for_tokio.rs", "pub fn run() { std::fs::read(P); }"),
        ("src/for_smol.rs", "pub fn run() {}"),
        (
            "src/main.rs",
            "async fn a() { for_smol::run(); }
             async fn b() { for_tokio::run(); }
             struct S; impl S { fn read(&self) {} async fn c(&self) { self.read(); } }
             struct T; impl T { fn read(&self) { std::fs::read(P); } }",
        ),
    ]);
    let expected = [("a", 0), ("b", 1), ("S::c", 0)].map(|(label, n)| (label.to_owned(), n));
    assert_eq!(found, expected);
}

#[test]
fn a_function_of_another_crate_is_followed_only_where_that_crate_is_named() {
    let found = counts(&[
        (
            "crates/watch/src/lib.rs",
            "pub struct Label; impl Label { pub fn name(&self) { LOCK.lock(); } }",
        ),
        (
            "crates/server/src/main.rs",
            "async fn thread_name() { std::thread::current().name(); }",
        ),
        (
            "crates/user/src/main.rs",
            "use watch::Label; async fn label(l: Label) { l.name(); }",
        ),
    ]);
    let expected = [("thread_name", 0), ("label", 1)].map(|(label, n)| (label.to_owned(), n));
    assert_eq!(found, expected);
}
