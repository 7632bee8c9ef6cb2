//! Storage: the only module that names sqlx. One [`Store`] dispatches to PostgreSQL or SQLite.
//!
//! Queries are written once with `$1…` placeholders and compiled for both backends through the
//! [`dispatch!`] macro; where the dialects differ a query gets two arms. SQLite runs with one writer
//! connection and `BEGIN IMMEDIATE` transactions, because several writers that read before they write
//! fail with "database is locked" even with a busy timeout.

pub mod activity_history;
pub mod actors;
pub mod audit;
pub mod console_sessions;
pub mod deliveries;
pub mod evidence;
pub mod files;
mod group_writes;
pub mod idempotency;
pub mod inbox;
pub mod instance_keys;
pub mod instance_trust;
pub mod intake_log;
pub mod keys;
mod keyset_page;
pub mod knowledge;
mod merged_rows;
pub mod outbox;
pub mod overview;
pub mod peers;
pub mod portable;
mod postgres_held;
pub mod remote_evidence;
pub mod replication;
pub mod search;
mod search_syntax;
pub mod settings;
mod sqlite_writer;
mod statement;
mod statement_budget;
pub mod tombstones;
pub mod trust;
mod write_lane;

pub use group_writes::{HoldsTransaction, WriteGrouping};
pub(crate) use group_writes::{end_of_change, write_each_change};
pub use statement::DELETE_CASCADES;

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool, Postgres, Sqlite, SqliteConnection, SqlitePool};

/// Runs `$body` with `$connection` bound to a `&mut PgConnection` or a `&mut SqliteConnection`.
///
/// The body is compiled once per backend, so the same query text and binds serve both. Inside a write, the
/// statements it held back (see [`statement`]) are sent first, so the body sees every earlier write.
macro_rules! dispatch {
    ($conn:expr, |$connection:ident| $body:expr) => {
        match &mut *$conn {
            postgres @ ($crate::store::Conn::Postgres(_) | $crate::store::Conn::PostgresWrite(_)) => {
                let $connection: &mut sqlx::PgConnection = $crate::store::postgres_connection(postgres).await?;
                $body
            }
            sqlite => {
                let $connection: &mut sqlx::SqliteConnection = $crate::store::sqlite_connection(sqlite).await?;
                $body
            }
        }
    };
}
pub(crate) use dispatch;

/// The rows (of type `$row`) that `$select` finds for any of `$keys` in `$column`, in one statement:
/// `{$select} WHERE {$column} IN (…){$tail}`. Empty keys read nothing. `$select`, `$column` and `$tail` must be
/// fixed SQL, never input; the keys are bound.
macro_rules! fetch_where_in {
    ($conn:expr, $row:ty, $select:expr, $column:expr, $keys:expr, $tail:expr) => {{
        let keys: Vec<String> = $keys;
        if keys.is_empty() {
            Vec::<$row>::new()
        } else {
            let rows: Vec<$row> = $crate::store::dispatch!($conn, |connection| {
                let mut builder = sqlx::QueryBuilder::new(format!("{} WHERE {} IN (", $select, $column));
                let mut separated = builder.separated(", ");
                for key in keys {
                    separated.push_bind(key);
                }
                builder.push(")");
                builder.push($tail);
                // Not kept in the connection's statement cache: each number of keys is a text of its own, and
                // they would push out the statements that do repeat.
                builder
                    .build_query_as()
                    .persistent(false)
                    .fetch_all(&mut *connection)
                    .await?
            });
            rows
        }
    }};
}
pub(crate) use fetch_where_in;

/// A failure in the storage layer. The service layer logs it and reports `internal_error`,
/// except for the constraint violations it can explain.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database reported an error. Its text is said here and the sqlx error is not a separate cause, so a printed
    /// error chain says it once; the server's own message is shown without the source line PostgreSQL adds ("at line
    /// 948" names a line of PostgreSQL's C code, not of anything the operator wrote).
    #[error("database error: {}", database_message(.0))]
    Database(sqlx::Error),
    /// Applying the embedded migrations failed.
    #[error("migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// A stored row could not be turned into a domain value; the database holds something this version does not understand.
    #[error("stored data is invalid: {0}")]
    Corrupt(String),
    /// The database URL could not be used.
    #[error("cannot use the database URL: {0}")]
    Url(String),
    /// A write that a SQLite write held back (see [`statement`]) failed when it was sent, before the statement of
    /// the call that reports it.
    #[error("{0}")]
    Deferred(Box<StoreError>),
    /// The shared commit of a batch of SQLite writes failed, so this write did not happen.
    #[error("commit failed: {}", .0.message)]
    GroupCommit(sqlite_writer::CommitFailure),
    /// SQLite's full-text ranking function could not be registered on a new connection.
    #[error("cannot register the SQLite ranking function: {0}")]
    Ranking(#[from] fts5_rank::RegisterError),
    /// The write lane's thread could not be started.
    #[error("cannot start the SQLite write lane: {0}")]
    WriteLane(std::io::Error),
    /// A load ([`portable::Load`]) was asked of a database that already holds rows (in the table named).
    #[error("the database is not empty: table {0} has rows (a realm loads only into an empty database)")]
    NotEmpty(String),
    /// A value of a load does not fit its column.
    #[error("cannot load a value: {0}")]
    Unloadable(String),
    /// A database file could not be created for, or restricted to, its owner.
    #[error("cannot restrict {path} to its owner: {source}")]
    Permissions {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> StoreError {
        StoreError::Database(error)
    }
}

/// What a database error says: the server's message (with its SQLSTATE code) for an error the server returned,
/// sqlx's text otherwise.
fn database_message(error: &sqlx::Error) -> String {
    match error {
        sqlx::Error::Database(database) => match database.code() {
            Some(code) => format!("{} (SQLSTATE {code})", database.message()),
            None => database.message().to_owned(),
        },
        other => other.to_string(),
    }
}

/// Registers the full-text ranking function that the SQLite search statements call (see `search::SQLITE_BM25`) on
/// a new connection.
pub(crate) async fn register_sqlite_ranking(connection: &mut sqlx::SqliteConnection) -> Result<(), StoreError> {
    let mut handle = connection.lock_handle().await?;
    fts5_rank::register_on(&mut handle)?;
    Ok(())
}

/// Parses an ID read from a row; a malformed one means the row is corrupt.
pub(crate) fn stored_id(text: &str, what: &str) -> Result<crate::domain::PublicId, StoreError> {
    crate::domain::PublicId::parse(text).map_err(|_| StoreError::Corrupt(format!("malformed {what}: {text}")))
}

/// Parses a trust status read from a row (a summary's or a candidate's); an unknown one means the database holds
/// something this version does not write.
pub(crate) fn stored_status(text: &str, owner: &str) -> Result<crate::domain::TrustStatus, StoreError> {
    crate::domain::TrustStatus::parse(text)
        .ok_or_else(|| StoreError::Corrupt(format!("{owner}: unknown trust status `{text}`")))
}

/// Parses a context key read from a row (evidence and aggregates store the rendering of a normalized key, so one
/// that does not parse back was not written by this version).
pub(crate) fn stored_context_key(text: &str, owner: &str) -> Result<crate::domain::ContextKey, StoreError> {
    crate::domain::ContextKey::parse(text).map_err(|error| StoreError::Corrupt(format!("{owner}: {error}")))
}

/// Parses an optional ID read from a row.
pub(crate) fn stored_optional_id(
    text: Option<&str>,
    what: &str,
) -> Result<Option<crate::domain::PublicId>, StoreError> {
    text.map(|text| stored_id(text, what)).transpose()
}

impl StoreError {
    /// Whether the error is a unique-constraint violation (a concurrent insert of the same key).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Deferred(inner) => inner.is_unique_violation(),
            StoreError::Database(sqlx::Error::Database(error)) => error.is_unique_violation(),
            _ => false,
        }
    }

    /// Whether the error came from a statement held back earlier in the write rather than from the call reporting it.
    #[cfg(test)]
    pub(in crate::store) fn is_deferred(&self) -> bool {
        matches!(self, StoreError::Deferred(_))
    }

    /// Whether the statement cut-off stopped a statement (see [`statement_budget`]): PostgreSQL's
    /// `statement_timeout` (SQLSTATE `57014`, `query_canceled`) or SQLite's progress handler (`SQLITE_INTERRUPT`,
    /// code 9). Nothing else in this process cancels or interrupts statements, so either code means the request
    /// asked for more work than one request may do.
    pub fn is_statement_cut_off(&self) -> bool {
        match self {
            StoreError::Deferred(inner) => inner.is_statement_cut_off(),
            StoreError::Database(sqlx::Error::Database(error)) => {
                matches!(error.code().as_deref(), Some("57014") | Some("9"))
            }
            _ => false,
        }
    }

    /// Whether a new attempt at the whole transaction can succeed: the database aborted it (PostgreSQL deadlock
    /// `40P01` or serialization failure `40001`; SQLite busy after the timeout), or a write the store held back
    /// failed on a unique index when it was sent. A held-back write is one the caller did not check before (an
    /// insert of a row it found missing), so its unique violation means a concurrent change created the same row
    /// first, which a new attempt finds; a unique violation of a statement run at once is the caller's to judge.
    pub fn is_retryable(&self) -> bool {
        match self {
            StoreError::Deferred(inner) => inner.is_retryable() || inner.is_unique_violation(),
            StoreError::GroupCommit(failure) => failure.retryable,
            StoreError::Database(sqlx::Error::Database(error)) => {
                matches!(
                    error.code().as_deref(),
                    Some("40P01") | Some("40001") | Some("5") | Some("517")
                )
            }
            _ => false,
        }
    }
}

/// The log levels of sqlx's own targets unless the configured filter names sqlx: its warnings at `warn`, but its
/// statement log (`sqlx::query`, whose slow-statement warnings print the whole statement over several lines) at
/// `error` only. The log setup (`instance::init_logging`) adds them; this module is the one that knows sqlx.
pub const QUIET_LOG_DIRECTIVES: &str = "sqlx=warn,sqlx::query=error";

/// Which backend a store uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// PostgreSQL.
    Postgres,
    /// Embedded SQLite.
    Sqlite,
}

impl Backend {
    /// The backend's name as the instance overview shows it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Postgres => "postgresql",
            Backend::Sqlite => "sqlite",
        }
    }
}

#[derive(Debug, Clone)]
enum Pools {
    Postgres {
        pool: PgPool,
        /// How many statements its transactions sent for the writes they held back (see `postgres_held.rs`).
        held_statements_sent: std::sync::Arc<std::sync::atomic::AtomicU64>,
    },
    Sqlite {
        reader: SqlitePool,
        writer: std::sync::Arc<sqlite_writer::SqliteWriter>,
        lane: std::sync::Arc<write_lane::WriteLane>,
    },
}

/// The database of one instance. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pools: Pools,
}

/// A borrowed database connection of either backend; the argument of every query function.
pub enum Conn<'a> {
    /// A PostgreSQL connection outside a transaction (a reader).
    Postgres(&'a mut PgConnection),
    /// A PostgreSQL transaction, which may hold plain writes back (see [`statement`]).
    PostgresWrite(&'a mut PostgresWrite),
    /// A SQLite connection outside a write (a reader).
    Sqlite(&'a mut SqliteConnection),
    /// The SQLite writer connection inside a write, which may hold plain writes back (see [`statement`]).
    SqliteWrite(&'a mut sqlite_writer::SqliteWrite),
}

impl Conn<'_> {
    /// Whether the connection is to PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self, Conn::Postgres(_) | Conn::PostgresWrite(_))
    }
}

/// A PostgreSQL write transaction with the plain writes it holds back (see [`statement`]).
#[derive(Debug)]
pub struct PostgresWrite {
    transaction: sqlx::Transaction<'static, Postgres>,
    held: postgres_held::PostgresHeldStatements,
}

impl PostgresWrite {
    /// Holds a plain write back until the transaction's next statement or its commit.
    pub fn defer(&mut self, write: statement::HeldWrite) {
        self.held.push(write);
    }

    /// Sends the writes held back, combined as far as they allow.
    pub async fn send_deferred(&mut self) -> Result<(), StoreError> {
        if self.held.is_empty() {
            return Ok(());
        }
        self.held
            .send(&mut self.transaction)
            .await
            .map_err(|error| StoreError::Deferred(Box::new(StoreError::Database(error))))
    }

    /// Sends the writes held back and commits.
    async fn commit(mut self) -> Result<(), StoreError> {
        self.send_deferred().await?;
        self.transaction.commit().await?;
        Ok(())
    }
}

/// The PostgreSQL connection behind `conn`, with any statements a transaction held back sent first. Only for
/// PostgreSQL connections; [`dispatch!`] routes SQLite elsewhere.
pub(crate) async fn postgres_connection<'c>(conn: &'c mut Conn<'_>) -> Result<&'c mut PgConnection, StoreError> {
    match conn {
        Conn::Postgres(connection) => Ok(&mut **connection),
        Conn::PostgresWrite(write) => {
            write.send_deferred().await?;
            Ok(&mut *write.transaction)
        }
        Conn::Sqlite(_) | Conn::SqliteWrite(_) => Err(StoreError::Corrupt(
            "a SQLite connection was used as a PostgreSQL one".to_owned(),
        )),
    }
}

/// The SQLite connection behind `conn`, with any statements a write held back sent first. Only for SQLite
/// connections; [`dispatch!`] routes PostgreSQL elsewhere.
pub(crate) async fn sqlite_connection<'c>(conn: &'c mut Conn<'_>) -> Result<&'c mut SqliteConnection, StoreError> {
    match conn {
        Conn::Sqlite(connection) => Ok(&mut **connection),
        Conn::SqliteWrite(write) => {
            write.send_deferred().await?;
            Ok(write.connection())
        }
        Conn::Postgres(_) | Conn::PostgresWrite(_) => Err(StoreError::Corrupt(
            "a PostgreSQL connection was used as a SQLite one".to_owned(),
        )),
    }
}

/// A pooled connection for reads outside a transaction.
pub enum Reader {
    /// From the PostgreSQL pool.
    Postgres(sqlx::pool::PoolConnection<Postgres>),
    /// From the SQLite read-only pool.
    Sqlite(sqlx::pool::PoolConnection<Sqlite>),
}

impl Reader {
    /// The connection to pass to query functions.
    pub fn conn(&mut self) -> Conn<'_> {
        match self {
            Reader::Postgres(connection) => Conn::Postgres(&mut *connection),
            Reader::Sqlite(connection) => Conn::Sqlite(&mut *connection),
        }
    }
}

/// A write transaction. Dropping it without [`Transaction::commit`] rolls everything back.
pub enum Transaction {
    /// A PostgreSQL transaction.
    Postgres(PostgresWrite),
    /// A write on the single SQLite writer connection: a savepoint inside a `BEGIN IMMEDIATE` transaction that
    /// the writes queued behind each other share (group commit, see [`sqlite_writer`]).
    Sqlite(sqlite_writer::SqliteWrite),
}

impl Transaction {
    /// The connection to pass to query functions.
    pub fn conn(&mut self) -> Conn<'_> {
        match self {
            Transaction::Postgres(write) => Conn::PostgresWrite(write),
            Transaction::Sqlite(write) => Conn::SqliteWrite(write),
        }
    }

    /// Makes every write of the transaction durable.
    pub async fn commit(self) -> Result<(), StoreError> {
        match self {
            Transaction::Postgres(write) => write.commit().await?,
            Transaction::Sqlite(write) => write.commit().await?,
        }
        Ok(())
    }

    /// The backend the transaction runs on.
    pub fn backend(&self) -> Backend {
        match self {
            Transaction::Postgres(_) => Backend::Postgres,
            Transaction::Sqlite(_) => Backend::Sqlite,
        }
    }
}

/// The schema this build's migrations give: the number of the newest (the two folders hold the same names).
pub fn schema_version() -> i64 {
    SQLITE_MIGRATIONS
        .iter()
        .map(|migration| migration.version)
        .max()
        .unwrap_or(0)
}

/// The backend a database URL names (`postgres://` or `postgresql://`; anything else is SQLite's).
pub fn backend_of_url(url: &str) -> Backend {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Backend::Postgres
    } else {
        Backend::Sqlite
    }
}

/// Migrations for PostgreSQL, embedded in the binary.
pub static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");
/// Migrations for SQLite, embedded in the binary.
pub static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");

impl Store {
    /// Connects to the database named by `url` (`sqlite://path` or `postgres://…`) and applies pending migrations.
    /// Every statement of a request is cut off after `statement_timeout` (PostgreSQL) or the instruction budget
    /// derived from it (SQLite); see [`statement_budget`].
    pub async fn connect(url: &str, max_connections: u32, statement_timeout: Duration) -> Result<Store, StoreError> {
        let store = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url).map_err(|error| StoreError::Url(error.to_string()))?;
            // Migrations run first, on a connection of their own without the timeout: building an index over a
            // large table may legitimately take longer than any request should.
            let mut migrating = options.connect().await?;
            POSTGRES_MIGRATIONS.run(&mut migrating).await?;
            migrating.close().await?;
            let pool = PgPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(options.options([statement_budget::postgres_statement_timeout(statement_timeout)]))
                .await?;
            Store {
                pools: Pools::Postgres {
                    pool,
                    held_statements_sent: std::sync::Arc::default(),
                },
            }
        } else if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)
                .map_err(|error| StoreError::Url(error.to_string()))?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(10))
                .foreign_keys(true);
            let in_memory = options
                .to_url_lossy()
                .query_pairs()
                .any(|(name, value)| name == "mode" && value == "memory");
            if !in_memory {
                files::restrict_database_files(options.get_filename())?;
            }
            // One writer: SQLite serializes writers anyway, and a single connection with BEGIN IMMEDIATE turns lock
            // contention into orderly queueing. Writes queued behind each other share one transaction (group
            // commit), each in its own savepoint; see `sqlite_writer`.
            let writer = sqlite_writer::SqliteWriter::open(&options, &SQLITE_MIGRATIONS, statement_timeout).await?;
            let reader = SqlitePoolOptions::new()
                .max_connections(max_connections.max(2))
                .test_before_acquire(false)
                .acquire_timeout(Duration::from_secs(10))
                .after_connect(move |connection, _| {
                    Box::pin(async move {
                        register_sqlite_ranking(connection)
                            .await
                            .map_err(|error| sqlx::Error::Configuration(Box::new(error)))?;
                        statement_budget::renew_reader_budget(connection, statement_timeout).await
                    })
                })
                // Each checkout of a reader gets the whole budget: renewed when the connection comes back, off the
                // path of the request that used it.
                .after_release(move |connection, _| {
                    Box::pin(async move {
                        statement_budget::renew_reader_budget(connection, statement_timeout).await?;
                        Ok(true)
                    })
                })
                // A text search returns a few hundred candidate rows; with sqlx's default buffer of 50 rows the
                // connection's worker thread stalls and waits for this task to be scheduled several times a query.
                .connect_with(options.read_only(true).row_buffer_size(256))
                .await?;
            Store {
                pools: Pools::Sqlite {
                    reader,
                    writer: std::sync::Arc::new(writer),
                    lane: std::sync::Arc::new(write_lane::WriteLane::start()?),
                },
            }
        } else {
            return Err(StoreError::Url(
                "the URL must start with sqlite:// or postgres://".to_owned(),
            ));
        };
        Ok(store)
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        match self.pools {
            Pools::Postgres { .. } => Backend::Postgres,
            Pools::Sqlite { .. } => Backend::Sqlite,
        }
    }

    /// How many statements this store's PostgreSQL transactions have sent for the writes they held back (combined
    /// as `postgres_held.rs` combines them), counted where they are sent; `None` on SQLite. For tests that pin how
    /// many round trips a kind of change costs.
    pub fn held_statements_sent(&self) -> Option<u64> {
        match &self.pools {
            Pools::Postgres {
                held_statements_sent, ..
            } => Some(held_statements_sent.load(std::sync::atomic::Ordering::Relaxed)),
            Pools::Sqlite { .. } => None,
        }
    }

    /// Opens a write transaction.
    pub async fn begin(&self) -> Result<Transaction, StoreError> {
        Ok(match &self.pools {
            Pools::Postgres {
                pool,
                held_statements_sent,
            } => Transaction::Postgres(PostgresWrite {
                transaction: pool.begin().await?,
                held: postgres_held::PostgresHeldStatements::new(std::sync::Arc::clone(held_statements_sent)),
            }),
            Pools::Sqlite { writer, .. } => Transaction::Sqlite(writer.begin().await?),
        })
    }

    /// Opens a write transaction for a change that is redone from durable state when it is lost: applying queued
    /// inbound activities (each stays queued until the transaction that applies it commits), a push round's
    /// cursor (events past a lost cursor are sent again and the receiver's dedupe absorbs them). On PostgreSQL its
    /// commit does not wait for the WAL flush (`synchronous_commit` off for this transaction alone): a crash of
    /// the database server in the next fraction of a second loses it, with the marks that it was done, and it is
    /// done again; any later commit that waits for the flush makes it durable first. On SQLite, whose commits do
    /// not wait for a disk sync (WAL with `synchronous = NORMAL`), it is [`Store::begin`].
    pub async fn begin_redoable(&self) -> Result<Transaction, StoreError> {
        Ok(match &self.pools {
            Pools::Postgres {
                pool,
                held_statements_sent,
            } => Transaction::Postgres(PostgresWrite {
                transaction: pool.begin_with("BEGIN; SET LOCAL synchronous_commit TO OFF").await?,
                held: postgres_held::PostgresHeldStatements::new(std::sync::Arc::clone(held_statements_sent)),
            }),
            Pools::Sqlite { writer, .. } => Transaction::Sqlite(writer.begin().await?),
        })
    }

    /// Opens a SQLite write and runs `opening` (a query) inside it in the same round trip, returning its first row.
    pub(crate) async fn begin_sqlite_with(
        &self,
        opening: statement::Statement,
    ) -> Result<(Transaction, Option<sqlx::sqlite::SqliteRow>), StoreError> {
        match &self.pools {
            Pools::Sqlite { writer, .. } => {
                let (write, row) = writer.begin_with(Some(opening)).await?;
                Ok((Transaction::Sqlite(write), row))
            }
            Pools::Postgres { .. } => Err(StoreError::Corrupt(
                "a SQLite write was opened on PostgreSQL".to_owned(),
            )),
        }
    }

    /// A connection for reads that need no transaction.
    pub async fn reader(&self) -> Result<Reader, StoreError> {
        Ok(match &self.pools {
            Pools::Postgres { pool, .. } => Reader::Postgres(pool.acquire().await?),
            Pools::Sqlite { reader, .. } => Reader::Sqlite(reader.acquire().await?),
        })
    }

    /// Checks that the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut reader = self.reader().await?;
        dispatch!(&mut reader.conn(), |connection| {
            sqlx::query("SELECT 1").execute(&mut *connection).await?;
        });
        Ok(())
    }

    /// Closes every connection, waiting for checked-out ones to come back.
    pub async fn close(&self) {
        match &self.pools {
            Pools::Postgres { pool, .. } => pool.close().await,
            Pools::Sqlite { reader, writer, lane } => {
                reader.close().await;
                writer.close().await;
                lane.stop_and_wait().await;
            }
        }
    }

    /// Names and columns of every table, for the test that keeps the two migration folders equivalent.
    pub async fn describe_tables(&self) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let mut reader = self.reader().await?;
        let pairs: Vec<(String, String)> = match &mut reader.conn() {
            Conn::Postgres(connection) => {
                sqlx::query_as(
                    "SELECT table_name::TEXT, column_name::TEXT FROM information_schema.columns \
                     WHERE table_schema = current_schema() AND table_name <> '_sqlx_migrations' \
                     ORDER BY table_name, column_name",
                )
                .fetch_all(&mut **connection)
                .await?
            }
            sqlite => {
                let connection = sqlite_connection(sqlite).await?;
                sqlx::query_as(
                    "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_xinfo(m.name) p \
                     WHERE m.type = 'table' AND p.hidden <> 1 AND m.name NOT LIKE 'sqlite_%' AND m.name <> '_sqlx_migrations' \
                     AND m.name NOT LIKE '%_fts%' ORDER BY m.name, p.name",
                )
                .fetch_all(&mut *connection)
                .await?
            }
        };
        let mut tables: Vec<(String, Vec<String>)> = Vec::new();
        for (table, column) in pairs {
            match tables.last_mut() {
                Some((name, columns)) if *name == table => columns.push(column),
                _ => tables.push((table, vec![column])),
            }
        }
        Ok(tables)
    }
}
