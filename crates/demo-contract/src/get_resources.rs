//! One piece of routing that actix-web and ntex spell alike, in types of their own.

/// The resources for a route, answering GET with a handler: one per path, each answering other
/// methods with the calling module's `unmatched`. actix-web and ntex spell this alike, in
/// types of their own (`web` is the caller's), so it is written once here.
macro_rules! get_resources {
    ($route:expr, $handler:expr) => {
        $route
            .paths()
            .iter()
            .map(|&path| {
                web::resource(path)
                    .route(web::get().to($handler.clone()))
                    .default_service(web::to(unmatched))
            })
            .collect()
    };
}
