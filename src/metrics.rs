//! The instance's metrics: one `prometheus_client` registry per instance (never a process-global recorder, so that
//! several instances in one test process keep separate counts), its families, and their text rendering for
//! `GET /metrics` (see `http::metrics`).
//!
//! Every label takes its values from a closed set (route templates, tool names, spec error codes, fixed reasons and
//! states), so the number of series stays bounded whatever callers send. The families, with the prefix `interai`:
//!
//! - `interai_http_requests_total{route, status}`: every HTTP request answered, by the route template that matched
//!   (`/mcp`, `/o/{id}`; [`UNMATCHED_ROUTE`] when none did) and numeric status;
//! - `interai_tool_calls_total{tool, outcome}`: every MCP tool call, by tool ([`UNKNOWN_TOOL`] for a name the server
//!   does not have) and outcome (`ok` or the spec error code);
//! - `interai_inbox_requests_total{outcome, reason}`: every federation inbox request, by [`InboxOutcome`] and
//!   rejection reason ([`NO_REASON`] unless rejected);
//! - `interai_peers{state}`: peer realms per state ([`PEER_STATES`]), a gauge set by [`Metrics::set_peer_counts`];
//! - `interai_deliveries_total{outcome}`: replicated activities this process sent, by outcome ([`DELIVERY_OUTCOMES`]);
//! - `interai_outbox_undelivered{peer}` and `interai_outbox_lag_seconds{peer}`: per peer, the outbox events not yet
//!   delivered and the age of the oldest, gauges set at each scrape by [`Metrics::set_replication_lag`] (the `peer`
//!   label takes the realms an admin peered with: bounded by the peer list);
//! - `interai_inbox_queue_depth`: inbound activities waiting to be applied, set at each scrape;
//! - `interai_backup_last_success_timestamp_seconds`, `interai_backup_last_size_bytes` and
//!   `interai_backup_last_failed`: the last backup (scheduled or `interai admin backup`), read from the database at
//!   each scrape (0 until a backup was made or tried);
//! - `interai_federation_deliveries_total{peer, outcome}`: every request that carried an activity to a peer
//!   (replicated activities and peering messages), by peer and outcome ([`DELIVERY_OUTCOMES`]);
//! - `interai_federation_delivery_duration_seconds{peer}`: how long each of those requests took, a histogram;
//! - `interai_http_request_duration_seconds{route}`: how long each HTTP request took until its response head, a
//!   histogram by route template (never by raw path);
//! - `interai_build_info{version}`: 1, labelled with the running version;
//! - `process_resident_memory_bytes`, `process_open_fds`, `process_start_time_seconds`: the process's own figures in
//!   the names every Prometheus client uses, read from `/proc/self` at each scrape (Linux only: absent elsewhere).
//!
//! Every family is documented in docs/configuration.md ("Metrics"); a test checks that each one rendered is.

use crate::domain::ShownPeerState;
use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The `route` label of a request that matched no route (a 404 for an unknown path): one series for every such
/// path, however many different paths are tried.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// The `tool` label of a call naming a tool the server does not have: one series for every such name.
pub const UNKNOWN_TOOL: &str = "unknown";

/// The `outcome` label of a successful tool call.
pub const TOOL_OUTCOME_OK: &str = "ok";

/// The `outcome` label of a call naming a tool the server does not have (answered with a JSON-RPC error, not a tool
/// result, so there is no spec error code).
pub const TOOL_OUTCOME_UNKNOWN_TOOL: &str = "unknown_tool";

/// The `reason` label of an inbox request that was not rejected.
pub const NO_REASON: &str = "none";

/// Every peer state as shown (`peer list`, `/admin/peers`): the stored states and `blocked_by_peer`.
/// [`Metrics::set_peer_counts`] sets each of them.
pub const PEER_STATES: [&str; 7] = [
    ShownPeerState::ALL[0].as_str(),
    ShownPeerState::ALL[1].as_str(),
    ShownPeerState::ALL[2].as_str(),
    ShownPeerState::ALL[3].as_str(),
    ShownPeerState::ALL[4].as_str(),
    ShownPeerState::ALL[5].as_str(),
    ShownPeerState::ALL[6].as_str(),
];

/// What became of one request to the federation inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InboxOutcome {
    /// Verified and queued for processing.
    Accepted,
    /// Verified, but its activity had been received before; not queued again.
    Duplicate,
    /// Refused, for the given reason: a fixed snake_case word such as `bad_signature` or `unknown_sender`. The
    /// reason is `'static` so that it comes from a closed set, never from the request.
    Rejected {
        /// Why the request was refused.
        reason: &'static str,
    },
}

impl InboxOutcome {
    /// The `outcome` label.
    pub fn as_str(self) -> &'static str {
        match self {
            InboxOutcome::Accepted => "accepted",
            InboxOutcome::Duplicate => "duplicate",
            InboxOutcome::Rejected { .. } => "rejected",
        }
    }

    /// The `reason` label: the rejection reason, or [`NO_REASON`].
    pub fn reason(self) -> &'static str {
        match self {
            InboxOutcome::Rejected { reason } => reason,
            InboxOutcome::Accepted | InboxOutcome::Duplicate => NO_REASON,
        }
    }
}

/// Which text format [`Metrics::render_as`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpositionFormat {
    /// OpenMetrics 1.0 text (counters as `_total` samples of a family without the suffix, ending in `# EOF`).
    OpenMetrics,
    /// The Prometheus text format 0.0.4, which every scraper reads.
    PrometheusText,
}

impl ExpositionFormat {
    /// The `Content-Type` of a response in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            ExpositionFormat::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            ExpositionFormat::PrometheusText => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpRequestLabels {
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolCallLabels {
    tool: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InboxRequestLabels {
    outcome: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PeerLabels {
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PeerRealmLabels {
    peer: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PeerOutcomeLabels {
    peer: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OriginOutcomeLabels {
    origin: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabels {
    version: &'static str,
}

/// Request durations: 1 ms to about 16 s, doubling (a tool call takes milliseconds, a slow search or a peer that
/// answers late takes seconds).
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// The outcomes of a replicated activity's delivery attempt: 2xx, a failure retried later, a permanent refusal
/// kept as a dead letter.
pub const DELIVERY_OUTCOMES: [&str; 3] = ["delivered", "retried", "dead_lettered"];

/// How a batch of inbound activities was applied: `together` (several in one transaction), `single` (a batch of
/// one), `one_by_one` (the batch failed as a whole, so each activity was applied in a transaction of its own: a
/// steady count means one activity keeps failing and slows its neighbours).
pub const INTAKE_BATCH_OUTCOMES: [&str; 3] = ["together", "single", "one_by_one"];

/// The metrics of one instance. Cloning is cheap (one `Arc`); every clone counts into the same registry. Created by
/// the instance (`Instance::open`) and handed to the HTTP router, which passes it on to the MCP adapter.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<MetricsInner>,
}

struct MetricsInner {
    registry: Registry,
    http_requests: Family<HttpRequestLabels, Counter>,
    tool_calls: Family<ToolCallLabels, Counter>,
    inbox_requests: Family<InboxRequestLabels, Counter>,
    peers: Family<PeerLabels, Gauge>,
    deliveries: Family<OutcomeLabels, Counter>,
    intake_batches: Family<OutcomeLabels, Counter>,
    remote_evidence: Family<OriginOutcomeLabels, Counter>,
    outbox_undelivered: Family<PeerRealmLabels, Gauge>,
    outbox_lag_seconds: Family<PeerRealmLabels, Gauge>,
    inbox_queue_depth: Gauge,
    backup_last_success: Gauge,
    backup_last_size: Gauge,
    backup_last_failed: Gauge,
    peer_deliveries: Family<PeerOutcomeLabels, Counter>,
    peer_delivery_seconds: Family<PeerRealmLabels, Histogram, fn() -> Histogram>,
    http_request_seconds: Family<RouteLabels, Histogram, fn() -> Histogram>,
    process_resident_memory_bytes: Gauge,
    process_open_fds: Gauge,
    process_start_time_seconds: Gauge,
    connections_refused: Counter,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh registry with every family registered: counters empty, every peer state at 0.
    pub fn new() -> Metrics {
        // The process's figures keep the names every Prometheus client gives them; the instance's own families are
        // under `interai_`.
        let mut root = Registry::default();
        let process_resident_memory_bytes = Gauge::default();
        let process_open_fds = Gauge::default();
        let process_start_time_seconds = Gauge::default();
        if cfg!(target_os = "linux") {
            root.register(
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                process_resident_memory_bytes.clone(),
            );
            root.register(
                "process_open_fds",
                "Number of open file descriptors",
                process_open_fds.clone(),
            );
            root.register(
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch in seconds",
                process_start_time_seconds.clone(),
            );
        }
        let registry = root.sub_registry_with_prefix("interai");
        let http_requests = Family::<HttpRequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by matched route template (\"unmatched\" when none matched) and status code",
            http_requests.clone(),
        );
        let tool_calls = Family::<ToolCallLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "MCP tool calls, by tool (\"unknown\" for a name the server does not have) and outcome (\"ok\" or the \
             spec error code)",
            tool_calls.clone(),
        );
        let inbox_requests = Family::<InboxRequestLabels, Counter>::default();
        registry.register(
            "inbox_requests",
            "Federation inbox requests, by outcome (accepted, duplicate, rejected) and rejection reason (\"none\" \
             unless rejected)",
            inbox_requests.clone(),
        );
        let peers = Family::<PeerLabels, Gauge>::default();
        registry.register("peers", "Peer realms, by peering state", peers.clone());
        for state in PEER_STATES {
            // Every state is shown from the start, so that a dashboard sees 0 rather than no data.
            peers.get_or_create(&PeerLabels { state }).set(0);
        }
        let deliveries = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "deliveries",
            "Replicated activities sent to peers by this process, by outcome (delivered, retried, dead_lettered)",
            deliveries.clone(),
        );
        for outcome in DELIVERY_OUTCOMES {
            // Every outcome is shown from the start (0, not no data).
            let _ = deliveries.get_or_create(&OutcomeLabels { outcome });
        }
        let intake_batches = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "federation_intake_batches",
            "Batches of inbound activities applied by this process, by how (together, single, one_by_one)",
            intake_batches.clone(),
        );
        for outcome in INTAKE_BATCH_OUTCOMES {
            let _ = intake_batches.get_or_create(&OutcomeLabels { outcome });
        }
        let remote_evidence = Family::<OriginOutcomeLabels, Counter>::default();
        registry.register(
            "federation_remote_evidence",
            "Evidence records from other realms applied by this process, by origin and outcome (applied: stored and \
             counted; inert: stored, its origin counts 0; refused: broke a rule, nothing stored; ignored: a copy \
             already held)",
            remote_evidence.clone(),
        );
        let outbox_undelivered = Family::<PeerRealmLabels, Gauge>::default();
        registry.register(
            "outbox_undelivered",
            "Outbox events not yet delivered to the peer",
            outbox_undelivered.clone(),
        );
        let outbox_lag_seconds = Family::<PeerRealmLabels, Gauge>::default();
        registry.register(
            "outbox_lag_seconds",
            "Age in seconds of the oldest outbox event not yet delivered to the peer (0 when none waits)",
            outbox_lag_seconds.clone(),
        );
        let inbox_queue_depth = Gauge::default();
        registry.register(
            "inbox_queue_depth",
            "Inbound activities accepted and waiting to be applied",
            inbox_queue_depth.clone(),
        );
        let backup_last_success = Gauge::default();
        let backup_last_size = Gauge::default();
        let backup_last_failed = Gauge::default();
        registry.register(
            "backup_last_success_timestamp_seconds",
            "When the last backup that worked finished, in seconds since the Unix epoch (0 before the first)",
            backup_last_success.clone(),
        );
        registry.register(
            "backup_last_size_bytes",
            "The size of the last backup in bytes (0 when it failed)",
            backup_last_size.clone(),
        );
        registry.register(
            "backup_last_failed",
            "1 when the last backup tried failed, else 0",
            backup_last_failed.clone(),
        );
        let peer_deliveries = Family::<PeerOutcomeLabels, Counter>::default();
        registry.register(
            "federation_deliveries",
            "Requests that carried an activity to a peer (replicated activities and peering messages), by peer and \
             outcome (delivered, retried, dead_lettered)",
            peer_deliveries.clone(),
        );
        let peer_delivery_seconds: Family<PeerRealmLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(duration_histogram);
        registry.register(
            "federation_delivery_duration_seconds",
            "Time each request carrying an activity to a peer took until the peer answered, by peer",
            peer_delivery_seconds.clone(),
        );
        let http_request_seconds: Family<RouteLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(duration_histogram);
        registry.register(
            "http_request_duration_seconds",
            "Time each HTTP request took until its response head, by matched route template (\"unmatched\" when \
             none matched)",
            http_request_seconds.clone(),
        );
        let connections_refused = Counter::default();
        registry.register(
            "http_connections_refused",
            "Connections answered 503 and closed at once because their client address already held \
             INTERAI_MAX_CONNECTIONS_PER_CLIENT connections",
            connections_refused.clone(),
        );
        let build_info = Family::<VersionLabels, Gauge>::default();
        registry.register(
            "build_info",
            "Always 1, labelled with the running version of interai",
            build_info.clone(),
        );
        build_info
            .get_or_create(&VersionLabels {
                version: env!("CARGO_PKG_VERSION"),
            })
            .set(1);
        Metrics {
            inner: Arc::new(MetricsInner {
                registry: root,
                http_requests,
                tool_calls,
                inbox_requests,
                peers,
                deliveries,
                intake_batches,
                remote_evidence,
                outbox_undelivered,
                outbox_lag_seconds,
                inbox_queue_depth,
                backup_last_success,
                backup_last_size,
                backup_last_failed,
                peer_deliveries,
                peer_delivery_seconds,
                http_request_seconds,
                process_resident_memory_bytes,
                process_open_fds,
                process_start_time_seconds,
                connections_refused,
            }),
        }
    }

    /// Counts one answered HTTP request: `route` is the template of the route that matched (`None` when none did,
    /// counted as [`UNMATCHED_ROUTE`]), never the request's own path, which would make a series per path.
    pub fn record_http_request(&self, route: Option<&str>, status: u16) {
        let labels = HttpRequestLabels {
            route: route.unwrap_or(UNMATCHED_ROUTE).to_owned(),
            status,
        };
        self.inner.http_requests.get_or_create(&labels).inc();
    }

    /// Records how long an HTTP request took until its response head, under its route template (`None`: counted as
    /// [`UNMATCHED_ROUTE`]).
    pub fn record_http_duration(&self, route: Option<&str>, seconds: f64) {
        let labels = RouteLabels {
            route: route.unwrap_or(UNMATCHED_ROUTE).to_owned(),
        };
        self.inner.http_request_seconds.get_or_create(&labels).observe(seconds);
    }

    /// Counts one request that carried an activity to `peer` with its `outcome` (one of [`DELIVERY_OUTCOMES`]) and
    /// records how long it took (`None` when no request went out).
    pub fn record_peer_delivery(&self, peer: &str, outcome: &'static str, seconds: Option<f64>) {
        debug_assert!(
            DELIVERY_OUTCOMES.contains(&outcome),
            "unknown delivery outcome {outcome:?}"
        );
        self.inner
            .peer_deliveries
            .get_or_create(&PeerOutcomeLabels {
                peer: peer.to_owned(),
                outcome,
            })
            .inc();
        if let Some(seconds) = seconds {
            self.inner
                .peer_delivery_seconds
                .get_or_create(&PeerRealmLabels { peer: peer.to_owned() })
                .observe(seconds);
        }
    }

    /// Reads the process's resident memory, open file descriptors and start time from `/proc/self` (Linux; a
    /// figure that cannot be read keeps its last value). Called at each scrape.
    pub fn refresh_process_metrics(&self) {
        if !cfg!(target_os = "linux") {
            return;
        }
        if let Some(bytes) = process::resident_memory_bytes() {
            self.inner.process_resident_memory_bytes.set(bytes);
        }
        if let Some(count) = process::open_file_descriptors() {
            self.inner.process_open_fds.set(count);
        }
        if let Some(start) = process::start_time_seconds() {
            self.inner.process_start_time_seconds.set(start);
        }
    }

    /// Counts one tool call of `tool` (a tool's own name, or [`UNKNOWN_TOOL`]) with its `outcome`:
    /// [`TOOL_OUTCOME_OK`] or the spec error code.
    pub fn record_tool_call(&self, tool: &'static str, outcome: &'static str) {
        self.inner
            .tool_calls
            .get_or_create(&ToolCallLabels { tool, outcome })
            .inc();
    }

    /// Counts one federation inbox request with its outcome (and, when rejected, its reason).
    pub fn record_inbox(&self, outcome: InboxOutcome) {
        let reason = outcome.reason();
        debug_assert!(
            !reason.is_empty()
                && reason
                    .bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_'),
            "inbox rejection reasons are snake_case words, got {reason:?}"
        );
        let labels = InboxRequestLabels {
            outcome: outcome.as_str(),
            reason,
        };
        self.inner.inbox_requests.get_or_create(&labels).inc();
    }

    /// Sets the peer gauge from a complete count: every state of [`PEER_STATES`] takes the sum of its entries in
    /// `counts`, and states absent from it become 0. An entry naming no known state is logged and left out, so that
    /// the gauge keeps one series per state.
    pub fn set_peer_counts(&self, counts: &[(&str, i64)]) {
        for (state, _) in counts {
            if !PEER_STATES.contains(state) {
                tracing::warn!(state = %state, "peer count for an unknown state left out of the metrics");
            }
        }
        for state in PEER_STATES {
            let total = counts
                .iter()
                .filter(|(counted, _)| *counted == state)
                .map(|(_, count)| *count)
                .sum();
            self.inner.peers.get_or_create(&PeerLabels { state }).set(total);
        }
    }

    /// Counts one connection refused because its client held its share of connections.
    pub fn record_connection_refused(&self) {
        self.inner.connections_refused.inc();
    }

    /// Counts one delivery attempt of a replicated activity; `outcome` is one of [`DELIVERY_OUTCOMES`].
    pub fn record_delivery(&self, outcome: &'static str) {
        debug_assert!(
            DELIVERY_OUTCOMES.contains(&outcome),
            "unknown delivery outcome {outcome:?}"
        );
        self.inner.deliveries.get_or_create(&OutcomeLabels { outcome }).inc();
    }

    /// Counts `records` evidence records of the realm `origin` that the intake applied with `outcome` (`applied`,
    /// `inert`, `refused` or `ignored`).
    pub fn record_remote_evidence(&self, origin: &str, outcome: &'static str, records: u64) {
        self.inner
            .remote_evidence
            .get_or_create(&OriginOutcomeLabels {
                origin: origin.to_owned(),
                outcome,
            })
            .inc_by(records);
    }

    /// Counts one batch of inbound activities applied; `outcome` is one of [`INTAKE_BATCH_OUTCOMES`].
    pub fn record_intake_batch(&self, outcome: &'static str) {
        debug_assert!(
            INTAKE_BATCH_OUTCOMES.contains(&outcome),
            "unknown intake batch outcome {outcome:?}"
        );
        self.inner
            .intake_batches
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
    }

    /// Sets the per-peer outbox gauges from a complete list of (peer, undelivered, oldest age in seconds); peers
    /// no longer listed are removed, so a removed peer's series goes away.
    pub fn set_replication_lag(&self, lags: &[(String, i64, i64)]) {
        self.inner.outbox_undelivered.clear();
        self.inner.outbox_lag_seconds.clear();
        for (peer, undelivered, age) in lags {
            let labels = PeerRealmLabels { peer: peer.clone() };
            self.inner.outbox_undelivered.get_or_create(&labels).set(*undelivered);
            self.inner.outbox_lag_seconds.get_or_create(&labels).set(*age);
        }
    }

    /// Sets the inbound queue's depth.
    pub fn set_inbox_queue_depth(&self, depth: i64) {
        self.inner.inbox_queue_depth.set(depth);
    }

    /// Sets the last backup's gauges: when the last one that worked finished (seconds since the epoch, 0 before the
    /// first), its size, and whether the last one tried failed.
    pub fn set_last_backup(&self, last_success_at: i64, size_bytes: i64, failed: bool) {
        self.inner.backup_last_success.set(last_success_at);
        self.inner.backup_last_size.set(size_bytes);
        self.inner.backup_last_failed.set(i64::from(failed));
    }

    /// Every family in the OpenMetrics text format, ending with `# EOF`.
    pub fn render(&self) -> String {
        self.render_as(ExpositionFormat::OpenMetrics)
    }

    /// Every family in the given text format.
    pub fn render_as(&self, format: ExpositionFormat) -> String {
        let mut text = String::new();
        let encoded = match format {
            ExpositionFormat::OpenMetrics => prometheus_client::encoding::text::encode(&mut text, &self.inner.registry),
            ExpositionFormat::PrometheusText => {
                prometheus_client::encoding::prometheus_text::encode(&mut text, &self.inner.registry)
            }
        };
        if let Err(error) = encoded {
            // Writing into a `String` cannot fail; the encoder only passes on the writer's errors.
            tracing::error!(error = %error, "encoding the metrics failed");
        }
        text
    }
}

/// The process's own figures, read from Linux's `/proc` (no crate and no unsafe call needed).
mod process {
    /// `VmRSS` of `/proc/self/status`, which the kernel gives in kB.
    pub(super) fn resident_memory_bytes() -> Option<i64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
        let kilobytes: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kilobytes.checked_mul(1024)
    }

    /// The entries of `/proc/self/fd`.
    pub(super) fn open_file_descriptors() -> Option<i64> {
        let entries = std::fs::read_dir("/proc/self/fd").ok()?;
        i64::try_from(entries.count()).ok()
    }

    /// Clock ticks per second of `/proc`'s times: `USER_HZ`, which the kernel fixes at 100 for user space on every
    /// architecture Linux supports today (`sysconf(_SC_CLK_TCK)` returns it; calling it would need unsafe code).
    const USER_HZ: i64 = 100;

    /// The boot time (`btime` of `/proc/stat`) plus the process's start in ticks after boot (field 22 of
    /// `/proc/self/stat`, counted after the parenthesised command name, which may contain spaces).
    pub(super) fn start_time_seconds() -> Option<i64> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let after_name = &stat[stat.rfind(')')? + 1..];
        // Fields after the name start with field 3 (state); the start time is field 22.
        let ticks: i64 = after_name.split_whitespace().nth(22 - 3)?.parse().ok()?;
        let boot = std::fs::read_to_string("/proc/stat").ok()?;
        let boot_seconds: i64 = boot
            .lines()
            .find_map(|line| line.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        Some(boot_seconds + ticks / USER_HZ)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &str) -> Vec<&str> {
        text.lines().collect()
    }

    #[test]
    fn inbox_requests_render_by_outcome_and_reason() {
        let metrics = Metrics::new();
        metrics.record_inbox(InboxOutcome::Accepted);
        metrics.record_inbox(InboxOutcome::Accepted);
        metrics.record_inbox(InboxOutcome::Duplicate);
        metrics.record_inbox(InboxOutcome::Rejected {
            reason: "bad_signature",
        });
        metrics.record_inbox(InboxOutcome::Rejected {
            reason: "unknown_sender",
        });
        metrics.record_inbox(InboxOutcome::Rejected {
            reason: "bad_signature",
        });
        let text = metrics.render();
        let lines = lines_of(&text);
        for expected in [
            "# TYPE interai_inbox_requests counter",
            "interai_inbox_requests_total{outcome=\"accepted\",reason=\"none\"} 2",
            "interai_inbox_requests_total{outcome=\"duplicate\",reason=\"none\"} 1",
            "interai_inbox_requests_total{outcome=\"rejected\",reason=\"bad_signature\"} 2",
            "interai_inbox_requests_total{outcome=\"rejected\",reason=\"unknown_sender\"} 1",
        ] {
            assert!(lines.contains(&expected), "{expected} missing from\n{text}");
        }
    }

    #[test]
    fn peer_counts_set_every_state_and_absent_states_become_zero() {
        let metrics = Metrics::new();
        let text = metrics.render();
        for state in PEER_STATES {
            let expected = format!("interai_peers{{state=\"{state}\"}} 0");
            assert!(
                lines_of(&text).contains(&expected.as_str()),
                "{expected} missing from\n{text}"
            );
        }

        metrics.set_peer_counts(&[("active", 3), ("blocked", 1), ("pending_in", 2)]);
        metrics.set_peer_counts(&[("active", 4), ("unreachable", 1), ("no_such_state", 9)]);
        let text = metrics.render();
        let lines = lines_of(&text);
        assert!(lines.contains(&"# TYPE interai_peers gauge"), "{text}");
        for expected in [
            "interai_peers{state=\"pending_out\"} 0",
            "interai_peers{state=\"pending_in\"} 0",
            "interai_peers{state=\"active\"} 4",
            "interai_peers{state=\"blocked\"} 0",
            "interai_peers{state=\"unreachable\"} 1",
        ] {
            assert!(lines.contains(&expected), "{expected} missing from\n{text}");
        }
        assert!(!text.contains("no_such_state"), "{text}");
    }

    #[test]
    fn http_requests_and_tool_calls_render_with_bounded_labels() {
        let metrics = Metrics::new();
        metrics.record_http_request(Some("/o/{id}"), 200);
        metrics.record_http_request(Some("/o/{id}"), 200);
        metrics.record_http_request(None, 404);
        metrics.record_tool_call("get", TOOL_OUTCOME_OK);
        metrics.record_tool_call(UNKNOWN_TOOL, TOOL_OUTCOME_UNKNOWN_TOOL);
        let text = metrics.render();
        let lines = lines_of(&text);
        for expected in [
            "interai_http_requests_total{route=\"/o/{id}\",status=\"200\"} 2",
            "interai_http_requests_total{route=\"unmatched\",status=\"404\"} 1",
            "interai_tool_calls_total{tool=\"get\",outcome=\"ok\"} 1",
            "interai_tool_calls_total{tool=\"unknown\",outcome=\"unknown_tool\"} 1",
        ] {
            assert!(lines.contains(&expected), "{expected} missing from\n{text}");
        }
        assert_eq!(lines.last(), Some(&"# EOF"));
    }

    #[test]
    fn the_prometheus_text_format_names_counters_with_their_suffix() {
        let metrics = Metrics::new();
        metrics.record_tool_call("whoami", TOOL_OUTCOME_OK);
        let text = metrics.render_as(ExpositionFormat::PrometheusText);
        let lines = lines_of(&text);
        assert!(lines.contains(&"# TYPE interai_tool_calls_total counter"), "{text}");
        assert!(
            lines.contains(&"interai_tool_calls_total{tool=\"whoami\",outcome=\"ok\"} 1"),
            "{text}"
        );
        assert!(!text.contains("# EOF"), "{text}");
    }

    #[test]
    fn build_info_process_figures_and_durations_render() {
        let metrics = Metrics::new();
        metrics.refresh_process_metrics();
        metrics.record_http_duration(Some("/mcp"), 0.004);
        metrics.record_peer_delivery("beta.test", "delivered", Some(0.02));
        metrics.record_peer_delivery("beta.test", "retried", None);
        let text = metrics.render_as(ExpositionFormat::PrometheusText);
        let lines = lines_of(&text);
        let build = format!("interai_build_info{{version=\"{}\"}} 1", env!("CARGO_PKG_VERSION"));
        for expected in [
            build.as_str(),
            "interai_federation_deliveries_total{peer=\"beta.test\",outcome=\"delivered\"} 1",
            "interai_federation_deliveries_total{peer=\"beta.test\",outcome=\"retried\"} 1",
            "interai_federation_delivery_duration_seconds_count{peer=\"beta.test\"} 1",
            "interai_http_request_duration_seconds_count{route=\"/mcp\"} 1",
        ] {
            assert!(lines.contains(&expected), "{expected} missing from\n{text}");
        }
        if cfg!(target_os = "linux") {
            let value = |name: &str| -> f64 {
                lines
                    .iter()
                    .find_map(|line| line.strip_prefix(&format!("{name} ")))
                    .and_then(|value| value.parse().ok())
                    .unwrap_or_else(|| panic!("{name} missing from\n{text}"))
            };
            assert!(value("process_resident_memory_bytes") > 1_000_000.0, "{text}");
            assert!(value("process_open_fds") >= 3.0, "{text}");
            // After 2020 and not in the future of any plausible test run.
            let start = value("process_start_time_seconds");
            assert!(start > 1_577_836_800.0 && start < 4_102_444_800.0, "{text}");
        }
    }

    #[test]
    fn two_registries_keep_separate_counts() {
        let alpha = Metrics::new();
        let beta = Metrics::new();
        let alpha_clone = alpha.clone();
        alpha.record_tool_call("whoami", TOOL_OUTCOME_OK);
        alpha_clone.record_tool_call("whoami", TOOL_OUTCOME_OK);
        assert!(
            alpha
                .render()
                .contains("interai_tool_calls_total{tool=\"whoami\",outcome=\"ok\"} 2")
        );
        assert!(!beta.render().contains("interai_tool_calls_total{"));
    }
}
