//! Multi-row inserts held back by a PostgreSQL transaction, and how the rows of a later insert of the same shape
//! join those of an earlier one, so that a batch of similar changes writes each table with one statement.
//!
//! Why: a batch of replicated revisions writes the same seven tables for every revision. Sent as one statement
//! per revision, PostgreSQL spent about half of its time per revision starting, planning and ending statements;
//! the same rows as one multi-row statement per table cost half as much (measured with pgbench, docs/benchmarks.md,
//! "PostgreSQL batched rows via unnest").
//!
//! A held insert is a candidate when its SQL is `… INSERT INTO table (columns) VALUES (…), (…) …` with exactly one
//! `VALUES` list of nothing but placeholders numbered `$1…$n` in order, no placeholder elsewhere, and any
//! `ON CONFLICT` clause naming its columns. Its rows may join an earlier insert's when both have the same text
//! around the list (so the same table, columns and conflict clause) and the same number of values per row. When
//! the conflict clause updates, the rows' conflict keys must all differ: PostgreSQL refuses to update one row
//! twice in one statement, where two statements would each have done it. Which earlier inserts a later one may
//! join is decided by `postgres_held.rs`: only a member of the statement being combined, whose rows share that
//! statement's snapshot and its end-of-statement foreign key checks anyway.

use std::collections::HashSet;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::statement::{Bind, Statement};

/// The most values one merged insert binds (PostgreSQL's own limit for a whole statement is 65,535).
pub(super) const MAX_MERGED_BINDS: usize = 16_384;

/// A held multi-row insert, read from its SQL, whose rows later inserts of the same shape may join.
#[derive(Debug)]
pub(super) struct RowInsert {
    /// The SQL before the first row (shared with every insert of the same text, see [`RowsText`]).
    head: Arc<str>,
    /// The SQL after the last row.
    tail: Arc<str>,
    /// Values per row.
    width: usize,
    /// The kind of value of each column, the same in every row.
    kinds: Vec<ColumnKind>,
    /// The positions (within a row) of the conflict key of an `ON CONFLICT (…) DO UPDATE`, when there is one.
    update_key: Option<Vec<usize>>,
    /// Every row's values, row after row.
    binds: Vec<Bind>,
    /// The conflict keys of the rows, as text, when `update_key` is set.
    keys: HashSet<String>,
    /// The statement's SQL as it was held, while no other rows joined it (sent as it is).
    original_sql: Option<String>,
}

impl RowInsert {
    /// `statement` as a candidate, when its values fit `text`, what its SQL says (see the module's
    /// documentation); otherwise the statement back.
    pub(super) fn read(statement: Statement, text: &RowsText) -> Result<RowInsert, Statement> {
        if text.rows * text.width != statement.binds().len() {
            return Err(statement);
        }
        let Some(kinds) = column_kinds(statement.binds(), text.width) else {
            return Err(statement);
        };
        let mut insert = RowInsert {
            head: Arc::clone(&text.head),
            tail: Arc::clone(&text.tail),
            width: text.width,
            kinds,
            update_key: text.update_key.clone(),
            binds: Vec::new(),
            keys: HashSet::new(),
            original_sql: None,
        };
        if !insert.take_keys(statement.binds()) {
            return Err(statement);
        }
        let (sql, binds) = statement.into_parts();
        insert.original_sql = Some(sql);
        insert.binds = binds;
        Ok(insert)
    }

    /// Whether `later`'s rows may join these: the same SQL around the rows, the same width, conflict keys all
    /// different, and the values within [`MAX_MERGED_BINDS`].
    pub(super) fn accepts(&self, later: &RowInsert) -> bool {
        self.head == later.head
            && self.tail == later.tail
            && self.width == later.width
            && self.kinds == later.kinds
            && self.binds.len() + later.binds.len() <= MAX_MERGED_BINDS
            && later.keys.iter().all(|key| !self.keys.contains(key))
    }

    /// Appends `later`'s rows (after [`RowInsert::accepts`] said they may).
    pub(super) fn append(&mut self, later: RowInsert) {
        self.keys.extend(later.keys);
        self.binds.extend(later.binds);
        self.original_sql = None;
    }

    /// How many values the insert binds.
    pub(super) fn bind_count(&self) -> usize {
        self.binds.len()
    }

    /// The insert as one statement, its placeholders numbered from `$1`. Rows that joined it are sent as one array
    /// per column (`INSERT … SELECT * FROM unnest($1::text[], …)`), so the text is the same however many rows there
    /// are: PostgreSQL prepares and plans it once per connection, where a list of rows would be new text, parsed and
    /// planned afresh, for every batch (which cost as much as the rows saved).
    pub(super) fn into_statement(self) -> RowsStatement {
        if let Some(sql) = self.original_sql {
            return RowsStatement::AsHeld(Statement::from_parts(sql, self.binds));
        }
        let mut sql = self.head.to_string();
        sql.truncate(sql.len() - "VALUES".len());
        sql.push_str("SELECT * FROM unnest(");
        for (index, kind) in self.kinds.iter().enumerate() {
            if index > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!("${}::{}", index + 1, kind.array_type()));
        }
        sql.push(')');
        sql.push_str(&self.tail);
        let rows = self.binds.len() / self.width;
        let mut columns: Vec<ColumnValues> = self.kinds.iter().map(|kind| kind.empty(rows)).collect();
        for (index, bind) in self.binds.into_iter().enumerate() {
            columns[index % self.width].push(bind);
        }
        RowsStatement::Columns { sql, columns }
    }

    /// Records the conflict keys of `binds`' rows; `false` when two of them share one.
    fn take_keys(&mut self, binds: &[Bind]) -> bool {
        let Some(positions) = &self.update_key else {
            return true;
        };
        for row in binds.chunks(self.width) {
            // The same value bound as optional or not is the same key.
            let key: Vec<Bind> = positions
                .iter()
                .map(|position| match &row[*position] {
                    Bind::OptionalText(Some(text)) => Bind::Text(text.clone()),
                    Bind::OptionalTime(Some(time)) => Bind::Time(*time),
                    other => other.clone(),
                })
                .collect();
            if !self.keys.insert(format!("{key:?}")) {
                return false;
            }
        }
        true
    }
}

/// A [`RowInsert`] as a statement: as it was held, or its rows as one array per column.
#[derive(Debug)]
pub(super) enum RowsStatement {
    /// No rows joined it.
    AsHeld(Statement),
    /// Rows joined it: its SQL with `$1…` standing for the columns.
    Columns { sql: String, columns: Vec<ColumnValues> },
}

/// What the SQL of a candidate says, whatever its values: the text before and after its rows, their width and
/// number, and the conflict key's positions. The same for every statement of that text, so it is read once per
/// text (`postgres_held.rs` keeps the readings) and its head and tail are shared by the inserts of that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RowsText {
    head: Arc<str>,
    tail: Arc<str>,
    width: usize,
    rows: usize,
    update_key: Option<Vec<usize>>,
}

/// What `sql` says as a candidate, when it is one (see the module's documentation).
pub(super) fn rows_text(sql: &str) -> Option<RowsText> {
    let values_at = single_values_keyword(sql)?;
    let head = &sql[..values_at + "VALUES".len()];
    let (width, rows, rows_end) = placeholder_rows(&sql[values_at + "VALUES".len()..])?;
    let tail = &sql[values_at + "VALUES".len() + rows_end..];
    if width == 0 || head.contains('$') || tail.contains('$') {
        return None;
    }
    let columns = inserted_columns(&sql[..values_at])?;
    let update_key = update_key(tail, &columns)?;
    Some(RowsText {
        head: Arc::from(head),
        tail: Arc::from(tail),
        width,
        rows,
        update_key,
    })
}

/// The kind of value a column of a multi-row insert holds, and so the array it is sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnKind {
    Text,
    Integer,
    SmallInteger,
    Real,
    Boolean,
    Time,
    Json,
}

impl ColumnKind {
    fn of(bind: &Bind) -> ColumnKind {
        match bind {
            Bind::Text(_) | Bind::OptionalText(_) => ColumnKind::Text,
            Bind::Integer(_) => ColumnKind::Integer,
            Bind::SmallInteger(_) => ColumnKind::SmallInteger,
            Bind::Real(_) => ColumnKind::Real,
            Bind::Boolean(_) => ColumnKind::Boolean,
            Bind::Time(_) | Bind::OptionalTime(_) => ColumnKind::Time,
            Bind::Json(_) => ColumnKind::Json,
        }
    }

    /// The PostgreSQL array type of the column's values, as sqlx binds them.
    fn array_type(self) -> &'static str {
        match self {
            ColumnKind::Text => "text[]",
            ColumnKind::Integer => "int8[]",
            ColumnKind::SmallInteger => "int4[]",
            ColumnKind::Real => "float8[]",
            ColumnKind::Boolean => "bool[]",
            ColumnKind::Time => "timestamptz[]",
            ColumnKind::Json => "jsonb[]",
        }
    }

    fn empty(self, rows: usize) -> ColumnValues {
        match self {
            ColumnKind::Text => ColumnValues::Text(Vec::with_capacity(rows)),
            ColumnKind::Integer => ColumnValues::Integer(Vec::with_capacity(rows)),
            ColumnKind::SmallInteger => ColumnValues::SmallInteger(Vec::with_capacity(rows)),
            ColumnKind::Real => ColumnValues::Real(Vec::with_capacity(rows)),
            ColumnKind::Boolean => ColumnValues::Boolean(Vec::with_capacity(rows)),
            ColumnKind::Time => ColumnValues::Time(Vec::with_capacity(rows)),
            ColumnKind::Json => ColumnValues::Json(Vec::with_capacity(rows)),
        }
    }
}

/// The kinds of `binds`' columns, rows of `width` values, when every row agrees on them.
fn column_kinds(binds: &[Bind], width: usize) -> Option<Vec<ColumnKind>> {
    let kinds: Vec<ColumnKind> = binds.iter().take(width).map(ColumnKind::of).collect();
    binds
        .chunks(width)
        .all(|row| row.iter().zip(&kinds).all(|(bind, kind)| ColumnKind::of(bind) == *kind))
        .then_some(kinds)
}

/// A column of a multi-row insert, sent to PostgreSQL as one array.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ColumnValues {
    Text(Vec<Option<String>>),
    Integer(Vec<i64>),
    SmallInteger(Vec<i32>),
    Real(Vec<f64>),
    Boolean(Vec<bool>),
    Time(Vec<Option<DateTime<Utc>>>),
    Json(Vec<serde_json::Value>),
}

impl ColumnValues {
    /// Appends a row's value (of the column's kind, as [`column_kinds`] checked).
    fn push(&mut self, bind: Bind) {
        match (self, bind) {
            (ColumnValues::Text(values), Bind::Text(value)) => values.push(Some(value)),
            (ColumnValues::Text(values), Bind::OptionalText(value)) => values.push(value),
            (ColumnValues::Integer(values), Bind::Integer(value)) => values.push(value),
            (ColumnValues::SmallInteger(values), Bind::SmallInteger(value)) => values.push(value),
            (ColumnValues::Real(values), Bind::Real(value)) => values.push(value),
            (ColumnValues::Boolean(values), Bind::Boolean(value)) => values.push(value),
            (ColumnValues::Time(values), Bind::Time(value)) => values.push(Some(value)),
            (ColumnValues::Time(values), Bind::OptionalTime(value)) => values.push(value),
            (ColumnValues::Json(values), Bind::Json(value)) => values.push(value),
            // `column_kinds` admitted only rows whose values match their column's kind.
            (column, bind) => unreachable!("a {bind:?} in a column of {column:?}"),
        }
    }
}

/// The byte offset of the only `VALUES` keyword of `sql` (as a whole word, any case), if it has exactly one.
fn single_values_keyword(sql: &str) -> Option<usize> {
    // Every held statement passes here on the way of a write, so the scan compares in place, copying nothing.
    let bytes = sql.as_bytes();
    let is_word = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let mut found = None;
    for (at, window) in bytes.windows("VALUES".len()).enumerate() {
        let end = at + "VALUES".len();
        if window.eq_ignore_ascii_case(b"VALUES")
            && (at == 0 || !is_word(bytes[at - 1]))
            && (end == bytes.len() || !is_word(bytes[end]))
        {
            if found.is_some() {
                return None;
            }
            found = Some(at);
        }
    }
    found
}

/// Reads `(…), (…)` rows of placeholders numbered `$1…` in order from the start of `text` (after `VALUES`):
/// the values per row, the number of rows, and where the rows end. `None` unless every row has the same width.
fn placeholder_rows(text: &str) -> Option<(usize, usize, usize)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let skip_spaces = |at: &mut usize| {
        while *at < bytes.len() && bytes[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    let mut expected = 1_usize;
    let mut width = None;
    let mut rows = 0_usize;
    loop {
        skip_spaces(&mut at);
        if bytes.get(at) != Some(&b'(') {
            return None;
        }
        at += 1;
        let mut row_width = 0;
        loop {
            skip_spaces(&mut at);
            if bytes.get(at) != Some(&b'$') {
                return None;
            }
            at += 1;
            let digits_start = at;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            if text[digits_start..at].parse::<usize>().ok()? != expected {
                return None;
            }
            expected += 1;
            row_width += 1;
            skip_spaces(&mut at);
            match bytes.get(at) {
                Some(b',') => at += 1,
                Some(b')') => {
                    at += 1;
                    break;
                }
                _ => return None,
            }
        }
        if *width.get_or_insert(row_width) != row_width {
            return None;
        }
        rows += 1;
        let row_end = at;
        skip_spaces(&mut at);
        if bytes.get(at) == Some(&b',') {
            at += 1;
            continue;
        }
        return Some((row_width, rows, row_end));
    }
}

/// The column list of the `INSERT INTO table (…)` that `before_values` ends with, lower case.
fn inserted_columns(before_values: &str) -> Option<Vec<String>> {
    let trimmed = before_values.trim_end();
    let inner = trimmed.strip_suffix(')')?;
    let open = inner.rfind('(')?;
    let before_list = inner[..open].trim_end();
    let mut words = before_list.rsplit(|character: char| character.is_ascii_whitespace());
    let _table = words.next().filter(|table| !table.is_empty())?;
    if !words.next()?.eq_ignore_ascii_case("into") {
        return None;
    }
    Some(
        inner[open + 1..]
            .split(',')
            .map(|column| column.trim().to_ascii_lowercase())
            .collect(),
    )
}

/// The row positions of the conflict key of `tail`'s `ON CONFLICT (…) DO UPDATE`: `Some(None)` without one (no
/// conflict clause, or `DO NOTHING`), `None` when the clause is not one this module can read. A later upsert of the
/// same statement (rows derived from those the list wrote, as a document's vector from its document) must name the
/// same key.
fn update_key(tail: &str, columns: &[String]) -> Option<Option<Vec<usize>>> {
    // Words separated by any run of white space read as separated by one space, so no clause goes unseen.
    let upper = tail
        .split_ascii_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    let mut key: Option<Vec<String>> = None;
    let mut clauses = upper.match_indices("ON CONFLICT").peekable();
    if clauses.peek().is_none() {
        return Some(None);
    }
    for (at, _) in clauses {
        let rest = upper[at + "ON CONFLICT".len()..].trim_start();
        let (named, after) = if let Some(list) = rest.strip_prefix('(') {
            let close = list.find(')')?;
            let named: Vec<String> = list[..close]
                .split(',')
                .map(|column| column.trim().to_ascii_lowercase())
                .collect();
            (Some(named), list[close + 1..].trim_start())
        } else {
            (None, rest)
        };
        if after.starts_with("DO NOTHING") {
            continue;
        }
        if !after.starts_with("DO UPDATE") {
            return None;
        }
        let named = named?;
        match &key {
            Some(first) if *first != named => return None,
            Some(_) => {}
            None => key = Some(named),
        }
    }
    let Some(key) = key else {
        return Some(None);
    };
    let positions: Option<Vec<usize>> = key
        .iter()
        .map(|column| columns.iter().position(|each| each == column))
        .collect();
    positions.map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SQL and values of an insert as it is sent.
    fn sent(insert: RowInsert) -> (String, Vec<ColumnValues>) {
        match insert.into_statement() {
            RowsStatement::AsHeld(statement) => {
                let (sql, _) = statement.into_parts();
                (sql, Vec::new())
            }
            RowsStatement::Columns { sql, columns } => (sql, columns),
        }
    }

    fn read(sql: &str, binds: &[&str]) -> Option<RowInsert> {
        let statement = binds
            .iter()
            .fold(Statement::new(sql), |statement, bind| statement.bind(*bind));
        read_statement(statement)
    }

    /// `statement` as a candidate, its text read as `postgres_held.rs` reads it.
    fn read_statement(statement: Statement) -> Option<RowInsert> {
        let text = rows_text(statement.sql())?;
        RowInsert::read(statement, &text).ok()
    }

    #[test]
    fn rows_of_the_same_shape_join_and_are_numbered_again() {
        let mut first = read(
            "INSERT INTO tags (revision_id, tag) VALUES ($1, $2), ($3, $4)",
            &["r1", "a", "r1", "b"],
        )
        .expect("a multi-row insert");
        let later = read("INSERT INTO tags (revision_id, tag) VALUES ($1, $2)", &["r2", "a"]).expect("an insert");
        assert!(first.accepts(&later));
        first.append(later);
        let (sql, columns) = sent(first);
        assert_eq!(
            sql,
            "INSERT INTO tags (revision_id, tag) SELECT * FROM unnest($1::text[], $2::text[])"
        );
        assert_eq!(
            columns,
            [
                ColumnValues::Text(vec![
                    Some("r1".to_owned()),
                    Some("r1".to_owned()),
                    Some("r2".to_owned())
                ]),
                ColumnValues::Text(vec![Some("a".to_owned()), Some("b".to_owned()), Some("a".to_owned())]),
            ]
        );
    }

    #[test]
    fn every_kind_of_value_travels_in_an_array_of_its_type() {
        let at = DateTime::parse_from_rfc3339("2026-12-05T10:00:00Z")
            .map(|time| time.with_timezone(&Utc))
            .unwrap_or_default();
        let row = |id: &str, note: Option<&str>| {
            Statement::new("INSERT INTO t (a, b, c, d, e, f, g, h) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")
                .bind(id)
                .bind(note)
                .bind(1_i64)
                .bind(2_i32)
                .bind(0.5_f64)
                .bind(true)
                .bind(Some(at))
                .bind(serde_json::json!({ "id": id }))
        };
        let mut first = read_statement(row("x", Some("n"))).expect("a candidate");
        let later = read_statement(row("y", None)).expect("a candidate");
        assert!(first.accepts(&later));
        first.append(later);
        let (sql, columns) = sent(first);
        assert_eq!(
            sql,
            "INSERT INTO t (a, b, c, d, e, f, g, h) SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], \
             $4::int4[], $5::float8[], $6::bool[], $7::timestamptz[], $8::jsonb[])"
        );
        assert_eq!(columns[1], ColumnValues::Text(vec![Some("n".to_owned()), None]));
        assert_eq!(columns[2], ColumnValues::Integer(vec![1, 1]));
        assert_eq!(columns[3], ColumnValues::SmallInteger(vec![2, 2]));
        assert_eq!(columns[4], ColumnValues::Real(vec![0.5, 0.5]));
        assert_eq!(columns[5], ColumnValues::Boolean(vec![true, true]));
        assert_eq!(columns[6], ColumnValues::Time(vec![Some(at), Some(at)]));
        assert_eq!(
            columns[7],
            ColumnValues::Json(vec![serde_json::json!({ "id": "x" }), serde_json::json!({ "id": "y" })])
        );
        // A column whose rows hold different kinds of value cannot be one array.
        let mixed = Statement::new("INSERT INTO t (a) VALUES ($1), ($2)")
            .bind("x")
            .bind(1_i64);
        assert!(read_statement(mixed).is_none());
    }

    #[test]
    fn an_insert_held_alone_keeps_its_text() {
        let sql = "INSERT INTO tags (revision_id, tag) VALUES ($1,$2)";
        let alone = read(sql, &["r1", "a"]).expect("an insert");
        assert_eq!(sent(alone).0, sql);
    }

    #[test]
    fn other_tables_columns_widths_and_clauses_do_not_join() {
        let first = read("INSERT INTO tags (revision_id, tag) VALUES ($1, $2)", &["r1", "a"]).expect("an insert");
        for (sql, binds) in [
            ("INSERT INTO labels (revision_id, tag) VALUES ($1, $2)", vec!["r2", "a"]),
            ("INSERT INTO tags (tag, revision_id) VALUES ($1, $2)", vec!["a", "r2"]),
            (
                "INSERT INTO tags (revision_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                vec!["r2", "a"],
            ),
        ] {
            let later = read(sql, &binds).expect("an insert");
            assert!(!first.accepts(&later), "{sql}");
        }
    }

    #[test]
    fn upserts_join_only_with_keys_that_differ() {
        let upsert = "INSERT INTO trust (target_id, status) VALUES ($1, $2) ON CONFLICT (target_id) DO UPDATE SET \
                      status = excluded.status";
        let first = read(upsert, &["t1", "unverified"]).expect("an upsert");
        assert!(first.accepts(&read(upsert, &["t2", "supported"]).expect("an upsert")));
        assert!(!first.accepts(&read(upsert, &["t1", "supported"]).expect("an upsert")));
        let optional = Statement::new(upsert).bind(Some("t1")).bind("supported");
        assert!(
            !first.accepts(&read_statement(optional).expect("an upsert")),
            "the same key, bound as optional"
        );
        // Two rows of one statement on the same key are not a candidate at all.
        let twice = "INSERT INTO trust (target_id, status) VALUES ($1, $2), ($3, $4) ON CONFLICT (target_id) DO \
                     UPDATE SET status = excluded.status";
        assert!(read(twice, &["t1", "a", "t1", "b"]).is_none());
        // Duplicates are harmless when the conflict does nothing.
        let ignore = "INSERT INTO seen (id) VALUES ($1) ON CONFLICT (id) DO NOTHING";
        let seen = read(ignore, &["x"]).expect("an insert");
        assert!(seen.accepts(&read(ignore, &["x"]).expect("an insert")));
    }

    #[test]
    fn a_document_and_its_vector_join_on_their_shared_key() {
        let sql = "WITH written AS (INSERT INTO docs (object_id, title) VALUES ($1, $2) ON CONFLICT (object_id) DO \
                   UPDATE SET title = excluded.title RETURNING object_id, title) INSERT INTO vectors (object_id, \
                   document) SELECT object_id, to_tsvector('english', title) FROM written ON CONFLICT (object_id) \
                   DO UPDATE SET document = excluded.document";
        let mut first = read(sql, &["d1", "one"]).expect("a document upsert");
        let later = read(sql, &["d2", "two"]).expect("a document upsert");
        assert!(first.accepts(&later));
        first.append(later);
        assert!(sent(first).0.starts_with(
            "WITH written AS (INSERT INTO docs (object_id, title) SELECT * FROM unnest($1::text[], $2::text[]) ON \
             CONFLICT (object_id)"
        ));
        // A later upsert on another key cannot be told apart from the rows it derives from: not a candidate.
        let other_key = sql.replace(
            "FROM written ON CONFLICT (object_id)",
            "FROM written ON CONFLICT (title)",
        );
        assert!(read(&other_key, &["d1", "one"]).is_none());
    }

    #[test]
    fn statements_that_are_not_plain_rows_of_placeholders_are_not_candidates() {
        for sql in [
            "INSERT INTO t (a, b) VALUES ($1, now())",
            "INSERT INTO t (a) VALUES ($2)",
            "INSERT INTO t (a) SELECT $1",
            "INSERT INTO t (a) VALUES ($1) RETURNING (SELECT b FROM u WHERE c = $1)",
            "UPDATE t SET a = $1",
            "INSERT INTO t (a) VALUES ($1) ON CONFLICT ON CONSTRAINT t_a DO UPDATE SET a = excluded.a",
            "INSERT INTO t VALUES ($1)",
            "INSERT INTO t (a) VALUES ($1) ON CONFLICT (a) DO UPDATE SET a = (SELECT a FROM u WHERE b IN (VALUES ('x')))",
        ] {
            assert!(read(sql, &["x"]).is_none(), "{sql}");
        }
        // `VALUES` is found in any case, and only as a word of its own.
        assert!(read("insert into t (values_seen) values ($1), ($2)", &["x", "y"]).is_some());
    }
}
