//! Plain writes as data, so that a transaction can hold them back and send several together.
//!
//! A write is either an [`Insert`] (a table's rows: the table, its columns with their SQL types, the conflict target
//! and action, all declared by the caller as an [`InsertShape`], and the values of each row), or a [`Statement`]
//! (SQL with `$1…` placeholders, its values, and, given by the caller as data, the tables it writes and reads).
//! Nothing here reads SQL text to learn what a write does: an insert's SQL is rendered from its shape only when it is
//! sent, and a statement says what it touches.
//!
//! On SQLite every statement is a round trip between the async task and the connection's own thread, made while
//! the single writer is held, and on this kind of machine each round trip costs far more than the statement itself.
//! A write whose result nobody reads can wait: a SQLite write keeps such writes in a buffer and sends them in one
//! multi-statement round trip just before its next statement of any kind, or together with the release of its
//! savepoint at commit. Reads therefore always see every earlier write of the same transaction. Outside a write, a
//! statement runs at once.
//!
//! On PostgreSQL a transaction holds such writes back too, and sends them as few statements as it may: a run of
//! held writes becomes one statement whose earlier members are data-modifying `WITH` queries (see
//! `PostgresHeldStatements` in `postgres_held.rs`), so an applied revision's nine writes cost two round trips to the
//! server instead of nine, and the rows of later inserts of the same shape join an earlier one (`merged_rows.rs`),
//! so a batch of revisions costs one. Readers outside a transaction run each statement at once.
//!
//! A held-back write that fails reports its error from the call that sent it, wrapped in [`StoreError::Deferred`]
//! (whose retry decision, [`StoreError::is_retryable`], counts a unique violation: a concurrent write created the
//! same row first).

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

/// The SQL type of a column that an [`Insert`] fills, as the migrations declare it. Several rows of an insert are
/// sent to PostgreSQL as one array per column, cast to this type (`unnest($1::text[], …)`), so a column must be
/// declared with its real type: a `uuid`, `date` or enum column added later gets a variant of its own here (bound
/// as text, cast by its name) rather than riding on `Text`, which would work for one row and fail for two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlType {
    /// `TEXT`.
    Text,
    /// `BIGINT`.
    BigInt,
    /// `INTEGER`.
    Integer,
    /// `DOUBLE PRECISION`.
    DoublePrecision,
    /// `BOOLEAN`.
    Boolean,
    /// `TIMESTAMPTZ` (`TEXT` on SQLite).
    TimestampTz,
    /// `JSONB` (`TEXT` on SQLite).
    Jsonb,
}

impl SqlType {
    /// The PostgreSQL name of the type.
    pub(in crate::store) fn postgres_name(self) -> &'static str {
        match self {
            SqlType::Text => "text",
            SqlType::BigInt => "bigint",
            SqlType::Integer => "integer",
            SqlType::DoublePrecision => "double precision",
            SqlType::Boolean => "boolean",
            SqlType::TimestampTz => "timestamptz",
            SqlType::Jsonb => "jsonb",
        }
    }
}

/// One column of an [`InsertShape`]: its name and its SQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// The column's name.
    pub name: &'static str,
    /// Its type, as the migrations declare it.
    pub sql_type: SqlType,
}

impl Column {
    /// A column of the given type.
    pub const fn new(name: &'static str, sql_type: SqlType) -> Column {
        Column { name, sql_type }
    }
}

/// What an [`Insert`] does with a row whose key exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Nothing: the statement fails.
    Fail,
    /// `ON CONFLICT (key…) DO NOTHING`.
    Ignore {
        /// The conflict target's columns.
        key: &'static [&'static str],
    },
    /// `ON CONFLICT (key…) DO UPDATE SET …`.
    Update {
        /// The conflict target's columns (each one of the insert's columns).
        key: &'static [&'static str],
        /// The `SET` list: fixed SQL naming only the table's own columns and `excluded`.
        set: &'static str,
    },
}

/// A statement that follows an insert in the same statement and reads the rows it wrote (a `WITH` query of the
/// insert, then this statement): `WITH {name} AS (INSERT … RETURNING {returning}) {statement}`. When the insert
/// updates on conflict, `statement` must update on the same key, taken unchanged from the rows the insert returned:
/// the merged rows' keys are checked for the insert only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowedBy {
    /// The name of the insert's `WITH` query.
    pub name: &'static str,
    /// The insert's `RETURNING` list.
    pub returning: &'static str,
    /// The statement that reads them, fixed SQL without placeholders.
    pub statement: &'static str,
    /// The tables the statement writes.
    pub writes: &'static [&'static str],
}

/// What an [`Insert`] writes, whatever its values: declared once per kind of row, next to the function that writes
/// it. Adding a column means adding it here, with its type, and its value in the same place of every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertShape {
    /// The table.
    pub table: &'static str,
    /// Its columns, in the order of each row's values.
    pub columns: &'static [Column],
    /// What a row whose key exists does.
    pub on_conflict: OnConflict,
    /// A statement that reads the rows written, when there is one (PostgreSQL only).
    pub followed_by: Option<FollowedBy>,
}

impl InsertShape {
    /// Rows of `columns` into `table`, failing on an existing key.
    pub const fn new(table: &'static str, columns: &'static [Column]) -> InsertShape {
        InsertShape {
            table,
            columns,
            on_conflict: OnConflict::Fail,
            followed_by: None,
        }
    }

    /// The same rows, doing `on_conflict` with a row whose key exists.
    pub const fn on_conflict(self, on_conflict: OnConflict) -> InsertShape {
        InsertShape { on_conflict, ..self }
    }

    /// The same rows, followed by `followed_by` in the same statement.
    pub const fn followed_by(self, followed_by: FollowedBy) -> InsertShape {
        InsertShape {
            followed_by: Some(followed_by),
            ..self
        }
    }

    /// `INSERT INTO table (columns…)`.
    pub(super) fn head(&self) -> String {
        let names: Vec<&str> = self.columns.iter().map(|column| column.name).collect();
        format!("INSERT INTO {} ({})", self.table, names.join(", "))
    }

    /// The conflict clause, with a space before it, or nothing.
    pub(super) fn conflict_clause(&self) -> String {
        match self.on_conflict {
            OnConflict::Fail => String::new(),
            OnConflict::Ignore { key } => format!(" ON CONFLICT ({}) DO NOTHING", key.join(", ")),
            OnConflict::Update { key, set } => format!(" ON CONFLICT ({}) DO UPDATE SET {set}", key.join(", ")),
        }
    }

    /// The positions (within a row) of the conflict key of an update on conflict.
    pub(super) fn update_key_positions(&self) -> Option<Vec<usize>> {
        let OnConflict::Update { key, .. } = self.on_conflict else {
            return None;
        };
        key.iter()
            .map(|name| self.columns.iter().position(|column| column.name == *name))
            .collect()
    }

    /// The insert of `rows` rows as one statement with a `VALUES` list, placeholders numbered after `offset`, in its
    /// following statement when it has one.
    pub(super) fn values_sql(&self, rows: usize, offset: usize) -> String {
        self.wrap(self.values_insert_sql(rows, offset))
    }

    /// The insert of `rows` rows with a `VALUES` list, placeholders numbered after `offset`, alone.
    pub(super) fn values_insert_sql(&self, rows: usize, offset: usize) -> String {
        let width = self.columns.len();
        let mut sql = self.head();
        sql.push_str(" VALUES ");
        for row in 0..rows {
            if row > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            for column in 0..width {
                if column > 0 {
                    sql.push_str(", ");
                }
                sql.push('$');
                sql.push_str(&(offset + row * width + column + 1).to_string());
            }
            sql.push(')');
        }
        sql.push_str(&self.conflict_clause());
        sql
    }

    /// Wraps the rendered insert in its following statement, when it has one.
    pub(super) fn wrap(&self, insert: String) -> String {
        match self.followed_by {
            None => insert,
            Some(followed) => format!(
                "WITH {} AS ({insert} RETURNING {}) {}",
                followed.name, followed.returning, followed.statement
            ),
        }
    }
}

/// Rows to insert, as data: their [`InsertShape`] and the values of each row, in the order of its columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    shape: &'static InsertShape,
    /// Every row's values, row after row.
    binds: Vec<Bind>,
}

impl Insert {
    /// No rows yet of `shape`: each [`Insert::bind`] adds the next value, row after row.
    pub fn new(shape: &'static InsertShape) -> Insert {
        Insert {
            shape,
            binds: Vec::with_capacity(shape.columns.len()),
        }
    }

    /// Adds the next value (of the next column, or of a new row after the last column).
    pub fn bind(mut self, value: impl Into<Bind>) -> Insert {
        self.binds.push(value.into());
        self
    }

    /// One row of `shape`.
    pub fn row(shape: &'static InsertShape, values: Vec<Bind>) -> Insert {
        debug_assert_eq!(
            values.len(),
            shape.columns.len(),
            "a row of {} has a value per column",
            shape.table
        );
        Insert { shape, binds: values }
    }

    /// A row of `shape` per item, its values from `row_values`.
    pub fn rows<Item>(shape: &'static InsertShape, items: &[Item], row_values: impl Fn(&Item) -> Vec<Bind>) -> Insert {
        let mut binds = Vec::with_capacity(items.len() * shape.columns.len());
        for item in items {
            let values = row_values(item);
            debug_assert_eq!(
                values.len(),
                shape.columns.len(),
                "a row of {} has a value per column",
                shape.table
            );
            binds.extend(values);
        }
        Insert { shape, binds }
    }

    /// Its shape.
    pub(super) fn shape(&self) -> &'static InsertShape {
        self.shape
    }

    /// Every row's values, row after row.
    pub(super) fn binds(&self) -> &[Bind] {
        &self.binds
    }

    /// The values, for a caller that sends the rows with others.
    pub(super) fn into_binds(self) -> Vec<Bind> {
        self.binds
    }

    /// The insert as one statement with a `VALUES` list of its rows, placeholders numbered after `offset`.
    pub(super) fn values_sql(&self, offset: usize) -> String {
        self.shape
            .values_sql(self.binds.len() / self.shape.columns.len().max(1), offset)
    }
}

/// Tables whose deleted rows delete rows of other tables (`ON DELETE CASCADE` in the migrations): a [`Statement`]
/// that deletes from one writes the others too. `tests/it/tidy.rs` keeps this list equal to the migrations'.
pub const DELETE_CASCADES: &[(&str, &[&str])] = &[
    // A search document's vector goes with it.
    ("search_documents", &["search_vectors"]),
    // A peer's pinned keys, its trust pin and its lag samples go with it.
    ("peers", &["peer_keys", "peer_trust_pins", "peer_lag_samples"]),
];

/// A write that is not rows of an [`InsertShape`] (an update, a delete, an insert of computed values, a statement
/// with its own `WITH` list), or a query: its SQL with `$1…` placeholders, the values they stand for, and what the
/// caller says it touches. The SQL must be built from fixed fragments only, never from input, with no `$` but its
/// placeholders.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The statement's own `WITH` queries (without the keyword), when it has some.
    with_queries: Option<String>,
    sql: String,
    binds: Vec<Bind>,
    /// The tables it writes (cascades included).
    writes: Vec<&'static str>,
    /// The tables it reads, besides those it writes.
    reads: Vec<&'static str>,
}

impl Statement {
    fn writing(writes: Vec<&'static str>, sql: String) -> Statement {
        Statement {
            with_queries: None,
            sql,
            binds: Vec::new(),
            writes,
            reads: Vec::new(),
        }
    }

    /// An update of `table`.
    pub fn update(table: &'static str, sql: impl Into<String>) -> Statement {
        Statement::writing(vec![table], sql.into())
    }

    /// An insert into `table` whose values are not plain rows (`INSERT … SELECT`, or values computed in SQL).
    pub fn insert(table: &'static str, sql: impl Into<String>) -> Statement {
        Statement::writing(vec![table], sql.into())
    }

    /// A delete from `table`, which writes the tables its rows cascade to as well (see [`DELETE_CASCADES`]).
    pub fn delete(table: &'static str, sql: impl Into<String>) -> Statement {
        let mut writes = vec![table];
        for (parent, children) in DELETE_CASCADES {
            if *parent == table {
                writes.extend_from_slice(children);
            }
        }
        Statement::writing(writes, sql.into())
    }

    /// A query that writes nothing.
    pub fn query(sql: impl Into<String>) -> Statement {
        Statement::writing(Vec::new(), sql.into())
    }

    /// The same statement, writing `table` as well (through one of its `WITH` queries).
    pub fn also_writes(mut self, table: &'static str) -> Statement {
        self.writes.push(table);
        self
    }

    /// The same statement, reading `table` too (in a subquery, a join, a conflict clause).
    pub fn reads(mut self, table: &'static str) -> Statement {
        self.reads.push(table);
        self
    }

    /// The same statement after its own `WITH` list `queries` (`name AS (…), …`, without the keyword). The tables
    /// those queries write must be named with [`Statement::also_writes`].
    pub fn with_queries(mut self, queries: impl Into<String>) -> Statement {
        self.with_queries = Some(queries.into());
        self
    }

    /// Binds the next placeholder.
    pub fn bind(mut self, value: impl Into<Bind>) -> Statement {
        self.binds.push(value.into());
        self
    }

    /// An insert into `table` of computed values from rows of values: `head`, then `VALUES` and one parenthesized
    /// group of placeholders per row, then `tail` (for SQL that derives a row from its values, which an
    /// [`InsertShape`] cannot say).
    pub fn insert_computed_rows<Row>(
        table: &'static str,
        head: &str,
        rows: &[Row],
        tail: &str,
        row_binds: impl Fn(&Row) -> Vec<Bind>,
    ) -> Statement {
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
        let mut statement = Statement::insert(table, sql);
        statement.binds = binds;
        statement
    }

    /// `head`, then one parenthesized list of placeholders for `values` (for `… IN (…)`), deleting from `table`.
    pub fn delete_in_list(table: &'static str, head: &str, values: Vec<Bind>) -> Statement {
        let placeholders: Vec<String> = (1..=values.len()).map(|number| format!("${number}")).collect();
        let mut statement = Statement::delete(table, format!("{head} ({})", placeholders.join(", ")));
        statement.binds = values;
        statement
    }

    /// The tables it writes.
    pub(super) fn written_tables(&self) -> &[&'static str] {
        &self.writes
    }

    /// The tables it reads besides those it writes.
    pub(super) fn read_tables(&self) -> &[&'static str] {
        &self.reads
    }

    /// Its own `WITH` queries, when it has some.
    pub(super) fn own_with_queries(&self) -> Option<&str> {
        self.with_queries.as_deref()
    }

    /// Its values.
    pub(super) fn binds(&self) -> &[Bind] {
        &self.binds
    }

    /// The SQL without its own `WITH` list, its placeholders numbered after `offset`.
    pub(super) fn main_sql(&self, offset: usize) -> String {
        shift_placeholders(&self.sql, offset)
    }

    /// The whole SQL, its placeholders numbered after `offset`.
    pub(super) fn full_sql(&self, offset: usize) -> String {
        match &self.with_queries {
            None => shift_placeholders(&self.sql, offset),
            Some(queries) => format!(
                "WITH {} {}",
                shift_placeholders(queries, offset),
                shift_placeholders(&self.sql, offset)
            ),
        }
    }

    /// Its values, for a caller that sends the statement with others.
    pub(super) fn into_binds(self) -> Vec<Bind> {
        self.binds
    }

    /// The whole SQL and the values, for a caller that sends the statement with others.
    pub(super) fn into_parts(self) -> (String, Vec<Bind>) {
        (self.full_sql(0), self.binds)
    }
}

/// A write held back by a transaction: rows of an insert, or a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum HeldWrite {
    /// Rows of an [`InsertShape`].
    Insert(Insert),
    /// Any other write.
    Statement(Statement),
}

impl From<Insert> for HeldWrite {
    fn from(insert: Insert) -> HeldWrite {
        HeldWrite::Insert(insert)
    }
}

impl From<Statement> for HeldWrite {
    fn from(statement: Statement) -> HeldWrite {
        HeldWrite::Statement(statement)
    }
}

impl HeldWrite {
    /// Its whole SQL, placeholders numbered after `offset`, with a `VALUES` list for an insert's rows.
    pub(super) fn sql(&self, offset: usize) -> String {
        match self {
            HeldWrite::Insert(insert) => insert.values_sql(offset),
            HeldWrite::Statement(statement) => statement.full_sql(offset),
        }
    }

    /// Its values.
    pub(super) fn into_binds(self) -> Vec<Bind> {
        match self {
            HeldWrite::Insert(insert) => insert.into_binds(),
            HeldWrite::Statement(statement) => statement.binds,
        }
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

    /// Holds a write back, its placeholders numbered after those already held.
    pub fn push(&mut self, write: HeldWrite) {
        let offset = self.binds.len();
        if !self.sql.is_empty() {
            self.sql.push_str(";\n");
        }
        self.sql.push_str(&write.sql(offset));
        self.binds.extend(write.into_binds());
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
pub async fn execute(conn: &mut Conn<'_>, write: impl Into<HeldWrite>) -> Result<(), StoreError> {
    let write = write.into();
    if let HeldWrite::Insert(insert) = &write {
        debug_assert!(
            insert.binds().len() % insert.shape().columns.len().max(1) == 0,
            "every row of {} has a value per column",
            insert.shape().table
        );
    }
    match conn {
        Conn::Postgres(connection) => {
            let sql = write.sql(0);
            bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), write.into_binds())
                .execute(&mut **connection)
                .await?;
            Ok(())
        }
        Conn::PostgresWrite(held) => {
            held.defer(write);
            Ok(())
        }
        Conn::Sqlite(connection) => {
            let mut deferred = DeferredStatements::default();
            deferred.push(write);
            deferred.send(connection, None).await?;
            Ok(())
        }
        Conn::SqliteWrite(held) => {
            held.defer(write);
            Ok(())
        }
    }
}

/// `$n` → `$(n + offset)` everywhere in `sql`, to send a [`Statement`] after others' values. The SQL is built from
/// fixed fragments with no `$` but placeholders (see [`Statement`]); nothing else is read from it.
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

    const TAGS: InsertShape = InsertShape::new(
        "tags",
        &[
            Column::new("revision_id", SqlType::Text),
            Column::new("tag", SqlType::Text),
        ],
    )
    .on_conflict(OnConflict::Ignore {
        key: &["revision_id", "tag"],
    });

    #[test]
    fn placeholders_shift_past_the_writes_held_before() {
        assert_eq!(
            shift_placeholders("UPDATE t SET a = $10 WHERE b = $9", 0),
            "UPDATE t SET a = $10 WHERE b = $9"
        );
        let mut deferred = DeferredStatements::default();
        deferred.push(Statement::update("a", "UPDATE a SET n = $1").bind(1_i64).into());
        deferred.push(Insert::rows(&TAGS, &["x", "y"], |tag| vec![Bind::from("r"), Bind::from(*tag)]).into());
        assert_eq!(
            deferred.sql,
            "UPDATE a SET n = $1;\nINSERT INTO tags (revision_id, tag) VALUES ($2, $3), ($4, $5) ON CONFLICT \
             (revision_id, tag) DO NOTHING"
        );
        assert_eq!(deferred.binds.len(), 5);
    }

    #[test]
    fn a_delete_writes_the_tables_its_rows_cascade_to() {
        let delete = Statement::delete("search_documents", "DELETE FROM search_documents WHERE object_id = $1");
        assert_eq!(delete.written_tables(), ["search_documents", "search_vectors"]);
        let with = Statement::update("c", "UPDATE c SET n = $1")
            .with_queries("b AS (UPDATE b SET n = $1 RETURNING 1)")
            .also_writes("b");
        assert_eq!(
            with.full_sql(2),
            "WITH b AS (UPDATE b SET n = $3 RETURNING 1) UPDATE c SET n = $3"
        );
        assert_eq!(with.written_tables(), ["c", "b"]);
    }
}
