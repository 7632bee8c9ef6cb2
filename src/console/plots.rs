//! The console's plots: a time series (with an optional band around it, such as an interval) drawn on the server as
//! inline SVG with the plotters crate, so that a page shows it without a script and a test reads it as text.
//!
//! The SVG carries `role="img"`, an `aria-label` and a `<title>` saying what it shows; every page that shows a plot
//! also shows its numbers in a table for people who cannot see it. The drawing uses presentation attributes only
//! (`fill`, `stroke`, `opacity`), never a `style` attribute, which the console's `style-src 'self'` would block.
//!
//! A plot is drawn for a light page, dark strokes on no background of its own: the stylesheet gives `svg.plot` the
//! page's background and, in the dark scheme, a filter that inverts the plot with its hues turned back (dark text
//! and grid become light, the blue line stays blue), so that the same SVG reads well in either scheme without a
//! white box in a dark page.

use chrono::{DateTime, TimeDelta, Utc};
use plotters::prelude::*;

/// A time series to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSeriesPlot {
    /// What the plot shows, in one sentence (its `<title>` and `aria-label`).
    pub description: String,
    /// The vertical axis' name with its unit, e.g. `trust value (0–1)` or `writes per minute`.
    pub y_unit: String,
    /// The vertical range, when fixed (a probability is 0–1); otherwise from the data.
    pub y_range: Option<(f64, f64)>,
    /// The series, oldest first.
    pub points: Vec<(DateTime<Utc>, f64)>,
    /// A band around the series (lower, upper) at the same moments, e.g. an interval.
    pub band: Option<Vec<(f64, f64)>>,
}

/// The plot's size in SVG units; the stylesheet scales it to the page's width.
const PLOT_SIZE: (u32, u32) = (720, 300);

const LINE: RGBColor = RGBColor(11, 79, 156);
const BAND: RGBColor = RGBColor(140, 194, 255);
const TEXT: RGBColor = RGBColor(22, 24, 29);

/// Why a plot could not be drawn (the page then shows its table alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError(pub String);

impl std::fmt::Display for PlotError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "the plot could not be drawn: {}", self.0)
    }
}

fn seconds_of(at: DateTime<Utc>) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let seconds = at.timestamp_millis() as f64 / 1000.0;
    seconds
}

/// A time axis' label: the date when the span is weeks long, the date and time when it is hours or days long (so
/// that two labels of one day differ), the time to the second otherwise.
fn time_label(seconds: f64, span_seconds: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    let millis = (seconds * 1000.0).round() as i64;
    let Some(at) = DateTime::<Utc>::from_timestamp_millis(millis) else {
        return String::new();
    };
    if span_seconds >= 10.0 * 86_400.0 {
        at.format("%m-%d").to_string()
    } else if span_seconds >= 3_600.0 {
        at.format("%m-%d %H:%M").to_string()
    } else {
        at.format("%H:%M:%S").to_string()
    }
}

/// The plot as an inline `<svg>` element.
pub fn time_series_svg(plot: &TimeSeriesPlot) -> Result<String, PlotError> {
    let (Some(first), Some(last)) = (plot.points.first(), plot.points.last()) else {
        return Err(PlotError("there are no points".to_owned()));
    };
    if plot.band.as_ref().is_some_and(|band| band.len() != plot.points.len()) {
        return Err(PlotError("the band and the series differ in length".to_owned()));
    }
    // A single moment gets an hour on either side, so that it stands in the middle of an axis.
    let (start, end) = if last.0 > first.0 {
        (first.0, last.0)
    } else {
        (first.0 - TimeDelta::hours(1), last.0 + TimeDelta::hours(1))
    };
    let (x_start, x_end) = (seconds_of(start), seconds_of(end));
    let span = x_end - x_start;
    let (y_start, y_end) = plot.y_range.unwrap_or_else(|| {
        let values = plot
            .points
            .iter()
            .map(|(_, value)| *value)
            .chain(plot.band.iter().flatten().flat_map(|(lower, upper)| [*lower, *upper]));
        let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
            (low.min(value), high.max(value))
        });
        if high > low {
            (low, high)
        } else {
            (low - 1.0, low + 1.0)
        }
    });
    let drawing_error = |error: &dyn std::fmt::Display| PlotError(error.to_string());

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, PLOT_SIZE).into_drawing_area();
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(58)
            .build_cartesian_2d(x_start..x_end, y_start..y_end)
            .map_err(|error| drawing_error(&error))?;
        let label_time = |seconds: &f64| time_label(*seconds, span);
        // A probability's axis needs its decimals; a count's axis (see `count_series_svg`) has none to show.
        let whole_numbers = y_end - y_start >= 5.0;
        let label_value = |value: &f64| {
            if whole_numbers {
                format!("{value:.0}")
            } else {
                format!("{value:.2}")
            }
        };
        chart
            .configure_mesh()
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&label_time)
            .y_label_formatter(&label_value)
            .x_desc("time (UTC)")
            .y_desc(plot.y_unit.as_str())
            .label_style(("sans-serif", 13).into_font().color(&TEXT))
            .axis_desc_style(("sans-serif", 14).into_font().color(&TEXT))
            .light_line_style(RGBColor(232, 234, 238))
            .bold_line_style(RGBColor(201, 204, 212))
            .draw()
            .map_err(|error| drawing_error(&error))?;
        if let Some(band) = &plot.band {
            let upper = plot
                .points
                .iter()
                .zip(band)
                .map(|((at, _), (_, upper))| (seconds_of(*at), *upper));
            let lower = plot
                .points
                .iter()
                .zip(band)
                .rev()
                .map(|((at, _), (lower, _))| (seconds_of(*at), *lower));
            chart
                .draw_series(std::iter::once(Polygon::new(
                    upper.chain(lower).collect::<Vec<_>>(),
                    BAND.mix(0.45).filled(),
                )))
                .map_err(|error| drawing_error(&error))?;
        }
        let line: Vec<(f64, f64)> = plot
            .points
            .iter()
            .map(|(at, value)| (seconds_of(*at), *value))
            .collect();
        chart
            .draw_series(LineSeries::new(line.iter().copied(), LINE.stroke_width(2)))
            .map_err(|error| drawing_error(&error))?;
        chart
            .draw_series(line.iter().map(|point| Circle::new(*point, 3, LINE.filled())))
            .map_err(|error| drawing_error(&error))?;
        root.present().map_err(|error| drawing_error(&error))?;
    }
    Ok(labelled(&svg, &plot.description))
}

/// A series of counts (calls, events, seconds) as an inline `<svg>`, or `None` (logged) when it cannot be drawn. Its
/// vertical axis starts at zero and reaches at least 5, so that its labels fall on whole numbers and a quiet stretch
/// reads as zero, not as a line in the middle of nowhere.
pub fn count_series_svg(description: String, y_unit: &str, points: &[(DateTime<Utc>, i64)]) -> Option<String> {
    #[allow(clippy::cast_precision_loss)]
    let highest = points.iter().map(|(_, count)| *count).max().unwrap_or(0) as f64;
    let plot = TimeSeriesPlot {
        description,
        y_unit: y_unit.to_owned(),
        y_range: Some((0.0, (highest * 1.1).ceil().max(5.0))),
        #[allow(clippy::cast_precision_loss)]
        points: points.iter().map(|(at, count)| (*at, *count as f64)).collect(),
        band: None,
    };
    match time_series_svg(&plot) {
        Ok(svg) => Some(svg),
        Err(error) => {
            tracing::warn!(error = %error, plot = %plot.description, "a console plot was not drawn");
            None
        }
    }
}

/// `svg` with `role="img"`, an `aria-label` and a `<title>` saying `description`, and a class the stylesheet sizes.
fn labelled(svg: &str, description: &str) -> String {
    let description = xml_escaped(description);
    let Some(open_end) = svg.find('>') else {
        return svg.to_owned();
    };
    let (open, rest) = svg.split_at(open_end);
    let open = open.replacen(
        "<svg ",
        &format!("<svg class=\"plot\" role=\"img\" aria-label=\"{description}\" "),
        1,
    );
    format!("{open}>\n<title>{description}</title>{}", &rest[1..])
}

fn xml_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hours: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
            .expect("a time")
            .to_utc()
            + TimeDelta::hours(hours)
    }

    #[test]
    fn a_series_with_a_band_is_an_labelled_svg_without_style_attributes() {
        let plot = TimeSeriesPlot {
            description: "Trust of \"x\" & y".to_owned(),
            y_unit: "trust value (0–1)".to_owned(),
            y_range: Some((0.0, 1.0)),
            points: (0..5).map(|hour| (at(hour), 0.5 + 0.05 * hour as f64)).collect(),
            band: Some((0..5).map(|_| (0.2, 0.9)).collect()),
        };
        let svg = time_series_svg(&plot).expect("drawn");
        assert!(svg.starts_with("<svg class=\"plot\" role=\"img\" aria-label=\"Trust of &quot;x&quot; &amp; y\""));
        assert!(svg.contains("<title>Trust of &quot;x&quot; &amp; y</title>"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 5, "{svg}");
        assert!(svg.contains("<polygon"), "the band: {svg}");
        assert!(svg.contains("time (UTC)"), "{svg}");
        assert!(!svg.contains("style="), "{svg}");
        assert!(
            !svg.contains("fill=\"#FFFFFF\""),
            "no background of its own: the stylesheet gives it, in either scheme: {svg}"
        );
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    }

    #[test]
    fn a_count_series_starts_at_zero_with_whole_number_labels() {
        let svg = count_series_svg(
            "Writes per minute".to_owned(),
            "writes per minute",
            &[(at(0), 0), (at(1), 3), (at(2), 0)],
        )
        .expect("drawn");
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
        // plotters writes a label's text on a line of its own.
        assert!(
            svg.contains(">\n0\n</text>") && svg.contains(">\n5\n</text>"),
            "labels 0 to 5: {svg}"
        );
        assert!(!svg.contains(".00\n</text>"), "no decimals on a count axis: {svg}");
    }

    #[test]
    fn one_point_stands_in_the_middle_and_no_point_is_no_plot() {
        let plot = TimeSeriesPlot {
            description: "one".to_owned(),
            y_unit: "count".to_owned(),
            y_range: None,
            points: vec![(at(0), 3.0)],
            band: None,
        };
        assert_eq!(time_series_svg(&plot).expect("drawn").matches("<circle").count(), 1);
        let empty = TimeSeriesPlot {
            points: Vec::new(),
            ..plot
        };
        assert!(time_series_svg(&empty).is_err());
    }
}
