//! How the console shows values to a person: times (UTC in the page, the reader's zone once the script runs, UTC
//! on hover), sizes and durations with their units.

use chrono::{DateTime, SecondsFormat, Utc};

/// A moment as a page shows it: `<time datetime="{iso}" title="{utc}">{utc}</time>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeView {
    /// RFC 3339 in UTC, for the `datetime` attribute (the script reads it).
    pub iso: String,
    /// The same moment for a person, in UTC.
    pub utc: String,
}

impl TimeView {
    /// The view of `at`.
    pub fn of(at: DateTime<Utc>) -> TimeView {
        TimeView {
            iso: at.to_rfc3339_opts(SecondsFormat::Secs, true),
            utc: at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        }
    }
}

/// A size in bytes with a binary unit: `512 B`, `1.5 KiB`, `899.0 MiB`.
pub fn bytes_shown(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    #[allow(clippy::cast_precision_loss)]
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A duration in seconds: `0.4 s`, `13.8 s`, `2 min 4 s`.
pub fn seconds_shown(seconds: f64) -> String {
    if seconds < 60.0 {
        return format!("{seconds:.1} s");
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let whole = seconds.round() as u64;
    format!("{} min {} s", whole / 60, whole % 60)
}

/// How long something has waited: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h` (a negative span, from clocks apart, is
/// `0 s`).
pub fn age_shown(age: chrono::TimeDelta) -> String {
    let seconds = age.num_seconds().max(0);
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3_600 => format!("{} min", seconds / 60),
        3_600..86_400 => format!("{} h {} min", seconds / 3_600, seconds % 3_600 / 60),
        _ => format!("{} d {} h", seconds / 86_400, seconds % 86_400 / 3_600),
    }
}

/// The console path `path` with the query of the `(name, value)` pairs that are not empty, each value encoded: a
/// link that keeps a form's filters (the next page of a list).
pub fn link_with_query(path: &str, pairs: &[(&str, &str)]) -> String {
    let query = pairs
        .iter()
        .filter(|(_, value)| !value.trim().is_empty())
        .map(|(name, value)| {
            format!(
                "{name}={}",
                url::form_urlencoded::byte_serialize(value.as_bytes()).collect::<String>()
            )
        })
        .collect::<Vec<_>>()
        .join("&");
    format!("{path}?{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_carry_their_units() {
        assert_eq!(bytes_shown(512), "512 B");
        assert_eq!(bytes_shown(1536), "1.5 KiB");
        assert_eq!(bytes_shown(942_669_824), "899.0 MiB");
        assert_eq!(seconds_shown(13.84), "13.8 s");
        assert_eq!(seconds_shown(124.2), "2 min 4 s");
    }

    #[test]
    fn an_age_is_shown_in_the_unit_that_reads_best() {
        assert_eq!(age_shown(chrono::TimeDelta::seconds(-3)), "0 s");
        assert_eq!(age_shown(chrono::TimeDelta::seconds(45)), "45 s");
        assert_eq!(age_shown(chrono::TimeDelta::minutes(12)), "12 min");
        assert_eq!(age_shown(chrono::TimeDelta::minutes(185)), "3 h 5 min");
        assert_eq!(age_shown(chrono::TimeDelta::hours(52)), "2 d 4 h");
    }

    #[test]
    fn a_time_is_shown_in_utc_with_its_machine_form() {
        let at = DateTime::parse_from_rfc3339("2026-12-07T10:05:26.5Z")
            .expect("a time")
            .with_timezone(&Utc);
        assert_eq!(
            TimeView::of(at),
            TimeView {
                iso: "2026-12-07T10:05:26Z".to_owned(),
                utc: "2026-12-07 10:05:26 UTC".to_owned(),
            }
        );
    }
}
