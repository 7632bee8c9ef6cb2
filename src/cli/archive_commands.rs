//! `interai admin backup|restore|export|import|migrate`: the commands that copy a realm's data out of its database
//! and back, run without opening the instance (a restore's database must stay empty until the load commits).

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::instance::{existing_key_encryption_key, keep_key_encryption_key, sqlite_path, url_without_password};
use crate::service::archive::{self, ArchiveHeader, ArchiveSummary, EpochOnLoad};
use crate::service::backups::{self, BackupKind, BackupPace};
use crate::store::Backend;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// `interai admin backup --to PATH`: a consistent copy of the running instance, writers going on meanwhile.
pub async fn backup(
    config: &Config,
    to: &Path,
    include_key_encryption_key: bool,
    pace: BackupPace,
) -> anyhow::Result<()> {
    refuse_existing(to)?;
    let instance = crate::instance::Instance::open_existing(config.clone(), std::sync::Arc::new(SystemClock)).await?;
    let key =
        if include_key_encryption_key {
            Some(existing_key_encryption_key(config)?.context(
                "there is no key-encryption key to include (INTERAI_KEY_ENCRYPTION_KEY or key-encryption.key)",
            )?)
        } else {
            None
        };
    let outcome = backups::backup(&config.database_url, to, SystemClock.now(), key.clone(), pace).await;
    let recorded = instance.service().record_backup(to, &outcome).await;
    instance.close().await;
    let report = outcome?;
    recorded?;
    let key_path = match (report.kind, key) {
        (BackupKind::DatabaseFile, Some(key)) => {
            let path = key_file_beside(to);
            crate::instance::write_secret_file(&path, &key).with_context(|| format!("writing {}", path.display()))?;
            Some(path)
        }
        (BackupKind::Archive, Some(_)) => Some(to.to_path_buf()),
        (_, None) => None,
    };
    let what = match (report.kind, report.rows) {
        (BackupKind::DatabaseFile, _) => "a SQLite database file".to_owned(),
        (BackupKind::Archive, rows) => format!("an archive of {} rows", rows.unwrap_or(0)),
    };
    println!(
        "Backed up {} to {} ({what}, {}, in {:.1} s).",
        url_without_password(&config.database_url),
        to.display(),
        human_bytes(report.bytes),
        report.took.as_secs_f64()
    );
    println!(
        "It holds every table of the realm as of one moment: actors, key hashes, content, claims, evidence, peers \
         with their pinned keys and cursors, the outbox, and the instance's signing keys, sealed."
    );
    key_advice(config, key_path.as_deref());
    println!(
        "Restore it into an empty database with: interai admin restore --from {}",
        to.display()
    );
    if report.kind == BackupKind::Archive {
        println!(
            "PostgreSQL's own tools are the other way: pg_dump --format=custom of this database (docs/backups.md)."
        );
    }
    Ok(())
}

/// `interai admin export --to FILE`.
pub async fn export(config: &Config, to: &Path, include_key_encryption_key: bool) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    refuse_existing(to)?;
    let summary = export_to_file(config, to, include_key_encryption_key).await?;
    println!(
        "Exported realm {} to {}: {} rows in {} tables, {}, in {:.1} s.",
        summary.header.realm,
        to.display(),
        summary.rows(),
        summary.tables.len(),
        human_bytes(std::fs::metadata(to)?.len()),
        started.elapsed().as_secs_f64()
    );
    print_tables(&summary);
    key_advice(config, include_key_encryption_key.then_some(to));
    Ok(())
}

/// `interai admin import --from FILE`.
pub async fn import(
    config: &Config,
    realm_configured: bool,
    from: &Path,
    keep_outbox_epoch: bool,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let epoch = if keep_outbox_epoch {
        EpochOnLoad::Keep
    } else {
        EpochOnLoad::Start(new_epoch())
    };
    let summary = import_file(config, realm_configured, from, epoch).await?;
    println!(
        "Imported realm {} into {}: {} rows in {} tables, in {:.1} s.",
        summary.header.realm,
        url_without_password(&config.database_url),
        summary.rows(),
        summary.tables.len(),
        started.elapsed().as_secs_f64()
    );
    if keep_outbox_epoch {
        println!("The outbox keeps its epoch: peers go on from where they were.");
    } else {
        println!(
            "The outbox starts a new epoch: each peer reads it again from a snapshot on its next pull, so nothing \
             written after this archive was made is skipped."
        );
    }
    println!("Start serving with: interai serve");
    Ok(())
}

/// `interai admin restore --from PATH`: a backup (a SQLite database file or an archive) into the configured,
/// empty database, with a new outbox epoch.
pub async fn restore(config: &Config, realm_configured: bool, from: &Path) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let mut magic = [0_u8; 16];
    let is_sqlite_file = std::fs::File::open(from)
        .with_context(|| format!("opening {}", from.display()))?
        .read_exact(&mut magic)
        .is_ok()
        && &magic == SQLITE_MAGIC;
    let summary = if is_sqlite_file {
        // The backup's own schema may be older: it is copied and brought up to this version first, and read from
        // there, never changed in place.
        let work = temporary_beside(config, "restore.sqlite")?;
        std::fs::copy(from, &work).with_context(|| format!("copying {}", from.display()))?;
        let work_url = format!("sqlite://{}", work.display());
        let store = crate::store::Store::connect(&work_url, 1, std::time::Duration::from_secs(60)).await?;
        store.close().await;
        let archive_path = temporary_beside(config, "restore.archive")?;
        let result = async {
            archive::export_to_file(&work_url, &archive_path, SystemClock.now(), None).await?;
            import_file(config, realm_configured, &archive_path, EpochOnLoad::Start(new_epoch())).await
        }
        .await;
        remove_with_companions(&work);
        let _ = std::fs::remove_file(&archive_path);
        result?
    } else {
        import_file(config, realm_configured, from, EpochOnLoad::Start(new_epoch())).await?
    };
    println!(
        "Restored realm {} from {} into {}: {} rows in {} tables, in {:.1} s.",
        summary.header.realm,
        from.display(),
        url_without_password(&config.database_url),
        summary.rows(),
        summary.tables.len(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "The outbox starts a new epoch: each peer reads it again from a snapshot on its next pull, so what this \
         instance writes from now on is not mistaken for what peers read before the backup was made."
    );
    println!("Start serving with: interai serve");
    Ok(())
}

/// `interai admin migrate --to postgres://…`: the realm from its SQLite database into an empty PostgreSQL one,
/// checked table by table.
pub async fn migrate(config: &Config, to: &str) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    if crate::store::backend_of_url(&config.database_url) != Backend::Sqlite {
        bail!(
            "the configured database is {}, not SQLite: migrate moves a realm from SQLite to PostgreSQL (between \
             PostgreSQL databases, use pg_dump or export and import)",
            url_without_password(&config.database_url)
        );
    }
    if crate::store::backend_of_url(to) != Backend::Postgres {
        bail!("--to must be a PostgreSQL URL (postgres://…)");
    }
    let archive_path = temporary_beside(config, "migrate.archive")?;
    let written = archive::migrate(&config.database_url, to, &archive_path, SystemClock.now())
        .await?
        .copied;
    println!(
        "Migrated realm {} from {} to {}: {} rows in {} tables, each table's row count and SHA-256 checked on both \
         sides, in {:.1} s.",
        written.header.realm,
        url_without_password(&config.database_url),
        url_without_password(to),
        written.rows(),
        written.tables.len(),
        started.elapsed().as_secs_f64()
    );
    print_tables(&written);
    println!(
        "Peers notice nothing: the same realm, keys and outbox (epoch and positions). Serve from PostgreSQL with the \
         same data directory (it holds key-encryption.key and admin.key):"
    );
    println!();
    println!("  export INTERAI_DATABASE_URL='{}'", url_without_password(to));
    println!("  interai serve");
    println!();
    println!(
        "Keep {} until you are content; do not serve from it again (peers would see two different instances of one \
         realm).",
        sqlite_path(&config.database_url)
            .map_or_else(|| config.database_url.clone(), |path| path.display().to_string())
    );
    Ok(())
}

async fn export_to_file(
    config: &Config,
    to: &Path,
    include_key_encryption_key: bool,
) -> anyhow::Result<ArchiveSummary> {
    let key =
        if include_key_encryption_key {
            Some(existing_key_encryption_key(config)?.context(
                "there is no key-encryption key to include (INTERAI_KEY_ENCRYPTION_KEY or key-encryption.key)",
            )?)
        } else {
            None
        };
    Ok(archive::export_to_file(&config.database_url, to, SystemClock.now(), key).await?)
}

async fn import_file(
    config: &Config,
    realm_configured: bool,
    from: &Path,
    epoch: EpochOnLoad,
) -> anyhow::Result<ArchiveSummary> {
    let mut input = BufReader::new(std::fs::File::open(from).with_context(|| format!("opening {}", from.display()))?);
    let header = archive::read_header(&mut input)?;
    let realm = if realm_configured {
        config.realm.clone()
    } else {
        header.realm.clone()
    };
    refuse_mismatched_key(config, &header)?;
    let summary = load_with_header(&config.database_url, &realm, header, input, epoch).await?;
    match (&summary.header.key_encryption_key, existing_key_encryption_key(config)?) {
        (Some(key), None) => {
            let path = keep_key_encryption_key(config, key)?;
            println!("The archive's key-encryption key is now in {}.", path.display());
        }
        (None, None) => println!(
            "This data directory has no key-encryption key yet: put the one of the instance the archive came from in              {} (or set INTERAI_KEY_ENCRYPTION_KEY) before `interai serve`, or its signing keys will not open.",
            config.data_dir.join(crate::instance::KEY_ENCRYPTION_KEY_FILE).display()
        ),
        _ => {}
    }
    Ok(summary)
}

async fn load_with_header(
    url: &str,
    realm: &str,
    header: ArchiveHeader,
    input: impl std::io::BufRead,
    epoch: EpochOnLoad,
) -> anyhow::Result<ArchiveSummary> {
    if let Some(directory) = sqlite_path(url).as_deref().and_then(Path::parent)
        && !directory.as_os_str().is_empty()
    {
        crate::instance::create_private_directory(directory)?;
    }
    if let Some(path) = sqlite_path(url)
        && std::fs::metadata(&path).is_ok_and(|metadata| metadata.len() > 0)
        && crate::store::settings::peek(url, crate::service::bootstrap::SETTING_REALM)
            .await?
            .is_some()
    {
        bail!(
            "{} already holds a realm: a load goes only into an empty database (move the file away, or set \
             INTERAI_DATABASE_URL to a new one)",
            path.display()
        );
    }
    Ok(archive::import(url, realm, header, input, epoch, SystemClock.now()).await?)
}

/// Refuses an archive whose key-encryption key differs from the one this instance already has: its signing keys
/// would not open.
fn refuse_mismatched_key(config: &Config, header: &ArchiveHeader) -> anyhow::Result<()> {
    if let (Some(archived), Some(existing)) = (&header.key_encryption_key, existing_key_encryption_key(config)?)
        && archived.trim() != existing
    {
        bail!(
            "the archive carries a key-encryption key different from this instance's (INTERAI_KEY_ENCRYPTION_KEY or \
             key-encryption.key in the data directory); the instance's signing keys would not open. Use the data \
             directory the archive came with, or remove the other key first"
        );
    }
    Ok(())
}

fn print_tables(summary: &ArchiveSummary) {
    for table in summary.tables.iter().filter(|table| table.rows > 0) {
        println!("  {:<26} {:>10} rows", table.table, table.rows);
    }
}

/// What the admin needs to know about the key-encryption key after a backup or export.
fn key_advice(config: &Config, included_in: Option<&Path>) {
    match included_in {
        Some(path) => println!(
            "The key-encryption key is included ({}): whoever reads it can use the instance's signing keys. Keep it \
             as you keep the key itself.",
            path.display()
        ),
        None => println!(
            "The key-encryption key is NOT included: without it, the instance's signing keys in this copy cannot be \
             opened and the instance cannot federate. Keep {} (or INTERAI_KEY_ENCRYPTION_KEY) safe apart from the \
             backups, or add --include-key-encryption-key.",
            config.data_dir.join(crate::instance::KEY_ENCRYPTION_KEY_FILE).display()
        ),
    }
}

fn refuse_existing(path: &Path) -> anyhow::Result<()> {
    if path.exists() {
        bail!(
            "{} exists already; a backup or export never overwrites a file",
            path.display()
        );
    }
    Ok(())
}

/// A work file in the data directory (on the same disk as the database, and as private).
fn temporary_beside(config: &Config, name: &str) -> anyhow::Result<PathBuf> {
    crate::instance::create_private_directory(&config.data_dir)?;
    let path = config.data_dir.join(format!(".{name}.{}", std::process::id()));
    remove_with_companions(&path);
    Ok(path)
}

fn remove_with_companions(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(name));
    }
}

/// The key file a SQLite backup's included key goes to: `<backup>.key-encryption.key`.
fn key_file_beside(backup: &Path) -> PathBuf {
    let mut name = backup.as_os_str().to_owned();
    name.push(".key-encryption.key");
    PathBuf::from(name)
}

/// A new outbox epoch: unique, and telling nothing.
fn new_epoch() -> String {
    ulid::Ulid::generate().to_string().to_lowercase()
}

fn human_bytes(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1_u32 << 30))
    } else if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1_u32 << 20))
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}
