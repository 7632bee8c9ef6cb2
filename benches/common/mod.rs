//! What the benchmarks share: environment options, the benchmark database (a temporary SQLite file, a kept SQLite
//! file, or a PostgreSQL database created for the run and dropped after it), the rmcp client they drive `/mcp`
//! with, and the pair of served instances the federation and replication benchmarks peer.

// Each benchmark uses part of this module; the rest would warn as unused in that benchmark's crate.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The allocator `interai serve` runs with (src/main.rs), so that a benchmark measures the instances as the binary
/// runs them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use chrono::{DateTime, Utc};
use interai::apub::client::FederationClient;
use interai::clock::SystemClock;
use interai::config::Config;
use interai::domain::{PeerLevel, PeerState};
use interai::instance::Instance;
use interai::service::Service;
use interai::workers::federation::FederationLoop;
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use sqlx::Connection;

pub mod profile;

/// A connected MCP client.
pub type McpClient = RunningService<RoleClient, ClientConfig>;

/// The database backend a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// The multi-threaded runtime server and clients share, with `worker_threads` threads or one per core.
pub fn runtime(worker_threads: Option<usize>) -> tokio::runtime::Runtime {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(threads) = worker_threads {
        builder.worker_threads(threads.max(1));
    }
    builder.build().expect("tokio runtime")
}

/// An environment variable that is set and not blank.
pub fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.trim().is_empty())
}

/// A numeric environment variable, or `default` when it is not set; a value that is not a number stops the run.
pub fn number<T: std::str::FromStr>(name: &str, default: T) -> T {
    match variable(name) {
        Some(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {text:?}")),
        None => default,
    }
}

/// The PostgreSQL server URL (`INTERAI_BENCH_DATABASE_URL`) and the backends to run (`INTERAI_BENCH_BACKENDS`,
/// default both; PostgreSQL only when the URL is set).
pub fn backends_from_environment() -> (Option<String>, Vec<Backend>) {
    let postgres_url = variable("INTERAI_BENCH_DATABASE_URL");
    if let Some(url) = &postgres_url {
        assert!(
            url.starts_with("postgres://") || url.starts_with("postgresql://"),
            "INTERAI_BENCH_DATABASE_URL must be a postgres:// URL"
        );
    }
    let backends = variable("INTERAI_BENCH_BACKENDS")
        .unwrap_or_else(|| "sqlite,postgres".to_owned())
        .split(',')
        .filter_map(|name| match name.trim() {
            "sqlite" => Some(Backend::Sqlite),
            "postgres" | "postgresql" => postgres_url.is_some().then_some(Backend::Postgres),
            other => panic!("INTERAI_BENCH_BACKENDS: unknown backend {other:?}"),
        })
        .collect();
    (postgres_url, backends)
}

/// Connects one rmcp Streamable HTTP client to `url` with an API key. With `keep_alive` it holds one persistent
/// connection, as a long-running agent would; without, rmcp's default HTTP client opens a connection per request.
pub async fn connect(url: &str, key: &str, client_name: String, keep_alive: bool) -> McpClient {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(key.to_owned());
    let transport = if keep_alive {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .tcp_nodelay(true)
            .build()
            .expect("HTTP client");
        StreamableHttpClientTransport::with_client(http, config)
    } else {
        StreamableHttpClientTransport::from_config(config)
    };
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(client_name, env!("CARGO_PKG_VERSION")),
    )
    .serve(transport)
    .await
    .expect("MCP client connects")
}

/// The spec's error code of a tool result that reports an error (`isError: true`), `None` for a success.
pub fn tool_error_code(result: &rmcp::model::CallToolResult) -> Option<String> {
    result.is_error.unwrap_or(false).then(|| {
        result
            .structured_content
            .as_ref()
            .and_then(|content| content.pointer("/error/code"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("unknown_error")
            .to_owned()
    })
}

/// An instance serving HTTP on a loopback port until stopped.
pub struct LoopbackServer {
    /// The instance's `/mcp` URL.
    pub mcp_url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl LoopbackServer {
    /// Serves `instance` on a free loopback port.
    pub async fn start(instance: interai::instance::Instance) -> LoopbackServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let mcp_url = format!("http://{}/mcp", listener.local_addr().expect("address"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            instance
                .serve(listener, async move {
                    let _ = stopped.await;
                })
                .await
                .expect("serve ends cleanly");
        });
        LoopbackServer { mcp_url, stop, task }
    }

    /// Shuts the server down gracefully and waits for it.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.expect("server task ends");
    }
}

/// The database of one run: a fresh one (removed when dropped) or a reused one (kept).
pub struct BenchDatabase {
    pub url: String,
    /// Where the admin key goes (and, for a temporary SQLite database, the file itself).
    pub data_dir: PathBuf,
    _temporary: Option<tempfile::TempDir>,
    /// A fresh PostgreSQL database to drop at the end: (server URL, database name).
    drop_postgres: Option<(String, String)>,
    pub is_postgres: bool,
}

impl BenchDatabase {
    /// A fresh SQLite database in a temporary directory.
    pub fn temporary_sqlite() -> BenchDatabase {
        let directory = tempfile::tempdir().expect("temporary directory");
        BenchDatabase {
            url: format!("sqlite://{}", directory.path().join("interai.db").display()),
            data_dir: directory.path().to_path_buf(),
            _temporary: Some(directory),
            drop_postgres: None,
            is_postgres: false,
        }
    }

    /// A SQLite database file that outlives the run.
    pub fn sqlite_file(path: &Path) -> BenchDatabase {
        let data_dir = path
            .parent()
            .map(Path::to_path_buf)
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."));
        BenchDatabase {
            url: format!("sqlite://{}", path.display()),
            data_dir,
            _temporary: None,
            drop_postgres: None,
            is_postgres: false,
        }
    }

    /// A PostgreSQL database on the server of `base_url`: `existing` when named (kept), otherwise a fresh
    /// `interai_bench_<ulid>`, dropped at the end unless `keep`.
    pub async fn postgres(base_url: &str, existing: Option<&str>, keep: bool) -> BenchDatabase {
        let directory = tempfile::tempdir().expect("temporary directory");
        let (name, fresh) = match existing {
            Some(name) => (name.to_owned(), false),
            None => (
                format!(
                    "interai_bench_{}",
                    ulid::Ulid::generate().to_string().to_ascii_lowercase()
                ),
                true,
            ),
        };
        if fresh {
            let mut admin = sqlx::PgConnection::connect(base_url)
                .await
                .expect("connect to the PostgreSQL server of INTERAI_BENCH_DATABASE_URL");
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut admin)
                .await
                .expect("create the benchmark database");
            admin.close().await.ok();
        }
        let mut url = url::Url::parse(base_url).expect("INTERAI_BENCH_DATABASE_URL is a URL");
        url.set_path(&format!("/{name}"));
        eprintln!(
            "PostgreSQL database {name} ({})",
            match (fresh, keep) {
                (false, _) => "reused, kept",
                (true, true) => "fresh, kept because INTERAI_BENCH_KEEP is set",
                (true, false) => "fresh, dropped at the end",
            }
        );
        BenchDatabase {
            url: url.to_string(),
            data_dir: directory.path().to_path_buf(),
            _temporary: Some(directory),
            drop_postgres: (fresh && !keep).then(|| (base_url.to_owned(), name)),
            is_postgres: true,
        }
    }

    /// Service times (µs) the server audited for `tool` since `since`.
    pub async fn service_times(&self, tool: &str, since: DateTime<Utc>) -> Vec<u64> {
        let query = "SELECT duration_micros FROM mcp_calls WHERE tool = $1 AND created_at >= $2";
        let rows: Vec<i64> = if self.is_postgres {
            let mut connection = sqlx::PgConnection::connect(&self.url).await.expect("connect");
            let rows = sqlx::query_scalar(query)
                .bind(tool)
                .bind(since)
                .fetch_all(&mut connection)
                .await
                .expect("read mcp_calls");
            connection.close().await.ok();
            rows
        } else {
            let mut connection = sqlx::SqliteConnection::connect(&self.url).await.expect("connect");
            let rows = sqlx::query_scalar(query)
                .bind(tool)
                .bind(since)
                .fetch_all(&mut connection)
                .await
                .expect("read mcp_calls");
            connection.close().await.ok();
            rows
        };
        rows.into_iter()
            .map(|micros| u64::try_from(micros).unwrap_or(0))
            .collect()
    }

    /// Row counts of some tables, for a report; a table that cannot be counted is left out.
    pub async fn table_sizes(&self, tables: &[&'static str]) -> Vec<(&'static str, i64)> {
        let mut sizes = Vec::new();
        for table in tables {
            let query = format!("SELECT COUNT(*) FROM {table}");
            let count: Option<i64> = if self.is_postgres {
                match sqlx::PgConnection::connect(&self.url).await {
                    Ok(mut connection) => sqlx::query_scalar(sqlx::AssertSqlSafe(query))
                        .fetch_one(&mut connection)
                        .await
                        .ok(),
                    Err(_) => None,
                }
            } else {
                match sqlx::SqliteConnection::connect(&self.url).await {
                    Ok(mut connection) => sqlx::query_scalar(sqlx::AssertSqlSafe(query))
                        .fetch_one(&mut connection)
                        .await
                        .ok(),
                    Err(_) => None,
                }
            };
            if let Some(count) = count {
                sizes.push((*table, count));
            }
        }
        sizes
    }
}

impl Drop for BenchDatabase {
    fn drop(&mut self) {
        if let Some((base_url, name)) = self.drop_postgres.take() {
            // Dropping may happen inside the runtime; the database is dropped on a thread of its own.
            let dropped = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .ok()?;
                runtime.block_on(async move {
                    let mut admin = sqlx::PgConnection::connect(&base_url).await.ok()?;
                    sqlx::query(sqlx::AssertSqlSafe(format!(
                        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                    )))
                    .execute(&mut admin)
                    .await
                    .ok()?;
                    Some(name)
                })
            })
            .join();
            match dropped {
                Ok(Some(name)) => eprintln!("dropped database {name}"),
                _ => eprintln!("could not drop the benchmark database; drop interai_bench_* by hand"),
            }
        }
    }
}

/// The value at `fraction` (0 to 1) of sorted samples, nearest rank.
pub fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[index]
}

/// Agents of controllers of their own, each with a key of `scopes`.
pub async fn agents(
    service: &Service,
    count: usize,
    scopes: &str,
    label: &str,
) -> Vec<interai::domain::AuthenticatedActor> {
    let mut callers = Vec::with_capacity(count);
    for index in 0..count {
        let owner = service
            .create_actor(interai::service::actors::NewActor {
                actor_type: interai::domain::ActorType::User,
                display_name: format!("{label} owner {index}"),
                controller: None,
            })
            .await
            .expect("controller created")
            .id;
        let agent = service
            .create_actor(interai::service::actors::NewActor {
                actor_type: interai::domain::ActorType::Agent,
                display_name: format!("{label} agent {index}"),
                controller: Some(owner),
            })
            .await
            .expect("agent created");
        let issued = service
            .create_api_key(interai::service::keys::NewApiKey {
                actor_id: agent.id.clone(),
                scopes: interai::domain::ScopeSet::parse_list(scopes).expect("scopes"),
                expires_at: None,
                label: None,
            })
            .await
            .expect("key issued");
        callers.push(service.authenticate(&issued.secret).await.expect("key works"));
    }
    callers
}

// ---------------------------------------------------------------- two served instances

/// One instance served on its own `127.0.0.1` socket, its realm that address: plain HTTP and private addresses
/// allowed, the real HTTP transport, the system clock, a fresh database of its own.
pub struct Side {
    pub realm: String,
    pub base_url: String,
    pub service: Service,
    pub federation: interai::service::federation::Federation,
    pub client: FederationClient,
    /// A second handle on the instance's federation loop, to run a pass at once instead of waiting for the served
    /// loop's next poll (leases keep the two from doing the same work twice).
    pub federation_loop: FederationLoop,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    database: BenchDatabase,
}

impl Side {
    /// An instance with the default settings.
    pub async fn start(backend: Backend, postgres_url: Option<&str>) -> Side {
        Side::start_with(backend, postgres_url, &[]).await
    }

    /// An instance with these configuration variables set as well (`INTERAI_*` names and values).
    pub async fn start_with(backend: Backend, postgres_url: Option<&str>, settings: &[(&str, String)]) -> Side {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let address = listener.local_addr().expect("address");
        let database = match (backend, postgres_url) {
            (Backend::Postgres, Some(url)) => BenchDatabase::postgres(url, None, false).await,
            _ => BenchDatabase::temporary_sqlite(),
        };
        let mut environment = BTreeMap::new();
        for (name, value) in [
            ("INTERAI_REALM", address.to_string()),
            ("INTERAI_LISTEN", address.to_string()),
            ("INTERAI_DATABASE_URL", database.url.clone()),
            ("INTERAI_DATA_DIR", database.data_dir.display().to_string()),
            ("INTERAI_FEDERATION_ALLOW_HTTP", "true".to_owned()),
            ("INTERAI_FEDERATION_ALLOW_PRIVATE", "true".to_owned()),
        ] {
            environment.insert(name.to_owned(), value);
        }
        for (name, value) in settings {
            environment.insert((*name).to_owned(), value.clone());
        }
        let config = Config::from_sources(None, &environment).expect("valid configuration");
        let base_url = config.public_base_url();
        assert_eq!(base_url, format!("http://{address}"), "the public URL is the socket's");
        let instance = Instance::open(config, Arc::new(SystemClock))
            .await
            .expect("instance opens");
        instance.bootstrap().await.expect("instance bootstraps");
        let service = instance.service().clone();
        let federation = instance.federation().clone();
        let client = instance.federation_client();
        let federation_loop = instance.federation_loop();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            instance
                .serve(listener, async move {
                    let _ = stopped.await;
                })
                .await
                .expect("serve ends cleanly");
        });
        Side {
            realm: address.to_string(),
            base_url,
            service,
            federation,
            client,
            federation_loop,
            stop,
            task,
            database,
        }
    }

    /// The instance's database.
    pub fn database(&self) -> &BenchDatabase {
        &self.database
    }

    pub async fn peer_state(&self, realm: &str) -> Option<PeerState> {
        self.federation.peer_view(realm).await.ok().map(|view| view.peer.state)
    }

    /// The fingerprint of this instance's signing key, as its admin would read it out to a peer's admin.
    pub async fn fingerprint(&self) -> String {
        self.federation
            .signing_key()
            .await
            .expect("the instance's key")
            .key_pair
            .public_key()
            .fingerprint()
    }

    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.expect("server task ends");
    }
}

/// Runs both instances' federation loops until `done` holds (at most 30 s).
pub async fn wait_until(alpha: &Side, beta: &Side, what: &str, done: impl AsyncFn() -> bool) {
    let started = Instant::now();
    while !done().await {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{what} did not happen within 30 s"
        );
        alpha.federation_loop.run_once().await;
        beta.federation_loop.run_once().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Alpha reads beta's manifest and adds it; alpha's Follow reaches beta over the socket, where alpha waits for
/// beta's admin (`pending_in`).
pub async fn introduce(alpha: &Side, beta: &Side) {
    let beta_url = alpha.client.peer_url(&beta.base_url).expect("beta's URL");
    let introduction = alpha.client.fetch_manifest(&beta_url).await.expect("beta's manifest");
    alpha
        .federation
        .add_peer(&introduction, PeerLevel::Standard)
        .await
        .expect("alpha adds beta");
    wait_until(alpha, beta, "beta receiving alpha's Follow", async || {
        beta.peer_state(&alpha.realm).await == Some(PeerState::PendingIn)
    })
    .await;
}

/// Alpha adds beta (alpha's Follow reaches beta over the socket), beta approves alpha with its fingerprint (beta's
/// Accept reaches alpha): both are then active peers.
pub async fn peer(alpha: &Side, beta: &Side) {
    introduce(alpha, beta).await;
    let alpha_fingerprint = alpha.fingerprint().await;
    beta.federation
        .approve_peer(&alpha.realm, None, Some(&alpha_fingerprint))
        .await
        .expect("beta approves alpha");
    wait_until(alpha, beta, "alpha receiving beta's Accept", async || {
        alpha.peer_state(&beta.realm).await == Some(PeerState::Active)
    })
    .await;
    assert_eq!(beta.peer_state(&alpha.realm).await, Some(PeerState::Active));
}

/// p50, p99 and max of sorted samples.
pub struct Spread {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(sorted: &[f64]) -> Spread {
        if sorted.is_empty() {
            return Spread {
                p50: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
            };
        }
        Spread {
            p50: percentile(sorted, 0.5),
            p99: percentile(sorted, 0.99),
            max: sorted[sorted.len() - 1],
        }
    }

    pub fn show(&self) -> String {
        format!("{:.2} / {:.2} / {:.2}", self.p50, self.p99, self.max)
    }
}
