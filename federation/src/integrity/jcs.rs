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
    let mut out = Vec::new();
    write_value(value, 0, &mut out)?;
    Ok(out)
}

/// The canonical bytes of the object with `members`, without building a `Value` for it.
pub(super) fn canonicalize_members(members: &Map<String, Value>) -> Result<Vec<u8>, IntegrityError> {
    let mut out = Vec::new();
    write_object(members, 0, &mut out)?;
    Ok(out)
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
        Value::Object(members) => write_object(members, depth, out)?,
    }
    Ok(())
}

fn write_object(members: &Map<String, Value>, depth: usize, out: &mut Vec<u8>) -> Result<(), IntegrityError> {
    check_depth(depth + 1)?;
    let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
    // RFC 8785 §3.2.3: by UTF-16 code units, not by code points or UTF-8 bytes (they disagree above U+FFFF:
    // "😀" sorts before "דּ" (U+FB33) in UTF-16, after it in UTF-8).
    sorted.sort_by(|(left, _), (right, _)| left.encode_utf16().cmp(right.encode_utf16()));
    out.push(b'{');
    for (index, (name, member)) in sorted.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_string(name, out);
        out.push(b':');
        write_value(member, depth + 1, out)?;
    }
    out.push(b'}');
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
/// and the rest as `\u00xx` in lower case; everything else is written as its UTF-8.
fn write_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for character in text.chars() {
        match character {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\r' => out.extend_from_slice(b"\\r"),
            control if (control as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", control as u32).as_bytes());
            }
            other => {
                let mut buffer = [0; 4];
                out.extend_from_slice(other.encode_utf8(&mut buffer).as_bytes());
            }
        }
    }
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
    fn nesting_is_bounded() {
        let mut value = Value::Null;
        for _ in 0..MAX_DEPTH {
            value = Value::Array(vec![value]);
        }
        assert!(canonicalize(&value).is_ok());
        assert!(canonicalize(&Value::Array(vec![value])).is_err());
    }
}
