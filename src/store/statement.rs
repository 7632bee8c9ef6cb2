//! Plain writes as data: a statement's SQL (with `$1…` placeholders) and its bound values, so that a SQLite write
//! can hold several of them back and send them to the connection's thread together.
//!
//! On SQLite every statement is a round trip between the async task and the connection's own thread, made while
//! the single writer is held, and on this kind of machine each round trip costs far more than the statement itself.
//! An insert whose result nobody reads can wait: a SQLite write keeps such statements in a buffer and sends them in
//! one multi-statement round trip just before its next statement of any kind, or together with the release of its
//! savepoint at commit. Reads therefore always see every earlier write of the same transaction. Outside a write, a
//! statement runs at once.
//!
//! On PostgreSQL a transaction holds such writes back too, and sends them as few statements as it may: a run of
//! held writes becomes one statement whose earlier members are data-modifying `WITH` queries (see
//! `PostgresHeldStatements` in `postgres_held.rs`), so an applied revision's nine writes cost two round trips to the server
//! instead of nine, and the rows of later inserts of the same shape join an earlier one (`merged_rows.rs`), so a
//! batch of revisions costs one. Readers outside a transaction run each statement at once.
//!
//! A held-back statement that fails reports its error from the call that sent it, wrapped in
//! [`StoreError::Deferred`] so that callers do not mistake it for a failure of that call's own statement.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use super::{Conn, StoreError};

/// One bound value of a [`Statement`].
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// Text.
    Text(String),
    /// Text or NULL.
    OptionalText(Option<String>),
    /// A 64-bit integer.
    Integer(i64),
    /// A 32-bit integer.
    SmallInteger(i32),
    /// A floating-point number.
    Real(f64),
    /// A boolean.
    Boolean(bool),
    /// A UTC timestamp.
    Time(DateTime<Utc>),
    /// A UTC timestamp or NULL.
    OptionalTime(Option<DateTime<Utc>>),
    /// A JSON document (JSONB on PostgreSQL, text on SQLite).
    Json(serde_json::Value),
}

impl From<&str> for Bind {
    fn from(text: &str) -> Bind {
        Bind::Text(text.to_owned())
    }
}

impl From<&String> for Bind {
    fn from(text: &String) -> Bind {
        Bind::Text(text.clone())
    }
}

impl From<Option<&str>> for Bind {
    fn from(text: Option<&str>) -> Bind {
        Bind::OptionalText(text.map(str::to_owned))
    }
}

impl From<&Option<String>> for Bind {
    fn from(text: &Option<String>) -> Bind {
        Bind::OptionalText(text.clone())
    }
}

impl From<i64> for Bind {
    fn from(value: i64) -> Bind {
        Bind::Integer(value)
    }
}

impl From<i32> for Bind {
    fn from(value: i32) -> Bind {
        Bind::SmallInteger(value)
    }
}

impl From<f64> for Bind {
    fn from(value: f64) -> Bind {
        Bind::Real(value)
    }
}

impl From<bool> for Bind {
    fn from(value: bool) -> Bind {
        Bind::Boolean(value)
    }
}

impl From<DateTime<Utc>> for Bind {
    fn from(value: DateTime<Utc>) -> Bind {
        Bind::Time(value)
    }
}

impl From<Option<DateTime<Utc>>> for Bind {
    fn from(value: Option<DateTime<Utc>>) -> Bind {
        Bind::OptionalTime(value)
    }
}

impl From<&serde_json::Value> for Bind {
    fn from(value: &serde_json::Value) -> Bind {
        Bind::Json(value.clone())
    }
}

impl From<serde_json::Value> for Bind {
    fn from(value: serde_json::Value) -> Bind {
        Bind::Json(value)
    }
}

/// A write whose result is not read: its SQL with `$1…` placeholders, and the values they stand for.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    sql: String,
    binds: Vec<Bind>,
}

impl Statement {
    /// A statement with fixed SQL. The SQL must be built from fixed fragments only, never from input.
    pub fn new(sql: impl Into<String>) -> Statement {
        Statement {
            sql: sql.into(),
            binds: Vec::new(),
        }
    }

    /// A statement from SQL built of fixed fragments and its values.
    pub(super) fn from_parts(sql: String, binds: Vec<Bind>) -> Statement {
        Statement { sql, binds }
    }

    /// Its SQL.
    pub(super) fn sql(&self) -> &str {
        &self.sql
    }

    /// Its values.
    pub(super) fn binds(&self) -> &[Bind] {
        &self.binds
    }

    /// Binds the next placeholder.
    pub fn bind(mut self, value: impl Into<Bind>) -> Statement {
        self.binds.push(value.into());
        self
    }

    /// An `INSERT … VALUES (…), (…)` of several rows: `head` up to `VALUES`, then one parenthesized group of
    /// placeholders per row, then `tail` (an `ON CONFLICT` clause or nothing).
    pub fn insert_rows<Row>(head: &str, rows: &[Row], tail: &str, row_binds: impl Fn(&Row) -> Vec<Bind>) -> Statement {
        let mut sql = String::from(head);
        sql.push_str(" VALUES ");
        let mut binds = Vec::new();
        for (index, row) in rows.iter().enumerate() {
            if index > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            for (position, bind) in row_binds(row).into_iter().enumerate() {
                if position > 0 {
                    sql.push_str(", ");
                }
                binds.push(bind);
                sql.push('$');
                sql.push_str(&binds.len().to_string());
            }
            sql.push(')');
        }
        if !tail.is_empty() {
            sql.push(' ');
            sql.push_str(tail);
        }
        Statement::from_parts(sql, binds)
    }

    /// The SQL and the values, for a caller that sends the statement with others.
    pub(super) fn into_parts(self) -> (String, Vec<Bind>) {
        (self.sql, self.binds)
    }

    /// `head`, then one parenthesized list of placeholders for `values` (for `… IN (…)`).
    pub fn with_list(head: &str, values: Vec<Bind>) -> Statement {
        let placeholders: Vec<String> = (1..=values.len()).map(|number| format!("${number}")).collect();
        Statement::from_parts(format!("{head} ({})", placeholders.join(", ")), values)
    }

    /// Runs the statement now on PostgreSQL.
    pub(super) async fn execute_postgres(self, connection: &mut sqlx::PgConnection) -> Result<(), StoreError> {
        bind_all(sqlx::query(sqlx::AssertSqlSafe(self.sql)), self.binds)
            .execute(&mut *connection)
            .await?;
        Ok(())
    }
}

/// Statements held back by a SQLite write, sent together as one multi-statement query.
#[derive(Debug, Default)]
pub struct DeferredStatements {
    sql: String,
    binds: Vec<Bind>,
}

impl DeferredStatements {
    /// Whether nothing is held back.
    pub fn is_empty(&self) -> bool {
        self.sql.is_empty()
    }

    /// Holds a statement back, renumbering its placeholders after those already held.
    pub fn push(&mut self, statement: Statement) {
        let offset = self.binds.len();
        if !self.sql.is_empty() {
            self.sql.push_str(";\n");
        }
        self.sql.push_str(&shift_placeholders(&statement.sql, offset));
        self.binds.extend(statement.binds);
    }

    /// Sends every held statement, followed by `then` (when given), in one round trip, and empties the buffer.
    pub(super) async fn send(
        &mut self,
        connection: &mut sqlx::SqliteConnection,
        then: Option<&str>,
    ) -> Result<(), sqlx::Error> {
        let mut sql = std::mem::take(&mut self.sql);
        let binds = std::mem::take(&mut self.binds);
        if let Some(then) = then {
            if !sql.is_empty() {
                sql.push_str(";\n");
            }
            sql.push_str(then);
        }
        if sql.is_empty() {
            return Ok(());
        }
        // Prepared and cached like any statement: a kind of write sends the same combination every time.
        bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), binds)
            .execute(&mut *connection)
            .await?;
        Ok(())
    }
}

/// Binds `binds`, in order, to a query of either backend.
pub(super) fn bind_all<DB: sqlx::Database>(
    mut query: sqlx::query::Query<'static, DB, <DB as sqlx::Database>::Arguments>,
    binds: Vec<Bind>,
) -> sqlx::query::Query<'static, DB, <DB as sqlx::Database>::Arguments>
where
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i32: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    f64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    bool: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<DateTime<Utc>>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Json<serde_json::Value>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    for bind in binds {
        query = match bind {
            Bind::Text(value) => query.bind(value),
            Bind::OptionalText(value) => query.bind(value),
            Bind::Integer(value) => query.bind(value),
            Bind::SmallInteger(value) => query.bind(value),
            Bind::Real(value) => query.bind(value),
            Bind::Boolean(value) => query.bind(value),
            Bind::Time(value) => query.bind(value),
            Bind::OptionalTime(value) => query.bind(value),
            Bind::Json(value) => query.bind(Json(value)),
        };
    }
    query
}

/// Runs a plain write: at once on a connection outside a transaction, held back inside one until its next
/// statement or its commit.
pub async fn execute(conn: &mut Conn<'_>, statement: Statement) -> Result<(), StoreError> {
    match conn {
        Conn::Postgres(connection) => statement.execute_postgres(connection).await,
        Conn::PostgresWrite(write) => {
            write.defer(statement);
            Ok(())
        }
        Conn::Sqlite(connection) => {
            let mut deferred = DeferredStatements::default();
            deferred.push(statement);
            deferred.send(connection, None).await?;
            Ok(())
        }
        Conn::SqliteWrite(write) => {
            write.defer(statement);
            Ok(())
        }
    }
}

/// `$n` → `$(n + offset)` everywhere in `sql`. The SQL is built from fixed fragments with no `$` but placeholders.
pub(super) fn shift_placeholders(sql: &str, offset: usize) -> String {
    if offset == 0 {
        return sql.to_owned();
    }
    let mut shifted = String::with_capacity(sql.len() + 16);
    let mut characters = sql.char_indices().peekable();
    while let Some((_, character)) = characters.next() {
        shifted.push(character);
        if character != '$' {
            continue;
        }
        let mut number = 0_usize;
        let mut digits = 0;
        while let Some((_, digit)) = characters.peek().copied() {
            let Some(value) = digit.to_digit(10) else {
                break;
            };
            number = number * 10 + value as usize;
            digits += 1;
            characters.next();
        }
        if digits > 0 {
            shifted.push_str(&(number + offset).to_string());
        }
    }
    shifted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_shift_past_the_statements_held_before() {
        assert_eq!(
            shift_placeholders("INSERT INTO t (a, b) VALUES ($1, $2)", 3),
            "INSERT INTO t (a, b) VALUES ($4, $5)"
        );
        assert_eq!(
            shift_placeholders("UPDATE t SET a = $10 WHERE b = $9", 0),
            "UPDATE t SET a = $10 WHERE b = $9"
        );
        let mut deferred = DeferredStatements::default();
        deferred.push(Statement::new("INSERT INTO a VALUES ($1)").bind(1_i64));
        deferred.push(Statement::new("INSERT INTO b VALUES ($1, $2)").bind(2_i64).bind(3_i64));
        assert_eq!(
            deferred.sql,
            "INSERT INTO a VALUES ($1);\nINSERT INTO b VALUES ($2, $3)"
        );
        assert_eq!(deferred.binds.len(), 3);
    }

    #[test]
    fn a_multi_row_insert_numbers_every_value() {
        let statement = Statement::insert_rows(
            "INSERT INTO tags (revision_id, tag)",
            &["a", "b"],
            "ON CONFLICT DO NOTHING",
            |tag| vec![Bind::from("rev"), Bind::from(*tag)],
        );
        assert_eq!(
            statement.sql,
            "INSERT INTO tags (revision_id, tag) VALUES ($1, $2), ($3, $4) ON CONFLICT DO NOTHING"
        );
        assert_eq!(statement.binds.len(), 4);
    }
}
