//! What the input schemas say beyond what schemars derives: the shape of the free-form JSON arguments, and no
//! integer or float `format` (clients warn about `uint32` and its kin; `minimum` and `maximum` say the range).
//!
//! The caps themselves are declared on the `*Input` types with schemars attributes that name the constants of
//! `service::limits`, the same constants validation enforces.

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use crate::service::limits;

/// Formats schemars writes for Rust's number types, which say nothing a client can use and make some warn.
const NUMERIC_FORMATS: [&str; 12] = [
    "int8", "int16", "int32", "int64", "int128", "uint8", "uint16", "uint32", "uint64", "uint128", "float", "double",
];

/// A container transform for every input type: drops numeric `format`s wherever schemars put them.
pub fn drop_numeric_formats(schema: &mut Schema) {
    if let Some(object) = schema.as_object_mut() {
        drop_formats_in(object);
    }
}

fn drop_formats_in(object: &mut serde_json::Map<String, Value>) {
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| NUMERIC_FORMATS.contains(&format))
    {
        object.remove("format");
    }
    for value in object.values_mut() {
        match value {
            Value::Object(inner) => drop_formats_in(inner),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        drop_formats_in(inner);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A `context` argument: scalar facets, at most [`limits::MAX_CONTEXT_FACETS`] of them, with short names and values;
/// the free-text `note` may be longer.
pub fn context_schema(_generator: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": ["object", "null"],
        "maxProperties": limits::MAX_CONTEXT_FACETS,
        "propertyNames": { "type": "string", "maxLength": limits::MAX_CONTEXT_FACET_NAME_CHARACTERS },
        "properties": {
            "note": {
                "type": "string",
                "maxLength": limits::MAX_CONTEXT_NOTE_CHARACTERS,
                "description": "Free text about the context; not part of the context key."
            }
        },
        // One `type` per branch rather than a `type` array, which single-type schema dialects (the OpenAPI subset
        // of Gemini function declarations) reject; the Inspector's --strict lint flags the array.
        "additionalProperties": {
            "anyOf": [
                { "type": "string", "maxLength": limits::MAX_CONTEXT_FACET_VALUE_CHARACTERS },
                { "type": "number" },
                { "type": "boolean" }
            ]
        }
    })
}

/// A free-form JSON object (metrics, configuration, observations), capped by its serialized size
/// ([`limits::MAX_AUXILIARY_OBJECT_BYTES`]), which a schema cannot express.
pub fn auxiliary_object_schema(_generator: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["object", "null"] })
}

/// `structured_data`: a JSON object of at most [`limits::MAX_STRUCTURED_DATA_BYTES`] serialized, validated against
/// the content type's schema where there is one.
pub fn structured_data_schema(_generator: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["object", "null"] })
}
