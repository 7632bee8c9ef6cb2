//! A realm's portable archive: `interai admin export` writes it, `import` loads it into an empty database of either
//! backend, `migrate` moves a realm from SQLite to PostgreSQL through one, and a backup of PostgreSQL is one
//! (`backups.rs`).
//!
//! The format (docs/archive.md) is JSON Lines: a header object, then for every table a start object, its rows as
//! JSON arrays and an end object with the row count and the SHA-256 of the rows' lines, then a trailer. The trailer
//! is how a reader knows the archive is whole; the checksums are how it knows no row changed. A reader refuses an
//! archive of a newer format version, of another schema, of another realm than the instance's, or whose rows do not
//! match their checksums, and writes nothing then: the load is one transaction (`store::portable::Load`).

use std::io::{BufRead, Read, Write};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{ErrorCode, ServiceError};
use crate::store::StoreError;
use crate::store::portable::tables::{PORTABLE_TABLES, PortableTable};
use crate::store::portable::{self, Load, RowSink};

/// What the header's `format` says.
pub const ARCHIVE_FORMAT: &str = "interai-archive";
/// The format version this build writes and the newest it reads.
pub const ARCHIVE_VERSION: u32 = 1;
/// The instance setting that names the outbox's epoch (see `service::federation::outbox_epoch`).
pub const SETTING_OUTBOX_EPOCH: &str = "outbox_epoch";
/// Rows handed to the database per call while loading.
const LOAD_BATCH_ROWS: usize = 2_000;

/// The archive's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveHeader {
    /// Always [`ARCHIVE_FORMAT`].
    pub format: String,
    /// The format version, [`ARCHIVE_VERSION`] when written by this build.
    pub version: u32,
    /// The schema the rows follow: the number of the newest migration of the database they were read from.
    pub schema: i64,
    /// The realm whose rows these are.
    pub realm: String,
    /// When the snapshot was taken.
    pub created_at: DateTime<Utc>,
    /// The backend it was read from (`sqlite` or `postgresql`), for the reader's information.
    pub source: String,
    /// The key-encryption key (base64), only when the admin asked for it to be included: without it, the instance's
    /// signing keys in the archive open only with the key kept apart (`key-encryption.key` or
    /// `INTERAI_KEY_ENCRYPTION_KEY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_encryption_key: Option<String>,
}

/// A table's start line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableStart {
    table: String,
    columns: Vec<String>,
}

/// A table's end line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableEnd {
    end: String,
    rows: u64,
    sha256: String,
}

/// The last line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Trailer {
    outbox_head: i64,
    tables: usize,
    rows: u64,
}

/// One table of an archive as written or read: how many rows, and the SHA-256 of their lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableDigest {
    /// The table.
    pub table: &'static str,
    /// Its rows.
    pub rows: u64,
    /// The SHA-256 (hex) of its row lines, each with its newline.
    pub sha256: String,
}

/// What an archive holds, as written or as loaded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchiveSummary {
    /// Its header.
    pub header: ArchiveHeader,
    /// Every table, in archive order.
    pub tables: Vec<TableDigest>,
    /// The newest outbox position the realm had given.
    pub outbox_head: i64,
}

impl ArchiveSummary {
    /// Rows in all tables.
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|table| table.rows).sum()
    }

    /// The rows of one table.
    pub fn rows_of(&self, table: &str) -> u64 {
        self.tables
            .iter()
            .find(|digest| digest.table == table)
            .map_or(0, |digest| digest.rows)
    }
}

/// Whether a loaded realm keeps the outbox epoch it was exported with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EpochOnLoad {
    /// The same outbox, moved: the source instance stopped before the archive was made and will not serve again
    /// (what `migrate` does). Peers notice nothing.
    Keep,
    /// A new epoch (this one): the archive may be older than what peers have read, so positions they read may be
    /// given again; a peer that sees the new epoch reads the outbox again from a snapshot.
    Start(String),
}

pub(super) fn archive_error(message: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::ValidationFailed, message)
}

/// A store failure while reading or loading, said in full: the admin running the command is the one to read it.
pub(super) fn database_error(error: StoreError) -> ServiceError {
    match error {
        StoreError::NotEmpty(_) | StoreError::Unloadable(_) => archive_error(error.to_string()),
        other => ServiceError::new(ErrorCode::InternalError, other.to_string()),
    }
}

pub(super) fn io_error(what: &str, error: std::io::Error) -> ServiceError {
    ServiceError::new(ErrorCode::InternalError, format!("{what}: {error}"))
}

/// Writes rows as archive lines, counting and hashing each table's.
struct ArchiveWriter<W: Write> {
    out: W,
    current: Option<(&'static PortableTable, u64, Sha256)>,
    tables: Vec<TableDigest>,
    outbox_head: i64,
    line: Vec<u8>,
}

impl<W: Write> ArchiveWriter<W> {
    fn new(out: W) -> ArchiveWriter<W> {
        ArchiveWriter {
            out,
            current: None,
            tables: Vec::new(),
            outbox_head: 0,
            line: Vec::new(),
        }
    }

    fn write_object(&mut self, object: &impl Serialize) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(object).map_err(|error| StoreError::Corrupt(error.to_string()))?;
        line.push(b'\n');
        self.out.write_all(&line).map_err(write_failure)
    }
}

fn write_failure(error: std::io::Error) -> StoreError {
    StoreError::Corrupt(format!("cannot write the archive: {error}"))
}

impl<W: Write> RowSink for ArchiveWriter<W> {
    fn table(&mut self, table: &'static PortableTable) -> Result<(), StoreError> {
        self.write_object(&TableStart {
            table: table.name.to_owned(),
            columns: table.column_names().into_iter().map(str::to_owned).collect(),
        })?;
        self.current = Some((table, 0, Sha256::new()));
        Ok(())
    }

    fn row(&mut self, values: Vec<Value>) -> Result<(), StoreError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, &values).map_err(|error| StoreError::Corrupt(error.to_string()))?;
        self.line.push(b'\n');
        if let Some((_, rows, hasher)) = &mut self.current {
            *rows += 1;
            hasher.update(&self.line);
        }
        self.out.write_all(&self.line).map_err(write_failure)
    }

    fn end_of_table(&mut self) -> Result<(), StoreError> {
        let Some((table, rows, hasher)) = self.current.take() else {
            return Ok(());
        };
        let digest = TableDigest {
            table: table.name,
            rows,
            sha256: hex::encode(hasher.finalize()),
        };
        self.write_object(&TableEnd {
            end: table.name.to_owned(),
            rows,
            sha256: digest.sha256.clone(),
        })?;
        self.tables.push(digest);
        Ok(())
    }

    fn outbox_head(&mut self, head: i64) -> Result<(), StoreError> {
        self.outbox_head = head;
        let trailer = Trailer {
            outbox_head: head,
            tables: self.tables.len(),
            rows: self.tables.iter().map(|table| table.rows).sum(),
        };
        self.write_object(&trailer)?;
        self.out.flush().map_err(write_failure)
    }
}

/// The schema number of this build: its newest migration's.
pub fn schema_version() -> i64 {
    crate::store::schema_version()
}

/// Writes the realm in the database at `url` to `out` as an archive, read in one snapshot while the instance may
/// go on serving. `key_encryption_key` is put in the header only when given.
pub async fn export(
    url: &str,
    now: DateTime<Utc>,
    key_encryption_key: Option<String>,
    out: impl Write + Send,
) -> Result<ArchiveSummary, ServiceError> {
    let realm = crate::store::settings::peek(url, super::bootstrap::SETTING_REALM)
        .await
        .map_err(database_error)?
        .ok_or_else(|| archive_error("the database holds no realm: there is nothing to export"))?;
    let header = ArchiveHeader {
        format: ARCHIVE_FORMAT.to_owned(),
        version: ARCHIVE_VERSION,
        schema: schema_version(),
        realm,
        created_at: now,
        source: crate::store::backend_of_url(url).name().to_owned(),
        key_encryption_key,
    };
    let mut writer = ArchiveWriter::new(out);
    writer.write_object(&header).map_err(database_error)?;
    portable::read_snapshot(url, &mut writer)
        .await
        .map_err(database_error)?;
    Ok(ArchiveSummary {
        header,
        tables: writer.tables,
        outbox_head: writer.outbox_head,
    })
}

/// The per-table digests of the database at `url`, read as [`export`] reads them but written nowhere: what
/// `migrate` compares with the archive it loaded.
pub async fn digest(url: &str) -> Result<(Vec<TableDigest>, i64), ServiceError> {
    let mut writer = ArchiveWriter::new(std::io::sink());
    portable::read_snapshot(url, &mut writer)
        .await
        .map_err(database_error)?;
    Ok((writer.tables, writer.outbox_head))
}

/// Reads and checks an archive's header: its format, its version and its schema. What [`import`] checks first,
/// before anything is created; also for a command that only wants to say what an archive holds.
pub fn read_header(input: &mut impl BufRead) -> Result<ArchiveHeader, ServiceError> {
    let mut line = String::new();
    read_bounded_line(input, &mut line, 1)?;
    if line.is_empty() {
        return Err(archive_error("the archive is empty"));
    }
    let header: ArchiveHeader = serde_json::from_str(&line)
        .map_err(|error| archive_error(format!("this is not an interai archive (its first line: {error})")))?;
    if header.format != ARCHIVE_FORMAT {
        return Err(archive_error(format!(
            "this is not an interai archive (format `{}`, expected `{ARCHIVE_FORMAT}`)",
            header.format
        )));
    }
    if header.version > ARCHIVE_VERSION {
        return Err(archive_error(format!(
            "the archive is of format version {}, newer than this interai reads ({ARCHIVE_VERSION}); import it with \
             the version that wrote it or a newer one",
            header.version
        )));
    }
    if header.schema != schema_version() {
        return Err(archive_error(format!(
            "the archive's rows follow schema {} and this interai's database schema {}; import it with the interai \
             version that wrote it, then upgrade",
            header.schema,
            schema_version()
        )));
    }
    Ok(header)
}

/// The longest line an archive may have. The longest row this version writes is a few MiB at most (a content
/// item's body is at most 200 KiB, and a stored activity at most a page of 900 KiB, which JSON escaping may make a
/// few times longer): a longer line is not one of its rows, and reading it whole would take the memory it claims.
pub const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads line `number` into `text`, refusing a line longer than [`MAX_LINE_BYTES`] without reading more of it.
/// Returns the bytes read (0 at the end of the file).
fn read_bounded_line(input: &mut impl BufRead, text: &mut String, number: u64) -> Result<usize, ServiceError> {
    let read = input
        .by_ref()
        .take(MAX_LINE_BYTES + 1)
        .read_line(text)
        .map_err(|error| io_error("cannot read the archive", error))?;
    if u64::try_from(read).unwrap_or(u64::MAX) > MAX_LINE_BYTES {
        return Err(archive_error(format!(
            "line {number} of the archive is longer than {} MiB: not an archive this version wrote",
            MAX_LINE_BYTES / (1024 * 1024)
        )));
    }
    Ok(read)
}

/// Reads archive lines one at a time, counting them for error messages.
struct Lines<R: BufRead> {
    input: R,
    number: u64,
    text: String,
}

impl<R: BufRead> Lines<R> {
    /// The next line without its newline; `None` at the end of the file.
    fn next(&mut self) -> Result<Option<&str>, ServiceError> {
        self.text.clear();
        let read = read_bounded_line(&mut self.input, &mut self.text, self.number + 1)?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        if !self.text.ends_with('\n') {
            return Err(archive_error(format!(
                "the archive is truncated: line {} ends without a newline",
                self.number
            )));
        }
        Ok(Some(self.text.trim_end_matches('\n')))
    }

    fn expect<T: serde::de::DeserializeOwned>(&mut self, what: &str) -> Result<T, ServiceError> {
        let number = self.number + 1;
        let line = self
            .next()?
            .ok_or_else(|| archive_error(format!("the archive is truncated: it ends where {what} belongs")))?;
        serde_json::from_str(line).map_err(|error| archive_error(format!("line {number}: not {what}: {error}")))
    }
}

/// Loads an archive into the empty database at `url`, which must belong to `realm` (the instance's configured
/// realm), in one transaction: every row or none. `header` is the one [`read_header`] read from `input`, which
/// goes on after it. The database gets this build's schema first (`store::Store::connect`, which creates it when it
/// is a SQLite file that does not exist). Refused, with nothing written: a database with rows, an archive of
/// another realm, and one that is truncated, corrupt (a line that does not parse, a row that does not fit its
/// table, a checksum that does not match) or followed by anything.
pub async fn import(
    url: &str,
    realm: &str,
    header: ArchiveHeader,
    input: impl BufRead,
    epoch: EpochOnLoad,
    now: DateTime<Utc>,
) -> Result<ArchiveSummary, ServiceError> {
    if header.realm != realm {
        return Err(archive_error(format!(
            "the archive is of realm {} but this instance's realm is {realm} (INTERAI_REALM); an archive loads only \
             into an instance of its own realm",
            header.realm
        )));
    }
    let store = crate::store::Store::connect(url, 1, std::time::Duration::from_secs(60))
        .await
        .map_err(database_error)?;
    store.close().await;
    let mut load = Load::begin(url).await.map_err(database_error)?;
    let mut lines = Lines {
        input,
        number: 1,
        text: String::new(),
    };
    let mut tables = Vec::with_capacity(PORTABLE_TABLES.len());
    for expected in PORTABLE_TABLES {
        let start: TableStart = lines.expect("a table's start")?;
        if start.table != expected.name {
            return Err(archive_error(format!(
                "line {}: table {} where {} belongs (the archive's tables are out of order or missing)",
                lines.number, start.table, expected.name
            )));
        }
        if start.columns != expected.column_names() {
            return Err(archive_error(format!(
                "line {}: table {} has columns {:?}, expected {:?}",
                lines.number,
                start.table,
                start.columns,
                expected.column_names()
            )));
        }
        let mut hasher = Sha256::new();
        let mut rows = 0_u64;
        let mut batch: Vec<Vec<Value>> = Vec::with_capacity(LOAD_BATCH_ROWS);
        let end: TableEnd = loop {
            let number = lines.number + 1;
            let line = lines.next()?.ok_or_else(|| {
                archive_error(format!(
                    "the archive is truncated: it ends inside table {}",
                    expected.name
                ))
            })?;
            if !line.starts_with('[') {
                break serde_json::from_str(line).map_err(|error| {
                    archive_error(format!(
                        "line {number}: neither a row nor the end of {}: {error}",
                        expected.name
                    ))
                })?;
            }
            hasher.update(line.as_bytes());
            hasher.update(b"\n");
            rows += 1;
            let values: Vec<Value> = serde_json::from_str(line).map_err(|error| {
                archive_error(format!(
                    "line {number}: a row of {} that is not JSON: {error}",
                    expected.name
                ))
            })?;
            batch.push(values);
            if batch.len() == LOAD_BATCH_ROWS {
                load.insert(expected, &batch).await.map_err(database_error)?;
                batch.clear();
            }
        };
        load.insert(expected, &batch).await.map_err(database_error)?;
        let sha256 = hex::encode(hasher.finalize());
        if end.end != expected.name || end.rows != rows || end.sha256 != sha256 {
            return Err(archive_error(format!(
                "table {}: the archive says {} rows with SHA-256 {}, but holds {rows} rows with SHA-256 {sha256}: it \
                 is corrupt",
                expected.name, end.rows, end.sha256
            )));
        }
        tables.push(TableDigest {
            table: expected.name,
            rows,
            sha256,
        });
    }
    let trailer: Trailer = lines.expect("the archive's last line")?;
    let total: u64 = tables.iter().map(|table| table.rows).sum();
    if trailer.tables != tables.len() || trailer.rows != total {
        return Err(archive_error(format!(
            "the archive's last line says {} tables and {} rows, but it holds {} and {total}: it is corrupt",
            trailer.tables,
            trailer.rows,
            tables.len()
        )));
    }
    if lines.next()?.is_some() {
        return Err(archive_error(format!(
            "line {}: the archive goes on after its last line",
            lines.number
        )));
    }
    if let EpochOnLoad::Start(new_epoch) = &epoch {
        // In the same transaction as the rows: a restore that kept the old epoch would let peers skip its events.
        load.put_setting(SETTING_OUTBOX_EPOCH, new_epoch, now)
            .await
            .map_err(database_error)?;
    }
    load.finish(trailer.outbox_head).await.map_err(database_error)?;
    Ok(ArchiveSummary {
        header,
        tables,
        outbox_head: trailer.outbox_head,
    })
}

/// [`export`] into the new file `path` (mode 0600, never over an existing file), written through to the disk; a
/// failed export leaves no file.
pub async fn export_to_file(
    url: &str,
    path: &std::path::Path,
    now: DateTime<Utc>,
    key_encryption_key: Option<String>,
) -> Result<ArchiveSummary, ServiceError> {
    export_to_file_paced(url, path, now, key_encryption_key, None).await
}

/// [`export_to_file`], writing at most `max_bytes_per_second` on average when given. The pace is kept by sleeping
/// the thread the export runs on, so only an export on a thread of its own may be paced (a backup's: see
/// `backups.rs`).
pub(super) async fn export_to_file_paced(
    url: &str,
    path: &std::path::Path,
    now: DateTime<Utc>,
    key_encryption_key: Option<String>,
    max_bytes_per_second: Option<u64>,
) -> Result<ArchiveSummary, ServiceError> {
    let file = create_private_file(path)?;
    let mut out = std::io::BufWriter::new(PacedWriter::new(file, max_bytes_per_second));
    let written = async {
        let summary = export(url, now, key_encryption_key, &mut out).await?;
        out.flush().map_err(|error| io_error("writing the archive", error))?;
        out.get_ref()
            .inner
            .sync_all()
            .map_err(|error| io_error("writing the archive", error))?;
        Ok(summary)
    }
    .await;
    if written.is_err() {
        drop(out);
        let _ = std::fs::remove_file(path);
    }
    written
}

/// A file written at most `max_bytes_per_second` on average (all it can when `None`). Behind the archive's buffer,
/// so it sees writes of the buffer's size, not one per row. Ahead of its pace, it sleeps the thread it writes on.
///
/// Why: on PostgreSQL reading and encoding the archive takes as much CPU as it can get, and on the two-core test
/// machine the writers' publish p99 went from 7–9 ms to 23–32 ms during a full-speed backup of a 100,000-item realm
/// (9–16 s); paced to 40 MiB/s its 949 MiB took 24 s and their p99 was 16 ms (docs/benchmarks.md, "Backup pace").
/// Real time, not the injected clock: the pace shares the machine's cores, whatever time the realm's clock says.
struct PacedWriter<W> {
    inner: W,
    max_bytes_per_second: Option<u64>,
    started: std::time::Instant,
    written: u64,
}

impl<W> PacedWriter<W> {
    fn new(inner: W, max_bytes_per_second: Option<u64>) -> PacedWriter<W> {
        PacedWriter {
            inner,
            max_bytes_per_second: max_bytes_per_second.filter(|rate| *rate > 0),
            started: std::time::Instant::now(),
            written: 0,
        }
    }
}

impl<W: Write> Write for PacedWriter<W> {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(buffer)?;
        if let Some(rate) = self.max_bytes_per_second {
            self.written = self.written.saturating_add(u64::try_from(written).unwrap_or(u64::MAX));
            #[allow(clippy::cast_precision_loss)]
            let due = std::time::Duration::from_secs_f64(self.written as f64 / rate as f64);
            let elapsed = self.started.elapsed();
            if due > elapsed {
                std::thread::sleep(due - elapsed);
            }
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Creates `path` new (never over an existing file), readable by its owner only: an archive holds key hashes and
/// everything the realm knows.
fn create_private_file(path: &std::path::Path) -> Result<std::fs::File, ServiceError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .map_err(|error| io_error(&format!("creating {}", path.display()), error))
}

/// What [`migrate`] copied and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Migration {
    /// The archive written from the source, as loaded into the target.
    pub copied: ArchiveSummary,
}

/// Moves a realm from the database at `source` to the empty one at `target` (of either backend) with its outbox
/// epoch kept, through an archive at `work_file` (a new file, removed at the end), and checks it: the source read
/// again must give the same tables (else it changed meanwhile: the instance was still serving), and the target read
/// back must give every table's row count and SHA-256 as the source did. `interai admin migrate` runs it.
pub async fn migrate(
    source: &str,
    target: &str,
    work_file: &std::path::Path,
    now: DateTime<Utc>,
) -> Result<Migration, ServiceError> {
    let result = migrate_through(source, target, work_file, now).await;
    let _ = std::fs::remove_file(work_file);
    result
}

async fn migrate_through(
    source: &str,
    target: &str,
    work_file: &std::path::Path,
    now: DateTime<Utc>,
) -> Result<Migration, ServiceError> {
    let written = export_to_file(source, work_file, now, None).await?;
    let mut input = std::io::BufReader::new(
        std::fs::File::open(work_file).map_err(|error| io_error("reading the archive back", error))?,
    );
    let header = read_header(&mut input)?;
    let realm = header.realm.clone();
    let loaded = import(target, &realm, header, input, EpochOnLoad::Keep, now).await?;
    let (source_again, _) = digest(source).await?;
    if source_again != written.tables {
        return Err(archive_error(
            "the source database changed while it was copied (was the instance still serving?): stop it, empty the \
             target database and migrate again",
        ));
    }
    let (copy, copy_head) = digest(target).await?;
    if copy != written.tables || copy_head < written.outbox_head || loaded.tables != written.tables {
        let differing: Vec<&str> = written
            .tables
            .iter()
            .zip(&copy)
            .filter(|(source, copy)| source != copy)
            .map(|(source, _)| source.table)
            .collect();
        return Err(ServiceError::new(
            ErrorCode::InternalError,
            format!(
                "the copy differs from the source in {}; keep serving from the source and report this",
                differing.join(", ")
            ),
        ));
    }
    Ok(Migration { copied: written })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::PacedWriter;

    #[test]
    fn a_paced_writer_writes_everything_and_takes_at_least_its_bytes_over_its_rate() {
        let started = std::time::Instant::now();
        let mut out = PacedWriter::new(Vec::new(), Some(1024 * 1024));
        for _ in 0..32 {
            out.write_all(&[7_u8; 8 * 1024]).expect("written");
        }
        out.flush().expect("flushed");
        // 256 KiB at 1 MiB/s: a quarter of a second at least (a bound below, which a slow machine cannot break).
        assert!(started.elapsed() >= std::time::Duration::from_millis(250));
        assert_eq!(out.inner, vec![7_u8; 256 * 1024]);

        let mut unpaced = PacedWriter::new(Vec::new(), Some(0));
        unpaced.write_all(&[1_u8; 1024]).expect("written");
        assert_eq!(unpaced.max_bytes_per_second, None, "a rate of 0 is no pace");
        assert_eq!(unpaced.inner.len(), 1024);
    }
}
