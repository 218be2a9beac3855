//! actix-web glue: [`Sleep`] as an extractor, the bodies as responses, JSON 404/405, the
//! stall detector's middleware, and a graceful stop on our own signal handlers.

use std::future::{Ready, ready};
use std::io;

use actix_web::body::BoxBody;
use actix_web::dev::{Payload, Server, Service, ServiceRequest};
use actix_web::http::StatusCode;
use actix_web::web::{self, Data};
use actix_web::{
    FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder, ResponseError,
};
use reactor_watch::Watched;

use crate::body::to_json;
use crate::for_tokio::Shutdown;
use crate::{ApiError, CpuWork, Demo, Pong, Route, Sleep, StallsJson, Work};

/// Extractors run on the worker thread that polls the handler: the right place to mark it.
impl FromRequest for Sleep {
    type Error = ApiError;
    type Future = Ready<Result<Sleep, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let demo = req
            .app_data::<Data<Demo>>()
            .expect("the App registers Data<Demo>");
        ready(demo.mark_reactor_and_read_sleep(Some(req.query_string())))
    }
}

fn json(status: u16, body: Vec<u8>) -> HttpResponse {
    HttpResponse::build(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .content_type("application/json")
        .body(body)
}

impl Responder for Pong {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for Work {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for CpuWork {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, to_json(&self))
    }
}

impl Responder for StallsJson {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        json(200, self.0.into_bytes())
    }
}

impl Responder for ApiError {
    type Body = BoxBody;
    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        self.error_response()
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
    fn error_response(&self) -> HttpResponse {
        json(self.status, to_json(self))
    }
}

/// JSON 404 for unknown paths and 405 for other methods on known ones. (A resource does not
/// inherit the app's default service, so each resource gets it too.)
pub async fn unmatched(req: HttpRequest) -> ApiError {
    ApiError::unmatched(req.method().as_str(), req.path())
}

/// `GET /stalls`: the stall detector's counters.
pub async fn stalls(demo: Data<Demo>) -> StallsJson {
    demo.stalls()
}

/// The resources for `route`, answering GET with `handler`: one per path, so that
/// `match_pattern` names the alias requested (a resource at several paths is named by its
/// first).
pub fn get<F, Args>(route: Route, handler: F) -> Vec<Resource>
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    route
        .paths()
        .iter()
        .map(|&path| {
            web::resource(path)
                .route(web::get().to(handler.clone()))
                .default_service(web::to(unmatched))
        })
        .collect()
}

/// For `App::wrap_fn`: times every poll of the rest of the request, handler included, under
/// the resource pattern actix-web matched (`match_pattern`; none for the default service).
pub fn watch_request<S: Service<ServiceRequest>>(
    demo: &Demo,
    req: ServiceRequest,
    service: &S,
) -> Watched<S::Future> {
    let label = demo
        .watch
        .label(req.method().as_str(), req.match_pattern().as_deref());
    demo.watch.wrap(label, service.call(req))
}

/// Runs the server until SIGINT or SIGTERM, then stops it gracefully (its
/// `shutdown_timeout` bounds the wait). `stop` is created before the readiness line.
pub async fn run(stop: Shutdown, server: Server) -> io::Result<()> {
    let handle = server.handle();
    actix_web::rt::spawn(async move {
        stop.requested().await;
        handle.stop(true).await;
    });
    server.await
}
