//! How groups of similar changes (the inbox's groups of requests, the intake's batches of queued activities) are
//! written on this store: how many applying transactions run at once, how large a group is applied where it
//! arrives, whether a change's content is checked before it joins a group, where a group's writer runs, and where
//! each change of a group ends. The service asks for these by what they mean; only this module knows that they
//! differ between the backends, and why.

use std::future::Future;

use super::{Conn, Pools, Store, StoreError, Transaction};

/// Applying transactions the intake runs at once on PostgreSQL: its writers do not wait for each other, and each
/// round trip to the server would otherwise be waited out one after another. SQLite has a single writer: one.
const APPLYING_LANES_POSTGRES: usize = 4;

/// The largest group of replicated objects the inbox applies in its own transaction on PostgreSQL. A peer sending at
/// a steady pace makes groups of one or two; one catching up after an outage, of dozens, which the intake's lanes,
/// several transactions at once, apply faster than one group after another (docs/benchmarks.md, decisions). On
/// SQLite, with one writer, every group is applied where it arrives.
const LARGEST_GROUP_APPLIED_AT_ONCE_POSTGRES: usize = 8;

/// How this store wants groups of changes written (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteGrouping {
    /// How many applying transactions the intake may run at once.
    pub applying_lanes: usize,
    /// The largest group the inbox applies in the transaction that stores it; a larger one is queued for the
    /// intake's lanes.
    pub largest_group_applied_at_once: usize,
    /// Whether each request checks its own object's content before it joins a group (spreading that work over the
    /// requests, where a group applied at once would check one object after another while it holds the single
    /// writer), rather than the group checking them (where a busy group is queued and the intake checks it, so no
    /// object is checked twice).
    pub changes_checked_before_joining: bool,
}

impl Store {
    /// How this store wants groups of changes written.
    pub fn write_grouping(&self) -> WriteGrouping {
        match self.pools {
            Pools::Postgres { .. } => WriteGrouping {
                applying_lanes: APPLYING_LANES_POSTGRES,
                largest_group_applied_at_once: LARGEST_GROUP_APPLIED_AT_ONCE_POSTGRES,
                changes_checked_before_joining: false,
            },
            Pools::Sqlite { .. } => WriteGrouping {
                applying_lanes: 1,
                largest_group_applied_at_once: usize::MAX,
                changes_checked_before_joining: true,
            },
        }
    }

    /// Starts `writer`, a task that writes group after group and holds the writer for many statements, where its
    /// statements wait least: on SQLite on the write lane's thread (see `write_lane.rs`), on PostgreSQL as any task.
    /// It runs apart from whoever started it.
    pub fn start_group_writer<F>(&self, writer: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        match &self.pools {
            Pools::Postgres { .. } => drop(tokio::spawn(writer)),
            Pools::Sqlite { lane, .. } => drop(lane.spawn(writer)),
        }
    }
}

/// What holds the write transaction that a group's changes are written in (the service's unit of work).
pub trait HoldsTransaction {
    /// The transaction.
    fn transaction(&mut self) -> &mut Transaction;
}

impl HoldsTransaction for Transaction {
    fn transaction(&mut self) -> &mut Transaction {
        self
    }
}

/// Writes each of `$changes`, one after another, in `$unit`'s transaction (a [`HoldsTransaction`]): binds the change
/// to the pattern and a reborrow of the unit to the name given, runs the body (an expression whose `?` returns from
/// the caller), and collects what each body gave.
///
/// Where one change ends, a SQLite write sends what it held back, in one round trip, so that every round trip
/// carries the same combination of statements, which SQLite then prepares once and reuses; one combination of them
/// all would be new text, prepared afresh, every time. A PostgreSQL transaction keeps holding them: the next
/// changes' rows join the same inserts (see `merged_rows.rs`), and the next read or the commit sends them, a
/// table's rows in one statement, which costs PostgreSQL about half as much per change as a statement per change.
///
/// A macro rather than a function taking an async closure: the closure would borrow the unit for each call, and a
/// future holding such a closure is not provably `Send` for every lifetime (the compiler's "not general enough").
macro_rules! write_each_change {
    ($unit:expr, $changes:expr, |$each_unit:ident, $change:pat_param| $body:expr) => {{
        let mut written = Vec::new();
        for $change in $changes {
            let $each_unit = &mut *$unit;
            written.push($body);
            let transaction = $crate::store::HoldsTransaction::transaction(&mut *$unit);
            $crate::store::end_of_change(&mut transaction.conn()).await?;
        }
        written
    }};
}
pub(crate) use write_each_change;

/// Marks the end of one change of a group (see [`write_each_change`]).
pub(crate) async fn end_of_change(conn: &mut Conn<'_>) -> Result<(), StoreError> {
    match conn {
        Conn::SqliteWrite(write) => write.send_deferred().await,
        Conn::PostgresWrite(_) | Conn::Postgres(_) | Conn::Sqlite(_) => Ok(()),
    }
}
