//! The composition root: builds the store, the service, the background workers and the router of one instance, and
//! serves it.
//!
//! Nothing here is global, so a test process can run many instances side by side, each with its own
//! database and clock.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use crate::clock::SharedClock;
use crate::config::{Config, LogFormat};
use crate::metrics::Metrics;
use crate::service::bootstrap::BootstrapOutcome;
use crate::service::federation::Federation as FederationUseCases;
use crate::service::{Service, ServiceError, ServiceSettings};
use crate::store::{Store, StoreError};
use crate::workers::Workers;

/// Why an instance could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// The database could not be opened or migrated.
    #[error("database: {0}")]
    Store(#[from] StoreError),
    /// A use case failed during start.
    #[error("{0}")]
    Service(#[from] ServiceError),
    /// A file or socket operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A command that must not create a realm found no database holding one.
    #[error(
        "no interai realm in the database {database} (data directory {data_dir}); admin commands do not create one. \
         Run them with the INTERAI_DATA_DIR or INTERAI_DATABASE_URL of the instance they manage, or add --init \
         (interai admin --init …) to create a new realm here"
    )]
    NotInitialized {
        /// The database URL, without its password.
        database: String,
        /// The configured data directory.
        data_dir: String,
    },
}

/// One running (or ready to run) instance.
#[derive(Debug)]
pub struct Instance {
    config: Config,
    service: Service,
    /// The federation use cases, beside the agent-facing ones and sharing their store and clock.
    federation: FederationUseCases,
    store: Store,
    transport: federation::transport::SharedTransport,
    /// The instance's own metrics registry, shared by every router built from it.
    metrics: Metrics,
}

impl Instance {
    /// Opens the configured database (creating the data directory and applying migrations) and builds the service.
    pub async fn open(config: Config, clock: SharedClock) -> Result<Instance, InstanceError> {
        if config.database_url.starts_with("sqlite:") {
            create_private_directory(&config.data_dir)?;
            if let Some(parent) =
                sqlite_path(&config.database_url).and_then(|path| path.parent().map(Path::to_path_buf))
                && !parent.as_os_str().is_empty()
            {
                create_directory(&parent)?;
            }
        } else if config.data_dir.exists() {
            // Only `admin.key` lives there with PostgreSQL, but it is still nobody else's business.
            create_private_directory(&config.data_dir)?;
        }
        let store = Store::connect(
            &config.database_url,
            config.database_max_connections,
            std::time::Duration::from_millis(config.statement_timeout_ms),
        )
        .await?;
        let key_box = load_key_encryption_key(&config)?;
        let service = Service::new(
            store.clone(),
            clock,
            ServiceSettings {
                realm: config.realm.clone(),
                writes_per_hour: config.writes_per_hour,
                search_candidates: config.search_candidates,
                trust_parameters: crate::trust::TrustParameters::default(),
                public_base_url: config.public_base_url(),
                key_box: Some(key_box),
            },
        );
        // The instance's signing key exists from the first start on, also for a database made before federation.
        let federation = FederationUseCases::new(service.clone());
        federation.ensure_instance_key().await?;
        // Trust reads use the instance-trust table the last batch stored from the first request on.
        federation.load_instance_trust().await?;
        let transport = http_transport(&config)?;
        Ok(Instance {
            config,
            service,
            federation,
            store,
            transport,
            metrics: Metrics::new(),
        })
    }

    /// Opens the configured database only if it already holds a realm; otherwise fails, naming the database and the
    /// data directory, without creating or migrating anything (for SQLite, not even the file). Admin commands use
    /// it, so that one run in the wrong directory cannot start a second realm whose keys the real server rejects.
    pub async fn open_existing(config: Config, clock: SharedClock) -> Result<Instance, InstanceError> {
        let realm =
            crate::store::settings::peek(&config.database_url, crate::service::bootstrap::SETTING_REALM).await?;
        if realm.is_none() {
            return Err(InstanceError::NotInitialized {
                database: url_without_password(&config.database_url),
                data_dir: config.data_dir.display().to_string(),
            });
        }
        Instance::open(config, clock).await
    }

    /// Creates the realm's identities on an empty database and writes the admin key to `<data dir>/admin.key` (mode 0600).
    pub async fn bootstrap(&self) -> Result<BootstrapOutcome, InstanceError> {
        let key_path = self.admin_key_path();
        let data_dir = self.config.data_dir.clone();
        let outcome = self
            .service
            .bootstrap(|secret| {
                create_private_directory(&data_dir).map_err(|error| error.to_string())?;
                write_secret_file(&key_path, secret)
                    .map_err(|error| format!("cannot write {}: {error}", key_path.display()))
            })
            .await?;
        if let BootstrapOutcome::Created { .. } = &outcome {
            tracing::info!(path = %key_path.display(), "admin API key written; it is shown nowhere else");
        }
        Ok(outcome)
    }

    /// Where the bootstrap admin key is written.
    pub fn admin_key_path(&self) -> PathBuf {
        self.config.data_dir.join("admin.key")
    }

    /// The instance's use cases.
    pub fn service(&self) -> &Service {
        &self.service
    }

    /// The instance's federation use cases (peers, keys, the inbox's and the intake's steps, cursors).
    pub fn federation(&self) -> &FederationUseCases {
        &self.federation
    }

    /// The instance's database (for tests that count what it sent).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Replaces the transport of outgoing federation requests (the in-process test network routes them to other
    /// instances' routers).
    pub fn with_transport(mut self, transport: federation::transport::SharedTransport) -> Instance {
        self.transport = transport;
        self
    }

    /// Signs and sends this instance's outgoing federation requests.
    pub fn federation_client(&self) -> crate::apub::client::FederationClient {
        crate::apub::client::FederationClient::new(
            self.federation.clone(),
            self.transport.clone(),
            self.config.federation_allow_http,
            self.metrics.clone(),
        )
    }

    /// The activity-history loop of this instance (started by `serve`; a test runs its passes directly).
    pub fn activity_history(&self) -> crate::workers::activity_history::ActivityHistory {
        crate::workers::activity_history::ActivityHistory::new(self.federation.clone())
    }

    /// The federation loop of this instance (started by `serve`; a test runs its passes directly).
    pub fn federation_loop(&self) -> crate::workers::federation::FederationLoop {
        crate::workers::federation::FederationLoop::new(
            self.federation_client(),
            crate::workers::federation::ReplicationSettings {
                push: self.config.federation_push,
                pull_interval: chrono::TimeDelta::seconds(
                    i64::try_from(self.config.federation_pull_interval_seconds).unwrap_or(60),
                ),
                outbox_min_retention: chrono::TimeDelta::hours(
                    i64::try_from(self.config.outbox_min_retention_hours).unwrap_or(168),
                ),
            },
        )
    }

    /// The instance's metrics, for the parts that count what they do (the federation inbox, the peer gauge).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The HTTP router: `/mcp`, the federation routes, the admin API, the public documents, `/healthz`, `/readyz`
    /// and `/metrics`.
    pub fn router(&self) -> axum::Router {
        crate::http::router(
            self.service.clone(),
            &self.config,
            crate::http::FederationParts {
                client: self.federation_client(),
            },
            self.metrics.clone(),
        )
    }

    /// Serves HTTP on `listener` and runs the background workers until `shutdown` completes, then lets in-flight
    /// requests finish (up to the configured grace period), stops the workers and closes the database.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), InstanceError> {
        let address = listener.local_addr().map_err(|source| InstanceError::Io {
            context: "reading the listening address".to_owned(),
            source,
        })?;
        tracing::info!(address = %address, realm = %self.config.realm, backend = ?self.store.backend(), "serving");
        let workers = Workers::start(
            &self.service,
            &self.config,
            self.federation_loop(),
            self.activity_history(),
        );
        let (stop_sender, stop_receiver) = watch::channel(false);
        let grace = Duration::from_secs(self.config.shutdown_grace_seconds);
        let limits = ConnectionLimits::from_config(&self.config);
        let server = serve_connections(listener, self.router(), limits, self.metrics.clone(), async move {
            shutdown.await;
            let _ = stop_sender.send(true);
            tracing::info!("shutting down: no new connections, finishing in-flight requests");
        });
        let mut stop_watch = stop_receiver.clone();
        tokio::select! {
            () = server => {}
            () = async move {
                let _ = stop_watch.wait_for(|stopped| *stopped).await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::warn!(grace_seconds = grace.as_secs(), "in-flight requests did not finish within the grace period");
            }
        }
        workers.stop().await;
        self.store.close().await;
        tracing::info!("stopped");
        Ok(())
    }

    /// Closes the database connections (for commands that do not serve).
    pub async fn close(&self) {
        self.store.close().await;
    }
}

/// How many connections are served at once, in all and per client, and how long a client may take to send a
/// request header.
#[derive(Debug, Clone, Copy)]
struct ConnectionLimits {
    header_read_timeout: Duration,
    max_connections: u32,
    max_connections_per_client: u32,
}

impl ConnectionLimits {
    fn from_config(config: &Config) -> ConnectionLimits {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(config.header_read_timeout_seconds),
            max_connections: config.max_connections,
            max_connections_per_client: config.max_connections_per_client,
        }
    }
}

/// Serves `router` on `listener` with `config`'s connection limits until `shutdown` completes, as
/// [`Instance::serve`] does without its workers: for a test network whose routers are built and driven by the test
/// but must meet real sockets.
pub async fn serve_router(
    config: &Config,
    listener: TcpListener,
    router: axum::Router,
    metrics: Metrics,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    serve_connections(
        listener,
        router,
        ConnectionLimits::from_config(config),
        metrics,
        shutdown,
    )
    .await;
}

/// Accepts HTTP/1.1 connections and serves `router` on each until `shutdown` completes, then asks every connection
/// to finish its request in flight and returns when all have closed.
///
/// axum's own `serve` sets no header read timeout and no connection cap, so a client that sends its header a byte at
/// a time holds a connection forever, and enough of them exhaust the process's file descriptors. Here a connection
/// is closed when its header is not complete within `header_read_timeout` (hyper's timer, which also ends idle
/// keep-alive connections after that long), and a connection is accepted only while fewer than `max_connections`
/// are open: the rest wait in the listen backlog until one closes. A client address (see [`ClientConnections`])
/// that already holds `max_connections_per_client` gets a 503 and its new connection is closed at once, so one host
/// cannot take every place while others wait. A request's own deadline and body pace are the router's
/// (`http::request_deadline`). Every request carries its client's address as axum's `ConnectInfo`.
async fn serve_connections(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    metrics: Metrics,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let slots = Arc::new(Semaphore::new(
        usize::try_from(limits.max_connections).unwrap_or(usize::MAX),
    ));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let (closing_sender, closing) = watch::channel(false);
    let clients = Arc::new(ClientConnections::new(limits.max_connections_per_client));
    let busy_answer = busy_client_answer();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            () = &mut shutdown => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        let (stream, client_address) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    if !is_connection_error(&error) {
                        // Most likely out of file descriptors: retrying at once would spin, so wait a moment for
                        // connections to close.
                        tracing::error!(error = %error, "cannot accept a connection");
                        tokio::select! {
                            () = &mut shutdown => break,
                            () = tokio::time::sleep(Duration::from_secs(1)) => {}
                        }
                    }
                    continue;
                }
            },
        };
        let Some(client_slot) = clients.admit(client_address.ip()) else {
            refuse_busy_client(&stream, &busy_answer, client_address);
            metrics.record_connection_refused();
            continue;
        };
        // Answers go out as soon as they are written: with Nagle's algorithm a response written in two parts waits
        // for the client's acknowledgement of the first, which the client may delay.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(error = %error, "cannot set TCP_NODELAY on a connection");
        }
        let with_address = tower::ServiceExt::map_request(
            router.clone(),
            move |mut request: axum::http::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(client_address));
                request
            },
        );
        let connection = builder.serve_connection(
            hyper_util::rt::TokioIo::new(stream),
            hyper_util::service::TowerToHyperService::new(with_address),
        );
        let mut closing = closing.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let _client_slot = client_slot;
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(error = %error, "connection ended with an error");
                    }
                    return;
                }
                _ = closing.wait_for(|closing| *closing) => {}
            }
            connection.as_mut().graceful_shutdown();
            if let Err(error) = connection.await {
                tracing::debug!(error = %error, "connection ended with an error while shutting down");
            }
        });
    }
    drop(listener);
    let _ = closing_sender.send(true);
    // Every open connection holds a slot until it ends, so holding all of them means every connection has ended.
    let _ = slots.acquire_many(limits.max_connections).await;
}

/// The open connections of each client, counted by [`ClientKey`], so that one client cannot hold more than its
/// share.
#[derive(Debug)]
struct ClientConnections {
    open: std::sync::Mutex<std::collections::HashMap<ClientKey, u32>>,
    cap: u32,
}

/// Whose connection it is, as far as the cap goes: an IPv4 address, or an IPv6 address's /64 (the network one
/// subscriber is given, whose 2^64 addresses it may use at will). An IPv4 address mapped into IPv6 counts as the
/// IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ClientKey {
    V4(std::net::Ipv4Addr),
    V6Network(u64),
}

impl ClientKey {
    fn of(address: std::net::IpAddr) -> ClientKey {
        match address.to_canonical() {
            std::net::IpAddr::V4(v4) => ClientKey::V4(v4),
            std::net::IpAddr::V6(v6) => ClientKey::V6Network((v6.to_bits() >> 64) as u64),
        }
    }
}

/// A client's place, given back when the connection ends.
#[derive(Debug)]
struct ClientSlot {
    clients: Arc<ClientConnections>,
    key: ClientKey,
}

impl ClientConnections {
    fn new(cap: u32) -> ClientConnections {
        ClientConnections {
            open: std::sync::Mutex::new(std::collections::HashMap::new()),
            cap: cap.max(1),
        }
    }

    /// A place for one more connection of `address`, or `None` when it holds its cap.
    fn admit(self: &Arc<Self>, address: std::net::IpAddr) -> Option<ClientSlot> {
        let key = ClientKey::of(address);
        let mut open = self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let count = open.entry(key).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(ClientSlot {
            clients: self.clone(),
            key,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut open = self
            .clients
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(count) = open.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// The answer of a connection beyond its client's cap: 503 with the spec's error form and `Retry-After`.
fn busy_client_answer() -> Vec<u8> {
    let body = serde_json::json!({
        "error": {
            "code": "rate_limited",
            "message": "too many connections from this address at once; retry when one of them has closed",
            "details": { "retry_after": 1 }
        }
    })
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Writes [`busy_client_answer`] without waiting (a client that does not read it is owed nothing more) and lets the
/// caller close the connection.
fn refuse_busy_client(stream: &tokio::net::TcpStream, answer: &[u8], client_address: std::net::SocketAddr) {
    tracing::debug!(client = %client_address, "connection over the per-client cap refused");
    let _ = stream.try_write(answer);
}

fn is_connection_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// The database URL as it may be shown: a PostgreSQL password is left out.
pub fn url_without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

/// Library targets that would bury the instance's own lines: rmcp writes three INFO lines for every stateless MCP
/// request, and sqlx's slow-statement warnings carry a whole statement over several lines. Each stays at the level
/// given here unless the configured filter names the library itself (e.g. `info,rmcp=debug`).
const QUIET_LIBRARIES: &[(&str, &str)] = &[("rmcp", "rmcp=warn"), ("sqlx", crate::store::QUIET_LOG_DIRECTIVES)];

/// The configured `tracing` filter with the quiet levels of [`QUIET_LIBRARIES`] added for every library it does not
/// name.
pub fn effective_log_filter(configured: &str) -> String {
    let named_targets: Vec<&str> = configured
        .split(',')
        .map(|directive| directive.trim().split(['=', '[']).next().unwrap_or("").trim())
        .collect();
    let mut filter = configured.trim().to_owned();
    for (library, directives) in QUIET_LIBRARIES {
        let named = named_targets.iter().any(|target| {
            *target == *library || target.strip_prefix(library).is_some_and(|rest| rest.starts_with("::"))
        });
        if !named {
            if !filter.is_empty() {
                filter.push(',');
            }
            filter.push_str(directives);
        }
    }
    filter
}

/// Installs the process's log subscriber on standard error: text or JSON lines, filtered by `INTERAI_LOG` with the
/// noisy libraries kept quiet, coloured only when standard error is a terminal. Later calls do nothing.
pub fn init_logging(config: &Config) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_new(effective_log_filter(&config.log_filter))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let _ = match config.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Creates `path` and its missing parents, readable only by the owner (mode 0700 on Unix). Directories that
/// already exist keep their mode: the database's directory may be a shared one, its files are restricted anyway.
fn create_directory(path: &Path) -> Result<(), InstanceError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path).map_err(|source| InstanceError::Io {
        context: format!("creating {}", path.display()),
        source,
    })
}

/// Creates the data directory (the database and `admin.key`) like [`create_directory`], and narrows it to its
/// owner (0700) if it already existed with access for group or others, logging that it did.
pub fn create_private_directory(path: &Path) -> Result<(), InstanceError> {
    create_directory(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let failed = |source| InstanceError::Io {
            context: format!("restricting {} to its owner", path.display()),
            source,
        };
        let mode = std::fs::metadata(path).map_err(failed)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            let narrowed = mode & 0o700;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(narrowed)).map_err(failed)?;
            tracing::warn!(
                path = %path.display(),
                previous_mode = %format!("{mode:04o}"),
                mode = %format!("{narrowed:04o}"),
                "data directory was open to other users; restricted it to its owner"
            );
        }
    }
    Ok(())
}

/// The transport of outgoing federation requests: reqwest with rustls, no proxy, no redirects, 5 s to connect,
/// 10 s in all, 1 MiB answers, and no private, loopback or link-local address unless the configuration allows them.
fn http_transport(config: &Config) -> Result<federation::transport::SharedTransport, InstanceError> {
    let policy = federation::transport::OutgoingPolicy {
        allow_private_addresses: config.federation_allow_private,
        allow_http: config.federation_allow_http,
        user_agent: format!("interai/{} (+{})", env!("CARGO_PKG_VERSION"), config.public_base_url()),
        ..federation::transport::OutgoingPolicy::default()
    };
    let transport = federation::transport::HttpTransport::new(policy).map_err(|error| InstanceError::Io {
        context: "building the federation HTTP client".to_owned(),
        source: std::io::Error::other(error.to_string()),
    })?;
    Ok(Arc::new(transport))
}

/// The file that holds the key-encryption key when the configuration gives none.
pub const KEY_ENCRYPTION_KEY_FILE: &str = "key-encryption.key";

/// The key that seals the instance's private keys: `INTERAI_KEY_ENCRYPTION_KEY`, or the one in
/// `<data dir>/key-encryption.key` (mode 0600), made on the first start. With PostgreSQL every process sharing the
/// database needs the same key, which the start that makes the file says in a warning.
/// The key-encryption key this instance would use, as base64 text, without making one: the configured
/// `INTERAI_KEY_ENCRYPTION_KEY`, else `<data dir>/key-encryption.key`; `None` when neither exists yet.
pub fn existing_key_encryption_key(config: &Config) -> Result<Option<String>, InstanceError> {
    if let Some(configured) = &config.key_encryption_key {
        return Ok(Some(configured.expose().trim().to_owned()));
    }
    let path = config.data_dir.join(KEY_ENCRYPTION_KEY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text.trim().to_owned())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstanceError::Io {
            context: format!("reading {}", path.display()),
            source,
        }),
    }
}

/// Keeps `key` (base64) as the instance's key-encryption key in `<data dir>/key-encryption.key` (mode 0600), for a
/// restore whose archive carries the key.
pub fn keep_key_encryption_key(config: &Config, key: &str) -> Result<PathBuf, InstanceError> {
    create_private_directory(&config.data_dir)?;
    let path = config.data_dir.join(KEY_ENCRYPTION_KEY_FILE);
    write_secret_file(&path, key).map_err(|source| InstanceError::Io {
        context: format!("writing {}", path.display()),
        source,
    })?;
    Ok(path)
}

fn load_key_encryption_key(config: &Config) -> Result<crate::service::federation::key_box::KeyBox, InstanceError> {
    use crate::service::federation::key_box::KeyBox;
    let invalid = |what: String| InstanceError::Io {
        context: what,
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not 32 bytes of base64"),
    };
    if let Some(configured) = &config.key_encryption_key {
        return KeyBox::from_base64(configured.expose())
            .map_err(|_| invalid("reading INTERAI_KEY_ENCRYPTION_KEY".to_owned()));
    }
    let path = config.data_dir.join(KEY_ENCRYPTION_KEY_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            create_private_directory(&config.data_dir)?;
            let generated = KeyBox::generate_base64();
            write_secret_file(&path, &generated).map_err(|source| InstanceError::Io {
                context: format!("writing {}", path.display()),
                source,
            })?;
            if config.database_url.starts_with("sqlite:") {
                tracing::info!(path = %path.display(), "key-encryption key written; back it up apart from the database");
            } else {
                // Said once, when the file is made: other processes on this database need the same key.
                tracing::warn!(
                    path = %path.display(),
                    "key-encryption key written; give every process on this PostgreSQL database the same key with \
                     INTERAI_KEY_ENCRYPTION_KEY"
                );
            }
            generated
        }
        Err(source) => {
            return Err(InstanceError::Io {
                context: format!("reading {}", path.display()),
                source,
            });
        }
    };
    KeyBox::from_base64(&text).map_err(|_| invalid(format!("reading {}", path.display())))
}

/// The file of a SQLite database URL (`None` for PostgreSQL and in-memory databases).
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

/// Writes a secret readable only by the owner, replacing any earlier file atomically.
pub fn write_secret_file(path: &Path, secret: &str) -> std::io::Result<()> {
    use std::io::Write;
    let temporary = path.with_extension("key.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&temporary)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(secret.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noisy_libraries_stay_quiet_unless_the_filter_names_them() {
        assert_eq!(
            effective_log_filter("info"),
            "info,rmcp=warn,sqlx=warn,sqlx::query=error"
        );
        assert_eq!(
            effective_log_filter("debug,rmcp=debug"),
            "debug,rmcp=debug,sqlx=warn,sqlx::query=error"
        );
        assert_eq!(
            effective_log_filter("warn,sqlx::query=warn"),
            "warn,sqlx::query=warn,rmcp=warn"
        );
        assert_eq!(
            effective_log_filter("rmcpx=info"),
            "rmcpx=info,rmcp=warn,sqlx=warn,sqlx::query=error"
        );
        for filter in ["info", "interai=debug,warn", ""] {
            assert!(
                tracing_subscriber::EnvFilter::try_new(effective_log_filter(filter)).is_ok(),
                "{filter}"
            );
        }
    }

    #[test]
    fn a_shown_database_url_has_no_password() {
        assert_eq!(
            url_without_password("postgres://interai:s3cret@db.internal:5432/interai"),
            "postgres://interai@db.internal:5432/interai"
        );
        assert_eq!(
            url_without_password("sqlite://./data/interai.db"),
            "sqlite://./data/interai.db"
        );
    }
}
