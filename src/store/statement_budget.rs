//! The cut-off for runaway statements, the last line of defence behind the input caps: whatever shape a future
//! query takes, one request cannot keep a database connection busy for long.
//!
//! - PostgreSQL: `statement_timeout` is set on every pooled connection (a startup option), so the server cancels any
//!   statement that runs longer than the setting, with SQLSTATE `57014` (`query_canceled`). Migrations run on a
//!   connection of their own without it: building an index on a large table may take longer, once.
//! - SQLite: a progress handler counts the virtual-machine instructions of a unit of work (a reader checkout, or one
//!   write on the writer connection) and interrupts the statement running when the budget is spent, with
//!   `SQLITE_INTERRUPT` (code 9). Instructions rather than time keep the cut-off deterministic: the same request on
//!   the same data stops at the same point on any machine, which is what lets tests exercise it. The budget is the
//!   setting in milliseconds times [`SQLITE_INSTRUCTIONS_PER_MILLISECOND`] (25,000). The development machine ran
//!   16,000 to 100,000 instructions a millisecond depending on the statement, so the cut-off comes after a quarter
//!   to one and a half times the setting in wall time; work inside one full-text index step counts as one
//!   instruction, so text matching can run somewhat longer.
//!
//! Either way the store reports [`super::StoreError::is_statement_cut_off`], and the service answers
//! `validation_failed` with `details.reason = "too_expensive"` (docs/spec-notes.md says why).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::SqliteConnection;

/// Virtual-machine instructions between two calls of the progress handler: often enough to stop within a
/// fraction of a millisecond of the budget, rarely enough to cost nothing measurable.
const INSTRUCTIONS_PER_CHECK: i32 = 1000;

/// SQLite virtual-machine instructions a unit of work may run per millisecond of the statement timeout.
pub const SQLITE_INSTRUCTIONS_PER_MILLISECOND: u64 = 25_000;

/// How many progress checks a unit of work may pass under `timeout`.
fn checks_allowed(timeout: Duration) -> u64 {
    let milliseconds = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).max(1);
    milliseconds
        .saturating_mul(SQLITE_INSTRUCTIONS_PER_MILLISECOND)
        .div_ceil(u64::from(INSTRUCTIONS_PER_CHECK.unsigned_abs()))
}

/// The PostgreSQL startup option that sets the timeout on a connection, in milliseconds.
pub(crate) fn postgres_statement_timeout(timeout: Duration) -> (&'static str, String) {
    let milliseconds = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).max(1);
    ("statement_timeout", milliseconds.to_string())
}

/// Gives a reader connection a fresh budget: a new handler with its own count. Called when the connection is made
/// and each time it goes back to the pool, so that every checkout starts with the whole budget.
pub(crate) async fn renew_reader_budget(
    connection: &mut SqliteConnection,
    timeout: Duration,
) -> Result<(), sqlx::Error> {
    let allowed = checks_allowed(timeout);
    let mut checks: u64 = 0;
    let mut handle = connection.lock_handle().await?;
    handle.set_progress_handler(INSTRUCTIONS_PER_CHECK, move || {
        checks += 1;
        checks <= allowed
    });
    Ok(())
}

/// The budget of the single writer connection, renewed by each write when it takes the connection.
#[derive(Debug)]
pub(crate) struct WriterBudget {
    allowed: u64,
    checks: AtomicU64,
    interruptions: AtomicU64,
}

impl WriterBudget {
    /// A budget for writes under `timeout`.
    pub(crate) fn new(timeout: Duration) -> WriterBudget {
        WriterBudget {
            allowed: checks_allowed(timeout),
            checks: AtomicU64::new(0),
            interruptions: AtomicU64::new(0),
        }
    }

    /// Installs the handler that spends this budget on the writer connection.
    pub(crate) async fn install(
        self: &std::sync::Arc<Self>,
        connection: &mut SqliteConnection,
    ) -> Result<(), sqlx::Error> {
        let budget = self.clone();
        let mut handle = connection.lock_handle().await?;
        handle.set_progress_handler(INSTRUCTIONS_PER_CHECK, move || budget.check());
        Ok(())
    }

    /// Starts a new unit of work with the whole budget.
    pub(crate) fn renew(&self) {
        self.checks.store(0, Ordering::Release);
    }

    /// How many statements the budget has interrupted so far. SQLite rolls the whole transaction back when it
    /// interrupts a statement that writes, so a batch lost while this count moved was lost to the cut-off, and its
    /// other writes may simply run again.
    pub(crate) fn interruptions(&self) -> u64 {
        self.interruptions.load(Ordering::Acquire)
    }

    fn check(&self) -> bool {
        let spent = self.checks.fetch_add(1, Ordering::AcqRel) + 1;
        if spent <= self.allowed {
            true
        } else {
            self.interruptions.fetch_add(1, Ordering::AcqRel);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Conn, Store, StoreError};

    /// Counts to `rows` in SQL: about 17 instructions a row, so 1,000 rows spend two thirds of a 1 ms budget.
    const COUNT: &str =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1) SELECT count(*) FROM n";

    async fn count_on(connection: &mut SqliteConnection, rows: i64) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(COUNT).bind(rows).fetch_one(connection).await?)
    }

    async fn count(conn: &mut Conn<'_>, rows: i64) -> Result<i64, StoreError> {
        let connection = crate::store::sqlite_connection(conn).await?;
        count_on(connection, rows).await
    }

    async fn store(directory: &tempfile::TempDir) -> Store {
        let url = format!("sqlite://{}", directory.path().join("budget.db").display());
        Store::connect(&url, 2, Duration::from_millis(1))
            .await
            .expect("store opens")
    }

    #[tokio::test]
    async fn a_reader_is_cut_off_within_one_checkout_and_renewed_for_the_next() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let store = store(&directory).await;
        {
            let mut reader = store.reader().await.expect("reader");
            let error = count(&mut reader.conn(), 1_000_000).await.expect_err("over the budget");
            assert!(error.is_statement_cut_off(), "{error}");
        }
        // Two thirds of the budget, twice: fine in two checkouts, too much in one.
        for _ in 0..4 {
            let mut reader = store.reader().await.expect("reader");
            assert_eq!(count(&mut reader.conn(), 1000).await.expect("within the budget"), 1000);
        }
        let mut reader = store.reader().await.expect("reader");
        count(&mut reader.conn(), 1000).await.expect("first");
        let error = count(&mut reader.conn(), 1000)
            .await
            .expect_err("the checkout's budget is spent");
        assert!(error.is_statement_cut_off(), "{error}");
        drop(reader);
        store.close().await;
    }

    #[tokio::test]
    async fn a_write_is_cut_off_within_itself_and_the_next_write_starts_afresh() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let store = store(&directory).await;
        let mut write = store.begin().await.expect("write");
        count(&mut write.conn(), 1000).await.expect("first");
        let error = count(&mut write.conn(), 1000)
            .await
            .expect_err("the write's budget is spent");
        assert!(error.is_statement_cut_off(), "{error}");
        drop(write);
        for _ in 0..3 {
            let mut write = store.begin().await.expect("write");
            count(&mut write.conn(), 1000)
                .await
                .expect("a new write has the whole budget");
            write.commit().await.expect("commit");
        }
        store.close().await;
    }

    #[test]
    fn the_budget_follows_the_setting() {
        assert_eq!(checks_allowed(Duration::from_millis(5000)), 125_000);
        assert_eq!(checks_allowed(Duration::from_millis(1)), 25);
        assert_eq!(
            checks_allowed(Duration::ZERO),
            25,
            "never less than one millisecond's worth"
        );
        assert_eq!(
            postgres_statement_timeout(Duration::from_millis(2500)),
            ("statement_timeout", "2500".to_owned())
        );
    }

    #[test]
    fn the_writer_budget_interrupts_once_spent_and_renews() {
        let budget = WriterBudget::new(Duration::from_millis(1));
        assert!((0..25).all(|_| budget.check()));
        assert!(!budget.check());
        assert_eq!(budget.interruptions(), 1);
        budget.renew();
        assert!(budget.check());
    }
}
