//! RFC 9421 HTTP Message Signatures with Ed25519, for the requests instances send each other.
//!
//! Signing covers `@method @target-uri @authority` and, on a request with a body, `content-type content-digest`,
//! with the parameters `created`, `expires`, `nonce`, `keyid` and `alg="ed25519"`. Verification is split into
//! steps the inbox runs in its documented order: [`parse_signature`] (the key ID, for the sender lookup),
//! [`ParsedSignature::check_time`], [`ParsedSignature::check_coverage`], then [`ParsedSignature::verify`].
//!
//! Three choices keep the receiving side honest (each has a test):
//! - time is an argument: verification never reads a clock, so the instance's injected clock decides;
//! - `@target-uri` and `@authority` come from the URL the caller passes, which a server rebuilds from its
//!   configured public URL (the request line only says `/inbox`, and a `Host` header is the sender's word);
//! - the body never passes through here: the caller reads it under its body cap and checks `Content-Digest`
//!   with [`crate::digest::verify_content_digest`], which is one of the covered components.
//!
//! Ed25519 signing is deterministic, so RFC 9421's Appendix B.2.6 example is reproduced byte for byte.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, Method};
use url::Url;

use crate::error::{Rejection, RejectionReason};
use crate::keys::{InstanceKeyPair, PublicKey};

/// The components every signed request covers.
pub const REQUIRED_COMPONENTS: [&str; 3] = ["@method", "@target-uri", "@authority"];
/// The components a request with a body covers as well.
pub const REQUIRED_BODY_COMPONENTS: [&str; 2] = ["content-type", "content-digest"];
/// The signature label we send.
pub const SIGNATURE_LABEL: &str = "sig1";
/// The `alg` value of Ed25519 (RFC 9421 §6.2.2).
pub const ALGORITHM: &str = "ed25519";

/// What the signer puts in the signature parameters. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningParameters {
    /// The signing key's ID (a URL in the sender's actor document).
    pub key_id: String,
    /// When the signature was made.
    pub created: i64,
    /// When it stops being acceptable.
    pub expires: i64,
    /// A value the sender never reuses within the acceptance window (replay protection).
    pub nonce: String,
}

/// The two fields a signature adds to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureFields {
    /// The `Signature-Input` field value.
    pub signature_input: String,
    /// The `Signature` field value.
    pub signature: String,
}

/// Signs a request to `target_uri` with `method` whose other fields are `headers`. A request with a body must
/// already carry `Content-Type` and `Content-Digest` (see [`crate::digest::content_digest`]); both are then
/// covered.
pub fn sign_request(
    method: &Method,
    target_uri: &Url,
    headers: &HeaderMap,
    parameters: &SigningParameters,
    key: &InstanceKeyPair,
) -> Result<SignatureFields, Rejection> {
    let mut components: Vec<String> = REQUIRED_COMPONENTS.iter().map(|name| (*name).to_owned()).collect();
    if headers.contains_key(http::header::CONTENT_TYPE) || headers.contains_key("content-digest") {
        components.extend(REQUIRED_BODY_COMPONENTS.iter().map(|name| (*name).to_owned()));
    }
    let signature_parameters = vec![
        ("created".to_owned(), ParameterValue::Integer(parameters.created)),
        ("expires".to_owned(), ParameterValue::Integer(parameters.expires)),
        ("nonce".to_owned(), ParameterValue::String(parameters.nonce.clone())),
        ("keyid".to_owned(), ParameterValue::String(parameters.key_id.clone())),
        ("alg".to_owned(), ParameterValue::String(ALGORITHM.to_owned())),
    ];
    let serialized_parameters = serialize_signature_parameters(&components, &signature_parameters)?;
    let request = RequestParts {
        method,
        target_uri,
        headers,
    };
    let base = signature_base(&request, &components, &serialized_parameters)?;
    let signature = key.sign(base.as_bytes());
    Ok(SignatureFields {
        signature_input: format!("{SIGNATURE_LABEL}={serialized_parameters}"),
        signature: format!("{SIGNATURE_LABEL}=:{}:", STANDARD.encode(signature)),
    })
}

/// The parts of a request that a signature covers. `target_uri` is absolute: on the receiving side, the
/// configured public URL joined with the request's path and query.
#[derive(Debug, Clone, Copy)]
pub struct RequestParts<'a> {
    /// The request method.
    pub method: &'a Method,
    /// The absolute target URI.
    pub target_uri: &'a Url,
    /// The request's header fields.
    pub headers: &'a HeaderMap,
}

/// A received signature, parsed but not yet checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSignature {
    /// The label it was found under.
    pub label: String,
    /// The covered components, in order.
    pub components: Vec<String>,
    /// `keyid`.
    pub key_id: String,
    /// `created` (Unix seconds).
    pub created: i64,
    /// `expires` (Unix seconds).
    pub expires: i64,
    /// `nonce`.
    pub nonce: String,
    /// The 64 signature bytes.
    signature: [u8; 64],
    /// The `@signature-params` line as the signature base needs it.
    serialized_parameters: String,
}

/// How far a receiver lets signature times stray (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimePolicy {
    /// `created` may differ from now by at most this much, either way.
    pub max_clock_skew: i64,
    /// `expires` may lie at most this much after `created`.
    pub max_validity: i64,
}

impl Default for TimePolicy {
    /// ±300 s of skew, and signatures valid at most 300 s.
    fn default() -> TimePolicy {
        TimePolicy {
            max_clock_skew: 300,
            max_validity: 300,
        }
    }
}

/// Reads the signature of a request: the first label of `Signature-Input` that `Signature` also carries. It
/// must have `created`, `expires`, `nonce` and `keyid`; `alg`, when present, must be `ed25519`.
pub fn parse_signature(headers: &HeaderMap) -> Result<ParsedSignature, Rejection> {
    let input_field = joined_field(headers, "signature-input");
    let signature_field = joined_field(headers, "signature");
    let (Some(input_field), Some(signature_field)) = (input_field, signature_field) else {
        return Err(Rejection::new(
            RejectionReason::SignatureMissing,
            "the request has no Signature-Input and Signature fields",
        ));
    };
    let inputs: sfv::Dictionary = sfv::Parser::new(&input_field)
        .parse()
        .map_err(|error| malformed(format!("Signature-Input: {error}")))?;
    let signatures: sfv::Dictionary = sfv::Parser::new(&signature_field)
        .parse()
        .map_err(|error| malformed(format!("Signature: {error}")))?;
    let Some((label, input, signature)) = inputs.iter().find_map(|(label, input)| {
        signatures
            .get(label.as_str())
            .map(|signature| (label.as_str().to_owned(), input, signature))
    }) else {
        return Err(malformed("no label appears in both Signature-Input and Signature"));
    };
    let sfv::ListEntry::InnerList(input) = input else {
        return Err(malformed("a Signature-Input member is an inner list of components"));
    };
    let signature = match signature {
        sfv::ListEntry::Item(item) => item.bare_item.as_byte_sequence(),
        sfv::ListEntry::InnerList(_) => None,
    }
    .ok_or_else(|| malformed("a Signature member is a byte sequence"))?;
    let signature: [u8; 64] = signature
        .try_into()
        .map_err(|_| malformed(format!("an Ed25519 signature has 64 bytes, not {}", signature.len())))?;

    let mut components = Vec::with_capacity(input.items.len());
    for item in &input.items {
        let Some(name) = item.bare_item.as_string() else {
            return Err(malformed("a covered component is a string"));
        };
        if !item.params.is_empty() {
            return Err(Rejection::new(
                RejectionReason::ComponentUnsupported,
                format!("component parameters (on \"{}\") are not supported", name.as_str()),
            ));
        }
        components.push(name.as_str().to_owned());
    }
    let mut parameters = Vec::with_capacity(input.params.len());
    for (name, value) in &input.params {
        let value = if let Some(integer) = value.as_integer() {
            ParameterValue::Integer(i64::from(integer))
        } else if let Some(text) = value.as_string() {
            ParameterValue::String(text.as_str().to_owned())
        } else if let Some(token) = value.as_token() {
            ParameterValue::Token(token.as_str().to_owned())
        } else {
            return Err(malformed(format!(
                "signature parameter `{}` has an unsupported type",
                name.as_str()
            )));
        };
        parameters.push((name.as_str().to_owned(), value));
    }
    let integer = |name: &str| {
        parameters.iter().find_map(|(key, value)| match value {
            ParameterValue::Integer(integer) if key == name => Some(*integer),
            _ => None,
        })
    };
    let text = |name: &str| {
        parameters.iter().find_map(|(key, value)| match value {
            ParameterValue::String(text) if key == name => Some(text.clone()),
            _ => None,
        })
    };
    let created = integer("created").ok_or_else(|| malformed("the integer parameter `created` is required"))?;
    let expires = integer("expires").ok_or_else(|| malformed("the integer parameter `expires` is required"))?;
    let nonce = text("nonce").ok_or_else(|| malformed("the string parameter `nonce` is required"))?;
    let key_id = text("keyid").ok_or_else(|| malformed("the string parameter `keyid` is required"))?;
    if let Some(algorithm) = text("alg")
        && algorithm != ALGORITHM
    {
        return Err(Rejection::new(
            RejectionReason::AlgorithmUnsupported,
            format!("alg `{algorithm}` is not supported; use ed25519"),
        ));
    }
    let serialized_parameters = serialize_signature_parameters(&components, &parameters)?;
    Ok(ParsedSignature {
        label,
        components,
        key_id,
        created,
        expires,
        nonce,
        signature,
        serialized_parameters,
    })
}

impl ParsedSignature {
    /// Checks `created` and `expires` against `now` (Unix seconds, from the caller's clock).
    pub fn check_time(&self, now: i64, policy: TimePolicy) -> Result<(), Rejection> {
        if self.created > now.saturating_add(policy.max_clock_skew) {
            return Err(Rejection::new(
                RejectionReason::CreatedInFuture,
                format!(
                    "created is {} s ahead of this server's clock (at most {} s allowed)",
                    self.created - now,
                    policy.max_clock_skew
                ),
            ));
        }
        if self.created < now.saturating_sub(policy.max_clock_skew) {
            return Err(Rejection::new(
                RejectionReason::CreatedTooOld,
                format!(
                    "created is {} s behind this server's clock (at most {} s allowed)",
                    now - self.created,
                    policy.max_clock_skew
                ),
            ));
        }
        if self.expires.saturating_sub(self.created) > policy.max_validity {
            return Err(Rejection::new(
                RejectionReason::ValidityTooLong,
                format!("expires may be at most {} s after created", policy.max_validity),
            ));
        }
        if self.expires <= now {
            return Err(Rejection::new(RejectionReason::Expired, "the signature has expired"));
        }
        Ok(())
    }

    /// Checks that the signature covers the required components (and the body's, when there is a body).
    pub fn check_coverage(&self, has_body: bool) -> Result<(), Rejection> {
        let body_components: &[&str] = if has_body { &REQUIRED_BODY_COMPONENTS } else { &[] };
        let missing: Vec<&str> = REQUIRED_COMPONENTS
            .iter()
            .chain(body_components)
            .filter(|required| !self.components.iter().any(|covered| covered == *required))
            .copied()
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(Rejection::new(
                RejectionReason::ComponentsMissing,
                format!("the signature must cover {}", missing.join(", ")),
            ))
        }
    }

    /// Verifies the signature over `request` with `key`.
    pub fn verify(&self, request: &RequestParts<'_>, key: &PublicKey) -> Result<(), Rejection> {
        let base = signature_base(request, &self.components, &self.serialized_parameters)?;
        if key.verifies(base.as_bytes(), &self.signature) {
            Ok(())
        } else {
            Err(Rejection::new(
                RejectionReason::SignatureInvalid,
                format!("the signature does not verify with key {}", self.key_id),
            ))
        }
    }
}

/// A signature parameter's value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ParameterValue {
    Integer(i64),
    String(String),
    Token(String),
}

/// RFC 9421 §2.5: one line per covered component, then the `@signature-params` line.
fn signature_base(
    request: &RequestParts<'_>,
    components: &[String],
    serialized_parameters: &str,
) -> Result<String, Rejection> {
    let mut base = String::new();
    for component in components {
        let value = component_value(request, component)?;
        if value.contains('\n') || value.contains('\r') {
            return Err(malformed(format!("component {component} contains a line break")));
        }
        base.push_str(&serialize_string(component)?);
        base.push_str(": ");
        base.push_str(&value);
        base.push('\n');
    }
    base.push_str("\"@signature-params\": ");
    base.push_str(serialized_parameters);
    Ok(base)
}

/// The value of one covered component (RFC 9421 §2.1 and §2.2).
fn component_value(request: &RequestParts<'_>, component: &str) -> Result<String, Rejection> {
    let uri = request.target_uri;
    let value = match component {
        "@method" => request.method.as_str().to_owned(),
        "@target-uri" => uri.as_str().to_owned(),
        "@authority" => authority(uri)?,
        "@scheme" => uri.scheme().to_ascii_lowercase(),
        "@path" => uri.path().to_owned(),
        "@query" => format!("?{}", uri.query().unwrap_or("")),
        "@request-target" => match uri.query() {
            Some(query) => format!("{}?{query}", uri.path()),
            None => uri.path().to_owned(),
        },
        derived if derived.starts_with('@') => {
            return Err(Rejection::new(
                RejectionReason::ComponentUnsupported,
                format!("the derived component {derived} is not supported"),
            ));
        }
        field => joined_field(request.headers, field).ok_or_else(|| {
            Rejection::new(
                RejectionReason::ComponentsMissing,
                format!("the covered field {field} is not in the request"),
            )
        })?,
    };
    Ok(value)
}

/// `@authority`: the host in lower case, with the port only when it is not the scheme's default.
fn authority(uri: &Url) -> Result<String, Rejection> {
    let host = uri
        .host_str()
        .ok_or_else(|| malformed("the target URI has no host"))?
        .to_ascii_lowercase();
    Ok(match uri.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// All lines of a field, each trimmed, joined by `", "` (RFC 9421 §2.1); `None` when absent.
fn joined_field(headers: &HeaderMap, name: &str) -> Option<String> {
    let values: Vec<String> = headers
        .get_all(name)
        .iter()
        .map(|value| String::from_utf8_lossy(value.as_bytes()).trim().to_owned())
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// The inner list of component names with the signature parameters, serialized as RFC 8941 requires.
fn serialize_signature_parameters(
    components: &[String],
    parameters: &[(String, ParameterValue)],
) -> Result<String, Rejection> {
    let names: Result<Vec<String>, Rejection> = components.iter().map(|name| serialize_string(name)).collect();
    let mut serialized = format!("({})", names?.join(" "));
    for (name, value) in parameters {
        serialized.push(';');
        serialized.push_str(name);
        serialized.push('=');
        match value {
            ParameterValue::Integer(integer) => serialized.push_str(&integer.to_string()),
            ParameterValue::String(text) => serialized.push_str(&serialize_string(text)?),
            ParameterValue::Token(token) => serialized.push_str(token),
        }
    }
    Ok(serialized)
}

/// An RFC 8941 string: printable ASCII in quotes, with `"` and `\` escaped.
fn serialize_string(text: &str) -> Result<String, Rejection> {
    if !text.chars().all(|character| (' '..='~').contains(&character)) {
        return Err(malformed("structured strings are printable ASCII"));
    }
    Ok(format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"")))
}

fn malformed(detail: impl Into<String>) -> Rejection {
    Rejection::new(RejectionReason::SignatureMalformed, detail)
}

#[cfg(test)]
mod tests;
