//! Real `interai serve` processes on loopback: two peer with one command on each side, as the README's "Add a peer"
//! section tells an admin to do; a sender killed with SIGKILL mid-delivery loses nothing and applies nothing twice;
//! two sender processes on one PostgreSQL database deliver each activity once; evidence seeded on three peered
//! instances while one is killed converges with each record held once and counted once. The tests wait on each server's log
//! for the activity they expect, never on a timer.

use std::io::BufRead;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;

use crate::harness::{DirectConnection, TestDatabase};

/// One instance: its database, its address and its server process.
struct Side {
    database: std::sync::Arc<TestDatabase>,
    address: String,
    server: Option<Child>,
    log: Option<mpsc::Receiver<serde_json::Value>>,
    /// Settings that differ from the defaults of `command` (a second process of the same instance).
    overrides: Vec<(&'static str, String)>,
}

impl Side {
    async fn new() -> Side {
        // A free port, so that the realm and the public URL can name it before the server starts.
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let address = probe.local_addr().expect("address").to_string();
        drop(probe);
        Side {
            database: std::sync::Arc::new(TestDatabase::create().await),
            address,
            server: None,
            log: None,
            overrides: Vec::new(),
        }
    }

    /// A second server process of the same instance (same database, data directory, realm and public URL), listening
    /// on a port of its own, as a second `serve` behind a load balancer would.
    fn second_process(&self) -> Side {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let listen = probe.local_addr().expect("address").to_string();
        drop(probe);
        Side {
            database: std::sync::Arc::clone(&self.database),
            address: self.address.clone(),
            server: None,
            log: None,
            overrides: vec![
                ("INTERAI_LISTEN", listen),
                ("INTERAI_PUBLIC_URL", format!("http://{}", self.address)),
            ],
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_interai"));
        command
            .env("INTERAI_DATA_DIR", self.database.directory.path())
            .env("INTERAI_DATABASE_URL", &self.database.url)
            .env("INTERAI_LISTEN", &self.address)
            .env("INTERAI_REALM", &self.address)
            .env("INTERAI_FEDERATION_ALLOW_HTTP", "true")
            .env("INTERAI_FEDERATION_ALLOW_PRIVATE", "true")
            .env("INTERAI_LOG", "info")
            .env("INTERAI_LOG_FORMAT", "json")
            .env("INTERAI_WRITES_PER_HOUR", "1000000")
            // Pushes are what these tests follow: a peer's periodic pull would bring the same changes a second way.
            .env("INTERAI_FEDERATION_PULL_INTERVAL_SECONDS", "86400");
        for (name, value) in &self.overrides {
            command.env(name, value);
        }
        command
    }

    /// Kills the server with SIGKILL: no shutdown, no flush, whatever it was doing cut off.
    fn kill(&mut self) {
        if let Some(mut child) = self.server.take() {
            child.kill().expect("SIGKILL");
            child.wait().expect("reaped");
        }
        self.log = None;
    }

    /// The instance's database, opened in the test process beside the running server (to check what it stored).
    async fn open(&self) -> interai::instance::Instance {
        let config =
            interai::config::Config::for_realm(&self.address, &self.database.url, self.database.directory.path());
        interai::instance::Instance::open(config, std::sync::Arc::new(interai::clock::SystemClock))
            .await
            .expect("the database opens beside the server")
    }

    fn admin(&self, arguments: &[&str]) -> String {
        let output: Output = self
            .command()
            .arg("admin")
            .args(arguments)
            .output()
            .expect("admin runs");
        assert!(
            output.status.success(),
            "interai admin {arguments:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf-8")
    }

    /// The fingerprint of the instance's signing key, as its admin would read it out to the other admin.
    fn fingerprint(&self, init: bool) -> String {
        let arguments: &[&str] = if init {
            &["--init", "federation", "identity"]
        } else {
            &["federation", "identity"]
        };
        let identity = self.admin(arguments);
        identity
            .lines()
            .find(|line| line.starts_with("key\t") && line.ends_with("signing"))
            .and_then(|line| line.split('\t').nth(2))
            .expect("a signing key")
            .to_owned()
    }

    fn serve(&mut self) {
        let mut child = self
            .command()
            .arg("serve")
            .stderr(Stdio::piped())
            .spawn()
            .expect("serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(event) = serde_json::from_str::<serde_json::Value>(&line)
                    && sender.send(event).is_err()
                {
                    return;
                }
            }
        });
        self.server = Some(child);
        self.log = Some(receiver);
        self.wait_for(|event| event["fields"]["message"] == "serving");
    }

    /// Blocks until the server logs an event that `matches` (it logs as it works; a server that dies ends the wait).
    fn wait_for(&self, matches: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let log = self.log.as_ref().expect("serving");
        loop {
            let event = log.recv().expect("the server is still running and logging");
            if matches(&event) {
                return event;
            }
        }
    }

    /// [`Side::wait_for`], failing the test when no such event comes for `patience` (a guard against a hang, not a
    /// timed assertion: the events come within seconds).
    fn wait_for_at_most(&self, patience: std::time::Duration, matches: impl Fn(&serde_json::Value) -> bool) {
        let log = self.log.as_ref().expect("serving");
        loop {
            match log.recv_timeout(patience) {
                Ok(event) if matches(&event) => return,
                Ok(_) => {}
                Err(error) => panic!("{} logged nothing awaited for {patience:?}: {error}", self.address),
            }
        }
    }

    fn peer_state(&self, realm: &str) -> String {
        self.admin(&["peer", "list"])
            .lines()
            .find(|line| line.starts_with(&format!("{realm}\t")))
            .and_then(|line| line.split('\t').nth(1))
            .unwrap_or("absent")
            .to_owned()
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        if let Some(mut child) = self.server.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn processed(event: &serde_json::Value, activity_type: &str) -> bool {
    event["fields"]["message"] == "inbound activity processed" && event["fields"]["activity_type"] == activity_type
}

#[tokio::test]
async fn two_served_instances_peer_with_one_command_on_each_side() {
    let mut alpha = Side::new().await;
    let mut beta = Side::new().await;
    let alpha_fingerprint = alpha.fingerprint(true);
    let beta_fingerprint = beta.fingerprint(true);
    alpha.serve();
    beta.serve();

    // Alpha's admin adds beta with the fingerprint beta's admin read out; the command sends the Follow itself.
    let added = alpha.admin(&[
        "peer",
        "add",
        &format!("http://{}", beta.address),
        "--fingerprint",
        &beta_fingerprint,
    ]);
    assert_eq!(added.trim(), format!("{}\tpending_out", beta.address));
    beta.wait_for(|event| processed(event, "Follow"));
    assert_eq!(beta.peer_state(&alpha.address), "pending_in");

    // A wrong fingerprint pins nothing.
    let refused = beta
        .command()
        .args([
            "admin",
            "peer",
            "approve",
            &alpha.address,
            "--fingerprint",
            "SHA256:wrong",
        ])
        .output()
        .expect("runs");
    assert!(!refused.status.success());

    // Beta's admin approves with alpha's fingerprint; the command sends the Accept itself.
    beta.admin(&["peer", "approve", &alpha.address, "--fingerprint", &alpha_fingerprint]);
    alpha.wait_for(|event| processed(event, "Accept"));
    assert_eq!(alpha.peer_state(&beta.address), "active");
    assert_eq!(beta.peer_state(&alpha.address), "active");

    // A block on beta takes effect for the next request, from a command run beside the server.
    beta.admin(&["peer", "block", &alpha.address, "--reason", "test"]);
    assert!(beta.peer_state(&alpha.address).starts_with("blocked"));
}

/// Two served instances, peered the way the README says (used by the replication tests).
async fn peered_sides() -> (Side, Side) {
    let mut alpha = Side::new().await;
    let mut beta = Side::new().await;
    let alpha_fingerprint = alpha.fingerprint(true);
    let beta_fingerprint = beta.fingerprint(true);
    alpha.serve();
    beta.serve();
    alpha.admin(&[
        "peer",
        "add",
        &format!("http://{}", beta.address),
        "--fingerprint",
        &beta_fingerprint,
    ]);
    beta.wait_for(|event| processed(event, "Follow"));
    beta.admin(&["peer", "approve", &alpha.address, "--fingerprint", &alpha_fingerprint]);
    alpha.wait_for(|event| processed(event, "Accept"));
    (alpha, beta)
}

fn applied_a_batch(event: &serde_json::Value) -> bool {
    event["fields"]["message"] == "inbound activities applied"
        || (event["fields"]["message"] == "inbound activity processed"
            && ["Create", "Update", "Delete"].contains(&event["fields"]["activity_type"].as_str().unwrap_or("")))
}

/// Whether every event of alpha's outbox was applied on beta, and how many were.
async fn delivered(alpha: &interai::instance::Instance, beta: &interai::instance::Instance) -> (usize, usize) {
    let events = alpha
        .federation()
        .outbox_entries(0, 1_000_000)
        .await
        .expect("alpha's outbox");
    let base = alpha.federation().public_base_url().to_owned();
    let mut done = 0;
    for entry in &events {
        let activity_id = format!("{base}/activities/{}", entry.event.event.event_id);
        if beta
            .federation()
            .inbound_activity(&activity_id)
            .await
            .expect("read")
            .is_some_and(|row| row.processed_at.is_some())
        {
            done += 1;
        }
    }
    (done, events.len())
}

/// Every activity beta took from alpha was processed once, none was refused, and each of alpha's revisions was
/// applied exactly once (the same revision can arrive twice, pushed and pulled: the second is "ignored").
async fn applied_once(alpha: &interai::instance::Instance, beta: &interai::instance::Instance, alpha_realm: &str) {
    let revisions = alpha
        .federation()
        .outbox_entries(0, 1_000_000)
        .await
        .expect("alpha's outbox")
        .iter()
        .filter(|entry| {
            matches!(
                entry.event.event.change,
                interai::domain::change::Change::ContentRevised { .. }
            )
        })
        .count();
    let lines = beta
        .federation()
        .intake_log(Some(alpha_realm), 10_000_000)
        .await
        .expect("intake");
    let replicated: Vec<_> = lines
        .iter()
        .filter(|line| ["Create", "Update", "Delete"].contains(&line.activity_type.as_str()))
        .collect();
    let mut ids: Vec<&str> = replicated.iter().map(|line| line.activity_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), replicated.len(), "an activity was processed twice");
    let refused: Vec<_> = replicated.iter().filter(|line| line.outcome == "refused").collect();
    assert!(refused.is_empty(), "refused: {refused:?}");
    let applied_revisions = replicated
        .iter()
        .filter(|line| line.outcome == "applied" && line.detail.starts_with("cnt_"))
        .count();
    assert_eq!(applied_revisions, revisions, "each revision applied exactly once");
}

/// Waits (on beta's log, never on a timer) until everything alpha's outbox holds was applied on beta.
async fn wait_until_delivered(
    beta: &Side,
    alpha_view: &interai::instance::Instance,
    beta_view: &interai::instance::Instance,
) -> usize {
    loop {
        let (done, total) = delivered(alpha_view, beta_view).await;
        if total > 0 && done == total {
            return total;
        }
        beta.wait_for(applied_a_batch);
    }
}

#[tokio::test]
async fn a_sender_killed_mid_delivery_loses_nothing_and_applies_nothing_twice() {
    let (mut alpha, beta) = peered_sides().await;
    // Knowledge published on alpha by another process while alpha delivers; alpha is killed as soon as beta has
    // applied its first batch.
    let seeding = alpha
        .command()
        .args(["admin", "seed", "--items", "300"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("seed starts");
    beta.wait_for(applied_a_batch);
    alpha.kill();
    let seeded = seeding.wait_with_output().expect("seed ends");
    assert!(seeded.status.success(), "the seed finished");
    // The restarted sender resumes from its cursor (after the killed process's lease ran out).
    alpha.serve();
    let alpha_view = alpha.open().await;
    let beta_view = beta.open().await;
    let total = wait_until_delivered(&beta, &alpha_view, &beta_view).await;
    assert!(total >= 300, "every published item was an outbox event: {total}");
    applied_once(&alpha_view, &beta_view, &alpha.address).await;
}

#[tokio::test]
async fn two_sender_processes_on_one_postgresql_deliver_each_activity_once() {
    let (alpha, beta) = peered_sides().await;
    if !alpha.database.url.starts_with("postgres") {
        // Two server processes share a database only on PostgreSQL (the embedded SQLite has one writer process).
        eprintln!("skipped on SQLite: two serve processes on one database need PostgreSQL");
        return;
    }
    let mut second = alpha.second_process();
    second.serve();
    alpha.admin(&["seed", "--items", "200"]);
    let alpha_view = alpha.open().await;
    let beta_view = beta.open().await;
    wait_until_delivered(&beta, &alpha_view, &beta_view).await;
    applied_once(&alpha_view, &beta_view, &alpha.address).await;
    // Beta's inbox saw each activity once: no duplicate from the other process.
    let key = std::fs::read_to_string(beta.database.directory.path().join("admin.key")).expect("admin key");
    let metrics = reqwest::Client::new()
        .get(format!("http://{}/metrics", beta.address))
        .bearer_auth(key.trim())
        .send()
        .await
        .expect("scrape")
        .text()
        .await
        .expect("body");
    let duplicates = crate::metrics::value_of(
        &metrics,
        "interai_inbox_requests_total",
        &[("outcome", "duplicate"), ("reason", "none")],
    );
    assert_eq!(duplicates, 0.0, "an activity was sent twice");
    drop(second);
}

/// One number read from `side`'s database by `query` (for what no public reading gives by origin).
async fn count_directly(side: &Side, query: &str, origin: &str) -> i64 {
    let mut connection = DirectConnection::open(&side.database.url).await;
    let count = connection.count(query, origin).await;
    connection.close().await;
    count
}

/// The evidence records `origin` sent to its peers: the distinct records of its outbox's `evidence_recorded` events.
async fn evidence_sent(origin: &interai::instance::Instance) -> usize {
    let mut records: Vec<String> = origin
        .federation()
        .outbox_entries(0, 10_000_000)
        .await
        .expect("the outbox")
        .into_iter()
        .filter_map(|entry| match entry.event.event.change {
            interai::domain::change::Change::EvidenceRecorded { record_id } => Some(record_id),
            _ => None,
        })
        .collect();
    records.sort_unstable();
    records.dedup();
    records.len()
}

/// How many of `origin`'s evidence records `side` holds.
async fn evidence_held(side: &Side, origin: &str) -> usize {
    let held = count_directly(
        side,
        "SELECT count(*) FROM evidence_provenance WHERE origin = $1",
        origin,
    )
    .await;
    usize::try_from(held).expect("a count")
}

/// Peers two served instances as the README says, with the fingerprints their admins read out.
fn peer_served(first: &Side, first_fingerprint: &str, second: &Side, second_fingerprint: &str) {
    first.admin(&[
        "peer",
        "add",
        &format!("http://{}", second.address),
        "--fingerprint",
        second_fingerprint,
    ]);
    second.wait_for(|event| processed(event, "Follow"));
    second.admin(&["peer", "approve", &first.address, "--fingerprint", first_fingerprint]);
    first.wait_for(|event| processed(event, "Accept"));
}

#[tokio::test]
async fn evidence_published_on_three_instances_while_one_is_killed_converges_with_each_record_counted_once() {
    let mut sides = vec![Side::new().await, Side::new().await, Side::new().await];
    let fingerprints: Vec<String> = sides.iter().map(|side| side.fingerprint(true)).collect();
    for side in &mut sides {
        side.serve();
    }
    for (first, second) in [(0, 1), (0, 2), (1, 2)] {
        peer_served(
            &sides[first],
            &fingerprints[first],
            &sides[second],
            &fingerprints[second],
        );
    }
    // Knowledge and evidence (usage, reviews, ratings from many controllers) seeded on all three at once, each by a
    // process of its own beside the server; the second instance is killed as soon as it has applied a first batch
    // from a peer, and started again while the others (and its own seeder) go on.
    let seeders: Vec<Child> = sides
        .iter()
        .enumerate()
        .map(|(number, side)| {
            side.command()
                .args(["admin", "seed", "--items", "60", "--seed", &(number + 7).to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("seed starts")
        })
        .collect();
    sides[1].wait_for(applied_a_batch);
    sides[1].kill();
    for seeder in seeders {
        let seeded = seeder.wait_with_output().expect("seed ends");
        assert!(seeded.status.success(), "the seed finished");
    }
    sides[1].serve();

    let views = vec![sides[0].open().await, sides[1].open().await, sides[2].open().await];
    let mut sent = Vec::new();
    for view in &views {
        let count = evidence_sent(view).await;
        assert!(count > 0, "the seed wrote evidence about federated content");
        sent.push(count);
    }
    // Every instance ends up holding every record its peers sent, once (waiting on the log of the one that lacks
    // some, never on a timer).
    loop {
        let mut lacking = None;
        for (receiver, side) in sides.iter().enumerate() {
            for (origin, other) in sides.iter().enumerate() {
                if origin != receiver && evidence_held(side, &other.address).await < sent[origin] {
                    lacking = Some(receiver);
                }
            }
        }
        match lacking {
            Some(receiver) => {
                sides[receiver].wait_for_at_most(std::time::Duration::from_secs(120), applied_a_batch);
            }
            None => break,
        }
    }
    for (receiver, side) in sides.iter().enumerate() {
        for (origin, other) in sides.iter().enumerate() {
            if origin != receiver {
                assert_eq!(
                    evidence_held(side, &other.address).await,
                    sent[origin],
                    "nothing extra either"
                );
            }
        }
        // Each stored assessment of a target with other realms' evidence, kept up to date record by record, is what
        // a full recomputation from the rows gives at the time it was computed: no record counted twice, none left
        // out (PostgreSQL keeps that time to the microsecond, a difference of ~1e-14 in decay; one record more or
        // less moves a value by far more).
        let view = sides[receiver].open().await;
        let targets = remote_targets(side).await;
        assert!(!targets.is_empty());
        for target in targets {
            let stored = view.service().trust_summary(&target).await.expect("summary");
            let recomputed = view
                .service()
                .recompute_trust_at(&target, stored.computed_at)
                .await
                .expect("recomputed");
            let parties = |count: interai::trust::PartyCount| i32::try_from(count.total()).expect("small");
            assert_eq!(
                (stored.status, stored.independent_confirmations, stored.contradictions),
                (
                    recomputed.status,
                    parties(recomputed.counts.independent_confirmations),
                    parties(recomputed.counts.contradictions)
                ),
                "{target} on {}",
                side.address
            );
            assert!(
                (stored.value - recomputed.value).abs() < 1e-12,
                "{target} on {}: stored {}, recomputed {}",
                side.address,
                stored.value,
                recomputed.value
            );
        }
    }
}

/// Up to 25 targets `side` holds other realms' evidence about (those it holds themselves).
async fn remote_targets(side: &Side) -> Vec<interai::domain::PublicId> {
    let mut connection = DirectConnection::open(&side.database.url).await;
    let ids = connection
        .texts(
            "SELECT DISTINCT p.target_id FROM evidence_provenance p \
             JOIN trust_summaries t ON t.target_id = p.target_id ORDER BY p.target_id LIMIT 25",
        )
        .await;
    connection.close().await;
    ids.iter()
        .map(|id| interai::domain::PublicId::parse(id).expect("an ID"))
        .collect()
}
