//! Instance configuration: plain data read from an optional TOML file, then overridden by `INTERAI_*` variables.
//!
//! Every setting has a documented default (docs/configuration.md) so that an instance starts with no file at all.
//! An invalid value stops the start with a message that names the setting.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The complete, validated configuration of one instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Socket address the HTTP server binds (`INTERAI_LISTEN`).
    pub listen: SocketAddr,
    /// The realm: this instance's public domain, with a port if not the default one (`INTERAI_REALM`).
    pub realm: String,
    /// Directory for the embedded database and the bootstrap admin key (`INTERAI_DATA_DIR`).
    pub data_dir: PathBuf,
    /// Database URL, `sqlite://…` or `postgres://…` (`INTERAI_DATABASE_URL`).
    pub database_url: String,
    /// Upper bound of pooled database connections (`INTERAI_DATABASE_MAX_CONNECTIONS`).
    pub database_max_connections: u32,
    /// Host names (without port) accepted in the `Host` header of MCP requests (`INTERAI_ALLOWED_HOSTS`).
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted in the `Origin` header of MCP requests (`INTERAI_ALLOWED_ORIGINS`).
    /// Requests without an `Origin` header (every non-browser client) are always accepted.
    pub allowed_origins: Vec<String>,
    /// Successful writes allowed per root controller per hour (`INTERAI_WRITES_PER_HOUR`).
    pub writes_per_hour: u32,
    /// How many of a text search's candidates are considered at most, the most recently changed first
    /// (`INTERAI_SEARCH_CANDIDATES`).
    pub search_candidates: u32,
    /// Largest accepted HTTP request body in bytes (`INTERAI_MAX_REQUEST_BYTES`).
    pub max_request_bytes: usize,
    /// `text` or `json` log lines (`INTERAI_LOG_FORMAT`).
    pub log_format: LogFormat,
    /// A `tracing` filter such as `info` or `interai=debug` (`INTERAI_LOG`).
    pub log_filter: String,
    /// Seconds in-flight requests get to finish after a shutdown signal (`INTERAI_SHUTDOWN_GRACE_SECONDS`).
    pub shutdown_grace_seconds: u64,
    /// Seconds a client has to send a request's complete header before the connection is closed
    /// (`INTERAI_HEADER_READ_TIMEOUT_SECONDS`).
    pub header_read_timeout_seconds: u64,
    /// Client connections served at once; further ones wait until one closes (`INTERAI_MAX_CONNECTIONS`).
    pub max_connections: u32,
    /// Connections one client address (an IPv4 address, or an IPv6 /64) may hold open at once; further ones are
    /// closed as soon as they are accepted (`INTERAI_MAX_CONNECTIONS_PER_CLIENT`).
    pub max_connections_per_client: u32,
    /// Seconds a request may take from its first byte to its answer, body included; a request over it gets 408 and
    /// its connection is closed (`INTERAI_REQUEST_TIMEOUT_SECONDS`).
    pub request_timeout_seconds: u64,
    /// The slowest a request body may arrive, in bytes per second on average, once its first
    /// [`BODY_RATE_GRACE_SECONDS`] are over; a slower body gets 408 (`INTERAI_MIN_BODY_BYTES_PER_SECOND`).
    pub min_body_bytes_per_second: u64,
    /// Days the audit log keeps a call before the instance deletes it; 0 keeps every call
    /// (`INTERAI_AUDIT_RETENTION_DAYS`).
    pub audit_retention_days: u32,
    /// The most time one statement may take on PostgreSQL, and the budget SQLite derives for one request's
    /// statements, in milliseconds (`INTERAI_STATEMENT_TIMEOUT_MS`).
    pub statement_timeout_ms: u64,
    /// The URL this instance is reached at from outside, from which every URL it emits (actor, inbox, object IDs,
    /// documents) is built (`INTERAI_PUBLIC_URL`; default `https://<realm>`, `http://` for loopback, `localhost` and
    /// `.test` realms). An `http://` URL for any other host needs `INTERAI_FEDERATION_ALLOW_HTTP=true`.
    pub public_url: url::Url,
    /// Whether peers may be reached over plain `http://` (`INTERAI_FEDERATION_ALLOW_HTTP`; tests and a laptop).
    pub federation_allow_http: bool,
    /// Whether outgoing federation requests may go to private, loopback and link-local addresses
    /// (`INTERAI_FEDERATION_ALLOW_PRIVATE`; tests and a laptop).
    pub federation_allow_private: bool,
    /// The key that encrypts the instance's private signing keys in the database (`INTERAI_KEY_ENCRYPTION_KEY`, 32
    /// bytes in base64). When absent, the instance keeps one in `<data dir>/key-encryption.key` (mode 0600), which
    /// every process sharing the database must then be given.
    pub key_encryption_key: Option<SecretText>,
    /// Whether this instance pushes its outbox to its peers' inboxes (`INTERAI_FEDERATION_PUSH`, default true).
    /// Without push, peers still converge by pulling.
    pub federation_push: bool,
    /// Seconds between two pulls of a peer's outbox, the anti-entropy check that converges without push
    /// (`INTERAI_FEDERATION_PULL_INTERVAL_SECONDS`, default 60).
    pub federation_pull_interval_seconds: u64,
    /// Hours an outbox event is kept at least, even after every peer has it (`INTERAI_OUTBOX_MIN_RETENTION_HOURS`,
    /// default 168). Events some peer still needs are kept whatever their age.
    pub outbox_min_retention_hours: u64,
    /// Hours between two scheduled backups (`INTERAI_BACKUP_INTERVAL_HOURS`, default 0: none).
    pub backup_interval_hours: u32,
    /// Scheduled backups kept; older ones are deleted (`INTERAI_BACKUP_KEEP`, default 7).
    pub backup_keep: u32,
    /// Where scheduled backups go (`INTERAI_BACKUP_DIR`, default `<data dir>/backups`).
    pub backup_dir: PathBuf,
    /// The most MiB a second a backup that is an archive (PostgreSQL) writes, so that it leaves the requests their
    /// share of the cores (`INTERAI_BACKUP_MAX_MIB_PER_SECOND`, default 40; 0: no limit).
    pub backup_max_mib_per_second: u32,
    /// Minutes a web console session may sit unused before it ends (`INTERAI_CONSOLE_IDLE_MINUTES`, default 30).
    pub console_idle_minutes: u32,
    /// Hours a web console session lasts at most, however it is used (`INTERAI_CONSOLE_SESSION_HOURS`, default 12).
    pub console_session_hours: u32,
}

/// A secret setting: its `Debug` form never shows the value, so a logged configuration cannot leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(String);

impl SecretText {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> SecretText {
        SecretText(value.into())
    }

    /// The secret itself, for the one place that uses it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretText {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("SecretText(…)")
    }
}

/// Format of log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// A setting with an invalid value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid configuration: {setting}: {message}")]
pub struct ConfigError {
    /// The environment variable (or file key) that holds the bad value.
    pub setting: String,
    /// What is wrong with it.
    pub message: String,
}

impl ConfigError {
    fn new(setting: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            setting: setting.to_owned(),
            message: message.into(),
        }
    }
}

/// What a [`ConfigError`] about the file's text names until [`Config::load`] names the file as it was given.
const CONFIG_FILE: &str = "the configuration file";

/// A TOML error as one line: what is wrong, and where (line and column), without the excerpt the error's own text
/// draws over several lines.
fn file_error(error: &toml::de::Error, text: &str) -> String {
    match error.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |newline| newline + 1) + 1;
            format!("line {line}, column {column}: {}", error.message())
        }
        None => error.message().to_owned(),
    }
}

/// The TOML file's shape: every key optional, unknown keys rejected.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    listen: Option<String>,
    realm: Option<String>,
    data_dir: Option<String>,
    database_url: Option<String>,
    database_max_connections: Option<u32>,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Option<Vec<String>>,
    writes_per_hour: Option<u32>,
    max_request_bytes: Option<usize>,
    log_format: Option<String>,
    log: Option<String>,
    shutdown_grace_seconds: Option<u64>,
    search_candidates: Option<u32>,
    header_read_timeout_seconds: Option<u64>,
    max_connections: Option<u32>,
    max_connections_per_client: Option<u32>,
    request_timeout_seconds: Option<u64>,
    min_body_bytes_per_second: Option<u64>,
    audit_retention_days: Option<u32>,
    statement_timeout_ms: Option<u64>,
    public_url: Option<String>,
    federation_allow_http: Option<bool>,
    federation_allow_private: Option<bool>,
    key_encryption_key: Option<String>,
    federation_push: Option<bool>,
    federation_pull_interval_seconds: Option<u64>,
    outbox_min_retention_hours: Option<u64>,
    backup_interval_hours: Option<u32>,
    backup_keep: Option<u32>,
    backup_dir: Option<String>,
    backup_max_mib_per_second: Option<u32>,
    console_idle_minutes: Option<u32>,
    console_session_hours: Option<u32>,
}

/// The environment variable of every setting, in the order of `docs/configuration.md`; the file key of each is its
/// name without `INTERAI_`, in lower case (`INTERAI_LOG`'s is `log`).
pub const SETTING_VARIABLES: &[&str] = &[
    "INTERAI_LISTEN",
    "INTERAI_REALM",
    "INTERAI_DATA_DIR",
    "INTERAI_DATABASE_URL",
    "INTERAI_DATABASE_MAX_CONNECTIONS",
    "INTERAI_ALLOWED_HOSTS",
    "INTERAI_ALLOWED_ORIGINS",
    "INTERAI_WRITES_PER_HOUR",
    "INTERAI_SEARCH_CANDIDATES",
    "INTERAI_MAX_REQUEST_BYTES",
    "INTERAI_LOG_FORMAT",
    "INTERAI_LOG",
    "INTERAI_SHUTDOWN_GRACE_SECONDS",
    "INTERAI_HEADER_READ_TIMEOUT_SECONDS",
    "INTERAI_MAX_CONNECTIONS",
    "INTERAI_MAX_CONNECTIONS_PER_CLIENT",
    "INTERAI_REQUEST_TIMEOUT_SECONDS",
    "INTERAI_MIN_BODY_BYTES_PER_SECOND",
    "INTERAI_AUDIT_RETENTION_DAYS",
    "INTERAI_STATEMENT_TIMEOUT_MS",
    "INTERAI_PUBLIC_URL",
    "INTERAI_FEDERATION_ALLOW_HTTP",
    "INTERAI_FEDERATION_ALLOW_PRIVATE",
    "INTERAI_FEDERATION_PUSH",
    "INTERAI_FEDERATION_PULL_INTERVAL_SECONDS",
    "INTERAI_OUTBOX_MIN_RETENTION_HOURS",
    "INTERAI_BACKUP_INTERVAL_HOURS",
    "INTERAI_BACKUP_KEEP",
    "INTERAI_BACKUP_DIR",
    "INTERAI_BACKUP_MAX_MIB_PER_SECOND",
    "INTERAI_CONSOLE_IDLE_MINUTES",
    "INTERAI_CONSOLE_SESSION_HOURS",
    "INTERAI_KEY_ENCRYPTION_KEY",
];

/// `INTERAI_*` variables that are not settings but are read by something else and so are not a typo: the
/// configuration file's name, and what the test suite and CI read.
pub const OTHER_VARIABLES: &[&str] = &["INTERAI_CONFIG", "INTERAI_TEST_DATABASE_URL", "INTERAI_CI_POSTGRES_URL"];

/// The prefix of the benchmarks' own variables (`benches/`), which the server ignores.
pub const BENCHMARK_VARIABLE_PREFIX: &str = "INTERAI_BENCH_";

/// Refuses an `INTERAI_*` variable that is neither a setting nor one of [`OTHER_VARIABLES`] or the benchmarks',
/// naming the closest setting: a typo is refused as the same typo in the file is, not silently ignored.
fn refuse_unknown_variables(environment: &BTreeMap<String, String>) -> Result<(), ConfigError> {
    for name in environment.keys() {
        let known = SETTING_VARIABLES.contains(&name.as_str())
            || OTHER_VARIABLES.contains(&name.as_str())
            || name.starts_with(BENCHMARK_VARIABLE_PREFIX)
            || !name.starts_with("INTERAI_");
        if !known {
            let closest = SETTING_VARIABLES
                .iter()
                .min_by_key(|setting| strsim::levenshtein(setting, name))
                .copied()
                .unwrap_or("INTERAI_LISTEN");
            return Err(ConfigError::new(
                name,
                format!("not a setting; did you mean {closest}? (every setting is in docs/configuration.md)"),
            ));
        }
    }
    Ok(())
}

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Default realm.
pub const DEFAULT_REALM: &str = "localhost:8080";
/// Default data directory.
pub const DEFAULT_DATA_DIR: &str = "./data";
/// Default write limit per root controller and hour.
pub const DEFAULT_WRITES_PER_HOUR: u32 = 200;
/// Default number of candidates a text search considers.
pub const DEFAULT_SEARCH_CANDIDATES: u32 = 2000;
/// Default HTTP body cap: room for a 200 KB body plus 64 KB of structured data, JSON-escaped.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 1024 * 1024;
/// Default time a client has to send a request header: ample for any client, short enough that connections
/// trickling header bytes cannot pile up.
pub const DEFAULT_HEADER_READ_TIMEOUT_SECONDS: u64 = 10;
/// Default cap on client connections served at once.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1024;
/// Default cap on the connections of one client address: an eighth of the default total, so that one host cannot
/// take the instance's connections, and room for two processes of a peer pushing at once (each holds up to
/// `apub::replicate::limits::PUSH_CONCURRENCY`, 48, connections to a peer). Behind a reverse proxy every client
/// has the proxy's address: raise it to `INTERAI_MAX_CONNECTIONS` there, and let the proxy limit clients.
pub const DEFAULT_MAX_CONNECTIONS_PER_CLIENT: u32 = 128;
/// Default deadline of a whole request: a 2 MiB inbox body at the minimum rate below fits with room to spare, and a
/// tool call's statements are cut off long before (`INTERAI_STATEMENT_TIMEOUT_MS`).
pub const DEFAULT_REQUEST_TIMEOUT_SECONDS: u64 = 30;
/// Default minimum body rate: 64 KiB/s, a slow mobile link; a body trickling slower holds a connection for nothing.
pub const DEFAULT_MIN_BODY_BYTES_PER_SECOND: u64 = 64 * 1024;
/// Seconds a body may take before the minimum rate applies: a client's first packets and a slow start.
pub const BODY_RATE_GRACE_SECONDS: u64 = 5;
/// Default audit retention in days.
pub const DEFAULT_AUDIT_RETENTION_DAYS: u32 = 90;
/// Default statement cut-off: far above what any bounded request needs (milliseconds), low enough that a runaway
/// statement cannot hold a connection for long.
pub const DEFAULT_STATEMENT_TIMEOUT_MS: u64 = 5000;
/// Largest accepted statement cut-off: an hour.
pub const MAX_STATEMENT_TIMEOUT_MS: u64 = 3_600_000;

impl Config {
    /// Reads the configuration the way `interai` does: the file named by `file` (or `INTERAI_CONFIG`),
    /// then the process environment.
    pub fn load(file: Option<&Path>) -> Result<Config, ConfigError> {
        let environment: BTreeMap<String, String> = std::env::vars()
            .filter(|(name, _)| name.starts_with("INTERAI_"))
            .collect();
        // Errors about the file name it as it was given: `--config FILE`, or `INTERAI_CONFIG=FILE`.
        let (file_path, named_by) = match (file, environment.get("INTERAI_CONFIG")) {
            (Some(path), _) => (Some(path.to_path_buf()), "--config"),
            (None, Some(path)) => (Some(PathBuf::from(path)), "INTERAI_CONFIG"),
            (None, None) => (None, ""),
        };
        let file_text = match &file_path {
            Some(path) => Some(std::fs::read_to_string(path).map_err(|error| {
                ConfigError::new(
                    &format!("{named_by} {}", path.display()),
                    format!("cannot read it: {error}"),
                )
            })?),
            None => None,
        };
        Config::from_sources(file_text.as_deref(), &environment).map_err(|error| match &file_path {
            Some(path) if error.setting == CONFIG_FILE => ConfigError {
                setting: format!("{named_by} {}", path.display()),
                message: error.message,
            },
            _ => error,
        })
    }

    /// Builds the configuration from a TOML text and a map of environment variables; the variables win.
    pub fn from_sources(
        file_text: Option<&str>,
        environment: &BTreeMap<String, String>,
    ) -> Result<Config, ConfigError> {
        refuse_unknown_variables(environment)?;
        let file: ConfigFile = match file_text {
            Some(text) => {
                toml::from_str(text).map_err(|error| ConfigError::new(CONFIG_FILE, file_error(&error, text)))?
            }
            None => ConfigFile::default(),
        };
        let variable = |name: &str| environment.get(name).map(String::as_str);

        let listen_text = variable("INTERAI_LISTEN")
            .map(str::to_owned)
            .or(file.listen)
            .unwrap_or_else(|| DEFAULT_LISTEN.to_owned());
        let listen: SocketAddr = listen_text
            .parse()
            .map_err(|_| ConfigError::new("INTERAI_LISTEN", "expected an address such as 127.0.0.1:8080"))?;

        let realm = variable("INTERAI_REALM")
            .map(str::to_owned)
            .or(file.realm)
            .unwrap_or_else(|| DEFAULT_REALM.to_owned());
        let realm = validate_realm(&realm)?;

        let data_dir = PathBuf::from(
            variable("INTERAI_DATA_DIR")
                .map(str::to_owned)
                .or(file.data_dir)
                .unwrap_or_else(|| DEFAULT_DATA_DIR.to_owned()),
        );
        if data_dir.as_os_str().is_empty() {
            return Err(ConfigError::new("INTERAI_DATA_DIR", "must not be empty"));
        }

        let database_url = variable("INTERAI_DATABASE_URL")
            .map(str::to_owned)
            .or(file.database_url)
            .unwrap_or_else(|| format!("sqlite://{}", data_dir.join("interai.db").display()));
        if !(database_url.starts_with("sqlite:")
            || database_url.starts_with("postgres://")
            || database_url.starts_with("postgresql://"))
        {
            return Err(ConfigError::new(
                "INTERAI_DATABASE_URL",
                "must start with sqlite:// or postgres://",
            ));
        }

        let database_max_connections = parse_number(
            "INTERAI_DATABASE_MAX_CONNECTIONS",
            variable("INTERAI_DATABASE_MAX_CONNECTIONS"),
            file.database_max_connections,
            10,
        )?;
        if database_max_connections == 0 {
            return Err(ConfigError::new(
                "INTERAI_DATABASE_MAX_CONNECTIONS",
                "must be at least 1",
            ));
        }

        let realm_host = host_without_port(&realm).to_owned();
        let allowed_hosts = match variable("INTERAI_ALLOWED_HOSTS") {
            Some(list) => split_list(list),
            None => file.allowed_hosts.unwrap_or_else(|| {
                let mut hosts = vec![
                    realm_host.clone(),
                    "localhost".to_owned(),
                    "127.0.0.1".to_owned(),
                    "::1".to_owned(),
                ];
                hosts.dedup();
                hosts
            }),
        };
        if allowed_hosts.is_empty() {
            return Err(ConfigError::new("INTERAI_ALLOWED_HOSTS", "must name at least one host"));
        }
        let allowed_hosts = allowed_hosts
            .into_iter()
            .map(|host| host.to_ascii_lowercase())
            .collect();

        let allowed_origins = match variable("INTERAI_ALLOWED_ORIGINS") {
            Some(list) => split_list(list),
            None => file
                .allowed_origins
                .unwrap_or_else(|| default_allowed_origins(&realm, listen)),
        };
        for origin in &allowed_origins {
            let parsed = url::Url::parse(origin).map_err(|_| {
                ConfigError::new(
                    "INTERAI_ALLOWED_ORIGINS",
                    "each origin must look like https://host[:port]",
                )
            })?;
            if parsed.path() != "/" || parsed.host_str().is_none() {
                return Err(ConfigError::new(
                    "INTERAI_ALLOWED_ORIGINS",
                    "each origin must look like https://host[:port], without a path",
                ));
            }
        }

        let writes_per_hour = parse_number(
            "INTERAI_WRITES_PER_HOUR",
            variable("INTERAI_WRITES_PER_HOUR"),
            file.writes_per_hour,
            DEFAULT_WRITES_PER_HOUR,
        )?;
        if writes_per_hour == 0 {
            return Err(ConfigError::new("INTERAI_WRITES_PER_HOUR", "must be at least 1"));
        }

        let search_candidates = parse_number(
            "INTERAI_SEARCH_CANDIDATES",
            variable("INTERAI_SEARCH_CANDIDATES"),
            file.search_candidates,
            DEFAULT_SEARCH_CANDIDATES,
        )?;
        if search_candidates < 51 {
            // A page of the largest size plus the one that tells whether more follow must fit.
            return Err(ConfigError::new("INTERAI_SEARCH_CANDIDATES", "must be at least 51"));
        }

        let max_request_bytes = parse_number(
            "INTERAI_MAX_REQUEST_BYTES",
            variable("INTERAI_MAX_REQUEST_BYTES"),
            file.max_request_bytes,
            DEFAULT_MAX_REQUEST_BYTES,
        )?;
        if max_request_bytes < 4096 {
            return Err(ConfigError::new("INTERAI_MAX_REQUEST_BYTES", "must be at least 4096"));
        }

        let log_format = match variable("INTERAI_LOG_FORMAT")
            .map(str::to_owned)
            .or(file.log_format)
            .as_deref()
        {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(_) => return Err(ConfigError::new("INTERAI_LOG_FORMAT", "expected text or json")),
        };
        let log_filter = variable("INTERAI_LOG")
            .map(str::to_owned)
            .or(file.log)
            .unwrap_or_else(|| "info".to_owned());
        if tracing_subscriber::EnvFilter::try_new(&log_filter).is_err() {
            return Err(ConfigError::new(
                "INTERAI_LOG",
                "not a valid tracing filter (e.g. info, interai=debug)",
            ));
        }

        let shutdown_grace_seconds = parse_number(
            "INTERAI_SHUTDOWN_GRACE_SECONDS",
            variable("INTERAI_SHUTDOWN_GRACE_SECONDS"),
            file.shutdown_grace_seconds,
            10,
        )?;

        let header_read_timeout_seconds = parse_number(
            "INTERAI_HEADER_READ_TIMEOUT_SECONDS",
            variable("INTERAI_HEADER_READ_TIMEOUT_SECONDS"),
            file.header_read_timeout_seconds,
            DEFAULT_HEADER_READ_TIMEOUT_SECONDS,
        )?;
        if header_read_timeout_seconds == 0 {
            return Err(ConfigError::new(
                "INTERAI_HEADER_READ_TIMEOUT_SECONDS",
                "must be at least 1",
            ));
        }
        let max_connections = parse_number(
            "INTERAI_MAX_CONNECTIONS",
            variable("INTERAI_MAX_CONNECTIONS"),
            file.max_connections,
            DEFAULT_MAX_CONNECTIONS,
        )?;
        if max_connections == 0 {
            return Err(ConfigError::new("INTERAI_MAX_CONNECTIONS", "must be at least 1"));
        }
        let max_connections_per_client = parse_number(
            "INTERAI_MAX_CONNECTIONS_PER_CLIENT",
            variable("INTERAI_MAX_CONNECTIONS_PER_CLIENT"),
            file.max_connections_per_client,
            // At most half of all connections, so that one host can never take them all.
            DEFAULT_MAX_CONNECTIONS_PER_CLIENT.min((max_connections / 2).max(1)),
        )?;
        if max_connections_per_client == 0 || max_connections_per_client > max_connections {
            return Err(ConfigError::new(
                "INTERAI_MAX_CONNECTIONS_PER_CLIENT",
                format!("must be between 1 and INTERAI_MAX_CONNECTIONS ({max_connections})"),
            ));
        }
        let request_timeout_seconds = parse_number(
            "INTERAI_REQUEST_TIMEOUT_SECONDS",
            variable("INTERAI_REQUEST_TIMEOUT_SECONDS"),
            file.request_timeout_seconds,
            DEFAULT_REQUEST_TIMEOUT_SECONDS,
        )?;
        if !(1..=3600).contains(&request_timeout_seconds) {
            return Err(ConfigError::new(
                "INTERAI_REQUEST_TIMEOUT_SECONDS",
                "must be between 1 and 3600",
            ));
        }
        let min_body_bytes_per_second = parse_number(
            "INTERAI_MIN_BODY_BYTES_PER_SECOND",
            variable("INTERAI_MIN_BODY_BYTES_PER_SECOND"),
            file.min_body_bytes_per_second,
            DEFAULT_MIN_BODY_BYTES_PER_SECOND,
        )?;
        if min_body_bytes_per_second == 0 {
            return Err(ConfigError::new(
                "INTERAI_MIN_BODY_BYTES_PER_SECOND",
                "must be at least 1",
            ));
        }
        let audit_retention_days = parse_number(
            "INTERAI_AUDIT_RETENTION_DAYS",
            variable("INTERAI_AUDIT_RETENTION_DAYS"),
            file.audit_retention_days,
            DEFAULT_AUDIT_RETENTION_DAYS,
        )?;
        if audit_retention_days > 36_500 {
            return Err(ConfigError::new(
                "INTERAI_AUDIT_RETENTION_DAYS",
                "at most 36500 days; 0 keeps every call",
            ));
        }
        let statement_timeout_ms = parse_number(
            "INTERAI_STATEMENT_TIMEOUT_MS",
            variable("INTERAI_STATEMENT_TIMEOUT_MS"),
            file.statement_timeout_ms,
            DEFAULT_STATEMENT_TIMEOUT_MS,
        )?;
        if !(1..=MAX_STATEMENT_TIMEOUT_MS).contains(&statement_timeout_ms) {
            return Err(ConfigError::new(
                "INTERAI_STATEMENT_TIMEOUT_MS",
                format!("must be from 1 to {MAX_STATEMENT_TIMEOUT_MS} (milliseconds)"),
            ));
        }

        let federation_allow_http = parse_flag(
            "INTERAI_FEDERATION_ALLOW_HTTP",
            variable("INTERAI_FEDERATION_ALLOW_HTTP"),
            file.federation_allow_http,
        )?;
        let federation_allow_private = parse_flag(
            "INTERAI_FEDERATION_ALLOW_PRIVATE",
            variable("INTERAI_FEDERATION_ALLOW_PRIVATE"),
            file.federation_allow_private,
        )?;
        let public_url = public_url(
            variable("INTERAI_PUBLIC_URL")
                .map(str::to_owned)
                .or(file.public_url)
                .as_deref(),
            &realm,
            federation_allow_http,
        )?;
        let federation_push = match variable("INTERAI_FEDERATION_PUSH") {
            Some(text) => parse_flag("INTERAI_FEDERATION_PUSH", Some(text), None)?,
            None => file.federation_push.unwrap_or(true),
        };
        let federation_pull_interval_seconds = parse_number(
            "INTERAI_FEDERATION_PULL_INTERVAL_SECONDS",
            variable("INTERAI_FEDERATION_PULL_INTERVAL_SECONDS"),
            file.federation_pull_interval_seconds,
            60,
        )?;
        if !(1..=86_400).contains(&federation_pull_interval_seconds) {
            return Err(ConfigError::new(
                "INTERAI_FEDERATION_PULL_INTERVAL_SECONDS",
                "must be from 1 to 86400 (seconds)",
            ));
        }
        let outbox_min_retention_hours = parse_number(
            "INTERAI_OUTBOX_MIN_RETENTION_HOURS",
            variable("INTERAI_OUTBOX_MIN_RETENTION_HOURS"),
            file.outbox_min_retention_hours,
            168,
        )?;
        if outbox_min_retention_hours > 87_600 {
            return Err(ConfigError::new(
                "INTERAI_OUTBOX_MIN_RETENTION_HOURS",
                "at most 87600 hours",
            ));
        }
        let backup_interval_hours = parse_number(
            "INTERAI_BACKUP_INTERVAL_HOURS",
            variable("INTERAI_BACKUP_INTERVAL_HOURS"),
            file.backup_interval_hours,
            0,
        )?;
        if backup_interval_hours > 8_760 {
            return Err(ConfigError::new(
                "INTERAI_BACKUP_INTERVAL_HOURS",
                "at most 8760 hours (a year); 0 makes no scheduled backups",
            ));
        }
        let backup_keep = parse_number(
            "INTERAI_BACKUP_KEEP",
            variable("INTERAI_BACKUP_KEEP"),
            file.backup_keep,
            7,
        )?;
        if !(1..=10_000).contains(&backup_keep) {
            return Err(ConfigError::new("INTERAI_BACKUP_KEEP", "must be from 1 to 10000"));
        }
        let backup_dir = variable("INTERAI_BACKUP_DIR")
            .map(str::to_owned)
            .or(file.backup_dir)
            .filter(|text| !text.trim().is_empty())
            .map_or_else(|| data_dir.join("backups"), PathBuf::from);
        let backup_max_mib_per_second = parse_number(
            "INTERAI_BACKUP_MAX_MIB_PER_SECOND",
            variable("INTERAI_BACKUP_MAX_MIB_PER_SECOND"),
            file.backup_max_mib_per_second,
            40,
        )?;
        if backup_max_mib_per_second > 100_000 {
            return Err(ConfigError::new(
                "INTERAI_BACKUP_MAX_MIB_PER_SECOND",
                "at most 100000 MiB/s; 0 writes backups as fast as they can",
            ));
        }
        let console_idle_minutes = parse_number(
            "INTERAI_CONSOLE_IDLE_MINUTES",
            variable("INTERAI_CONSOLE_IDLE_MINUTES"),
            file.console_idle_minutes,
            30,
        )?;
        if !(1..=1_440).contains(&console_idle_minutes) {
            return Err(ConfigError::new(
                "INTERAI_CONSOLE_IDLE_MINUTES",
                "must be from 1 to 1440 minutes (a day)",
            ));
        }
        let console_session_hours = parse_number(
            "INTERAI_CONSOLE_SESSION_HOURS",
            variable("INTERAI_CONSOLE_SESSION_HOURS"),
            file.console_session_hours,
            12,
        )?;
        if !(1..=720).contains(&console_session_hours) {
            return Err(ConfigError::new(
                "INTERAI_CONSOLE_SESSION_HOURS",
                "must be from 1 to 720 hours (30 days)",
            ));
        }
        let key_encryption_key = variable("INTERAI_KEY_ENCRYPTION_KEY")
            .map(str::to_owned)
            .or(file.key_encryption_key)
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty())
            .map(SecretText::new);

        Ok(Config {
            listen,
            realm,
            data_dir,
            database_url,
            database_max_connections,
            allowed_hosts,
            allowed_origins,
            writes_per_hour,
            search_candidates,
            max_request_bytes,
            log_format,
            log_filter,
            shutdown_grace_seconds,
            header_read_timeout_seconds,
            max_connections,
            max_connections_per_client,
            request_timeout_seconds,
            min_body_bytes_per_second,
            audit_retention_days,
            statement_timeout_ms,
            public_url,
            federation_allow_http,
            federation_allow_private,
            key_encryption_key,
            federation_push,
            federation_pull_interval_seconds,
            outbox_min_retention_hours,
            backup_interval_hours,
            backup_keep,
            backup_dir,
            backup_max_mib_per_second,
            console_idle_minutes,
            console_session_hours,
        })
    }

    /// A configuration for tests and embedding: defaults, the given realm and database.
    pub fn for_realm(realm: &str, database_url: &str, data_dir: &Path) -> Config {
        Config::for_realm_listening(realm, database_url, data_dir, SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Like [`Config::for_realm`], for an instance that will serve on `listen` (the defaults that depend on the
    /// listen address, such as the allowed origins, follow it).
    pub fn for_realm_listening(realm: &str, database_url: &str, data_dir: &Path, listen: SocketAddr) -> Config {
        let mut environment = BTreeMap::new();
        environment.insert("INTERAI_REALM".to_owned(), realm.to_owned());
        environment.insert("INTERAI_DATABASE_URL".to_owned(), database_url.to_owned());
        environment.insert("INTERAI_DATA_DIR".to_owned(), data_dir.display().to_string());
        environment.insert("INTERAI_LISTEN".to_owned(), listen.to_string());
        Config::from_sources(None, &environment).unwrap_or_else(|error| panic!("test configuration is valid: {error}"))
    }

    /// The public URL without its trailing slash, to which paths such as `/actor` are appended.
    pub fn public_base_url(&self) -> String {
        self.public_url.as_str().trim_end_matches('/').to_owned()
    }

    /// The realm's host name without a port.
    pub fn realm_host(&self) -> &str {
        host_without_port(&self.realm)
    }
}

fn parse_number<T: std::str::FromStr + Copy>(
    setting: &str,
    from_environment: Option<&str>,
    from_file: Option<T>,
    default: T,
) -> Result<T, ConfigError> {
    match from_environment {
        Some(text) => text
            .trim()
            .parse()
            .map_err(|_| ConfigError::new(setting, "expected a whole non-negative number")),
        None => Ok(from_file.unwrap_or(default)),
    }
}

/// The realm over HTTPS and HTTP, and, when the instance listens on loopback (or on every address, loopback
/// included) with a fixed port, the loopback forms of that address. A page with such an origin can only have been
/// served by this very listener, so allowing it opens nothing to other sites; it is the origin a browser on the
/// same machine (and the MCP conformance suite's DNS-rebinding scenario) sends.
fn default_allowed_origins(realm: &str, listen: SocketAddr) -> Vec<String> {
    let mut origins = vec![format!("https://{realm}"), format!("http://{realm}")];
    let ip = listen.ip();
    if (ip.is_loopback() || ip.is_unspecified()) && listen.port() != 0 {
        let port = listen.port();
        for loopback in ["127.0.0.1", "localhost", "[::1]"] {
            let origin = format!("http://{loopback}:{port}");
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
    }
    origins
}

fn parse_flag(setting: &str, from_environment: Option<&str>, from_file: Option<bool>) -> Result<bool, ConfigError> {
    match from_environment.map(|text| text.trim().to_ascii_lowercase()) {
        Some(text) => match text.as_str() {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" | "" => Ok(false),
            _ => Err(ConfigError::new(setting, "expected true or false")),
        },
        None => Ok(from_file.unwrap_or(false)),
    }
}

/// The one decision of the instance's public URL: the configured one, or the realm's (see
/// [`base_url_for_realm`]). It must be an `https://` URL (or `http://` where plain HTTP is
/// allowed: loopback, `localhost` and `.test` hosts, or with `INTERAI_FEDERATION_ALLOW_HTTP`), with a host, no path,
/// query, fragment or credentials.
fn public_url(configured: Option<&str>, realm: &str, allow_http: bool) -> Result<url::Url, ConfigError> {
    const SETTING: &str = "INTERAI_PUBLIC_URL";
    let text = match configured.map(str::trim).filter(|text| !text.is_empty()) {
        Some(text) => text.to_owned(),
        None => base_url_for_realm(realm),
    };
    let url =
        url::Url::parse(&text).map_err(|_| ConfigError::new(SETTING, "expected a URL such as https://example.org"))?;
    let Some(host) = url.host_str() else {
        return Err(ConfigError::new(SETTING, "the URL needs a host"));
    };
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError::new(
            SETTING,
            "the URL must not have a path, query or fragment",
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ConfigError::new(SETTING, "the URL must not carry credentials"));
    }
    match url.scheme() {
        "https" => {}
        "http" if allow_http || base_url_for_realm(host).starts_with("http://") => {}
        "http" => {
            return Err(ConfigError::new(
                SETTING,
                "an http:// URL needs INTERAI_FEDERATION_ALLOW_HTTP=true (peers would exchange unencrypted requests)",
            ));
        }
        _ => return Err(ConfigError::new(SETTING, "expected an https:// URL")),
    }
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", host.to_ascii_lowercase()),
        None => host.to_ascii_lowercase(),
    };
    if authority != realm.to_ascii_lowercase() {
        return Err(ConfigError::new(
            SETTING,
            format!(
                "the URL's host and port ({authority}) must be the realm ({realm}): peers check that a realm's \
                 documents and keys live under its own URL"
            ),
        ));
    }
    Ok(url)
}

fn split_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

fn validate_realm(realm: &str) -> Result<String, ConfigError> {
    let realm = realm.trim().to_ascii_lowercase();
    let parsed = url::Url::parse(&format!("http://{realm}/")).map_err(|_| {
        ConfigError::new(
            "INTERAI_REALM",
            "expected a domain with an optional port, e.g. acme.example",
        )
    })?;
    let reconstructed = match parsed.port() {
        Some(port) => format!("{}:{port}", parsed.host_str().unwrap_or_default()),
        None => parsed.host_str().unwrap_or_default().to_owned(),
    };
    if realm.is_empty() || reconstructed != realm || parsed.path() != "/" {
        return Err(ConfigError::new(
            "INTERAI_REALM",
            "expected a domain with an optional port, e.g. acme.example (no scheme, path or credentials)",
        ));
    }
    Ok(realm)
}

/// The base URL of a realm: `http://` for local and test realms (`localhost`, loopback addresses, `*.localhost`,
/// `*.test`), `https://` otherwise. The realm keeps its port, e.g. `http://localhost:8080`.
pub fn base_url_for_realm(realm: &str) -> String {
    let realm = realm.trim().trim_end_matches('/');
    let host = host_without_port(realm).to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    let loopback = host
        .parse::<std::net::IpAddr>()
        .is_ok_and(|address| address.is_loopback());
    let local = host == "localhost" || host.ends_with(".localhost") || host.ends_with(".test") || loopback;
    let scheme = if local { "http" } else { "https" };
    format!("{scheme}://{realm}")
}

/// The host part of `host[:port]`, handling bracketed IPv6 literals.
pub fn host_without_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|character| character.is_ascii_digit()) && !host.contains(':') => host,
        _ => authority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn the_public_url_defaults_to_the_realm_and_plain_http_needs_permission() {
        let with = |pairs: &[(&str, &str)]| {
            let environment: BTreeMap<String, String> = pairs
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect();
            Config::from_sources(None, &environment)
        };
        let config = with(&[("INTERAI_REALM", "alpha.example")]).expect("valid");
        assert_eq!(config.public_base_url(), "https://alpha.example");
        let config = with(&[("INTERAI_REALM", "alpha.test")]).expect("valid");
        assert_eq!(config.public_base_url(), "http://alpha.test");
        let refused = with(&[
            ("INTERAI_REALM", "alpha.example"),
            ("INTERAI_PUBLIC_URL", "http://alpha.example"),
        ])
        .expect_err("plain http for a public host");
        assert_eq!(refused.setting, "INTERAI_PUBLIC_URL");
        let config = with(&[
            ("INTERAI_REALM", "alpha.example:8081"),
            ("INTERAI_PUBLIC_URL", "http://alpha.example:8081/"),
            ("INTERAI_FEDERATION_ALLOW_HTTP", "true"),
        ])
        .expect("allowed");
        assert_eq!(config.public_base_url(), "http://alpha.example:8081");
        let elsewhere = with(&[
            ("INTERAI_REALM", "alpha.example"),
            ("INTERAI_PUBLIC_URL", "https://beta.example"),
        ])
        .expect_err("another host than the realm");
        assert_eq!(elsewhere.setting, "INTERAI_PUBLIC_URL");
        for bad in [
            "https://alpha.example/sub",
            "ftp://alpha.example",
            "https://user:pw@alpha.example",
            "nope",
        ] {
            assert!(with(&[("INTERAI_PUBLIC_URL", bad)]).is_err(), "{bad}");
        }
        let config = with(&[("INTERAI_KEY_ENCRYPTION_KEY", "c2VjcmV0")]).expect("valid");
        assert!(
            !format!("{config:?}").contains("c2VjcmV0"),
            "the key never shows in Debug"
        );
    }

    #[test]
    fn defaults_need_no_file_and_no_variables() {
        let config = Config::from_sources(None, &BTreeMap::new()).expect("defaults are valid");
        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(config.realm, "localhost:8080");
        assert_eq!(config.database_url, "sqlite://./data/interai.db");
        assert_eq!(config.writes_per_hour, 200);
        assert_eq!(config.search_candidates, 2000);
        assert_eq!(config.header_read_timeout_seconds, 10);
        assert_eq!(config.max_connections, 1024);
        assert_eq!(config.max_connections_per_client, 128);
        assert_eq!(config.request_timeout_seconds, 30);
        assert_eq!(config.min_body_bytes_per_second, 65_536);
        assert_eq!(config.audit_retention_days, 90);
        assert_eq!(config.statement_timeout_ms, 5000);
        assert!(config.allowed_hosts.contains(&"localhost".to_owned()));
    }

    #[test]
    fn a_mistyped_variable_is_refused_naming_the_closest_setting() {
        let error = Config::from_sources(None, &environment(&[("INTERAI_MAX_CONECTIONS", "30")]))
            .expect_err("a typo is not ignored");
        assert_eq!(error.setting, "INTERAI_MAX_CONECTIONS");
        assert!(error.message.contains("INTERAI_MAX_CONNECTIONS?"), "{}", error.message);
        let error = Config::from_sources(None, &environment(&[("INTERAI_REQUEST_TIMEOUT", "5")])).expect_err("typo");
        assert!(
            error.message.contains("INTERAI_REQUEST_TIMEOUT_SECONDS"),
            "{}",
            error.message
        );
        // What the tests, CI and benchmarks read is not a setting and not a typo.
        let others = environment(&[
            ("INTERAI_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1/postgres"),
            ("INTERAI_CI_POSTGRES_URL", "postgres://postgres@127.0.0.1/postgres"),
            ("INTERAI_CONFIG", "/etc/interai.toml"),
            ("INTERAI_BENCH_ITEMS", "5000"),
        ]);
        Config::from_sources(None, &others).expect("not settings, and allowed");
    }

    #[test]
    fn every_setting_variable_has_a_file_key_and_a_line_in_the_documentation() {
        let documentation = include_str!("../docs/configuration.md");
        for variable in SETTING_VARIABLES {
            assert!(
                documentation.contains(&format!(
                    "| `{variable}` | `{}` |",
                    variable["INTERAI_".len()..].to_ascii_lowercase()
                )),
                "{variable} is documented with its file key"
            );
        }
        let documented = documentation
            .lines()
            .filter(|line| line.starts_with("| `INTERAI_"))
            .count();
        assert_eq!(
            documented,
            SETTING_VARIABLES.len(),
            "every documented variable is a setting"
        );
    }

    #[test]
    fn a_file_error_says_where_on_one_line() {
        let error = Config::from_sources(
            Some("realm = \"a.example\"\nwrites_per_hour = \"many\"\n"),
            &BTreeMap::new(),
        )
        .expect_err("a string where a number belongs");
        assert_eq!(error.setting, CONFIG_FILE);
        assert!(error.message.starts_with("line 2, column 19:"), "{}", error.message);
        assert!(!error.message.contains('\n'), "{}", error.message);
    }

    #[test]
    fn variables_override_the_file() {
        let file = "realm = \"file.example\"\nwrites_per_hour = 5\n";
        let config =
            Config::from_sources(Some(file), &environment(&[("INTERAI_WRITES_PER_HOUR", "7")])).expect("valid");
        assert_eq!(config.realm, "file.example");
        assert_eq!(config.writes_per_hour, 7);
        assert!(config.allowed_hosts.contains(&"file.example".to_owned()));
    }

    #[test]
    fn invalid_values_name_their_setting() {
        let cases = [
            ("INTERAI_LISTEN", "not an address"),
            ("INTERAI_REALM", "https://acme.example/path"),
            ("INTERAI_DATABASE_URL", "mysql://x"),
            ("INTERAI_WRITES_PER_HOUR", "many"),
            ("INTERAI_WRITES_PER_HOUR", "0"),
            ("INTERAI_LOG_FORMAT", "xml"),
            ("INTERAI_ALLOWED_ORIGINS", "acme.example"),
            ("INTERAI_MAX_REQUEST_BYTES", "12"),
            ("INTERAI_SEARCH_CANDIDATES", "50"),
            ("INTERAI_HEADER_READ_TIMEOUT_SECONDS", "0"),
            ("INTERAI_MAX_CONNECTIONS", "0"),
            ("INTERAI_AUDIT_RETENTION_DAYS", "-1"),
            ("INTERAI_STATEMENT_TIMEOUT_MS", "0"),
            ("INTERAI_STATEMENT_TIMEOUT_MS", "3600001"),
            ("INTERAI_MAX_CONNECTIONS_PER_CLIENT", "0"),
            ("INTERAI_MAX_CONNECTIONS_PER_CLIENT", "1025"),
            ("INTERAI_REQUEST_TIMEOUT_SECONDS", "0"),
            ("INTERAI_MIN_BODY_BYTES_PER_SECOND", "0"),
        ];
        for (setting, value) in cases {
            let error = Config::from_sources(None, &environment(&[(setting, value)])).expect_err(value);
            assert_eq!(error.setting, setting, "{value}");
        }
        let error = Config::from_sources(Some("colour = \"blue\""), &BTreeMap::new()).expect_err("unknown key");
        assert_eq!(error.setting, CONFIG_FILE);
    }

    #[test]
    fn default_origins_include_the_loopback_forms_of_a_loopback_listen_address() {
        let config = Config::from_sources(None, &environment(&[("INTERAI_LISTEN", "127.0.0.1:9090")])).expect("valid");
        assert_eq!(
            config.allowed_origins,
            vec![
                "https://localhost:8080",
                "http://localhost:8080",
                "http://127.0.0.1:9090",
                "http://localhost:9090",
                "http://[::1]:9090",
            ]
        );
        let everywhere = Config::from_sources(
            None,
            &environment(&[("INTERAI_LISTEN", "0.0.0.0:8080"), ("INTERAI_REALM", "acme.example")]),
        )
        .expect("valid");
        assert!(everywhere.allowed_origins.contains(&"http://127.0.0.1:8080".to_owned()));
        let public = Config::from_sources(
            None,
            &environment(&[("INTERAI_LISTEN", "192.0.2.7:8080"), ("INTERAI_REALM", "acme.example")]),
        )
        .expect("valid");
        assert_eq!(
            public.allowed_origins,
            vec!["https://acme.example", "http://acme.example"]
        );
        let explicit = Config::from_sources(
            None,
            &environment(&[("INTERAI_ALLOWED_ORIGINS", "https://app.example")]),
        )
        .expect("valid");
        assert_eq!(explicit.allowed_origins, vec!["https://app.example"]);
    }

    #[test]
    fn host_is_split_from_port() {
        assert_eq!(host_without_port("acme.example:8443"), "acme.example");
        assert_eq!(host_without_port("acme.example"), "acme.example");
        assert_eq!(host_without_port("[::1]:8080"), "::1");
    }

    #[test]
    fn local_and_test_realms_use_http_and_others_https() {
        assert_eq!(base_url_for_realm("localhost"), "http://localhost");
        assert_eq!(base_url_for_realm("localhost:8080"), "http://localhost:8080");
        assert_eq!(base_url_for_realm("127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(base_url_for_realm("[::1]:8080"), "http://[::1]:8080");
        assert_eq!(base_url_for_realm("[::1]"), "http://[::1]");
        assert_eq!(base_url_for_realm("alpha.test"), "http://alpha.test");
        assert_eq!(base_url_for_realm("app.localhost:3000"), "http://app.localhost:3000");
        assert_eq!(base_url_for_realm("acme.example"), "https://acme.example");
        assert_eq!(base_url_for_realm("acme.example:8443"), "https://acme.example:8443");
        assert_eq!(base_url_for_realm("testing.com"), "https://testing.com");
        assert_eq!(base_url_for_realm("localhost.evil.com"), "https://localhost.evil.com");
        assert_eq!(base_url_for_realm("10.0.0.1"), "https://10.0.0.1");
    }
}
