//! The route contract's paths, read from its source: `Route::path`'s match in
//! `crates/demo-contract/src/route.rs`. Which function serves each route on a stack is the
//! stack's own description's to say (its `stack.toml`, [`stacks::Stack::handlers`]): a
//! framework that routes by macro registers nothing this check could read.

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

/// `Route::X`: `X`.
fn path_variant(path: &syn::Path) -> Option<String> {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [route, variant] if route == "Route" => Some(variant.clone()),
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
}
