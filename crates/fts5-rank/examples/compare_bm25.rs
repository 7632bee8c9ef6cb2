//! Times FTS5's `bm25()` against `interai_bm25` on a seeded interai SQLite database, in the shape of the store's
//! candidate-pool statement, and checks that both give the same scores.
//!
//! `cargo run --release -p fts5-rank --example compare_bm25 -- DATABASE QUERIES [ROUNDS]`, where QUERIES is a file
//! of FTS5 MATCH expressions, one per line (as the store writes them; `examples/benchmark_queries.txt` holds 400 in
//! the shape of the search benchmark's mix), and the first round is not counted (it fills the connection's memory). The two functions run interleaved, query by
//! query, on one read-only connection, so that cache state and machine noise fall on both alike.

use std::ffi::{CStr, CString};
use std::ptr::{self, NonNull};
use std::time::Instant;

use libsqlite3_sys as ffi;

/// Runs the pool statement with the score expression `function` and returns the scores of the best 200 and the elapsed microseconds.
fn pool(connection: *mut ffi::sqlite3, function: &str, expression: &CStr) -> (Vec<(i64, f64)>, u128) {
    let sql = CString::new(format!(
        "WITH pool AS (SELECT rowid AS document_rowid, {function} AS score \
         FROM search_fts WHERE search_fts MATCH ?1 ORDER BY rowid DESC LIMIT 2000) \
         SELECT document_rowid, score FROM pool ORDER BY score, document_rowid DESC LIMIT 200"
    ))
    .expect("sql");
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut statement = ptr::null_mut();
    // SAFETY: an open connection used by this thread only, NUL-terminated texts that outlive the statement, and a
    // statement finalized before returning.
    unsafe {
        let code = ffi::sqlite3_prepare_v2(connection, sql.as_ptr(), -1, &mut statement, ptr::null_mut());
        assert_eq!(code, ffi::SQLITE_OK, "prepare");
        ffi::sqlite3_bind_text(statement, 1, expression.as_ptr(), -1, ffi::SQLITE_TRANSIENT());
        loop {
            match ffi::sqlite3_step(statement) {
                ffi::SQLITE_ROW => rows.push((
                    ffi::sqlite3_column_int64(statement, 0),
                    ffi::sqlite3_column_double(statement, 1),
                )),
                ffi::SQLITE_DONE => break,
                code => panic!(
                    "step {code}: {}",
                    CStr::from_ptr(ffi::sqlite3_errmsg(connection)).to_string_lossy()
                ),
            }
        }
        ffi::sqlite3_finalize(statement);
    }
    (rows, started.elapsed().as_micros())
}

/// The value at `fraction` of sorted `values`.
fn percentile(values: &[u128], fraction: f64) -> f64 {
    let index = ((values.len() as f64 - 1.0) * fraction).round() as usize;
    values.get(index).copied().unwrap_or(0) as f64 / 1000.0
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let (Some(database), Some(queries)) = (arguments.get(1), arguments.get(2)) else {
        eprintln!("usage: compare_bm25 DATABASE QUERIES [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = arguments.get(3).and_then(|text| text.parse().ok()).unwrap_or(3);
    let queries: Vec<CString> = std::fs::read_to_string(queries)
        .expect("queries")
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| CString::new(line).expect("query"))
        .collect();
    let path = CString::new(database.as_str()).expect("path");
    let mut connection = ptr::null_mut();
    // SAFETY: a NUL-terminated path and a valid out-pointer; the connection is registered and used by this thread.
    unsafe {
        let code = ffi::sqlite3_open_v2(path.as_ptr(), &mut connection, ffi::SQLITE_OPEN_READONLY, ptr::null());
        assert_eq!(code, ffi::SQLITE_OK, "open");
        fts5_rank::register(NonNull::new(connection).expect("connection")).expect("register");
    }
    let mut built_in = Vec::new();
    let mut ours = Vec::new();
    // The statement with no score at all: what finding the matches costs, before any ranking.
    let mut unranked = Vec::new();
    let mut differing = 0;
    for round in 0..rounds {
        for (index, expression) in queries.iter().enumerate() {
            // Alternate which goes first, so that neither always finds the pages the other just read.
            let first_ours = (round + index) % 2 == 0;
            let (ours_rows, ours_time, built_in_rows, built_in_time) = if first_ours {
                let (ours_rows, ours_time) = pool(
                    connection,
                    "interai_bm25(search_fts, 10.0, 4.0, 1.0, 0.0, 0.0)",
                    expression,
                );
                let (built_in_rows, built_in_time) =
                    pool(connection, "bm25(search_fts, 10.0, 4.0, 1.0, 0.0, 0.0)", expression);
                (ours_rows, ours_time, built_in_rows, built_in_time)
            } else {
                let (built_in_rows, built_in_time) =
                    pool(connection, "bm25(search_fts, 10.0, 4.0, 1.0, 0.0, 0.0)", expression);
                let (ours_rows, ours_time) = pool(
                    connection,
                    "interai_bm25(search_fts, 10.0, 4.0, 1.0, 0.0, 0.0)",
                    expression,
                );
                (ours_rows, ours_time, built_in_rows, built_in_time)
            };
            let (_, unranked_time) = pool(connection, "0.0", expression);
            if round > 0 {
                ours.push(ours_time);
                built_in.push(built_in_time);
                unranked.push(unranked_time);
            }
            if ours_rows != built_in_rows {
                differing += 1;
            }
        }
    }
    built_in.sort_unstable();
    ours.sort_unstable();
    unranked.sort_unstable();
    for (name, times) in [("bm25", &built_in), ("interai_bm25", &ours), ("no ranking", &unranked)] {
        println!(
            "{name:>13}: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms over {} statements",
            percentile(times, 0.5),
            percentile(times, 0.9),
            percentile(times, 0.99),
            times.len()
        );
    }
    println!("statements whose best 200 differed: {differing}");
    // SAFETY: every statement is finalized.
    unsafe { ffi::sqlite3_close(connection) };
}
