//! axum glue: [`Sleep`] as an extractor, the bodies as responses, the JSON fallback, and the
//! stall detector's middleware.

use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::body::to_json;
use crate::{ApiError, CpuWork, Demo, Pong, Sleep, StallsJson, Work};

/// Extractors run inside the handler's future, on the reactor thread that polls it: the
/// right place to mark that thread.
impl FromRequestParts<Demo> for Sleep {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, demo: &Demo) -> Result<Self, ApiError> {
        demo.mark_reactor_and_read_sleep(parts.uri.query())
    }
}

fn json(status: u16, body: Vec<u8>) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (status, headers, body).into_response()
}

impl IntoResponse for Pong {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

impl IntoResponse for Work {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

impl IntoResponse for CpuWork {
    fn into_response(self) -> Response {
        json(200, to_json(&self))
    }
}

impl IntoResponse for StallsJson {
    fn into_response(self) -> Response {
        json(200, self.0.into_bytes())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json(self.status, to_json(&self))
    }
}

/// Both the fallback and the method-not-allowed fallback: JSON 404 or 405.
pub async fn unmatched(method: Method, uri: Uri) -> ApiError {
    ApiError::unmatched(method.as_str(), uri.path())
}

/// `GET /stalls`: the stall detector's counters.
pub async fn stalls(State(demo): State<Demo>) -> StallsJson {
    demo.stalls()
}

/// Middleware (`axum::middleware::from_fn_with_state`, added with `Router::layer` so that it
/// runs after routing): times every poll of the rest of the request, handler included, under
/// the route axum matched (`MatchedPath`; none in the fallback).
pub async fn watch_request(
    State(demo): State<Demo>,
    matched: Option<MatchedPath>,
    req: Request,
    next: Next,
) -> Response {
    let label = demo.watch.label(
        req.method().as_str(),
        matched.as_ref().map(MatchedPath::as_str),
    );
    demo.watch.wrap(label, next.run(req)).await
}
