//! Load benchmark of replication between two real instances (not a timed test): how fast what alpha publishes is
//! pushed to beta and applied there, how long one item takes from alpha's commit to beta's intake, and how long a
//! new peer takes to backfill a large instance.
//!
//! Run with `cargo bench --bench replication`. The instances are those of `benches/federation.rs` (`Side` in
//! `benches/common`): each served on its own `127.0.0.1` socket with its realm set to that address, plain HTTP and
//! private addresses allowed, the real HTTP transport, the system clock, a fresh temporary SQLite database each
//! (with `INTERAI_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres`, then again on fresh PostgreSQL
//! databases, dropped at the end), peered the way an admin does it (manifest, `add_peer`, approval with the key
//! fingerprint). Both run their served federation loop, as a server does; the benchmark only publishes, through
//! the service with agents that hold the `publish` scope, and watches. Items are small procedures (about 500 bytes
//! of Markdown, one claim, two tags) in the default space, which is federated. Two settings differ from the
//! defaults: `INTERAI_WRITES_PER_HOUR=100000000` (the per-controller write limit would stop the publishers) and,
//! for every phase but the backfill, `INTERAI_FEDERATION_PULL_INTERVAL_SECONDS=86400`, so that beta's anti-entropy pull
//! (every 60 s by default) does not fetch during a phase what push is being timed on.
//!
//! Five phases per backend, each on its own instances (`INTERAI_BENCH_PHASES` chooses):
//!
//! - **delivery** (sustained delivery of a backlog). The benchmark takes alpha's push lease for beta (what alpha's
//!   loop takes before a round; it holds for 30 s, and is only granted while there is something to push, so a
//!   first item is published to take it), publishes `INTERAI_BENCH_ITEMS` items with
//!   `INTERAI_BENCH_PUBLISHERS` concurrent publishers, checks that nothing was pushed meanwhile, then gives the
//!   lease back and wakes alpha's loop. From then on the served loops do everything: alpha's pushes rounds of up to
//!   256 events with 48 requests in flight to beta's inbox, which verifies each and applies the requests waiting
//!   together in the transaction that stores them (or, while activities are queued, and on PostgreSQL for groups of
//!   more than 8, queues them for beta's intake, which applies the queue in batches). The clock runs from giving the
//!   lease back; **delivered** is when alpha's backlog to beta is empty (every activity answered 202, so durably
//!   stored on beta), **applied** is the intake log's stamp of the
//!   last item beta applied, checked by beta's queue being empty. activities/s = items / that time. The backlog
//!   and the queue depth are read every 25 ms; the queue's maximum says whether beta's intake (a deep queue) or
//!   the delivery (a short one) is what limits.
//! - **live**: the same number of items published as fast as the publishers can while replication runs; the write
//!   rate, the rate at which beta applied them from the first publish to the last application, how long beta took
//!   to catch up after the last write, and each item's lag (below).
//! - **lag**: one publish every 1/`INTERAI_BENCH_RATE` s (100/s) for `INTERAI_BENCH_SECONDS` (10), after
//!   `INTERAI_BENCH_WARMUP_SECONDS` (1) of the same that is not counted. An item's lag
//!   runs from its commit on alpha (the clock read when `publish` returned) to its application on beta, read two
//!   ways: the **stamp** of beta's intake log line (written in the applying transaction, before its commit), and
//!   **seen**: when a poller, reading beta's intake lines every `INTERAI_BENCH_POLL_MS` (1 ms) on a database
//!   connection of its own (those stamped from 20 ms before the newest one it saw), first found it (after its
//!   query returned, so the commit, the poll interval and the poll's own query are inside).
//!   Both instances read the same system clock in one process, so the two times compare directly.
//! - **peers** (light traffic to many peers): alpha and `INTERAI_BENCH_PEERS` (10) betas, all peered with alpha,
//!   in one process; alpha publishes one item every 1/`INTERAI_BENCH_PEERS_RATE` s (10/s) for
//!   `INTERAI_BENCH_SECONDS`, after the same warm-up as the lag phase. Every item goes to every beta. Reported: the
//!   cores the process kept busy over the paced publishing (to the last beta's last application), that divided by
//!   the peers (what one more peer costs at this pace, publishing shared by all), the CPU per delivered item, and
//!   the stamp lag of every item on every beta (no poller, so its CPU is not in the figure).
//! - **backfill**: alpha is seeded with `INTERAI_BENCH_BACKFILL_ITEMS` items by `interai::seed` (the knowledge and
//!   evidence of `interai admin seed`: claims, subjects, relations, second revisions, usage, reviews, ratings, of
//!   which the content replicates), with the default pull interval. Then a fresh beta is introduced (alpha adds it,
//!   alpha's Follow arrives) and approves alpha; the clock runs from the approval, after which only the served loops
//!   work: beta reads alpha's snapshot page by page (200 objects a page, each object's origin proof checked), queues
//!   the pages and applies them. **fetched** is when beta's pull cursor is set (the snapshot read to its end),
//!   **applied** when beta's queue is empty as well. The count is of the objects beta applied (spaces, current
//!   revisions, tombstones), from its intake log.
//!
//! CPU: the process's user and system time over the phase divided by its wall time (cores used by both instances
//! and the benchmark; with PostgreSQL the server's processes are not in it), and how busy the machine's cores were
//! (from `/proc/stat`; other work on the machine counts too).
//!
//! Options (environment variables, all optional):
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `INTERAI_BENCH_ITEMS` | 5000 | items of the delivery and live phases (at most 10,000: beta's inbox lets one peer burst 10,000, then 5,000/s) |
//! | `INTERAI_BENCH_PUBLISHERS` | 4 | concurrent publishers (agents of their own controllers) |
//! | `INTERAI_BENCH_RATE` | 100 | publishes per second in the lag phase |
//! | `INTERAI_BENCH_SECONDS` | 10 | length of the lag phase |
//! | `INTERAI_BENCH_POLL_MS` | 1 | the lag phase's poll interval of beta's intake log |
//! | `INTERAI_BENCH_WARMUP_SECONDS` | 1 | the lag phase first publishes this long at the same pace, not counted (the first items after a start meet cold statement caches on every pooled connection; their worst lag is printed) |
//! | `INTERAI_BENCH_LAG_DUMP` | — | a file prefix: the lag phase writes `{prefix}.{backend}`, one line per item (warm-up first): commit time, content ID, stamp lag and seen lag in ms |
//! | `INTERAI_BENCH_PEERS` | 10 | betas of the peers phase |
//! | `INTERAI_BENCH_PEERS_RATE` | 10 | publishes per second in the peers phase |
//! | `INTERAI_BENCH_BACKFILL_ITEMS` | 100000 | items seeded on alpha for the backfill |
//! | `INTERAI_BENCH_PHASES` | `delivery,live,lag,peers,backfill` | which phases to run, in this order |
//! | `INTERAI_BENCH_BACKENDS` | `sqlite,postgres` | which backends to run (PostgreSQL only with the URL set) |
//! | `INTERAI_BENCH_DATABASE_URL` | — | a PostgreSQL server URL; enables the PostgreSQL run |
//! | `INTERAI_BENCH_WORKER_THREADS` | cores | tokio worker threads (both instances and the benchmark share them) |
//! | `INTERAI_BENCH_TRACE` | — | a file: every debug event of both instances and every SQL statement, stamped to the microsecond (a timeline of each activity's way; run the lag phase at a low `INTERAI_BENCH_RATE`); instead of the profile |
//! | `INTERAI_BENCH_PROFILE` | — | when set, prints for each phase the SQL statements that took the most time (sqlx's DEBUG statement events) and the served requests' durations (the request log); costs some throughput |

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use interai::apub::replicate::limits::{PEERS_PER_PASS, PUSH_LEASE};
use interai::clock::{Clock, SystemClock};
use interai::domain::{AuthenticatedActor, PeerState};
use interai::service::Service;
use interai::service::content::PublishRequest;
use interai::service::federation::cursors::LeasedPeer;
use interai::service::writes::{CallMetadata, WriteOperation};
use serde_json::json;
use sqlx::Connection;

use common::profile::{install_profile, profile_report, profile_start};
use common::{Backend, Side, Spread, agents, backends_from_environment, introduce, number, peer, variable};

/// The delivery phase's targets: activities per second, and the lag phase's p50 and p99 in ms.
const TARGET_PER_SECOND: f64 = 2000.0;
const TARGET_P50_MS: f64 = 5.0;
const TARGET_P99_MS: f64 = 25.0;
/// How often the phases read alpha's backlog and beta's queue (each read costs the instances: counting alpha's
/// backlog is a scan of its outbox after the cursor).
const WATCH_INTERVAL: Duration = Duration::from_millis(25);
/// How far before the newest intake line seen the lag phase's poller reads again. Beta applies one batch after
/// another and a batch's lines become visible together, so a line stamped before one already seen is visible
/// already; the margin covers lines stamped in the same microsecond.
const POLL_MARGIN_MS: i64 = 20;

// ---------------------------------------------------------------- options

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Delivery,
    Live,
    Lag,
    Peers,
    Backfill,
}

#[derive(Debug, Clone)]
struct Options {
    items: usize,
    publishers: usize,
    rate: f64,
    seconds: f64,
    warmup_seconds: f64,
    poll: Duration,
    lag_dump: Option<String>,
    peers: usize,
    peers_rate: f64,
    backfill_items: u64,
    phases: Vec<Phase>,
    backends: Vec<Backend>,
    postgres_url: Option<String>,
    worker_threads: Option<usize>,
}

impl Options {
    fn from_environment() -> Options {
        let (postgres_url, backends) = backends_from_environment();
        let phases = variable("INTERAI_BENCH_PHASES")
            .unwrap_or_else(|| "delivery,live,lag,peers,backfill".to_owned())
            .split(',')
            .map(|name| match name.trim() {
                "delivery" => Phase::Delivery,
                "live" => Phase::Live,
                "lag" => Phase::Lag,
                "peers" => Phase::Peers,
                "backfill" => Phase::Backfill,
                other => panic!("INTERAI_BENCH_PHASES: unknown phase {other:?}"),
            })
            .collect();
        Options {
            items: number("INTERAI_BENCH_ITEMS", 5000_usize).max(1),
            publishers: number("INTERAI_BENCH_PUBLISHERS", 4_usize).max(1),
            rate: number("INTERAI_BENCH_RATE", 100.0_f64).max(1.0),
            seconds: number("INTERAI_BENCH_SECONDS", 10.0_f64).max(0.1),
            warmup_seconds: number("INTERAI_BENCH_WARMUP_SECONDS", 1.0_f64).max(0.0),
            lag_dump: variable("INTERAI_BENCH_LAG_DUMP"),
            poll: Duration::from_secs_f64(number("INTERAI_BENCH_POLL_MS", 1.0_f64).max(0.0) / 1e3),
            peers: number("INTERAI_BENCH_PEERS", 10_usize).max(1),
            peers_rate: number("INTERAI_BENCH_PEERS_RATE", 10.0_f64).max(0.1),
            backfill_items: number("INTERAI_BENCH_BACKFILL_ITEMS", 100_000_u64).max(1),
            phases,
            backends,
            postgres_url,
            worker_threads: variable("INTERAI_BENCH_WORKER_THREADS").map(|_| number("INTERAI_BENCH_WORKER_THREADS", 2)),
        }
    }
}

/// The settings both instances of a pair get.
fn settings(pull_interval_seconds: u32) -> Vec<(&'static str, String)> {
    vec![
        ("INTERAI_WRITES_PER_HOUR", "100000000".to_owned()),
        (
            "INTERAI_FEDERATION_PULL_INTERVAL_SECONDS",
            pull_interval_seconds.to_string(),
        ),
    ]
}

async fn pair(options: &Options, backend: Backend) -> (Side, Side) {
    let settings = settings(86_400);
    let alpha = Side::start_with(backend, options.postgres_url.as_deref(), &settings).await;
    let beta = Side::start_with(backend, options.postgres_url.as_deref(), &settings).await;
    peer(&alpha, &beta).await;
    (alpha, beta)
}

// ---------------------------------------------------------------- publishing

fn now() -> DateTime<Utc> {
    SystemClock.now()
}

/// Agents with the `publish` scope, each of a controller of its own.
async fn publishers(service: &Service, count: usize) -> Vec<AuthenticatedActor> {
    agents(service, count, "read,publish", "Benchmark").await
}

/// A small procedure, distinct by `number`.
fn item(run: &str, number: usize) -> PublishRequest {
    let title = format!("Rotate the signing key of replica set {run}-{number}");
    PublishRequest {
        content_type: "procedure".to_owned(),
        title: title.clone(),
        summary: format!(
            "How to rotate the signing key of replica set {number} without dropping a delivery, checked on three \
             realms."
        ),
        body_markdown: format!(
            "# {title}\n\nThe old key stays published until every peer has fetched the new one.\n\n\
             1. Generate the new key and publish it next to the old one.\n\
             2. Wait one manifest refresh interval, then sign with the new key only.\n\
             3. Watch the inbox log of each peer for `unknown_key` refusals; there should be none.\n\
             4. Retire the old key after the longest signature validity has passed.\n\n\
             Replica set {number} took four minutes end to end; most of it was the wait in step 2.\n"
        ),
        claims: vec![format!(
            "Replica set {run}-{number} kept delivering while its signing key was rotated."
        )],
        tags: vec!["replication".to_owned(), "key-rotation".to_owned()],
        ..PublishRequest::default()
    }
}

/// Publishes one item; its content ID and when `publish` returned (the commit is just before).
async fn publish(service: &Service, caller: &AuthenticatedActor, request: PublishRequest) -> (String, DateTime<Utc>) {
    let outcome = service
        .publish(
            caller,
            &CallMetadata::internal(WriteOperation::Publish, json!({})),
            request,
        )
        .await
        .expect("publish succeeds");
    (outcome.id, now())
}

/// What a run of publishes wrote: each item's content ID and commit time, and when the run began and ended.
struct Written {
    items: Vec<(String, DateTime<Utc>)>,
    started_at: DateTime<Utc>,
    elapsed: Duration,
}

impl Written {
    fn per_second(&self) -> f64 {
        self.items.len() as f64 / self.elapsed.as_secs_f64()
    }
}

/// `count` items, each publisher publishing one after another until all are written.
async fn publish_many(service: &Service, callers: &[AuthenticatedActor], run: &str, count: usize) -> Written {
    let next = Arc::new(AtomicUsize::new(0));
    let started_at = now();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for caller in callers {
        let service = service.clone();
        let caller = caller.clone();
        let next = next.clone();
        let run = run.to_owned();
        tasks.spawn(async move {
            let mut written = Vec::new();
            loop {
                let number = next.fetch_add(1, Ordering::Relaxed);
                if number >= count {
                    return written;
                }
                written.push(publish(&service, &caller, item(&run, number)).await);
            }
        });
    }
    let mut items = Vec::with_capacity(count);
    while let Some(joined) = tasks.join_next().await {
        items.extend(joined.expect("publisher task"));
    }
    Written {
        items,
        started_at,
        elapsed: started.elapsed(),
    }
}

// ---------------------------------------------------------------- watching

/// A connection of the benchmark's own to an instance's database, for the cheap reads the phases watch with: indexed
/// lookups, where the service's views count the whole backlog or sort the whole intake log, too much for a poll
/// every millisecond or few.
enum Reader {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl Reader {
    async fn open(side: &Side) -> Reader {
        let database = side.database();
        if database.is_postgres {
            Reader::Postgres(sqlx::PgConnection::connect(&database.url).await.expect("connect"))
        } else {
            Reader::Sqlite(sqlx::SqliteConnection::connect(&database.url).await.expect("connect"))
        }
    }

    /// The position of the newest outbox event.
    async fn outbox_head(&mut self) -> i64 {
        const HEAD: &str = "SELECT COALESCE(MAX(seq), 0) FROM outbox_events";
        match self {
            Reader::Sqlite(connection) => sqlx::query_scalar(HEAD).fetch_one(connection).await,
            Reader::Postgres(connection) => sqlx::query_scalar(HEAD).fetch_one(connection).await,
        }
        .expect("outbox head")
    }

    /// The push cursor for `peer`: every outbox event up to it was delivered (answered 202) or dead-lettered.
    async fn push_cursor(&mut self, peer: &str) -> i64 {
        const CURSOR: &str = "SELECT push_cursor FROM peer_replication WHERE peer_realm = $1";
        match self {
            Reader::Sqlite(connection) => sqlx::query_scalar(CURSOR).bind(peer).fetch_one(connection).await,
            Reader::Postgres(connection) => sqlx::query_scalar(CURSOR).bind(peer).fetch_one(connection).await,
        }
        .expect("push cursor")
    }

    /// The `applied` intake lines of `peer` stamped after `since`: detail and stamp.
    async fn applied_since(&mut self, peer: &str, since: DateTime<Utc>) -> Vec<(String, DateTime<Utc>)> {
        const APPLIED: &str = "SELECT detail, created_at FROM federation_intake \
                               WHERE peer_realm = $1 AND created_at > $2 AND outcome = 'applied'";
        match self {
            Reader::Sqlite(connection) => {
                sqlx::query_as(APPLIED)
                    .bind(peer)
                    .bind(since)
                    .fetch_all(connection)
                    .await
            }
            Reader::Postgres(connection) => {
                sqlx::query_as(APPLIED)
                    .bind(peer)
                    .bind(since)
                    .fetch_all(connection)
                    .await
            }
        }
        .expect("intake lines")
    }
}

async fn queue_depth(side: &Side) -> i64 {
    side.federation.inbound_queue_depth().await.expect("queue depth")
}

/// What beta's intake log says of alpha's activities: when each content item was applied (the line's stamp;
/// the first, should there be several), and the lines by outcome.
struct Intake {
    applied: HashMap<String, DateTime<Utc>>,
    outcomes: BTreeMap<String, usize>,
}

async fn intake(beta: &Side, alpha: &Side) -> Intake {
    let lines = beta
        .federation
        .intake_log(Some(&alpha.realm), 100_000_000)
        .await
        .expect("intake log");
    let mut applied: HashMap<String, DateTime<Utc>> = HashMap::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for line in lines {
        *outcomes.entry(line.outcome.clone()).or_default() += 1;
        if line.outcome == "applied"
            && let Some(id) = line.detail.split_whitespace().next()
        {
            let at = applied.entry(id.to_owned()).or_insert(line.created_at);
            *at = (*at).min(line.created_at);
        }
    }
    Intake { applied, outcomes }
}

impl Intake {
    /// Outcomes counted over the whole log, `applied×N ...`.
    fn describe(&self) -> String {
        self.outcomes
            .iter()
            .map(|(outcome, count)| format!("{outcome}×{count}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Lags in ms of `items` against the times in `applied`, sorted, and how many items have no time.
fn lags(items: &[(String, DateTime<Utc>)], applied: &HashMap<String, DateTime<Utc>>) -> (Vec<f64>, usize) {
    let mut lags = Vec::with_capacity(items.len());
    let mut missing = 0;
    for (id, committed) in items {
        match applied.get(id) {
            Some(at) => lags.push((*at - *committed).num_microseconds().unwrap_or(i64::MAX) as f64 / 1e3),
            None => missing += 1,
        }
    }
    lags.sort_by(f64::total_cmp);
    (lags, missing)
}

/// The latest of `items`' application times, and how many fell in each fifth of the span from `from` to it.
fn last_applied(
    items: &[(String, DateTime<Utc>)],
    applied: &HashMap<String, DateTime<Utc>>,
    from: DateTime<Utc>,
) -> (Option<DateTime<Utc>>, [usize; 5]) {
    let times: Vec<DateTime<Utc>> = items.iter().filter_map(|(id, _)| applied.get(id).copied()).collect();
    let Some(last) = times.iter().max().copied() else {
        return (None, [0; 5]);
    };
    let span = (last - from).num_microseconds().unwrap_or(1).max(1) as f64;
    let mut fifths = [0; 5];
    for at in times {
        let position = (at - from).num_microseconds().unwrap_or(0) as f64 / span;
        fifths[((position * 5.0) as usize).min(4)] += 1;
    }
    (Some(last), fifths)
}

fn seconds_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_microseconds().unwrap_or(0) as f64 / 1e6
}

/// CPU time of this process and of the machine, from `/proc` (Linux; nothing elsewhere).
struct CpuMeter {
    started: Instant,
    process: Option<f64>,
    machine: Option<(u64, u64)>,
}

/// How busy the CPUs were over a phase.
#[derive(Debug, Clone, Copy)]
struct CpuUse {
    /// Cores this process kept busy on average.
    process_cores: f64,
    /// The machine's cores busy, as a share of all of them.
    machine_busy: f64,
    /// The wall time measured.
    wall: Duration,
}

impl CpuMeter {
    /// Starts measuring (and a profiled window, with `INTERAI_BENCH_PROFILE`).
    fn start() -> CpuMeter {
        profile_start();
        CpuMeter {
            started: Instant::now(),
            process: process_cpu_seconds(),
            machine: machine_jiffies(),
        }
    }

    fn stop(&self) -> CpuUse {
        let elapsed = self.started.elapsed();
        let wall = elapsed.as_secs_f64();
        let process_cores = match (self.process, process_cpu_seconds()) {
            (Some(before), Some(after)) => (after - before) / wall,
            _ => f64::NAN,
        };
        let machine_busy = match (self.machine, machine_jiffies()) {
            (Some((busy_before, total_before)), Some((busy, total))) if total > total_before => {
                (busy - busy_before) as f64 / (total - total_before) as f64
            }
            _ => f64::NAN,
        };
        CpuUse {
            process_cores,
            machine_busy,
            wall: elapsed,
        }
    }
}

impl CpuUse {
    fn show(&self) -> String {
        format!("{:.2} / {:.0} %", self.process_cores, self.machine_busy * 100.0)
    }
}

/// User and system seconds of this process (`/proc/self/stat`, in clock ticks of 1/100 s, Linux's value).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    Some((user + system) as f64 / 100.0)
}

/// Busy and total jiffies of all cores (`/proc/stat`).
fn machine_jiffies() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|value| value.parse().ok())
        .collect();
    if values.len() < 5 {
        return None;
    }
    let total: u64 = values.iter().sum();
    let idle = values[3] + values[4];
    Some((total - idle, total))
}

/// Waits until alpha has delivered everything it has to beta and beta's queue is empty; the largest queue depth
/// seen.
async fn drain(alpha: &mut Reader, beta: &Side, limit: Duration, what: &str) -> i64 {
    let started = Instant::now();
    let head = alpha.outbox_head().await;
    let mut deepest = 0;
    loop {
        let backlog = head - alpha.push_cursor(&beta.realm).await;
        let depth = queue_depth(beta).await;
        deepest = deepest.max(depth);
        if backlog <= 0 && depth == 0 {
            return deepest;
        }
        assert!(
            started.elapsed() < limit,
            "{what}: not drained after {:.0} s (alpha's backlog {backlog}, beta's queue {depth})",
            limit.as_secs_f64()
        );
        tokio::time::sleep(WATCH_INTERVAL).await;
    }
}

// ---------------------------------------------------------------- phases

struct DeliveryRow {
    backend: Backend,
    items: usize,
    write: f64,
    delivered: f64,
    applied: f64,
    drained: f64,
    deepest_queue: i64,
    fifths: [usize; 5],
    cpu: CpuUse,
    outcomes: String,
}

/// Takes alpha's push lease for beta, as alpha's loop does before a round, so that nothing is pushed until it is
/// given back. A peer's push is leased only while alpha has something to send it, so a first item is published and
/// the lease taken right after, before alpha's loop (woken by the commit) takes it; when the loop wins, it pushes
/// that item and another is tried. Returns the lease and the item in the backlog.
async fn hold_push(
    alpha: &Side,
    alpha_db: &mut Reader,
    beta: &Side,
    caller: &AuthenticatedActor,
    run: &str,
) -> (LeasedPeer, (String, DateTime<Utc>)) {
    for attempt in 0..50 {
        let primer = publish(&alpha.service, caller, item(&format!("{run}-primer"), attempt)).await;
        let leased = alpha
            .federation
            .lease_push(PEERS_PER_PASS, PUSH_LEASE)
            .await
            .expect("lease push");
        let mut ours = None;
        for peer in leased {
            if peer.peer.realm == beta.realm {
                ours = Some(peer);
            } else {
                alpha
                    .federation
                    .finish_push_round(&peer, Vec::new())
                    .await
                    .expect("give a lease back");
            }
        }
        if let Some(ours) = ours {
            return (ours, primer);
        }
        // Alpha's loop leased it first: let it deliver, then try again.
        drain(alpha_db, beta, Duration::from_secs(30), "a primer item").await;
    }
    panic!("alpha's loop took the push lease for beta 50 times in a row before the benchmark could");
}

async fn delivery(options: &Options, backend: Backend, run: &str) -> DeliveryRow {
    let (alpha, beta) = pair(options, backend).await;
    let callers = publishers(&alpha.service, options.publishers).await;
    let mut alpha_db = Reader::open(&alpha).await;
    let (leased, primer) = hold_push(&alpha, &mut alpha_db, &beta, &callers[0], run).await;
    let cursor = leased.replication.push_cursor;
    let mut written = publish_many(&alpha.service, &callers, run, options.items).await;
    written.items.push(primer);
    let backlog = alpha
        .federation
        .peer_replication_lag(&beta.realm)
        .await
        .expect("lag")
        .expect("beta's replication");
    assert_eq!(
        backlog.replication.push_cursor,
        cursor,
        "alpha pushed while the lease was held (the writes took {:.1} s; the lease is {} s): use fewer items",
        written.elapsed.as_secs_f64(),
        PUSH_LEASE.num_seconds()
    );
    assert_eq!(
        backlog.undelivered,
        written.items.len() as i64,
        "alpha's backlog is the items written"
    );
    eprintln!(
        "{}: delivery: {} items written in {:.1} s ({:.0}/s) with the push held; alpha's backlog {}",
        backend.name(),
        written.items.len(),
        written.elapsed.as_secs_f64(),
        written.per_second(),
        backlog.undelivered
    );
    let head = alpha_db.outbox_head().await;
    let cpu = CpuMeter::start();
    let released_at = now();
    let released = Instant::now();
    alpha
        .federation
        .finish_push_round(&leased, Vec::new())
        .await
        .expect("give the lease back");
    alpha.service.outbox_appended().notify_one();
    let mut delivered = None;
    let mut deepest = 0;
    loop {
        let backlog = head - alpha_db.push_cursor(&beta.realm).await;
        let depth = queue_depth(&beta).await;
        deepest = deepest.max(depth);
        if delivered.is_none() && backlog <= 0 {
            delivered = Some(released.elapsed());
        }
        if delivered.is_some() && depth == 0 {
            break;
        }
        assert!(
            released.elapsed() < Duration::from_secs(600),
            "delivery: not drained after 600 s (alpha's backlog {backlog}, beta's queue {depth})"
        );
        tokio::time::sleep(WATCH_INTERVAL).await;
    }
    let drained = released.elapsed();
    let cpu = cpu.stop();
    profile_report("the delivery of a backlog", written.items.len(), cpu.wall);
    let intake = intake(&beta, &alpha).await;
    let (last, fifths) = last_applied(&written.items, &intake.applied, released_at);
    let (_, missing) = lags(&written.items, &intake.applied);
    assert_eq!(missing, 0, "every item is applied on beta: {}", intake.describe());
    let applied = last.map_or(f64::NAN, |last| seconds_between(released_at, last));
    alpha.stop().await;
    beta.stop().await;
    DeliveryRow {
        backend,
        items: written.items.len(),
        write: written.per_second(),
        delivered: delivered.map_or(f64::NAN, |delivered| delivered.as_secs_f64()),
        applied,
        drained: drained.as_secs_f64(),
        deepest_queue: deepest,
        fifths,
        cpu,
        outcomes: intake.describe(),
    }
}

struct LiveRow {
    backend: Backend,
    items: usize,
    write_seconds: f64,
    write: f64,
    applied: f64,
    caught_up: f64,
    deepest_queue: i64,
    lag: Spread,
    cpu: CpuUse,
}

async fn live(options: &Options, backend: Backend, run: &str) -> LiveRow {
    let (alpha, beta) = pair(options, backend).await;
    let callers = publishers(&alpha.service, options.publishers).await;
    let mut alpha_db = Reader::open(&alpha).await;
    let cpu = CpuMeter::start();
    let written = publish_many(&alpha.service, &callers, run, options.items).await;
    let written_at = Instant::now();
    let deepest = drain(&mut alpha_db, &beta, Duration::from_secs(600), "live").await;
    let caught_up = written_at.elapsed();
    let cpu = cpu.stop();
    profile_report("live replication", written.items.len(), cpu.wall);
    let intake = intake(&beta, &alpha).await;
    let (last, _) = last_applied(&written.items, &intake.applied, written.started_at);
    let (lags, missing) = lags(&written.items, &intake.applied);
    assert_eq!(missing, 0, "every item is applied on beta: {}", intake.describe());
    let span = last.map_or(f64::NAN, |last| seconds_between(written.started_at, last));
    alpha.stop().await;
    beta.stop().await;
    LiveRow {
        backend,
        items: written.items.len(),
        write_seconds: written.elapsed.as_secs_f64(),
        write: written.per_second(),
        applied: written.items.len() as f64 / span,
        caught_up: caught_up.as_secs_f64(),
        deepest_queue: deepest,
        lag: Spread::of(&lags),
        cpu,
    }
}

struct LagRow {
    backend: Backend,
    items: usize,
    achieved: f64,
    stamp: Spread,
    seen: Spread,
    /// Warm-up items, left out of the figures, and their worst stamp lag.
    warmup: usize,
    warmup_max: f64,
    unseen: usize,
    cpu: CpuUse,
}

async fn lag(options: &Options, backend: Backend, run: &str) -> LagRow {
    let (alpha, beta) = pair(options, backend).await;
    let callers = publishers(&alpha.service, options.publishers).await;
    let mut alpha_db = Reader::open(&alpha).await;
    // The poller: the first time each content item shows up among beta's intake lines (reading those stamped after
    // the newest one seen, less a margin: a line is stamped before its transaction commits).
    let mut beta_db = Reader::open(&beta).await;
    let seen: Arc<Mutex<HashMap<String, DateTime<Utc>>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let poller = {
        let realm = alpha.realm.clone();
        let seen = seen.clone();
        let stop = stop.clone();
        let poll = options.poll;
        let mut horizon = now();
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let lines = beta_db.applied_since(&realm, horizon).await;
                let at = now();
                {
                    let mut seen = seen.lock().expect("seen");
                    for (detail, stamp) in lines {
                        if let Some(id) = detail.split_whitespace().next() {
                            seen.entry(id.to_owned()).or_insert(at);
                        }
                        horizon = horizon.max(stamp - chrono::TimeDelta::milliseconds(POLL_MARGIN_MS));
                    }
                }
                tokio::time::sleep(poll).await;
            }
        })
    };
    // The warm-up items come first, at the same pace, and are left out of the figures (their worst lag is shown).
    let warmup = (options.rate * options.warmup_seconds).round() as usize;
    let count = (options.rate * options.seconds).round().max(1.0) as usize;
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / options.rate));
    let mut tasks = tokio::task::JoinSet::new();
    let mut cpu = None;
    let mut started = Instant::now();
    for number in 0..warmup + count {
        ticks.tick().await;
        if number == warmup {
            cpu = Some(CpuMeter::start());
            started = Instant::now();
        }
        let service = alpha.service.clone();
        let caller = callers[number % callers.len()].clone();
        let request = item(run, number);
        tasks.spawn(async move { (number, publish(&service, &caller, request).await) });
    }
    let mut numbered = Vec::with_capacity(warmup + count);
    while let Some(joined) = tasks.join_next().await {
        numbered.push(joined.expect("publish task"));
    }
    let achieved = count as f64 / started.elapsed().as_secs_f64();
    numbered.sort_by_key(|(number, _)| *number);
    let (warmup_items, items): (Vec<_>, Vec<_>) = numbered.into_iter().partition(|(number, _)| *number < warmup);
    let warmup_items: Vec<(String, DateTime<Utc>)> = warmup_items.into_iter().map(|(_, item)| item).collect();
    let items: Vec<(String, DateTime<Utc>)> = items.into_iter().map(|(_, item)| item).collect();
    drain(&mut alpha_db, &beta, Duration::from_secs(120), "lag").await;
    // A last poll or two after the queue emptied.
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.store(true, Ordering::Relaxed);
    poller.await.expect("poller");
    let cpu = cpu.expect("the measured items were published").stop();
    profile_report("the lag phase", items.len(), cpu.wall);
    let intake = intake(&beta, &alpha).await;
    let (stamp, missing) = lags(&items, &intake.applied);
    let (warmup_stamp, warmup_missing) = lags(&warmup_items, &intake.applied);
    assert_eq!(warmup_missing, 0, "every warm-up item is applied on beta");
    assert_eq!(missing, 0, "every item is applied on beta: {}", intake.describe());
    let seen = seen.lock().expect("seen").clone();
    let (seen_lags, unseen) = lags(&items, &seen);
    if let Some(path) = &options.lag_dump {
        let mut lines = String::new();
        for (id, committed) in warmup_items.iter().chain(&items) {
            let of = |at: Option<&DateTime<Utc>>| {
                at.map_or(f64::NAN, |at| {
                    (*at - *committed).num_microseconds().unwrap_or(0) as f64 / 1e3
                })
            };
            lines.push_str(&format!(
                "{} {} {:.3} {:.3}\n",
                committed.format("%H:%M:%S%.6f"),
                id,
                of(intake.applied.get(id)),
                of(seen.get(id))
            ));
        }
        std::fs::write(format!("{path}.{}", backend.name()), lines).expect("lag dump");
    }
    alpha.stop().await;
    beta.stop().await;
    LagRow {
        backend,
        items: items.len(),
        achieved,
        stamp: Spread::of(&stamp),
        seen: Spread::of(&seen_lags),
        warmup: warmup_items.len(),
        warmup_max: warmup_stamp.last().copied().unwrap_or(0.0),
        unseen,
        cpu,
    }
}

struct PeersRow {
    backend: Backend,
    peers: usize,
    items: usize,
    achieved: f64,
    stamp: Spread,
    cpu: CpuUse,
}

impl PeersRow {
    /// Cores per peer: the process's cores over the paced window, divided by the peers.
    fn cores_per_peer(&self) -> f64 {
        self.cpu.process_cores / self.peers as f64
    }

    /// CPU milliseconds per item delivered to one peer (publishing included, shared by all).
    fn cpu_ms_per_delivery(&self) -> f64 {
        self.cpu.process_cores * self.cpu.wall.as_secs_f64() * 1e3 / (self.items * self.peers).max(1) as f64
    }
}

/// Light traffic to many peers: alpha publishes at `INTERAI_BENCH_PEERS_RATE` while every one of its betas is
/// pushed each item; what the process spends per peer, and the lag on every beta.
async fn peers(options: &Options, backend: Backend, run: &str) -> PeersRow {
    let settings = settings(86_400);
    let alpha = Side::start_with(backend, options.postgres_url.as_deref(), &settings).await;
    let mut betas = Vec::with_capacity(options.peers);
    for _ in 0..options.peers {
        let beta = Side::start_with(backend, options.postgres_url.as_deref(), &settings).await;
        peer(&alpha, &beta).await;
        betas.push(beta);
    }
    eprintln!("{}: peers: alpha and {} betas peered", backend.name(), betas.len());
    let callers = publishers(&alpha.service, options.publishers).await;
    let mut alpha_db = Reader::open(&alpha).await;
    let warmup = (options.peers_rate * options.warmup_seconds).round() as usize;
    let count = (options.peers_rate * options.seconds).round().max(1.0) as usize;
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / options.peers_rate));
    let mut tasks = tokio::task::JoinSet::new();
    let mut cpu = None;
    let mut started = Instant::now();
    for number in 0..warmup + count {
        ticks.tick().await;
        if number == warmup {
            // The warm-up items are out of the way first, so that the window holds only the measured ones.
            for beta in &betas {
                drain(&mut alpha_db, beta, Duration::from_secs(60), "peers: warm-up").await;
            }
            cpu = Some(CpuMeter::start());
            started = Instant::now();
        }
        let service = alpha.service.clone();
        let caller = callers[number % callers.len()].clone();
        let request = item(run, number);
        tasks.spawn(async move { (number, publish(&service, &caller, request).await) });
    }
    let mut numbered = Vec::with_capacity(warmup + count);
    while let Some(joined) = tasks.join_next().await {
        numbered.push(joined.expect("publish task"));
    }
    let achieved = count as f64 / started.elapsed().as_secs_f64();
    for beta in &betas {
        drain(&mut alpha_db, beta, Duration::from_secs(120), "peers").await;
    }
    let cpu = cpu.expect("the measured items were published").stop();
    profile_report("the peers phase", count * betas.len(), cpu.wall);
    let items: Vec<(String, DateTime<Utc>)> = numbered
        .into_iter()
        .filter(|(number, _)| *number >= warmup)
        .map(|(_, item)| item)
        .collect();
    let mut stamps = Vec::with_capacity(items.len() * betas.len());
    for beta in &betas {
        let intake = intake(beta, &alpha).await;
        let (lags, missing) = lags(&items, &intake.applied);
        assert_eq!(missing, 0, "every item is applied on every beta: {}", intake.describe());
        stamps.extend(lags);
    }
    stamps.sort_by(f64::total_cmp);
    alpha.stop().await;
    for beta in betas {
        beta.stop().await;
    }
    PeersRow {
        backend,
        peers: options.peers,
        items: items.len(),
        achieved,
        stamp: Spread::of(&stamps),
        cpu,
    }
}

struct BackfillRow {
    backend: Backend,
    seeded: String,
    seed_seconds: f64,
    objects: usize,
    fetched: f64,
    applied: f64,
    deepest_queue: i64,
    cpu: CpuUse,
    outcomes: String,
}

async fn backfill(options: &Options, backend: Backend) -> BackfillRow {
    let settings = settings(60);
    let alpha = Side::start_with(backend, options.postgres_url.as_deref(), &settings).await;
    let total = options.backfill_items;
    let printed = AtomicU64::new(0);
    let report = interai::seed::seed(
        &alpha.service,
        interai::seed::SeedOptions {
            items: total,
            ..interai::seed::SeedOptions::default()
        },
        |done, total| {
            let tenth = done * 10 / total.max(1);
            if printed.fetch_max(tenth, Ordering::Relaxed) < tenth {
                eprintln!("{}: backfill: seeded {done} of {total} items", backend.name());
            }
        },
    )
    .await
    .expect("alpha is seeded");
    eprintln!("{}: backfill: alpha seeded: {report}", backend.name());
    let beta = Side::start_with(backend, options.postgres_url.as_deref(), &settings).await;
    introduce(&alpha, &beta).await;
    let fingerprint = alpha.fingerprint().await;
    let cpu = CpuMeter::start();
    let started = Instant::now();
    beta.federation
        .approve_peer(&alpha.realm, None, Some(&fingerprint))
        .await
        .expect("beta approves alpha");
    // Wake beta's served loop (its next poll could be up to 5 s away), which delivers the Accept and pulls.
    beta.service.outbox_appended().notify_one();
    let mut fetched = None;
    let mut deepest = 0;
    let mut reported = Instant::now();
    loop {
        let state = beta
            .federation
            .peer_replication_lag(&alpha.realm)
            .await
            .expect("lag")
            .expect("alpha's replication");
        let depth = queue_depth(&beta).await;
        deepest = deepest.max(depth);
        if fetched.is_none() && state.replication.pull_cursor.is_some() {
            fetched = Some(started.elapsed());
        }
        if fetched.is_some() && depth == 0 {
            break;
        }
        if reported.elapsed() >= Duration::from_secs(10) {
            reported = Instant::now();
            eprintln!(
                "{}: backfill: {:.0} s: read through {:?}, queue {depth}{}",
                backend.name(),
                started.elapsed().as_secs_f64(),
                state.replication.backfill_after,
                state
                    .replication
                    .last_pull_error
                    .as_deref()
                    .map(|error| format!(", last pull error {error}"))
                    .unwrap_or_default()
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(7200),
            "backfill: not done after 2 h"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let applied = started.elapsed();
    let cpu = cpu.stop();
    assert_eq!(alpha.peer_state(&beta.realm).await, Some(PeerState::Active));
    let intake = intake(&beta, &alpha).await;
    profile_report(
        "the backfill",
        intake.outcomes.get("applied").copied().unwrap_or(0),
        cpu.wall,
    );
    let row = BackfillRow {
        backend,
        seeded: format!("{} items ({} revisions)", report.items, report.revisions),
        seed_seconds: report.elapsed.as_secs_f64(),
        objects: intake.outcomes.get("applied").copied().unwrap_or(0),
        fetched: fetched.map_or(f64::NAN, |fetched| fetched.as_secs_f64()),
        applied: applied.as_secs_f64(),
        deepest_queue: deepest,
        cpu,
        outcomes: intake.describe(),
    };
    alpha.stop().await;
    beta.stop().await;
    row
}

// ---------------------------------------------------------------- report

#[derive(Default)]
struct Rows {
    delivery: Vec<DeliveryRow>,
    live: Vec<LiveRow>,
    lag: Vec<LagRow>,
    peers: Vec<PeersRow>,
    backfill: Vec<BackfillRow>,
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "missed" }
}

fn print_rows(options: &Options, rows: &Rows) {
    if !rows.delivery.is_empty() {
        println!(
            "\ndelivery of a backlog (clock from the push lease's release; seconds to alpha's backlog empty, to beta's last application, to the poll that saw both queues empty)"
        );
        println!(
            "{:<8} {:>6} {:>8} {:>10} {:>9} {:>10} {:>9} {:>11} {:>10} {:<26} {:<12} outcomes",
            "backend",
            "items",
            "write/s",
            "delivered",
            "applied",
            "drained",
            "applied/s",
            "delivered/s",
            "max queue",
            "applied per fifth",
            "cpu"
        );
        for row in &rows.delivery {
            let per_second = row.items as f64 / row.applied;
            let fifths = format!("{:?}", row.fifths);
            println!(
                "{:<8} {:>6} {:>8.0} {:>10.2} {:>9.2} {:>10.2} {:>9.0} {:>11.0} {:>10} {:<26} {:<12} {}",
                row.backend.name(),
                row.items,
                row.write,
                row.delivered,
                row.applied,
                row.drained,
                per_second,
                row.items as f64 / row.delivered,
                row.deepest_queue,
                fifths,
                row.cpu.show(),
                row.outcomes,
            );
            println!(
                "  target ≥ {TARGET_PER_SECOND:.0} activities/s applied: {}",
                met(per_second >= TARGET_PER_SECOND)
            );
        }
    }
    if !rows.live.is_empty() {
        println!(
            "\nlive: {} publishers as fast as they can while replication runs (lag from publish's return to beta's intake stamp, ms)",
            options.publishers
        );
        println!(
            "{:<8} {:>6} {:>8} {:>8} {:>9} {:>10} {:>10} {:<26} {:<12}",
            "backend",
            "items",
            "write s",
            "write/s",
            "applied/s",
            "caught up",
            "max queue",
            "lag p50 / p99 / max",
            "cpu"
        );
        for row in &rows.live {
            println!(
                "{:<8} {:>6} {:>8.2} {:>8.0} {:>9.0} {:>10.2} {:>10} {:<26} {:<12}",
                row.backend.name(),
                row.items,
                row.write_seconds,
                row.write,
                row.applied,
                row.caught_up,
                row.deepest_queue,
                row.lag.show(),
                row.cpu.show(),
            );
        }
    }
    if !rows.lag.is_empty() {
        println!(
            "\nlag at {:.0} publishes/s for {:.0} s, ms from publish's return on alpha to beta's intake stamp, and to a poll ({:.1} ms apart) seeing it",
            options.rate,
            options.seconds,
            options.poll.as_secs_f64() * 1e3
        );
        println!(
            "{:<8} {:>6} {:>10} {:<26} {:<26} {:>7} {:<12}",
            "backend", "items", "publish/s", "stamp p50 / p99 / max", "seen p50 / p99 / max", "unseen", "cpu"
        );
        for row in &rows.lag {
            println!(
                "{:<8} {:>6} {:>10.1} {:<26} {:<26} {:>7} {:<12}",
                row.backend.name(),
                row.items,
                row.achieved,
                row.stamp.show(),
                row.seen.show(),
                row.unseen,
                row.cpu.show(),
            );
            println!(
                "  target p50 ≤ {TARGET_P50_MS} ms: {} (stamp), {} (seen); p99 ≤ {TARGET_P99_MS} ms: {} (stamp), {} (seen)",
                met(row.stamp.p50 <= TARGET_P50_MS),
                met(row.seen.p50 <= TARGET_P50_MS),
                met(row.stamp.p99 <= TARGET_P99_MS),
                met(row.seen.p99 <= TARGET_P99_MS),
            );
            println!(
                "  ({} warm-up items before these, not counted: worst stamp lag {:.2} ms)",
                row.warmup, row.warmup_max
            );
        }
    }
    if !rows.peers.is_empty() {
        println!(
            "\nlight traffic to many peers: {:.0} publishes/s for {:.0} s, each item pushed to every peer (cores over the paced window, to the last application; lag to each beta's intake stamp, ms)",
            options.peers_rate, options.seconds
        );
        println!(
            "{:<8} {:>6} {:>6} {:>10} {:<26} {:<12} {:>14} {:>16}",
            "backend",
            "peers",
            "items",
            "publish/s",
            "stamp p50 / p99 / max",
            "cpu",
            "cores per peer",
            "cpu ms/delivery"
        );
        for row in &rows.peers {
            println!(
                "{:<8} {:>6} {:>6} {:>10.1} {:<26} {:<12} {:>14.3} {:>16.2}",
                row.backend.name(),
                row.peers,
                row.items,
                row.achieved,
                row.stamp.show(),
                row.cpu.show(),
                row.cores_per_peer(),
                row.cpu_ms_per_delivery(),
            );
        }
    }
    if !rows.backfill.is_empty() {
        println!(
            "\nbackfill of a new peer (clock from beta's approval; fetched: snapshot read to its end; applied: beta's queue empty too)"
        );
        println!(
            "{:<8} {:<28} {:>8} {:>8} {:>9} {:>9} {:>10} {:>10} {:<12} outcomes",
            "backend", "alpha", "seed s", "objects", "fetched", "applied", "objects/s", "max queue", "cpu"
        );
        for row in &rows.backfill {
            println!(
                "{:<8} {:<28} {:>8.0} {:>8} {:>9.1} {:>9.1} {:>10.0} {:>10} {:<12} {}",
                row.backend.name(),
                row.seeded,
                row.seed_seconds,
                row.objects,
                row.fetched,
                row.applied,
                row.objects as f64 / row.applied,
                row.deepest_queue,
                row.cpu.show(),
                row.outcomes,
            );
        }
    }
    println!("(cpu: cores this process kept busy on average / share of the machine's cores busy)");
}

// ---------------------------------------------------------------- main

fn main() {
    let options = Options::from_environment();
    install_profile();
    println!(
        "replication benchmark: alpha publishes, beta applies, over loopback ({} items, {} publishers; lag at {}/s for {} s; backfill of {} items; phases {:?})",
        options.items, options.publishers, options.rate, options.seconds, options.backfill_items, options.phases,
    );
    let runtime = common::runtime(options.worker_threads);
    let mut rows = Rows::default();
    runtime.block_on(async {
        for &backend in &options.backends {
            let run = ulid::Ulid::generate().to_string().to_ascii_lowercase();
            for &phase in &options.phases {
                let started = Instant::now();
                match phase {
                    Phase::Delivery => rows.delivery.push(delivery(&options, backend, &run).await),
                    Phase::Live => rows.live.push(live(&options, backend, &run).await),
                    Phase::Lag => rows.lag.push(lag(&options, backend, &run).await),
                    Phase::Peers => rows.peers.push(peers(&options, backend, &run).await),
                    Phase::Backfill => rows.backfill.push(backfill(&options, backend).await),
                }
                eprintln!(
                    "{}: {phase:?} done in {:.0} s",
                    backend.name(),
                    started.elapsed().as_secs_f64()
                );
            }
        }
    });
    print_rows(&options, &rows);
}
