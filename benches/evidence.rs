//! Load benchmark of evidence across realms (not a timed test): three instances on loopback, all peered, write
//! content and then evidence through the service while replication runs; how long every instance takes to hold
//! every record its peers sent, whether the hottest items' stored trust equals a full recomputation on every
//! instance, what a peer's level change costs, and what `get` with an explanation costs on an item with many remote
//! records against the same item's first-party view.
//!
//! Run with `cargo bench --bench evidence`. The instances are `Side`s of `benches/common` (served on their own
//! `127.0.0.1` sockets with the real HTTP transport, the system clock, a fresh temporary SQLite database each, or
//! with `INTERAI_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres` fresh PostgreSQL databases as well),
//! peered pairwise the way an admin does it; their served federation loops do all the replicating. Two settings
//! differ from the defaults: `INTERAI_WRITES_PER_HOUR=100000000` (the per-controller write limit would stop the
//! writers) and `INTERAI_FEDERATION_PULL_INTERVAL_SECONDS=86400` (push is what is measured).
//!
//! Phases, all on the same three instances:
//!
//! 1. **content**: `INTERAI_BENCH_ITEMS` small procedures, a third published on each instance by
//!    `INTERAI_BENCH_WRITERS` concurrent publishers each; the clock runs until every instance holds every item.
//!    Reported: the write time and the remote applications per second (each item is applied on two instances).
//! 2. **evidence**: `INTERAI_BENCH_RECORDS` records written through the service (`report_usage` 60 %, `review`
//!    25 %, `rate` 15 %) by `INTERAI_BENCH_CONTROLLERS` controllers (one agent each, a third on each instance),
//!    `INTERAI_BENCH_WRITERS` concurrent writers per instance. A share `INTERAI_BENCH_HOT_SHARE` (0.2) of the
//!    records is about the `INTERAI_BENCH_HOT_ITEMS` (10) hottest items, the rest about items drawn uniformly; usage
//!    succeeds 80 % of the time, reviews confirm 80 %. Reported: the whole phase's time, the time from the last
//!    write until every instance holds every record its peers sent (counted from `evidence_provenance` by origin),
//!    the remote applications per second, and then, on every instance, whether each hot item's stored assessment
//!    (what search sorts by, kept record by record) equals the trust engine's full recomputation from the rows.
//! 3. **level**: the first instance changes the second's level from `standard` to `low`; the call returns when the
//!    instance-trust batch has put the new table in force and assessed again every target of that origin (trust
//!    model §2.15). Reported: the call's time, the records of that origin, and whether every hot item's stored
//!    assessment then equals a full recomputation.
//! 4. **explain**: on the first instance, `INTERAI_BENCH_SAMPLES` (200) interleaved pairs of `get` of the hottest
//!    item with `include: ["explanation"]`, in the default view and in the first-party view. Reported: p50 and p95
//!    of each, their ratio, and how many remote records and origins the item has there.
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `INTERAI_BENCH_ITEMS` | 10000 | content items, split over the three instances |
//! | `INTERAI_BENCH_RECORDS` | 100000 | evidence records, split over the three instances |
//! | `INTERAI_BENCH_CONTROLLERS` | 2000 | controllers writing evidence, split over the three instances |
//! | `INTERAI_BENCH_HOT_ITEMS` | 10 | items that receive the hot share |
//! | `INTERAI_BENCH_HOT_SHARE` | 0.2 | share of the records about the hot items |
//! | `INTERAI_BENCH_WRITERS` | 4 | concurrent writers per instance |
//! | `INTERAI_BENCH_SAMPLES` | 200 | pairs of `get` in the explain phase |
//! | `INTERAI_BENCH_BACKENDS` | `sqlite,postgres` | which backends to run (PostgreSQL only with the URL set) |
//! | `INTERAI_BENCH_DATABASE_URL` | — | a PostgreSQL server URL; enables the PostgreSQL run |
//! | `INTERAI_BENCH_WORKER_THREADS` | cores | tokio worker threads (the three instances and the benchmark share them) |
//! | `INTERAI_BENCH_PROFILE` | — | when set, prints for the evidence and level phases the SQL statements that took the most time; costs some throughput |
//! | `INTERAI_BENCH_LOG` | — | a tracing filter (e.g. `interai=info`): the instances' events on standard error |

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use interai::domain::{AuthenticatedActor, PeerLevel, PublicId, TrustViewScope};
use interai::service::content::PublishRequest;
use interai::service::evidence::{RateRequest, ReviewRequest, UsageRequest};
use interai::service::lookup::GetRequest;
use interai::service::writes::{CallMetadata, WriteOperation};
use serde_json::json;
use sqlx::Connection;

use common::{Backend, Side, agents, backends_from_environment, number, peer, percentile, variable};

/// The convergence target: from the last write until every instance holds every record.
const TARGET_CONVERGENCE: Duration = Duration::from_secs(60);
/// How often convergence is checked (a count per origin on each instance).
const WATCH_INTERVAL: Duration = Duration::from_millis(100);
/// The longest any phase may wait for replication before the benchmark gives up.
const PATIENCE: Duration = Duration::from_secs(1800);

#[derive(Debug, Clone)]
struct Options {
    items: usize,
    records: usize,
    controllers: usize,
    hot_items: usize,
    hot_share: f64,
    writers: usize,
    samples: usize,
    backends: Vec<Backend>,
    postgres_url: Option<String>,
    worker_threads: Option<usize>,
}

impl Options {
    fn from_environment() -> Options {
        let (postgres_url, backends) = backends_from_environment();
        Options {
            items: number("INTERAI_BENCH_ITEMS", 10_000_usize).max(3),
            records: number("INTERAI_BENCH_RECORDS", 100_000_usize).max(3),
            controllers: number("INTERAI_BENCH_CONTROLLERS", 2000_usize).max(3),
            hot_items: number("INTERAI_BENCH_HOT_ITEMS", 10_usize).max(1),
            hot_share: number("INTERAI_BENCH_HOT_SHARE", 0.2_f64).clamp(0.0, 1.0),
            writers: number("INTERAI_BENCH_WRITERS", 4_usize).max(1),
            samples: number("INTERAI_BENCH_SAMPLES", 200_usize).max(1),
            backends,
            postgres_url,
            worker_threads: variable("INTERAI_BENCH_WORKER_THREADS").map(|_| number("INTERAI_BENCH_WORKER_THREADS", 2)),
        }
    }
}

fn main() {
    common::profile::install_profile();
    let options = Options::from_environment();
    let runtime = common::runtime(options.worker_threads);
    for backend in options.backends.clone() {
        runtime.block_on(run(&options, backend));
    }
}

/// A deterministic 64-bit mix (SplitMix64's finalizer): the same record number always makes the same record.
fn mixed(value: u64) -> u64 {
    let mut mixed = value.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    mixed ^ (mixed >> 31)
}

/// A number in [0, 1) from a record number and a purpose.
fn unit(record: usize, purpose: u64) -> f64 {
    (mixed((record as u64) << 8 | purpose) >> 11) as f64 / (1u64 << 53) as f64
}

/// A small procedure, distinct by `realm` and `number`.
fn item(realm: &str, number: usize) -> PublishRequest {
    let title = format!("Drain the write queue of shard {number} on {realm}");
    PublishRequest {
        content_type: "procedure".to_owned(),
        title: title.clone(),
        summary: format!("How to drain shard {number}'s write queue before a maintenance window."),
        body_markdown: format!(
            "# {title}\n\n1. Stop admitting new writes to shard {number}.\n2. Wait until the queue depth reads 0.\n\
             3. Take the maintenance window; admit writes again after it.\n"
        ),
        claims: vec![format!("Shard {number} on {realm} drains in under a minute.")],
        tags: vec!["maintenance".to_owned()],
        ..PublishRequest::default()
    }
}

/// A published item: its content ID and its revision (the trust target).
#[derive(Debug, Clone)]
struct Published {
    content_id: String,
    revision_id: String,
}

/// Publishes `count` items on `side` with `writers` concurrent publishers.
async fn publish_items(side: &Side, writers: usize, count: usize) -> Vec<Published> {
    let callers = agents(&side.service, writers, "read,publish", "publisher").await;
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for caller in callers {
        let service = side.service.clone();
        let next = next.clone();
        let realm = side.realm.clone();
        tasks.spawn(async move {
            let mut published = Vec::new();
            loop {
                let number = next.fetch_add(1, Ordering::Relaxed);
                if number >= count {
                    return published;
                }
                let outcome = service
                    .publish(
                        &caller,
                        &CallMetadata::internal(WriteOperation::Publish, json!({})),
                        item(&realm, number),
                    )
                    .await
                    .expect("publish succeeds");
                published.push(Published {
                    content_id: outcome.id,
                    revision_id: outcome.revision_id,
                });
            }
        });
    }
    let mut published = Vec::with_capacity(count);
    while let Some(joined) = tasks.join_next().await {
        published.extend(joined.expect("publisher task"));
    }
    published
}

/// Writes the records numbered `range` on `side` with its `callers` (record `n` by caller `n mod callers`), with
/// `writers` concurrent writers; returns how many were written.
async fn write_evidence(
    side: &Side,
    callers: Arc<Vec<AuthenticatedActor>>,
    items: Arc<Vec<Published>>,
    options: &Options,
    range: std::ops::Range<usize>,
) -> usize {
    let next = Arc::new(AtomicUsize::new(range.start));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..options.writers {
        let service = side.service.clone();
        let next = next.clone();
        let callers = callers.clone();
        let items = items.clone();
        let (end, hot_items, hot_share) = (range.end, options.hot_items, options.hot_share);
        tasks.spawn(async move {
            let mut written = 0;
            loop {
                let record = next.fetch_add(1, Ordering::Relaxed);
                if record >= end {
                    return written;
                }
                let caller = &callers[record % callers.len()];
                let target = if unit(record, 1) < hot_share {
                    &items[record % hot_items.min(items.len())]
                } else {
                    &items[(mixed(record as u64) % items.len() as u64) as usize]
                };
                let kind = unit(record, 2);
                let positive = unit(record, 3) < 0.8;
                let result = if kind < 0.60 {
                    let operation = CallMetadata::internal(WriteOperation::ReportUsage, json!({}));
                    service
                        .report_usage(
                            caller,
                            &operation,
                            UsageRequest {
                                target: target.content_id.clone(),
                                usage_type: "operation".to_owned(),
                                result: if positive { "success" } else { "failure" }.to_owned(),
                                real_world_use: true,
                                ..UsageRequest::default()
                            },
                        )
                        .await
                        .map(|_| ())
                } else if kind < 0.85 {
                    let operation = CallMetadata::internal(WriteOperation::Review, json!({}));
                    service
                        .review(
                            caller,
                            &operation,
                            ReviewRequest {
                                target: target.content_id.clone(),
                                verdict: if positive { "confirmed" } else { "contradicted" }.to_owned(),
                                confidence: 0.8,
                                ..ReviewRequest::default()
                            },
                        )
                        .await
                        .map(|_| ())
                } else {
                    let operation = CallMetadata::internal(WriteOperation::Rate, json!({}));
                    service
                        .rate(
                            caller,
                            &operation,
                            RateRequest {
                                target: target.content_id.clone(),
                                dimension: "usefulness".to_owned(),
                                score: (unit(record, 4) * 100.0).round(),
                                confidence: 0.8,
                                ..RateRequest::default()
                            },
                        )
                        .await
                        .map(|_| ())
                };
                result.expect("the evidence is written");
                written += 1;
            }
        });
    }
    let mut written = 0;
    while let Some(joined) = tasks.join_next().await {
        written += joined.expect("writer task");
    }
    written
}

/// A connection of the benchmark's own to an instance's database, for counting what replication stored.
enum Counter {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl Counter {
    async fn open(side: &Side) -> Counter {
        let url = &side.database().url;
        if url.starts_with("postgres") {
            Counter::Postgres(sqlx::PgConnection::connect(url).await.expect("connect"))
        } else {
            Counter::Sqlite(sqlx::SqliteConnection::connect(url).await.expect("connect"))
        }
    }

    async fn count(&mut self, query: &'static str, origin: Option<&str>) -> usize {
        let count: i64 = match self {
            Counter::Sqlite(connection) => sqlx::query_scalar(query)
                .bind(origin)
                .fetch_one(connection)
                .await
                .expect("counted"),
            Counter::Postgres(connection) => sqlx::query_scalar(query)
                .bind(origin)
                .fetch_one(connection)
                .await
                .expect("counted"),
        };
        usize::try_from(count).expect("a count")
    }

    /// Content items held, from every realm.
    async fn content_items(&mut self) -> usize {
        self.count(
            "SELECT count(*) FROM content_items WHERE $1 IS NULL OR origin = $1",
            None,
        )
        .await
    }

    /// Evidence records of `origin` held.
    async fn evidence_of(&mut self, origin: &str) -> usize {
        self.count(
            "SELECT count(*) FROM evidence_provenance WHERE origin = $1",
            Some(origin),
        )
        .await
    }
}

/// Waits until `done` holds for every instance's counter (checked every [`WATCH_INTERVAL`]); returns when it did.
async fn wait_for_all(
    counters: &mut [Counter],
    done: impl AsyncFn(usize, &mut Counter) -> bool,
    what: &str,
) -> Instant {
    let started = Instant::now();
    loop {
        let mut all = true;
        for (index, counter) in counters.iter_mut().enumerate() {
            if !done(index, counter).await {
                all = false;
                break;
            }
        }
        if all {
            return Instant::now();
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{what} did not happen within {PATIENCE:?}"
        );
        tokio::time::sleep(WATCH_INTERVAL).await;
    }
}

/// How far a stored value may be from the recomputation at its `computed_at`: PostgreSQL keeps that time to the
/// microsecond, so the recomputation may run up to a microsecond off (decay over it moves a value by ~1e-14).
const RECOMPUTATION_TOLERANCE: f64 = 1e-12;

/// How many of the hot items' stored assessments on `side` (kept record by record, and assessed again when an
/// origin's trust changed) equal a full recomputation from the rows at the time they were computed, of how many.
async fn hot_items_exact(side: &Side, hot: &[Published]) -> (usize, usize) {
    let mut exact = 0;
    for item in hot {
        let target = PublicId::parse(&item.revision_id).expect("an ID");
        let stored = side.service.trust_summary(&target).await.expect("summary");
        let recomputed = side
            .service
            .recompute_trust_at(&target, stored.computed_at)
            .await
            .expect("recomputed");
        if (stored.value - recomputed.value).abs() <= RECOMPUTATION_TOLERANCE
            && (stored.lower_bound - recomputed.lower_bound).abs() <= RECOMPUTATION_TOLERANCE
            && stored.status == recomputed.status
        {
            exact += 1;
        } else {
            eprintln!(
                "  {} on {}: stored {} {:?}, recomputed {} {:?}",
                item.revision_id, side.realm, stored.value, stored.status, recomputed.value, recomputed.status
            );
        }
    }
    (exact, hot.len())
}

/// Splits `total` into three parts, the remainder to the first.
fn thirds(total: usize) -> [usize; 3] {
    let third = total / 3;
    [total - 2 * third, third, third]
}

async fn run(options: &Options, backend: Backend) {
    println!("== evidence across realms, {} ==", backend.name());
    let settings = vec![
        ("INTERAI_WRITES_PER_HOUR", "100000000".to_owned()),
        ("INTERAI_FEDERATION_PULL_INTERVAL_SECONDS", "86400".to_owned()),
    ];
    let mut sides = Vec::new();
    for _ in 0..3 {
        sides.push(Side::start_with(backend, options.postgres_url.as_deref(), &settings).await);
    }
    for (first, second) in [(0, 1), (0, 2), (1, 2)] {
        peer(&sides[first], &sides[second]).await;
    }
    let mut counters = Vec::new();
    for side in &sides {
        counters.push(Counter::open(side).await);
    }

    // 1. Content.
    let started = Instant::now();
    let parts = thirds(options.items);
    let (first, second, third) = tokio::join!(
        publish_items(&sides[0], options.writers, parts[0]),
        publish_items(&sides[1], options.writers, parts[1]),
        publish_items(&sides[2], options.writers, parts[2]),
    );
    let written = started.elapsed();
    let items: Vec<Published> = first.into_iter().chain(second).chain(third).collect();
    let total_items = items.len();
    let converged = wait_for_all(
        &mut counters,
        async |_, counter| counter.content_items().await >= total_items,
        "content convergence",
    )
    .await;
    let content_seconds = converged.duration_since(started).as_secs_f64();
    let content_rate = (2 * total_items) as f64 / content_seconds;
    println!(
        "content: {total_items} items written in {:.1} s; every instance held all after {content_seconds:.1} s \
         ({content_rate:.0} remote applications/s)",
        written.as_secs_f64()
    );

    // 2. Evidence. The hot items are the first of each instance's, in turn.
    let items = Arc::new(items);
    let controllers = thirds(options.controllers);
    let mut callers = Vec::new();
    for (side, count) in sides.iter().zip(controllers) {
        callers.push(Arc::new(
            agents(&side.service, count, "read,usage,review,rate", "witness").await,
        ));
    }
    let records = thirds(options.records);
    common::profile::profile_start();
    let started = Instant::now();
    let (first, second, third) = tokio::join!(
        write_evidence(&sides[0], callers[0].clone(), items.clone(), options, 0..records[0]),
        write_evidence(
            &sides[1],
            callers[1].clone(),
            items.clone(),
            options,
            records[0]..records[0] + records[1]
        ),
        write_evidence(
            &sides[2],
            callers[2].clone(),
            items.clone(),
            options,
            records[0] + records[1]..options.records
        ),
    );
    let last_write = Instant::now();
    let sent = [first, second, third];
    let realms: Vec<String> = sides.iter().map(|side| side.realm.clone()).collect();
    let converged = wait_for_all(
        &mut counters,
        async |receiver, counter| {
            for (origin, realm) in realms.iter().enumerate() {
                if origin != receiver && counter.evidence_of(realm).await < sent[origin] {
                    return false;
                }
            }
            true
        },
        "evidence convergence",
    )
    .await;
    let whole = converged.duration_since(started).as_secs_f64();
    let after_last = converged.duration_since(last_write);
    let evidence_rate = (2 * options.records) as f64 / whole;
    println!(
        "evidence: {} records ({} / {} / {}) from {} controllers written in {:.1} s ({:.0}/s); every instance held \
         every peer's records {:.1} s after the last write (target ≤ {} s: {}); whole phase {whole:.1} s, \
         {evidence_rate:.0} remote applications/s ({:.2} × the content rate)",
        options.records,
        sent[0],
        sent[1],
        sent[2],
        options.controllers,
        last_write.duration_since(started).as_secs_f64(),
        options.records as f64 / last_write.duration_since(started).as_secs_f64(),
        after_last.as_secs_f64(),
        TARGET_CONVERGENCE.as_secs(),
        if after_last <= TARGET_CONVERGENCE {
            "met"
        } else {
            "missed"
        },
        evidence_rate / content_rate
    );
    common::profile::profile_report("the evidence phase", options.records, converged.duration_since(started));
    let hot: Vec<Published> = items[..options.hot_items.min(items.len())].to_vec();
    for side in &sides {
        let (exact, of) = hot_items_exact(side, &hot).await;
        println!(
            "  {}: {exact} of {of} hot items' stored trust equals a full recomputation",
            side.realm
        );
    }

    // 3. A level change of the second instance on the first.
    let beta_records = counters[0].evidence_of(&sides[1].realm).await;
    common::profile::profile_start();
    let started = Instant::now();
    sides[0]
        .federation
        .set_peer_level(&sides[1].realm, PeerLevel::Low)
        .await
        .expect("level set");
    let level_seconds = started.elapsed().as_secs_f64();
    common::profile::profile_report("the level change", beta_records, started.elapsed());
    let (exact, of) = hot_items_exact(&sides[0], &hot).await;
    println!(
        "level: {} → low on {} with {beta_records} of its records there: every affected target assessed again in \
         {level_seconds:.2} s (target ≤ 5 s: {}); {exact} of {of} hot items then equal a full recomputation",
        sides[1].realm,
        sides[0].realm,
        if level_seconds <= 5.0 { "met" } else { "missed" }
    );

    // 4. `get` with an explanation of the hottest item, both views, interleaved.
    let reader = agents(&sides[0].service, 1, "read", "reader").await.remove(0);
    let hottest = &hot[0];
    let get = |trust_view| GetRequest {
        id: hottest.content_id.clone(),
        revision: None,
        include: Some(vec!["explanation".to_owned()]),
        evidence_cursor: None,
        trust_view,
    };
    let explanation = sides[0]
        .service
        .explain_trust(&PublicId::parse(&hottest.revision_id).expect("an ID"))
        .await
        .expect("explained");
    let remote_records: usize = explanation
        .parties
        .iter()
        .filter_map(|party| match party {
            interai::trust::PartyExplanation::Instance(row) => Some(row.records as usize),
            _ => None,
        })
        .sum();
    let origins = explanation
        .parties
        .iter()
        .filter(|party| matches!(party, interai::trust::PartyExplanation::Instance(_)))
        .count();
    let (mut all, mut first_party) = (Vec::new(), Vec::new());
    for sample in 0..options.samples * 2 {
        let view = if sample % 2 == 0 {
            TrustViewScope::All
        } else {
            TrustViewScope::FirstParty
        };
        let request = get(view);
        let started = Instant::now();
        sides[0].service.get(&reader, &request).await.expect("get");
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        match view {
            TrustViewScope::All => all.push(elapsed),
            TrustViewScope::FirstParty => first_party.push(elapsed),
        }
    }
    all.sort_by(f64::total_cmp);
    first_party.sort_by(f64::total_cmp);
    let (all_p50, first_party_p50) = (percentile(&all, 0.5), percentile(&first_party, 0.5));
    println!(
        "explain: get with explanation of an item with {remote_records} remote records from {origins} origins: \
         p50 {all_p50:.2} ms, p95 {:.2} ms; first-party view p50 {first_party_p50:.2} ms, p95 {:.2} ms; ratio \
         {:.2} (target ≤ 1.2: {})",
        percentile(&all, 0.95),
        percentile(&first_party, 0.95),
        all_p50 / first_party_p50,
        if all_p50 <= 1.2 * first_party_p50 {
            "met"
        } else {
            "missed"
        }
    );

    for side in sides {
        side.stop().await;
    }
}
