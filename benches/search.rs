//! Search benchmark (not a timed test): `search` and `get` latency through the real `/mcp` endpoint over a seeded
//! instance of realistic synthetic knowledge, with rmcp's Streamable HTTP client over loopback HTTP.
//!
//! Run with `cargo bench --bench search`. It builds an instance in this process on a temporary SQLite file, seeds it
//! with `interai::seed` (100,000 items by default), serves it on 127.0.0.1 with `Instance::serve`, and measures:
//!
//! - `search` from one client, sequentially, over a realistic mix of one- to five-word queries from the seeder's
//!   vocabulary, some with filters (kinds, content_types, min_status, tags), some sorted by trust or recency, some
//!   followed by a second page through `next_cursor`;
//! - the same mix from several concurrent clients;
//! - `get` with `include: ["body", "claims", "explanation"]` on random content items.
//!
//! It prints one table per backend with p50, p90, p99, mean and max per category, plus the service time the server
//! audited for each call (`mcp_calls.duration_micros`: the tool pipeline without HTTP, authentication and rmcp
//! framing). With `INTERAI_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres` it also runs on a fresh
//! PostgreSQL database `interai_bench_<ulid>`, dropped again at the end; after seeding it runs `VACUUM ANALYZE`, as
//! the autovacuum of a production server would (a development server may have autovacuum off).
//!
//! Options (environment variables, all optional):
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `INTERAI_BENCH_ITEMS` | 100000 | content items to seed |
//! | `INTERAI_BENCH_SEED` | 1 | the seeder's seed |
//! | `INTERAI_BENCH_SEED_CONCURRENCY` | 4 | items the seeder writes at the same time |
//! | `INTERAI_BENCH_SEARCHES` | 2000 | sequential `search` calls measured |
//! | `INTERAI_BENCH_CONCURRENT_SEARCHES` | 2000 | `search` calls measured across the concurrent clients |
//! | `INTERAI_BENCH_CLIENTS` | 4 | concurrent clients |
//! | `INTERAI_BENCH_GETS` | 1000 | `get` calls measured |
//! | `INTERAI_BENCH_WARMUP` | 200 | unmeasured calls before each phase |
//! | `INTERAI_BENCH_BACKENDS` | `sqlite,postgres` | which backends to run (PostgreSQL only with the URL set) |
//! | `INTERAI_BENCH_DATABASE_URL` | — | a PostgreSQL server URL; enables the PostgreSQL run |
//! | `INTERAI_BENCH_DATABASE_PATH` | — | a SQLite file to use instead of a temporary one; seeded only when empty, kept |
//! | `INTERAI_BENCH_REALM` | `bench.test` | the instance's realm; a reused database must have been created for it (`interai admin --init seed` uses `localhost:8080` unless `INTERAI_REALM` says otherwise) |
//! | `INTERAI_BENCH_POSTGRES_DATABASE` | — | an existing PostgreSQL database (on the server of the URL) to use instead of a fresh one; seeded only when empty, kept |
//! | `INTERAI_BENCH_KEEP` | 0 | 1: keep the fresh PostgreSQL database and print its name |
//! | `INTERAI_BENCH_SEED_ONLY` | 0 | 1: seed, report the seeding time and stop |
//! | `INTERAI_BENCH_WORKER_THREADS` | cores | tokio worker threads (server and clients share them) |
//! | `INTERAI_BENCH_LOG` | — | a log filter for the instance, e.g. `sqlx::query=debug` |
//! | `INTERAI_BENCH_SEARCH_CANDIDATES` | 2000 | the instance's `search_candidates` setting |

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use interai::clock::{Clock, SystemClock};
use interai::config::Config;
use interai::domain::{ActorType, AuthenticatedActor, ScopeSet};
use interai::instance::Instance;
use interai::seed::{SeedOptions, SplitMix64, sample_query, topics};
use interai::service::Service;
use interai::service::actors::NewActor;
use interai::service::keys::NewApiKey;
use interai::service::search::SearchRequest;
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::{Value, json};

use common::{
    Backend, BenchDatabase, LoopbackServer, McpClient, backends_from_environment, connect, number, tool_error_code,
    variable,
};
use sqlx::Connection;

/// The targets of issue 5, in microseconds.
const SEARCH_P50_TARGET: u64 = 10_000;
const SEARCH_P99_TARGET: u64 = 50_000;
const GET_P50_TARGET: u64 = 5_000;

// ---------------------------------------------------------------- options

#[derive(Debug, Clone)]
struct Options {
    items: u64,
    seed: u64,
    seed_concurrency: usize,
    searches: usize,
    concurrent_searches: usize,
    clients: usize,
    gets: usize,
    warmup: usize,
    backends: Vec<Backend>,
    postgres_url: Option<String>,
    sqlite_path: Option<PathBuf>,
    postgres_database: Option<String>,
    realm: String,
    keep: bool,
    seed_only: bool,
    worker_threads: Option<usize>,
    log_filter: Option<String>,
    search_candidates: Option<u32>,
}

impl Options {
    fn from_environment() -> Options {
        let (postgres_url, backends) = backends_from_environment();
        Options {
            items: number("INTERAI_BENCH_ITEMS", 100_000_u64).max(1),
            seed: number("INTERAI_BENCH_SEED", 1_u64),
            seed_concurrency: number("INTERAI_BENCH_SEED_CONCURRENCY", 4_usize).max(1),
            searches: number("INTERAI_BENCH_SEARCHES", 2000_usize),
            concurrent_searches: number("INTERAI_BENCH_CONCURRENT_SEARCHES", 2000_usize),
            clients: number("INTERAI_BENCH_CLIENTS", 4_usize).max(1),
            gets: number("INTERAI_BENCH_GETS", 1000_usize),
            warmup: number("INTERAI_BENCH_WARMUP", 200_usize),
            backends,
            postgres_url,
            sqlite_path: variable("INTERAI_BENCH_DATABASE_PATH").map(PathBuf::from),
            postgres_database: variable("INTERAI_BENCH_POSTGRES_DATABASE"),
            realm: variable("INTERAI_BENCH_REALM").unwrap_or_else(|| "bench.test".to_owned()),
            keep: number("INTERAI_BENCH_KEEP", 0_u8) != 0,
            seed_only: number("INTERAI_BENCH_SEED_ONLY", 0_u8) != 0,
            worker_threads: variable("INTERAI_BENCH_WORKER_THREADS").map(|_| number("INTERAI_BENCH_WORKER_THREADS", 2)),
            log_filter: variable("INTERAI_BENCH_LOG"),
            search_candidates: variable("INTERAI_BENCH_SEARCH_CANDIDATES")
                .map(|_| number("INTERAI_BENCH_SEARCH_CANDIDATES", 2000_u32)),
        }
    }
}

// ---------------------------------------------------------------- database

// ---------------------------------------------------------------- the query mix

/// One measured `search` call, or a first page followed by its second page.
#[derive(Debug, Clone)]
struct SearchCase {
    category: &'static str,
    arguments: Value,
    /// Whether to fetch the next page with `next_cursor` (measured as `rank, page 2 by cursor`).
    next_page: bool,
}

const CONTENT_TYPES: &[&str] = &[
    "procedure",
    "guide",
    "troubleshooting",
    "note",
    "checklist",
    "code",
    "runbook",
];

/// A realistic mix: mostly ranked queries of one to five words, some filtered, some sorted otherwise, some paged.
fn search_case(random: &mut SplitMix64) -> SearchCase {
    let words = 1 + random.weighted(&[25, 35, 25, 10, 5]);
    let (topic, query) = sample_query(random, words);
    let mut arguments = json!({ "query": query });
    let category = match random.weighted(&[45, 15, 8, 6, 8, 7, 5, 6]) {
        0 => "rank, all kinds",
        1 => {
            arguments["kinds"] = json!(["content"]);
            "rank, content"
        }
        2 => {
            arguments["kinds"] = json!(["content"]);
            let first = random.text(CONTENT_TYPES);
            let second = random.text(CONTENT_TYPES);
            arguments["content_types"] = if first == second {
                json!([first])
            } else {
                json!([first, second])
            };
            "rank, content_types"
        }
        3 => {
            arguments["min_status"] = json!(if random.chance(0.7) {
                "supported"
            } else {
                "high_confidence"
            });
            arguments["include_disputed"] = json!(false);
            "rank, min_status"
        }
        4 => {
            arguments["kinds"] = json!(["content"]);
            arguments["tags"] = json!([topics()[topic].tag]);
            "rank, tags"
        }
        5 => {
            arguments["sort"] = json!("trust");
            "sort trust"
        }
        6 => {
            arguments["sort"] = json!("recent");
            if random.chance(0.5) {
                arguments["kinds"] = json!(["content"]);
            }
            "sort recent"
        }
        _ => {
            arguments["kinds"] = json!(["content"]);
            arguments["limit"] = json!(10);
            return SearchCase {
                category: "rank, page 1",
                arguments,
                next_page: true,
            };
        }
    };
    if random.chance(0.2) {
        arguments["limit"] = json!(*random.pick(&[5_u32, 20, 50]));
    }
    SearchCase {
        category,
        arguments,
        next_page: false,
    }
}

// ---------------------------------------------------------------- the MCP client

/// Latencies (µs) by category, and failures by error code.
#[derive(Debug, Default)]
struct Samples {
    latencies: BTreeMap<&'static str, Vec<u64>>,
    errors: BTreeMap<String, u64>,
    calls: usize,
}

impl Samples {
    fn merge(&mut self, other: Samples) {
        for (category, latencies) in other.latencies {
            self.latencies.entry(category).or_default().extend(latencies);
        }
        for (code, count) in other.errors {
            *self.errors.entry(code).or_default() += count;
        }
        self.calls += other.calls;
    }

    fn all(&self) -> Vec<u64> {
        self.latencies.values().flatten().copied().collect()
    }
}

/// Calls a tool; returns the structured result and the latency, and counts a failure in `samples`.
async fn timed_call(client: &McpClient, tool: &str, arguments: &Value, samples: &mut Samples) -> (Option<Value>, u64) {
    let arguments: JsonObject = arguments.as_object().cloned().unwrap_or_default();
    let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    let started = Instant::now();
    let result = client.call_tool(request).await;
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    samples.calls += 1;
    match result {
        Ok(result) if let Some(code) = tool_error_code(&result) => {
            let count = samples.errors.entry(code.clone()).or_default();
            *count += 1;
            if *count == 1 {
                eprintln!(
                    "{tool} failed with {code}: {}",
                    result.structured_content.unwrap_or(Value::Null)
                );
            }
            (None, micros)
        }
        Ok(result) => (result.structured_content, micros),
        Err(error) => {
            let count = samples.errors.entry("protocol".to_owned()).or_default();
            *count += 1;
            if *count == 1 {
                eprintln!("{tool} failed at the protocol level: {error}");
            }
            (None, micros)
        }
    }
}

/// Runs `count` search cases from `seed` on one client.
async fn drive_searches(client: Arc<McpClient>, count: usize, seed: u64) -> Samples {
    let mut random = SplitMix64::new(seed);
    let mut samples = Samples::default();
    let mut done = 0;
    while done < count {
        let case = search_case(&mut random);
        let (result, micros) = timed_call(&client, "search", &case.arguments, &mut samples).await;
        samples.latencies.entry(case.category).or_default().push(micros);
        done += 1;
        if case.next_page
            && done < count
            && let Some(cursor) = result
                .as_ref()
                .and_then(|result| result.get("next_cursor"))
                .and_then(Value::as_str)
        {
            let mut arguments = case.arguments.clone();
            arguments["cursor"] = json!(cursor);
            let (_, micros) = timed_call(&client, "search", &arguments, &mut samples).await;
            samples
                .latencies
                .entry("rank, page 2 by cursor")
                .or_default()
                .push(micros);
            done += 1;
        }
    }
    samples
}

async fn drive_gets(client: Arc<McpClient>, ids: Arc<Vec<String>>, count: usize, seed: u64) -> Samples {
    let mut random = SplitMix64::new(seed);
    let mut samples = Samples::default();
    for _ in 0..count {
        let id = &ids[random.index(ids.len())];
        let arguments = json!({ "id": id, "include": ["body", "claims", "explanation"] });
        let (_, micros) = timed_call(&client, "get", &arguments, &mut samples).await;
        samples
            .latencies
            .entry("get body+claims+explanation")
            .or_default()
            .push(micros);
    }
    samples
}

// ---------------------------------------------------------------- statistics

#[derive(Debug, Clone, Copy, Default)]
struct Summary {
    count: usize,
    p50: u64,
    p90: u64,
    p99: u64,
    mean: u64,
    max: u64,
}

fn summarize(values: &[u64]) -> Summary {
    if values.is_empty() {
        return Summary::default();
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let at = |quantile: f64| {
        let position = ((sorted.len() as f64) * quantile).ceil() as usize;
        sorted[position.saturating_sub(1).min(sorted.len() - 1)]
    };
    Summary {
        count: sorted.len(),
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        mean: sorted.iter().sum::<u64>() / sorted.len() as u64,
        max: sorted[sorted.len() - 1],
    }
}

fn milliseconds(micros: u64) -> String {
    format!("{:.2}", micros as f64 / 1000.0)
}

fn row(label: &str, summary: Summary) {
    println!(
        "| {label:<34} | {:>6} | {:>8} | {:>8} | {:>8} | {:>8} | {:>8} |",
        summary.count,
        milliseconds(summary.p50),
        milliseconds(summary.p90),
        milliseconds(summary.p99),
        milliseconds(summary.mean),
        milliseconds(summary.max)
    );
}

fn table_header(title: &str) {
    println!("\n{title}\n");
    println!(
        "| {:<34} | {:>6} | {:>8} | {:>8} | {:>8} | {:>8} | {:>8} |",
        "calls (latency in ms)", "n", "p50", "p90", "p99", "mean", "max"
    );
    println!(
        "|{}|--------|----------|----------|----------|----------|----------|",
        "-".repeat(36)
    );
}

fn verdict(label: &str, value: u64, target: u64) -> String {
    let status = if value <= target { "met" } else { "MISSED" };
    format!(
        "{label} {} ms (target ≤ {} ms): {status}",
        milliseconds(value),
        milliseconds(target)
    )
}

// ---------------------------------------------------------------- one backend

/// A reader agent of its own controller, for the benchmark's clients.
async fn reader(service: &Service) -> (AuthenticatedActor, String) {
    let controller = service
        .create_actor(NewActor {
            actor_type: ActorType::Organization,
            display_name: "Search benchmark".to_owned(),
            controller: None,
        })
        .await
        .expect("controller created");
    let agent = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: "Search benchmark reader".to_owned(),
            controller: Some(controller.id),
        })
        .await
        .expect("agent created");
    let issued = service
        .create_api_key(NewApiKey {
            actor_id: agent.id,
            scopes: ScopeSet::parse_list("read").expect("scopes"),
            expires_at: None,
            label: Some("search benchmark".to_owned()),
        })
        .await
        .expect("key issued");
    let caller = service.authenticate(&issued.secret).await.expect("key works");
    (caller, issued.secret)
}

/// Content IDs to `get`: the results of many sampled queries, so that they spread over topics and ages.
async fn content_ids(service: &Service, caller: &AuthenticatedActor, wanted: usize) -> Vec<String> {
    let mut random = SplitMix64::new(0x5EED);
    let mut ids: Vec<String> = Vec::new();
    let mut attempts = 0;
    while ids.len() < wanted && attempts < wanted {
        attempts += 1;
        let words = 1 + random.index(2);
        let (_, query) = sample_query(&mut random, words);
        let request = SearchRequest {
            query: Some(query),
            kinds: vec!["content".to_owned()],
            limit: Some(50),
            ..SearchRequest::default()
        };
        let page = service.search(caller, &request).await.expect("search for IDs");
        for hit in page.results {
            if !ids.contains(&hit.id) {
                ids.push(hit.id);
            }
        }
    }
    ids.truncate(wanted);
    ids
}

async fn has_content(service: &Service, caller: &AuthenticatedActor) -> bool {
    let request = SearchRequest {
        kinds: vec!["content".to_owned()],
        sort: Some("recent".to_owned()),
        limit: Some(1),
        ..SearchRequest::default()
    };
    !service
        .search(caller, &request)
        .await
        .expect("browse")
        .results
        .is_empty()
}

/// What one backend's run found, for the closing summary.
#[derive(Debug)]
struct BackendResult {
    backend: Backend,
    seed_seconds: Option<f64>,
    sequential: Summary,
    concurrent: Summary,
    get: Summary,
}

async fn run_backend(backend: Backend, options: &Options) -> BackendResult {
    let database = match backend {
        Backend::Sqlite => match &options.sqlite_path {
            Some(path) => BenchDatabase::sqlite_file(path),
            None => BenchDatabase::temporary_sqlite(),
        },
        Backend::Postgres => {
            let base_url = options.postgres_url.as_deref().expect("PostgreSQL URL");
            BenchDatabase::postgres(base_url, options.postgres_database.as_deref(), options.keep).await
        }
    };
    let mut config = Config::for_realm(&options.realm, &database.url, &database.data_dir);
    // The seeder writes far more per controller than any agent may.
    config.writes_per_hour = u32::MAX;
    if let Some(candidates) = options.search_candidates {
        config.search_candidates = candidates;
    }
    if let Some(filter) = &options.log_filter {
        config.log_filter = filter.clone();
        interai::instance::init_logging(&config);
    }
    let clock = Arc::new(SystemClock);
    let instance = Instance::open(config, clock.clone()).await.expect("instance opens");
    instance.bootstrap().await.expect("instance bootstraps");
    let service = instance.service().clone();
    let (caller, key) = reader(&service).await;

    let mut seed_seconds = None;
    if has_content(&service, &caller).await {
        eprintln!("{}: the database already holds content; not seeding", backend.name());
    } else {
        eprintln!("{}: seeding {} items…", backend.name(), options.items);
        let seed_options = SeedOptions {
            items: options.items,
            seed: options.seed,
            controllers: None,
            concurrency: options.seed_concurrency,
        };
        let started = Instant::now();
        let last_report = std::cell::Cell::new(Instant::now());
        let report = interai::seed::seed(&service, seed_options, |done, total| {
            if last_report.get().elapsed() >= Duration::from_secs(30) || done == total {
                last_report.set(Instant::now());
                eprintln!("  {done}/{total} items after {:.0} s", started.elapsed().as_secs_f64());
            }
        })
        .await
        .expect("seeding succeeds");
        seed_seconds = Some(report.elapsed.as_secs_f64());
        println!("{}: seeded {report}", backend.name());
    }
    if database.is_postgres && seed_seconds.is_some() {
        // A production server's autovacuum vacuums and analyzes the new rows: seeding revises items and moves their
        // trust, which leaves dead row versions that every search would otherwise step over. This benchmark's
        // server may have autovacuum off.
        let started = Instant::now();
        let mut connection = sqlx::PgConnection::connect(&database.url).await.expect("connect");
        sqlx::query("VACUUM ANALYZE")
            .execute(&mut connection)
            .await
            .expect("VACUUM ANALYZE");
        connection.close().await.ok();
        eprintln!(
            "postgres: VACUUM ANALYZE after seeding took {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    if options.seed_only {
        instance.close().await;
        return BackendResult {
            backend,
            seed_seconds,
            sequential: Summary::default(),
            concurrent: Summary::default(),
            get: Summary::default(),
        };
    }
    let ids = Arc::new(content_ids(&service, &caller, 2000).await);
    assert!(!ids.is_empty(), "the seeded database has content to get");

    let server = LoopbackServer::start(instance).await;
    let url = server.mcp_url.clone();

    let first = Arc::new(connect(&url, &key, "search-bench-0".to_owned(), true).await);
    // Warm-up: caches, connections, prepared statements.
    drive_searches(first.clone(), options.warmup, 0xAAAA).await;
    drive_gets(first.clone(), ids.clone(), options.warmup / 2, 0xBBBB).await;

    let since = clock.now();
    let started = Instant::now();
    let sequential = drive_searches(first.clone(), options.searches, 0x5EA2C4).await;
    let sequential_seconds = started.elapsed().as_secs_f64();
    let sequential_service = database.service_times("search", since).await;

    let mut clients = vec![first.clone()];
    for index in 1..options.clients {
        clients.push(Arc::new(
            connect(&url, &key, format!("search-bench-{index}"), true).await,
        ));
    }
    let per_client = options.concurrent_searches.div_ceil(options.clients);
    let since_concurrent = clock.now();
    let started = Instant::now();
    let mut running = tokio::task::JoinSet::new();
    for (index, client) in clients.iter().enumerate() {
        running.spawn(drive_searches(client.clone(), per_client, 0xC0C0 + index as u64));
    }
    let mut concurrent = Samples::default();
    while let Some(result) = running.join_next().await {
        concurrent.merge(result.expect("client task"));
    }
    let concurrent_seconds = started.elapsed().as_secs_f64();
    let concurrent_service = database.service_times("search", since_concurrent).await;

    let since_get = clock.now();
    let gets = drive_gets(first.clone(), ids.clone(), options.gets, 0x6E7).await;
    let get_service = database.service_times("get", since_get).await;

    for client in clients {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }
    server.stop().await;

    println!("\n## {} ({} content IDs sampled for get)", backend.name(), ids.len());
    table_header(&format!(
        "search, one client, sequential ({} calls in {:.1} s, {:.0} calls/s)",
        sequential.calls,
        sequential_seconds,
        sequential.calls as f64 / sequential_seconds.max(1e-9)
    ));
    for (category, latencies) in &sequential.latencies {
        row(category, summarize(latencies));
    }
    let sequential_all = summarize(&sequential.all());
    row("all searches", sequential_all);
    row("all searches, server service time", summarize(&sequential_service));
    table_header(&format!(
        "search, {} concurrent clients ({} calls in {:.1} s, {:.0} calls/s)",
        options.clients,
        concurrent.calls,
        concurrent_seconds,
        concurrent.calls as f64 / concurrent_seconds.max(1e-9)
    ));
    for (category, latencies) in &concurrent.latencies {
        row(category, summarize(latencies));
    }
    let concurrent_all = summarize(&concurrent.all());
    row("all searches", concurrent_all);
    row("all searches, server service time", summarize(&concurrent_service));
    table_header("get, one client, sequential");
    let get_all = summarize(&gets.all());
    row("get body+claims+explanation", get_all);
    row("get, server service time", summarize(&get_service));
    let mut errors = sequential.errors;
    for (code, count) in concurrent.errors.into_iter().chain(gets.errors) {
        *errors.entry(code).or_default() += count;
    }
    if !errors.is_empty() {
        println!("\nfailed calls: {errors:?}");
    }
    BackendResult {
        backend,
        seed_seconds,
        sequential: sequential_all,
        concurrent: concurrent_all,
        get: get_all,
    }
}

fn main() {
    let options = Options::from_environment();
    let runtime = common::runtime(options.worker_threads);
    println!(
        "search benchmark: {} items, seed {}, {} sequential searches, {} searches over {} clients, {} gets",
        options.items, options.seed, options.searches, options.concurrent_searches, options.clients, options.gets
    );
    let results: Vec<BackendResult> = runtime.block_on(async {
        let mut results = Vec::new();
        for backend in &options.backends {
            results.push(run_backend(*backend, &options).await);
        }
        results
    });
    if options.seed_only {
        for result in &results {
            println!(
                "{}: seeding took {}",
                result.backend.name(),
                result
                    .seed_seconds
                    .map_or_else(|| "nothing (reused)".to_owned(), |seconds| format!("{seconds:.1} s"))
            );
        }
        return;
    }
    println!("\n## Targets");
    for result in &results {
        println!(
            "- {}: {}; {}; {}; with {} concurrent clients: {}, {}",
            result.backend.name(),
            verdict("search p50", result.sequential.p50, SEARCH_P50_TARGET),
            verdict("search p99", result.sequential.p99, SEARCH_P99_TARGET),
            verdict("get+explanation p50", result.get.p50, GET_P50_TARGET),
            options.clients,
            verdict("search p50", result.concurrent.p50, SEARCH_P50_TARGET),
            verdict("p99", result.concurrent.p99, SEARCH_P99_TARGET),
        );
    }
}
