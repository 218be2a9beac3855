//! Which handler serves which route on each server, read from the sources: the route
//! contract's `Route::path` (`crates/demo-contract/src/route.rs`), each server's registrations
//! (`get(Route::Bad, bad)`, `.route(Route::Bad.path(), get(bad))`, a `for` over
//! `Route::OkBlocking.paths()`), and for the hyper servers the adapter's dispatch
//! (`Route::Bad => ok(handlers.bad(duration).await)` in `for_hyper.rs`).

use std::collections::BTreeMap;

use syn::visit::Visit;

/// Route variant (`BadHttp`) and its path (`/bad-http`), from `Route::path`'s match, in the
/// contract's order.
pub fn paths(route_rs: &syn::File) -> Vec<(String, String)> {
    let mut arms = Arms::default();
    let mut path_fn = NamedFn("path", None);
    path_fn.visit_file(route_rs);
    if let Some(body) = path_fn.1 {
        arms.visit_block(body);
    }
    arms.0
        .into_iter()
        .filter_map(|(variant, body)| match body {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(path),
                ..
            }) => Some((variant, path.value())),
            _ => None,
        })
        .collect()
}

/// Route variant to the name of the `Handlers` method the hyper adapter calls for it.
pub fn hyper_dispatch(for_hyper_rs: &syn::File) -> BTreeMap<String, String> {
    let mut arms = Arms::default();
    arms.visit_file(for_hyper_rs);
    arms.0
        .into_iter()
        .filter_map(|(variant, body)| {
            let mut calls = HandlerCalls(None);
            calls.visit_expr(body);
            calls.0.map(|method| (variant, method))
        })
        .collect()
}

/// Route variant to handler function, from a server's registrations: a call naming one
/// route and one function of the file.
pub fn registered(main_rs: &syn::File) -> BTreeMap<String, String> {
    let functions = main_rs
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut found = Registrations {
        functions,
        found: BTreeMap::new(),
    };
    found.visit_file(main_rs);
    found.found
}

/// Whether a server's handlers are the hyper adapter's `Handlers` trait.
pub fn implements_handlers(main_rs: &syn::File) -> bool {
    handlers_impls(main_rs).next().is_some()
}

/// The methods a hyper server's `impl Handlers` defines: a route whose method is not among
/// them is answered by the trait's default, which is no handler of the server's.
pub fn handlers_methods(main_rs: &syn::File) -> Vec<String> {
    (handlers_impls(main_rs).flat_map(|imp| &imp.items))
        .filter_map(|item| match item {
            syn::ImplItem::Fn(method) => Some(method.sig.ident.to_string()),
            _ => None,
        })
        .collect()
}

fn handlers_impls(main_rs: &syn::File) -> impl Iterator<Item = &syn::ItemImpl> {
    main_rs.items.iter().filter_map(|item| match item {
        syn::Item::Impl(imp)
            if imp
                .trait_
                .as_ref()
                .is_some_and(|(_, path, _)| path.is_ident("Handlers")) =>
        {
            Some(imp)
        }
        _ => None,
    })
}

/// `Route::X`: `X`.
fn path_variant(path: &syn::Path) -> Option<String> {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [route, variant] if route == "Route" => Some(variant.clone()),
        _ => None,
    }
}

/// `Route::X` as written, with or without `.path()` / `.paths()`.
fn route_variant(expr: &syn::Expr) -> Option<String> {
    match expr {
        syn::Expr::Path(path) => path_variant(&path.path),
        syn::Expr::MethodCall(call) => route_variant(&call.receiver),
        _ => None,
    }
}

/// `get(handler)`: the handler's name.
fn get_handler(call: &syn::ExprCall) -> Option<String> {
    match (&*call.func, call.args.first()) {
        (syn::Expr::Path(func), Some(syn::Expr::Path(arg)))
            if func.path.is_ident("get") && call.args.len() == 1 =>
        {
            arg.path.get_ident().map(ToString::to_string)
        }
        _ => None,
    }
}

/// `get(handler)` or a bare `handler`: the handler's name.
fn handler_name(expr: &syn::Expr) -> Option<String> {
    match expr {
        syn::Expr::Call(call) => get_handler(call),
        syn::Expr::Path(path) => path.path.get_ident().map(ToString::to_string),
        _ => None,
    }
}

/// The arms `Route::X => body` of every match.
#[derive(Default)]
struct Arms<'ast>(Vec<(String, &'ast syn::Expr)>);

impl<'ast> Visit<'ast> for Arms<'ast> {
    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if let syn::Pat::Path(pat) = &arm.pat
            && let Some(variant) = path_variant(&pat.path)
        {
            self.0.push((variant, &arm.body));
        }
        syn::visit::visit_arm(self, arm);
    }
}

/// The body of the function (or method) of that name.
struct NamedFn<'ast>(&'static str, Option<&'ast syn::Block>);

impl<'ast> Visit<'ast> for NamedFn<'ast> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if f.sig.ident == self.0 {
            self.1 = Some(&f.block);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if f.sig.ident == self.0 {
            self.1 = Some(&f.block);
        }
    }
}

/// The first `handlers.method(..)` in an expression.
struct HandlerCalls(Option<String>);

impl<'ast> Visit<'ast> for HandlerCalls {
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let on_handlers =
            matches!(&*call.receiver, syn::Expr::Path(path) if path.path.is_ident("handlers"));
        if on_handlers && self.0.is_none() {
            self.0 = Some(call.method.to_string());
        }
        syn::visit::visit_expr_method_call(self, call);
    }
}

struct Registrations {
    /// The file's functions: only they can be handlers.
    functions: Vec<String>,
    found: BTreeMap<String, String>,
}

impl Registrations {
    /// A call whose arguments name one route and one handler registers it.
    fn args<'x>(&mut self, args: impl Iterator<Item = &'x syn::Expr> + Clone) {
        let routes: Vec<String> = args.clone().filter_map(route_variant).collect();
        let handlers: Vec<String> = args
            .filter_map(handler_name)
            .filter(|name| self.functions.contains(name))
            .collect();
        if let ([route], [handler]) = (routes.as_slice(), handlers.as_slice()) {
            self.found
                .entry(route.clone())
                .or_insert_with(|| handler.clone());
        }
    }
}

impl<'ast> Visit<'ast> for Registrations {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        self.args(call.args.iter());
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.args(call.args.iter());
        syn::visit::visit_expr_method_call(self, call);
    }

    /// `for path in Route::X.paths() { app = app.route(path, get(handler)); }`
    fn visit_expr_for_loop(&mut self, for_loop: &'ast syn::ExprForLoop) {
        if let Some(route) = route_variant(&for_loop.expr) {
            let mut gets = Gets(Vec::new());
            gets.visit_block(&for_loop.body);
            if let [handler] = gets.0.as_slice() {
                self.found.entry(route).or_insert_with(|| handler.clone());
            }
        }
        syn::visit::visit_expr_for_loop(self, for_loop);
    }
}

/// The handlers named in `get(handler)` calls.
struct Gets(Vec<String>);

impl<'ast> Visit<'ast> for Gets {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let Some(handler) = get_handler(call) {
            self.0.push(handler);
        }
        syn::visit::visit_expr_call(self, call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> syn::File {
        syn::parse_file(text).unwrap()
    }

    #[test]
    fn reads_the_route_paths() {
        let file = parse(
            r#"fn runs(r: Route) -> &str { match r { Route::Ping => "answers" } }
               fn path(r: Route) -> &str { match r { Route::BadHttp => "/bad-http", Route::Ping => "/ping" } }"#,
        );
        assert_eq!(
            paths(&file),
            [
                ("BadHttp".to_owned(), "/bad-http".to_owned()),
                ("Ping".to_owned(), "/ping".to_owned())
            ]
        );
    }

    #[test]
    fn reads_each_stacks_registrations() {
        let axum = parse(
            "async fn bad(Sleep(d): Sleep) { STACK.work_here(Route::Bad, d); }
             async fn ok_blocking() {}
             fn main() { let mut app = Router::new().route(Route::Bad.path(), get(bad))
                .route(Route::Stalls.path(), get(for_axum::stalls));
              for path in Route::OkBlocking.paths() { app = app.route(path, get(ok_blocking)); } }",
        );
        let found = registered(&axum);
        assert_eq!(found["Bad"], "bad");
        assert_eq!(found["OkBlocking"], "ok_blocking");
        assert!(
            !found.contains_key("Stalls"),
            "a path of two segments is no local handler"
        );
        let actix = parse(
            "async fn bad_db() {} fn r(app: &mut App) { app.service(get(Route::BadDb, bad_db)); }",
        );
        assert_eq!(registered(&actix)["BadDb"], "bad_db");
    }

    #[test]
    fn reads_the_hyper_adapters_dispatch() {
        let file = parse(
            "async fn respond() { match route {
                Route::Stalls => json(200, demo.stalls()),
                Route::BadDb => answer(handlers.bad_db(demo, duration).await),
            } }",
        );
        let dispatch = hyper_dispatch(&file);
        assert_eq!(dispatch["BadDb"], "bad_db");
        assert!(!dispatch.contains_key("Stalls"));
    }
}
