//! Tests of the ranking function against FTS5's own `bm25()`, on an in-memory database driven through the C API.

use std::ffi::{CStr, CString, c_int};
use std::ptr::{self, NonNull};

use libsqlite3_sys as ffi;

/// An in-memory database with the ranking function registered, closed on drop.
struct Database {
    connection: *mut ffi::sqlite3,
}

impl Database {
    fn open() -> Database {
        let mut connection = ptr::null_mut();
        // SAFETY: a NUL-terminated name and a valid out-pointer.
        let code = unsafe { ffi::sqlite3_open(c":memory:".as_ptr(), &mut connection) };
        assert_eq!(code, ffi::SQLITE_OK, "open");
        let database = Database { connection };
        // SAFETY: the connection is open and used by this thread only.
        unsafe { crate::register(NonNull::new(connection).expect("connection")) }.expect("register");
        database
    }

    fn execute(&self, sql: &str) {
        let sql = CString::new(sql).expect("sql");
        let mut error = ptr::null_mut();
        // SAFETY: an open connection and a NUL-terminated statement.
        let code = unsafe { ffi::sqlite3_exec(self.connection, sql.as_ptr(), None, ptr::null_mut(), &mut error) };
        if code != ffi::SQLITE_OK {
            // SAFETY: SQLite sets `error` to a NUL-terminated message when a statement fails.
            let message = unsafe { CStr::from_ptr(error) }.to_string_lossy().into_owned();
            // SAFETY: the message was allocated by SQLite.
            unsafe { ffi::sqlite3_free(error.cast()) };
            panic!("{message}");
        }
    }

    /// Each matching row's ID with the two scores, `bm25` first, for a MATCH expression and the weights.
    fn scores(&self, expression: &str, weights: &str) -> Result<Vec<(i64, f64, f64)>, String> {
        let sql = CString::new(format!(
            "SELECT rowid, bm25(notes, {weights}), interai_bm25(notes, {weights}) FROM notes WHERE notes MATCH ?1 \
             ORDER BY rowid"
        ))
        .expect("sql");
        let expression = CString::new(expression).expect("expression");
        let mut statement = ptr::null_mut();
        let mut rows = Vec::new();
        // SAFETY: an open connection, NUL-terminated texts that outlive the statement, and a statement that is
        // finalized before returning.
        unsafe {
            let code = ffi::sqlite3_prepare_v2(self.connection, sql.as_ptr(), -1, &mut statement, ptr::null_mut());
            assert_eq!(code, ffi::SQLITE_OK, "prepare");
            ffi::sqlite3_bind_text(statement, 1, expression.as_ptr(), -1, ffi::SQLITE_TRANSIENT());
            let outcome = loop {
                match ffi::sqlite3_step(statement) {
                    ffi::SQLITE_ROW => rows.push((
                        ffi::sqlite3_column_int64(statement, 0),
                        ffi::sqlite3_column_double(statement, 1),
                        ffi::sqlite3_column_double(statement, 2),
                    )),
                    ffi::SQLITE_DONE => break Ok(()),
                    _ => {
                        break Err(CStr::from_ptr(ffi::sqlite3_errmsg(self.connection))
                            .to_string_lossy()
                            .into_owned());
                    }
                }
            };
            ffi::sqlite3_finalize(statement);
            outcome?;
        }
        Ok(rows)
    }

    /// Asserts that the function gives `bm25`'s scores, to the bit, on at least one row.
    fn assert_same_as_bm25(&self, expression: &str, weights: &str) {
        let rows = self.scores(expression, weights).expect("query");
        assert!(!rows.is_empty(), "{expression} matched nothing");
        for (rowid, expected, actual) in rows {
            assert_eq!(
                expected.to_bits(),
                actual.to_bits(),
                "{expression}, row {rowid}: bm25 {expected}, interai_bm25 {actual}"
            );
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // SAFETY: the connection is open and its statements are finalized.
        let code: c_int = unsafe { ffi::sqlite3_close(self.connection) };
        assert_eq!(code, ffi::SQLITE_OK, "close");
    }
}

/// A small corpus with a title, a body and a filter column, where words recur with different frequencies.
fn corpus() -> Database {
    let database = Database::open();
    database.execute("CREATE VIRTUAL TABLE notes USING fts5(title, body, facets, tokenize = 'porter unicode61')");
    let notes = [
        (
            "Retry webhook deliveries",
            "Retry each failed webhook with backoff; webhooks retried twice",
            "k1 g7",
        ),
        (
            "Webhook signatures",
            "Verify the signature of every webhook before parsing",
            "k1 g7",
        ),
        (
            "Backoff for retries",
            "Exponential backoff with jitter keeps retries from piling up",
            "k1",
        ),
        (
            "Database migrations",
            "Run migrations in a transaction and keep them reversible",
            "k2",
        ),
        (
            "Kubernetes rollouts",
            "Roll back a deployment when the readiness probe fails",
            "k2 g7",
        ),
        (
            "Retry budgets",
            "A retry budget bounds how much extra load retries add",
            "k1",
        ),
        (
            "Notes on k1 values",
            "The k1 parameter of BM25 saturates term frequency",
            "k3",
        ),
    ];
    for (title, body, facets) in notes {
        database.execute(&format!(
            "INSERT INTO notes (title, body, facets) VALUES ('{title}', '{body}', '{facets}')"
        ));
    }
    database
}

#[test]
fn scores_equal_bm25_for_words_phrases_choices_and_exclusions() {
    let database = corpus();
    for expression in [
        "retry",
        "webhook",
        "retry AND backoff",
        "\"readiness probe\"",
        "(webhook OR migrations)",
        "(retry) NOT \"budget\"",
        "retry AND webhook AND backoff",
    ] {
        database.assert_same_as_bm25(expression, "10.0, 1.0, 0.0");
        database.assert_same_as_bm25(expression, "1.0, 1.0, 1.0");
    }
}

#[test]
fn scores_equal_bm25_with_column_filters_and_unweighted_filter_terms() {
    let database = corpus();
    for expression in [
        "((retry) AND ({facets} : \"k1\"))",
        "(({title body} : (k1)) AND ({facets} : \"k3\"))",
        "((webhook) AND ({facets} : (\"g7\" OR \"k2\")))",
        "((retry) NOT ({facets} : \"g7\"))",
    ] {
        database.assert_same_as_bm25(expression, "10.0, 4.0, 0.0");
    }
}

#[test]
fn remembered_counts_follow_writes_to_the_table() {
    let database = corpus();
    database.assert_same_as_bm25("retry", "10.0, 1.0, 0.0");
    // More documents with the word change its document frequency; the next statement must see the new one.
    for index in 0..5 {
        database.execute(&format!(
            "INSERT INTO notes (title, body, facets) VALUES ('Retry note {index}', 'retry again', 'k1')"
        ));
    }
    database.assert_same_as_bm25("retry", "10.0, 1.0, 0.0");
    database.execute("DELETE FROM notes WHERE title LIKE 'Retry note%'");
    database.assert_same_as_bm25("retry", "10.0, 1.0, 0.0");
    // A revision that keeps the row count but changes the text is seen as well.
    database.execute("UPDATE notes SET body = 'nothing about it at all, none' WHERE title = 'Retry budgets'");
    database.assert_same_as_bm25("retry", "10.0, 1.0, 0.0");
}

#[test]
fn registering_twice_on_one_connection_keeps_one_working_function() {
    let database = corpus();
    // SAFETY: the connection is open and used by this thread only.
    unsafe { crate::register(NonNull::new(database.connection).expect("connection")) }.expect("second register");
    database.assert_same_as_bm25("webhook", "10.0, 1.0, 0.0");
}

#[test]
fn a_call_outside_a_full_text_query_is_an_error_not_a_crash() {
    let database = corpus();
    let mut statement = ptr::null_mut();
    // SAFETY: an open connection, a NUL-terminated constant, and a statement finalized before the block ends.
    let (prepared, stepped) = unsafe {
        let prepared = ffi::sqlite3_prepare_v2(
            database.connection,
            c"SELECT interai_bm25(1)".as_ptr(),
            -1,
            &mut statement,
            ptr::null_mut(),
        );
        let stepped = if prepared == ffi::SQLITE_OK {
            ffi::sqlite3_step(statement)
        } else {
            prepared
        };
        ffi::sqlite3_finalize(statement);
        (prepared, stepped)
    };
    assert!(
        prepared != ffi::SQLITE_OK || stepped == ffi::SQLITE_ERROR,
        "an auxiliary function outside a MATCH query must fail (prepare {prepared}, step {stepped})"
    );
}
