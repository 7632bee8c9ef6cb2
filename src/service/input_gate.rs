//! The one gate every tool's raw arguments pass before anything else reads them: no control characters in any string
//! or object key, at any depth, with the same answer on every backend.
//!
//! PostgreSQL refuses `\u0000` in `text` and `jsonb` values, SQLite stores it, and neither should see it: a NUL that
//! reached a statement used to give `internal_error` on PostgreSQL (and lose the call's audit row, whose request is
//! `jsonb`), while SQLite kept it in bodies and keys that could then not be moved to PostgreSQL. The gate is a pure
//! function over the JSON as received, so it also covers keys inside free-form objects (`context`,
//! `structured_data`, …) that no typed field describes.
//!
//! Also here: the character classes that titles and names are checked against (bidirectional controls, invisible
//! characters), and the sanitizing that makes a refused request safe to audit.

use serde_json::{Map, Value, json};

use super::ServiceError;
use super::validation::pointer_token;

/// Checks every string and every object key of a tool's arguments. Strings may hold line breaks (`\n`, `\r`) and
/// tabs; keys may hold no control character at all. The first offence is `validation_failed` whose
/// `details.field` points at it (a JSON pointer without the leading `/`, as every field of this server is named).
pub fn check_arguments(arguments: &Map<String, Value>) -> Result<(), ServiceError> {
    // An explicit stack rather than recursion: the depth of the input is the client's choice.
    let mut pending: Vec<(String, &Map<String, Value>)> = vec![(String::new(), arguments)];
    let mut pending_arrays: Vec<(String, &Vec<Value>)> = Vec::new();
    loop {
        if let Some((path, object)) = pending.pop() {
            for (name, value) in object {
                let field = join(&path, &pointer_token(name));
                if let Some(character) = name.chars().find(|character| character.is_control()) {
                    return Err(refused(&field, character, "an object key"));
                }
                visit(field, value, &mut pending, &mut pending_arrays)?;
            }
        } else if let Some((path, items)) = pending_arrays.pop() {
            for (position, value) in items.iter().enumerate() {
                visit(
                    join(&path, &position.to_string()),
                    value,
                    &mut pending,
                    &mut pending_arrays,
                )?;
            }
        } else {
            return Ok(());
        }
    }
}

fn visit<'value>(
    field: String,
    value: &'value Value,
    pending: &mut Vec<(String, &'value Map<String, Value>)>,
    pending_arrays: &mut Vec<(String, &'value Vec<Value>)>,
) -> Result<(), ServiceError> {
    match value {
        Value::String(text) => match text.chars().find(|character| is_forbidden_in_text(*character)) {
            Some(character) => Err(refused(&field, character, "text")),
            None => Ok(()),
        },
        Value::Object(object) => {
            pending.push((field, object));
            Ok(())
        }
        Value::Array(items) => {
            pending_arrays.push((field, items));
            Ok(())
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

fn join(path: &str, token: &str) -> String {
    if path.is_empty() {
        token.to_owned()
    } else {
        format!("{path}/{token}")
    }
}

/// The gate's refusal. Neither message nor field carries the character itself (a NUL in a message would make the
/// audit row unwritable on PostgreSQL): keys are shown with control characters escaped.
fn refused(field: &str, character: char, place: &str) -> ServiceError {
    let code_point = format!("U+{:04X}", u32::from(character));
    let shown = audit_safe_text(field);
    let message = if place == "text" {
        format!(
            "{shown} must not contain control characters ({code_point} found); text may hold only line breaks and tabs"
        )
    } else {
        format!("{shown}: {place} must not contain control characters ({code_point} found)")
    };
    ServiceError::validation(&shown, message)
        .with_details(json!({ "field": shown, "reason": "control_character", "character": code_point }))
}

/// Whether a character is refused in any text: every control character (Unicode category Cc: C0, DEL, C1) except
/// line feed, carriage return and tab.
pub fn is_forbidden_in_text(character: char) -> bool {
    character.is_control() && !matches!(character, '\n' | '\r' | '\t')
}

/// A copy of a request that is safe to store: every control character in keys and strings (line breaks and tabs in
/// strings excepted) replaced by its `\uXXXX` escape as plain text. Used for the audit row of a request the gate
/// refused, so that the refusal is recorded like every other failure.
pub fn sanitized_for_audit(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(escape_controls(text, is_forbidden_in_text)),
        Value::Array(items) => Value::Array(items.iter().map(sanitized_for_audit).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, field)| (audit_safe_text(name), sanitized_for_audit(field)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A text with every control character replaced by its `\uXXXX` escape: for client names and versions, keys and
/// anything else that is stored or shown but was never checked.
pub fn audit_safe_text(text: &str) -> String {
    escape_controls(text, char::is_control)
}

fn escape_controls(text: &str, escaped: fn(char) -> bool) -> String {
    if !text.chars().any(escaped) {
        return text.to_owned();
    }
    let mut safe = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if escaped(character) {
            safe.push_str(&format!("\\u{:04x}", u32::from(character)));
        } else {
            safe.push(character);
        }
    }
    safe
}

/// Whether a character is a bidirectional control (embeddings, overrides, isolates and the implicit marks), which
/// can make a title or name display in another order than it reads (the "Trojan Source" trick).
pub fn is_bidi_control(character: char) -> bool {
    matches!(
        character,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Whether a character shows nothing on its own: white space, format characters (Unicode category Cf, such as
/// zero-width spaces and joiners, the soft hyphen, tag characters), the Hangul and Braille blanks, variation selectors
/// and the combining grapheme joiner. A title or name made only of these looks empty or impersonates another.
pub fn is_invisible(character: char) -> bool {
    character.is_whitespace()
        || character.is_control()
        || matches!(
            character,
            // Category Cf (Unicode 15.1).
            '\u{00AD}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08E2}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0001}'
                | '\u{E0020}'..='\u{E007F}'
                // Letters and symbols that render blank.
                | '\u{115F}'
                | '\u{1160}'
                | '\u{3164}'
                | '\u{FFA0}'
                | '\u{2800}'
                // Marks with no glyph of their own.
                | '\u{034F}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180D}'
                | '\u{180F}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{E0100}'..='\u{E01EF}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(fields) => fields,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_nul_anywhere_is_refused_naming_its_place() {
        let cases = [
            (json!({ "query": "a\u{0}b" }), "query"),
            (json!({ "context": { "ke\u{0}y": "value" } }), "context/ke\\u0000y"),
            (json!({ "tags": ["fine", "bad\u{1}"] }), "tags/1"),
            (
                json!({ "subjects": [{ "name": "x", "aliases": ["\u{7f}"] }] }),
                "subjects/0/aliases/0",
            ),
            (
                json!({ "structured_data": { "a/b": { "c~d": "\u{85}" } } }),
                "structured_data/a~1b/c~0d",
            ),
            (json!({ "\u{0}": 1 }), "\\u0000"),
        ];
        for (input, field) in cases {
            let error = check_arguments(&arguments(input.clone())).expect_err("refused");
            assert_eq!(error.code, super::super::ErrorCode::ValidationFailed, "{input}");
            assert_eq!(error.details["field"], field, "{input}");
            assert!(!error.message.contains('\u{0}'), "{}", error.message);
        }
    }

    #[test]
    fn line_breaks_and_tabs_pass_in_text_but_not_in_keys() {
        let text = json!({ "body_markdown": "line one\r\nline two\n\tindented", "context": { "a": "b" } });
        assert!(check_arguments(&arguments(text)).is_ok());
        let key = json!({ "context": { "line\nbreak": "b" } });
        assert_eq!(
            check_arguments(&arguments(key)).expect_err("refused").details["field"],
            "context/line\\u000abreak"
        );
    }

    #[test]
    fn a_refused_request_is_sanitized_for_the_audit() {
        let request = json!({ "query": "a\u{0}b\nc", "context": { "k\u{0}": ["\u{1b}[31m"] } });
        let safe = sanitized_for_audit(&request);
        assert_eq!(
            safe,
            json!({ "query": "a\\u0000b\nc", "context": { "k\\u0000": ["\\u001b[31m"] } })
        );
        assert!(
            check_arguments(&arguments(safe)).is_ok(),
            "the sanitized request passes the gate"
        );
    }

    #[test]
    fn deep_nesting_needs_no_recursion() {
        let mut value = json!("\u{0}");
        // Deeper than serde_json parses (128), as a value built in code could be.
        for _ in 0..1000 {
            value = json!([value]);
        }
        let error = check_arguments(&arguments(json!({ "metrics": value }))).expect_err("refused");
        assert!(
            error.details["field"]
                .as_str()
                .unwrap_or("")
                .starts_with("metrics/0/0/0")
        );
    }

    #[test]
    fn bidi_controls_and_invisible_characters_are_classified() {
        assert!("\u{202E}\u{2066}\u{200F}".chars().all(is_bidi_control));
        assert!(!"abc אבג".chars().any(is_bidi_control));
        assert!(
            "\u{200B}\u{200D}\u{FEFF}\u{3164}\u{2800}\u{FE0F}\u{E0041} \u{00A0}"
                .chars()
                .all(is_invisible)
        );
        assert!(!"a".chars().all(is_invisible));
    }
}
