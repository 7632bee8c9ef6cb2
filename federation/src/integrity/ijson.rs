//! A strict parser for I-JSON (RFC 7493), the JSON subset RFC 8785 canonicalizes: what a signed object is read
//! with, so that the value a proof is checked over is the one every other implementation reads from the same bytes.
//!
//! Hand-written rather than serde_json's `from_slice` because serde_json silently keeps the last of duplicate
//! member names (a signer and a receiver could then see different documents behind one signature), cannot say
//! what a number's text was, and rounds long decimals only approximately unless a crate-wide feature is on.

use serde_json::{Map, Number, Value};

use super::{IntegrityError, MAX_DEPTH, MAX_SAFE_INTEGER};

/// Parses `bytes` as I-JSON (RFC 7493): one JSON text (RFC 8259) of any type, in UTF-8, with
///
/// - no duplicate member names in any object (compared after unescaping),
/// - no surrogates (a lone `\ud800`) and no Unicode noncharacters (U+FDD0–U+FDEF, U+xFFFE, U+xFFFF) in strings,
/// - numbers a double holds: integers within ±(2^53−1), decimals within the double range and not so small they
///   round to zero (decimals are read correctly rounded to the nearest double),
/// - no nesting deeper than [`MAX_DEPTH`] arrays and objects, so hostile input cannot exhaust the stack.
///
/// A byte order mark is refused: RFC 8259 forbids sending one.
pub fn parse_i_json(bytes: &[u8]) -> Result<Value, IntegrityError> {
    let text = std::str::from_utf8(bytes).map_err(|error| IntegrityError::NotIJson(format!("not UTF-8: {error}")))?;
    let mut parser = Parser { text, position: 0 };
    parser.skip_whitespace();
    let value = parser.value(0)?;
    parser.skip_whitespace();
    if parser.position != text.len() {
        return Err(parser.error("text after the JSON value"));
    }
    Ok(value)
}

struct Parser<'text> {
    text: &'text str,
    position: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> IntegrityError {
        IntegrityError::NotIJson(format!("{what} at byte {}", self.position))
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.position).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.position += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), IntegrityError> {
        if self.peek() == Some(byte) {
            self.position += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", char::from(byte))))
        }
    }

    /// A value whose enclosing arrays and objects number `depth`.
    fn value(&mut self, depth: usize) -> Result<Value, IntegrityError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected a JSON value")),
            None => Err(self.error("unexpected end of input")),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, IntegrityError> {
        if self.text[self.position..].starts_with(word) {
            self.position += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn enter(&self, depth: usize) -> Result<(), IntegrityError> {
        if depth > MAX_DEPTH {
            return Err(self.error(&format!("nested deeper than {MAX_DEPTH} arrays and objects")));
        }
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Result<Value, IntegrityError> {
        self.enter(depth)?;
        self.expect(b'{')?;
        let mut members = Map::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.position += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            let name_at = self.position;
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member name"));
            }
            let name = self.string()?;
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            let member = self.value(depth)?;
            // One lookup for the check and the insert: a name seen before is refused, whatever its value holds.
            match members.entry(name) {
                serde_json::map::Entry::Vacant(vacant) => {
                    vacant.insert(member);
                }
                serde_json::map::Entry::Occupied(occupied) => {
                    return Err(IntegrityError::NotIJson(format!(
                        "duplicate member name {:?} at byte {name_at}",
                        occupied.key()
                    )));
                }
            }
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.position += 1,
                Some(b'}') => {
                    self.position += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, IntegrityError> {
        self.enter(depth)?;
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.position += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.value(depth)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.position += 1,
                Some(b']') => {
                    self.position += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn string(&mut self) -> Result<String, IntegrityError> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            // Copy the run up to the next quote, backslash or control: those are ASCII, so the run ends on a
            // character boundary of the (already validated) UTF-8.
            let run_start = self.position;
            let rest = &self.text.as_bytes()[run_start..];
            self.position += rest
                .iter()
                .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)
                .unwrap_or(rest.len());
            let run = &self.text[run_start..self.position];
            // Every noncharacter (U+FDD0–U+FDEF, U+xFFFE, U+xFFFF) starts with a UTF-8 byte of 0xEF or above, so a run
            // without one (nearly every run) needs no decoding.
            if run.bytes().any(|byte| byte >= 0xEF)
                && let Some(character) = run.chars().find(|character| is_noncharacter(*character))
            {
                return Err(self.error(&format!("the noncharacter U+{:04X} in a string", character as u32)));
            }
            if out.is_empty() && self.peek() == Some(b'"') {
                // The whole string in one run (no escapes): one allocation of its exact length.
                self.position += 1;
                return Ok(run.to_owned());
            }
            out.push_str(run);
            match self.peek() {
                Some(b'"') => {
                    self.position += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.position += 1;
                    let character = self.escape()?;
                    out.push(character);
                }
                Some(_) => return Err(self.error("an unescaped control character in a string")),
                None => return Err(self.error("an unterminated string")),
            }
        }
    }

    /// The character of the escape after a backslash.
    fn escape(&mut self) -> Result<char, IntegrityError> {
        let Some(byte) = self.peek() else {
            return Err(self.error("an unterminated string"));
        };
        self.position += 1;
        let character = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                let code_point = match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate counts only as the first half of a `\uXXXX\uXXXX` pair.
                        if !self.text[self.position..].starts_with("\\u") {
                            return Err(self.error("a lone surrogate escape"));
                        }
                        self.position += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.error("a lone surrogate escape"));
                        }
                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(self.error("a lone surrogate escape")),
                    other => other,
                };
                char::from_u32(code_point).ok_or_else(|| self.error("an invalid escape"))?
            }
            _ => return Err(self.error("an invalid escape")),
        };
        if is_noncharacter(character) {
            return Err(self.error(&format!("the noncharacter U+{:04X} in a string", character as u32)));
        }
        Ok(character)
    }

    fn hex4(&mut self) -> Result<u32, IntegrityError> {
        let digits = self
            .text
            .get(self.position..self.position + 4)
            .filter(|digits| digits.bytes().all(|byte| byte.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("expected four hex digits after `\\u`"))?;
        self.position += 4;
        u32::from_str_radix(digits, 16).map_err(|_| self.error("expected four hex digits after `\\u`"))
    }

    fn number(&mut self) -> Result<Value, IntegrityError> {
        let start = self.position;
        if self.peek() == Some(b'-') {
            self.position += 1;
        }
        match self.peek() {
            Some(b'0') => self.position += 1,
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(self.error("expected a digit")),
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.position += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit after `.`"));
            }
            self.skip_digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integer = false;
            self.position += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.position += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit in the exponent"));
            }
            self.skip_digits();
        }
        let text = &self.text[start..self.position];
        if integer {
            // RFC 7493 §2.2: beyond ±(2^53−1) a receiver cannot count on the exact integer.
            return text
                .parse::<i64>()
                .ok()
                .filter(|value| value.unsigned_abs() <= MAX_SAFE_INTEGER)
                .map(|value| Value::Number(value.into()))
                .ok_or_else(|| {
                    IntegrityError::NotIJson(format!("the integer {text} at byte {start} is beyond ±(2^53−1)"))
                });
        }
        // Rust's float parsing rounds correctly, as JavaScript's and every conforming parser's does.
        let value: f64 = text.parse().map_err(|_| self.error("an invalid number"))?;
        if value.is_infinite() {
            return Err(IntegrityError::NotIJson(format!(
                "the number {text} at byte {start} is beyond the range of a double"
            )));
        }
        let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
        if value == 0.0 && mantissa.bytes().any(|byte| matches!(byte, b'1'..=b'9')) {
            return Err(IntegrityError::NotIJson(format!(
                "the number {text} at byte {start} is too small for a double"
            )));
        }
        Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| self.error("an invalid number"))
    }

    fn skip_digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.position += 1;
        }
    }
}

/// RFC 7493 §2.1 forbids Unicode noncharacters: U+FDD0 to U+FDEF and the last two code points of every plane.
fn is_noncharacter(character: char) -> bool {
    let code_point = character as u32;
    (0xFDD0..=0xFDEF).contains(&code_point) || code_point & 0xFFFE == 0xFFFE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        matches!(parse_i_json(text.as_bytes()), Err(IntegrityError::NotIJson(_)))
    }

    #[test]
    fn json_grammar_is_enforced() {
        for text in [
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "tru",
            "nul",
            "'a'",
            "\"a",
            "[1 2]",
            "{\"a\" 1}",
            "{1:2}",
            "\u{feff}{}",
            "\"\t\"",
            "\"\\x\"",
            "\"\\u12\"",
            "NaN",
            "Infinity",
            "-",
            "1 2",
        ] {
            assert!(refused(text), "{text:?} should be refused");
        }
        for text in [
            "0",
            "-0",
            "1.5e3",
            "1E-3",
            "\"\"",
            "[]",
            "{}",
            " [ true , false , null ] ",
            "\"\\/\"",
        ] {
            assert!(parse_i_json(text.as_bytes()).is_ok(), "{text:?} should be accepted");
        }
    }

    #[test]
    fn escapes_decode_and_pairs_join() {
        let value = parse_i_json(br#""\ud83d\ude00 \u00e9 \"\\\/\b\f\n\r\t""#).expect("valid escapes");
        assert_eq!(value, Value::String("😀 é \"\\/\u{8}\u{c}\n\r\t".to_owned()));
    }

    #[test]
    fn surrogates_and_noncharacters_are_refused() {
        for text in [
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\ud800x""#,
            r#""\ufdd0""#,
            r#""\uffff""#,
            r#""\ud83f\udffe""#,
            "\"\u{fdef}\"",
            "\"\u{10ffff}\"",
            // Written out after plain text, after an escape, in a member name, in a plane's last pair.
            "\"plain text \u{fdd0}\"",
            "\"line\\n\u{ffff} after an escape\"",
            "{\"name \u{fffe}\":1}",
            "\"\u{1fffe}\"",
        ] {
            assert!(refused(text), "{text:?} should be refused");
        }
        assert!(parse_i_json(b"\"\\ufdcf \\ufdf0 \\ufffd\"").is_ok());
        // Characters next to the noncharacters, written out, are text like any other.
        let neighbours = "\"\u{fdcf}\u{fdf0}\u{fffd}\u{ef00}\u{1fffd}\u{10fffd} caf\u{e9}\"";
        assert_eq!(
            parse_i_json(neighbours.as_bytes()).expect("I-JSON"),
            Value::String(neighbours.trim_matches('"').to_owned())
        );
    }

    #[test]
    fn numbers_must_fit_a_double() {
        assert!(parse_i_json(b"9007199254740991").is_ok());
        assert!(parse_i_json(b"-9007199254740991").is_ok());
        assert!(refused("9007199254740992"));
        assert!(refused("-9007199254740992"));
        assert!(refused("123456789012345678901234567890"));
        assert!(refused("1e400"));
        assert!(refused("-1e400"));
        assert!(refused("1e-400"));
        assert!(parse_i_json(b"0e-400").is_ok());
        assert!(parse_i_json(b"0.000e5").is_ok());
        assert!(parse_i_json(b"1e300").is_ok());
        assert!(parse_i_json(b"5e-324").is_ok());
    }

    #[test]
    fn long_decimals_round_to_the_nearest_double() {
        let bits = |text: &str| {
            parse_i_json(text.as_bytes())
                .ok()
                .and_then(|value| value.as_f64())
                .map(f64::to_bits)
        };
        // Halfway between 2^53 and 2^53 + 2: ties go to the even mantissa; one digit further decides otherwise.
        assert_eq!(bits("9007199254740993.0"), Some(0x4340_0000_0000_0000));
        assert_eq!(
            bits("9007199254740993.00000000000000000001"),
            Some(0x4340_0000_0000_0001)
        );
        assert_eq!(
            bits("9007199254740992.99999999999999999999"),
            Some(0x4340_0000_0000_0000)
        );
        assert_eq!(bits("2.2250738585072011e-308"), Some(0x000f_ffff_ffff_ffff));
        assert_eq!(bits("333333333.33333329"), Some(0x41b3_de43_5555_5555));
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse_i_json(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(refused(&deep));
        let objects = format!("{}1{}", "{\"a\":".repeat(MAX_DEPTH + 1), "}".repeat(MAX_DEPTH + 1));
        assert!(refused(&objects));
        // Far beyond the limit, the parser stops before the stack does.
        let hostile = "[".repeat(1_000_000);
        assert!(refused(&hostile));
    }

    #[test]
    fn duplicates_are_found_after_unescaping() {
        assert!(refused(r#"{"a":1,"a":2}"#));
        assert!(refused(r#"{"a":1,"\u0061":2}"#));
        assert!(refused(r#"{"x":[{"b":1,"c":2,"b":3}]}"#));
        // The second value is read before the name is found taken; the document is refused all the same.
        assert!(matches!(
            parse_i_json(br#"{"a":1,"a":{"deep":[1,2]}}"#),
            Err(IntegrityError::NotIJson(reason)) if reason.contains("duplicate member name \"a\" at byte 7")
        ));
        assert!(parse_i_json(br#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#).is_ok());
    }
}
