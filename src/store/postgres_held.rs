//! PostgreSQL's held writes: what a transaction holds back until its next statement or its commit, and how a run
//! of them becomes as few statements as it may (data-modifying `WITH` queries, and the rows of similar inserts
//! joined, see `merged_rows.rs`).

use std::collections::HashSet;
use std::sync::Arc;

use sqlx::types::Json;

use super::merged_rows::{ColumnValues, RowInsert, RowsStatement, RowsText, rows_text};
use super::statement::{Bind, Statement, bind_all, shift_placeholders};
use crate::bounded_memo::BoundedMemo;

/// Statements held back by a PostgreSQL transaction until its next statement of any kind or its commit.
///
/// PostgreSQL runs every data-modifying `WITH` query of a statement on the statement's one snapshot, so the members
/// of a combined statement do not see each other's rows. A held write therefore joins the statement being combined
/// only when that cannot matter: it names (anywhere in its text) no table that an earlier member writes, so it
/// neither reads, nor writes again, nor conflicts with rows a member before it wrote. Foreign keys are checked at
/// the end of the statement, when every member's rows are there, as they would be after the separate statements.
/// Only `INSERT` and `UPDATE` statements, and a statement that opens with its own `WITH` list (which ends the
/// combination: its queries follow ours in one list), are combined; anything else (a `DELETE`, whose cascades reach
/// tables its text does not name; a `WITH RECURSIVE`) is sent on its own.
#[derive(Debug)]
pub struct PostgresHeldStatements {
    statements: Vec<Statement>,
    texts: Arc<StatementTexts>,
}

impl PostgresHeldStatements {
    /// An empty buffer, which reads the statements' texts through `texts` (the store's, shared by its
    /// transactions).
    pub fn new(texts: Arc<StatementTexts>) -> PostgresHeldStatements {
        PostgresHeldStatements {
            statements: Vec::new(),
            texts,
        }
    }

    /// Whether nothing is held back.
    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// Holds a statement back.
    pub fn push(&mut self, statement: Statement) {
        self.statements.push(statement);
    }

    /// Sends every held statement, combined as far as they allow, and empties the buffer.
    pub(super) async fn send(&mut self, connection: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
        for combined in combine_for_postgres(std::mem::take(&mut self.statements), &self.texts) {
            bind_postgres(sqlx::query(sqlx::AssertSqlSafe(combined.sql)), combined.binds)
                .execute(&mut *connection)
                .await?;
        }
        Ok(())
    }
}

/// How a held PostgreSQL statement may be combined (see [`PostgresHeldStatements`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Combines {
    /// A plain `INSERT` or `UPDATE`: a member of a `WITH` list, or the last statement.
    AsMember,
    /// A statement with its own `WITH` list: only as the last statement.
    AsLast,
    /// Sent on its own.
    Never,
}

/// What the text of a held statement says for combining it: read once per distinct text, since the same few
/// texts come back with every change (an applied revision holds about ten statements, and a batch holds tens of
/// revisions: reading each text again was about a twentieth of a PostgreSQL instance's own time while it
/// applied replicated revisions).
#[derive(Debug)]
struct TextReading {
    combines: Combines,
    /// The tables the statement writes, lower case.
    writes: Vec<String>,
    /// Every identifier and keyword of the text, lower case (to tell whether it names a table).
    words: HashSet<String>,
    /// What its rows are, when it is a multi-row insert whose rows later ones may join (see `merged_rows.rs`).
    rows: Option<RowsText>,
}

impl TextReading {
    fn of(sql: &str) -> TextReading {
        let words = sql_words(sql);
        let combines = combines(&words);
        TextReading {
            combines,
            writes: written_tables(&words).collect(),
            words: words.iter().map(|word| word.to_ascii_lowercase()).collect(),
            rows: if combines == Combines::Never {
                None
            } else {
                rows_text(sql)
            },
        }
    }

    /// Whether the statement names `table` (lower case) anywhere in its text.
    fn names(&self, table: &str) -> bool {
        self.words.contains(table)
    }
}

/// The most statement texts a store keeps read; past it the readings start again (texts with lists of varying
/// length are many, the texts of a write's usual statements few).
const MAX_READ_TEXTS: usize = 1_024;

/// The readings of the statement texts a store's transactions have held, shared by them all.
#[derive(Debug)]
pub struct StatementTexts {
    readings: BoundedMemo<Arc<TextReading>>,
}

impl Default for StatementTexts {
    fn default() -> StatementTexts {
        StatementTexts {
            readings: BoundedMemo::new(MAX_READ_TEXTS),
        }
    }
}

impl StatementTexts {
    /// The reading of `sql`, read now when it was not read before.
    fn reading(&self, sql: &str) -> Arc<TextReading> {
        self.readings.get_or_insert(sql, || Arc::new(TextReading::of(sql)))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.readings.len()
    }
}

/// The identifiers and keywords of `sql`.
fn sql_words(sql: &str) -> Vec<&str> {
    sql.split(|character: char| !(character.is_ascii_alphanumeric() || character == '_'))
        .filter(|word| !word.is_empty())
        .collect()
}

/// The tables a statement writes: the word after each `INTO` and `UPDATE` (but the `SET` of `DO UPDATE SET`),
/// lower case.
fn written_tables(words: &[&str]) -> impl Iterator<Item = String> {
    words
        .windows(2)
        .filter(|pair| {
            (pair[0].eq_ignore_ascii_case("into") || pair[0].eq_ignore_ascii_case("update"))
                && !pair[1].eq_ignore_ascii_case("set")
        })
        .map(|pair| pair[1].to_ascii_lowercase())
}

fn combines(words: &[&str]) -> Combines {
    if words.iter().any(|word| word.eq_ignore_ascii_case("delete")) {
        return Combines::Never;
    }
    match words.first() {
        Some(first) if first.eq_ignore_ascii_case("insert") || first.eq_ignore_ascii_case("update") => {
            Combines::AsMember
        }
        Some(first)
            if first.eq_ignore_ascii_case("with")
                && words.get(1).is_some_and(|word| !word.eq_ignore_ascii_case("recursive")) =>
        {
            Combines::AsLast
        }
        _ => Combines::Never,
    }
}

/// The most values one PostgreSQL statement may bind (the protocol counts them in 16 bits).
const POSTGRES_MAX_BINDS: usize = 65_535;

/// A member of a statement being combined: a write as it was held, or a multi-row insert that later rows may join.
enum Member {
    Plain(Statement),
    Rows(RowInsert),
}

impl Member {
    fn into_statement(self) -> PostgresStatement {
        match self {
            Member::Plain(statement) => PostgresStatement::from(statement),
            Member::Rows(rows) => match rows.into_statement() {
                RowsStatement::AsHeld(statement) => PostgresStatement::from(statement),
                RowsStatement::Columns { sql, columns } => PostgresStatement {
                    sql,
                    binds: columns.into_iter().map(PostgresValue::Column).collect(),
                },
            },
        }
    }
}

/// `statements` as few statements as [`PostgresHeldStatements`] allows, in their order, their texts read through
/// `texts`.
fn combine_for_postgres(statements: Vec<Statement>, texts: &StatementTexts) -> Vec<PostgresStatement> {
    // The common case on the way of every write: one held statement, nothing to combine or to read.
    if statements.len() < 2 {
        return statements.into_iter().map(PostgresStatement::from).collect();
    }
    let mut combined = Vec::new();
    // Each member with the reading of its text (which says the tables it writes).
    let mut group: Vec<(Member, Arc<TextReading>)> = Vec::new();
    let mut group_binds = 0_usize;
    let mut group_closed = false;
    for statement in statements {
        let reading = texts.reading(statement.sql());
        let kind = reading.combines;
        // The last member that writes a table this statement names, if any.
        let last_naming_member = group
            .iter()
            .rposition(|(_, member)| member.writes.iter().any(|table| reading.names(table)));
        let read = match &reading.rows {
            Some(rows) => RowInsert::read(statement, rows),
            None => Err(statement),
        };
        // Rows of the same shape as a member's join that member when no member after it writes a table their text
        // names (see `merged_rows.rs`); the members before it write none of them either, or it would not have
        // joined.
        let held = match read {
            Ok(later) => {
                let position = group
                    .iter()
                    .position(|(member, _)| matches!(member, Member::Rows(earlier) if earlier.accepts(&later)));
                if let Some(position) = position
                    && group_binds + later.bind_count() <= POSTGRES_MAX_BINDS
                    && last_naming_member.is_none_or(|last| last <= position)
                    && let (Member::Rows(earlier), _) = &mut group[position]
                {
                    group_binds += later.bind_count();
                    earlier.append(later);
                    continue;
                }
                Member::Rows(later)
            }
            Err(statement) => Member::Plain(statement),
        };
        let bind_count = match &held {
            Member::Plain(statement) => statement.binds().len(),
            Member::Rows(rows) => rows.bind_count(),
        };
        let joins = !group.is_empty()
            && !group_closed
            && kind != Combines::Never
            && group_binds + bind_count <= POSTGRES_MAX_BINDS
            && last_naming_member.is_none();
        if !joins && !group.is_empty() {
            combined.push(combine_group(std::mem::take(&mut group)));
            group_binds = 0;
        }
        group_closed = kind != Combines::AsMember;
        group_binds += bind_count;
        group.push((held, reading));
    }
    if !group.is_empty() {
        combined.push(combine_group(group));
    }
    combined
}

/// One statement of `group`: every member but the last as a `WITH` query, the last as the statement.
fn combine_group(group: Vec<(Member, Arc<TextReading>)>) -> PostgresStatement {
    let mut group: Vec<PostgresStatement> = group.into_iter().map(|(member, _)| member.into_statement()).collect();
    let Some(last) = group.pop() else {
        return PostgresStatement::from(Statement::new(""));
    };
    if group.is_empty() {
        return last;
    }
    let mut sql = String::from("WITH ");
    let mut binds = Vec::new();
    for (index, member) in group.into_iter().enumerate() {
        if index > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!("interai_held_{} AS (", index + 1));
        sql.push_str(&shift_placeholders(member.sql.trim(), binds.len()));
        sql.push(')');
        binds.extend(member.binds);
    }
    let last_sql = shift_placeholders(last.sql.trim(), binds.len());
    binds.extend(last.binds);
    let opening_with = last_sql
        .get(..5)
        .is_some_and(|opening| opening.eq_ignore_ascii_case("with "));
    match last_sql.get(5..) {
        Some(rest) if opening_with => {
            sql.push_str(", ");
            sql.push_str(rest.trim_start());
        }
        _ => {
            sql.push(' ');
            sql.push_str(&last_sql);
        }
    }
    PostgresStatement { sql, binds }
}

/// A statement sent to PostgreSQL by [`PostgresHeldStatements`]: held writes combined, whose values may include
/// whole columns of a multi-row insert.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PostgresStatement {
    pub(super) sql: String,
    pub(super) binds: Vec<PostgresValue>,
}

impl From<Statement> for PostgresStatement {
    fn from(statement: Statement) -> PostgresStatement {
        let (sql, binds) = statement.into_parts();
        PostgresStatement {
            sql,
            binds: binds.into_iter().map(PostgresValue::One).collect(),
        }
    }
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
    use super::*;

    fn combine(statements: Vec<Statement>) -> Vec<PostgresStatement> {
        combine_for_postgres(statements, &StatementTexts::default())
    }

    fn sqls(statements: &[PostgresStatement]) -> Vec<&str> {
        statements.iter().map(|statement| statement.sql.as_str()).collect()
    }

    #[test]
    fn independent_postgres_writes_become_one_statement_with_their_values_renumbered() {
        let combined = combine(vec![
            Statement::new("INSERT INTO items (id, title) VALUES ($1, $2)")
                .bind("a")
                .bind("t"),
            Statement::new("INSERT INTO revisions (id, item_id) VALUES ($1, $2)")
                .bind("r")
                .bind("a"),
            Statement::new("UPDATE queue SET state = $1 WHERE id = $2")
                .bind("done")
                .bind(7_i64),
        ]);
        assert_eq!(
            sqls(&combined),
            [
                "WITH interai_held_1 AS (INSERT INTO items (id, title) VALUES ($1, $2)), \
                 interai_held_2 AS (INSERT INTO revisions (id, item_id) VALUES ($3, $4)) \
                 UPDATE queue SET state = $5 WHERE id = $6"
            ]
        );
        assert_eq!(
            combined[0].binds,
            [
                Bind::from("a"),
                Bind::from("t"),
                Bind::from("r"),
                Bind::from("a"),
                Bind::from("done"),
                Bind::from(7_i64)
            ]
            .map(PostgresValue::One)
        );
    }

    #[test]
    fn a_postgres_write_naming_a_table_written_before_it_starts_a_new_statement() {
        // The second insert's conflict on `items` could not see the first one's row in one statement, and the
        // update of `tags` reads what the insert before it wrote.
        let combined = combine(vec![
            Statement::new("INSERT INTO items (id) VALUES ($1)").bind("a"),
            Statement::new("INSERT INTO items (id) VALUES ($1) ON CONFLICT DO NOTHING").bind("a"),
            Statement::new("INSERT INTO tags (item_id) VALUES ($1)").bind("a"),
            Statement::new("UPDATE counts SET n = (SELECT COUNT(*) FROM tags) WHERE id = $1").bind(1_i64),
        ]);
        assert_eq!(
            sqls(&combined),
            [
                "INSERT INTO items (id) VALUES ($1)",
                "WITH interai_held_1 AS (INSERT INTO items (id) VALUES ($1) ON CONFLICT DO NOTHING) \
                 INSERT INTO tags (item_id) VALUES ($2)",
                "UPDATE counts SET n = (SELECT COUNT(*) FROM tags) WHERE id = $1",
            ]
        );
    }

    #[test]
    fn a_postgres_statement_with_its_own_with_list_ends_a_combination_and_a_delete_goes_alone() {
        let combined = combine(vec![
            Statement::new("INSERT INTO items (id) VALUES ($1)").bind("a"),
            Statement::new("WITH written AS (INSERT INTO docs (id) VALUES ($1) RETURNING id) INSERT INTO vectors (id) SELECT id FROM written")
                .bind("a"),
            Statement::new("INSERT INTO notes (id) VALUES ($1)").bind("n"),
            Statement::new("DELETE FROM notes WHERE id = $1").bind("m"),
            Statement::new("INSERT INTO marks (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = excluded.id").bind("k"),
            Statement::new("UPDATE settings SET value = $1").bind("v"),
        ]);
        assert_eq!(
            sqls(&combined),
            [
                "WITH interai_held_1 AS (INSERT INTO items (id) VALUES ($1)), written AS (INSERT INTO docs (id) \
                 VALUES ($2) RETURNING id) INSERT INTO vectors (id) SELECT id FROM written",
                "INSERT INTO notes (id) VALUES ($1)",
                "DELETE FROM notes WHERE id = $1",
                "WITH interai_held_1 AS (INSERT INTO marks (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = \
                 excluded.id) UPDATE settings SET value = $2",
            ]
        );
    }

    #[test]
    fn two_changes_of_the_same_shape_become_one_statement_with_a_table_s_rows_together() {
        let change = |item: &str| {
            vec![
                Statement::new("INSERT INTO items (id, title) VALUES ($1, $2)")
                    .bind(item)
                    .bind("t"),
                Statement::new("INSERT INTO tags (item_id, tag) VALUES ($1, $2), ($3, $4)")
                    .bind(item)
                    .bind("a")
                    .bind(item)
                    .bind("b"),
                Statement::new(
                    "INSERT INTO trust (target_id, status) VALUES ($1, $2) ON CONFLICT (target_id) DO UPDATE SET \
                     status = excluded.status",
                )
                .bind(item)
                .bind("unverified"),
            ]
        };
        let mut held = change("i1");
        held.extend(change("i2"));
        let combined = combine(held);
        assert_eq!(
            sqls(&combined),
            [
                "WITH interai_held_1 AS (INSERT INTO items (id, title) SELECT * FROM unnest($1::text[], $2::text[])), \
                 interai_held_2 AS (INSERT INTO tags (item_id, tag) SELECT * FROM unnest($3::text[], $4::text[])) \
                 INSERT INTO trust (target_id, status) SELECT * FROM unnest($5::text[], $6::text[]) ON CONFLICT \
                 (target_id) DO UPDATE SET status = excluded.status"
            ]
        );
        let column = |values: &[&str]| {
            PostgresValue::Column(ColumnValues::Text(
                values.iter().map(|value| Some((*value).to_owned())).collect(),
            ))
        };
        assert_eq!(combined[0].binds[0], column(&["i1", "i2"]));
        assert_eq!(combined[0].binds[3], column(&["a", "b", "a", "b"]));
        // The same item's trust twice cannot be one upsert: it starts the next statement, as it was held.
        let mut twice = change("i1");
        twice.extend(change("i1"));
        let combined = combine(twice);
        assert_eq!(combined.len(), 2);
        assert_eq!(
            combined[1].sql,
            "INSERT INTO trust (target_id, status) VALUES ($1, $2) ON CONFLICT (target_id) DO UPDATE SET status = \
             excluded.status"
        );
    }

    #[test]
    fn an_insert_takes_rows_up_to_its_cap_and_the_rest_start_the_next_statement() {
        let rows: Vec<Statement> = (0..20_000_i64)
            .map(|number| Statement::new("INSERT INTO seen (n) VALUES ($1)").bind(number))
            .collect();
        let combined = combine(rows);
        let lengths: Vec<usize> = combined
            .iter()
            .map(|statement| match &statement.binds[..] {
                [PostgresValue::Column(ColumnValues::Integer(values))] => values.len(),
                other => panic!("one column of integers, not {other:?}"),
            })
            .collect();
        assert_eq!(lengths, [crate::store::merged_rows::MAX_MERGED_BINDS, 20_000 - 16_384]);
    }

    #[test]
    fn rows_do_not_join_an_insert_across_a_write_to_a_table_they_name() {
        // The second insert reads `counts` in its conflict clause; the update between the two changed it.
        let upsert = "INSERT INTO items (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET n = (SELECT n FROM counts)";
        let combined = combine(vec![
            Statement::new(upsert).bind("a"),
            Statement::new("UPDATE counts SET n = $1").bind(2_i64),
            Statement::new(upsert).bind("b"),
        ]);
        assert_eq!(combined.len(), 2);
        assert_eq!(combined[1].sql, upsert);
    }

    #[test]
    fn a_text_is_read_once_and_combines_the_same_way_when_read_again() {
        let texts = StatementTexts::default();
        let change = |item: &str| {
            vec![
                Statement::new("INSERT INTO items (id, title) VALUES ($1, $2)")
                    .bind(item)
                    .bind("t"),
                Statement::new("INSERT INTO items (id, title) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                    .bind(item)
                    .bind("t"),
                Statement::new("UPDATE counts SET n = n + 1 WHERE id = $1").bind(item),
            ]
        };
        let mut held = change("i1");
        held.extend(change("i2"));
        let first = combine_for_postgres(held.clone(), &texts);
        assert_eq!(texts.len(), 3, "one reading per distinct text");
        assert_eq!(combine_for_postgres(held.clone(), &texts), first);
        assert_eq!(texts.len(), 3);
        assert_eq!(combine(held), first, "the same statements as from readings made afresh");
        // The readings start again past their bound, and still read every text right.
        for number in 0..MAX_READ_TEXTS + 1 {
            texts.reading(&format!("UPDATE counts SET n = {number}"));
        }
        assert!(texts.len() <= MAX_READ_TEXTS);
        let mut held = change("i3");
        held.extend(change("i4"));
        assert_eq!(combine_for_postgres(held.clone(), &texts), combine(held));
    }
}
