//! The federation client (`FederationClient`): this instance's outgoing requests, among them the pushes and pulls of
//! `replicate.rs`: signing each one afresh (RFC 9421 with an RFC 9530 digest), reading a peer's manifest or instance
//! actor, and delivering queued peering messages through the injected transport.

use std::time::Duration;

use chrono::TimeDelta;
use federation::protocol::{ACTIVITY_JSON, ManifestFederation, ServiceActor};
use federation::signature::{SigningParameters, sign_request};
use federation::transport::{SharedTransport, TransportError};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use url::Url;

use super::discovery::{InstanceUrls, instance_actor};
use super::peering_messages::outbound_activity;
use crate::service::ServiceError;
use crate::service::federation::Federation;
use crate::service::federation::delivery::LeasedDelivery;
use crate::service::federation::identity::SigningKey;
use crate::service::federation::peering::PeerIntroduction;
use crate::service::federation::retry::AttemptResult;

/// How long a signature stays acceptable after it is made (receivers allow at most 300 s).
pub const SIGNATURE_VALIDITY_SECONDS: i64 = 300;

/// The most of a response body quoted in a peer's last error.
const ERROR_EXCERPT_CHARACTERS: usize = 200;

/// Why a peer's documents could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FederationClientError {
    /// The URL is not one this instance may call.
    #[error("{0}")]
    Url(String),
    /// The request failed on the way.
    #[error("{0}")]
    Transport(#[from] TransportError),
    /// The peer answered, but not with a document this instance can use.
    #[error("{0}")]
    Document(String),
    /// A service step failed.
    #[error("{0}")]
    Service(#[from] ServiceError),
}

/// Signs and sends this instance's requests.
#[derive(Debug, Clone)]
pub struct FederationClient {
    federation: Federation,
    transport: SharedTransport,
    allow_http: bool,
    metrics: crate::metrics::Metrics,
}

/// A request's host and port as a realm: `host` or `host:port` (the scheme's default port left out).
pub fn realm_of(url: &Url) -> Option<String> {
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

impl FederationClient {
    /// Outgoing requests of `federation` through `transport`; `allow_http` admits `http://` peers; deliveries are
    /// counted in `metrics`.
    pub fn new(
        federation: Federation,
        transport: SharedTransport,
        allow_http: bool,
        metrics: crate::metrics::Metrics,
    ) -> FederationClient {
        FederationClient {
            federation,
            transport,
            allow_http,
            metrics,
        }
    }

    /// The instance's metrics.
    pub(super) fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// Counts one batch the intake applied (the intake runs in the same loop as these requests).
    pub fn record_intake_batch(&self, batch: crate::service::federation::inbox::BatchApplied) {
        self.metrics.record_intake_batch(batch.as_str());
    }

    /// Counts the evidence records of other realms the intake applied since the last call, by origin and outcome.
    pub fn record_remote_evidence(&self) {
        for (origin, outcome, records) in self.federation.take_remote_evidence_counts() {
            self.metrics.record_remote_evidence(&origin, outcome, records);
        }
    }

    /// The federation these requests speak for.
    pub fn federation(&self) -> &Federation {
        &self.federation
    }

    /// The agent-facing use cases of the same instance.
    pub fn service(&self) -> &crate::service::Service {
        self.federation.service()
    }

    /// The transport requests go through.
    pub(super) fn transport(&self) -> &SharedTransport {
        &self.transport
    }

    fn urls(&self) -> InstanceUrls {
        InstanceUrls {
            base: self.federation.public_base_url().to_owned(),
        }
    }

    /// Reads the manifest of the peer at `url_text`, as an admin gave it, for the admin to compare its keys'
    /// fingerprints before adding it: every failure is a `validation_failed` on `url` saying what went wrong.
    pub async fn look_up_peer(&self, url_text: &str) -> Result<PeerIntroduction, ServiceError> {
        let url = self
            .peer_url(url_text)
            .map_err(|error| ServiceError::validation("url", error.to_string()))?;
        self.fetch_manifest(&url)
            .await
            .map_err(|error| ServiceError::validation("url", format!("the peer's manifest: {error}")))
    }

    /// Parses a peer URL the admin gave or a document named, refusing schemes this instance does not use.
    pub fn peer_url(&self, text: &str) -> Result<Url, FederationClientError> {
        let text = text.trim();
        let with_scheme = if text.contains("://") {
            text.to_owned()
        } else {
            format!("https://{text}")
        };
        let url = Url::parse(&with_scheme).map_err(|_| FederationClientError::Url(format!("{text} is not a URL")))?;
        match url.scheme() {
            "https" => Ok(url),
            "http" if self.allow_http => Ok(url),
            "http" => Err(FederationClientError::Url(format!(
                "{text} is plain http; peers are reached over https (set INTERAI_FEDERATION_ALLOW_HTTP=true for tests \
                 and a laptop)"
            ))),
            _ => Err(FederationClientError::Url(format!(
                "{text}: only https URLs name peers"
            ))),
        }
    }

    /// A request to `url` signed with `key` at the current time: `Content-Type` and `Content-Digest` for a body,
    /// then `Signature-Input` and `Signature` over them and the method, target URI and authority.
    pub fn signed_request(
        &self,
        method: Method,
        url: &Url,
        body: Option<Vec<u8>>,
        key: &SigningKey,
    ) -> Result<Request<Vec<u8>>, FederationClientError> {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::ACCEPT, HeaderValue::from_static(ACTIVITY_JSON));
        if let Some(body) = &body {
            headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static(ACTIVITY_JSON));
            let digest = federation::digest::content_digest(body);
            headers.insert(
                "content-digest",
                HeaderValue::from_str(&digest).map_err(|error| FederationClientError::Document(error.to_string()))?,
            );
        }
        let now = self.federation.now().timestamp();
        let parameters = SigningParameters {
            key_id: key.key_id.clone(),
            created: now,
            expires: now + SIGNATURE_VALIDITY_SECONDS,
            nonce: random_nonce(),
        };
        let fields = sign_request(&method, url, &headers, &parameters, &key.key_pair)
            .map_err(|rejection| FederationClientError::Document(rejection.to_string()))?;
        let header = |text: &str| {
            HeaderValue::from_str(text).map_err(|error| FederationClientError::Document(error.to_string()))
        };
        headers.insert("signature-input", header(&fields.signature_input)?);
        headers.insert("signature", header(&fields.signature)?);
        let mut request = Request::builder()
            .method(method)
            .uri(url.as_str())
            .body(body.unwrap_or_default())
            .map_err(|error| FederationClientError::Url(error.to_string()))?;
        *request.headers_mut() = headers;
        Ok(request)
    }

    async fn get_json(&self, url: &Url, accept: &'static str) -> Result<serde_json::Value, FederationClientError> {
        let mut request = Request::builder()
            .method(Method::GET)
            .uri(url.as_str())
            .body(Vec::new())
            .map_err(|error| FederationClientError::Url(error.to_string()))?;
        request
            .headers_mut()
            .insert(http::header::ACCEPT, HeaderValue::from_static(accept));
        let response = self.transport.send(request).await?;
        if !response.status().is_success() {
            return Err(FederationClientError::Document(format!(
                "{url} answered {}",
                response.status()
            )));
        }
        serde_json::from_slice(response.body())
            .map_err(|error| FederationClientError::Document(format!("{url} did not answer JSON: {error}")))
    }

    /// Reads a peer's manifest (`/.well-known/inter-ai`) and what it says about the peer: its realm (which must be
    /// the URL's host and port), actor, inbox, outbox and keys (each key's listed fingerprint checked against the
    /// key), all under the peer's own URL.
    pub async fn fetch_manifest(&self, peer_url: &Url) -> Result<PeerIntroduction, FederationClientError> {
        let mut manifest_url = peer_url.clone();
        manifest_url.set_path("/.well-known/inter-ai");
        manifest_url.set_query(None);
        manifest_url.set_fragment(None);
        let manifest = self.get_json(&manifest_url, "application/json").await?;
        let realm = realm_of(peer_url).ok_or_else(|| FederationClientError::Url(format!("{peer_url} has no host")))?;
        let stated_realm = manifest
            .get("realm")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        if stated_realm.to_ascii_lowercase() != realm {
            return Err(FederationClientError::Document(format!(
                "the manifest at {manifest_url} is for the realm {stated_realm:?}, not {realm}"
            )));
        }
        let federation: ManifestFederation =
            serde_json::from_value(manifest.get("federation").cloned().unwrap_or_default()).map_err(|error| {
                FederationClientError::Document(format!("{realm} does not offer federation: {error}"))
            })?;
        let mut keys = Vec::with_capacity(federation.keys.len());
        for key in &federation.keys {
            keys.push(
                key.description().map_err(|error| {
                    FederationClientError::Document(format!("{realm}'s key {}: {error}", key.key_id))
                })?,
            );
        }
        let base = peer_url.origin().ascii_serialization();
        let introduction = PeerIntroduction {
            realm,
            base_url: base.clone(),
            actor_url: federation.actor,
            inbox_url: federation.inbox,
            outbox_url: Some(federation.outbox),
            keys,
        };
        check_same_origin(&introduction, &base)?;
        Ok(introduction)
    }

    /// Reads the instance actor at `actor_url` (a first contact: an unknown instance's `Follow`) and what it says
    /// about the instance, all under the actor's own origin.
    pub async fn fetch_actor(&self, actor_url: &Url) -> Result<PeerIntroduction, FederationClientError> {
        let document = self.get_json(actor_url, ACTIVITY_JSON).await?;
        let actor: ServiceActor = serde_json::from_value(document).map_err(|error| {
            FederationClientError::Document(format!("{actor_url} is not an instance actor: {error}"))
        })?;
        if actor.id != actor_url.as_str() {
            return Err(FederationClientError::Document(format!(
                "{actor_url} names itself {}",
                actor.id
            )));
        }
        let mut keys = Vec::with_capacity(actor.assertion_method.len());
        for multikey in &actor.assertion_method {
            keys.push(
                multikey
                    .description()
                    .map_err(|error| FederationClientError::Document(format!("key {}: {error}", multikey.id)))?,
            );
        }
        let base = actor_url.origin().ascii_serialization();
        let introduction = PeerIntroduction {
            realm: realm_of(actor_url).ok_or_else(|| FederationClientError::Url(format!("{actor_url} has no host")))?,
            base_url: base.clone(),
            actor_url: actor.id,
            inbox_url: actor.inbox,
            outbox_url: Some(actor.outbox),
            keys,
        };
        check_same_origin(&introduction, &base)?;
        Ok(introduction)
    }

    /// Reads the keys a peer's instance actor lists, with their endorsements (a signature by a key this instance
    /// does not know: the peer may have rotated).
    pub async fn fetch_announced_keys(
        &self,
        actor_url: &Url,
    ) -> Result<Vec<crate::service::federation::peering::AnnouncedKey>, FederationClientError> {
        let document = self.get_json(actor_url, ACTIVITY_JSON).await?;
        let actor: ServiceActor = serde_json::from_value(document).map_err(|error| {
            FederationClientError::Document(format!("{actor_url} is not an instance actor: {error}"))
        })?;
        if actor.id != actor_url.as_str() {
            return Err(FederationClientError::Document(format!(
                "{actor_url} names itself {}",
                actor.id
            )));
        }
        actor
            .assertion_method
            .iter()
            .map(|multikey| {
                Ok(crate::service::federation::peering::AnnouncedKey {
                    description: multikey
                        .description()
                        .map_err(|error| FederationClientError::Document(format!("key {}: {error}", multikey.id)))?,
                    endorsement: multikey.key_endorsement(),
                })
            })
            .collect()
    }

    /// Sends one leased delivery, signed afresh, and says how it ended.
    pub async fn deliver(&self, delivery: &LeasedDelivery) -> Result<AttemptResult, ServiceError> {
        let key = match &delivery.message {
            crate::service::federation::peering::PeeringMessage::UpdateActor { sign_with_key_id } => {
                self.federation.instance_key_by_id(sign_with_key_id).await?
            }
            _ => self.federation.signing_key().await?,
        };
        let urls = self.urls();
        let peer = self.federation.find_peer(&delivery.row.peer_realm).await?;
        if peer
            .as_ref()
            .is_some_and(|peer| peer.state == crate::domain::PeerState::Blocked)
        {
            // Nothing goes to a blocked peer; what was queued waits for the block to end.
            return Ok(AttemptResult::Retry {
                error: "peer_blocked: held while the peer is blocked".to_owned(),
                retry_after: Some(TimeDelta::hours(1)),
            });
        }
        let peer_actor = match peer {
            Some(peer) => peer.actor_url,
            None => derive_actor_url(&delivery.row.inbox_url),
        };
        let keys = self.federation.published_instance_keys().await?;
        let current = self.federation.signing_key().await?;
        let published = crate::apub::rfc3339(self.federation.now());
        let realm = self.federation.realm().as_str().to_owned();
        let activity = outbound_activity(
            &delivery.message,
            &delivery.row.activity_id,
            &urls.actor(),
            &peer_actor,
            &published,
            || instance_actor(&urls, &realm, &keys, &current.key_id),
        );
        let activity = match activity {
            Ok(activity) => activity,
            Err(error) => return Ok(AttemptResult::Refused { error }),
        };
        let body = serde_json::to_vec(&activity).map_err(|error| ServiceError::internal(error.to_string()))?;
        let inbox = match Url::parse(&delivery.row.inbox_url) {
            Ok(url) => url,
            Err(error) => {
                return Ok(AttemptResult::Refused {
                    error: format!("invalid_inbox_url: {error}"),
                });
            }
        };
        let request = match self.signed_request(Method::POST, &inbox, Some(body), &key) {
            Ok(request) => request,
            Err(error) => return Err(ServiceError::internal(error.to_string())),
        };
        Ok(match self.transport.send(request).await {
            Ok(response) => classify(&response),
            Err(error) if error.is_retryable() => AttemptResult::Retry {
                error: format!("{}: {error}", error.class()),
                retry_after: None,
            },
            Err(error) => AttemptResult::Refused {
                error: format!("{}: {error}", error.class()),
            },
        })
    }

    /// One pass of the delivery queue: sends what is due (optionally for one peer) and records each attempt.
    /// Returns how many attempts were made.
    pub async fn deliver_due(&self, limit: i64, only_peer: Option<&str>) -> Result<usize, ServiceError> {
        let leased = self.federation.lease_deliveries(limit, only_peer).await?;
        let attempts = leased.len();
        for delivery in leased {
            let started = std::time::Instant::now();
            let result = self.deliver(&delivery).await?;
            self.metrics.record_peer_delivery(
                &delivery.row.peer_realm,
                delivery_outcome(&result),
                Some(started.elapsed().as_secs_f64()),
            );
            self.federation.finish_delivery(&delivery.row, result).await?;
        }
        Ok(attempts)
    }
}

/// The actor URL of a peer known only by its inbox (a removed peer still gets its `Undo`).
fn derive_actor_url(inbox_url: &str) -> String {
    match Url::parse(inbox_url) {
        Ok(mut url) => {
            url.set_path("/actor");
            url.to_string()
        }
        Err(_) => inbox_url.to_owned(),
    }
}

/// Every URL and key ID a peer names must be on its own origin, so a manifest cannot point deliveries or trust at
/// another host.
fn check_same_origin(introduction: &PeerIntroduction, base: &str) -> Result<(), FederationClientError> {
    let on_origin = |text: &str| Url::parse(text).is_ok_and(|url| url.origin().ascii_serialization() == base);
    let mut named: Vec<&str> = vec![&introduction.actor_url, &introduction.inbox_url];
    named.extend(introduction.outbox_url.as_deref());
    named.extend(introduction.keys.iter().map(|key| key.key_id.as_str()));
    match named.into_iter().find(|text| !on_origin(text)) {
        Some(stray) => Err(FederationClientError::Document(format!("{stray} is not under {base}"))),
        None if introduction.keys.is_empty() => {
            Err(FederationClientError::Document(format!("{base} publishes no key")))
        }
        None => Ok(()),
    }
}

/// How an answer ends an attempt: 2xx delivered; 408, 429 and 5xx retried (with `Retry-After` on 429 and 503,
/// at most an hour); every other status a permanent refusal.
pub(super) fn classify(response: &Response<Vec<u8>>) -> AttemptResult {
    let status = response.status();
    if status.is_success() {
        return AttemptResult::Delivered;
    }
    let excerpt: String = String::from_utf8_lossy(response.body())
        .chars()
        .filter(|character| !character.is_control())
        .take(ERROR_EXCERPT_CHARACTERS)
        .collect();
    let error = format!("http_{}: {excerpt}", status.as_u16());
    if status == StatusCode::REQUEST_TIMEOUT || status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        let retry_after = if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(|text| text.trim().parse::<u64>().ok())
                .map(|seconds| {
                    TimeDelta::from_std(Duration::from_secs(seconds.min(3600))).unwrap_or(TimeDelta::hours(1))
                })
        } else {
            None
        };
        AttemptResult::Retry { error, retry_after }
    } else {
        AttemptResult::Refused { error }
    }
}

/// The `reason` of a refusal in an interai peer's JSON body (`{"reason": "blocked_sender", …}`), when it is a
/// snake_case word (anything else is not taken as a class).
pub(super) fn refusal_reason(response: &Response<Vec<u8>>) -> Option<String> {
    let body: serde_json::Value = serde_json::from_slice(response.body()).ok()?;
    let reason = body.get("reason")?.as_str()?;
    let is_word = !reason.is_empty()
        && reason.len() <= 64
        && reason
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_');
    is_word.then(|| reason.to_owned())
}

/// A nonce no other signature of this instance uses: 16 random bytes, base64url.
fn random_nonce() -> String {
    use base64::Engine;
    let mut bytes = [0_u8; 16];
    rand::Rng::fill_bytes(&mut rand::rng(), &mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The `outcome` label of one delivery attempt.
pub(super) fn delivery_outcome(result: &AttemptResult) -> &'static str {
    match result {
        AttemptResult::Delivered => "delivered",
        AttemptResult::Retry { .. } => "retried",
        AttemptResult::Refused { .. } => "dead_lettered",
    }
}
