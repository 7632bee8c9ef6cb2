//! The console's stylesheet and script: embedded in the binary, served under names that carry a hash of their bytes
//! (a new build's page asks for new names, so a browser never mixes a new page with an old cached asset), and
//! cached for a year.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::ConsoleState;

const STYLESHEET: &[u8] = include_bytes!("../../assets/console/console.css");
const SCRIPT: &[u8] = include_bytes!("../../assets/console/console.js");

/// The embedded assets with their hashed names.
#[derive(Debug, Clone)]
pub struct Assets {
    stylesheet_name: String,
    script_name: String,
}

fn hashed_name(stem: &str, extension: &str, bytes: &[u8]) -> String {
    let digest = hex::encode(Sha256::digest(bytes));
    format!("{stem}-{}.{extension}", &digest[..16])
}

impl Assets {
    /// The assets built into this binary.
    pub fn embedded() -> Assets {
        Assets {
            stylesheet_name: hashed_name("console", "css", STYLESHEET),
            script_name: hashed_name("console", "js", SCRIPT),
        }
    }

    /// The stylesheet's path.
    pub fn stylesheet_path(&self) -> String {
        format!("/console/assets/{}", self.stylesheet_name)
    }

    /// The script's path.
    pub fn script_path(&self) -> String {
        format!("/console/assets/{}", self.script_name)
    }
}

/// `GET /console/assets/{name}`: an asset by its current hashed name; any other name is 404.
pub async fn serve(State(state): State<ConsoleState>, Path(name): Path<String>) -> Response {
    let (bytes, content_type) = if name == state.assets.stylesheet_name {
        (STYLESHEET, "text/css; charset=utf-8")
    } else if name == state.assets.script_name {
        (SCRIPT, "text/javascript; charset=utf-8")
    } else {
        return (StatusCode::NOT_FOUND, "no such console asset").into_response();
    };
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        bytes,
    )
        .into_response()
}
