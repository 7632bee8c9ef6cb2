//! Pages of the admin listings (the audit log, content): a page size within bounds, a time range, and an opaque
//! cursor that names the last record of the previous page, so the next page starts right after it however many
//! records arrive meanwhile.

use base64::Engine;
use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};

use super::ServiceError;

/// Records a page holds unless the caller asks for another number.
pub const DEFAULT_PAGE_SIZE: u32 = 50;

/// Records a page holds at most.
pub const MAX_PAGE_SIZE: u32 = 500;

/// The page size asked for, or the default; `validation_failed` outside 1 to [`MAX_PAGE_SIZE`].
pub fn page_size(limit: Option<u32>) -> Result<u32, ServiceError> {
    match limit {
        None => Ok(DEFAULT_PAGE_SIZE),
        Some(limit) if (1..=MAX_PAGE_SIZE).contains(&limit) => Ok(limit),
        Some(_) => Err(ServiceError::validation(
            "limit",
            format!("limit must be between 1 and {MAX_PAGE_SIZE}"),
        )),
    }
}

/// The cursor after a record listed newest first: its time and its ID. Not signed: it only says where a listing the
/// admin may read whole continues.
pub fn encode_cursor(at: DateTime<Utc>, id: &str) -> String {
    let text = format!("{}|{id}", at.to_rfc3339_opts(SecondsFormat::Nanos, true));
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

/// Reads a cursor made by [`encode_cursor`]; anything else is `validation_failed` on `cursor`.
pub fn decode_cursor(cursor: Option<&str>) -> Result<Option<(DateTime<Utc>, String)>, ServiceError> {
    let Some(cursor) = cursor.map(str::trim).filter(|cursor| !cursor.is_empty()) else {
        return Ok(None);
    };
    let invalid = || ServiceError::validation("cursor", "cursor is not a next_cursor this listing gave");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let (at, id) = text.split_once('|').ok_or_else(invalid)?;
    let at = DateTime::parse_from_rfc3339(at).map_err(|_| invalid())?.to_utc();
    if id.is_empty()
        || id.len() > 64
        || !id
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || character == '_')
    {
        return Err(invalid());
    }
    Ok(Some((at, id.to_owned())))
}

/// A positive count of days (`d`), hours (`h`) or minutes (`m`): `90d`, `12h`, `30m` (what `--expires` and the
/// console's expiry field take besides a time).
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

/// An optional RFC 3339 instant given in `field`.
pub fn optional_instant(field: &str, text: Option<&str>) -> Result<Option<DateTime<Utc>>, ServiceError> {
    match text.map(str::trim).filter(|text| !text.is_empty()) {
        None => Ok(None),
        Some(text) => DateTime::parse_from_rfc3339(text)
            .map(|instant| Some(instant.to_utc()))
            .map_err(|_| {
                ServiceError::validation(
                    field,
                    format!("{field} must be an RFC 3339 time such as 2026-11-01T09:00:00Z"),
                )
            }),
    }
}

/// A time range `[from, until)`, each end optional.
pub type TimeRange = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// The time range `[from, until)`, refused when it is empty.
pub fn time_range(from: Option<&str>, until: Option<&str>) -> Result<TimeRange, ServiceError> {
    let from = optional_instant("from", from)?;
    let until = optional_instant("until", until)?;
    if let (Some(from), Some(until)) = (from, until)
        && from >= until
    {
        return Err(ServiceError::validation("until", "until must be later than from"));
    }
    Ok((from, until))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_the_record_it_names() {
        let at = DateTime::parse_from_rfc3339("2026-11-01T09:00:00.123456789Z")
            .expect("instant")
            .to_utc();
        let cursor = encode_cursor(at, "01jd00000000000000000000ab");
        assert_eq!(
            decode_cursor(Some(&cursor)).expect("valid"),
            Some((at, "01jd00000000000000000000ab".to_owned()))
        );
        assert_eq!(decode_cursor(Some("")).expect("empty is none"), None);
        for bad in ["not a cursor", "bm9waXBl", &encode_cursor(at, "x' OR 1=1")] {
            let error = decode_cursor(Some(bad)).expect_err(bad);
            assert_eq!(error.details["field"], "cursor", "{bad}");
        }
    }

    #[test]
    fn a_page_size_stays_within_bounds() {
        assert_eq!(page_size(None).expect("default"), DEFAULT_PAGE_SIZE);
        assert_eq!(page_size(Some(MAX_PAGE_SIZE)).expect("largest"), MAX_PAGE_SIZE);
        assert!(page_size(Some(0)).is_err());
        assert!(page_size(Some(MAX_PAGE_SIZE + 1)).is_err());
    }
}
