//! The admin API's JSON request bodies: [`JsonBody`] reads a body as axum's `Json` does, but a body it cannot take
//! is refused in the admin API's error form, `{ "error": { code, message, details } }` with `validation_failed`,
//! instead of axum's line of plain text: a client reads every admin answer the same way.

use axum::body::Bytes;
use axum::extract::{FromRequest, OptionalFromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::json;

/// A JSON request body of type `T`. As an `Option`, a request without `Content-Type` has none (a POST that needs no
/// body); one with another media type is still refused.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

/// Why a body was not taken: the status axum gives the same fault (415 another media type, 400 not JSON, 422 JSON of
/// the wrong shape, 413 too large), what was wrong, and the field at fault when one is.
#[derive(Debug)]
pub struct BodyRefusal {
    status: StatusCode,
    message: String,
    field: Option<String>,
}

impl IntoResponse for BodyRefusal {
    fn into_response(self) -> Response {
        let details = self.field.map_or_else(|| json!({}), |field| json!({ "field": field }));
        let body = json!({ "error": { "code": "validation_failed", "message": self.message, "details": details } });
        (self.status, axum::Json(body)).into_response()
    }
}

impl<T, S> FromRequest<S> for JsonBody<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = BodyRefusal;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !declares_json(request.headers()) {
            return Err(BodyRefusal {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                message: "the body must be JSON: send Content-Type: application/json".to_owned(),
                field: Some("content-type".to_owned()),
            });
        }
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| BodyRefusal {
                status: rejection.status(),
                message: rejection.body_text(),
                field: None,
            })?;
        parse(&bytes).map(JsonBody)
    }
}

impl<T, S> OptionalFromRequest<S> for JsonBody<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = BodyRefusal;

    async fn from_request(request: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        if request.headers().contains_key(header::CONTENT_TYPE) {
            <JsonBody<T> as FromRequest<S>>::from_request(request, state)
                .await
                .map(Some)
        } else {
            Ok(None)
        }
    }
}

/// Whether the media type is JSON: `application/json` or a `+json` type, with any parameters (as axum's `Json`).
fn declares_json(headers: &HeaderMap) -> bool {
    let Some(essence) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|essence| essence.trim().to_ascii_lowercase())
    else {
        return false;
    };
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Reads `bytes` as `T`, naming the field at fault (a JSON pointer without the leading `/`) when the JSON has the
/// wrong shape.
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, BodyRefusal> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let inner = error.inner();
        let status = if inner.is_data() {
            StatusCode::UNPROCESSABLE_ENTITY
        } else {
            StatusCode::BAD_REQUEST
        };
        let path = error.path().to_string();
        let field = (status == StatusCode::UNPROCESSABLE_ENTITY && path != ".")
            .then(|| path.replace('.', "/").trim_start_matches('/').to_owned());
        BodyRefusal {
            status,
            message: format!("the body does not fit this request: {inner}"),
            field,
        }
    })?;
    deserializer.end().map_err(|error| BodyRefusal {
        status: StatusCode::BAD_REQUEST,
        message: format!("the body is not one JSON value: {error}"),
        field: None,
    })?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Shape {
        name: String,
        level: Option<u8>,
    }

    #[test]
    fn faults_get_axums_statuses_and_name_their_field() {
        assert!(parse::<Shape>(br#"{"name":"a","level":2}"#).is_ok());
        let refused = parse::<Shape>(br#"{"name":"a","level":"high"}"#).expect_err("wrong type");
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(refused.field.as_deref(), Some("level"));
        let refused = parse::<Shape>(br#"{"level":1}"#).expect_err("missing field");
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        let refused = parse::<Shape>(b"{").expect_err("not JSON");
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        let refused = parse::<Shape>(br#"{"name":"a"} x"#).expect_err("trailing text");
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    }
}
