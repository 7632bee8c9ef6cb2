//! Load benchmark of federation between two real instances (not a timed test): signed `POST /inbox` requests one
//! instance sends another over loopback sockets, with the accepted requests per second and their latency.
//!
//! Run with `cargo bench --bench federation`. Two instances, alpha and beta, run in this process, each served on its
//! own `127.0.0.1` socket with its realm set to that address (so its public URL is the socket's), plain HTTP and
//! private addresses allowed, the real HTTP transport, and a fresh temporary SQLite database each (with
//! `INTERAI_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres`, then again on two fresh PostgreSQL
//! databases, dropped at the end). They peer the way an admin does it: alpha reads beta's manifest and adds it (a
//! `Follow` is delivered), beta approves alpha with alpha's key fingerprint (an `Accept` is delivered back).
//!
//! Then alpha's senders (1, 4 and 16 at once) each sign and send distinct activities to beta's inbox with
//! `FederationClient::signed_request` and the HTTP transport, one after another; the latency of a request runs from the
//! signing to the response. By default these are `Follow`s of beta's actor with unique IDs: beta accepts each with
//! 202, its federation loop applies it and, since alpha is an active peer, queues and delivers an `Accept` back, as it
//! would in real life. `INTERAI_BENCH_ACTIVITY=accept` sends instead `Accept`s of follows beta never sent, which beta
//! takes with 202 and applies as "ignored", with no answer to deliver.
//!
//! The inbox lets one peer send 5,000 activities/s sustained with a burst of 10,000 (these figures were measured when it was 50/s with a burst of 500) (`PEER_RATE_PER_SECOND`,
//! `PEER_BURST` in `src/apub/inbox.rs`), and there is no setting to raise that; the token bucket reads the
//! instance's clock, which here is the wall clock. So each concurrency is measured twice:
//!
//! - **burst**: after a pause long enough for the bucket to fill (11 s: 500 tokens at 50/s), the first 500 requests.
//!   This is the inbox's raw throughput: none of them is limited unless the inbox takes them faster than the bucket
//!   holds;
//! - **sustained**: the following `INTERAI_BENCH_SECONDS`, with the bucket empty: the limited figure (about 50/s
//!   accepted); the rest are refused with 429, counted apart, and still cost the inbox every check before the
//!   limit, the nonce's write included (the rate limit is step 7, after the nonce).
//!
//! Options (environment variables, all optional):
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `INTERAI_BENCH_SECONDS` | 10 | sustained seconds per concurrency |
//! | `INTERAI_BENCH_BURST_REQUESTS` | 500 | requests of the burst phase |
//! | `INTERAI_BENCH_REFILL_SECONDS` | 11 | pause before each burst |
//! | `INTERAI_BENCH_CONCURRENCY` | `1,4,16` | concurrent senders, in order |
//! | `INTERAI_BENCH_ACTIVITY` | `follow` | `follow` or `accept` (see above) |
//! | `INTERAI_BENCH_BACKENDS` | `sqlite,postgres` | which backends to run (PostgreSQL only with the URL set) |
//! | `INTERAI_BENCH_DATABASE_URL` | — | a PostgreSQL server URL; enables the PostgreSQL run |
//! | `INTERAI_BENCH_WORKER_THREADS` | cores | tokio worker threads (both instances and the senders share them) |

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use federation::transport::{HttpTransport, OutgoingPolicy, SharedTransport};
use http::Method;
use interai::apub::client::FederationClient;
use interai::service::federation::identity::SigningKey;
use url::Url;

use common::{Backend, Side, backends_from_environment, number, peer, percentile, variable};

// ---------------------------------------------------------------- options

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ActivityChoice {
    Follow,
    Accept,
}

#[derive(Debug, Clone)]
struct Options {
    sustained: Duration,
    burst_requests: usize,
    refill: Duration,
    concurrency: Vec<usize>,
    activity: ActivityChoice,
    backends: Vec<Backend>,
    postgres_url: Option<String>,
    worker_threads: Option<usize>,
}

impl Options {
    fn from_environment() -> Options {
        let (postgres_url, backends) = backends_from_environment();
        let concurrency = variable("INTERAI_BENCH_CONCURRENCY")
            .unwrap_or_else(|| "1,4,16".to_owned())
            .split(',')
            .map(|text| {
                text.trim()
                    .parse::<usize>()
                    .unwrap_or_else(|_| panic!("INTERAI_BENCH_CONCURRENCY: {text:?} is not a number"))
                    .max(1)
            })
            .collect();
        let activity = match variable("INTERAI_BENCH_ACTIVITY").as_deref().map(str::trim) {
            None | Some("follow") => ActivityChoice::Follow,
            Some("accept") => ActivityChoice::Accept,
            Some(other) => panic!("INTERAI_BENCH_ACTIVITY: {other:?} is neither follow nor accept"),
        };
        Options {
            sustained: Duration::from_secs_f64(number("INTERAI_BENCH_SECONDS", 10.0_f64).max(0.1)),
            burst_requests: number("INTERAI_BENCH_BURST_REQUESTS", 500_usize).max(1),
            refill: Duration::from_secs_f64(number("INTERAI_BENCH_REFILL_SECONDS", 11.0_f64).max(0.0)),
            concurrency,
            activity,
            backends,
            postgres_url,
            worker_threads: variable("INTERAI_BENCH_WORKER_THREADS").map(|_| number("INTERAI_BENCH_WORKER_THREADS", 2)),
        }
    }
}

// ---------------------------------------------------------------- sending

/// What alpha's senders share.
struct Sender {
    client: FederationClient,
    transport: SharedTransport,
    key: SigningKey,
    inbox: Url,
    alpha_actor: String,
    beta_actor: String,
    alpha_base: String,
    beta_base: String,
    activity: ActivityChoice,
    /// Distinct activity IDs across the whole run.
    sequence: AtomicUsize,
    run: String,
}

/// How one request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Outcome {
    Accepted,
    Duplicate,
    RateLimited,
    TooManyConcurrent,
    Other(u16),
    TransportError,
}

impl Sender {
    fn body(&self) -> Vec<u8> {
        let number = self.sequence.fetch_add(1, Ordering::Relaxed);
        let id = format!("{}/activities/bench-{}-{number}", self.alpha_base, self.run);
        let activity = match self.activity {
            ActivityChoice::Follow => serde_json::json!({
                "@context": "https://www.w3.org/ns/activitystreams",
                "id": id,
                "type": "Follow",
                "actor": self.alpha_actor,
                "object": self.beta_actor,
            }),
            ActivityChoice::Accept => serde_json::json!({
                "@context": "https://www.w3.org/ns/activitystreams",
                "id": id,
                "type": "Accept",
                "actor": self.alpha_actor,
                "object": {
                    "id": format!("{}/activities/never-sent-{}-{number}", self.beta_base, self.run),
                    "type": "Follow",
                    "actor": self.beta_actor,
                    "object": self.alpha_actor,
                },
            }),
        };
        serde_json::to_vec(&activity).expect("JSON")
    }

    /// Signs and sends one activity; its outcome and its latency in milliseconds.
    async fn send_one(&self) -> (Outcome, f64) {
        let body = self.body();
        let started = Instant::now();
        let request = self
            .client
            .signed_request(Method::POST, &self.inbox, Some(body), &self.key)
            .expect("signed request");
        let outcome = match self.transport.send(request).await {
            Ok(response) => {
                let status = response.status().as_u16();
                let reason = serde_json::from_slice::<serde_json::Value>(response.body())
                    .ok()
                    .and_then(|body| {
                        Some((
                            body.get("outcome")?.as_str()?.to_owned(),
                            body.get("reason")?.as_str()?.to_owned(),
                        ))
                    })
                    .unwrap_or_default();
                match (status, reason.0.as_str(), reason.1.as_str()) {
                    (202, "accepted", _) => Outcome::Accepted,
                    (202, "duplicate", _) => Outcome::Duplicate,
                    (429, _, "rate_limited") => Outcome::RateLimited,
                    (429, _, "too_many_concurrent") => Outcome::TooManyConcurrent,
                    (status, _, _) => Outcome::Other(status),
                }
            }
            Err(_) => Outcome::TransportError,
        };
        (outcome, started.elapsed().as_secs_f64() * 1e3)
    }
}

/// When a phase ends.
#[derive(Debug, Clone, Copy)]
enum Length {
    Requests(usize),
    Duration(Duration),
}

/// What a phase measured.
struct Phase {
    elapsed: Duration,
    /// Latencies (ms) by outcome.
    latencies: BTreeMap<Outcome, Vec<f64>>,
}

impl Phase {
    fn count(&self, outcome: Outcome) -> usize {
        self.latencies.get(&outcome).map_or(0, Vec::len)
    }

    fn total(&self) -> usize {
        self.latencies.values().map(Vec::len).sum()
    }

    fn per_second(&self, count: usize) -> f64 {
        count as f64 / self.elapsed.as_secs_f64()
    }

    /// p50 and p99 of `outcome`'s latencies, in ms.
    fn latency(&mut self, outcome: Outcome) -> Option<(f64, f64)> {
        let samples = self.latencies.get_mut(&outcome)?;
        samples.sort_by(f64::total_cmp);
        Some((percentile(samples, 0.5), percentile(samples, 0.99)))
    }

    fn others(&self) -> String {
        let others: Vec<String> = self
            .latencies
            .iter()
            .filter(|(outcome, _)| {
                !matches!(
                    outcome,
                    Outcome::Accepted | Outcome::RateLimited | Outcome::TooManyConcurrent
                )
            })
            .map(|(outcome, samples)| format!("{outcome:?}×{}", samples.len()))
            .collect();
        if others.is_empty() {
            "—".to_owned()
        } else {
            others.join(" ")
        }
    }
}

/// `senders` tasks send one request after another until the phase ends.
async fn run_phase(sender: &Arc<Sender>, senders: usize, length: Length) -> Phase {
    let issued = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(senders);
    for _ in 0..senders {
        let sender = sender.clone();
        let issued = issued.clone();
        tasks.push(tokio::spawn(async move {
            let mut results: Vec<(Outcome, f64)> = Vec::new();
            loop {
                let more = match length {
                    Length::Requests(limit) => issued.fetch_add(1, Ordering::Relaxed) < limit,
                    Length::Duration(duration) => started.elapsed() < duration,
                };
                if !more {
                    return results;
                }
                results.push(sender.send_one().await);
            }
        }));
    }
    let mut latencies: BTreeMap<Outcome, Vec<f64>> = BTreeMap::new();
    for task in tasks {
        for (outcome, latency) in task.await.expect("sender task") {
            latencies.entry(outcome).or_default().push(latency);
        }
    }
    Phase {
        elapsed: started.elapsed(),
        latencies,
    }
}

// ---------------------------------------------------------------- report

struct Row {
    backend: Backend,
    senders: usize,
    phase: &'static str,
    measured: Phase,
}

fn print_rows(rows: &mut [Row]) {
    println!(
        "{:<8} {:>7} {:<10} {:>8} {:>7} {:>10} {:>8} {:>8} {:>9} {:>9} {:>9} {:>10} {:<12}",
        "backend",
        "senders",
        "phase",
        "requests",
        "secs",
        "accepted/s",
        "acc p50",
        "acc p99",
        "429 rate",
        "429 conc",
        "429 p50",
        "requests/s",
        "other"
    );
    for row in rows {
        let accepted = row.measured.count(Outcome::Accepted);
        let (accepted_p50, accepted_p99) = row.measured.latency(Outcome::Accepted).unwrap_or((f64::NAN, f64::NAN));
        let refused_p50 = row
            .measured
            .latency(Outcome::RateLimited)
            .map_or(f64::NAN, |(p50, _)| p50);
        println!(
            "{:<8} {:>7} {:<10} {:>8} {:>7.2} {:>10.1} {:>8.2} {:>8.2} {:>9} {:>9} {:>9.2} {:>10.1} {:<12}",
            row.backend.name(),
            row.senders,
            row.phase,
            row.measured.total(),
            row.measured.elapsed.as_secs_f64(),
            row.measured.per_second(accepted),
            accepted_p50,
            accepted_p99,
            row.measured.count(Outcome::RateLimited),
            row.measured.count(Outcome::TooManyConcurrent),
            refused_p50,
            row.measured.per_second(row.measured.total()),
            row.measured.others(),
        );
    }
    println!("(latencies in ms, from signing to the response; `429 p50` is that of the rate-limited requests)");
}

// ---------------------------------------------------------------- main

async fn run_backend(options: &Options, backend: Backend, rows: &mut Vec<Row>) {
    let alpha = Side::start(backend, options.postgres_url.as_deref()).await;
    let beta = Side::start(backend, options.postgres_url.as_deref()).await;
    let peered = Instant::now();
    peer(&alpha, &beta).await;
    eprintln!(
        "{}: alpha {} and beta {} peered over loopback in {:.2} s",
        backend.name(),
        alpha.realm,
        beta.realm,
        peered.elapsed().as_secs_f64()
    );
    let beta_view = alpha.federation.peer_view(&beta.realm).await.expect("beta is a peer");
    let transport: SharedTransport = Arc::new(
        HttpTransport::new(OutgoingPolicy {
            allow_private_addresses: true,
            allow_http: true,
            user_agent: format!("interai-bench (+{})", alpha.base_url),
            ..OutgoingPolicy::default()
        })
        .expect("HTTP transport"),
    );
    let sender = Arc::new(Sender {
        client: alpha.client.clone(),
        transport,
        key: alpha.federation.signing_key().await.expect("alpha's key"),
        inbox: Url::parse(&beta_view.peer.inbox_url).expect("beta's inbox URL"),
        alpha_actor: alpha.federation.instance_actor_url(),
        beta_actor: beta_view.peer.actor_url.clone(),
        alpha_base: alpha.base_url.clone(),
        beta_base: beta.base_url.clone(),
        activity: options.activity,
        sequence: AtomicUsize::new(0),
        run: ulid::Ulid::generate().to_string().to_ascii_lowercase(),
    });
    // A few requests open the connections and make sure the path works.
    let warmup = run_phase(&sender, 2, Length::Requests(20)).await;
    assert_eq!(
        warmup.count(Outcome::Accepted),
        20,
        "the warm-up requests are accepted: {}",
        warmup.others()
    );
    for &senders in &options.concurrency {
        eprintln!(
            "{}: {senders} senders: waiting {:.0} s for the peer's token bucket to fill",
            backend.name(),
            options.refill.as_secs_f64()
        );
        tokio::time::sleep(options.refill).await;
        let burst = run_phase(&sender, senders, Length::Requests(options.burst_requests)).await;
        let sustained = run_phase(&sender, senders, Length::Duration(options.sustained)).await;
        rows.push(Row {
            backend,
            senders,
            phase: "burst",
            measured: burst,
        });
        rows.push(Row {
            backend,
            senders,
            phase: "sustained",
            measured: sustained,
        });
    }
    let intake = sender.sequence.load(Ordering::Relaxed);
    eprintln!("{}: {intake} activities sent in all", backend.name());
    alpha.stop().await;
    beta.stop().await;
}

fn main() {
    let options = Options::from_environment();
    println!(
        "federation benchmark: signed POST /inbox from alpha to beta over loopback ({:?} activities; burst of {} after {:.0} s, then {:.0} s sustained; per-peer limit {}/s, burst {})",
        options.activity,
        options.burst_requests,
        options.refill.as_secs_f64(),
        options.sustained.as_secs_f64(),
        interai::apub::inbox::PEER_RATE_PER_SECOND,
        interai::apub::inbox::PEER_BURST,
    );
    let runtime = common::runtime(options.worker_threads);
    let mut rows = Vec::new();
    runtime.block_on(async {
        for &backend in &options.backends {
            run_backend(&options, backend, &mut rows).await;
        }
    });
    print_rows(&mut rows);
}
