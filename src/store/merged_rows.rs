//! Inserts held back by a PostgreSQL transaction, and how the rows of a later insert of the same shape join those
//! of an earlier one, so that a batch of similar changes writes each table with one statement.
//!
//! Why: a batch of replicated revisions writes the same seven tables for every revision. Sent as one statement
//! per revision, PostgreSQL spent about half of its time per revision starting, planning and ending statements;
//! the same rows as one multi-row statement per table cost half as much (measured with pgbench, docs/benchmarks.md,
//! "PostgreSQL batched rows via unnest").
//!
//! An [`Insert`]'s rows may join an earlier insert's when both have the same [`InsertShape`] (table, typed columns,
//! conflict clause, following statement) and every column's values are of one kind. When the conflict clause
//! updates, the rows' conflict keys must all differ: PostgreSQL refuses to update one row twice in one statement,
//! where two statements would each have done it. Which earlier inserts a later one may join is decided by
//! `postgres_held.rs`: only a member of the statement being combined, whose rows share that statement's snapshot and
//! its end-of-statement foreign key checks anyway.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use super::statement::{Bind, Insert, InsertShape};

/// The most values one merged insert binds (PostgreSQL's own limit for a whole statement is 65,535).
pub(super) const MAX_MERGED_BINDS: usize = 16_384;

/// A held insert whose rows later inserts of the same shape may join.
#[derive(Debug)]
pub(super) struct MergedInsert {
    shape: &'static InsertShape,
    /// The kind of value of each column, when every row agrees (otherwise the rows cannot be columns of arrays, and
    /// nothing joins them).
    kinds: Option<Vec<ColumnKind>>,
    /// Every row's values, row after row.
    binds: Vec<Bind>,
    /// The conflict keys of the rows, as text, when the insert updates on conflict.
    keys: HashSet<String>,
    /// Whether later rows may join these (the kinds agree, and no two rows share a key to update).
    joinable: bool,
}

impl MergedInsert {
    /// `insert`, ready for later rows to join.
    pub(super) fn new(insert: Insert) -> MergedInsert {
        let shape = insert.shape();
        let kinds = column_kinds(insert.binds(), shape.columns.len());
        let mut merged = MergedInsert {
            shape,
            joinable: kinds.is_some(),
            kinds,
            binds: Vec::new(),
            keys: HashSet::new(),
        };
        if merged.joinable {
            merged.joinable = merged.take_keys(insert.binds());
        }
        merged.binds = insert.into_binds();
        merged
    }

    /// The tables the insert writes: its own, and those of the statement that follows it.
    pub(super) fn written_tables(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.shape.table).chain(
            self.shape
                .followed_by
                .iter()
                .flat_map(|followed| followed.writes.iter().copied()),
        )
    }

    /// Its shape.
    pub(super) fn shape(&self) -> &'static InsertShape {
        self.shape
    }

    /// Whether `later`'s rows may join these: the same shape, the same kinds of values, conflict keys all
    /// different, and the values within [`MAX_MERGED_BINDS`].
    pub(super) fn accepts(&self, later: &MergedInsert) -> bool {
        self.joinable
            && later.joinable
            && self.shape == later.shape
            && self.kinds == later.kinds
            && self.binds.len() + later.binds.len() <= MAX_MERGED_BINDS
            && later.keys.iter().all(|key| !self.keys.contains(key))
    }

    /// Appends `later`'s rows (after [`MergedInsert::accepts`] said they may).
    pub(super) fn append(&mut self, later: MergedInsert) {
        self.keys.extend(later.keys);
        self.binds.extend(later.binds);
    }

    /// How many values the insert binds.
    pub(super) fn bind_count(&self) -> usize {
        self.binds.len()
    }

    /// The insert as one statement, its placeholders numbered from `$1`. One row is sent as a `VALUES` list; several
    /// as one array per column, cast to the column's SQL type (`INSERT … SELECT * FROM unnest($1::text[], …)`), so
    /// the text is the same however many rows there are: PostgreSQL prepares and plans it once per connection,
    /// where a list of rows would be new text, parsed and planned afresh, for every batch (which cost as much as the
    /// rows saved).
    /// Placeholders are numbered after `offset`; a following statement (see [`InsertShape::followed_by`]) is the
    /// caller's to add.
    pub(super) fn into_statement(self, offset: usize) -> RowsStatement {
        let width = self.shape.columns.len().max(1);
        let rows = self.binds.len() / width;
        let Some(kinds) = self.kinds.filter(|_| rows > 1) else {
            let sql = self.shape.values_insert_sql(rows, offset);
            return RowsStatement::Values { sql, binds: self.binds };
        };
        let mut sql = self.shape.head();
        sql.push_str(" SELECT * FROM unnest(");
        for (index, column) in self.shape.columns.iter().enumerate() {
            if index > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!(
                "${}::{}[]",
                offset + index + 1,
                column.sql_type.postgres_name()
            ));
        }
        sql.push(')');
        sql.push_str(&self.shape.conflict_clause());
        let mut columns: Vec<ColumnValues> = kinds.iter().map(|kind| kind.empty(rows)).collect();
        for (index, bind) in self.binds.into_iter().enumerate() {
            columns[index % width].push(bind);
        }
        RowsStatement::Columns { sql, columns }
    }

    /// Records the conflict keys of `binds`' rows; `false` when two of them share one, or the key is not among the
    /// columns.
    fn take_keys(&mut self, binds: &[Bind]) -> bool {
        if !matches!(self.shape.on_conflict, super::statement::OnConflict::Update { .. }) {
            return true;
        }
        let Some(positions) = self.shape.update_key_positions() else {
            return false;
        };
        for row in binds.chunks(self.shape.columns.len().max(1)) {
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

/// A [`MergedInsert`] as a statement: one row as a `VALUES` list, or several as one array per column.
#[derive(Debug)]
pub(super) enum RowsStatement {
    /// Its rows as a `VALUES` list.
    Values { sql: String, binds: Vec<Bind> },
    /// Its rows as columns: its SQL with `$1…` standing for the columns.
    Columns { sql: String, columns: Vec<ColumnValues> },
}

/// The kind of value a column of a multi-row insert holds, and so the array sqlx sends it as (which PostgreSQL then
/// casts to the column's declared type).
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
    if width == 0 || !binds.len().is_multiple_of(width) {
        return None;
    }
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

#[cfg(test)]
mod tests {
    use super::super::statement::{Column, OnConflict, SqlType};
    use super::*;

    const TAGS: InsertShape = InsertShape::new(
        "tags",
        &[
            Column::new("revision_id", SqlType::Text),
            Column::new("tag", SqlType::Text),
        ],
    );

    const TRUST: InsertShape = InsertShape::new(
        "trust",
        &[
            Column::new("target_id", SqlType::Text),
            Column::new("status", SqlType::Text),
        ],
    )
    .on_conflict(OnConflict::Update {
        key: &["target_id"],
        set: "status = excluded.status",
    });

    fn tag(revision: &str, tag: &str) -> MergedInsert {
        MergedInsert::new(Insert::row(&TAGS, vec![Bind::from(revision), Bind::from(tag)]))
    }

    fn trust(target: &str, status: &str) -> MergedInsert {
        MergedInsert::new(Insert::row(&TRUST, vec![Bind::from(target), Bind::from(status)]))
    }

    #[test]
    fn rows_of_one_shape_join_and_travel_as_arrays_of_their_columns_types() {
        let mut first = tag("r1", "a");
        let later = tag("r2", "b");
        assert!(first.accepts(&later));
        first.append(later);
        let RowsStatement::Columns { sql, columns } = first.into_statement(0) else {
            panic!("two rows travel as columns");
        };
        assert_eq!(
            sql,
            "INSERT INTO tags (revision_id, tag) SELECT * FROM unnest($1::text[], $2::text[])"
        );
        assert_eq!(
            columns[0],
            ColumnValues::Text(vec![Some("r1".to_owned()), Some("r2".to_owned())])
        );
        let RowsStatement::Values { sql, binds } = tag("r1", "a").into_statement(0) else {
            panic!("one row travels as a VALUES list");
        };
        assert_eq!(sql, "INSERT INTO tags (revision_id, tag) VALUES ($1, $2)");
        assert_eq!(binds.len(), 2);
    }

    #[test]
    fn upserts_join_only_with_keys_that_differ() {
        let first = trust("t1", "unverified");
        assert!(first.accepts(&trust("t2", "supported")));
        assert!(!first.accepts(&trust("t1", "supported")));
        let optional = MergedInsert::new(Insert::row(&TRUST, vec![Bind::from(Some("t1")), Bind::from("x")]));
        assert!(!first.accepts(&optional), "the same key, bound as optional");
        let twice = MergedInsert::new(Insert::rows(&TRUST, &["t1", "t1"], |target| {
            vec![Bind::from(*target), Bind::from("x")]
        }));
        assert!(!twice.joinable, "two rows of one insert on the same key");
        assert!(!tag("r", "a").accepts(&trust("r", "a")), "another shape");
    }
}
