//! An FTS5 ranking function for SQLite, `interai_bm25`: the score of FTS5's own `bm25()`, by the same formula and
//! the same arithmetic, but with what `bm25()` looks up again in every statement remembered by the connection.
//!
//! Why it exists: `bm25()` pays twice for facts that rarely change. It starts every statement by counting, for each
//! phrase of the query, every document that contains it (walking the phrase's whole doclist, even for phrases
//! that can never add to a score: filter terms in columns weighted zero, excluded words). And for every matching
//! row it reads the row's length from the index's `_docsize` table, which is most of its cost per row. This
//! function counts a phrase's documents only the first time a matching row holds it in a column of non-zero
//! weight, and keeps those counts and the lengths of the rows it has scored on the connection until the table's
//! row count or total token count changes (any insert or delete, and nearly every update, changes one of them;
//! then everything is forgotten and learnt again). A read-mostly database therefore ranks from memory, and one
//! that is written all the time costs what `bm25()` costs.
//!
//! The remembered counts are keyed by each phrase's tokens. That is exact for interai's queries, where a phrase's
//! matches depend only on its tokens (no prefix queries, and a column filter never changes what a phrase matches;
//! see the store's search module). A caller whose queries do otherwise must not use this function. The memory is
//! the connection's, not a table's: a connection that ranked two tables with it would stay correct (their totals
//! differ, so each switch starts the memory over) but would gain nothing; interai ranks one table.
//!
//! This crate is the workspace's only unsafe code: the FTS5 extension API is C and has no safe binding.

use std::collections::HashMap;
use std::ffi::{CStr, c_int, c_void};
use std::ptr::{self, NonNull};
use std::sync::Mutex;

use libsqlite3_sys as ffi;

/// The SQL name of the ranking function. Call it like `bm25`: `interai_bm25(table, weight, weight, …)`.
pub const FUNCTION_NAME: &CStr = c"interai_bm25";

/// BM25's term-frequency saturation, as in FTS5's `bm25()`.
const K1: f64 = 1.2;
/// BM25's length normalization, as in FTS5's `bm25()`.
const B: f64 = 0.75;
/// How many phrases' counts a connection keeps; past this the memory starts over (a bound, not a tuning knob).
const MAX_REMEMBERED_PHRASES: usize = 16_384;
/// How many rows' lengths a connection keeps (about 6 MB); past this, further lengths are read from the index each
/// time rather than evicting others.
const MAX_REMEMBERED_LENGTHS: usize = 1 << 18;

/// Why the function could not be registered on a connection.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// The connection's SQLite was built without FTS5, or the API could not be fetched.
    #[error("this SQLite connection offers no FTS5 API (SQLite code {0})")]
    NoFts5(c_int),
    /// The FTS5 API predates auxiliary functions.
    #[error("this SQLite's FTS5 API is version {0}; version 2 or later is needed")]
    OldApi(c_int),
    /// FTS5 refused to create the function.
    #[error("FTS5 refused to create the ranking function (SQLite code {0})")]
    Refused(c_int),
}

/// Document counts and row lengths a connection has seen, valid while the table's row and token totals stay as
/// they were.
struct Remembered {
    rows: i64,
    tokens: i64,
    documents_by_phrase: HashMap<Vec<u8>, i64>,
    length_by_rowid: HashMap<i64, c_int>,
}

/// What one connection keeps between statements; owned by FTS5 once registered, freed when the connection closes.
struct ConnectionMemory {
    remembered: Mutex<Remembered>,
}

/// What one statement keeps between rows (FTS5 "auxiliary data", freed when the statement's cursor closes).
struct StatementState {
    rows: i64,
    tokens: i64,
    average_length: f64,
    /// Each phrase's tokens, NUL-separated, or `None` when this SQLite cannot report them (nothing is remembered).
    keys: Option<Vec<Vec<u8>>>,
    /// Each phrase's IDF, once it is known.
    inverse_document_frequencies: Vec<Option<f64>>,
    /// Scratch space: each phrase's weighted frequency in the current row.
    frequencies: Vec<f64>,
}

/// Registers [`FUNCTION_NAME`] on the sqlx SQLite connection whose handle is locked.
pub fn register_on(handle: &mut sqlx::sqlite::LockedSqliteHandle<'_>) -> Result<(), RegisterError> {
    // SAFETY: a locked handle is an open connection that no other thread uses while the lock is held.
    unsafe { register(handle.as_raw_handle()) }
}

/// Registers [`FUNCTION_NAME`] on a connection.
///
/// # Safety
///
/// `connection` must be an open SQLite connection that no other thread uses during the call.
pub unsafe fn register(connection: NonNull<ffi::sqlite3>) -> Result<(), RegisterError> {
    // SAFETY: the caller hands over an open connection used by nobody else for now.
    let api = unsafe { fts5_api(connection.as_ptr()) }?;
    // SAFETY: `fts5_api` returned a non-null pointer that FTS5 keeps alive as long as the connection.
    let (version, create_function) = unsafe { ((*api).iVersion, (*api).xCreateFunction) };
    let create_function = match create_function {
        Some(create_function) if version >= 2 => create_function,
        _ => return Err(RegisterError::OldApi(version)),
    };
    let memory = Box::into_raw(Box::new(ConnectionMemory {
        remembered: Mutex::new(Remembered {
            rows: -1,
            tokens: -1,
            documents_by_phrase: HashMap::new(),
            length_by_rowid: HashMap::new(),
        }),
    }));
    // SAFETY: the name is a NUL-terminated constant; FTS5 takes ownership of `memory` and frees it with
    // `forget_connection` when the connection closes.
    let code = unsafe {
        create_function(
            api,
            FUNCTION_NAME.as_ptr(),
            memory.cast(),
            Some(rank),
            Some(forget_connection),
        )
    };
    if code != ffi::SQLITE_OK {
        // FTS5 does not call the destructor when creation fails, so the memory is still ours.
        // SAFETY: `memory` came from `Box::into_raw` above and nothing else refers to it.
        drop(unsafe { Box::from_raw(memory) });
        return Err(RegisterError::Refused(code));
    }
    Ok(())
}

/// The connection's FTS5 API, fetched the documented way: `SELECT fts5(?1)` with a pointer bound to `?1`.
///
/// # Safety
///
/// `connection` must be an open SQLite connection that no other thread uses during the call.
unsafe fn fts5_api(connection: *mut ffi::sqlite3) -> Result<*mut ffi::fts5_api, RegisterError> {
    let mut statement: *mut ffi::sqlite3_stmt = ptr::null_mut();
    // SAFETY: the SQL is a NUL-terminated constant and `statement` receives the prepared statement.
    let code = unsafe {
        ffi::sqlite3_prepare_v2(
            connection,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut statement,
            ptr::null_mut(),
        )
    };
    if code != ffi::SQLITE_OK {
        return Err(RegisterError::NoFts5(code));
    }
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    // SAFETY: FTS5 writes the API pointer through the bound pointer while the statement steps; `api` outlives the
    // statement, which is finalized before this function returns.
    let stepped = unsafe {
        ffi::sqlite3_bind_pointer(statement, 1, (&raw mut api).cast(), c"fts5_api_ptr".as_ptr(), None);
        let stepped = ffi::sqlite3_step(statement);
        ffi::sqlite3_finalize(statement);
        stepped
    };
    if api.is_null() {
        return Err(RegisterError::NoFts5(stepped));
    }
    Ok(api)
}

/// Frees a connection's memory; FTS5 calls it when the connection closes.
unsafe extern "C" fn forget_connection(memory: *mut c_void) {
    // SAFETY: FTS5 passes back the pointer `register` gave it, exactly once.
    drop(unsafe { Box::from_raw(memory.cast::<ConnectionMemory>()) });
}

/// Frees a statement's state; FTS5 calls it when the statement's cursor closes.
unsafe extern "C" fn forget_statement(state: *mut c_void) {
    // SAFETY: FTS5 passes back the pointer `statement_state` gave it, exactly once.
    drop(unsafe { Box::from_raw(state.cast::<StatementState>()) });
}

/// The auxiliary function FTS5 calls for each row.
unsafe extern "C" fn rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    context: *mut ffi::sqlite3_context,
    value_count: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes its API, the row's context and the call's arguments, all valid during this call.
    unsafe {
        match score(&*api, fts, value_count, values) {
            Ok(score) => ffi::sqlite3_result_double(context, score),
            Err(code) => ffi::sqlite3_result_error_code(context, code),
        }
    }
}

/// Turns an FTS5 return code into a result.
fn check(code: c_int) -> Result<(), c_int> {
    if code == ffi::SQLITE_OK { Ok(()) } else { Err(code) }
}

/// The API function in `slot`, or SQLITE_MISUSE when this SQLite lacks it.
fn function<F>(slot: Option<F>) -> Result<F, c_int> {
    slot.ok_or(ffi::SQLITE_MISUSE)
}

/// BM25's IDF of a phrase that `documents` of `rows` documents contain, exactly as FTS5's `bm25()` computes it.
fn inverse_document_frequency(rows: i64, documents: i64) -> f64 {
    let idf = (((rows - documents) as f64 + 0.5) / (documents as f64 + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// The current row's score: minus its BM25, lower for better matches, as `bm25()` returns it.
///
/// # Safety
///
/// The arguments must be those FTS5 passed to [`rank`].
unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    value_count: c_int,
    values: *mut *mut ffi::sqlite3_value,
) -> Result<f64, c_int> {
    // SAFETY: as for this function.
    let state = unsafe { statement_state(api, fts) }?;
    state.frequencies.fill(0.0);
    let mut instances: c_int = 0;
    // SAFETY: `fts` is the row's context; the out-pointers are valid locals.
    check(unsafe { function(api.xInstCount)?(fts, &mut instances) })?;
    for instance in 0..instances {
        let (mut phrase, mut column, mut offset) = (0, 0, 0);
        // SAFETY: `instance` is below the count FTS5 just reported.
        check(unsafe { function(api.xInst)?(fts, instance, &mut phrase, &mut column, &mut offset) })?;
        let weight = if column < value_count {
            // SAFETY: `column` indexes one of the `value_count` arguments FTS5 passed.
            unsafe { ffi::sqlite3_value_double(*values.add(column as usize)) }
        } else {
            1.0
        };
        if let Some(frequency) = usize::try_from(phrase)
            .ok()
            .and_then(|phrase| state.frequencies.get_mut(phrase))
        {
            *frequency += weight;
        }
    }
    // SAFETY: as for this function.
    let length = f64::from(unsafe { row_length(api, fts, state) }?);
    let mut score = 0.0;
    for phrase in 0..state.frequencies.len() {
        let frequency = state.frequencies[phrase];
        // `bm25()` adds IDF × 0 for a phrase the row does not hold in a weighted column; skipping it changes
        // nothing and spares counting the documents of a phrase no row will need.
        if frequency == 0.0 {
            continue;
        }
        let idf = match state.inverse_document_frequencies[phrase] {
            Some(idf) => idf,
            None => {
                // SAFETY: as for this function; `phrase` is below the phrase count.
                let idf = unsafe { learn_inverse_document_frequency(api, fts, state, phrase) }?;
                state.inverse_document_frequencies[phrase] = Some(idf);
                idf
            }
        };
        // Grouped as FTS5 groups it, so that the result is the same to the last bit.
        score += idf * ((frequency * (K1 + 1.0)) / (frequency + K1 * (1.0 - B + B * length / state.average_length)));
    }
    Ok(-score)
}

/// The statement's state, created on its first row from the table's totals and what the connection remembers.
///
/// # Safety
///
/// The arguments must be those FTS5 passed to [`rank`]; the returned reference must not outlive that call.
unsafe fn statement_state<'a>(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<&'a mut StatementState, c_int> {
    // SAFETY: `fts` is the row's context.
    let existing = unsafe { function(api.xGetAuxdata)?(fts, 0) };
    if !existing.is_null() {
        // SAFETY: the only auxiliary data this function sets is a `StatementState`, alive until the cursor closes.
        return Ok(unsafe { &mut *existing.cast::<StatementState>() });
    }
    // SAFETY: `fts` is the row's context; the out-pointers are valid locals.
    let (phrase_count, rows, tokens) = unsafe {
        let phrase_count = usize::try_from(function(api.xPhraseCount)?(fts)).map_err(|_| ffi::SQLITE_CORRUPT)?;
        let mut rows: ffi::sqlite3_int64 = 0;
        check(function(api.xRowCount)?(fts, &mut rows))?;
        let mut tokens: ffi::sqlite3_int64 = 0;
        check(function(api.xColumnTotalSize)?(fts, -1, &mut tokens))?;
        (phrase_count, rows, tokens)
    };
    // SAFETY: as for this function.
    let keys = unsafe { phrase_keys(api, fts, phrase_count) }?;
    let mut inverse_document_frequencies = vec![None; phrase_count];
    if let Some(keys) = &keys {
        // SAFETY: as for this function.
        let memory = unsafe { connection_memory(api, fts) }?;
        let mut remembered = memory
            .remembered
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if remembered.rows != rows || remembered.tokens != tokens {
            remembered.rows = rows;
            remembered.tokens = tokens;
            remembered.documents_by_phrase.clear();
            remembered.length_by_rowid.clear();
        }
        for (known, key) in inverse_document_frequencies.iter_mut().zip(keys) {
            *known = remembered
                .documents_by_phrase
                .get(key)
                .map(|documents| inverse_document_frequency(rows, *documents));
        }
    }
    let state = Box::into_raw(Box::new(StatementState {
        rows,
        tokens,
        average_length: tokens as f64 / rows as f64,
        keys,
        inverse_document_frequencies,
        frequencies: vec![0.0; phrase_count],
    }));
    // SAFETY: FTS5 owns `state` from here and frees it with `forget_statement` (also when setting it fails).
    check(unsafe { function(api.xSetAuxdata)?(fts, state.cast(), Some(forget_statement)) })?;
    // SAFETY: FTS5 keeps `state` alive until the cursor closes, after this call.
    Ok(unsafe { &mut *state })
}

/// Each phrase's tokens, NUL-separated, or `None` when this SQLite's FTS5 cannot report them.
///
/// # Safety
///
/// The arguments must be those FTS5 passed to [`rank`].
unsafe fn phrase_keys(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    phrase_count: usize,
) -> Result<Option<Vec<Vec<u8>>>, c_int> {
    let (Some(query_token), Some(phrase_size)) = (api.xQueryToken, api.xPhraseSize) else {
        return Ok(None);
    };
    if api.iVersion < 3 {
        return Ok(None);
    }
    let mut keys = Vec::with_capacity(phrase_count);
    for phrase in 0..phrase_count {
        let phrase = c_int::try_from(phrase).map_err(|_| ffi::SQLITE_CORRUPT)?;
        // SAFETY: `phrase` is below the phrase count.
        let size = unsafe { phrase_size(fts, phrase) };
        let mut key = Vec::new();
        for token in 0..size {
            let mut text: *const std::ffi::c_char = ptr::null();
            let mut text_length: c_int = 0;
            // SAFETY: `token` is below the phrase's size; FTS5 points `text` at `text_length` bytes it owns.
            check(unsafe { query_token(fts, phrase, token, &mut text, &mut text_length) })?;
            if !text.is_null() && text_length > 0 {
                // SAFETY: FTS5 reported `text_length` readable bytes at `text`.
                key.extend_from_slice(unsafe { std::slice::from_raw_parts(text.cast::<u8>(), text_length as usize) });
            }
            key.push(0);
        }
        keys.push(key);
    }
    Ok(Some(keys))
}

/// The current row's length in tokens (all columns), as remembered by the connection or read from the index.
///
/// # Safety
///
/// The arguments must be those FTS5 passed to [`rank`].
unsafe fn row_length(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    state: &StatementState,
) -> Result<c_int, c_int> {
    // SAFETY: `fts` is the row's context.
    let rowid = unsafe { function(api.xRowid)?(fts) };
    // SAFETY: as for this function.
    let memory = unsafe { connection_memory(api, fts) }?;
    {
        let remembered = memory
            .remembered
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if remembered.rows == state.rows
            && remembered.tokens == state.tokens
            && let Some(length) = remembered.length_by_rowid.get(&rowid)
        {
            return Ok(*length);
        }
    }
    let mut length: c_int = 0;
    // SAFETY: column -1 asks for the row's total size; the out-pointer is a valid local.
    check(unsafe { function(api.xColumnSize)?(fts, -1, &mut length) })?;
    let mut remembered = memory
        .remembered
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if remembered.rows == state.rows
        && remembered.tokens == state.tokens
        && remembered.length_by_rowid.len() < MAX_REMEMBERED_LENGTHS
    {
        remembered.length_by_rowid.insert(rowid, length);
    }
    Ok(length)
}

/// The memory of the connection the statement runs on.
///
/// # Safety
///
/// The arguments must be those FTS5 passed to [`rank`].
unsafe fn connection_memory<'a>(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<&'a ConnectionMemory, c_int> {
    // SAFETY: the function's user data is the `ConnectionMemory` given at registration, alive with the connection.
    let memory = unsafe { function(api.xUserData)?(fts) };
    if memory.is_null() {
        return Err(ffi::SQLITE_MISUSE);
    }
    // SAFETY: as above.
    Ok(unsafe { &*memory.cast::<ConnectionMemory>() })
}

/// Counts a phrase's documents (as `bm25()` does, with FTS5's phrase query), remembers the count on the connection
/// and returns the phrase's IDF.
///
/// # Safety
///
/// The arguments must be those FTS5 passed to [`rank`]; `phrase` must be below the phrase count.
unsafe fn learn_inverse_document_frequency(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    state: &StatementState,
    phrase: usize,
) -> Result<f64, c_int> {
    let mut documents: i64 = 0;
    let phrase_index = c_int::try_from(phrase).map_err(|_| ffi::SQLITE_CORRUPT)?;
    // SAFETY: FTS5 calls `count_document` once per document holding the phrase, with `documents` as its user data,
    // before `xQueryPhrase` returns.
    check(unsafe {
        function(api.xQueryPhrase)?(fts, phrase_index, (&raw mut documents).cast(), Some(count_document))
    })?;
    if let Some(key) = state.keys.as_ref().and_then(|keys| keys.get(phrase)) {
        // SAFETY: as for this function.
        let memory = unsafe { connection_memory(api, fts) }?;
        let mut remembered = memory
            .remembered
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Another statement on this connection may have seen the table change since this one started; its
        // counts are not this statement's to overwrite.
        if remembered.rows == state.rows && remembered.tokens == state.tokens {
            if remembered.documents_by_phrase.len() >= MAX_REMEMBERED_PHRASES {
                remembered.documents_by_phrase.clear();
            }
            remembered.documents_by_phrase.insert(key.clone(), documents);
        }
    }
    Ok(inverse_document_frequency(state.rows, documents))
}

/// The phrase-query callback: one more document holds the phrase.
unsafe extern "C" fn count_document(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    documents: *mut c_void,
) -> c_int {
    // SAFETY: the user data is the `i64` counter `learn_inverse_document_frequency` passed.
    unsafe { *documents.cast::<i64>() += 1 };
    ffi::SQLITE_OK
}

#[cfg(test)]
mod tests;
