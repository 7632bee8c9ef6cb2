//! The single SQLite writer connection with group commit: several writes queued behind each other share one
//! physical transaction, each inside its own savepoint, and every one of them learns the outcome of the shared
//! `COMMIT` before it reports success.
//!
//! SQLite allows one writer at a time, so every write of an instance waits for this one connection anyway. What a
//! write costs while it holds the connection is mostly round trips to the connection's thread and the commit
//! itself, which appends every changed page to the WAL (and now and then checkpoints it). When writes queue up,
//! committing them together writes each hot page once per batch instead of once per write, and the queue drains
//! faster. A write that fails rolls back to its own savepoint and leaves the others of its batch untouched.
//!
//! The protocol, all under one async mutex that owns the connection (so a write holds it from `begin` to `commit`):
//!
//! 1. `begin`: wait for the connection; open the physical transaction (`BEGIN IMMEDIATE`) unless a batch is already
//!    open; open the write's savepoint.
//! 2. `commit`: release the savepoint and register for the batch's outcome. If other writes are waiting for the
//!    connection (and the batch is not full), hand the open batch over to them and wake the committer task, which
//!    queues behind them; otherwise commit the batch now. Either way, wait for the outcome.
//! 3. A write dropped without `commit` (an error, or a cancelled request) marks its savepoint for rollback; whoever
//!    takes the connection next rolls it back first, and the committer is woken so the batch is not left open.
//!
//! Checkpoints (copying the WAL's pages back into the database file, and a disk sync) are not the writer's work:
//! left to SQLite, whichever commit found the WAL over 1,000 pages copied it while every other write waited, a
//! tenth of the writer's time under replication load. A checkpointer task with a connection of its own runs a
//! `PASSIVE` checkpoint every [`CHECKPOINT_EVERY_COMMITS`] commits instead, beside the writes (a passive
//! checkpoint never blocks a writer). The writer still checkpoints by itself past [`WRITER_AUTOCHECKPOINT_PAGES`],
//! should the checkpointer fall far behind.
//!
//! SQLite rolls a whole transaction back by itself after some errors (a full disk, an I/O error, no memory). A
//! rollback hook counts such rollbacks, so a batch that was lost is reported as failed to every write in it instead of
//! being mistaken for a transaction that is still open.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection};
use tokio::sync::{Mutex, OwnedMutexGuard, mpsc, oneshot, watch};

use super::StoreError;
use super::statement::{DeferredStatements, Statement};
use super::statement_budget::WriterBudget;

/// The most writes one physical transaction carries; beyond this a write commits the batch itself, which bounds
/// how long the first write of a batch waits for its outcome.
const MAX_WRITES_PER_BATCH: usize = 8;

/// Physical commits between two checkpoints of the checkpointer.
pub const CHECKPOINT_EVERY_COMMITS: u64 = 32;

/// The WAL size in pages (4 KiB each) beyond which a commit of the writer checkpoints by itself, as SQLite does at
/// 1,000 by default: only reached when the checkpointer cannot keep up.
pub const WRITER_AUTOCHECKPOINT_PAGES: u32 = 16_384;

/// How long a write waits for the connection before giving up, as the writer pool's acquire timeout did.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// The name of each write's savepoint. Writes of one batch run one after another, so one name suffices.
const SAVEPOINT: &str = "interai_write";

/// Why a batch's commit failed, as told to every write in it.
#[derive(Debug, Clone)]
pub struct CommitFailure {
    /// What the database said.
    pub message: String,
    /// Whether trying the whole write again can succeed (SQLite was busy).
    pub retryable: bool,
}

/// The writer connection of one SQLite database, shared by every clone of the store.
#[derive(Debug)]
pub struct SqliteWriter {
    slot: Arc<Mutex<WriterSlot>>,
    /// Writes waiting for the connection right now; a finishing write hands its batch over when this is above zero.
    waiting: Arc<AtomicUsize>,
    /// Wakes the committer task (capacity one: a pending wake-up already covers any later ones).
    wake_committer: mpsc::Sender<()>,
    /// Whole-transaction rollbacks seen on the connection, counted by a rollback hook.
    rollbacks: Arc<AtomicU64>,
    /// The statement budget each write gets when it takes the connection.
    budget: Arc<WriterBudget>,
    /// The checkpointer's connection; `None` once closed.
    checkpointer: Arc<Mutex<Option<SqliteConnection>>>,
    /// The checkpointer's last checkpoint.
    #[cfg_attr(not(test), allow(dead_code, reason = "only the tests watch the checkpoints"))]
    checkpoints: watch::Sender<Checkpoint>,
}

/// What the checkpointer's last checkpoint found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checkpoint {
    /// Checkpoints run so far.
    pub count: u64,
    /// Pages in the WAL.
    pub wal_pages: i64,
    /// Of them, pages copied into the database file (all of them, unless a reader still used older ones).
    pub checkpointed_pages: i64,
}

#[derive(Debug)]
struct WriterSlot {
    /// Physical commits so far (each carrying one or more writes).
    commits: u64,
    /// `None` once the store is closed.
    connection: Option<SqliteConnection>,
    /// The physical transaction shared by the writes of the current batch, while one is open.
    batch: Option<OpenBatch>,
    /// A write's savepoint may be open without a write holding it: its write was dropped before it finished.
    abandoned_savepoint: bool,
    /// Wakes the checkpointer (every [`CHECKPOINT_EVERY_COMMITS`] commits); dropped with the slot, which ends it.
    wake_checkpointer: mpsc::Sender<()>,
}

#[derive(Debug)]
struct OpenBatch {
    /// One sender per write that released its savepoint and waits for the commit.
    waiters: Vec<oneshot::Sender<Result<(), CommitFailure>>>,
    /// The rollback count when the batch was opened; a different count means SQLite rolled the batch back.
    rollbacks_at_open: u64,
    /// The statement budget's interruptions when the batch was opened; a batch rolled back while this moved was
    /// lost to the cut-off of one write, and the others may run again.
    interruptions_at_open: u64,
}

impl OpenBatch {
    /// What the writes of a batch that SQLite rolled back on its own are told.
    fn lost(&self, budget: &WriterBudget) -> CommitFailure {
        CommitFailure {
            message: "the database rolled the transaction back after an error".to_owned(),
            retryable: budget.interruptions() != self.interruptions_at_open,
        }
    }
}

/// One write's hold on the connection, between [`SqliteWriter::begin`] and [`SqliteWrite::commit`].
#[derive(Debug)]
pub struct SqliteWrite {
    guard: Option<OwnedMutexGuard<WriterSlot>>,
    writer: WriterHandles,
    /// Plain writes held back until the next statement or the commit (see [`super::statement`]).
    deferred: DeferredStatements,
}

/// What a write needs of its writer after it has given the connection back.
#[derive(Debug, Clone)]
struct WriterHandles {
    waiting: Arc<AtomicUsize>,
    wake_committer: mpsc::Sender<()>,
    rollbacks: Arc<AtomicU64>,
    budget: Arc<WriterBudget>,
}

/// Decrements the waiting count when dropped, so a write cancelled while it waits is not counted as waiting.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl SqliteWriter {
    /// Opens the writer connection, applies pending migrations with it, and starts the committer task. Each write
    /// then runs under the statement budget derived from `statement_timeout` (migrations do not).
    pub async fn open(
        options: &SqliteConnectOptions,
        migrator: &sqlx::migrate::Migrator,
        statement_timeout: Duration,
    ) -> Result<SqliteWriter, StoreError> {
        let mut connection = options.connect().await?;
        migrator.run(&mut connection).await?;
        super::register_sqlite_ranking(&mut connection).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "PRAGMA wal_autocheckpoint = {WRITER_AUTOCHECKPOINT_PAGES}"
        )))
        .execute(&mut connection)
        .await?;
        let checkpointer = Arc::new(Mutex::new(Some(options.connect().await?)));
        let (wake_checkpointer, checkpointer_wakes) = mpsc::channel(1);
        let (checkpoints, _) = watch::channel(Checkpoint::default());
        tokio::spawn(run_checkpointer(
            checkpointer.clone(),
            checkpointer_wakes,
            checkpoints.clone(),
        ));
        let budget = Arc::new(WriterBudget::new(statement_timeout));
        budget.install(&mut connection).await?;
        let rollbacks = Arc::new(AtomicU64::new(0));
        {
            let counter = rollbacks.clone();
            let mut handle = connection.lock_handle().await?;
            handle.set_rollback_hook(move || {
                counter.fetch_add(1, Ordering::AcqRel);
            });
        }
        let slot = Arc::new(Mutex::new(WriterSlot {
            commits: 0,
            connection: Some(connection),
            batch: None,
            abandoned_savepoint: false,
            wake_checkpointer,
        }));
        let (wake_committer, wake_receiver) = mpsc::channel(1);
        tokio::spawn(run_committer(
            Arc::downgrade(&slot),
            wake_receiver,
            rollbacks.clone(),
            budget.clone(),
        ));
        Ok(SqliteWriter {
            slot,
            checkpointer,
            checkpoints,
            waiting: Arc::new(AtomicUsize::new(0)),
            wake_committer,
            rollbacks,
            budget,
        })
    }

    /// Waits for the connection and opens a write: joins the open batch or starts one, then opens a savepoint.
    pub async fn begin(&self) -> Result<SqliteWrite, StoreError> {
        self.begin_with(None).await.map(|(write, _)| write)
    }

    /// [`SqliteWriter::begin`], running `opening` (a query) inside the new savepoint in the same round trip, and
    /// returning its first row.
    pub async fn begin_with(
        &self,
        opening: Option<Statement>,
    ) -> Result<(SqliteWrite, Option<sqlx::sqlite::SqliteRow>), StoreError> {
        let mut guard = {
            self.waiting.fetch_add(1, Ordering::AcqRel);
            let _waiting = Waiting(&self.waiting);
            tokio::time::timeout(ACQUIRE_TIMEOUT, self.slot.clone().lock_owned())
                .await
                .map_err(|_| StoreError::Database(sqlx::Error::PoolTimedOut))?
        };
        let handles = WriterHandles {
            waiting: self.waiting.clone(),
            wake_committer: self.wake_committer.clone(),
            rollbacks: self.rollbacks.clone(),
            budget: self.budget.clone(),
        };
        // The write's budget starts now; the clean-up below is charged to it, which costs a few instructions.
        self.budget.renew();
        prepare_slot(&mut guard, &self.rollbacks, &self.budget).await;
        let rollbacks_now = self.rollbacks.load(Ordering::Acquire);
        let slot = &mut *guard;
        let connection = slot
            .connection
            .as_mut()
            .ok_or(StoreError::Database(sqlx::Error::PoolClosed))?;
        let mut sql = String::new();
        let starts_batch = slot.batch.is_none();
        if starts_batch {
            sql.push_str("BEGIN IMMEDIATE;\n");
            // Marked open before the statements run: if this future is dropped meanwhile, the next holder finds
            // the batch and commits (or fails to commit) whatever it holds.
            slot.batch = Some(OpenBatch {
                waiters: Vec::new(),
                rollbacks_at_open: rollbacks_now,
                interruptions_at_open: self.budget.interruptions(),
            });
        }
        sql.push_str(&format!("SAVEPOINT {SAVEPOINT}"));
        let binds = match opening {
            Some(opening) => {
                let (opening_sql, binds) = opening.into_parts();
                sql.push_str(";\n");
                sql.push_str(&opening_sql);
                binds
            }
            None => Vec::new(),
        };
        // Likewise: if this future is dropped while the savepoint is being opened, whoever takes the connection next
        // rolls back to it (and finding none is harmless).
        slot.abandoned_savepoint = true;
        let opened = super::statement::bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), binds)
            .fetch_optional(&mut *connection)
            .await;
        match opened {
            Ok(row) => Ok((
                SqliteWrite {
                    guard: Some(guard),
                    writer: handles,
                    deferred: DeferredStatements::default(),
                },
                row,
            )),
            Err(error) => {
                if starts_batch {
                    // Whether BEGIN ran is unknown; a ROLLBACK settles it (and fails harmlessly if it did not).
                    let _ = sqlx::query("ROLLBACK").execute(&mut *connection).await;
                    slot.batch = None;
                    slot.abandoned_savepoint = false;
                } else {
                    handles.wake();
                }
                Err(error.into())
            }
        }
    }

    /// The checkpointer's checkpoints: the last one's result, and a receiver that sees each next one.
    #[cfg(test)]
    pub fn checkpoints(&self) -> watch::Receiver<Checkpoint> {
        self.checkpoints.subscribe()
    }

    /// How many physical commits the connection has made; with group commit, fewer than the writes committed.
    #[cfg(test)]
    pub async fn physical_commits(&self) -> u64 {
        self.slot.lock().await.commits
    }

    /// Commits any open batch and closes the connection; later writes fail with "pool closed".
    pub async fn close(&self) {
        // The checkpointer's connection first, so that the writer's is the database's last and its close
        // checkpoints what is left (SQLite then removes the WAL).
        if let Some(connection) = self.checkpointer.lock().await.take()
            && let Err(error) = connection.close().await
        {
            tracing::warn!(error = %error, "closing the SQLite checkpointer connection failed");
        }
        let mut guard = self.slot.lock().await;
        self.budget.renew();
        prepare_slot(&mut guard, &self.rollbacks, &self.budget).await;
        finish_batch(&mut guard, &self.rollbacks, &self.budget).await;
        if let Some(connection) = guard.connection.take()
            && let Err(error) = connection.close().await
        {
            tracing::warn!(error = %error, "closing the SQLite writer connection failed");
        }
    }
}

impl SqliteWrite {
    /// The connection, inside this write's savepoint.
    pub fn connection(&mut self) -> &mut SqliteConnection {
        // The guard is only taken by `commit`, which consumes the write, and the connection only by `close`,
        // which cannot run while a write holds the slot.
        #[allow(clippy::expect_used)]
        self.guard
            .as_mut()
            .and_then(|guard| guard.connection.as_mut())
            .expect("a write holds the open writer connection")
    }

    /// Holds a plain write back until the write's next statement or its commit.
    pub fn defer(&mut self, write: super::statement::HeldWrite) {
        self.deferred.push(write);
    }

    /// Sends the writes held back, in one round trip.
    pub async fn send_deferred(&mut self) -> Result<(), StoreError> {
        if self.deferred.is_empty() {
            return Ok(());
        }
        let Some(connection) = self.guard.as_mut().and_then(|guard| guard.connection.as_mut()) else {
            return Err(StoreError::Database(sqlx::Error::PoolClosed));
        };
        self.deferred
            .send(connection, None)
            .await
            .map_err(|error| StoreError::Deferred(Box::new(StoreError::Database(error))))
    }

    /// Releases the write's savepoint (sending the writes held back in the same round trip) and waits until the
    /// batch it joined is committed.
    pub async fn commit(mut self) -> Result<(), StoreError> {
        let Some(mut guard) = self.guard.take() else {
            return Err(StoreError::Database(sqlx::Error::PoolClosed));
        };
        let receiver = {
            let slot = &mut *guard;
            let (Some(connection), Some(batch)) = (slot.connection.as_mut(), slot.batch.as_ref()) else {
                return Err(StoreError::Database(sqlx::Error::PoolClosed));
            };
            if self.writer.rollbacks.load(Ordering::Acquire) != batch.rollbacks_at_open {
                // SQLite rolled the transaction back after an error; releasing now would only fail or, worse, run
                // in autocommit mode. Leave the failure to `prepare_slot`, which tells every write of the batch.
                let failure = batch.lost(&self.writer.budget);
                drop(guard);
                self.writer.wake();
                return Err(StoreError::GroupCommit(failure));
            }
            let had_deferred = !self.deferred.is_empty();
            let released = self
                .deferred
                .send(connection, Some(&format!("RELEASE {SAVEPOINT}")))
                .await;
            if let Err(error) = released {
                // The savepoint is still open (a held-back write failed, or the release itself did): whoever takes
                // the connection next rolls it back.
                drop(guard);
                self.writer.wake();
                let error = StoreError::Database(error);
                return Err(if had_deferred {
                    StoreError::Deferred(Box::new(error))
                } else {
                    error
                });
            }
            slot.abandoned_savepoint = false;
            let (sender, receiver) = oneshot::channel();
            let Some(batch) = slot.batch.as_mut() else {
                return Err(StoreError::Database(sqlx::Error::PoolClosed));
            };
            batch.waiters.push(sender);
            let hand_over =
                batch.waiters.len() < MAX_WRITES_PER_BATCH && self.writer.waiting.load(Ordering::Acquire) > 0;
            if hand_over {
                drop(guard);
                self.writer.wake();
            } else {
                finish_batch(&mut guard, &self.writer.rollbacks, &self.writer.budget).await;
                drop(guard);
            }
            receiver
        };
        match receiver.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(failure)) => Err(StoreError::GroupCommit(failure)),
            Err(_) => Err(StoreError::GroupCommit(CommitFailure {
                message: "the writer connection closed before the transaction committed".to_owned(),
                retryable: false,
            })),
        }
    }
}

impl Drop for SqliteWrite {
    fn drop(&mut self) {
        // Without `commit`, `abandoned_savepoint` is still set: the next holder rolls this write back. The
        // committer makes sure that happens, and that the rest of the batch commits, even if no write follows.
        if self.guard.take().is_some() {
            self.writer.wake();
        }
    }
}

impl WriterHandles {
    fn wake(&self) {
        // A full channel means a wake-up is already pending, which covers this one.
        let _ = self.wake_committer.try_send(());
    }
}

/// Makes the connection ready for its next holder: rolls back a write that was dropped before it finished, and
/// fails the batch if SQLite rolled it back on its own.
async fn prepare_slot(slot: &mut WriterSlot, rollbacks: &AtomicU64, budget: &WriterBudget) {
    let Some(connection) = slot.connection.as_mut() else {
        return;
    };
    if slot.abandoned_savepoint {
        slot.abandoned_savepoint = false;
        let rolled_back = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "ROLLBACK TO {SAVEPOINT}; RELEASE {SAVEPOINT}"
        )))
        .execute(&mut *connection)
        .await;
        if let Err(error) = rolled_back {
            // "no such savepoint": the write was cancelled after its savepoint was released (or before it was
            // opened). Its changes, if any, stay in the batch; anything else is checked below.
            tracing::debug!(error = %error, "no savepoint of an abandoned write to roll back");
        }
    }
    let lost = slot
        .batch
        .as_ref()
        .is_some_and(|batch| rollbacks.load(Ordering::Acquire) != batch.rollbacks_at_open);
    if lost && let Some(batch) = slot.batch.take() {
        tracing::error!(
            writes = batch.waiters.len(),
            "SQLite rolled back a batch of writes after an error; every write in it fails"
        );
        // The connection may still think it is inside a transaction; a plain ROLLBACK settles it either way.
        let _ = sqlx::query("ROLLBACK").execute(&mut *connection).await;
        let failure = batch.lost(budget);
        for waiter in batch.waiters {
            let _ = waiter.send(Err(failure.clone()));
        }
    }
}

/// Commits the open batch, if any, and tells each of its writes the outcome.
async fn finish_batch(slot: &mut WriterSlot, rollbacks: &AtomicU64, budget: &WriterBudget) {
    let Some(batch) = slot.batch.take() else {
        return;
    };
    let Some(connection) = slot.connection.as_mut() else {
        return;
    };
    let outcome = if rollbacks.load(Ordering::Acquire) != batch.rollbacks_at_open {
        Err(batch.lost(budget))
    } else {
        match sqlx::query("COMMIT").execute(&mut *connection).await {
            Ok(_) => {
                slot.commits += 1;
                if slot.commits.is_multiple_of(CHECKPOINT_EVERY_COMMITS) {
                    // A checkpoint already asked for and not yet begun covers this one too.
                    let _ = slot.wake_checkpointer.try_send(());
                }
                Ok(())
            }
            Err(error) => {
                let retryable = matches!(
                    &error,
                    sqlx::Error::Database(database) if matches!(database.code().as_deref(), Some("5") | Some("517"))
                );
                tracing::error!(error = %error, writes = batch.waiters.len(), "committing a batch of writes failed");
                let _ = sqlx::query("ROLLBACK").execute(&mut *connection).await;
                Err(CommitFailure {
                    message: error.to_string(),
                    retryable,
                })
            }
        }
    };
    for waiter in batch.waiters {
        let _ = waiter.send(outcome.clone());
    }
}

/// Commits batches that their last write handed over to writes that then went away, and batches left open by a
/// write that was dropped. It queues for the connection behind the writes already waiting, so they join the batch
/// first. It ends when the writer is dropped.
async fn run_committer(
    slot: Weak<Mutex<WriterSlot>>,
    mut wake: mpsc::Receiver<()>,
    rollbacks: Arc<AtomicU64>,
    budget: Arc<WriterBudget>,
) {
    while wake.recv().await.is_some() {
        let Some(slot) = slot.upgrade() else {
            break;
        };
        let mut guard = slot.lock().await;
        // Clean-up and commit are not a request's work: they get a budget of their own.
        budget.renew();
        prepare_slot(&mut guard, &rollbacks, &budget).await;
        finish_batch(&mut guard, &rollbacks, &budget).await;
    }
}

/// Runs a passive checkpoint on its own connection each time a commit asks for one, until the writer is dropped or
/// closed. A failed checkpoint is only logged: the WAL keeps every page, and the next one tries again.
async fn run_checkpointer(
    connection: Arc<Mutex<Option<SqliteConnection>>>,
    mut wake: mpsc::Receiver<()>,
    checkpoints: watch::Sender<Checkpoint>,
) {
    while wake.recv().await.is_some() {
        let mut guard = connection.lock().await;
        let Some(connection) = guard.as_mut() else {
            break;
        };
        match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
            .fetch_one(&mut *connection)
            .await
        {
            Ok((_, wal_pages, checkpointed_pages)) => {
                tracing::debug!(wal_pages, checkpointed_pages, "WAL checkpointed");
                checkpoints.send_modify(|last| {
                    *last = Checkpoint {
                        count: last.count + 1,
                        wal_pages,
                        checkpointed_pages,
                    };
                });
            }
            Err(error) => tracing::warn!(error = %error, "checkpointing the SQLite WAL failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    async fn writer(directory: &tempfile::TempDir) -> SqliteWriter {
        let path = directory.path().join("writer.db");
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .expect("options")
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
        let writer = SqliteWriter::open(&options, &super::super::SQLITE_MIGRATIONS, Duration::from_secs(5))
            .await
            .expect("writer opens");
        let mut write = writer.begin().await.expect("begin");
        sqlx::query("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)")
            .execute(write.connection())
            .await
            .expect("table");
        write.commit().await.expect("commit");
        writer
    }

    async fn insert(write: &mut SqliteWrite, id: i64) -> Result<(), sqlx::Error> {
        sqlx::query("INSERT INTO notes (id, text) VALUES ($1, $2)")
            .bind(id)
            .bind(format!("note {id}"))
            .execute(write.connection())
            .await
            .map(|_| ())
    }

    #[tokio::test]
    async fn the_checkpointer_copies_the_wal_into_the_database_file_every_few_commits() {
        let directory = tempfile::tempdir().expect("directory");
        let writer = writer(&directory).await;
        let mut checkpoints = writer.checkpoints();
        let database = directory.path().join("writer.db");
        let size_before = std::fs::metadata(&database).expect("database file").len();
        for id in 0..i64::try_from(CHECKPOINT_EVERY_COMMITS).expect("small") {
            let mut write = writer.begin().await.expect("begin");
            insert(&mut write, id).await.expect("insert");
            write.commit().await.expect("commit");
        }
        let checkpoint = *checkpoints
            .wait_for(|checkpoint| checkpoint.count >= 1)
            .await
            .expect("a checkpoint ran");
        assert!(checkpoint.wal_pages > 0, "{checkpoint:?}");
        assert_eq!(
            checkpoint.checkpointed_pages, checkpoint.wal_pages,
            "no reader held older pages, so every page was copied"
        );
        // The WAL is far below the writer's own threshold: only the checkpointer can have copied it.
        assert!(std::fs::metadata(&database).expect("database file").len() > size_before);
        assert_eq!(stored_ids(&writer).await.len(), CHECKPOINT_EVERY_COMMITS as usize);
        writer.close().await;
    }

    async fn stored_ids(writer: &SqliteWriter) -> Vec<i64> {
        let mut write = writer.begin().await.expect("begin");
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM notes ORDER BY id")
            .fetch_all(write.connection())
            .await
            .expect("select");
        write.commit().await.expect("commit");
        ids
    }

    /// Writes queued behind each other commit together, and a write that fails or is dropped in the middle of a
    /// batch is rolled back alone.
    #[tokio::test(flavor = "current_thread")]
    async fn queued_writes_share_commits_and_failed_ones_roll_back_alone() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let writer = Arc::new(writer(&directory).await);
        let commits_before = writer.physical_commits().await;
        let mut tasks = Vec::new();
        for id in 1..=12_i64 {
            let writer = writer.clone();
            tasks.push(tokio::spawn(async move {
                let mut write = writer.begin().await.expect("begin");
                insert(&mut write, id).await.expect("insert");
                match id {
                    // A rule refused the write after it had written: dropped without commit.
                    4 => Err("refused"),
                    // A second statement fails on a constraint; the write gives up.
                    7 => {
                        let duplicate = insert(&mut write, 1).await;
                        assert!(duplicate.is_err(), "the duplicate insert fails");
                        Err("constraint")
                    }
                    _ => write.commit().await.map_err(|_| "commit failed"),
                }
            }));
        }
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await.expect("task ends"));
        }
        let committed: Vec<i64> = (1..=12).filter(|id| *id != 4 && *id != 7).collect();
        for (index, outcome) in outcomes.iter().enumerate() {
            let id = i64::try_from(index).expect("small") + 1;
            assert_eq!(outcome.is_ok(), committed.contains(&id), "write {id}: {outcome:?}");
        }
        assert_eq!(stored_ids(&writer).await, committed);
        let commits = writer.physical_commits().await - commits_before;
        assert!(
            commits < 10,
            "12 queued writes took {commits} physical commits (plus the read)"
        );
    }

    /// Writes held back until the commit arrive with it, are visible to the write's own later reads, and when one
    /// of them fails the commit reports it and nothing of that write remains.
    #[tokio::test(flavor = "current_thread")]
    async fn held_back_writes_are_read_back_and_fail_at_commit_as_a_whole() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let writer = writer(&directory).await;
        let note = |id: i64| {
            Statement::insert("notes", "INSERT INTO notes (id, text) VALUES ($1, $2)")
                .bind(id)
                .bind(format!("note {id}").as_str())
                .into()
        };
        let mut write = writer.begin().await.expect("begin");
        write.defer(note(1));
        write.defer(note(2));
        write.send_deferred().await.expect("sent");
        let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM notes")
            .fetch_one(write.connection())
            .await
            .expect("count");
        assert_eq!(seen, 2, "a read inside the write sees the writes it held back");
        write.defer(note(3));
        write.commit().await.expect("commit");

        let mut failing = writer.begin().await.expect("begin");
        failing.defer(note(4));
        failing.defer(note(1));
        let error = failing.commit().await.expect_err("the duplicate fails the commit");
        assert!(error.is_deferred() && error.is_unique_violation(), "{error}");
        assert_eq!(stored_ids(&writer).await, vec![1, 2, 3]);
    }

    /// A write cancelled while it holds the connection (its request went away) leaves nothing behind, and the
    /// writes that committed before it in the same batch still learn that they committed.
    #[tokio::test(flavor = "current_thread")]
    async fn a_cancelled_write_is_rolled_back_and_its_batch_still_commits() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let writer = Arc::new(writer(&directory).await);
        let (inserted_sender, inserted) = oneshot::channel::<()>();
        let first = {
            let writer = writer.clone();
            tokio::spawn(async move {
                let mut write = writer.begin().await.expect("begin");
                insert(&mut write, 1).await.expect("insert");
                let _ = inserted_sender.send(());
                // Holds the connection until cancelled.
                std::future::pending::<()>().await;
                write.commit().await
            })
        };
        inserted.await.expect("first write inserted");
        let second = {
            let writer = writer.clone();
            tokio::spawn(async move {
                let mut write = writer.begin().await.expect("begin");
                insert(&mut write, 2).await.expect("insert");
                write.commit().await
            })
        };
        tokio::task::yield_now().await;
        first.abort();
        assert!(first.await.is_err(), "the first write was cancelled");
        second.await.expect("task ends").expect("the second write commits");
        assert_eq!(stored_ids(&writer).await, vec![2]);
    }

    /// When SQLite rolls the shared transaction back on its own (simulated here by a plain ROLLBACK inside a write),
    /// every write of that batch is told it failed instead of being reported as committed.
    #[tokio::test(flavor = "current_thread")]
    async fn a_batch_rolled_back_by_the_database_fails_every_write_in_it() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let writer = Arc::new(writer(&directory).await);
        let (release_sender, release) = oneshot::channel::<()>();
        // The first write holds the connection until the others queue, so all three share one batch.
        let first = {
            let writer = writer.clone();
            tokio::spawn(async move {
                let mut write = writer.begin().await.expect("begin");
                insert(&mut write, 1).await.expect("insert");
                release.await.expect("released");
                write.commit().await
            })
        };
        tokio::task::yield_now().await;
        let second = {
            let writer = writer.clone();
            tokio::spawn(async move {
                let mut write = writer.begin().await.expect("begin");
                sqlx::query("ROLLBACK")
                    .execute(write.connection())
                    .await
                    .expect("rollback");
                write.commit().await
            })
        };
        let third = {
            let writer = writer.clone();
            tokio::spawn(async move {
                let mut write = writer.begin().await.expect("begin");
                insert(&mut write, 3).await.expect("insert");
                write.commit().await
            })
        };
        tokio::task::yield_now().await;
        release_sender.send(()).expect("first write waits");
        assert!(
            first.await.expect("task ends").is_err(),
            "the first write's batch was lost"
        );
        assert!(second.await.expect("task ends").is_err(), "the rolled-back write fails");
        third
            .await
            .expect("task ends")
            .expect("the next write starts a new batch and commits");
        assert_eq!(stored_ids(&writer).await, vec![3]);
    }
}
