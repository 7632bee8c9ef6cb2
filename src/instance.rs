//! The composition root: builds the store, the service and the router of one instance, and serves it.
//!
//! Nothing here is global, so a test process can run many instances side by side, each with its own
//! database and clock.

use std::future::Future;
use std::path::{Path, PathBuf};

use tokio::net::TcpListener;

use crate::clock::SharedClock;
use crate::config::{Config, LogFormat};
use crate::service::bootstrap::BootstrapOutcome;
use crate::service::{Service, ServiceError, ServiceSettings};
use crate::store::{Store, StoreError};

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
}

/// One running (or ready to run) instance.
#[derive(Debug)]
pub struct Instance {
    config: Config,
    service: Service,
    store: Store,
}

impl Instance {
    /// Opens the configured database (creating the data directory and applying migrations) and builds the service.
    pub async fn open(config: Config, clock: SharedClock) -> Result<Instance, InstanceError> {
        if config.database_url.starts_with("sqlite:") {
            create_directory(&config.data_dir)?;
            if let Some(parent) =
                sqlite_path(&config.database_url).and_then(|path| path.parent().map(Path::to_path_buf))
                && !parent.as_os_str().is_empty()
            {
                create_directory(&parent)?;
            }
        }
        let store = Store::connect(
            &config.database_url,
            config.database_max_connections,
            std::time::Duration::from_millis(config.statement_timeout_ms),
        )
        .await?;
        let service = Service::new(
            store.clone(),
            clock,
            ServiceSettings {
                realm: config.realm.clone(),
                writes_per_hour: config.writes_per_hour,
                search_candidates: config.search_candidates,
                trust_parameters: crate::trust::TrustParameters::default(),
            },
        );
        Ok(Instance { config, service, store })
    }

    /// Creates the realm's identities on an empty database and writes the admin key to `<data dir>/admin.key` (mode 0600).
    pub async fn bootstrap(&self) -> Result<BootstrapOutcome, InstanceError> {
        let key_path = self.admin_key_path();
        let data_dir = self.config.data_dir.clone();
        let outcome = self
            .service
            .bootstrap(|secret| {
                create_directory(&data_dir).map_err(|error| error.to_string())?;
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

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The HTTP router: `/mcp`, `/healthz`, `/readyz`.
    pub fn router(&self) -> axum::Router {
        crate::http::router(self.service.clone(), &self.config)
    }

    /// Serves HTTP on `listener` until `shutdown` completes, then lets in-flight requests finish
    /// (up to the configured grace period) and closes the database.
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
        let (stop_sender, stop_receiver) = tokio::sync::watch::channel(false);
        let grace = std::time::Duration::from_secs(self.config.shutdown_grace_seconds);
        let server = axum::serve(listener, self.router()).with_graceful_shutdown(async move {
            shutdown.await;
            let _ = stop_sender.send(true);
            tracing::info!("shutting down: no new connections, finishing in-flight requests");
        });
        let mut stop_watch = stop_receiver.clone();
        let result = tokio::select! {
            result = server => result.map_err(|source| InstanceError::Io { context: "serving HTTP".to_owned(), source }),
            () = async move {
                let _ = stop_watch.wait_for(|stopped| *stopped).await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::warn!(grace_seconds = grace.as_secs(), "in-flight requests did not finish within the grace period");
                Ok(())
            }
        };
        self.store.close().await;
        tracing::info!("stopped");
        result
    }

    /// Closes the database connections (for commands that do not serve).
    pub async fn close(&self) {
        self.store.close().await;
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

/// Installs the process's log subscriber (text or JSON lines, filtered by `INTERAI_LOG`). Later calls do nothing.
pub fn init_logging(config: &Config) {
    let filter = tracing_subscriber::EnvFilter::try_new(&config.log_filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match config.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

fn create_directory(path: &Path) -> Result<(), InstanceError> {
    std::fs::create_dir_all(path).map_err(|source| InstanceError::Io {
        context: format!("creating {}", path.display()),
        source,
    })
}

fn sqlite_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

/// Writes a secret readable only by the owner, replacing any earlier file atomically.
fn write_secret_file(path: &Path, secret: &str) -> std::io::Result<()> {
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
