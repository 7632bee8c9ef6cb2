//! The test harness: whole instances in one process, each with its own fresh database and manual clock.
//!
//! By default every instance gets a SQLite file in a temporary directory. With
//! `INTERAI_TEST_DATABASE_URL=postgres://…` every instance gets a freshly created PostgreSQL database
//! instead, dropped again when the instance is dropped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use interai::clock::ManualClock;
use interai::config::Config;
use interai::instance::Instance;
use interai::service::Service;
use sqlx::Connection;

/// The instant every test clock starts at.
pub fn test_epoch() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-01T09:00:00Z")
        .expect("valid instant")
        .to_utc()
}

/// A fresh, empty database for one instance, removed when dropped.
pub struct TestDatabase {
    /// The URL the instance connects to.
    pub url: String,
    /// The directory for SQLite files and the admin key.
    pub directory: tempfile::TempDir,
    postgres: Option<(String, String)>,
}

impl TestDatabase {
    /// Creates a fresh database on the backend selected by `INTERAI_TEST_DATABASE_URL`.
    pub async fn create() -> TestDatabase {
        let directory = private_temporary_directory();
        match std::env::var("INTERAI_TEST_DATABASE_URL") {
            Ok(base_url) if base_url.starts_with("postgres") => {
                let name = format!(
                    "interai_test_{}",
                    ulid::Ulid::generate().to_string().to_ascii_lowercase()
                );
                let mut admin = sqlx::PgConnection::connect(&base_url)
                    .await
                    .expect("connect to the PostgreSQL test server");
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut admin)
                    .await
                    .expect("create a test database");
                admin.close().await.ok();
                let mut url = url::Url::parse(&base_url).expect("INTERAI_TEST_DATABASE_URL is a URL");
                url.set_path(&format!("/{name}"));
                TestDatabase {
                    url: url.to_string(),
                    directory,
                    postgres: Some((base_url, name)),
                }
            }
            _ => {
                let url = format!("sqlite://{}", directory.path().join("interai.db").display());
                TestDatabase {
                    url,
                    directory,
                    postgres: None,
                }
            }
        }
    }

    /// A fresh SQLite database whatever backend the suite runs on (for tests that move a realm between backends).
    pub fn create_sqlite() -> TestDatabase {
        let directory = private_temporary_directory();
        let url = format!("sqlite://{}", directory.path().join("interai.db").display());
        TestDatabase {
            url,
            directory,
            postgres: None,
        }
    }

    /// Whether this database is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.postgres.is_some()
    }
}

/// A temporary directory of mode 0700, as the instance creates a data directory itself: a wider one would be
/// narrowed, with a warning, at the first start.
fn private_temporary_directory() -> tempfile::TempDir {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir().expect("temporary directory")
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some((base_url, name)) = self.postgres.take() {
            // Dropping happens outside any async context a test may be in, on a thread of its own.
            let _ = std::thread::spawn(move || {
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
                    Some(())
                })
            })
            .join();
        }
    }
}

/// One instance under test: its database, its clock, and the instance itself.
pub struct TestInstance {
    /// The instance.
    pub instance: Instance,
    /// Its manual clock.
    pub clock: ManualClock,
    /// Its database (kept alive as long as the instance).
    pub database: TestDatabase,
    /// The bootstrap admin key.
    pub admin_key: String,
}

impl TestInstance {
    /// A bootstrapped instance of `realm` with the default configuration.
    pub async fn start(realm: &str) -> TestInstance {
        TestInstance::start_with(realm, |_| {}).await
    }

    /// A bootstrapped instance whose configuration `adjust` may change first.
    pub async fn start_with(realm: &str, adjust: impl FnOnce(&mut Config)) -> TestInstance {
        TestInstance::start_listening(realm, std::net::SocketAddr::from(([127, 0, 0, 1], 0)), adjust).await
    }

    /// Like [`TestInstance::start_with`], for an instance whose configuration says it listens on `listen`.
    pub async fn start_listening(
        realm: &str,
        listen: std::net::SocketAddr,
        adjust: impl FnOnce(&mut Config),
    ) -> TestInstance {
        let database = TestDatabase::create().await;
        TestInstance::open_on(database, realm, listen, adjust).await
    }

    /// The same database opened again by a new instance, whose configuration `adjust` may change first; this one
    /// is closed.
    pub async fn reopen_with(self, adjust: impl FnOnce(&mut Config)) -> TestInstance {
        let TestInstance { instance, database, .. } = self;
        let realm = instance.config().realm.clone();
        let listen = instance.config().listen;
        instance.close().await;
        drop(instance);
        TestInstance::open_on(database, &realm, listen, adjust).await
    }

    async fn open_on(
        database: TestDatabase,
        realm: &str,
        listen: std::net::SocketAddr,
        adjust: impl FnOnce(&mut Config),
    ) -> TestInstance {
        let mut config = Config::for_realm_listening(realm, &database.url, database.directory.path(), listen);
        adjust(&mut config);
        let clock = ManualClock::starting_at(test_epoch());
        let instance = Instance::open(config, Arc::new(clock.clone()))
            .await
            .expect("instance opens");
        instance.bootstrap().await.expect("instance bootstraps");
        let admin_key = read_admin_key(&instance.admin_key_path());
        TestInstance {
            instance,
            clock,
            database,
            admin_key,
        }
    }

    /// The instance's service layer.
    pub fn service(&self) -> &Service {
        self.instance.service()
    }

    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.database.directory.path().to_path_buf()
    }
}

/// Reads a key file written by bootstrap.
pub fn read_admin_key(path: &Path) -> String {
    std::fs::read_to_string(path)
        .expect("admin key file exists")
        .trim()
        .to_owned()
}

/// An instance serving HTTP on a real loopback socket until dropped.
pub struct ServedInstance {
    /// The base URL, e.g. `http://127.0.0.1:40123`.
    pub base_url: String,
    /// The bootstrap admin key.
    pub admin_key: String,
    /// The service layer of the served instance, for setting up fixtures.
    pub service: Service,
    /// Its manual clock, which its background loops wait on.
    pub clock: ManualClock,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _database: TestDatabase,
}

impl ServedInstance {
    /// Starts a bootstrapped instance on 127.0.0.1 with an ephemeral port.
    pub async fn start(realm: &str) -> ServedInstance {
        ServedInstance::start_with(realm, |_| {}).await
    }

    /// Starts a served instance whose configuration `adjust` may change first. Its configuration names the address
    /// it really listens on, as `interai serve`'s does.
    pub async fn start_with(realm: &str, adjust: impl FnOnce(&mut Config)) -> ServedInstance {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let address = listener.local_addr().expect("address");
        let test_instance = TestInstance::start_listening(realm, address, adjust).await;
        ServedInstance::serve_on(listener, test_instance).await
    }

    /// Serves an instance that was set up (and perhaps reopened) as a [`TestInstance`], on a new ephemeral port
    /// (its configuration keeps the address it was opened with).
    pub async fn serve(test_instance: TestInstance) -> ServedInstance {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        ServedInstance::serve_on(listener, test_instance).await
    }

    async fn serve_on(listener: tokio::net::TcpListener, test_instance: TestInstance) -> ServedInstance {
        let address = listener.local_addr().expect("address");
        let base_url = format!("http://{address}");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let service = test_instance.service().clone();
        let TestInstance {
            instance,
            clock,
            database,
            admin_key,
        } = test_instance;
        let task = tokio::spawn(async move {
            instance
                .serve(listener, async move {
                    let _ = stopped.await;
                })
                .await
                .expect("serve ends cleanly");
        });
        ServedInstance {
            base_url,
            admin_key,
            service,
            clock,
            stop: Some(stop),
            task: Some(task),
            _database: database,
        }
    }

    /// Renames a table behind the instance's back, so that the next query touching it fails unexpectedly.
    pub async fn break_table(&self, table: &str) {
        self.alter_behind_the_back(format!("ALTER TABLE {table} RENAME TO {table}_broken"))
            .await;
    }

    /// Undoes [`ServedInstance::break_table`].
    pub async fn restore_table(&self, table: &str) {
        self.alter_behind_the_back(format!("ALTER TABLE {table}_broken RENAME TO {table}"))
            .await;
    }

    async fn alter_behind_the_back(&self, statement: String) {
        if self._database.is_postgres() {
            let mut connection = sqlx::PgConnection::connect(&self._database.url).await.expect("connect");
            sqlx::query(sqlx::AssertSqlSafe(statement))
                .execute(&mut connection)
                .await
                .expect("rename");
        } else {
            let mut connection = sqlx::SqliteConnection::connect(&self._database.url)
                .await
                .expect("connect");
            sqlx::query(sqlx::AssertSqlSafe(statement))
                .execute(&mut connection)
                .await
                .expect("rename");
        }
    }

    /// The URL of the instance's database, for tests that read it directly.
    pub fn database_url(&self) -> &str {
        &self._database.url
    }

    /// The instance's data directory (which holds the SQLite database files on SQLite).
    pub fn data_dir(&self) -> &Path {
        self._database.directory.path()
    }

    /// The MCP endpoint URL.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base_url)
    }

    /// Stops the server and waits until it has shut down.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task ends");
        }
    }
}

/// A test's own connection to an instance's database, for what no public reading shows (a count by origin, the
/// state an older version left): one place that knows both backends.
pub enum DirectConnection {
    /// An embedded SQLite file.
    Sqlite(sqlx::SqliteConnection),
    /// A PostgreSQL database.
    Postgres(sqlx::PgConnection),
}

impl DirectConnection {
    /// Connects to the database at `url`.
    pub async fn open(url: &str) -> DirectConnection {
        if url.starts_with("postgres") {
            DirectConnection::Postgres(sqlx::PgConnection::connect(url).await.expect("connect"))
        } else {
            DirectConnection::Sqlite(sqlx::SqliteConnection::connect(url).await.expect("connect"))
        }
    }

    /// Runs one statement.
    pub async fn execute(&mut self, statement: &str) {
        let statement = sqlx::AssertSqlSafe(statement);
        match self {
            DirectConnection::Sqlite(connection) => sqlx::query(statement).execute(connection).await.map(|_| ()),
            DirectConnection::Postgres(connection) => sqlx::query(statement).execute(connection).await.map(|_| ()),
        }
        .expect("executed");
    }

    /// The one number `query` reads, with `argument` bound to its only parameter.
    pub async fn count(&mut self, query: &str, argument: &str) -> i64 {
        let query = sqlx::AssertSqlSafe(query);
        match self {
            DirectConnection::Sqlite(connection) => {
                sqlx::query_scalar(query).bind(argument).fetch_one(connection).await
            }
            DirectConnection::Postgres(connection) => {
                sqlx::query_scalar(query).bind(argument).fetch_one(connection).await
            }
        }
        .expect("counted")
    }

    /// The texts of the one column `query` reads.
    pub async fn texts(&mut self, query: &str) -> Vec<String> {
        let query = sqlx::AssertSqlSafe(query);
        match self {
            DirectConnection::Sqlite(connection) => sqlx::query_scalar(query).fetch_all(connection).await,
            DirectConnection::Postgres(connection) => sqlx::query_scalar(query).fetch_all(connection).await,
        }
        .expect("read")
    }

    /// Closes the connection.
    pub async fn close(self) {
        match self {
            DirectConnection::Sqlite(connection) => connection.close().await.ok(),
            DirectConnection::Postgres(connection) => connection.close().await.ok(),
        };
    }
}
