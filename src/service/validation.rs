//! Input checks shared by the write use cases. Each failure is `validation_failed` naming the field.

use serde_json::{Map, Value};

use super::ServiceError;
use super::limits::{MAX_AUXILIARY_OBJECT_BYTES, MAX_CONTEXT_FACETS};
use crate::domain::{IdKind, PublicId};
use crate::trust::{ContextKey, ContextValue};

/// Parses an ID given in `field`.
pub fn parse_id(field: &str, text: &str) -> Result<PublicId, ServiceError> {
    PublicId::parse(text.trim()).map_err(|error| ServiceError::malformed_id(field, &error))
}

/// Parses an ID in `field` and requires one of `allowed` kinds; another kind is `invalid_target`.
pub fn parse_target(field: &str, text: &str, allowed: &[IdKind], tool: &str) -> Result<PublicId, ServiceError> {
    let id = parse_id(field, text)?;
    if allowed.contains(&id.kind()) {
        Ok(id)
    } else {
        let names: Vec<String> = allowed.iter().map(|kind| format!("{}_", kind.prefix())).collect();
        Err(ServiceError::new(
            super::ErrorCode::InvalidTarget,
            format!(
                "{tool} accepts {} targets, not {}_",
                names.join(", "),
                id.kind().prefix()
            ),
        )
        .with_details(serde_json::json!({ "field": field, "accepted": names })))
    }
}

/// A required text: trimmed, not empty, at most `max_characters`, no control characters except newlines and tabs.
pub fn required_text(field: &str, text: &str, max_characters: usize) -> Result<String, ServiceError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ServiceError::validation(field, format!("{field} must not be empty")));
    }
    bounded_text(field, trimmed, max_characters)
}

/// An optional text: empty becomes `None`; otherwise as [`required_text`].
pub fn optional_text(field: &str, text: Option<&str>, max_characters: usize) -> Result<Option<String>, ServiceError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(trimmed) => bounded_text(field, trimmed, max_characters).map(Some),
    }
}

fn bounded_text(field: &str, text: &str, max_characters: usize) -> Result<String, ServiceError> {
    if text.chars().count() > max_characters {
        return Err(ServiceError::validation(
            field,
            format!("{field} must be at most {max_characters} characters"),
        ));
    }
    if text
        .chars()
        .any(|character| character.is_control() && character != '\n' && character != '\t' && character != '\r')
    {
        return Err(ServiceError::validation(
            field,
            format!("{field} must not contain control characters"),
        ));
    }
    Ok(text.to_owned())
}

/// A confidence in [0, 1].
pub fn confidence(field: &str, value: f64) -> Result<f64, ServiceError> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(ServiceError::validation(
            field,
            format!("{field} must be a number from 0 to 1"),
        ))
    }
}

/// An open-ended lower_snake_case name such as a content type, usage type or entity type.
pub fn type_name(field: &str, text: &str) -> Result<String, ServiceError> {
    let name = text.trim().to_ascii_lowercase();
    let valid = !name.is_empty()
        && name.len() <= 40
        && name.starts_with(|character: char| character.is_ascii_lowercase())
        && name
            .chars()
            .all(|character| character.is_ascii_lowercase() || character.is_ascii_digit() || character == '_');
    if valid {
        Ok(name)
    } else {
        Err(ServiceError::validation(
            field,
            format!(
                "{field} must be lower_snake_case letters, digits and underscores, starting with a letter, at most 40 characters"
            ),
        ))
    }
}

/// An optional JSON object (absent or null becomes `{}`), at most the auxiliary size.
pub fn object(field: &str, value: Option<&Value>) -> Result<Value, ServiceError> {
    match value {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::Object(fields)) => {
            let size = serde_json::to_string(fields)
                .map(|text| text.len())
                .unwrap_or(usize::MAX);
            if size > MAX_AUXILIARY_OBJECT_BYTES {
                return Err(ServiceError::validation(
                    field,
                    format!("{field} must be at most {MAX_AUXILIARY_OBJECT_BYTES} bytes of JSON"),
                ));
            }
            Ok(Value::Object(fields.clone()))
        }
        Some(_) => Err(ServiceError::validation(
            field,
            format!("{field} must be a JSON object"),
        )),
    }
}

/// A context object: scalar facets only. Returns the object as given and its normalized key (`*` when empty).
pub fn context(field: &str, value: Option<&Value>) -> Result<(Value, ContextKey), ServiceError> {
    let object = object(field, value)?;
    let Value::Object(fields) = &object else {
        return Ok((object, ContextKey::all()));
    };
    if fields.len() > MAX_CONTEXT_FACETS {
        return Err(ServiceError::validation(
            field,
            format!("{field} may have at most {MAX_CONTEXT_FACETS} facets"),
        ));
    }
    let entries = fields.iter().map(|(name, facet)| {
        let converted = match facet {
            Value::String(text) => ContextValue::Text(text.clone()),
            Value::Number(number) => number.as_f64().map_or(ContextValue::NonScalar, ContextValue::Number),
            Value::Bool(flag) => ContextValue::Bool(*flag),
            _ => ContextValue::NonScalar,
        };
        (name.clone(), converted)
    });
    let key =
        ContextKey::normalize(entries).map_err(|error| ServiceError::validation(field, format!("{field}: {error}")))?;
    Ok((object, key))
}
