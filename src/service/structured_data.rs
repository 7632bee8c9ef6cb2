//! Validation of a publish call's `structured_data` against the server's schema for its content type.
//!
//! The spec (§6 `publish`) lets `content_type` be open-ended and asks the server to validate
//! `structured_data` "against the server's schema for that type". The types with a schema are listed in
//! [`SCHEMA_CONTENT_TYPES`]; their JSON Schemas (draft 2020-12) live in `schemas/*.json` next to this
//! file, so that documentation can publish them verbatim ([`StructuredDataValidator::schema_for`]).
//! Every other content type accepts any JSON object. All types share the size cap of spec §9.
//!
//! Error messages never repeat the submitted values, only where they are and what was expected: the
//! values may hold exactly the kind of text the content scan exists to keep out of logs.

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// The largest accepted `structured_data`, serialized as compact JSON (spec §9: 64 KB).
pub const STRUCTURED_DATA_MAX_BYTES: usize = 65_536;

/// The content types that have a schema of their own.
pub const SCHEMA_CONTENT_TYPES: [&str; 3] = ["code", "prompt", "skill"];

/// Why `structured_data` was rejected: where, as a JSON pointer into `structured_data`, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("structured_data{pointer}: {message}")]
pub struct StructuredDataError {
    /// A JSON pointer into `structured_data`: `""` for the whole value, `/language` for a property
    /// (also when that property is missing), `/dependencies/0` for an array item.
    pub pointer: String,
    /// What is wrong, without the submitted value.
    pub message: String,
}

impl StructuredDataError {
    fn at_root(message: impl Into<String>) -> StructuredDataError {
        StructuredDataError {
            pointer: String::new(),
            message: message.into(),
        }
    }
}

/// One content type's schema, as published and as compiled.
struct ContentTypeSchema {
    content_type: &'static str,
    document: Value,
    validator: jsonschema::Validator,
}

/// The compiled schemas. Build it once with [`StructuredDataValidator::new`] and share it; it is
/// `Send + Sync`.
pub struct StructuredDataValidator {
    /// One entry per type of [`SCHEMA_CONTENT_TYPES`], in that order.
    schemas: Vec<ContentTypeSchema>,
}

impl std::fmt::Debug for StructuredDataValidator {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let content_types: Vec<&str> = self.schemas.iter().map(|schema| schema.content_type).collect();
        formatter
            .debug_struct("StructuredDataValidator")
            .field("content_types", &content_types)
            .finish()
    }
}

impl Default for StructuredDataValidator {
    fn default() -> StructuredDataValidator {
        StructuredDataValidator::new()
    }
}

impl StructuredDataValidator {
    /// Parses and compiles the built-in schemas.
    pub fn new() -> StructuredDataValidator {
        let sources: [(&'static str, &'static str); 3] = [
            ("code", include_str!("schemas/code.json")),
            ("prompt", include_str!("schemas/prompt.json")),
            ("skill", include_str!("schemas/skill.json")),
        ];
        let schemas = sources
            .into_iter()
            .map(|(content_type, source)| {
                // The schemas are files of this crate, compiled in, and a test builds the validator: a
                // failure here is a programming error caught before release, never a runtime condition.
                let document: Value =
                    serde_json::from_str(source).expect("every built-in structured_data schema is valid JSON");
                let validator = jsonschema::draft202012::new(&document)
                    .expect("every built-in structured_data schema is a valid draft 2020-12 schema");
                ContentTypeSchema {
                    content_type,
                    document,
                    validator,
                }
            })
            .collect();
        StructuredDataValidator { schemas }
    }

    /// The JSON Schema for a content type, or `None` when the type accepts any JSON object.
    /// Content types are matched case-insensitively and without surrounding whitespace.
    pub fn schema_for(&self, content_type: &str) -> Option<&Value> {
        self.compiled_schema_for(content_type).map(|schema| &schema.document)
    }

    /// Checks `structured_data` for a content type: at most [`STRUCTURED_DATA_MAX_BYTES`] as compact
    /// JSON, a JSON object, and valid under the type's schema if it has one. For `prompt`, the
    /// `input_schema` and `output_schema` must also be valid JSON Schemas of the draft they declare
    /// (draft 2020-12 when they declare none; a custom meta-schema cannot be checked offline and is
    /// accepted as it is). Reports the first problem found.
    pub fn validate(&self, content_type: &str, data: &Value) -> Result<(), StructuredDataError> {
        let size = serialized_size(data);
        if size > STRUCTURED_DATA_MAX_BYTES {
            return Err(StructuredDataError::at_root(format!(
                "structured_data is {size} bytes as JSON; the limit is {STRUCTURED_DATA_MAX_BYTES} bytes (64 KB)"
            )));
        }
        if !data.is_object() {
            return Err(StructuredDataError::at_root(format!(
                "structured_data must be a JSON object, not {}",
                json_type_name(data)
            )));
        }
        let Some(schema) = self.compiled_schema_for(content_type) else {
            return Ok(());
        };
        if let Err(error) = schema.validator.validate(data) {
            return Err(error_from_validation(&error, &schema.document, ""));
        }
        if schema.content_type == "prompt" {
            for property in ["input_schema", "output_schema"] {
                if let Some(embedded_schema) = data.get(property) {
                    check_embedded_schema(property, embedded_schema)?;
                }
            }
        }
        Ok(())
    }

    fn compiled_schema_for(&self, content_type: &str) -> Option<&ContentTypeSchema> {
        let content_type = content_type.trim();
        self.schemas
            .iter()
            .find(|schema| schema.content_type.eq_ignore_ascii_case(content_type))
    }
}

/// Checks a JSON Schema that a prompt carries against the meta-schema of its draft.
fn check_embedded_schema(property: &str, embedded_schema: &Value) -> Result<(), StructuredDataError> {
    // Detection only reads `$schema`. An unknown draft would make the meta-schema check try to fetch
    // it, which this server never does, so such schemas are accepted unchecked.
    if jsonschema::Draft::default().detect(embedded_schema) == jsonschema::Draft::Unknown {
        return Ok(());
    }
    match jsonschema::meta::validate(embedded_schema) {
        Ok(()) => Ok(()),
        Err(error) => {
            let mut pointer = format!("/{property}");
            pointer.push_str(error.instance_path().as_str());
            Err(StructuredDataError {
                pointer,
                message: format!("not a valid JSON Schema: {}", error.masked_with("the value")),
            })
        }
    }
}

/// Turns the validator's error into ours: the pointer of a missing property names the property, and
/// the message masks the submitted value and adds the schema's description of what was expected.
fn error_from_validation(
    error: &jsonschema::ValidationError<'_>,
    schema: &Value,
    pointer_prefix: &str,
) -> StructuredDataError {
    let mut pointer = format!("{pointer_prefix}{}", error.instance_path().as_str());
    let schema_path = error.schema_path().as_str();
    // The keyword that failed sits at the end of the schema path; its parent is the subschema that
    // describes the value.
    let parent_schema_path = schema_path.rsplit_once('/').map_or("", |(parent, _)| parent);
    let message = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            pointer.push('/');
            push_json_pointer_segment(&mut pointer, name);
            let property_description = schema
                .pointer(parent_schema_path)
                .and_then(|subschema| subschema.pointer(&format!("/properties/{}", escape_json_pointer(name))))
                .and_then(|property_schema| property_schema.get("description"))
                .and_then(Value::as_str);
            match property_description {
                Some(description) => format!("the property is required: {description}"),
                None => "the property is required".to_owned(),
            }
        }
        _ => {
            let description = schema
                .pointer(parent_schema_path)
                .and_then(|subschema| subschema.get("description"))
                .and_then(Value::as_str);
            let problem = match error.kind() {
                ValidationErrorKind::Pattern { .. } => "the value does not have the expected form".to_owned(),
                _ => error.masked_with("the value").to_string(),
            };
            match description {
                Some(description) => format!("{problem}; expected: {description}"),
                None => problem,
            }
        }
    };
    StructuredDataError { pointer, message }
}

/// Appends one JSON pointer reference token (RFC 6901).
fn push_json_pointer_segment(pointer: &mut String, segment: &str) {
    pointer.push_str(&escape_json_pointer(segment));
}

fn escape_json_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The length of `value` as compact JSON, counted without building the text.
fn serialized_size(value: &Value) -> usize {
    struct ByteCounter(usize);
    impl std::io::Write for ByteCounter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = ByteCounter(0);
    // Writing a `Value` cannot fail: its keys are strings and the counter never refuses bytes. Should it
    // fail anyway, the size is reported as unlimited so that the value is rejected rather than let in.
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator() -> StructuredDataValidator {
        StructuredDataValidator::new()
    }

    fn error_of(content_type: &str, data: Value) -> StructuredDataError {
        validator()
            .validate(content_type, &data)
            .expect_err("the data is invalid")
    }

    #[test]
    fn valid_code_data_passes() {
        let data = json!({
            "language": "python",
            "runtime": "cpython 3.12",
            "license": "(MIT OR Apache-2.0) AND BSD-3-Clause",
            "version": "1.4.0",
            "entry_point": "main:app",
            "dependencies": ["requests>=2.31", "tenacity"],
            "extra": { "anything": true },
        });
        assert_eq!(validator().validate("code", &data), Ok(()));
        for license in [
            "MIT",
            "Apache-2.0",
            "GPL-3.0-or-later",
            "LicenseRef-proprietary",
            "Apache-2.0 WITH LLVM-exception",
        ] {
            assert_eq!(
                validator().validate("code", &json!({"language": "c", "license": license})),
                Ok(()),
                "{license}"
            );
        }
    }

    #[test]
    fn code_requires_a_language_named_by_its_own_pointer() {
        let error = error_of("code", json!({ "runtime": "node 22" }));
        assert_eq!(error.pointer, "/language");
        assert!(
            error.message.starts_with("the property is required"),
            "{}",
            error.message
        );
        assert_eq!(error_of("code", json!({ "language": "" })).pointer, "/language");
        assert_eq!(error_of("code", json!({ "language": "   " })).pointer, "/language");
        assert_eq!(error_of("code", json!({ "language": 3 })).pointer, "/language");
    }

    #[test]
    fn code_property_types_are_checked() {
        assert_eq!(
            error_of("code", json!({ "language": "go", "dependencies": ["a", 1] })).pointer,
            "/dependencies/1"
        );
        assert_eq!(
            error_of("code", json!({ "language": "go", "dependencies": "a" })).pointer,
            "/dependencies"
        );
        assert_eq!(
            error_of("code", json!({ "language": "go", "runtime": 1 })).pointer,
            "/runtime"
        );
        let error = error_of("code", json!({ "language": "go", "license": "GPL v3, maybe" }));
        assert_eq!(error.pointer, "/license");
        assert!(error.message.contains("SPDX"), "{}", error.message);
        assert!(
            !error.message.contains("maybe"),
            "the value is echoed: {}",
            error.message
        );
    }

    #[test]
    fn prompt_data_is_checked() {
        let valid = json!({
            "target_model": "any-chat-model",
            "input_schema": { "type": "object", "properties": { "question": { "type": "string" } } },
            "output_schema": { "$schema": "http://json-schema.org/draft-07/schema#", "type": "string" },
            "variables": ["question"],
            "temperature": 0.2,
        });
        assert_eq!(validator().validate("prompt", &valid), Ok(()));
        assert_eq!(
            validator().validate("prompt", &json!({ "target_model": "m", "temperature": 2 })),
            Ok(())
        );
        assert_eq!(error_of("prompt", json!({})).pointer, "/target_model");
        assert_eq!(
            error_of("prompt", json!({ "target_model": "m", "temperature": 2.5 })).pointer,
            "/temperature"
        );
        assert_eq!(
            error_of("prompt", json!({ "target_model": "m", "temperature": -0.1 })).pointer,
            "/temperature"
        );
        assert_eq!(
            error_of("prompt", json!({ "target_model": "m", "input_schema": "string" })).pointer,
            "/input_schema"
        );
        assert_eq!(
            error_of("prompt", json!({ "target_model": "m", "variables": [1] })).pointer,
            "/variables/0"
        );
    }

    #[test]
    fn prompt_schemas_must_be_valid_json_schemas() {
        let error = error_of(
            "prompt",
            json!({ "target_model": "m", "output_schema": { "properties": { "a": { "type": "strng" } } } }),
        );
        assert!(error.pointer.starts_with("/output_schema"), "{}", error.pointer);
        assert!(
            error.message.starts_with("not a valid JSON Schema"),
            "{}",
            error.message
        );
        // A custom meta-schema cannot be fetched, so it is accepted as it is.
        let custom = json!({ "target_model": "m", "input_schema": { "$schema": "https://schemas.example.com/meta", "type": "strng" } });
        assert_eq!(validator().validate("prompt", &custom), Ok(()));
    }

    #[test]
    fn skill_data_is_checked() {
        let valid = json!({
            "name": "retry-webhooks",
            "version": "1.2.0-rc.1+build.5",
            "description": "Retries failed webhook deliveries.",
            "dependencies": ["http-client", { "name": "backoff", "version": "^2" }, { "name": "jitter" }],
        });
        assert_eq!(validator().validate("skill", &valid), Ok(()));
        assert_eq!(error_of("skill", json!({ "version": "1.0.0" })).pointer, "/name");
        assert_eq!(error_of("skill", json!({ "name": "x" })).pointer, "/version");
        assert_eq!(
            error_of("skill", json!({ "name": "Retry Webhooks", "version": "1.0.0" })).pointer,
            "/name"
        );
        assert_eq!(
            error_of("skill", json!({ "name": "-x", "version": "1.0.0" })).pointer,
            "/name"
        );
        let long_name = "a".repeat(65);
        assert_eq!(
            error_of("skill", json!({ "name": long_name, "version": "1.0.0" })).pointer,
            "/name"
        );
        assert_eq!(
            error_of("skill", json!({ "name": "x", "version": "1.0" })).pointer,
            "/version"
        );
        assert_eq!(
            error_of("skill", json!({ "name": "x", "version": "v1.0.0" })).pointer,
            "/version"
        );
        assert_eq!(
            error_of(
                "skill",
                json!({ "name": "x", "version": "1.0.0", "dependencies": [{ "version": "1" }] })
            )
            .pointer,
            "/dependencies/0"
        );
        assert_eq!(
            error_of("skill", json!({ "name": "x", "version": "1.0.0", "dependencies": [3] })).pointer,
            "/dependencies/0"
        );
    }

    #[test]
    fn other_content_types_accept_any_object_only() {
        assert_eq!(validator().validate("procedure", &json!({})), Ok(()));
        assert_eq!(
            validator().validate("dataset", &json!({ "rows": [1, 2], "nested": { "x": null } })),
            Ok(())
        );
        for not_an_object in [json!([1, 2]), json!("text"), json!(3), json!(null), json!(true)] {
            let error = error_of("procedure", not_an_object.clone());
            assert_eq!(error.pointer, "");
            assert!(
                error.message.starts_with("structured_data must be a JSON object"),
                "{}",
                error.message
            );
            assert_eq!(error_of("code", not_an_object).pointer, "");
        }
    }

    #[test]
    fn content_types_match_without_case_or_padding() {
        assert_eq!(error_of(" Code ", json!({})).pointer, "/language");
        assert!(validator().schema_for("SKILL").is_some());
    }

    #[test]
    fn the_size_cap_is_64_kilobytes() {
        // `{"blob":"…"}` is 11 bytes around the string.
        let at_limit = json!({ "blob": "a".repeat(STRUCTURED_DATA_MAX_BYTES - 11) });
        assert_eq!(serialized_size(&at_limit), STRUCTURED_DATA_MAX_BYTES);
        assert_eq!(validator().validate("note", &at_limit), Ok(()));
        let over = json!({ "blob": "a".repeat(STRUCTURED_DATA_MAX_BYTES - 10) });
        let error = error_of("note", over);
        assert_eq!(error.pointer, "");
        assert!(error.message.contains("65536 bytes"), "{}", error.message);
        let large_array = json!(["a".repeat(STRUCTURED_DATA_MAX_BYTES)]);
        assert!(error_of("note", large_array).message.contains("limit"));
    }

    #[test]
    fn schemas_are_published_for_the_known_types_only() {
        for content_type in SCHEMA_CONTENT_TYPES {
            let schema = validator().schema_for(content_type).cloned().expect("a schema");
            assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
            assert_eq!(schema["type"], "object");
        }
        assert_eq!(validator().schema_for("procedure"), None);
    }

    #[test]
    fn errors_display_with_their_pointer() {
        let error = error_of("code", json!({}));
        assert!(
            error
                .to_string()
                .starts_with("structured_data/language: the property is required"),
            "{error}"
        );
    }

    #[test]
    fn the_validator_is_shareable() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<StructuredDataValidator>();
    }
}
