//! The deadline of every request, body included, and the slowest a body may arrive: a client that opens a request
//! and stalls gets 408 and its connection is closed, so stalled requests cannot pile up and hold the server.
//!
//! hyper's header read timeout (`instance::serve_connections`) ends a request whose header never completes; once the
//! header is in, nothing else bounded the time a handler waits for the body. Here every request runs under one
//! deadline from the moment its header is read to its answer, and its body is paced: after a grace period the bytes
//! received must keep up with a minimum average rate, so a large body that trickles is cut long before the deadline
//! (a body of `n` bytes may take `grace + n / rate`). A request over either limit is answered 408 with
//! `Connection: close` and a JSON body in the spec's error form.
//!
//! The timers are tokio's, like hyper's own: they bound real socket time, which the instance's injected clock (the
//! time of business rules) does not model.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::time::{Instant, Sleep};

/// How long a request may take and how slowly its body may arrive.
#[derive(Debug, Clone, Copy)]
pub struct RequestDeadline {
    /// From the end of the header to the answer's head.
    pub timeout: Duration,
    /// The minimum average body rate once the grace period is over, in bytes per second (at least 1).
    pub min_body_bytes_per_second: u64,
    /// How long a body may take before the minimum rate applies.
    pub body_rate_grace: Duration,
}

impl RequestDeadline {
    /// The limits of a configuration.
    pub fn from_config(config: &crate::config::Config) -> RequestDeadline {
        RequestDeadline {
            timeout: Duration::from_secs(config.request_timeout_seconds),
            min_body_bytes_per_second: config.min_body_bytes_per_second.max(1),
            body_rate_grace: Duration::from_secs(crate::config::BODY_RATE_GRACE_SECONDS),
        }
    }

    /// The latest moment by which a body that started at `started` must have delivered `received` more bytes
    /// than it has: the grace period plus the time `received` bytes take at the minimum rate.
    fn body_allowance(&self, started: Instant, received: u64) -> Instant {
        let paced = Duration::from_secs_f64(received as f64 / self.min_body_bytes_per_second as f64);
        started + self.body_rate_grace + paced
    }
}

/// The layer: runs the request under the deadline with its body paced, and answers 408 when either is exceeded.
pub async fn enforce(State(limits): State<RequestDeadline>, request: Request, next: Next) -> Response {
    let too_slow = Arc::new(AtomicBool::new(false));
    // A request without a body (most GETs) has nothing to pace: no timer for it.
    let paced = request.map(|body| {
        if body.is_end_stream() {
            body
        } else {
            Body::new(PacedBody::new(body, limits, too_slow.clone()))
        }
    });
    match tokio::time::timeout(limits.timeout, next.run(paced)).await {
        // A handler that met the slow body's error answers with its own refusal (the inbox's 413, a JSON-RPC parse
        // error); what really happened is the timeout, so that is the answer.
        Ok(_) if too_slow.load(Ordering::Acquire) => request_timeout(limits, "the request body arrived too slowly"),
        Ok(response) => response,
        Err(_) => request_timeout(limits, "the request did not complete in time"),
    }
}

/// 408 with `Connection: close` (the rest of a stalled body is never read, so the connection cannot be reused).
fn request_timeout(limits: RequestDeadline, message: &str) -> Response {
    tracing::info!(
        timeout_seconds = limits.timeout.as_secs(),
        min_body_bytes_per_second = limits.min_body_bytes_per_second,
        cause = message,
        "request timed out; closing its connection"
    );
    let body = json!({
        "error": {
            "code": "validation_failed",
            "message": format!(
                "{message}: a request must complete within {} s and send its body at {} bytes/s or more after its \
                 first {} s",
                limits.timeout.as_secs(),
                limits.min_body_bytes_per_second,
                limits.body_rate_grace.as_secs()
            ),
            "details": {
                "reason": "request_timeout",
                "request_timeout_seconds": limits.timeout.as_secs(),
                "min_body_bytes_per_second": limits.min_body_bytes_per_second,
            }
        }
    });
    let mut response = (StatusCode::REQUEST_TIMEOUT, axum::Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Why a paced body stopped.
#[derive(Debug, thiserror::Error)]
#[error("the request body arrived more slowly than the minimum rate")]
struct BodyTooSlow;

/// A request body that fails once it falls behind the minimum rate (see [`RequestDeadline::body_allowance`]),
/// marking `too_slow` so that [`enforce`] answers 408 whatever the handler made of the error.
struct PacedBody {
    inner: Body,
    limits: RequestDeadline,
    started: Instant,
    received: u64,
    /// Fires at the current allowance; moved later as bytes arrive.
    allowance: Pin<Box<Sleep>>,
    too_slow: Arc<AtomicBool>,
}

impl PacedBody {
    fn new(inner: Body, limits: RequestDeadline, too_slow: Arc<AtomicBool>) -> PacedBody {
        let started = Instant::now();
        PacedBody {
            inner,
            limits,
            started,
            received: 0,
            allowance: Box::pin(tokio::time::sleep_until(limits.body_allowance(started, 0))),
            too_slow,
        }
    }
}

impl HttpBody for PacedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::BoxError>>> {
        match Pin::new(&mut self.inner).poll_frame(context) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    self.received = self.received.saturating_add(data.len() as u64);
                    let next = self.limits.body_allowance(self.started, self.received);
                    self.allowance.as_mut().reset(next);
                }
                return Poll::Ready(Some(Ok(frame)));
            }
            Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(error.into()))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        if self.allowance.as_mut().poll(context).is_ready() {
            self.too_slow.store(true, Ordering::Release);
            return Poll::Ready(Some(Err(Box::new(BodyTooSlow))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::post;
    use tower::ServiceExt;

    fn limits() -> RequestDeadline {
        RequestDeadline {
            timeout: Duration::from_secs(30),
            min_body_bytes_per_second: 1000,
            body_rate_grace: Duration::from_secs(5),
        }
    }

    fn router(limits: RequestDeadline) -> Router {
        Router::new()
            .route("/", post(|body: Bytes| async move { format!("{} bytes", body.len()) }))
            .layer(axum::middleware::from_fn_with_state(limits, enforce))
    }

    /// A body whose chunks arrive through a channel the test feeds, so time and bytes are the test's to move.
    struct FedBody(tokio::sync::mpsc::Receiver<Bytes>);

    impl HttpBody for FedBody {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            context: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
            self.0
                .poll_recv(context)
                .map(|chunk| chunk.map(|bytes| Ok(http_body::Frame::data(bytes))))
        }
    }

    fn fed_body() -> (tokio::sync::mpsc::Sender<Bytes>, Body) {
        let (sender, receiver) = tokio::sync::mpsc::channel(16);
        (sender, Body::new(FedBody(receiver)))
    }

    async fn status_of(router: Router, body: Body) -> (StatusCode, Option<HeaderValue>) {
        let request = Request::post("/").body(body).expect("request");
        let response = router.oneshot(request).await.expect("answer");
        (response.status(), response.headers().get(header::CONNECTION).cloned())
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stalls_gets_408_after_the_grace_period() {
        let (sender, body) = fed_body();
        sender.send(Bytes::from_static(b"half a bo")).await.expect("sent");
        let started = Instant::now();
        let (status, connection) = status_of(router(limits()), body).await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(connection, Some(HeaderValue::from_static("close")));
        // Nine bytes buy 9 ms at 1,000 bytes/s on top of the five seconds' grace.
        assert_eq!(started.elapsed(), Duration::from_millis(5009));
        drop(sender);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_keeps_up_with_the_rate_is_read_whole() {
        let (sender, body) = fed_body();
        let feeder = tokio::spawn(async move {
            // 2,000 bytes/s for twelve seconds: well past the grace period, above the minimum rate.
            for _ in 0..24 {
                sender.send(Bytes::from(vec![b'x'; 1000])).await.expect("sent");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        let request = Request::post("/").body(body).expect("request");
        let response = router(limits()).oneshot(request).await.expect("answer");
        assert_eq!(response.status(), StatusCode::OK);
        let text = axum::body::to_bytes(response.into_body(), 1024).await.expect("body");
        assert_eq!(&text[..], b"24000 bytes");
        feeder.await.expect("feeder");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_trickles_below_the_rate_is_cut_before_the_deadline() {
        let (sender, body) = fed_body();
        let feeder = tokio::spawn(async move {
            // 100 bytes/s: a tenth of the minimum rate, never stalled for long.
            for _ in 0..300 {
                if sender.send(Bytes::from(vec![b'x'; 10])).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let started = Instant::now();
        let (status, _) = status_of(router(limits()), body).await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        let elapsed = started.elapsed();
        assert!(
            elapsed > Duration::from_secs(5) && elapsed < Duration::from_secs(6),
            "cut at {elapsed:?}"
        );
        feeder.await.expect("feeder");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_over_the_deadline_gets_408_even_while_its_body_keeps_up() {
        let limits = RequestDeadline {
            timeout: Duration::from_secs(10),
            ..limits()
        };
        let (sender, body) = fed_body();
        let feeder = tokio::spawn(async move {
            for _ in 0..100 {
                if sender.send(Bytes::from(vec![b'x'; 5000])).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        let started = Instant::now();
        let (status, connection) = status_of(router(limits), body).await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(connection, Some(HeaderValue::from_static("close")));
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        feeder.await.expect("feeder");
    }
}
