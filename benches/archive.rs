//! Archive benchmark (not a timed test): backup while serving, export, import and migrate on a seeded realm.
//!
//! Run with `cargo bench --bench archive`. It seeds a SQLite realm with `interai::seed` (100,000 items by default;
//! `INTERAI_BENCH_DATABASE_PATH` reuses a seeded file, which saves the quarter of an hour seeding takes) and
//! measures, in this order:
//!
//! 1. SQLite backup while serving (`interai admin backup`: `VACUUM INTO`), with eight agents publishing through the
//!    service the whole time; their publish latency while the backup runs against the same eight before and after
//!    it (A B A, one run, so the machine's drift shows);
//! 2. export of the SQLite realm to an archive file;
//! 3. import of that archive into a fresh SQLite database;
//! 4. with `INTERAI_BENCH_DATABASE_URL`: import into a fresh PostgreSQL database, `migrate` (export, load, both
//!    sides read back and compared) into another, and a PostgreSQL backup (an export) while eight agents publish
//!    on the imported realm, with their latency as in 1 (other ways of making it with `INTERAI_BENCH_BACKUP_VARIANTS`,
//!    interleaved).
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `INTERAI_BENCH_ITEMS` | 100000 | content items to seed |
//! | `INTERAI_BENCH_DATABASE_PATH` | — | a SQLite file to use instead of a temporary one; seeded only when empty, kept |
//! | `INTERAI_BENCH_REALM` | `bench.test` | the realm (a reused file must hold it) |
//! | `INTERAI_BENCH_DATABASE_URL` | — | a PostgreSQL server URL; enables step 4 |
//! | `INTERAI_BENCH_WRITERS` | 8 | agents publishing during the backups |
//! | `INTERAI_BENCH_QUIET_SECONDS` | 15 | how long each phase without a backup measures |
//! | `INTERAI_BENCH_POSTGRES_BACKUP_ONLY` | — | when set, only the export, the import into PostgreSQL and step 4's backups |
//! | `INTERAI_BENCH_BACKUP_VARIANTS` | `paced:40,unpaced,paced:40,unpaced` | step 4's backups, in order: `paced:<MiB/s>`, `unpaced`, `runtime`, `sink` |

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use interai::clock::{Clock, SystemClock};
use interai::config::Config;
use interai::domain::AuthenticatedActor;
use interai::instance::Instance;
use interai::seed::SeedOptions;
use interai::service::Service;
use interai::service::archive::{self, EpochOnLoad};
use interai::service::backups::BackupPace;
use interai::service::content::PublishRequest;
use interai::service::writes::{CallMetadata, WriteOperation};

use common::{BenchDatabase, Spread, agents, number, variable};

/// The targets of issue 40.
const BACKUP_TARGET: Duration = Duration::from_secs(30);
const EXPORT_IMPORT_TARGET: Duration = Duration::from_secs(120);
const MIGRATE_TARGET: Duration = Duration::from_secs(300);

fn main() {
    let runtime = common::runtime(None);
    runtime.block_on(run());
}

async fn run() {
    let items: u64 = number("INTERAI_BENCH_ITEMS", 100_000);
    let realm = variable("INTERAI_BENCH_REALM").unwrap_or_else(|| "bench.test".to_owned());
    let writers: usize = number("INTERAI_BENCH_WRITERS", 8);
    let quiet = Duration::from_secs(number("INTERAI_BENCH_QUIET_SECONDS", 15));
    let postgres = variable("INTERAI_BENCH_DATABASE_URL");
    let postgres_backup_only = variable("INTERAI_BENCH_POSTGRES_BACKUP_ONLY").is_some();
    let work = tempfile::tempdir().expect("work directory");
    let source = match variable("INTERAI_BENCH_DATABASE_PATH") {
        Some(path) => BenchDatabase::sqlite_file(Path::new(&path)),
        None => BenchDatabase::temporary_sqlite(),
    };
    let instance = open(&realm, &source).await;
    let existing = instance
        .service()
        .instance_overview()
        .await
        .expect("overview")
        .counts
        .content;
    if existing == 0 {
        let started = Instant::now();
        interai::seed::seed(
            instance.service(),
            SeedOptions {
                items,
                ..SeedOptions::default()
            },
            |_, _| {},
        )
        .await
        .expect("seeded");
        println!("seeded {items} items in {:.0} s", started.elapsed().as_secs_f64());
    }
    let rows = archive::digest(&source.url).await.expect("digest").0;
    let total_rows: u64 = rows.iter().map(|table| table.rows).sum();
    println!(
        "realm {realm}: {} content items, {total_rows} rows in {} tables",
        rows.iter()
            .find(|table| table.table == "content_items")
            .map_or(0, |table| table.rows),
        rows.len()
    );

    let mut results: Vec<(String, String, String)> = Vec::new();
    // 1. SQLite backup while eight agents publish.
    let backup_path = work.path().join("backup.db");
    if postgres_backup_only {
        instance.close().await;
    } else {
        let (taken, quiet_before, during, quiet_after) =
            while_publishing(instance.service(), writers, quiet, "sqlite", || async {
                interai::service::backups::backup(
                    &source.url,
                    &backup_path,
                    SystemClock.now(),
                    None,
                    BackupPace::UNLIMITED,
                )
                .await
                .expect("backup");
            })
            .await;
        report_backup(
            &mut results,
            "SQLite backup (VACUUM INTO) while serving",
            taken,
            &quiet_before,
            &during,
            &quiet_after,
        );
        println!("backup file: {:.0} MiB", mib(&backup_path));
        instance.close().await;
    }

    // 2. Export.
    let archive_path = work.path().join("realm.archive");
    let started = Instant::now();
    archive::export_to_file(&source.url, &archive_path, SystemClock.now(), None)
        .await
        .expect("export");
    let exported = started.elapsed();
    println!("archive: {:.0} MiB", mib(&archive_path));
    results.push(row("export, SQLite", exported, EXPORT_IMPORT_TARGET));

    // 3. Import into SQLite.
    if !postgres_backup_only {
        let sqlite_copy = BenchDatabase::temporary_sqlite();
        let imported = import(&sqlite_copy.url, &realm, &archive_path).await;
        results.push(row("import into SQLite", imported, EXPORT_IMPORT_TARGET));
    }

    // 4. PostgreSQL.
    if let Some(base_url) = &postgres {
        let target = BenchDatabase::postgres(base_url, None, false).await;
        let imported = import(&target.url, &realm, &archive_path).await;
        results.push(row("import into PostgreSQL", imported, EXPORT_IMPORT_TARGET));

        if !postgres_backup_only {
            let migrated_to = BenchDatabase::postgres(base_url, None, false).await;
            let started = Instant::now();
            archive::migrate(
                &source.url,
                &migrated_to.url,
                &work.path().join("migrate.archive"),
                SystemClock.now(),
            )
            .await
            .expect("migrate");
            results.push(row(
                "migrate SQLite → PostgreSQL (checked)",
                started.elapsed(),
                MIGRATE_TARGET,
            ));
        }

        // The realm's signing keys open with the key-encryption key of its source's data directory.
        let key_file = interai::instance::KEY_ENCRYPTION_KEY_FILE;
        std::fs::copy(source.data_dir.join(key_file), target.data_dir.join(key_file)).expect("key-encryption key");
        let served = open(&realm, &target).await;
        // Each variant of the backup, interleaved (`INTERAI_BENCH_BACKUP_VARIANTS`, a comma-separated list):
        // `paced:N` as `interai admin backup` and the schedule make it (the export on a thread of its own, at most N
        // MiB/s), `unpaced` the same as fast as it can, `runtime` the export on the serving runtime as the first
        // version made it, `sink` on a thread of its own into no file (what writing the file costs the writers).
        let variants =
            variable("INTERAI_BENCH_BACKUP_VARIANTS").unwrap_or_else(|| "paced:40,unpaced,paced:40,unpaced".to_owned());
        for (index, variant) in variants.split(',').map(str::trim).enumerate() {
            let pg_backup = work.path().join(format!("backup-{index}.archive"));
            // The writers grow the realm by thousands of items a phase: each backup says how large the realm was
            // when it began.
            let items_at_start = std::cell::Cell::new(0_i64);
            let (taken, quiet_before, during, quiet_after) =
                while_publishing(served.service(), writers, quiet, "postgres", || async {
                    let overview = served.service().instance_overview().await.expect("overview");
                    items_at_start.set(overview.counts.content);
                    let pace = match variant {
                        "runtime" => {
                            archive::export_to_file(&target.url, &pg_backup, SystemClock.now(), None)
                                .await
                                .expect("export");
                            return;
                        }
                        "sink" => {
                            export_on_a_thread(target.url.clone()).await;
                            return;
                        }
                        "unpaced" => BackupPace::UNLIMITED,
                        paced => BackupPace {
                            max_mib_per_second: paced
                                .strip_prefix("paced:")
                                .and_then(|number| number.parse().ok())
                                .unwrap_or_else(|| panic!("unknown backup variant {paced}")),
                        },
                    };
                    interai::service::backups::backup(&target.url, &pg_backup, SystemClock.now(), None, pace)
                        .await
                        .expect("backup");
                })
                .await;
            let measure = format!(
                "PostgreSQL backup ({variant}) while serving, {} items, {:.0} MiB",
                items_at_start.get(),
                mib(&pg_backup)
            );
            report_backup(&mut results, &measure, taken, &quiet_before, &during, &quiet_after);
            let _ = std::fs::remove_file(&pg_backup);
        }
        served.close().await;
    }

    println!();
    println!("| measure | result | target |");
    println!("|---|---|---|");
    for (measure, result, target) in results {
        println!("| {measure} | {result} | {target} |");
    }
}

async fn open(realm: &str, database: &BenchDatabase) -> Instance {
    let mut config = Config::for_realm(realm, &database.url, &database.data_dir);
    config.writes_per_hour = u32::MAX;
    let instance = Instance::open(config, Arc::new(SystemClock))
        .await
        .expect("instance opens");
    instance.bootstrap().await.expect("bootstraps");
    instance
}

async fn import(url: &str, realm: &str, archive_path: &PathBuf) -> Duration {
    let started = Instant::now();
    let mut input = std::io::BufReader::new(std::fs::File::open(archive_path).expect("archive"));
    let header = archive::read_header(&mut input).expect("header");
    archive::import(url, realm, header, input, EpochOnLoad::Keep, SystemClock.now())
        .await
        .expect("import");
    started.elapsed()
}

fn mib(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |metadata| metadata.len() as f64 / 1_048_576.0)
}

fn row(measure: &str, took: Duration, target: Duration) -> (String, String, String) {
    let verdict = if took <= target { "met" } else { "missed" };
    (
        measure.to_owned(),
        format!("{:.1} s", took.as_secs_f64()),
        format!("≤ {} s: {verdict}", target.as_secs()),
    )
}

fn report_backup(
    results: &mut Vec<(String, String, String)>,
    measure: &str,
    taken: Duration,
    quiet_before: &Spread,
    during: &Spread,
    quiet_after: &Spread,
) {
    results.push(row(measure, taken, BACKUP_TARGET));
    let quiet_p99 = quiet_before.p99.max(quiet_after.p99);
    let verdict = if during.p99 <= 2.0 * quiet_p99 { "met" } else { "missed" };
    results.push((
        format!("{measure}: publish p50 / p99 / max (ms), without, during, without"),
        format!(
            "{} · **{}** · {}",
            quiet_before.show(),
            during.show(),
            quiet_after.show()
        ),
        format!("p99 during ≤ 2 × without ({:.2} ms): {verdict}", 2.0 * quiet_p99),
    ));
}

/// Publish latencies (ms) of `writers` agents publishing for `quiet`, then while `backup` runs, then for `quiet`
/// again; and how long the backup took.
async fn while_publishing<F, Fut>(
    service: &Service,
    writers: usize,
    quiet: Duration,
    label: &str,
    backup: F,
) -> (Duration, Spread, Spread, Spread)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let callers = agents(service, writers, "read,publish", &format!("archive bench {label}")).await;
    let before = publish_for(service, &callers, Some(quiet), None).await;
    let done = Arc::new(AtomicBool::new(false));
    let publishing = {
        let (service, callers, done) = (service.clone(), callers.clone(), Arc::clone(&done));
        tokio::spawn(async move { publish_for(&service, &callers, None, Some(done)).await })
    };
    let started = Instant::now();
    backup().await;
    let taken = started.elapsed();
    done.store(true, Ordering::SeqCst);
    let during = publishing.await.expect("publishers");
    let after = publish_for(service, &callers, Some(quiet), None).await;
    (taken, before, during, after)
}

/// Each caller publishes one item after another until `limit` passes or `done` is set; the sorted latencies (ms).
async fn publish_for(
    service: &Service,
    callers: &[AuthenticatedActor],
    limit: Option<Duration>,
    done: Option<Arc<AtomicBool>>,
) -> Spread {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (index, caller) in callers.iter().enumerate() {
        let (service, caller, done) = (service.clone(), caller.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut number = 0_u64;
            loop {
                if limit.is_some_and(|limit| started.elapsed() >= limit)
                    || done.as_ref().is_some_and(|done| done.load(Ordering::SeqCst))
                {
                    break;
                }
                let title = format!(
                    "archive bench writer {index} item {number} {}",
                    started.elapsed().as_nanos()
                );
                let call = Instant::now();
                service
                    .publish(
                        &caller,
                        &CallMetadata::internal(WriteOperation::Publish, serde_json::json!({})),
                        PublishRequest {
                            content_type: "procedure".to_owned(),
                            title: title.clone(),
                            summary: format!("How to {title}."),
                            body_markdown: format!("# {title}\n\n1. Do the thing.\n2. Check it worked.\n"),
                            ..PublishRequest::default()
                        },
                    )
                    .await
                    .expect("publish");
                latencies.push(call.elapsed().as_secs_f64() * 1000.0);
                number += 1;
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("writer"));
    }
    all.sort_by(f64::total_cmp);
    Spread::of(&all)
}

/// Runs an export into no file on a thread of its own with a runtime of its own, as a backup does.
async fn export_on_a_thread(url: String) {
    let (finished, outcome) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let result = runtime.block_on(archive::export(&url, SystemClock.now(), None, std::io::sink()));
        let _ = finished.send(result.map(|_| ()));
    });
    outcome.await.expect("the export's thread").expect("export");
}
