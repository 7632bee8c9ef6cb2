//! Every table of a realm as portable rows: read in one consistent snapshot, and loaded into an empty database of
//! either backend in one transaction. `interai admin export`, `import`, `backup` (PostgreSQL) and `migrate` use it.
//!
//! A row travels as one JSON value per column ([`tables::PORTABLE_TABLES`] names them): text, numbers and booleans as
//! themselves, times as RFC 3339 in UTC with microseconds, JSON columns as the JSON itself with its object keys
//! sorted (PostgreSQL's `jsonb` keeps keys in its own order, SQLite the text as written; sorted, the same row reads
//! the same from both, which is what lets `migrate` compare checksums across backends).
//!
//! Both sides work on a connection of their own, opened from the database URL, not on the instance's pools: a
//! snapshot read of every table, or a load of all of them, is far more work than the statement cut-off of a request
//! allows (`statement_budget.rs`), and it must not hold the SQLite writer that requests queue behind.
//!
//! What is derived is not carried: PostgreSQL's search vectors are rebuilt from the search documents after they
//! load, and SQLite's full-text index follows the documents through its triggers.

pub mod tables;

use std::str::FromStr;

use chrono::{DateTime, SecondsFormat, Utc};
use futures_util::TryStreamExt;
use serde_json::Value;
use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteRow, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, PgConnection, QueryBuilder, Row, SqliteConnection};

use super::StoreError;
use super::statement::SqlType;
use tables::{PORTABLE_TABLES, PortableTable};

/// Bound values per insert statement at most: below SQLite's limit (32,766) and PostgreSQL's (65,535).
const BOUND_VALUES_PER_STATEMENT: usize = 30_000;
/// Rows per insert statement at most, however few their columns.
const ROWS_PER_STATEMENT: usize = 1_000;

/// A connection of its own to either backend.
enum OwnConnection {
    Postgres(PgConnection),
    Sqlite(SqliteConnection),
}

async fn connect(url: &str, read_only: bool) -> Result<OwnConnection, StoreError> {
    if super::backend_of_url(url) == super::Backend::Postgres {
        let options = PgConnectOptions::from_str(url).map_err(|error| StoreError::Url(error.to_string()))?;
        Ok(OwnConnection::Postgres(options.connect().await?))
    } else {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|error| StoreError::Url(error.to_string()))?
            .create_if_missing(false)
            .busy_timeout(std::time::Duration::from_secs(30))
            .foreign_keys(true);
        // A reader leaves the journal mode as it finds it: a backup file (`VACUUM INTO` writes no WAL) opens read-only
        // as it is, and the instance's own database is in WAL mode already.
        let options = if read_only {
            options.read_only(true)
        } else {
            options
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
        };
        Ok(OwnConnection::Sqlite(options.connect().await?))
    }
}

/// `ORDER BY` for a table's rows: its key, text compared byte by byte on both backends (PostgreSQL's default
/// collation follows the locale, SQLite's compares bytes), so both read the same rows in the same order.
fn order_by(table: &PortableTable, postgres: bool, qualifier: &str) -> String {
    table
        .key
        .iter()
        .map(|key| {
            let text_key = table
                .columns
                .iter()
                .any(|column| column.name == *key && column.sql_type == SqlType::Text);
            if postgres && text_key {
                format!("{qualifier}{key} COLLATE \"C\"")
            } else {
                format!("{qualifier}{key}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statement that reads a table's rows in archive order.
///
/// Two tables are read in another order than their key. `actors`: an actor's controller is an actor, so
/// controllers come first (by depth from a root, then ID), which lets the load check each foreign key as it goes.
/// `search_documents`: by when each last changed (`updated_at`), the order in which SQLite numbers them and
/// PostgreSQL numbers their vectors, which decides which of many matches a search considers first.
fn select_rows(table: &PortableTable, postgres: bool) -> String {
    let columns = table.column_names();
    match table.name {
        "actors" => format!(
            "WITH RECURSIVE controlled (id, depth) AS (\
             SELECT id, 0 FROM actors WHERE controller_id IS NULL \
             UNION ALL SELECT actors.id, controlled.depth + 1 FROM actors JOIN controlled ON actors.controller_id = controlled.id) \
             SELECT {} FROM actors JOIN controlled ON controlled.id = actors.id ORDER BY controlled.depth, {}",
            columns
                .iter()
                .map(|name| format!("actors.{name}"))
                .collect::<Vec<_>>()
                .join(", "),
            order_by(table, postgres, "actors."),
        ),
        "search_documents" => format!(
            "SELECT {} FROM search_documents ORDER BY updated_at, {}",
            columns.join(", "),
            order_by(table, postgres, ""),
        ),
        name => format!(
            "SELECT {} FROM {name} ORDER BY {}",
            columns.join(", "),
            order_by(table, postgres, "")
        ),
    }
}

/// A time as the archive writes it.
fn time_value(time: DateTime<Utc>) -> Value {
    Value::String(time.to_rfc3339_opts(SecondsFormat::Micros, true))
}

/// `value` with every object's keys in sorted order.
fn sorted_json(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|left, right| left.0.cmp(&right.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key, sorted_json(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted_json).collect()),
        other => other,
    }
}

fn number_value(number: Option<f64>, table: &str, column: &str) -> Result<Value, StoreError> {
    match number {
        None => Ok(Value::Null),
        Some(number) => serde_json::Number::from_f64(number)
            .map(Value::Number)
            .ok_or_else(|| StoreError::Corrupt(format!("{table}.{column} holds {number}, which JSON cannot carry"))),
    }
}

fn postgres_row_values(table: &PortableTable, row: &sqlx::postgres::PgRow) -> Result<Vec<Value>, StoreError> {
    let mut values = Vec::with_capacity(table.columns.len());
    for (index, column) in table.columns.iter().enumerate() {
        let value = match column.sql_type {
            SqlType::Text => row
                .try_get::<Option<String>, _>(index)?
                .map_or(Value::Null, Value::String),
            SqlType::BigInt => row.try_get::<Option<i64>, _>(index)?.map_or(Value::Null, Value::from),
            SqlType::Integer => row.try_get::<Option<i32>, _>(index)?.map_or(Value::Null, Value::from),
            SqlType::DoublePrecision => number_value(row.try_get(index)?, table.name, column.name)?,
            SqlType::Boolean => row.try_get::<Option<bool>, _>(index)?.map_or(Value::Null, Value::Bool),
            SqlType::TimestampTz => row
                .try_get::<Option<DateTime<Utc>>, _>(index)?
                .map_or(Value::Null, time_value),
            SqlType::Jsonb => row
                .try_get::<Option<sqlx::types::Json<Value>>, _>(index)?
                .map_or(Value::Null, |json| sorted_json(json.0)),
        };
        values.push(value);
    }
    Ok(values)
}

fn sqlite_row_values(table: &PortableTable, row: &SqliteRow) -> Result<Vec<Value>, StoreError> {
    let mut values = Vec::with_capacity(table.columns.len());
    for (index, column) in table.columns.iter().enumerate() {
        let value = match column.sql_type {
            SqlType::Text => row
                .try_get::<Option<String>, _>(index)?
                .map_or(Value::Null, Value::String),
            SqlType::BigInt | SqlType::Integer => {
                row.try_get::<Option<i64>, _>(index)?.map_or(Value::Null, Value::from)
            }
            SqlType::DoublePrecision => number_value(row.try_get(index)?, table.name, column.name)?,
            SqlType::Boolean => row.try_get::<Option<bool>, _>(index)?.map_or(Value::Null, Value::Bool),
            SqlType::TimestampTz => row
                .try_get::<Option<DateTime<Utc>>, _>(index)?
                .map_or(Value::Null, time_value),
            SqlType::Jsonb => match row.try_get::<Option<String>, _>(index)? {
                None => Value::Null,
                Some(text) => sorted_json(serde_json::from_str(&text).map_err(|error| {
                    StoreError::Corrupt(format!(
                        "{}.{} holds text that is not JSON: {error}",
                        table.name, column.name
                    ))
                })?),
            },
        };
        values.push(value);
    }
    Ok(values)
}

/// What a snapshot read hands its reader, table by table.
pub trait RowSink {
    /// A table starts; its rows follow.
    fn table(&mut self, table: &'static PortableTable) -> Result<(), StoreError>;
    /// One row of the current table, a value per column.
    fn row(&mut self, values: Vec<Value>) -> Result<(), StoreError>;
    /// The current table has no more rows.
    fn end_of_table(&mut self) -> Result<(), StoreError>;
    /// After the last table: the newest outbox position ever given, which may be past every event left (purged).
    fn outbox_head(&mut self, head: i64) -> Result<(), StoreError>;
}

/// Reads every portable table of the database at `url` in one snapshot (PostgreSQL: a `REPEATABLE READ` read-only
/// transaction; SQLite: one read transaction, which WAL keeps at the state of its first read), in
/// [`PORTABLE_TABLES`] order, handing each row to `sink` as it arrives. Writers go on meanwhile and are not waited
/// for; what they commit after the first read is not in the snapshot.
pub async fn read_snapshot(url: &str, sink: &mut (dyn RowSink + Send)) -> Result<(), StoreError> {
    match connect(url, true).await? {
        OwnConnection::Postgres(mut connection) => {
            sqlx::query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .execute(&mut connection)
                .await?;
            for table in PORTABLE_TABLES {
                sink.table(table)?;
                let sql = select_rows(table, true);
                let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql.as_str())).fetch(&mut connection);
                while let Some(row) = rows.try_next().await? {
                    sink.row(postgres_row_values(table, &row)?)?;
                }
                drop(rows);
                sink.end_of_table()?;
            }
            sink.outbox_head(super::outbox::postgres_head(&mut connection).await?)?;
            sqlx::query("COMMIT").execute(&mut connection).await?;
            connection.close().await?;
        }
        OwnConnection::Sqlite(mut connection) => {
            sqlx::query("BEGIN").execute(&mut connection).await?;
            for table in PORTABLE_TABLES {
                sink.table(table)?;
                let sql = select_rows(table, false);
                let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql.as_str())).fetch(&mut connection);
                while let Some(row) = rows.try_next().await? {
                    sink.row(sqlite_row_values(table, &row)?)?;
                }
                drop(rows);
                sink.end_of_table()?;
            }
            sink.outbox_head(super::outbox::sqlite_head(&mut connection).await?)?;
            sqlx::query("COMMIT").execute(&mut connection).await?;
            connection.close().await?;
        }
    }
    Ok(())
}

/// A load into an empty database, in one transaction: nothing is visible until [`Load::finish`] commits, and a
/// load dropped before that leaves the database as empty as it was.
pub struct Load {
    connection: OwnConnection,
}

impl Load {
    /// Starts a load into the database at `url`, which must already hold this version's schema (the caller applies
    /// the migrations first, with [`super::Store::connect`]) and no row in any portable table; otherwise
    /// [`StoreError::NotEmpty`] names the first table with rows, and nothing is written.
    pub async fn begin(url: &str) -> Result<Load, StoreError> {
        let mut connection = connect(url, false).await?;
        match &mut connection {
            OwnConnection::Postgres(connection) => {
                sqlx::query("BEGIN").execute(&mut *connection).await?;
            }
            OwnConnection::Sqlite(connection) => {
                sqlx::query("BEGIN IMMEDIATE").execute(&mut *connection).await?;
            }
        }
        let mut load = Load { connection };
        for table in PORTABLE_TABLES {
            // The migrations themselves write a few settings (a cursor secret, a backfill flag); a database that
            // holds only those holds no realm yet. They are replaced by the archive's.
            let sql = if table.name == "instance_settings" {
                "SELECT EXISTS (SELECT 1 FROM instance_settings WHERE name = 'realm')".to_owned()
            } else {
                format!("SELECT EXISTS (SELECT 1 FROM {})", table.name)
            };
            let any: bool = match &mut load.connection {
                OwnConnection::Postgres(connection) => {
                    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.as_str()))
                        .fetch_one(&mut *connection)
                        .await?
                }
                OwnConnection::Sqlite(connection) => {
                    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.as_str()))
                        .fetch_one(&mut *connection)
                        .await?
                }
            };
            if any {
                return Err(StoreError::NotEmpty(table.name.to_owned()));
            }
        }
        match &mut load.connection {
            OwnConnection::Postgres(connection) => {
                sqlx::query("DELETE FROM instance_settings")
                    .execute(&mut *connection)
                    .await?;
            }
            OwnConnection::Sqlite(connection) => {
                sqlx::query("DELETE FROM instance_settings")
                    .execute(&mut *connection)
                    .await?;
            }
        }
        Ok(load)
    }

    /// Inserts rows of `table`, a value per column in the table's order, in statements of many rows each. A value
    /// of the wrong kind for its column (text where a number belongs, a time that is not RFC 3339) fails with
    /// [`StoreError::Unloadable`].
    pub async fn insert(&mut self, table: &'static PortableTable, rows: &[Vec<Value>]) -> Result<(), StoreError> {
        let rows_per_statement = (BOUND_VALUES_PER_STATEMENT / table.columns.len()).clamp(1, ROWS_PER_STATEMENT);
        for chunk in rows.chunks(rows_per_statement) {
            let typed = chunk
                .iter()
                .map(|row| typed_row(table, row))
                .collect::<Result<Vec<_>, _>>()?;
            let head = format!("INSERT INTO {} ({}) ", table.name, table.column_names().join(", "));
            match &mut self.connection {
                OwnConnection::Postgres(connection) => {
                    let mut builder = insert_rows(head, &typed, bind_postgres);
                    builder.build().persistent(false).execute(&mut *connection).await?;
                }
                OwnConnection::Sqlite(connection) => {
                    let mut builder = insert_rows(head, &typed, bind_sqlite);
                    builder.build().persistent(false).execute(&mut *connection).await?;
                }
            }
        }
        Ok(())
    }

    /// Sets an instance setting in the load's transaction (a restore's new outbox epoch).
    pub async fn put_setting(&mut self, name: &str, value: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        let sql = "INSERT INTO instance_settings (name, value, updated_at) VALUES ($1, $2, $3) \
                   ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";
        match &mut self.connection {
            OwnConnection::Postgres(connection) => {
                sqlx::query(sql)
                    .bind(name)
                    .bind(value)
                    .bind(at)
                    .execute(&mut *connection)
                    .await?;
            }
            OwnConnection::Sqlite(connection) => {
                sqlx::query(sql)
                    .bind(name)
                    .bind(value)
                    .bind(at)
                    .execute(&mut *connection)
                    .await?;
            }
        }
        Ok(())
    }

    /// Rebuilds what is derived (PostgreSQL's search vectors), moves the outbox's numbering past `outbox_head` and
    /// every position loaded, and commits.
    pub async fn finish(self, outbox_head: i64) -> Result<(), StoreError> {
        match self.connection {
            OwnConnection::Postgres(mut connection) => {
                super::search::rebuild_postgres_vectors(&mut connection).await?;
                super::outbox::continue_postgres_positions(&mut connection, outbox_head).await?;
                sqlx::query("COMMIT").execute(&mut connection).await?;
                connection.close().await?;
            }
            OwnConnection::Sqlite(mut connection) => {
                super::outbox::continue_sqlite_positions(&mut connection, outbox_head).await?;
                sqlx::query("COMMIT").execute(&mut connection).await?;
                connection.close().await?;
            }
        }
        Ok(())
    }
}

/// A value checked against its column's type, ready to bind on either backend.
enum TypedValue {
    Text(Option<String>),
    Integer(Option<i64>),
    Real(Option<f64>),
    Boolean(Option<bool>),
    Time(Option<DateTime<Utc>>),
    Json(Option<Value>),
}

/// The row's values checked against the table's columns: as many as there are columns, each of its column's kind.
/// An `INTEGER` column takes only what fits 32 bits, on SQLite too, so that what one backend loads the other does.
fn typed_row(table: &PortableTable, row: &[Value]) -> Result<Vec<TypedValue>, StoreError> {
    if row.len() != table.columns.len() {
        return Err(StoreError::Unloadable(format!(
            "a row of {} has {} values for {} columns",
            table.name,
            row.len(),
            table.columns.len()
        )));
    }
    table
        .columns
        .iter()
        .zip(row)
        .map(|(column, value)| {
            let refused = |expected: &str| {
                let shown: String = value.to_string().chars().take(60).collect();
                StoreError::Unloadable(format!(
                    "{}.{} must be {expected}, not {shown}",
                    table.name, column.name
                ))
            };
            if value.is_null() {
                return Ok(match column.sql_type {
                    SqlType::Text => TypedValue::Text(None),
                    SqlType::BigInt | SqlType::Integer => TypedValue::Integer(None),
                    SqlType::DoublePrecision => TypedValue::Real(None),
                    SqlType::Boolean => TypedValue::Boolean(None),
                    SqlType::TimestampTz => TypedValue::Time(None),
                    SqlType::Jsonb => TypedValue::Json(None),
                });
            }
            Ok(match column.sql_type {
                SqlType::Text => TypedValue::Text(Some(value.as_str().ok_or_else(|| refused("text"))?.to_owned())),
                SqlType::BigInt => TypedValue::Integer(Some(value.as_i64().ok_or_else(|| refused("an integer"))?)),
                SqlType::Integer => TypedValue::Integer(Some(
                    value
                        .as_i64()
                        .filter(|number| i32::try_from(*number).is_ok())
                        .ok_or_else(|| refused("a 32-bit integer"))?,
                )),
                SqlType::DoublePrecision => TypedValue::Real(Some(value.as_f64().ok_or_else(|| refused("a number"))?)),
                SqlType::Boolean => TypedValue::Boolean(Some(value.as_bool().ok_or_else(|| refused("true or false"))?)),
                SqlType::TimestampTz => TypedValue::Time(Some(
                    value
                        .as_str()
                        .and_then(|text| DateTime::parse_from_rfc3339(text).ok())
                        .ok_or_else(|| refused("an RFC 3339 time"))?
                        .with_timezone(&Utc),
                )),
                SqlType::Jsonb => TypedValue::Json(Some(value.clone())),
            })
        })
        .collect()
}

/// `{head} VALUES (…), (…)` with every value bound by `bind`, the backend's way.
fn insert_rows<DB: sqlx::Database>(
    head: String,
    rows: &[Vec<TypedValue>],
    bind: fn(&mut sqlx::query_builder::Separated<'_, DB, &'static str>, &TypedValue),
) -> QueryBuilder<DB> {
    let mut builder = QueryBuilder::<DB>::new(head);
    builder.push_values(rows, |mut separated, row| {
        for value in row {
            bind(&mut separated, value);
        }
    });
    builder
}

fn bind_postgres(separated: &mut sqlx::query_builder::Separated<'_, sqlx::Postgres, &'static str>, value: &TypedValue) {
    match value {
        TypedValue::Text(text) => separated.push_bind(text.clone()),
        // Checked to fit in `typed_row`; PostgreSQL's `integer` wants 32 bits, its `bigint` takes them too.
        TypedValue::Integer(number) => separated.push_bind(*number),
        TypedValue::Real(number) => separated.push_bind(*number),
        TypedValue::Boolean(flag) => separated.push_bind(*flag),
        TypedValue::Time(time) => separated.push_bind(*time),
        TypedValue::Json(json) => separated.push_bind(json.clone().map(sqlx::types::Json)),
    };
}

fn bind_sqlite(separated: &mut sqlx::query_builder::Separated<'_, sqlx::Sqlite, &'static str>, value: &TypedValue) {
    match value {
        TypedValue::Text(text) => separated.push_bind(text.clone()),
        TypedValue::Integer(number) => separated.push_bind(*number),
        TypedValue::Real(number) => separated.push_bind(*number),
        TypedValue::Boolean(flag) => separated.push_bind(*flag),
        TypedValue::Time(time) => separated.push_bind(*time),
        // SQLite keeps JSON as text.
        TypedValue::Json(json) => separated.push_bind(json.as_ref().map(Value::to_string)),
    };
}

/// Copies the database at `url` to the new file `destination` while writers go on, when it is a file (SQLite;
/// `false` for PostgreSQL, whose data is no file of ours: nothing is written then). `VACUUM INTO` reads one snapshot
/// (a read transaction, which in WAL mode neither blocks writers nor waits for them) and writes a compact,
/// self-contained database file without WAL, mode 0600, that opens as it is.
pub async fn copy_database_file(url: &str, destination: &std::path::Path) -> Result<bool, StoreError> {
    if super::backend_of_url(url) != super::Backend::Sqlite {
        return Ok(false);
    }
    let OwnConnection::Sqlite(mut connection) = connect(url, true).await? else {
        return Ok(false);
    };
    let target = destination
        .to_str()
        .ok_or_else(|| StoreError::Url(format!("{} is not UTF-8", destination.display())))?;
    // Made empty and private first: VACUUM INTO writes into an empty file and keeps its mode.
    super::files::restrict_database_files(destination)?;
    sqlx::query("VACUUM INTO $1")
        .bind(target)
        .execute(&mut connection)
        .await?;
    connection.close().await?;
    Ok(true)
}
