//! PostgreSQL's held writes: what a transaction holds back until its next statement or its commit, and how a run
//! of them becomes as few statements as it may (data-modifying `WITH` queries, and the rows of similar inserts
//! joined, see `merged_rows.rs`). What each write touches is read from the write itself ([`HeldWrite`]), never
//! from its SQL.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::types::Json;

use super::merged_rows::{ColumnValues, MergedInsert, RowsStatement};
use super::statement::{Bind, HeldWrite, Statement, bind_all, shift_placeholders};

/// Writes held back by a PostgreSQL transaction until its next statement of any kind or its commit.
///
/// PostgreSQL runs every data-modifying `WITH` query of a statement on the statement's one snapshot, so the members
/// of a combined statement do not see each other's rows. A held write therefore joins the statement being combined
/// only when that cannot matter: it names (writes, or reads, as it says) no table that an earlier member writes, so
/// it neither reads, nor writes again, nor conflicts with rows a member before it wrote. Foreign keys are checked at
/// the end of the statement, when every member's rows are there, as they would be after the separate statements. A
/// delete writes the tables its rows cascade to (see `statement::DELETE_CASCADES`). This holds only while the
/// schema has no trigger, rule, view or function that writes a table a write does not say it writes, which
/// `tests/it/tidy.rs` checks in the migrations. A statement with its own `WITH` list ends the combination: its
/// queries follow ours in one list.
#[derive(Debug)]
pub struct PostgresHeldStatements {
    writes: Vec<HeldWrite>,
    /// The store's count of the statements its transactions sent for held writes (see [`super::Store`]).
    sent: Arc<AtomicU64>,
}

impl PostgresHeldStatements {
    /// An empty buffer, counting the statements it sends in `sent`.
    pub fn new(sent: Arc<AtomicU64>) -> PostgresHeldStatements {
        PostgresHeldStatements {
            writes: Vec::new(),
            sent,
        }
    }

    /// Whether nothing is held back.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Holds a write back.
    pub fn push(&mut self, write: HeldWrite) {
        self.writes.push(write);
    }

    /// Sends every held write, combined as far as they allow, and empties the buffer.
    pub(super) async fn send(&mut self, connection: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
        for combined in combine_for_postgres(std::mem::take(&mut self.writes)) {
            self.sent.fetch_add(1, Ordering::Relaxed);
            bind_postgres(sqlx::query(sqlx::AssertSqlSafe(combined.sql)), combined.binds)
                .execute(&mut *connection)
                .await?;
        }
        Ok(())
    }
}

/// The most values one PostgreSQL statement may bind (the protocol counts them in 16 bits).
const POSTGRES_MAX_BINDS: usize = 65_535;

/// A member of a statement being combined: a statement as it was held, or an insert that later rows may join.
enum Member {
    Plain(Statement),
    Rows(MergedInsert),
}

impl From<HeldWrite> for Member {
    fn from(write: HeldWrite) -> Member {
        match write {
            HeldWrite::Insert(insert) => Member::Rows(MergedInsert::new(insert)),
            HeldWrite::Statement(statement) => Member::Plain(statement),
        }
    }
}

impl Member {
    /// Whether the member writes `table`.
    fn writes(&self, table: &str) -> bool {
        match self {
            Member::Plain(statement) => statement.written_tables().contains(&table),
            Member::Rows(rows) => rows.written_tables().any(|written| written == table),
        }
    }

    /// Whether the member writes or reads `table`.
    fn names(&self, table: &str) -> bool {
        self.writes(table) || matches!(self, Member::Plain(statement) if statement.read_tables().contains(&table))
    }

    /// Whether a member writes a table this one names.
    fn names_what_is_written_by(&self, earlier: &Member) -> bool {
        match earlier {
            Member::Plain(statement) => statement.written_tables().iter().any(|table| self.names(table)),
            Member::Rows(rows) => rows.written_tables().any(|table| self.names(table)),
        }
    }

    /// Whether the member opens with its own `WITH` list, so that it can only end a combined statement.
    fn has_own_with(&self) -> bool {
        match self {
            Member::Plain(statement) => statement.own_with_queries().is_some(),
            Member::Rows(rows) => rows.shape().followed_by.is_some(),
        }
    }

    fn bind_count(&self) -> usize {
        match self {
            Member::Plain(statement) => statement.binds().len(),
            Member::Rows(rows) => rows.bind_count(),
        }
    }

    /// The member's SQL, its placeholders numbered after `offset`: its own `WITH` queries (when it has some) and
    /// its main statement, with its values.
    fn render(self, offset: usize) -> (Option<String>, String, Vec<PostgresValue>) {
        match self {
            Member::Plain(statement) => {
                let with_queries = statement
                    .own_with_queries()
                    .map(|queries| shift_placeholders(queries, offset));
                let main = statement.main_sql(offset);
                let binds = statement.into_binds().into_iter().map(PostgresValue::One).collect();
                (with_queries, main, binds)
            }
            Member::Rows(rows) => {
                let followed_by = rows.shape().followed_by;
                let (insert, binds) = match rows.into_statement(offset) {
                    RowsStatement::Values { sql, binds } => (sql, binds.into_iter().map(PostgresValue::One).collect()),
                    RowsStatement::Columns { sql, columns } => {
                        (sql, columns.into_iter().map(PostgresValue::Column).collect())
                    }
                };
                match followed_by {
                    None => (None, insert, binds),
                    Some(followed) => (
                        Some(format!(
                            "{} AS ({insert} RETURNING {})",
                            followed.name, followed.returning
                        )),
                        followed.statement.to_owned(),
                        binds,
                    ),
                }
            }
        }
    }
}

/// `writes` as few statements as [`PostgresHeldStatements`] allows, in their order.
fn combine_for_postgres(writes: Vec<HeldWrite>) -> Vec<PostgresStatement> {
    let mut combined = Vec::new();
    let mut group: Vec<Member> = Vec::new();
    let mut group_binds = 0_usize;
    let mut group_closed = false;
    for write in writes {
        let held = Member::from(write);
        // The last member that writes a table this write names, if any.
        let last_naming_member = group.iter().rposition(|earlier| held.names_what_is_written_by(earlier));
        // Rows of the same shape as a member's join that member when no member after it writes a table they name
        // (see `merged_rows.rs`); the members before it write none of them either, or it would not have joined.
        let held = match held {
            Member::Rows(later) => {
                let position = group
                    .iter()
                    .position(|member| matches!(member, Member::Rows(earlier) if earlier.accepts(&later)));
                if let Some(position) = position
                    && group_binds + later.bind_count() <= POSTGRES_MAX_BINDS
                    && last_naming_member.is_none_or(|last| last <= position)
                    && let Member::Rows(earlier) = &mut group[position]
                {
                    group_binds += later.bind_count();
                    earlier.append(later);
                    continue;
                }
                Member::Rows(later)
            }
            plain => plain,
        };
        let bind_count = held.bind_count();
        let joins = !group.is_empty()
            && !group_closed
            && group_binds + bind_count <= POSTGRES_MAX_BINDS
            && last_naming_member.is_none();
        if !joins && !group.is_empty() {
            combined.push(combine_group(std::mem::take(&mut group)));
            group_binds = 0;
        }
        group_closed = held.has_own_with();
        group_binds += bind_count;
        group.push(held);
    }
    if !group.is_empty() {
        combined.push(combine_group(group));
    }
    combined
}

/// One statement of `group`: every member but the last as a `WITH` query, the last as the statement (its own `WITH`
/// queries after ours).
fn combine_group(group: Vec<Member>) -> PostgresStatement {
    let members = group.len();
    let mut with_list: Vec<String> = Vec::new();
    let mut binds = Vec::new();
    let mut last = String::new();
    for (index, member) in group.into_iter().enumerate() {
        let (own_with, main, values) = member.render(binds.len());
        binds.extend(values);
        // Only the last member may have its own `WITH` list (it closes the group): its queries follow ours.
        with_list.extend(own_with);
        if index + 1 < members {
            with_list.push(format!("interai_held_{} AS ({main})", index + 1));
        } else {
            last = main;
        }
    }
    let sql = if with_list.is_empty() {
        last
    } else {
        format!("WITH {} {last}", with_list.join(", "))
    };
    PostgresStatement { sql, binds }
}

/// A statement sent to PostgreSQL by [`PostgresHeldStatements`]: held writes combined, whose values may include
/// whole columns of a multi-row insert.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PostgresStatement {
    pub(super) sql: String,
    pub(super) binds: Vec<PostgresValue>,
}

/// One bound value of a [`PostgresStatement`].
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PostgresValue {
    /// One value.
    One(Bind),
    /// A column of rows, bound as one array (see `merged_rows.rs`).
    Column(ColumnValues),
}

/// Binds `binds`, in order, to a PostgreSQL query.
fn bind_postgres(
    mut query: sqlx::query::Query<'static, sqlx::Postgres, sqlx::postgres::PgArguments>,
    binds: Vec<PostgresValue>,
) -> sqlx::query::Query<'static, sqlx::Postgres, sqlx::postgres::PgArguments> {
    for bind in binds {
        query = match bind {
            PostgresValue::One(value) => bind_all(query, vec![value]),
            PostgresValue::Column(ColumnValues::Text(values)) => query.bind(values),
            PostgresValue::Column(ColumnValues::Integer(values)) => query.bind(values),
            PostgresValue::Column(ColumnValues::SmallInteger(values)) => query.bind(values),
            PostgresValue::Column(ColumnValues::Real(values)) => query.bind(values),
            PostgresValue::Column(ColumnValues::Boolean(values)) => query.bind(values),
            PostgresValue::Column(ColumnValues::Time(values)) => query.bind(values),
            PostgresValue::Column(ColumnValues::Json(values)) => {
                query.bind(values.into_iter().map(Json).collect::<Vec<_>>())
            }
        };
    }
    query
}

#[cfg(test)]
mod tests {
    use super::super::statement::{Column, FollowedBy, Insert, InsertShape, OnConflict, SqlType};
    use super::*;

    const ITEMS: InsertShape = InsertShape::new(
        "items",
        &[Column::new("id", SqlType::Text), Column::new("title", SqlType::Text)],
    );
    const ITEMS_IF_NEW: InsertShape = ITEMS.on_conflict(OnConflict::Ignore { key: &["id"] });
    const TAGS: InsertShape = InsertShape::new(
        "tags",
        &[Column::new("item_id", SqlType::Text), Column::new("n", SqlType::BigInt)],
    );
    const DOCS: InsertShape = InsertShape::new("docs", &[Column::new("id", SqlType::Text)]).followed_by(FollowedBy {
        name: "written",
        returning: "id",
        statement: "INSERT INTO vectors (id) SELECT id FROM written",
        writes: &["vectors"],
    });

    fn item(id: &str) -> HeldWrite {
        Insert::row(&ITEMS, vec![Bind::from(id), Bind::from("t")]).into()
    }

    fn sqls(statements: &[PostgresStatement]) -> Vec<&str> {
        statements.iter().map(|statement| statement.sql.as_str()).collect()
    }

    #[test]
    fn independent_writes_become_one_statement_with_their_values_renumbered() {
        let combined = combine_for_postgres(vec![
            item("a"),
            Insert::row(&TAGS, vec![Bind::from("a"), Bind::from(1_i64)]).into(),
            Statement::update("queue", "UPDATE queue SET state = $1 WHERE id = $2")
                .bind("done")
                .bind(7_i64)
                .into(),
        ]);
        assert_eq!(
            sqls(&combined),
            [
                "WITH interai_held_1 AS (INSERT INTO items (id, title) VALUES ($1, $2)), \
                 interai_held_2 AS (INSERT INTO tags (item_id, n) VALUES ($3, $4)) \
                 UPDATE queue SET state = $5 WHERE id = $6"
            ]
        );
        assert_eq!(combined[0].binds.len(), 6);
    }

    #[test]
    fn a_write_naming_a_table_written_before_it_starts_a_new_statement() {
        // The second insert's conflict on `items` could not see the first one's row in one statement, and the
        // update of `counts` reads what the insert before it wrote.
        let combined = combine_for_postgres(vec![
            item("a"),
            Insert::row(&ITEMS_IF_NEW, vec![Bind::from("a"), Bind::from("t")]).into(),
            Insert::row(&TAGS, vec![Bind::from("a"), Bind::from(1_i64)]).into(),
            Statement::update(
                "counts",
                "UPDATE counts SET n = (SELECT COUNT(*) FROM tags) WHERE id = $1",
            )
            .reads("tags")
            .bind(1_i64)
            .into(),
        ]);
        assert_eq!(
            sqls(&combined),
            [
                "INSERT INTO items (id, title) VALUES ($1, $2)",
                "WITH interai_held_1 AS (INSERT INTO items (id, title) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING) \
                 INSERT INTO tags (item_id, n) VALUES ($3, $4)",
                "UPDATE counts SET n = (SELECT COUNT(*) FROM tags) WHERE id = $1",
            ]
        );
    }

    #[test]
    fn a_write_with_its_own_with_list_ends_a_combination_and_a_delete_writes_its_cascades() {
        let combined = combine_for_postgres(vec![
            item("a"),
            Insert::row(&DOCS, vec![Bind::from("d")]).into(),
            item("b"),
            Statement::delete("search_documents", "DELETE FROM search_documents WHERE object_id = $1")
                .bind("m")
                .into(),
            Insert::row(&TAGS, vec![Bind::from("b"), Bind::from(2_i64)]).into(),
            Statement::insert("search_vectors", "INSERT INTO search_vectors (object_id) SELECT $1")
                .bind("v")
                .into(),
        ]);
        assert_eq!(
            sqls(&combined),
            [
                // The second item's row joins the first's, which shares the statement's snapshot anyway.
                "WITH interai_held_1 AS (INSERT INTO items (id, title) SELECT * FROM unnest($1::text[], \
                 $2::text[])), written AS (INSERT INTO docs (id) VALUES ($3) RETURNING id) INSERT INTO vectors (id) \
                 SELECT id FROM written",
                "WITH interai_held_1 AS (DELETE FROM search_documents WHERE object_id = $1) INSERT INTO tags \
                 (item_id, n) VALUES ($2, $3)",
                "INSERT INTO search_vectors (object_id) SELECT $1",
            ]
        );
    }

    #[test]
    fn two_changes_of_the_same_shape_become_one_statement_with_a_table_s_rows_together() {
        let change = |id: &str| {
            vec![
                item(id),
                Insert::row(&TAGS, vec![Bind::from(id), Bind::from(1_i64)]).into(),
            ]
        };
        let mut held = change("i1");
        held.extend(change("i2"));
        let combined = combine_for_postgres(held);
        assert_eq!(
            sqls(&combined),
            [
                "WITH interai_held_1 AS (INSERT INTO items (id, title) SELECT * FROM unnest($1::text[], $2::text[])) \
                 INSERT INTO tags (item_id, n) SELECT * FROM unnest($3::text[], $4::bigint[])"
            ]
        );
        assert_eq!(
            combined[0].binds[3],
            PostgresValue::Column(ColumnValues::Integer(vec![1, 1]))
        );
    }

    #[test]
    fn an_insert_takes_rows_up_to_its_cap_and_the_rest_start_the_next_statement() {
        const SEEN: InsertShape = InsertShape::new("seen", &[Column::new("n", SqlType::BigInt)]);
        let rows: Vec<HeldWrite> = (0..20_000_i64)
            .map(|number| Insert::row(&SEEN, vec![Bind::from(number)]).into())
            .collect();
        let lengths: Vec<usize> = combine_for_postgres(rows)
            .iter()
            .map(|statement| match &statement.binds[..] {
                [PostgresValue::Column(ColumnValues::Integer(values))] => values.len(),
                other => panic!("one column of integers, not {other:?}"),
            })
            .collect();
        assert_eq!(lengths, [crate::store::merged_rows::MAX_MERGED_BINDS, 20_000 - 16_384]);
    }

    #[test]
    fn rows_do_not_join_an_insert_across_a_write_to_their_table() {
        let combined = combine_for_postgres(vec![
            item("a"),
            Statement::update("items", "UPDATE items SET title = $1")
                .bind("u")
                .into(),
            item("b"),
        ]);
        assert_eq!(
            sqls(&combined),
            [
                "INSERT INTO items (id, title) VALUES ($1, $2)",
                "UPDATE items SET title = $1",
                "INSERT INTO items (id, title) VALUES ($1, $2)",
            ]
        );
    }
}

/// Two rows of each column type the migrations use, merged into one statement and sent to a real PostgreSQL
/// (`INTERAI_TEST_DATABASE_URL`; without it there is no PostgreSQL to ask, and these tests have nothing to check),
/// read back equal. The table is a temporary one inside a transaction that is rolled back.
#[cfg(test)]
mod on_postgres {
    use chrono::{DateTime, Utc};
    use sqlx::Connection;

    use super::super::statement::{Column, Insert, InsertShape, SqlType};
    use super::*;

    /// Merges two rows of one `sql_type` column (`first`, `second`), sends them, and returns what was read back
    /// as text (`None` without a PostgreSQL to ask).
    async fn two_rows_of(sql_type: SqlType, first: Bind, second: Bind) -> Option<(u64, Vec<Option<String>>)> {
        let url = std::env::var("INTERAI_TEST_DATABASE_URL").ok()?;
        let mut connection = sqlx::PgConnection::connect(&url)
            .await
            .expect("a PostgreSQL connection");
        let mut transaction = connection.begin().await.expect("begin");
        let create = format!(
            "CREATE TEMPORARY TABLE merged_column_types (ordinal BIGINT NOT NULL, value {}) ON COMMIT DROP",
            sql_type.postgres_name()
        );
        sqlx::query(sqlx::AssertSqlSafe(create))
            .execute(&mut *transaction)
            .await
            .expect("a temporary table");
        // Leaked once per test: a shape is declared once per kind of row, as a constant.
        let shape: &'static InsertShape = Box::leak(Box::new(InsertShape::new(
            "merged_column_types",
            Box::leak(Box::new([
                Column::new("ordinal", SqlType::BigInt),
                Column::new("value", sql_type),
            ])),
        )));
        let sent = Arc::new(AtomicU64::new(0));
        let mut held = PostgresHeldStatements::new(Arc::clone(&sent));
        held.push(Insert::row(shape, vec![Bind::from(1_i64), first]).into());
        held.push(Insert::row(shape, vec![Bind::from(2_i64), second]).into());
        held.send(&mut transaction).await.expect("the merged rows are accepted");
        let read: Vec<Option<String>> =
            sqlx::query_scalar("SELECT value::text FROM merged_column_types ORDER BY ordinal")
                .fetch_all(&mut *transaction)
                .await
                .expect("read back");
        transaction.rollback().await.expect("rollback");
        Some((sent.load(Ordering::Relaxed), read))
    }

    async fn check(sql_type: SqlType, first: Bind, second: Bind, expected: [Option<&str>; 2]) {
        let Some((sent, read)) = two_rows_of(sql_type, first, second).await else {
            return;
        };
        assert_eq!(sent, 1, "{sql_type:?}: the two rows travel as one statement");
        let expected: Vec<Option<String>> = expected.iter().map(|value| value.map(str::to_owned)).collect();
        assert_eq!(read, expected, "{sql_type:?}");
    }

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .map(|time| time.with_timezone(&Utc))
            .expect("a time")
    }

    #[tokio::test]
    async fn two_text_rows_merge() {
        check(
            SqlType::Text,
            Bind::from("one"),
            Bind::OptionalText(None),
            [Some("one"), None],
        )
        .await;
    }

    #[tokio::test]
    async fn two_bigint_rows_merge() {
        check(
            SqlType::BigInt,
            Bind::from(1_i64 << 40),
            Bind::from(-3_i64),
            [Some("1099511627776"), Some("-3")],
        )
        .await;
    }

    #[tokio::test]
    async fn two_integer_rows_merge() {
        check(
            SqlType::Integer,
            Bind::from(7_i32),
            Bind::from(-8_i32),
            [Some("7"), Some("-8")],
        )
        .await;
        // An integer column written from 64-bit values, as the trust counters are.
        check(
            SqlType::Integer,
            Bind::from(7_i64),
            Bind::from(9_i64),
            [Some("7"), Some("9")],
        )
        .await;
    }

    #[tokio::test]
    async fn two_double_precision_rows_merge() {
        check(
            SqlType::DoublePrecision,
            Bind::from(0.25_f64),
            Bind::from(-1.5_f64),
            [Some("0.25"), Some("-1.5")],
        )
        .await;
    }

    #[tokio::test]
    async fn two_boolean_rows_merge() {
        check(
            SqlType::Boolean,
            Bind::from(true),
            Bind::from(false),
            [Some("true"), Some("false")],
        )
        .await;
    }

    #[tokio::test]
    async fn two_timestamptz_rows_merge() {
        let Some((sent, read)) = two_rows_of(
            SqlType::TimestampTz,
            Bind::from(at("2026-12-06T10:00:00Z")),
            Bind::OptionalTime(None),
        )
        .await
        else {
            return;
        };
        assert_eq!(sent, 1);
        assert_eq!(read.len(), 2);
        let first = read[0].as_deref().expect("a time");
        let parsed = DateTime::parse_from_str(&format!("{first}00"), "%Y-%m-%d %H:%M:%S%z").expect("PostgreSQL's time");
        assert_eq!(parsed.with_timezone(&Utc), at("2026-12-06T10:00:00Z"));
        assert_eq!(read[1], None);
    }

    #[tokio::test]
    async fn two_jsonb_rows_merge() {
        check(
            SqlType::Jsonb,
            Bind::from(serde_json::json!({ "a": [1, 2] })),
            Bind::from(serde_json::json!("text")),
            [Some(r#"{"a": [1, 2]}"#), Some(r#""text""#)],
        )
        .await;
    }
}
