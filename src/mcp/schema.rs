//! Tool input and output schemas as strict clients read them: every property typed, no vendor number formats, no type
//! unions for fields that are only ever absent, and a second form for the error result.
//!
//! Why the error form: TypeScript SDK 1.x clients (and the MCP Inspector built on them) validate
//! `structuredContent` against the tool's `outputSchema` even when `isError` is true. A schema that only
//! describes the success shape turns every tool error into "Structured content does not match the tool's output
//! schema" and the agent never sees `not_found` or `retry_after`. So each schema accepts either the success
//! object or `{ "error": { code, message, details } }`, and Python SDK clients keep the structured error.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

/// The output schema of a tool whose successful result is `Output`: the serialized shape made portable, plus the
/// error form (see the module documentation).
pub fn tool_output_schema<Output: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    let mut schema = schema_for_output::<Output>().as_ref().clone();
    make_portable(&mut schema);
    type_references(&mut schema);
    add_error_form(&mut schema);
    Arc::new(schema)
}

/// The input schema of a tool taking `Input`, made portable like the output schemas: optional fields are a single
/// type (a client omits them; the server still takes an explicit `null` as absent), `$ref`s carry their type, and
/// no vendor number formats.
pub fn tool_input_schema<Input: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    let mut schema = schema_for_type::<Input>().as_ref().clone();
    make_portable(&mut schema);
    type_references(&mut schema);
    Arc::new(schema)
}

/// The schema of the spec's error object (§10), as every failed tool call carries it in `structuredContent`.
pub fn error_object_schema() -> Value {
    json!({
        "type": "object",
        "description": "Present instead of the result when the call failed (isError true).",
        "properties": {
            "code": {
                "type": "string",
                "description": "unauthenticated, not_found, invalid_target, validation_failed, self_review, not_author, \
    idempotency_conflict, forbidden_scope, rate_limited, content_rejected or internal_error."
            },
            "message": { "type": "string", "description": "What went wrong, for people and models." },
            "details": {
                "type": "object",
                "additionalProperties": true,
                "description": "Structured details, e.g. field (the offending input), retry_after (seconds, for \
    rate_limited), id (the ID that was not found)."
            }
        },
        "required": ["code", "message", "details"]
    })
}

/// Rewrites every subschema the way strict clients want it:
/// - numbers and integers lose schemars' `format` (`uint32`, `int32`, `double`, …), which JSON Schema does not
///   define and ajv-based clients warn about on every call; integer formats become `minimum`/`maximum`;
/// - an optional property (not `required`) loses the `null` of its type: the serializer skips absent fields, so
///   `null` is never sent, and a `type` array is a portability warning in the Inspector's lint.
fn make_portable(schema: &mut Map<String, Value>) {
    if let Some(Value::String(format)) = schema.get("format")
        && let Some(number_format) = number_format(format)
    {
        schema.remove("format");
        if let NumberFormat::Integer { minimum, maximum } = number_format {
            schema.entry("minimum").or_insert(minimum);
            schema.entry("maximum").or_insert(maximum);
        }
    }
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if let Value::Object(property) = property
                && !required.contains(name)
            {
                drop_null(property);
            }
        }
    }
    for keyword in ["properties", "$defs", "patternProperties"] {
        if let Some(Value::Object(map)) = schema.get_mut(keyword) {
            for subschema in map.values_mut() {
                if let Value::Object(subschema) = subschema {
                    make_portable(subschema);
                }
            }
        }
    }
    for keyword in ["items", "additionalProperties", "not"] {
        if let Some(Value::Object(subschema)) = schema.get_mut(keyword) {
            make_portable(subschema);
        }
    }
    for keyword in ["anyOf", "oneOf", "allOf", "prefixItems", "items"] {
        if let Some(Value::Array(list)) = schema.get_mut(keyword) {
            for subschema in list {
                if let Value::Object(subschema) = subschema {
                    make_portable(subschema);
                }
            }
        }
    }
}

/// A number format schemars writes.
enum NumberFormat {
    /// An integer type, with its range.
    Integer { minimum: Value, maximum: Value },
    /// A floating-point type.
    Float,
}

fn number_format(format: &str) -> Option<NumberFormat> {
    let (minimum, maximum) = match format {
        "uint8" => (json!(0), json!(u8::MAX)),
        "uint16" => (json!(0), json!(u16::MAX)),
        "uint32" => (json!(0), json!(u32::MAX)),
        "uint64" | "uint" => (json!(0), json!(u64::MAX)),
        "int8" => (json!(i8::MIN), json!(i8::MAX)),
        "int16" => (json!(i16::MIN), json!(i16::MAX)),
        "int32" => (json!(i32::MIN), json!(i32::MAX)),
        "int64" | "int" => (json!(i64::MIN), json!(i64::MAX)),
        "float" | "double" => return Some(NumberFormat::Float),
        _ => return None,
    };
    Some(NumberFormat::Integer { minimum, maximum })
}

/// Removes `null` from an optional property: `["string", "null"]` becomes `"string"`, and
/// `anyOf: [X, { "type": "null" }]` (schemars' spelling of an optional struct) becomes X.
fn drop_null(property: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = property.get_mut("type") {
        types.retain(|name| name != "null");
        if types.len() == 1 {
            let single = types.remove(0);
            property.insert("type".to_owned(), single);
        }
    }
    let Some(Value::Array(branches)) = property.get("anyOf") else {
        return;
    };
    let is_null = |branch: &Value| branch.get("type") == Some(&json!("null"));
    if branches.len() == 2
        && let Some(kept) = branches.iter().find(|branch| !is_null(branch))
        && branches.iter().any(is_null)
        && let Value::Object(kept) = kept.clone()
    {
        property.remove("anyOf");
        for (keyword, value) in kept {
            property.entry(keyword).or_insert(value);
        }
    }
}

/// Gives every `$ref` to a local definition the `type` of that definition, so a client that checks "every
/// property has a type" without resolving references is satisfied; the two always agree.
fn type_references(root: &mut Map<String, Value>) {
    let definition_types: Map<String, Value> = root
        .get("$defs")
        .and_then(Value::as_object)
        .map(|definitions| {
            definitions
                .iter()
                .filter_map(|(name, definition)| Some((format!("#/$defs/{name}"), definition.get("type")?.clone())))
                .collect()
        })
        .unwrap_or_default();
    add_reference_types(root, &definition_types);
}

fn add_reference_types(schema: &mut Map<String, Value>, definition_types: &Map<String, Value>) {
    if let Some(Value::String(reference)) = schema.get("$ref")
        && !schema.contains_key("type")
        && let Some(definition_type) = definition_types.get(reference)
    {
        schema.insert("type".to_owned(), definition_type.clone());
    }
    for value in schema.values_mut() {
        match value {
            Value::Object(subschema) => add_reference_types(subschema, definition_types),
            Value::Array(list) => {
                for item in list {
                    if let Value::Object(subschema) = item {
                        add_reference_types(subschema, definition_types);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Adds the `error` property and moves the success shape's `required` into the first of two `anyOf` branches,
/// so a result validates when it is either the success object or the error object.
fn add_error_form(root: &mut Map<String, Value>) {
    let success_required = root.remove("required").unwrap_or_else(|| json!([]));
    let properties = root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        properties.insert("error".to_owned(), error_object_schema());
    }
    root.insert(
        "anyOf".to_owned(),
        json!([
            { "type": "object", "description": "The result of a successful call.", "required": success_required },
            { "type": "object", "description": "A failed call (isError true).", "required": ["error"] }
        ]),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, JsonSchema)]
    struct Inner {
        count: u32,
    }

    #[derive(serde::Serialize, JsonSchema)]
    struct Sample {
        value: f64,
        number: i32,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        inner: Option<Inner>,
        always: Inner,
    }

    #[test]
    fn formats_become_bounds_and_optional_fields_lose_null() {
        let schema = tool_output_schema::<Sample>();
        let text = serde_json::to_string(schema.as_ref()).expect("serializable");
        assert!(!text.contains("\"format\""), "{text}");
        assert!(!text.contains("null"), "{text}");
        assert_eq!(schema["properties"]["number"]["minimum"], json!(i32::MIN));
        assert_eq!(schema["properties"]["number"]["maximum"], json!(i32::MAX));
        assert_eq!(
            schema["$defs"]["Inner"]["properties"]["count"]["maximum"],
            json!(u32::MAX)
        );
        assert_eq!(schema["properties"]["note"]["type"], "string");
        assert_eq!(schema["properties"]["inner"]["$ref"], "#/$defs/Inner");
        assert_eq!(schema["properties"]["inner"]["type"], "object");
        assert_eq!(schema["properties"]["always"]["type"], "object");
        assert!(schema.get("required").is_none());
        assert_eq!(schema["anyOf"][0]["required"], json!(["value", "number", "always"]));
        assert_eq!(schema["anyOf"][1]["required"], json!(["error"]));
    }

    #[test]
    fn success_and_error_results_validate_and_other_shapes_do_not() {
        let schema = Value::Object(tool_output_schema::<Sample>().as_ref().clone());
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let success = json!({ "value": 0.5, "number": 3, "always": { "count": 1 }, "note": "n" });
        assert!(validator.is_valid(&success));
        let error = json!({ "error": { "code": "not_found", "message": "no such object", "details": { "id": "x" } } });
        assert!(validator.is_valid(&error));
        assert!(
            !validator.is_valid(&json!({ "value": 0.5 })),
            "a partial success is refused"
        );
        assert!(
            !validator.is_valid(&json!({ "error": { "code": "not_found" } })),
            "an error needs its message"
        );
        assert!(!validator.is_valid(&json!({ "value": 0.5, "number": 3, "always": { "count": 1 }, "note": null })));
    }
}
