//! The production `Transport`: a reqwest client (rustls, HTTP/1.1) hardened for talking to other instances — no
//! system proxy, no redirects, connect and total timeouts, a response cap, and private addresses refused where the
//! connection is made, so that neither a URL nor a DNS answer can aim the instance at its own network.
//!
//! Two checks cover the two ways reqwest picks an address. A host name goes through `PolicyResolver`, which drops
//! non-public addresses from the DNS answer and fails when none remain; the connector only ever sees what survived,
//! so a rebinding DNS server cannot swap in 127.0.0.1 between a check and the connect. An IP literal never reaches a
//! resolver (hyper connects to it directly), so `send` checks it first, on the URL as the URL parser normalized it
//! (`127.1`, `0x7f000001` and `[::ffff:127.0.0.1]` are all 127.0.0.1 by then), and hands reqwest that same URL.

use std::error::Error as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use super::address::{NonPublicRange, non_public_range};
use super::{TimeoutPhase, Transport, TransportError, TransportFuture};

/// The rules every outgoing federation request follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingPolicy {
    /// Allow loopback, private, link-local and other non-public addresses (two instances on one laptop, tests).
    pub allow_private_addresses: bool,
    /// Allow `http://` URLs besides `https://`.
    pub allow_http: bool,
    /// Deadline for DNS, TCP and TLS together.
    pub connect_timeout: Duration,
    /// Deadline for the whole exchange, up to the last byte of the response body.
    pub total_timeout: Duration,
    /// Largest response body accepted, in bytes.
    pub max_response_bytes: usize,
    /// The `User-Agent` sent when the request carries none.
    pub user_agent: String,
}

impl Default for OutgoingPolicy {
    fn default() -> Self {
        OutgoingPolicy {
            allow_private_addresses: false,
            allow_http: false,
            connect_timeout: Duration::from_secs(5),
            total_timeout: Duration::from_secs(10),
            max_response_bytes: 1024 * 1024,
            user_agent: concat!("interai/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

/// Sends federation requests over the network under an `OutgoingPolicy`. Cheap to clone (one connection pool).
#[derive(Debug, Clone)]
pub struct HttpTransport {
    client: reqwest::Client,
    policy: Arc<OutgoingPolicy>,
}

impl HttpTransport {
    /// Builds the client. Fails only when TLS cannot be set up or the user agent is not a valid header value.
    pub fn new(policy: OutgoingPolicy) -> Result<HttpTransport, TransportError> {
        let client = reqwest::Client::builder()
            // A proxy from the environment would decide where requests go, past the address policy.
            .no_proxy()
            // A redirect could lead anywhere, including past the checks made on the first URL; the caller sees 3xx.
            .redirect(reqwest::redirect::Policy::none())
            // Retrying is the delivery loop's decision, with its own schedule.
            .retry(reqwest::retry::never())
            .referer(false)
            .https_only(!policy.allow_http)
            .connect_timeout(policy.connect_timeout)
            .timeout(policy.total_timeout)
            .user_agent(policy.user_agent.as_str())
            .dns_resolver(PolicyResolver {
                allow_private_addresses: policy.allow_private_addresses,
            })
            .build()
            .map_err(|error| TransportError::ClientSetup {
                detail: error_chain(&error),
            })?;
        Ok(HttpTransport {
            client,
            policy: Arc::new(policy),
        })
    }

    /// The policy this transport enforces.
    pub fn policy(&self) -> &OutgoingPolicy {
        &self.policy
    }
}

impl Transport for HttpTransport {
    fn send(&self, request: http::Request<Vec<u8>>) -> TransportFuture {
        let client = self.client.clone();
        let policy = Arc::clone(&self.policy);
        Box::pin(async move { send_under_policy(&client, &policy, request).await })
    }
}

async fn send_under_policy(
    client: &reqwest::Client,
    policy: &OutgoingPolicy,
    request: http::Request<Vec<u8>>,
) -> Result<http::Response<Vec<u8>>, TransportError> {
    let (parts, body) = request.into_parts();
    // The same parse reqwest would make, done here so that the URL checked is the URL sent.
    let url = url::Url::parse(&parts.uri.to_string()).map_err(|error| TransportError::InvalidRequest {
        detail: format!("{}: {error}", parts.uri),
    })?;
    match url.scheme() {
        "https" => {}
        "http" if policy.allow_http => {}
        other => {
            return Err(TransportError::SchemeRefused {
                scheme: other.to_owned(),
            });
        }
    }
    let host = url.host().ok_or_else(|| TransportError::InvalidRequest {
        detail: format!("{url} has no host"),
    })?;
    let host_text = host.to_string();
    if !policy.allow_private_addresses {
        let literal = match host {
            url::Host::Ipv4(address) => Some(IpAddr::V4(address)),
            url::Host::Ipv6(address) => Some(IpAddr::V6(address)),
            url::Host::Domain(_) => None,
        };
        if let Some(address) = literal
            && let Some(range) = non_public_range(address)
        {
            return Err(TransportError::AddressRefused {
                host: host_text,
                address,
                range,
            });
        }
    }

    let mut outgoing = reqwest::Request::new(parts.method, url);
    *outgoing.headers_mut() = parts.headers;
    *outgoing.body_mut() = Some(body.into());
    let mut response = client
        .execute(outgoing)
        .await
        .map_err(|error| classify(&error, policy, &host_text))?;

    let limit = policy.max_response_bytes;
    let declared = response.content_length();
    if let Some(length) = declared
        && length > limit as u64
    {
        return Err(TransportError::ResponseTooLarge {
            limit,
            declared: Some(length),
        });
    }
    let status = response.status();
    let version = response.version();
    let headers = std::mem::take(response.headers_mut());
    // Content-Length is only a claim: count what arrives and stop at the first byte past the cap.
    let mut received = Vec::with_capacity(declared.map_or(0, |length| length as usize));
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| classify(&error, policy, &host_text))?
    {
        if received.len() + chunk.len() > limit {
            return Err(TransportError::ResponseTooLarge { limit, declared });
        }
        received.extend_from_slice(&chunk);
    }

    let mut answer = http::Response::new(received);
    *answer.status_mut() = status;
    *answer.version_mut() = version;
    *answer.headers_mut() = headers;
    Ok(answer)
}

/// Maps a reqwest failure to the transport's classes. Our resolver's refusal is found by walking the source chain;
/// the rest follows reqwest's own predicates, the most specific first.
fn classify(error: &reqwest::Error, policy: &OutgoingPolicy, host: &str) -> TransportError {
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(refusal) = cause.downcast_ref::<ResolvedAddressRefused>() {
            return TransportError::AddressRefused {
                host: refusal.host.clone(),
                address: refusal.address,
                range: refusal.range,
            };
        }
        source = cause.source();
    }
    if error.is_timeout() {
        return if error.is_connect() {
            TransportError::Timeout {
                phase: TimeoutPhase::Connect,
                after: policy.connect_timeout,
            }
        } else {
            TransportError::Timeout {
                phase: TimeoutPhase::Total,
                after: policy.total_timeout,
            }
        };
    }
    let detail = error_chain(error);
    if error.is_dns() {
        return TransportError::Dns {
            host: host.to_owned(),
            detail,
        };
    }
    if error.is_connect() {
        return TransportError::Connect { detail };
    }
    if error.is_builder() {
        return TransportError::InvalidRequest { detail };
    }
    TransportError::Io { detail }
}

/// An error and its causes on one line, for logs and the admin's view of a peer.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Resolves host names with the system resolver (through tokio) and keeps only the addresses the policy allows.
#[derive(Debug)]
struct PolicyResolver {
    allow_private_addresses: bool,
}

/// The resolver's refusal, carried through reqwest's error chain to `classify`.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves only to refused addresses (first: {address}, {range})")]
struct ResolvedAddressRefused {
    host: String,
    address: IpAddr,
    range: NonPublicRange,
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private_addresses = self.allow_private_addresses;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: reqwest puts in the URL's port, or the scheme's.
            let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed = keep_permitted_addresses(host, resolved, allow_private_addresses)?;
            let addresses: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addresses)
        })
    }
}

/// The part of a DNS answer a connection may use: all of it when private addresses are allowed, else its public
/// addresses, and an error naming the first refused one when none is public.
fn keep_permitted_addresses(
    host: String,
    resolved: Vec<SocketAddr>,
    allow_private_addresses: bool,
) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    if allow_private_addresses {
        return Ok(resolved);
    }
    let mut first_refused = None;
    let allowed: Vec<SocketAddr> = resolved
        .into_iter()
        .filter(|address| match non_public_range(address.ip()) {
            None => true,
            Some(range) => {
                first_refused.get_or_insert((address.ip(), range));
                false
            }
        })
        .collect();
    if !allowed.is_empty() {
        return Ok(allowed);
    }
    Err(match first_refused {
        Some((address, range)) => Box::new(ResolvedAddressRefused { host, address, range }),
        None => format!("{host} resolved to no address").into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addresses(texts: &[&str]) -> Vec<SocketAddr> {
        texts
            .iter()
            .map(|text| text.parse().expect("a socket address"))
            .collect()
    }

    #[test]
    fn a_mixed_dns_answer_keeps_only_its_public_addresses() {
        let resolved = addresses(&["127.0.0.1:0", "93.184.215.14:0", "[fd00::1]:0", "[2606:4700::1]:0"]);
        let kept = keep_permitted_addresses("peer.example".into(), resolved, false).expect("two are public");
        assert_eq!(kept, addresses(&["93.184.215.14:0", "[2606:4700::1]:0"]));
    }

    #[test]
    fn an_answer_with_no_public_address_is_refused_naming_the_first() {
        let resolved = addresses(&["[::ffff:169.254.169.254]:0", "10.0.0.1:0"]);
        let error = keep_permitted_addresses("metadata.example".into(), resolved, false).expect_err("none public");
        let refusal = error
            .downcast_ref::<ResolvedAddressRefused>()
            .expect("a policy refusal, not a DNS failure");
        assert_eq!(refusal.host, "metadata.example");
        assert_eq!(
            refusal.address,
            "::ffff:169.254.169.254".parse::<IpAddr>().expect("an address")
        );
        assert_eq!(refusal.range, NonPublicRange::LinkLocal);
    }

    #[test]
    fn an_empty_answer_is_a_dns_failure_and_private_answers_pass_when_allowed() {
        let error = keep_permitted_addresses("empty.example".into(), Vec::new(), false).expect_err("nothing");
        assert!(error.downcast_ref::<ResolvedAddressRefused>().is_none());
        let resolved = addresses(&["127.0.0.1:0", "[::1]:0"]);
        let kept = keep_permitted_addresses("localhost".into(), resolved.clone(), true).expect("allowed");
        assert_eq!(kept, resolved);
    }
}
