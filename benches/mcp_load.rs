//! Load benchmark of the MCP write path (not a timed test): sustained `report_usage` and `publish` throughput with
//! p50/p99 latency, driven through the real `/mcp` endpoint over loopback HTTP by concurrent rmcp clients.
//!
//! Run with `cargo bench --bench mcp_load`. It starts one instance in this process on a fresh temporary SQLite
//! database, creates agents of several controllers (one API key and one rmcp Streamable HTTP client, each with its
//! own keep-alive connection, per agent), pre-publishes content through the service layer, and then measures each
//! operation after a warm-up. With `INTERAI_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres` it then
//! runs the same on a freshly created PostgreSQL database `interai_bench_<ulid>`, dropped again at the end.
//!
//! Options (environment variables, all optional):
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `INTERAI_BENCH_SECONDS` | 20 | measured seconds per operation |
//! | `INTERAI_BENCH_WARMUP_SECONDS` | 2 | warm-up seconds per operation, not measured |
//! | `INTERAI_BENCH_CALLS` | — | a fixed number of measured calls per operation instead of a duration |
//! | `INTERAI_BENCH_CLIENTS` | 16 | concurrent clients (agents), each with its own key and connection |
//! | `INTERAI_BENCH_CONTROLLERS` | 8 | root controllers the clients' agents are spread over |
//! | `INTERAI_BENCH_ITEMS` | 64 | content items published before `report_usage` (by 4 other controllers) |
//! | `INTERAI_BENCH_OPERATIONS` | `report_usage,publish` | which operations to run, in order |
//! | `INTERAI_BENCH_BACKENDS` | `sqlite,postgres` | which backends to run (PostgreSQL only with the URL set) |
//! | `INTERAI_BENCH_DATABASE_URL` | — | a PostgreSQL server URL; enables the PostgreSQL run |
//! | `INTERAI_BENCH_DB_CONNECTIONS` | 10 | the instance's `database_max_connections` |
//! | `INTERAI_BENCH_WORKER_THREADS` | cores | tokio worker threads (server and clients share them) |
//! | `INTERAI_BENCH_KEEPALIVE` | 1 | 0: rmcp's default HTTP client (a new TCP connection per request) |
//! | `INTERAI_BENCH_LOG` | — | a log filter for the instance, e.g. `sqlx::query=debug` to see every statement |
//!
//! The write rate limit (per root controller per hour) is raised in the instance's configuration so that it never
//! triggers. Besides the client-side latency the report gives the service time the server recorded for each call
//! (`mcp_calls.duration_micros`: from the tool pipeline's start to the audit row, so without HTTP, authentication,
//! rmcp framing and the commit).

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use interai::clock::{Clock, SystemClock};
use interai::config::Config;
use interai::domain::{ActorType, AuthenticatedActor, PublicId, ScopeSet};
use interai::instance::Instance;
use interai::service::Service;
use interai::service::actors::NewActor;
use interai::service::content::PublishRequest;
use interai::service::keys::NewApiKey;
use interai::service::writes::CallMetadata;
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::{Value, json};

use common::{
    Backend, BenchDatabase, LoopbackServer, McpClient, backends_from_environment, connect, number, tool_error_code,
    variable,
};

/// How many controllers author the content that `report_usage` targets (none of them drives a client).
const AUTHOR_CONTROLLERS: usize = 4;

/// The write rate limit of the benchmark instance: high enough never to trigger.
const UNLIMITED_WRITES_PER_HOUR: u32 = 1_000_000_000;

// ---------------------------------------------------------------- options

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    ReportUsage,
    Publish,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::ReportUsage => "report_usage",
            Operation::Publish => "publish",
        }
    }

    /// The target calls per second from the issue.
    fn target_per_second(self) -> f64 {
        match self {
            Operation::ReportUsage => 1000.0,
            Operation::Publish => 300.0,
        }
    }
}

/// When a measured phase ends.
#[derive(Debug, Clone, Copy)]
enum Length {
    /// After this long (calls in flight at the deadline still count).
    Duration(Duration),
    /// After this many calls in all.
    Calls(usize),
}

#[derive(Debug, Clone)]
struct Options {
    measured: Length,
    warmup: Duration,
    clients: usize,
    controllers: usize,
    items: usize,
    operations: Vec<Operation>,
    backends: Vec<Backend>,
    postgres_url: Option<String>,
    database_connections: Option<u32>,
    worker_threads: Option<usize>,
    keep_alive: bool,
    log_filter: Option<String>,
}

impl Options {
    fn from_environment() -> Options {
        let seconds: f64 = number("INTERAI_BENCH_SECONDS", 20.0);
        let warmup_seconds: f64 = number("INTERAI_BENCH_WARMUP_SECONDS", 2.0);
        let measured = match variable("INTERAI_BENCH_CALLS") {
            Some(_) => Length::Calls(number("INTERAI_BENCH_CALLS", 0_usize).max(1)),
            None => Length::Duration(Duration::from_secs_f64(seconds.max(0.1))),
        };
        let operations = variable("INTERAI_BENCH_OPERATIONS")
            .unwrap_or_else(|| "report_usage,publish".to_owned())
            .split(',')
            .map(|name| match name.trim() {
                "report_usage" | "usage" => Operation::ReportUsage,
                "publish" => Operation::Publish,
                other => panic!("INTERAI_BENCH_OPERATIONS: unknown operation {other:?}"),
            })
            .collect();
        let (postgres_url, backends) = backends_from_environment();
        Options {
            measured,
            warmup: Duration::from_secs_f64(warmup_seconds.max(0.0)),
            clients: number("INTERAI_BENCH_CLIENTS", 16_usize).max(1),
            controllers: number("INTERAI_BENCH_CONTROLLERS", 8_usize).max(1),
            items: number("INTERAI_BENCH_ITEMS", 64_usize).max(1),
            operations,
            backends,
            postgres_url,
            database_connections: variable("INTERAI_BENCH_DB_CONNECTIONS")
                .map(|_| number("INTERAI_BENCH_DB_CONNECTIONS", 10)),
            worker_threads: variable("INTERAI_BENCH_WORKER_THREADS").map(|_| number("INTERAI_BENCH_WORKER_THREADS", 2)),
            keep_alive: number("INTERAI_BENCH_KEEPALIVE", 1_u8) != 0,
            log_filter: variable("INTERAI_BENCH_LOG"),
        }
    }
}

// ---------------------------------------------------------------- deterministic randomness

/// A small deterministic generator, so that every run sends the same mix.
struct Xorshift(u64);

impl Xorshift {
    fn seeded(seed: u64) -> Xorshift {
        Xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, modulus: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % modulus
    }

    fn index(&mut self, length: usize) -> usize {
        usize::try_from(self.below(length as u64)).unwrap_or(0)
    }
}

// ---------------------------------------------------------------- database

// ---------------------------------------------------------------- fixtures

/// An agent with its key.
struct Agent {
    caller: AuthenticatedActor,
    key: String,
}

async fn controller(service: &Service, name: &str) -> PublicId {
    service
        .create_actor(NewActor {
            actor_type: ActorType::User,
            display_name: name.to_owned(),
            controller: None,
        })
        .await
        .expect("controller created")
        .id
}

async fn agent_of(service: &Service, controller: &PublicId, name: &str) -> Agent {
    let actor = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: name.to_owned(),
            controller: Some(controller.clone()),
        })
        .await
        .expect("agent created");
    let issued = service
        .create_api_key(NewApiKey {
            actor_id: actor.id.clone(),
            scopes: ScopeSet::parse_list("read,publish,usage,review,rate").expect("scopes"),
            expires_at: None,
            label: Some("mcp_load benchmark".to_owned()),
        })
        .await
        .expect("key issued");
    let caller = service.authenticate(&issued.secret).await.expect("key works");
    Agent {
        caller,
        key: issued.secret,
    }
}

/// What `report_usage` may target: content items and their claims.
#[derive(Debug, Clone, Default)]
struct Targets {
    contents: Vec<String>,
    claims: Vec<String>,
}

/// Publishes `items` procedures by agents of `AUTHOR_CONTROLLERS` controllers, through the service layer.
async fn publish_targets(service: &Service, items: usize) -> Targets {
    let mut authors = Vec::new();
    for index in 0..AUTHOR_CONTROLLERS {
        let owner = controller(service, &format!("Author team {index}")).await;
        authors.push(agent_of(service, &owner, &format!("Author agent {index}")).await);
    }
    let mut targets = Targets::default();
    for item in 0..items {
        let author = &authors[item % authors.len()];
        let outcome = service
            .publish(
                &author.caller,
                &CallMetadata::internal(interai::service::writes::WriteOperation::Publish, json!({})),
                PublishRequest {
                    content_type: "procedure".to_owned(),
                    title: format!("Procedure {item}: rotate the build cache without downtime"),
                    summary: format!("How to rotate build cache number {item} safely."),
                    body_markdown: procedure_body(&format!("setup-{item}")),
                    claims: (0..3)
                        .map(|claim| claim_text(&format!("setup-{item}"), claim))
                        .collect(),
                    tags: vec!["operations".to_owned(), "ci".to_owned()],
                    language: Some("en".to_owned()),
                    ..PublishRequest::default()
                },
            )
            .await
            .expect("setup publish succeeds");
        targets.contents.push(outcome.id);
        targets.claims.extend(outcome.claims.into_iter().map(|claim| claim.id));
    }
    targets
}

/// A Markdown procedure of about 5 KB; `marker` makes it unique.
fn procedure_body(marker: &str) -> String {
    let mut body = format!(
        "# Rotating the build cache ({marker})\n\n\
         This procedure replaces the shared build cache of a CI fleet without failing running jobs. It was \
         written after several incidents where a full disk on the cache volume stopped every pipeline at once.\n\n\
         ## Before you start\n\n\
         - Make sure no release pipeline is running; releases pin the cache generation they started with.\n\
         - Check that the new volume has at least twice the space of the current cache.\n\
         - Announce the maintenance window in the team channel ten minutes ahead.\n\n\
         ## Steps\n\n"
    );
    for step in 1..=12 {
        body.push_str(&format!(
            "{step}. Drain runner group {step} from the scheduler, wait until its running jobs finish, then \
             point its cache mount at the new generation and re-enable it. Verify with a dry-run job that \
             the first build restores at least one layer from the new cache before moving on to the next \
             group; if it does not, roll the group back and stop here.\n"
        ));
    }
    body.push_str(
        "\n## Verification\n\n\
         ```sh\n\
         ci-cache status --generation new\n\
         ci-cache verify --sample 50 --max-miss-rate 0.05\n\
         ```\n\n\
         | Check | Expected |\n|---|---|\n\
         | cache hit rate after one hour | above 80 % |\n\
         | p95 restore time | under 20 s |\n\
         | failed jobs attributed to the cache | none |\n\n\
         ## Rollback\n\n\
         Point every runner group back at the previous generation, in reverse order, and keep the new volume \
         for inspection. The previous generation stays readable for 48 hours after the switch.\n\n\
         ## Notes\n\n",
    );
    while body.len() < 5000 {
        body.push_str(
            "Keep the old generation mounted read-only until the hit rate has recovered: runners that are \
             still draining may read from it. Rotating during peak hours doubles the restore time. ",
        );
    }
    body.push('\n');
    body
}

/// A unique, checkable claim.
fn claim_text(marker: &str, index: usize) -> String {
    match index {
        0 => {
            format!("Draining runner groups one at a time keeps running jobs green during a cache rotation ({marker}).")
        }
        1 => format!("A new cache generation reaches an 80 percent hit rate within one hour ({marker})."),
        _ => format!("Keeping the previous generation readable for 48 hours makes the rotation reversible ({marker})."),
    }
}

// ---------------------------------------------------------------- the MCP client

/// The arguments of one call.
fn arguments(operation: Operation, client: usize, sequence: u64, targets: &Targets, random: &mut Xorshift) -> Value {
    match operation {
        Operation::ReportUsage => {
            let target = if random.below(10) == 0 && !targets.claims.is_empty() {
                &targets.claims[random.index(targets.claims.len())]
            } else {
                &targets.contents[random.index(targets.contents.len())]
            };
            let result = match random.below(20) {
                0..=13 => "success",
                14..=15 => "partial",
                16..=18 => "failure",
                _ => "unknown",
            };
            let usage_type = ["implementation", "execution", "configuration", "test"][random.index(4)];
            let environment = ["production", "staging", "ci"][random.index(3)];
            let mut arguments = json!({
                "target": target,
                "usage_type": usage_type,
                "result": result,
                "real_world_use": random.below(10) < 6,
                "context": { "environment": environment, "runner": format!("group-{}", random.below(12)) },
                "metrics": { "duration_ms": 200 + random.below(5000), "retries": random.below(3) },
            });
            if random.below(5) == 0 {
                arguments["note"] = json!(format!(
                    "Run {sequence} of agent {client}: step {} needed one retry, the rest went as described.",
                    1 + random.below(12)
                ));
            }
            arguments
        }
        Operation::Publish => {
            let marker = format!("client {client}, call {sequence}");
            json!({
                "content_type": "procedure",
                "title": format!("Rotating the build cache ({marker})"),
                "summary": "Replace the shared CI build cache without failing running jobs, one runner group at a time.",
                "body_markdown": procedure_body(&marker),
                "claims": (0..3).map(|claim| json!({ "text": claim_text(&marker, claim) })).collect::<Vec<_>>(),
                "subjects": [{ "name": "CI build cache", "type": "system" }],
                "tags": ["operations", "ci"],
                "language": "en",
            })
        }
    }
}

/// What one client measured in one phase.
#[derive(Debug, Default)]
struct ClientRun {
    /// Latency of every call, in microseconds.
    latencies: Vec<u64>,
    /// When each call completed, in seconds since the phase started.
    completed: Vec<f64>,
    /// Failed calls by error code (`protocol` for transport or JSON-RPC failures).
    errors: BTreeMap<String, u64>,
}

/// What every client of one phase shares.
#[derive(Debug, Clone)]
struct Phase {
    operation: Operation,
    targets: Arc<Targets>,
    started: Instant,
    /// The end of a timed phase; `None` for a phase of a fixed number of calls.
    deadline: Option<Instant>,
}

/// Calls the phase's operation on `client` until the phase ends (or `calls` calls are done, without a deadline).
async fn drive(client: Arc<McpClient>, phase: Phase, index: usize, calls: usize, seed: u64) -> ClientRun {
    let Phase {
        operation,
        targets,
        started: phase_started,
        deadline,
    } = phase;
    let mut random = Xorshift::seeded(seed);
    let mut run = ClientRun::default();
    let mut sequence = 0_u64;
    loop {
        match deadline {
            Some(deadline) if Instant::now() >= deadline => break,
            None if run.latencies.len() >= calls => break,
            _ => {}
        }
        sequence += 1;
        let arguments: JsonObject = match arguments(operation, index, seed ^ sequence, &targets, &mut random) {
            Value::Object(fields) => fields,
            _ => JsonObject::new(),
        };
        let request = CallToolRequestParams::new(operation.name()).with_arguments(arguments);
        let started = Instant::now();
        let result = client.call_tool(request).await;
        let elapsed = started.elapsed();
        run.latencies
            .push(u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX));
        run.completed.push(phase_started.elapsed().as_secs_f64());
        match result {
            Ok(result) => {
                if let Some(code) = tool_error_code(&result) {
                    *run.errors.entry(code).or_default() += 1;
                }
            }
            Err(error) => {
                *run.errors.entry("protocol".to_owned()).or_default() += 1;
                if run.errors.get("protocol") == Some(&1) {
                    eprintln!(
                        "client {index}: {} failed at the protocol level: {error}",
                        operation.name()
                    );
                }
            }
        }
    }
    run
}

/// The merged result of one phase.
#[derive(Debug)]
struct PhaseResult {
    calls: usize,
    seconds: f64,
    latencies: Vec<u64>,
    errors: BTreeMap<String, u64>,
    /// Calls per second in each fifth of the phase, to show whether the rate is stable.
    rates: Vec<f64>,
    /// Cores busy on average: in this process (server and clients), and on the whole machine.
    cores: Option<(f64, f64)>,
}

/// Runs one phase: every client calls `operation` concurrently until the phase ends.
async fn run_phase(
    clients: &[Arc<McpClient>],
    operation: Operation,
    targets: &Arc<Targets>,
    length: Length,
    seed: u64,
) -> PhaseResult {
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let (deadline, total_calls) = match length {
        Length::Duration(duration) => (Some(started + duration), 0),
        Length::Calls(calls) => (None, calls),
    };
    let handles: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(index, client)| {
            // Fixed-count phases split the calls evenly, the first clients taking the remainder.
            let calls = total_calls / clients.len() + usize::from(index < total_calls % clients.len());
            let phase = Phase {
                operation,
                targets: targets.clone(),
                started,
                deadline,
            };
            tokio::spawn(drive(
                client.clone(),
                phase,
                index,
                calls,
                seed.wrapping_mul(1000).wrapping_add(index as u64),
            ))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut completed = Vec::new();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for handle in handles {
        let run = handle.await.expect("client task ends");
        latencies.extend(run.latencies);
        completed.extend(run.completed);
        for (code, count) in run.errors {
            *errors.entry(code).or_default() += count;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let cores = cpu_before
        .zip(cpu_seconds())
        .map(|((own_before, all_before), (own_after, all_after))| {
            ((own_after - own_before) / seconds, (all_after - all_before) / seconds)
        });
    latencies.sort_unstable();
    const WINDOWS: usize = 5;
    let window = seconds / WINDOWS as f64;
    let mut counts = [0_usize; WINDOWS];
    for offset in completed {
        counts[((offset / window) as usize).min(WINDOWS - 1)] += 1;
    }
    PhaseResult {
        calls: latencies.len(),
        seconds,
        latencies,
        errors,
        rates: counts.iter().map(|count| *count as f64 / window).collect(),
        cores,
    }
}

/// CPU seconds used so far by this process and by the whole machine (busy time of every core), read from
/// `/proc` on Linux; `None` elsewhere.
fn cpu_seconds() -> Option<(f64, f64)> {
    // USER_HZ, the unit of both files, is 100 on every Linux platform tokio runs on.
    const TICKS_PER_SECOND: f64 = 100.0;
    let process = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesized command name start at field 3 (state); utime and stime are fields 14 and 15.
    let fields: Vec<&str> = process.rsplit_once(')')?.1.split_whitespace().collect();
    let own: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    let machine = std::fs::read_to_string("/proc/stat").ok()?;
    let totals: Vec<f64> = machine
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|value| value.parse().ok())
        .collect();
    // user, nice, system, idle, iowait, irq, softirq, steal: everything but idle and iowait is busy.
    let busy: f64 = totals
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != 3 && *index != 4 && *index < 8)
        .map(|(_, value)| value)
        .sum();
    Some((own / TICKS_PER_SECOND, busy / TICKS_PER_SECOND))
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], percent: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((percent / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn milliseconds(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

// ---------------------------------------------------------------- one backend

/// One row of the report.
#[derive(Debug)]
struct Row {
    backend: Backend,
    operation: Operation,
    clients: usize,
    result: PhaseResult,
    service_times: Vec<u64>,
}

async fn run_backend(backend: Backend, options: &Options) -> Vec<Row> {
    let setup_started = Instant::now();
    let database = match (backend, options.postgres_url.as_deref()) {
        (Backend::Postgres, Some(base_url)) => BenchDatabase::postgres(base_url, None, false).await,
        _ => BenchDatabase::temporary_sqlite(),
    };
    let mut config = Config::for_realm("bench.test", &database.url, &database.data_dir);
    config.writes_per_hour = UNLIMITED_WRITES_PER_HOUR;
    config.shutdown_grace_seconds = 5;
    if let Some(connections) = options.database_connections {
        config.database_max_connections = connections;
    }
    if let Some(filter) = &options.log_filter {
        config.log_filter = filter.clone();
        interai::instance::init_logging(&config);
    }
    let clock = SystemClock;
    let instance = Instance::open(config, Arc::new(clock)).await.expect("instance opens");
    instance.bootstrap().await.expect("instance bootstraps");
    let service = instance.service().clone();

    let targets = Arc::new(publish_targets(&service, options.items).await);
    let mut owners = Vec::new();
    for index in 0..options.controllers.min(options.clients) {
        owners.push(controller(&service, &format!("Team {index}")).await);
    }
    let mut agents = Vec::new();
    for index in 0..options.clients {
        agents.push(agent_of(&service, &owners[index % owners.len()], &format!("Load agent {index}")).await);
    }

    let server = LoopbackServer::start(instance).await;
    let url = server.mcp_url.clone();
    let mut clients = Vec::new();
    for (index, agent) in agents.iter().enumerate() {
        clients.push(Arc::new(
            connect(&url, &agent.key, format!("mcp-load-{index}"), options.keep_alive).await,
        ));
    }
    eprintln!(
        "{}: {} items, {} clients of {} controllers ready in {:.1} s",
        backend.name(),
        options.items,
        clients.len(),
        owners.len(),
        setup_started.elapsed().as_secs_f64()
    );

    let mut rows = Vec::new();
    for (number, &operation) in options.operations.iter().enumerate() {
        let seed = (number as u64 + 1) * 7919;
        if !options.warmup.is_zero() {
            let warmup = run_phase(&clients, operation, &targets, Length::Duration(options.warmup), seed).await;
            eprintln!(
                "{} {}: warm-up {} calls in {:.1} s",
                backend.name(),
                operation.name(),
                warmup.calls,
                warmup.seconds
            );
        }
        let since = clock.now();
        let result = run_phase(&clients, operation, &targets, options.measured, seed + 1).await;
        let mut service_times = database.service_times(operation.name(), since).await;
        service_times.sort_unstable();
        eprintln!(
            "{} {}: {} calls in {:.1} s; calls/s in each fifth: {}",
            backend.name(),
            operation.name(),
            result.calls,
            result.seconds,
            result
                .rates
                .iter()
                .map(|rate| format!("{rate:.0}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        rows.push(Row {
            backend,
            operation,
            clients: clients.len(),
            result,
            service_times,
        });
    }

    for client in clients {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }
    server.stop().await;
    let sizes = database
        .table_sizes(&[
            "content_items",
            "claims",
            "usage_events",
            "trust_summaries",
            "reputation_observations",
            "mcp_calls",
            "entities",
        ])
        .await;
    eprintln!(
        "{} rows at the end: {}",
        backend.name(),
        sizes
            .iter()
            .map(|(table, count)| format!("{table} {count}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    drop(database);
    rows
}

// ---------------------------------------------------------------- report

fn print_report(rows: &[Row], options: &Options) {
    println!();
    println!(
        "MCP write load over loopback HTTP ({} worker threads, {} cores, {} controllers, {} items, {})",
        options
            .worker_threads
            .map_or_else(|| "default".to_owned(), |threads| threads.to_string()),
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        options.controllers,
        options.items,
        if options.keep_alive {
            "one keep-alive connection per client"
        } else {
            "a new connection per request"
        }
    );
    println!();
    println!(
        "| backend  | operation    | clients |  calls | errors | seconds |  calls/s | p50 ms | p99 ms | svc p50 ms | svc p99 ms | cpu self | cpu all | target        |"
    );
    println!(
        "|----------|--------------|--------:|-------:|-------:|--------:|---------:|-------:|-------:|-----------:|-----------:|---------:|--------:|---------------|"
    );
    for row in rows {
        let result = &row.result;
        let rate = result.calls as f64 / result.seconds.max(f64::EPSILON);
        let errors: u64 = result.errors.values().sum();
        let target = row.operation.target_per_second();
        println!(
            "| {:<8} | {:<12} | {:>7} | {:>6} | {:>6} | {:>7.1} | {:>8.1} | {:>6.2} | {:>6.2} | {:>10.2} | {:>10.2} | {:>8} | {:>7} | {:<13} |",
            row.backend.name(),
            row.operation.name(),
            row.clients,
            result.calls,
            errors,
            result.seconds,
            rate,
            milliseconds(percentile(&result.latencies, 50.0)),
            milliseconds(percentile(&result.latencies, 99.0)),
            milliseconds(percentile(&row.service_times, 50.0)),
            milliseconds(percentile(&row.service_times, 99.0)),
            result
                .cores
                .map_or_else(|| "-".to_owned(), |(own, _)| format!("{own:.2}")),
            result
                .cores
                .map_or_else(|| "-".to_owned(), |(_, all)| format!("{all:.2}")),
            format!("{} ≥{target:.0}", if rate >= target { "met" } else { "MISSED" }),
        );
    }
    for row in rows.iter().filter(|row| !row.result.errors.is_empty()) {
        println!(
            "errors of {} {}: {:?}",
            row.backend.name(),
            row.operation.name(),
            row.result.errors
        );
    }
    println!();
    println!(
        "svc = service time audited by the server (mcp_calls.duration_micros): tool pipeline start to audit row, \
         without HTTP, authentication, rmcp framing and the commit."
    );
    println!(
        "cpu self / cpu all = cores busy on average in this process (server and clients) / on the whole machine \
         (PostgreSQL's server processes count in cpu all only); cpu all well above cpu self on SQLite means \
         something else was running."
    );
}

fn main() {
    let options = Options::from_environment();
    let runtime = common::runtime(options.worker_threads);
    let mut rows = Vec::new();
    for &backend in &options.backends {
        rows.extend(runtime.block_on(run_backend(backend, &options)));
    }
    if options.postgres_url.is_none() {
        eprintln!("(set INTERAI_BENCH_DATABASE_URL=postgres://… to run on PostgreSQL too)");
    }
    print_report(&rows, &options);
}
