//! RFC 8785 JSON Canonicalization Scheme (JCS): the one byte string a JSON value signs as, whatever whitespace,
//! member order or escapes the sender used.
//!
//! Written here rather than taken from a crate so that every rule is in view: members sorted by UTF-16 code units
//! (§3.2.3), numbers laid out as ECMAScript's Number::toString does (§3.2.2.3, with Ryū for the digits), strings
//! with the minimal escapes of §3.2.2.2. The tests check it against the RFC's examples and its Appendix B, and
//! against Node's `String(number)`.

use serde_json::{Map, Number, Value};

use super::{IntegrityError, MAX_DEPTH, MAX_SAFE_INTEGER};

/// The RFC 8785 canonical bytes (UTF-8) of `value`.
///
/// Refused: integers beyond ±(2^53−1) (a double cannot hold them exactly, so two different documents would
/// canonicalize alike and one's signature would cover the other) and nesting deeper than [`MAX_DEPTH`].
pub fn canonicalize(value: &Value) -> Result<Vec<u8>, IntegrityError> {
    let mut out = Vec::with_capacity(1024);
    write_value(value, 0, &mut out)?;
    Ok(out)
}

/// The canonical bytes of the object with `members`, leaving out the member named `left_out` (a proof, or a proof's
/// `proofValue`): what a copy of the object without that member would canonicalize to, without the copy.
pub(super) fn canonicalize_members_without(
    members: &Map<String, Value>,
    left_out: &str,
) -> Result<Vec<u8>, IntegrityError> {
    let mut out = Vec::with_capacity(1024);
    write_object(members, Some(left_out), 0, &mut out)?;
    Ok(out)
}

/// The canonical bytes of the object with `members`, and where in them its member `name` lies: the byte range of
/// `"name":value` with the comma that parts it from a neighbour, so that the bytes outside the range are the
/// canonical bytes of the object without that member. `None` when it has no such member. One walk serves a proof's
/// check (the object without its proof) and what a receiver stores (the object with it).
pub(super) fn canonicalize_locating(
    members: &Map<String, Value>,
    name: &str,
) -> Result<(Vec<u8>, Option<std::ops::Range<usize>>), IntegrityError> {
    let mut out = Vec::with_capacity(1024);
    let mut located = None;
    write_members(members, None, Some((name, &mut located)), 0, &mut out)?;
    Ok((out, located))
}

/// ECMAScript's Number::toString of `value`, the form RFC 8785 gives every JSON number: shortest digits that read
/// back as the same double, plain notation from 1e-6 up to below 1e21, exponent notation (`1e+21`, `5e-324`)
/// outside, `-0` as `0`. NaN and the infinities have no JSON form and are refused.
pub fn canonical_number(value: f64) -> Result<String, IntegrityError> {
    if !value.is_finite() {
        return Err(IntegrityError::Canonicalization(format!(
            "{value} is not a JSON number"
        )));
    }
    if value == 0.0 {
        return Ok("0".to_owned());
    }
    // Ryū prints the shortest digits that read back as the same double, the closest of them and, between two
    // equally close, the even one: exactly ECMAScript's choice of digits. (Rust's own `{:e}` rounds such ties up:
    // 1424953923781206.25 becomes …206.3 where ECMAScript and RFC 8785 Appendix B want …206.2.) Only its layout
    // differs from ECMAScript's, so it is read back into digits and a decimal exponent.
    let mut buffer = ryu::Buffer::new();
    let (digits, n) = digits_and_exponent(buffer.format_finite(value.abs()))?;
    // ECMAScript's names: the value is 0.d₁d₂…d_k × 10^n.
    let k = digits.len() as i32;
    let mut text = String::with_capacity(k as usize + 8);
    if value < 0.0 {
        text.push('-');
    }
    if k <= n && n <= 21 {
        text.push_str(&digits);
        text.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (integer, fraction) = digits.split_at(n as usize);
        text.push_str(integer);
        text.push('.');
        text.push_str(fraction);
    } else if -6 < n && n <= 0 {
        text.push_str("0.");
        text.extend(std::iter::repeat_n('0', (-n) as usize));
        text.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        text.push_str(first);
        if !rest.is_empty() {
            text.push('.');
            text.push_str(rest);
        }
        text.push('e');
        text.push(if n - 1 < 0 { '-' } else { '+' });
        text.push_str(&(n - 1).abs().to_string());
    }
    Ok(text)
}

/// The significant digits of a plain or exponent-form decimal (`1424953923781206.2`, `1e-7`, `123.0`) and `n`
/// such that its value is 0.digits × 10^n.
fn digits_and_exponent(text: &str) -> Result<(String, i32), IntegrityError> {
    let malformed = || IntegrityError::Canonicalization(format!("unexpected float format {text}"));
    let (mantissa, exponent) = match text.split_once('e') {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().map_err(|_| malformed())?),
        None => (text, 0),
    };
    let (integer, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !integer
        .bytes()
        .chain(fraction.bytes())
        .all(|byte| byte.is_ascii_digit())
    {
        return Err(malformed());
    }
    let all: String = [integer, fraction].concat();
    let significant = all.trim_start_matches('0');
    let leading_zeros = (all.len() - significant.len()) as i32;
    let digits = significant.trim_end_matches('0').to_owned();
    if digits.is_empty() {
        return Err(malformed());
    }
    Ok((digits, integer.len() as i32 + exponent - leading_zeros))
}

fn write_value(value: &Value, depth: usize, out: &mut Vec<u8>) -> Result<(), IntegrityError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => out.extend_from_slice(number_text(number)?.as_bytes()),
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            check_depth(depth + 1)?;
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_value(item, depth + 1, out)?;
            }
            out.push(b']');
        }
        Value::Object(members) => write_object(members, None, depth, out)?,
    }
    Ok(())
}

fn write_object(
    members: &Map<String, Value>,
    left_out: Option<&str>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), IntegrityError> {
    write_members(members, left_out, None, depth, out)
}

/// An object's members, sorted, leaving out `left_out` and recording where `locate`'s member lies.
fn write_members(
    members: &Map<String, Value>,
    left_out: Option<&str>,
    locate: Option<(&str, &mut Option<std::ops::Range<usize>>)>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), IntegrityError> {
    check_depth(depth + 1)?;
    let mut sorted: Vec<(&String, &Value)> = members
        .iter()
        .filter(|(name, _)| Some(name.as_str()) != left_out)
        .collect();
    // RFC 8785 §3.2.3: by UTF-16 code units, not by code points or UTF-8 bytes. The two orders disagree only where
    // a name holds a character from U+E000 on (UTF-8 lead byte 0xEE or above): "😀" sorts before "דּ" (U+FB33) in
    // UTF-16, after it in UTF-8. Names without one (every name a federated object uses) compare as bytes.
    if sorted.iter().any(|(name, _)| name.bytes().any(|byte| byte >= 0xEE)) {
        sorted.sort_unstable_by(|(left, _), (right, _)| left.encode_utf16().cmp(right.encode_utf16()));
    } else {
        sorted.sort_unstable_by(|(left, _), (right, _)| left.as_bytes().cmp(right.as_bytes()));
    }
    let count = sorted.len();
    let (located_name, located) = match locate {
        Some((name, located)) => (Some(name), Some(located)),
        None => (None, None),
    };
    let mut span = None;
    out.push(b'{');
    for (index, (name, member)) in sorted.into_iter().enumerate() {
        let start = out.len();
        if index > 0 {
            out.push(b',');
        }
        write_string(name, out);
        out.push(b':');
        write_value(member, depth + 1, out)?;
        if Some(name.as_str()) == located_name {
            // A first member takes the comma after it; any other the comma before it.
            let end = if index == 0 && count > 1 {
                out.len() + 1
            } else {
                out.len()
            };
            span = Some(start..end);
        }
    }
    out.push(b'}');
    if let Some(located) = located {
        *located = span;
    }
    Ok(())
}

fn check_depth(depth: usize) -> Result<(), IntegrityError> {
    if depth > MAX_DEPTH {
        return Err(IntegrityError::Canonicalization(format!(
            "nested deeper than {MAX_DEPTH} arrays and objects"
        )));
    }
    Ok(())
}

fn number_text(number: &Number) -> Result<String, IntegrityError> {
    // Integers first: an i64 or u64 is only a JSON number's value if a double holds it exactly.
    if let Some(integer) = number.as_i64() {
        if integer.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err(beyond_safe_range(number));
        }
        return Ok(integer.to_string());
    }
    if number.is_u64() {
        return Err(beyond_safe_range(number));
    }
    let float = number
        .as_f64()
        .ok_or_else(|| IntegrityError::Canonicalization(format!("{number} is not a double")))?;
    canonical_number(float)
}

fn beyond_safe_range(number: &Number) -> IntegrityError {
    IntegrityError::Canonicalization(format!(
        "the integer {number} is beyond ±(2^53−1), which a double holds exactly"
    ))
}

/// RFC 8785 §3.2.2.2: only `"`, `\` and the C0 controls are escaped, the controls that have a short form with it
/// and the rest as `\u00xx` in lower case; everything else is written as its UTF-8. Runs of bytes that need no
/// escape are copied whole (every byte of a multi-byte character is 0x80 or above, so they are never escaped).
fn write_string(text: &str, out: &mut Vec<u8>) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut run_start = 0;
    for (position, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            control if control < 0x20 => {
                out.extend_from_slice(&bytes[run_start..position]);
                run_start = position + 1;
                out.extend_from_slice(format!("\\u{control:04x}").as_bytes());
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[run_start..position]);
        out.extend_from_slice(escape);
        run_start = position + 1;
    }
    out.extend_from_slice(&bytes[run_start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_switch_where_ecmascript_switches_them() {
        let cases = [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123e18, "123000000000000000000"),
            (1.5e21, "1.5e+21"),
            (1e-6, "0.000001"),
            (1.25e-6, "0.00000125"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (0.5, "0.5"),
            (-0.0, "0"),
            (-2.5, "-2.5"),
            (100.0, "100"),
        ];
        for (value, expected) in cases {
            assert_eq!(canonical_number(value).as_deref(), Ok(expected), "{value:e}");
        }
    }

    #[test]
    fn non_finite_numbers_and_unsafe_integers_are_refused() {
        assert!(canonical_number(f64::NAN).is_err());
        assert!(canonical_number(f64::INFINITY).is_err());
        assert!(canonical_number(f64::NEG_INFINITY).is_err());
        assert!(canonicalize(&Value::from(9_007_199_254_740_991_i64)).is_ok());
        assert!(canonicalize(&Value::from(-9_007_199_254_740_991_i64)).is_ok());
        assert!(canonicalize(&Value::from(9_007_199_254_740_992_i64)).is_err());
        assert!(canonicalize(&Value::from(-9_007_199_254_740_992_i64)).is_err());
        assert!(canonicalize(&Value::from(u64::MAX)).is_err());
    }

    #[test]
    fn controls_are_escaped_minimally() {
        let text: String = (0_u8..0x20).map(char::from).chain(['\u{7f}', '/', 'é']).collect();
        let canonical = canonicalize(&Value::String(text)).expect("a string canonicalizes");
        assert_eq!(
            String::from_utf8(canonical).expect("UTF-8"),
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\
             \\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\
             \\u001e\\u001f\u{7f}/é\""
        );
    }

    #[test]
    fn the_bytes_outside_a_located_member_are_the_object_without_it() {
        let object = serde_json::json!({
            "a": 1, "proof": {"z": [1, "x\n"], "b": null}, "z": "last", "\u{1F600}": "astral", "\u{FB33}": "bmp"
        });
        let members = object.as_object().expect("an object");
        for name in ["a", "proof", "z", "\u{1F600}", "\u{FB33}", "absent"] {
            let (whole, span) = canonicalize_locating(members, name).expect("canonicalizes");
            assert_eq!(whole, canonicalize(&object).expect("canonicalizes"));
            let without = canonicalize_members_without(members, name).expect("canonicalizes");
            match span {
                Some(span) => {
                    let outside = [&whole[..span.start], &whole[span.end..]].concat();
                    assert_eq!(String::from_utf8(outside), String::from_utf8(without), "{name}");
                }
                None => assert_eq!(name, "absent"),
            }
        }
        let alone = serde_json::json!({"proof": {}});
        let (whole, span) =
            canonicalize_locating(alone.as_object().expect("an object"), "proof").expect("canonicalizes");
        let span = span.expect("located");
        assert_eq!([&whole[..span.start], &whole[span.end..]].concat(), b"{}");
    }

    #[test]
    fn strings_mixing_escapes_and_multibyte_characters_keep_every_byte() {
        let text = "a\"b\\c\u{1}d\u{e9}\u{1F600}\n\u{1f}end";
        let canonical = canonicalize(&Value::String(text.to_owned())).expect("a string canonicalizes");
        assert_eq!(
            String::from_utf8(canonical).expect("UTF-8"),
            "\"a\\\"b\\\\c\\u0001d\u{e9}\u{1F600}\\n\\u001fend\""
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let mut value = Value::Null;
        for _ in 0..MAX_DEPTH {
            value = Value::Array(vec![value]);
        }
        assert!(canonicalize(&value).is_ok());
        assert!(canonicalize(&Value::Array(vec![value])).is_err());
    }
}
