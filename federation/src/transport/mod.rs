//! Outgoing HTTP for federation: the `Transport` seam that the server's real client and the in-memory test network
//! both implement, the one error type a delivery loop classifies, and the hardened reqwest client behind it.
//!
//! Everything the instance sends to a peer (deliveries, manifest and actor fetches) goes through a
//! `SharedTransport`, so that tests can route requests in memory and production can enforce the outgoing policy
//! (no private addresses, no plain HTTP, no redirects, timeouts, a response cap) in one place.

mod address;
mod http_transport;

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use address::{NonPublicRange, address_is_public, non_public_range};
pub use http_transport::{HttpTransport, OutgoingPolicy};

/// What `Transport::send` returns: the whole response with its body already read under the cap.
pub type TransportFuture = Pin<Box<dyn Future<Output = Result<http::Response<Vec<u8>>, TransportError>> + Send>>;

/// Sends federation requests. Implemented by `HttpTransport` in production and by the in-memory test network.
pub trait Transport: Send + Sync + std::fmt::Debug + 'static {
    /// Sends one request (absolute URI in request.uri()) and returns the whole response, body capped.
    ///
    /// Any status, including 3xx, 4xx and 5xx, is a response and not an error: redirects are never followed.
    fn send(&self, request: http::Request<Vec<u8>>) -> TransportFuture;
}

/// The transport as the instance holds it.
pub type SharedTransport = Arc<dyn Transport>;

/// Which deadline a request missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeoutPhase {
    /// Establishing the connection (DNS, TCP and TLS) took longer than the connect timeout.
    Connect,
    /// The whole exchange, up to the last byte of the response body, took longer than the total timeout.
    Total,
}

/// Why an outgoing request produced no response. `class()` names the variant for metrics and the admin's "last
/// error"; `is_retryable()` tells a delivery loop whether trying again later can help.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// The request names, or its host resolved only to, an address the outgoing policy refuses.
    #[error("address {address} of {host} refused: {range} addresses are not allowed")]
    AddressRefused {
        /// The host as written in the URI.
        host: String,
        /// The (first) refused address.
        address: IpAddr,
        /// Why it is refused.
        range: NonPublicRange,
    },
    /// A scheme other than `https`, or `http` while the policy does not allow it.
    #[error("scheme {scheme:?} refused")]
    SchemeRefused {
        /// The scheme of the request URI.
        scheme: String,
    },
    /// The request itself cannot be sent: no absolute URI, no host, a URI the URL parser rejects.
    #[error("invalid request: {detail}")]
    InvalidRequest {
        /// What is wrong.
        detail: String,
    },
    /// The host name did not resolve.
    #[error("DNS resolution of {host} failed: {detail}")]
    Dns {
        /// The host that failed to resolve.
        host: String,
        /// The resolver's message.
        detail: String,
    },
    /// No TCP or TLS connection could be established (refused, reset, unreachable, certificate rejected).
    #[error("connect failed: {detail}")]
    Connect {
        /// The underlying message chain.
        detail: String,
    },
    /// A deadline passed.
    #[error("{phase:?} timeout after {after:?}")]
    Timeout {
        /// Which deadline.
        phase: TimeoutPhase,
        /// The configured deadline that passed.
        after: Duration,
    },
    /// The response body exceeds the cap, announced by Content-Length or found while reading.
    #[error("response larger than {limit} bytes")]
    ResponseTooLarge {
        /// The cap in bytes.
        limit: usize,
        /// The length the peer announced, when it announced one.
        declared: Option<u64>,
    },
    /// Any other failure while sending the request or reading the response (connection closed mid-way, malformed
    /// HTTP).
    #[error("I/O or protocol error: {detail}")]
    Io {
        /// The underlying message chain.
        detail: String,
    },
    /// The HTTP client could not be built (TLS setup). Raised by `HttpTransport::new`, never by `send`.
    #[error("HTTP client setup failed: {detail}")]
    ClientSetup {
        /// The underlying message.
        detail: String,
    },
}

impl TransportError {
    /// The stable snake_case name of the failure, for metrics labels and a peer's "last error class".
    pub fn class(&self) -> &'static str {
        match self {
            TransportError::AddressRefused { .. } => "address_refused",
            TransportError::SchemeRefused { .. } => "scheme_refused",
            TransportError::InvalidRequest { .. } => "invalid_request",
            TransportError::Dns { .. } => "dns_failed",
            TransportError::Connect { .. } => "connect_failed",
            TransportError::Timeout {
                phase: TimeoutPhase::Connect,
                ..
            } => "connect_timeout",
            TransportError::Timeout {
                phase: TimeoutPhase::Total,
                ..
            } => "total_timeout",
            TransportError::ResponseTooLarge { .. } => "response_too_large",
            TransportError::Io { .. } => "io_error",
            TransportError::ClientSetup { .. } => "client_setup",
        }
    }

    /// True for failures of the network or the peer that may pass (DNS, connect, timeouts, broken connections);
    /// false for refusals by our own policy or the request's shape, which will fail the same way every time, and for
    /// an oversized response, which the peer would send again.
    pub fn is_retryable(&self) -> bool {
        match self {
            TransportError::Dns { .. }
            | TransportError::Connect { .. }
            | TransportError::Timeout { .. }
            | TransportError::Io { .. } => true,
            TransportError::AddressRefused { .. }
            | TransportError::SchemeRefused { .. }
            | TransportError::InvalidRequest { .. }
            | TransportError::ResponseTooLarge { .. }
            | TransportError::ClientSetup { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_a_distinct_class_and_policy_refusals_are_not_retried() {
        let examples = [
            (
                TransportError::AddressRefused {
                    host: "localhost".into(),
                    address: IpAddr::from([127, 0, 0, 1]),
                    range: NonPublicRange::Loopback,
                },
                false,
            ),
            (TransportError::SchemeRefused { scheme: "http".into() }, false),
            (TransportError::InvalidRequest { detail: String::new() }, false),
            (
                TransportError::Dns {
                    host: "peer.example".into(),
                    detail: String::new(),
                },
                true,
            ),
            (TransportError::Connect { detail: String::new() }, true),
            (
                TransportError::Timeout {
                    phase: TimeoutPhase::Connect,
                    after: Duration::from_secs(5),
                },
                true,
            ),
            (
                TransportError::Timeout {
                    phase: TimeoutPhase::Total,
                    after: Duration::from_secs(10),
                },
                true,
            ),
            (
                TransportError::ResponseTooLarge {
                    limit: 1,
                    declared: None,
                },
                false,
            ),
            (TransportError::Io { detail: String::new() }, true),
            (TransportError::ClientSetup { detail: String::new() }, false),
        ];
        let mut classes = std::collections::HashSet::new();
        for (error, retryable) in &examples {
            assert_eq!(error.is_retryable(), *retryable, "{error:?}");
            let class = error.class();
            assert!(
                class.bytes().all(|byte| byte.is_ascii_lowercase() || byte == b'_'),
                "{class}"
            );
            assert!(classes.insert(class), "duplicate class {class}");
        }
    }
}
