//! Input checks shared by the write use cases. Each failure is `validation_failed` naming the field.

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Map, Value};

use super::ServiceError;
use super::limits::{
    MAX_AUXILIARY_OBJECT_BYTES, MAX_CONTEXT_FACET_NAME_CHARACTERS, MAX_CONTEXT_FACET_VALUE_CHARACTERS,
    MAX_CONTEXT_FACETS, MAX_CONTEXT_KEY_BYTES, MAX_CONTEXT_NOTE_CHARACTERS, MAX_ID_CHARACTERS, MAX_KEYWORD_CHARACTERS,
};
use crate::domain::{ContextKey, ContextValue};
use crate::domain::{IdKind, PublicId};

/// Fails unless `text`, as given (before trimming), has at most `max_characters` characters: the `maxLength` the
/// input schema declares for `field`.
pub fn cap_text(field: &str, text: &str, max_characters: usize) -> Result<(), ServiceError> {
    // Counting stops at the first character over the cap, so a huge string costs no more than a short one.
    if text.chars().nth(max_characters).is_some() {
        return Err(
            ServiceError::validation(field, format!("{field} must be at most {max_characters} characters"))
                .with_details(serde_json::json!({ "field": field, "max_characters": max_characters })),
        );
    }
    Ok(())
}

/// [`cap_text`] for an optional text.
pub fn cap_optional_text(field: &str, text: Option<&str>, max_characters: usize) -> Result<(), ServiceError> {
    text.map_or(Ok(()), |text| cap_text(field, text, max_characters))
}

/// Fails unless an array in `field` has at most `max_items` entries: the `maxItems` of the input schema.
pub fn cap_items(field: &str, items: usize, max_items: usize) -> Result<(), ServiceError> {
    if items > max_items {
        return Err(
            ServiceError::validation(field, format!("{field} may have at most {max_items} entries"))
                .with_details(serde_json::json!({ "field": field, "max_items": max_items })),
        );
    }
    Ok(())
}

/// [`cap_text`] for every entry of an array of texts, the entries named `field/0`, `field/1`, …
pub fn cap_each_text(field: &str, texts: &[String], max_characters: usize) -> Result<(), ServiceError> {
    for (position, text) in texts.iter().enumerate() {
        cap_text(&format!("{field}/{position}"), text, max_characters)?;
    }
    Ok(())
}

/// An enumerated word or lower_snake_case name as given: at most [`MAX_KEYWORD_CHARACTERS`], then trimmed.
pub fn keyword<'text>(field: &str, text: &'text str) -> Result<&'text str, ServiceError> {
    cap_text(field, text, MAX_KEYWORD_CHARACTERS)?;
    Ok(text.trim())
}

/// Parses an ID given in `field`.
pub fn parse_id(field: &str, text: &str) -> Result<PublicId, ServiceError> {
    cap_text(field, text, MAX_ID_CHARACTERS)?;
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

/// A required text: at most `max_characters` as given, trimmed, not empty, no control characters except newlines and
/// tabs.
pub fn required_text(field: &str, text: &str, max_characters: usize) -> Result<String, ServiceError> {
    cap_text(field, text, max_characters)?;
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ServiceError::validation(field, format!("{field} must not be empty")));
    }
    bounded_text(field, trimmed, max_characters)
}

/// An optional text: empty becomes `None`; otherwise as [`required_text`].
pub fn optional_text(field: &str, text: Option<&str>, max_characters: usize) -> Result<Option<String>, ServiceError> {
    cap_optional_text(field, text, max_characters)?;
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
    use super::limits::{MAX_CONFIDENCE, MIN_CONFIDENCE};
    if value.is_finite() && (MIN_CONFIDENCE..=MAX_CONFIDENCE).contains(&value) {
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
    let name = keyword(field, text)?.to_ascii_lowercase();
    let valid = !name.is_empty()
        && name.len() <= MAX_KEYWORD_CHARACTERS
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
                "{field} must be lower_snake_case letters, digits and underscores, starting with a letter, at most \
                 {MAX_KEYWORD_CHARACTERS} characters"
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
        return Err(
            ServiceError::validation(field, format!("{field} may have at most {MAX_CONTEXT_FACETS} facets"))
                .with_details(serde_json::json!({ "field": field, "max_properties": MAX_CONTEXT_FACETS })),
        );
    }
    for (name, facet) in fields {
        let facet_field = format!("{field}/{}", pointer_token(name));
        if name.chars().nth(MAX_CONTEXT_FACET_NAME_CHARACTERS).is_some() {
            return Err(ServiceError::validation(
                &facet_field,
                format!("{field}: a facet name must be at most {MAX_CONTEXT_FACET_NAME_CHARACTERS} characters"),
            ));
        }
        if let Value::String(text) = facet {
            // The free-text note is left out of the key and may be as long as a summary; facets are short values.
            let max = if name == "note" {
                MAX_CONTEXT_NOTE_CHARACTERS
            } else {
                MAX_CONTEXT_FACET_VALUE_CHARACTERS
            };
            cap_text(&facet_field, text, max)?;
        }
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
    if key.to_string().len() > MAX_CONTEXT_KEY_BYTES {
        return Err(ServiceError::validation(
            field,
            format!(
                "{field}: its facets, normalized to key=value pairs joined by `;`, must be at most \
                 {MAX_CONTEXT_KEY_BYTES} bytes; use fewer or shorter facets"
            ),
        ));
    }
    Ok((object, key))
}

/// An object member's name as a JSON pointer token (RFC 6901: `~` becomes `~0`, `/` becomes `~1`).
pub fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A title or name: as [`required_text`], on one line (no line breaks or tabs), without bidirectional controls, and
/// with at least one visible character.
pub fn display_text(field: &str, text: &str, max_characters: usize) -> Result<String, ServiceError> {
    let text = required_text(field, text, max_characters)?;
    // Unicode's line and paragraph separators break a line as surely as a line feed.
    if text.contains(['\n', '\r', '\t', '\u{2028}', '\u{2029}']) {
        return Err(ServiceError::validation(
            field,
            format!("{field} must be one line, without line breaks or tabs"),
        ));
    }
    visible(field, &text)?;
    Ok(text)
}

/// [`display_text`] for an optional title: empty becomes `None`.
pub fn optional_display_text(
    field: &str,
    text: Option<&str>,
    max_characters: usize,
) -> Result<Option<String>, ServiceError> {
    match text.map(str::trim) {
        None | Some("") => {
            cap_optional_text(field, text, max_characters)?;
            Ok(None)
        }
        Some(_) => display_text(field, text.unwrap_or_default(), max_characters).map(Some),
    }
}

/// Fails if a shown text holds bidirectional controls or nothing visible (only zero-width, format or blank
/// characters), which would let it display differently from what it says, or look empty.
pub fn visible(field: &str, text: &str) -> Result<(), ServiceError> {
    if text.chars().any(super::input_gate::is_bidi_control) {
        return Err(ServiceError::validation(
            field,
            format!("{field} must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, …)"),
        )
        .with_details(serde_json::json!({ "field": field, "reason": "bidi_control" })));
    }
    if text.chars().all(super::input_gate::is_invisible) {
        return Err(ServiceError::validation(
            field,
            format!("{field} must contain visible characters, not only zero-width or format characters"),
        )
        .with_details(serde_json::json!({ "field": field, "reason": "invisible" })));
    }
    Ok(())
}

/// Whether a `space` argument is a `spc_` ID (in any case, as IDs are read) rather than a space name.
pub fn names_a_space_id(space: &str) -> bool {
    space.get(..4).is_some_and(|prefix| prefix.eq_ignore_ascii_case("spc_"))
}

/// An instant an admin gives (a block's end, a key's expiry): an RFC 3339 time, or a positive count of days (`d`),
/// hours (`h`) or minutes (`m`) from `now`. The CLI's `--until` and `--expires` and the console's fields read the same.
pub fn instant_or_duration(field: &str, text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, ServiceError> {
    let text = text.trim();
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Ok(instant.to_utc());
    }
    // A duration too long for the calendar is refused like one that does not parse (adding it would panic).
    positive_duration(text).and_then(|delta| now.checked_add_signed(delta)).ok_or_else(|| {
        ServiceError::validation(
            field,
            format!(
                "{field}: expected an RFC 3339 time such as 2027-01-31T00:00:00Z or a positive duration such as 90d, \
                 12h, 30m"
            ),
        )
    })
}

/// A positive count of days (`d`), hours (`h`) or minutes (`m`): `30d`, `12h`, `90m`.
pub fn positive_duration(text: &str) -> Option<TimeDelta> {
    let (unit_start, _) = text.char_indices().last()?;
    let (number, unit) = text.split_at(unit_start);
    let amount = number.parse::<i64>().ok().filter(|amount| *amount > 0)?;
    match unit {
        "d" => TimeDelta::try_days(amount),
        "h" => TimeDelta::try_hours(amount),
        "m" => TimeDelta::try_minutes(amount),
        _ => None,
    }
}
