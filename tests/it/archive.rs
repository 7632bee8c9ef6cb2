//! Data that outlives the machine: a realm's archive carries every table to either backend and back unchanged, a
//! refused archive writes nothing, a backup taken under load holds every acknowledged write whole, a restored
//! instance's peers miss none of its new events, and a realm moved from SQLite to PostgreSQL goes on replicating.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufReader;
use std::sync::{Arc, Mutex};

use chrono::TimeDelta;
use interai::clock::{Clock, ManualClock};
use interai::config::Config;
use interai::domain::PublicId;
use interai::instance::Instance;
use interai::seed::{SeedOptions, seed};
use interai::service::archive::{self, EpochOnLoad};
use interai::service::lookup::{GetRequest, ObjectView};
use interai::store::portable::tables::PORTABLE_TABLES;
use serde_json::Value;

use crate::federation::peered;
use crate::fixtures::{Agent, agent, publish_procedure};
use crate::harness::{DirectConnection, TestDatabase, TestInstance};
use crate::support::network::{Network, Node};

/// The archive of the database at `url`.
async fn export(url: &str, clock: &ManualClock) -> Vec<u8> {
    let mut archive = Vec::new();
    archive::export(url, clock.now(), None, &mut archive)
        .await
        .expect("export");
    archive
}

/// Loads `archive` into the empty database at `url`.
async fn import(url: &str, archive: &[u8], epoch: EpochOnLoad) -> Result<archive::ArchiveSummary, String> {
    let mut input = BufReader::new(archive);
    let header = archive::read_header(&mut input).map_err(|error| error.message)?;
    archive::import(url, "alpha.test", header, input, epoch, crate::harness::test_epoch())
        .await
        .map_err(|error| error.message)
}

/// The archive's lines after its header (whose `created_at` and `source` say when and where it was read).
fn rows_of(archive: &[u8]) -> Vec<String> {
    String::from_utf8(archive.to_vec())
        .expect("UTF-8")
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

/// Every row of one table in the archive, as JSON arrays.
fn table_rows(archive: &[u8], table: &str) -> Vec<Vec<Value>> {
    let mut inside = false;
    let mut rows = Vec::new();
    for line in rows_of(archive) {
        let value: Value = serde_json::from_str(&line).expect("JSON line");
        if value.get("table").and_then(Value::as_str) == Some(table) {
            inside = true;
        } else if value.get("end").is_some() {
            inside = false;
        } else if inside && let Value::Array(row) = value {
            rows.push(row);
        }
    }
    rows
}

fn assert_same_rows(left: &[u8], right: &[u8], what: &str) {
    let (left, right) = (rows_of(left), rows_of(right));
    for (index, (a, b)) in left.iter().zip(&right).enumerate() {
        assert_eq!(a, b, "{what}: line {} differs", index + 2);
    }
    assert_eq!(left.len(), right.len(), "{what}: line counts differ");
}

/// A bootstrapped instance of `alpha.test` on `database`, whatever backend the suite runs on.
async fn open_on(database: &TestDatabase, clock: &ManualClock) -> Instance {
    let mut config = Config::for_realm("alpha.test", &database.url, database.directory.path());
    config.writes_per_hour = u32::MAX;
    let instance = Instance::open(config, Arc::new(clock.clone())).await.expect("opens");
    instance.bootstrap().await.expect("starts");
    instance
}

#[tokio::test]
async fn the_archive_carries_every_table_and_column_the_migrations_make() {
    let instance = TestInstance::start("alpha.test").await;
    let tables = instance.instance.store().describe_tables().await.expect("catalog");
    // Derived, and rebuilt by every load: PostgreSQL's search vectors (and SQLite's full-text index, which the
    // catalog leaves out). SQLite's `search_documents` numbers its rows in a column of its own. Web console sessions
    // do not move with the realm: a restored instance asks its admins to sign in again.
    let derived = ["search_vectors", "console_sessions"];
    let catalog: BTreeMap<String, BTreeSet<String>> = tables
        .into_iter()
        .filter(|(table, _)| !derived.contains(&table.as_str()))
        .map(|(table, columns)| {
            let columns = columns
                .into_iter()
                .filter(|column| !(table == "search_documents" && column == "document_rowid"))
                .collect();
            (table, columns)
        })
        .collect();
    let carried: BTreeMap<String, BTreeSet<String>> = PORTABLE_TABLES
        .iter()
        .map(|table| {
            (
                table.name.to_owned(),
                table.column_names().into_iter().map(str::to_owned).collect(),
            )
        })
        .collect();
    assert_eq!(
        carried, catalog,
        "a migration added or changed a table or column: add it to store/portable/tables.rs"
    );
    if instance.database.is_postgres() {
        let mut connection = DirectConnection::open(&instance.database.url).await;
        let declared: BTreeSet<String> = connection
            .texts(
                "SELECT table_name || '.' || column_name || ' ' || data_type FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name <> '_sqlx_migrations' \
                 AND table_name <> 'search_vectors' AND table_name <> 'console_sessions'",
            )
            .await
            .into_iter()
            .collect();
        connection.close().await;
        let carried: BTreeSet<String> = PORTABLE_TABLES
            .iter()
            .flat_map(|table| {
                table
                    .column_names()
                    .into_iter()
                    .zip(table.postgres_type_names())
                    .map(move |(column, sql_type)| {
                        // The catalog's long name of the type the statements call `timestamptz`.
                        let sql_type = sql_type.replace("timestamptz", "timestamp with time zone");
                        format!("{}.{column} {sql_type}", table.name)
                    })
            })
            .collect();
        assert_eq!(
            carried, declared,
            "the archive's column types follow PostgreSQL's catalog"
        );
    }
}

#[tokio::test]
async fn a_realm_crosses_from_sqlite_to_the_suites_backend_and_back_with_every_row_and_trust_value_unchanged() {
    // SQLite → the suite's backend (PostgreSQL in `.ci/run`'s second run, another SQLite file in `cargo test`, which
    // needs no database server) → SQLite.
    let clock = ManualClock::starting_at(crate::harness::test_epoch());
    let source_database = TestDatabase::create_sqlite();
    let source = open_on(&source_database, &clock).await;
    seed(
        source.service(),
        SeedOptions {
            items: 60,
            seed: 7,
            ..SeedOptions::default()
        },
        |_, _| {},
    )
    .await
    .expect("seeded");
    let first = export(&source_database.url, &clock).await;

    let middle = TestDatabase::create().await;
    let summary = import(&middle.url, &first, EpochOnLoad::Keep).await.expect("loads");
    assert!(summary.rows_of("usage_events") > 0 && summary.rows_of("content_revisions") >= 60);
    let second = export(&middle.url, &clock).await;
    assert_same_rows(&first, &second, "on the suite's backend");

    let back = TestDatabase::create_sqlite();
    import(&back.url, &second, EpochOnLoad::Keep).await.expect("loads back");
    let third = export(&back.url, &clock).await;
    assert_same_rows(&first, &third, "back on SQLite");

    // The realm serves from its new home with the same trust, recomputed from the rows, for every target.
    for database in [&middle, &back] {
        std::fs::copy(
            source_database
                .directory
                .path()
                .join(interai::instance::KEY_ENCRYPTION_KEY_FILE),
            database
                .directory
                .path()
                .join(interai::instance::KEY_ENCRYPTION_KEY_FILE),
        )
        .expect("key-encryption key");
    }
    let targets: Vec<PublicId> = table_rows(&first, "trust_summaries")
        .into_iter()
        .map(|row| PublicId::parse(row[0].as_str().expect("target ID")).expect("an ID"))
        .collect();
    assert!(targets.len() >= 60);
    for database in [&middle, &back] {
        let moved = open_on(database, &clock).await;
        for target in &targets {
            let before = source.service().explain_trust(target).await.expect("explained");
            let after = moved
                .service()
                .explain_trust(target)
                .await
                .expect("explained after the move");
            assert_eq!(format!("{before:?}"), format!("{after:?}"), "{target}");
        }
        moved.close().await;
    }
    source.close().await;
}

/// What a database holds of a realm: whether it has one, and its rows outside the settings the migrations write.
async fn assert_empty(url: &str, what: &str) {
    let realm = interai::store::settings::peek(url, interai::service::bootstrap::SETTING_REALM)
        .await
        .expect("peek");
    assert_eq!(realm, None, "{what}: no realm was written");
    if let Ok((tables, _)) = archive::digest(url).await {
        for table in tables.iter().filter(|table| table.table != "instance_settings") {
            assert_eq!(table.rows, 0, "{what}: {} has rows", table.table);
        }
    }
}

#[tokio::test]
async fn a_truncated_corrupt_newer_or_foreign_archive_or_a_database_in_use_is_refused_with_nothing_written() {
    let source = TestInstance::start_with("alpha.test", |config| config.writes_per_hour = u32::MAX).await;
    seed(
        source.service(),
        SeedOptions {
            items: 20,
            seed: 3,
            ..SeedOptions::default()
        },
        |_, _| {},
    )
    .await
    .expect("seeded");
    let archive = export(&source.database.url, &source.clock).await;
    let text = String::from_utf8(archive.clone()).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    let joined = |lines: &[&str]| lines.iter().map(|line| format!("{line}\n")).collect::<String>();

    let header: Value = serde_json::from_str(lines[0]).expect("header");
    let mut newer = header.clone();
    newer["version"] = Value::from(2);
    let mut foreign = header.clone();
    foreign["realm"] = Value::from("beta.test");
    let row = lines
        .iter()
        .position(|line| line.starts_with("[\"cnt_"))
        .expect("a content row");
    let mut altered = lines.clone();
    let changed = lines[row].replacen("cnt_", "cnt_0", 1);
    altered[row] = &changed;
    let with_header = |header: &Value| {
        let mut changed = vec![header.to_string()];
        changed.extend(lines[1..].iter().map(|line| (*line).to_owned()));
        changed.iter().map(|line| format!("{line}\n")).collect::<String>()
    };
    let cases: Vec<(&str, String, &str)> = vec![
        ("cut at a line", joined(&lines[..lines.len() * 3 / 5]), "truncated"),
        (
            "cut inside a line",
            text[..text.len() - lines.last().expect("trailer").len() / 2 - 1].to_owned(),
            "truncated",
        ),
        ("one row altered", joined(&altered), "corrupt"),
        ("followed by more", format!("{text}{}\n", lines[1]), "goes on after"),
        ("of a newer format", with_header(&newer), "newer"),
        ("of another realm", with_header(&foreign), "realm"),
        (
            "not an archive",
            "{\"hello\": 1}\n".to_owned(),
            "not an interai archive",
        ),
        ("empty", String::new(), "empty"),
        (
            "a line past the bound",
            format!(
                "{}\n{}\n[\"{}\n",
                lines[0],
                lines[1],
                "x".repeat(usize::try_from(archive::MAX_LINE_BYTES).expect("a size"))
            ),
            "longer than 64 MiB",
        ),
    ];
    for (what, bytes, expected) in cases {
        let database = TestDatabase::create().await;
        let error = import(&database.url, bytes.as_bytes(), EpochOnLoad::Keep)
            .await
            .expect_err(what);
        assert!(error.contains(expected), "{what}: {error}");
        assert_empty(&database.url, what).await;
    }

    // Into a database that holds a realm already: refused, and that realm is left as it was.
    let before = archive::digest(&source.database.url).await.expect("digest");
    let error = import(&source.database.url, &archive, EpochOnLoad::Keep)
        .await
        .expect_err("a database in use");
    assert!(error.contains("not empty"), "{error}");
    assert_eq!(archive::digest(&source.database.url).await.expect("digest"), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_while_eight_agents_write_holds_every_write_acknowledged_before_it_and_none_half_written() {
    let source = TestInstance::start_with("alpha.test", |config| config.writes_per_hour = u32::MAX).await;
    let service = source.service().clone();
    let mut writers = Vec::new();
    for index in 0..8 {
        writers.push(agent(&service, &format!("writer {index}")).await);
    }
    // Each write is recorded once acknowledged.
    let acknowledged: Arc<Mutex<Vec<String>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (progress, mut written) = tokio::sync::watch::channel(0_usize);
    let progress = Arc::new(progress);
    let mut tasks = Vec::new();
    for (index, writer) in writers.into_iter().enumerate() {
        let (service, acknowledged, stop, progress) = (
            service.clone(),
            Arc::clone(&acknowledged),
            Arc::clone(&stop),
            Arc::clone(&progress),
        );
        tasks.push(tokio::spawn(async move {
            let mut number = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let outcome = publish_procedure(&service, &writer, &format!("writer {index} item {number}"), &[]).await;
                let mut list = acknowledged.lock().expect("list");
                list.push(outcome.id.clone());
                progress.send_replace(list.len());
                number += 1;
            }
        }));
    }
    written.wait_for(|count| *count >= 40).await.expect("writers run");
    // Every write acknowledged before the backup starts.
    let before: BTreeSet<String> = acknowledged.lock().expect("list").iter().cloned().collect();
    // `interai admin backup`: SQLite copies the database file; PostgreSQL writes an archive.
    let copy = TestDatabase::create_sqlite();
    let path = copy.directory.path().join("backup");
    let report = interai::service::backups::backup(
        &source.database.url,
        &path,
        source.clock.now(),
        None,
        // The default pace (a small archive takes a few milliseconds more).
        interai::service::backups::BackupPace { max_mib_per_second: 40 },
    )
    .await
    .expect("backed up while serving");
    let backup = match report.kind {
        interai::service::backups::BackupKind::DatabaseFile => {
            export(&format!("sqlite://{}", path.display()), &source.clock).await
        }
        interai::service::backups::BackupKind::Archive => std::fs::read(&path).expect("the archive"),
    };
    assert_eq!(
        report.kind == interai::service::backups::BackupKind::Archive,
        source.database.is_postgres()
    );
    // The writers go on a little after the backup, then stop.
    let after_backup = acknowledged.lock().expect("list").len();
    written
        .wait_for(|count| *count >= after_backup + 16)
        .await
        .expect("writers go on");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for task in tasks {
        task.await.expect("writer");
    }

    let items: BTreeMap<String, Vec<Value>> = table_rows(&backup, "content_items")
        .into_iter()
        .map(|row| (row[0].as_str().expect("ID").to_owned(), row))
        .collect();
    let missing: Vec<&String> = before.iter().filter(|id| !items.contains_key(*id)).collect();
    assert!(
        missing.is_empty(),
        "acknowledged before the backup but not in it: {missing:?}"
    );
    // Whole: every item in the backup has its revision, its search document and its outbox event.
    let revisions: BTreeSet<String> = table_rows(&backup, "content_revisions")
        .into_iter()
        .map(|row| row[1].as_str().expect("content ID").to_owned())
        .collect();
    let documents: BTreeSet<String> = table_rows(&backup, "search_documents")
        .into_iter()
        .map(|row| row[0].as_str().expect("object ID").to_owned())
        .collect();
    for id in items.keys() {
        assert!(revisions.contains(id), "{id} is in the backup without its revision");
        assert!(
            documents.contains(id),
            "{id} is in the backup without its search document"
        );
    }
    let total = acknowledged.lock().expect("list").len();
    assert!(
        items.len() < total,
        "the writers wrote on after the backup ({} of {total})",
        items.len()
    );
    // And it loads and serves.
    let restored = TestDatabase::create().await;
    import(&restored.url, &backup, EpochOnLoad::Start("restored".to_owned()))
        .await
        .expect("the backup loads");
}

fn get_request(id: &str) -> GetRequest {
    GetRequest {
        id: id.to_owned(),
        revision: None,
        include: None,
        evidence_cursor: None,
        trust_view: Default::default(),
    }
}

async fn get(node: &Node, reader: &Agent, id: &str) -> Option<ObjectView> {
    node.service().get(&reader.caller, &get_request(id)).await.ok()
}

/// The revision numbers of `id` that `node` applied from its peer (its intake log's `applied` lines).
async fn applied_revisions(node: &Node, peer: &str, id: &str) -> Vec<String> {
    node.federation()
        .intake_log(Some(peer), 100_000)
        .await
        .expect("intake log")
        .into_iter()
        .filter(|line| line.outcome == "applied" && line.detail.starts_with(id))
        .map(|line| line.detail)
        .collect()
}

#[tokio::test]
async fn a_peer_of_an_instance_restored_from_an_older_backup_misses_none_of_its_new_events() {
    // Alpha does not push, so beta sees alpha's outbox through its pulls alone: the path a restore can break.
    let mut network = Network::start_configured(&["alpha.test", "beta.test"], |realm, config| {
        config.writes_per_hour = 100_000;
        if realm == "alpha.test" {
            config.federation_push = false;
        }
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let alpha_author = agent(network.node("alpha.test").service(), "alpha author").await;
    let beta_author = agent(network.node("beta.test").service(), "beta author").await;
    let beta_reader = agent(network.node("beta.test").service(), "beta reader").await;
    let alpha_reader = agent(network.node("alpha.test").service(), "alpha reader").await;
    let pull = |network: &Network| network.advance(TimeDelta::seconds(61));

    let first = publish_procedure(
        network.node("alpha.test").service(),
        &alpha_author,
        "rotate the keys",
        &[],
    )
    .await
    .id;
    let beta_first = publish_procedure(
        network.node("beta.test").service(),
        &beta_author,
        "renew the lease",
        &[],
    )
    .await
    .id;
    pull(&network);
    network.settle().await;
    let backup = network.export("alpha.test").await;

    // After the backup: alpha writes two items that beta reads, beta one that alpha takes.
    let mut lost = Vec::new();
    for title in ["drain the queue", "flush the cache"] {
        lost.push(
            publish_procedure(network.node("alpha.test").service(), &alpha_author, title, &[])
                .await
                .id,
        );
    }
    let beta_second = publish_procedure(
        network.node("beta.test").service(),
        &beta_author,
        "rotate the logs",
        &[],
    )
    .await
    .id;
    pull(&network);
    network.settle().await;
    for id in &lost {
        assert!(get(network.node("beta.test"), &beta_reader, id).await.is_some());
    }

    // Alpha's machine fails; it is restored from the older backup and writes again. Its new events take the
    // positions of the two beta already read.
    network.restore("alpha.test", &backup).await;
    assert!(
        get(network.node("alpha.test"), &alpha_reader, &lost[0]).await.is_none(),
        "older backup"
    );
    let mut new = Vec::new();
    for title in ["restart the workers", "check the replicas"] {
        new.push(
            publish_procedure(network.node("alpha.test").service(), &alpha_author, title, &[])
                .await
                .id,
        );
    }
    for _ in 0..3 {
        pull(&network);
        network.settle().await;
    }
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    for id in &new {
        assert!(
            get(beta, &beta_reader, id).await.is_some(),
            "beta read the restored outbox's new event {id}"
        );
    }
    for id in &lost {
        assert!(get(beta, &beta_reader, id).await.is_some(), "beta keeps what it had");
    }
    // Alpha takes again what beta wrote after the backup; nothing is applied twice on either side.
    assert!(get(alpha, &alpha_reader, &beta_second).await.is_some());
    assert!(get(alpha, &alpha_reader, &beta_first).await.is_some());
    for id in new.iter().chain(&lost).chain([&first]) {
        assert_eq!(applied_revisions(beta, "alpha.test", id).await.len(), 1, "{id} on beta");
    }
    assert_eq!(applied_revisions(alpha, "beta.test", &beta_second).await.len(), 1);
    let restored_epoch = alpha.federation().outbox_epoch().await.expect("epoch");
    let replication = beta
        .federation()
        .peer_replication_lag("alpha.test")
        .await
        .expect("lag")
        .expect("replication state")
        .replication;
    assert_eq!(replication.outbox_epoch.as_deref(), Some(restored_epoch.as_str()));
}

#[tokio::test]
async fn a_realm_migrated_from_sqlite_to_postgresql_keeps_replicating_both_ways() {
    let Ok(base_url) = std::env::var("INTERAI_TEST_DATABASE_URL") else {
        // `interai admin migrate` needs a PostgreSQL server; `.ci/run` runs this suite with one.
        return;
    };
    assert!(base_url.starts_with("postgres"));
    let mut network = Network::start_on(
        &["alpha.test", "beta.test"],
        vec![TestDatabase::create_sqlite(), TestDatabase::create().await],
        |_, config| config.writes_per_hour = 100_000,
    )
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let alpha_author = agent(network.node("alpha.test").service(), "alpha author").await;
    let beta_author = agent(network.node("beta.test").service(), "beta author").await;
    let before = publish_procedure(
        network.node("alpha.test").service(),
        &alpha_author,
        "seal the vault",
        &[],
    )
    .await
    .id;
    network.settle().await;

    let (config, sqlite) = network.close_node("alpha.test").await;
    let postgres = TestDatabase::create().await;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_interai"))
        .args(["admin", "migrate", "--to", &postgres.url])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("INTERAI_DATA_DIR", sqlite.directory.path())
        .env("INTERAI_DATABASE_URL", &sqlite.url)
        .env("INTERAI_REALM", "alpha.test")
        .env("INTERAI_LOG", "warn")
        .output()
        .expect("the interai binary runs");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "migrate failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(printed.contains("checked on both sides"), "{printed}");
    assert!(printed.contains("INTERAI_DATABASE_URL"), "{printed}");
    assert_same_rows(
        &export(&sqlite.url, &network.clock).await,
        &export(&postgres.url, &network.clock).await,
        "after migrate",
    );
    let epoch_before = interai::store::settings::peek(&sqlite.url, archive::SETTING_OUTBOX_EPOCH)
        .await
        .expect("peek");
    network.open_node("alpha.test", config, &sqlite, postgres).await;
    assert_eq!(
        Some(
            network
                .node("alpha.test")
                .federation()
                .outbox_epoch()
                .await
                .expect("epoch")
        ),
        epoch_before,
        "the same outbox"
    );

    let from_alpha = publish_procedure(
        network.node("alpha.test").service(),
        &alpha_author,
        "open the vault",
        &[],
    )
    .await
    .id;
    let from_beta = publish_procedure(
        network.node("beta.test").service(),
        &beta_author,
        "count the coins",
        &[],
    )
    .await
    .id;
    network.settle().await;
    let beta_reader = agent(network.node("beta.test").service(), "beta reader").await;
    let alpha_reader = agent(network.node("alpha.test").service(), "alpha reader").await;
    assert!(
        get(network.node("beta.test"), &beta_reader, &from_alpha)
            .await
            .is_some()
    );
    assert!(get(network.node("beta.test"), &beta_reader, &before).await.is_some());
    assert!(
        get(network.node("alpha.test"), &alpha_reader, &from_beta)
            .await
            .is_some()
    );
}

/// Runs `interai admin …` as its operator would, on `database` with its data directory; the exit status, standard
/// output and standard error.
fn command_line(database: &TestDatabase, arguments: &[&str]) -> (bool, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_interai"))
        .args(["admin"])
        .args(arguments)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("INTERAI_DATA_DIR", database.directory.path())
        .env("INTERAI_DATABASE_URL", &database.url)
        .env("INTERAI_REALM", "alpha.test")
        .env("INTERAI_LOG", "warn")
        .output()
        .expect("the interai binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_commands_refuse_to_overwrite_a_file_a_realm_or_a_key_and_a_move_that_is_not_to_postgresql() {
    let source = TestDatabase::create().await;
    let (ok, _, error) = command_line(&source, &["--init", "actor", "list"]);
    assert!(ok, "{error}");
    let work = tempfile::tempdir().expect("work directory");
    let archive = work.path().join("alpha.archive");
    let archive_path = archive.to_str().expect("UTF-8 path");

    // A backup (and an export) never overwrites a file.
    std::fs::write(&archive, "keep me").expect("a file");
    for command in ["backup", "export"] {
        let (ok, _, error) = command_line(&source, &[command, "--to", archive_path]);
        assert!(!ok && error.contains("exists already"), "{command}: {error}");
    }
    assert_eq!(std::fs::read_to_string(&archive).expect("kept"), "keep me");
    std::fs::remove_file(&archive).expect("removed");

    // An export with its key, and what it says of the key.
    let (ok, printed, error) = command_line(
        &source,
        &["export", "--to", archive_path, "--include-key-encryption-key"],
    );
    assert!(ok, "{error}");
    assert!(printed.contains("key-encryption key is included"), "{printed}");

    // Restore and import go only into an empty database: the source holds its realm.
    for command in ["restore", "import"] {
        let (ok, _, error) = command_line(&source, &[command, "--from", archive_path]);
        assert!(
            !ok && (error.contains("not empty") || error.contains("already holds a realm")),
            "{command}: {error}"
        );
    }

    // A data directory whose key-encryption key differs: the archive's signing keys would not open there.
    let other = TestDatabase::create().await;
    std::fs::write(
        other.directory.path().join(interai::instance::KEY_ENCRYPTION_KEY_FILE),
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
    )
    .expect("another key");
    let (ok, _, error) = command_line(&other, &["import", "--from", archive_path]);
    assert!(!ok && error.contains("key-encryption key different"), "{error}");
    assert_empty(&other.url, "import refused for its key").await;

    // Into an empty data directory the archive's key comes along, and the realm serves with its own keys.
    let fresh = TestDatabase::create().await;
    let (ok, printed, error) = command_line(&fresh, &["import", "--from", archive_path]);
    assert!(ok, "{error}");
    assert!(printed.contains("new epoch"), "{printed}");
    assert_eq!(
        std::fs::read_to_string(fresh.directory.path().join(interai::instance::KEY_ENCRYPTION_KEY_FILE))
            .expect("the key came along")
            .trim(),
        std::fs::read_to_string(source.directory.path().join(interai::instance::KEY_ENCRYPTION_KEY_FILE))
            .expect("the source's key")
            .trim()
    );
    let (ok, _, error) = command_line(&fresh, &["federation", "identity"]);
    assert!(ok, "the imported realm opens its signing keys: {error}");

    // `migrate` moves from SQLite to PostgreSQL only.
    let (ok, _, error) = command_line(&source, &["migrate", "--to", "sqlite:///tmp/elsewhere.db"]);
    assert!(!ok, "{error}");
    let expected = if source.is_postgres() {
        "not SQLite"
    } else {
        "must be a PostgreSQL URL"
    };
    assert!(error.contains(expected), "{error}");
}
