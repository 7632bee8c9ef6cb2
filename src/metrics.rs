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
//! - `interai_inbox_queue_depth`: inbound activities waiting to be applied, set at each scrape.

use crate::domain::ShownPeerState;
use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
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
    outbox_undelivered: Family<PeerRealmLabels, Gauge>,
    outbox_lag_seconds: Family<PeerRealmLabels, Gauge>,
    inbox_queue_depth: Gauge,
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
        let mut registry = Registry::with_prefix("interai");
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
        Metrics {
            inner: Arc::new(MetricsInner {
                registry,
                http_requests,
                tool_calls,
                inbox_requests,
                peers,
                deliveries,
                intake_batches,
                outbox_undelivered,
                outbox_lag_seconds,
                inbox_queue_depth,
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

    /// Counts one delivery attempt of a replicated activity; `outcome` is one of [`DELIVERY_OUTCOMES`].
    pub fn record_delivery(&self, outcome: &'static str) {
        debug_assert!(
            DELIVERY_OUTCOMES.contains(&outcome),
            "unknown delivery outcome {outcome:?}"
        );
        self.inner.deliveries.get_or_create(&OutcomeLabels { outcome }).inc();
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
