//! axum glue: [`Sleep`] as an extractor, the bodies as responses, the JSON fallback.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::body::to_json;
use crate::{ApiError, Demo, Pong, Sleep, Work};

/// Extractors run inside the handler's future, on the reactor thread that polls it: the
/// right place to mark that thread.
impl FromRequestParts<Demo> for Sleep {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, demo: &Demo) -> Result<Self, ApiError> {
        demo.mark_reactor_and_read_sleep(parts.uri.query())
    }
}

fn json(status: u16, body: &impl Serialize) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (status, headers, to_json(body)).into_response()
}

impl IntoResponse for Pong {
    fn into_response(self) -> Response {
        json(200, &self)
    }
}

impl IntoResponse for Work {
    fn into_response(self) -> Response {
        json(200, &self)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json(self.status, &self)
    }
}

/// Both the fallback and the method-not-allowed fallback: JSON 404 or 405.
pub async fn unmatched(method: Method, uri: Uri) -> ApiError {
    ApiError::unmatched(method.as_str(), uri.path())
}
