//! Where a benchmark's time goes (`INTERAI_BENCH_PROFILE`, `INTERAI_BENCH_TRACE`): each SQL statement's executions
//! and time, and each HTTP route's request durations, from the instances' tracing events; or a timeline of every
//! debug event and statement.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Spread, variable};

/// What the tracing events of a phase add up to: each SQL statement's executions and time (sqlx logs every
/// statement with its execution time at DEBUG), and each HTTP route's request durations (the instance's request
/// log line).
#[derive(Default)]
struct Profile {
    statements: Mutex<HashMap<String, (u64, f64, f64)>>,
    requests: Mutex<HashMap<String, Vec<f64>>>,
}

static PROFILE: std::sync::OnceLock<Arc<Profile>> = std::sync::OnceLock::new();

const STATEMENT_TARGET: &str = "sqlx::query";
const REQUEST_TARGET: &str = "interai::http::request_log";

struct ProfileLayer(Arc<Profile>);

#[derive(Default)]
struct Fields {
    statement: Option<String>,
    summary: Option<String>,
    elapsed: Option<f64>,
    method: Option<String>,
    path: Option<String>,
    duration_ms: Option<f64>,
}

impl tracing::field::Visit for Fields {
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        match field.name() {
            "elapsed_secs" => self.elapsed = Some(value),
            "duration_ms" => self.duration_ms = Some(value),
            _ => {}
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "db.statement" if !value.trim().is_empty() => self.statement = Some(value.to_owned()),
            "summary" => self.summary = Some(value.to_owned()),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "method" => self.method = Some(format!("{value:?}")),
            "path" => self.path = Some(format!("{value:?}")),
            "summary" => self.summary = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

fn profiled(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.target() == STATEMENT_TARGET || metadata.target() == REQUEST_TARGET
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ProfileLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if event.metadata().target() == STATEMENT_TARGET {
            let Some(elapsed) = fields.elapsed else { return };
            let text = fields.statement.or(fields.summary).unwrap_or_default();
            let key: String = text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(110)
                .collect();
            let mut statements = self.0.statements.lock().expect("statements");
            let entry = statements.entry(key).or_default();
            entry.0 += 1;
            entry.1 += elapsed;
            entry.2 = entry.2.max(elapsed);
        } else if let (Some(method), Some(path), Some(duration)) = (fields.method, fields.path, fields.duration_ms) {
            let key = format!("{method} {}", path.trim_matches('"'));
            self.0
                .requests
                .lock()
                .expect("requests")
                .entry(key)
                .or_default()
                .push(duration);
        }
    }
}

/// Installs the profile's tracing layer when `INTERAI_BENCH_PROFILE` is set, and a log of the instances' events on
/// standard error when `INTERAI_BENCH_LOG` names a filter (e.g. `interai=info`); or, with `INTERAI_BENCH_TRACE`, a
/// timeline file of every debug event and statement.
pub fn install_profile() {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    if let Some(path) = variable("INTERAI_BENCH_TRACE") {
        // A timeline: every debug event of the instances and every SQL statement, stamped to the microsecond, to
        // follow one activity from alpha's commit to beta's application (run the lag phase at a low rate).
        let file = std::fs::File::create(&path).expect("INTERAI_BENCH_TRACE: the trace file");
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .with_thread_ids(true);
        let filter = tracing_subscriber::EnvFilter::new("interai=debug,sqlx::query=debug,tower_http=debug");
        let subscriber = tracing_subscriber::registry().with(layer.with_filter(filter));
        tracing::subscriber::set_global_default(subscriber).expect("the trace's subscriber");
        return;
    }
    let log = variable("INTERAI_BENCH_LOG").map(|filter| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_filter(tracing_subscriber::EnvFilter::new(filter))
    });
    let profile = variable("INTERAI_BENCH_PROFILE").map(|_| Arc::new(Profile::default()));
    if log.is_none() && profile.is_none() {
        return;
    }
    let profile_layer = profile
        .clone()
        .map(|profile| ProfileLayer(profile).with_filter(tracing_subscriber::filter::filter_fn(profiled)));
    let subscriber = tracing_subscriber::registry().with(log).with(profile_layer);
    tracing::subscriber::set_global_default(subscriber).expect("the benchmark's subscriber");
    if let Some(profile) = profile {
        let _ = PROFILE.set(profile);
    }
}

/// Starts a profiled window: what came before is forgotten.
pub fn profile_start() {
    if let Some(profile) = PROFILE.get() {
        profile.statements.lock().expect("statements").clear();
        profile.requests.lock().expect("requests").clear();
    }
}

/// Prints the statements that took the most time since [`profile_start`], and the HTTP requests.
pub fn profile_report(what: &str, activities: usize, wall: Duration) {
    let Some(profile) = PROFILE.get() else { return };
    let statements = std::mem::take(&mut *profile.statements.lock().expect("statements"));
    let requests = std::mem::take(&mut *profile.requests.lock().expect("requests"));
    let total: f64 = statements.values().map(|(_, seconds, _)| seconds).sum();
    let count: u64 = statements.values().map(|(executions, _, _)| executions).sum();
    println!(
        "\nprofile of {what} ({activities} activities in {:.2} s): {count} SQL statements took {total:.2} s on the \
         database threads ({:.2} ms and {:.1} statements per activity)",
        wall.as_secs_f64(),
        total * 1e3 / activities.max(1) as f64,
        count as f64 / activities.max(1) as f64
    );
    let mut sorted: Vec<(String, (u64, f64, f64))> = statements.into_iter().collect();
    sorted.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
    println!(
        "{:>8} {:>9} {:>7} {:>8} {:>8}  statement",
        "calls", "total s", "share", "µs each", "max ms"
    );
    for (statement, (executions, seconds, longest)) in sorted.iter().take(25) {
        println!(
            "{executions:>8} {seconds:>9.3} {:>6.1}% {:>8.0} {:>8.1}  {statement}",
            seconds * 100.0 / total.max(f64::MIN_POSITIVE),
            seconds * 1e6 / (*executions).max(1) as f64,
            longest * 1e3
        );
    }
    let mut routes: Vec<(String, Vec<f64>)> = requests.into_iter().collect();
    routes.sort_by_key(|route| std::cmp::Reverse(route.1.len()));
    for (route, mut durations) in routes {
        durations.sort_by(f64::total_cmp);
        println!(
            "requests {route}: {} (served in p50 / p99 / max {} ms)",
            durations.len(),
            Spread::of(&durations).show()
        );
    }
}
