//! Console benchmark (not a timed test): how long each page of the web console takes, as one admin's browser waits
//! for it over loopback HTTP, on a seeded instance with peers in every state. The target (issue 41): every page
//! renders on the server in at most 50 ms at the 95th percentile, at 100,000 items and 20 peers.
//!
//! Run with `cargo bench --bench console`. It builds an instance in this process, seeds it with `interai::seed`
//! (100,000 items by default; a database that already holds content is not seeded again), gives it 20 peers, serves
//! it on 127.0.0.1 with `Instance::serve`, signs in to `/console/` over HTTP with an admin key (`POST
//! /console/sign-in`, the session cookie kept) and asks for every page, one page after another: after a few
//! unmeasured requests, each page a number of times from one client, each request waited for before the next (what
//! the target means), then the same from several concurrent clients. Each request is timed from sending it to the
//! last byte of the answer. It prints one table per backend with p50, p95, p99 and max per page, and says which pages
//! meet the target.
//!
//! The peers are small instances of their own in this process (a SQLite file each), peered through the federation
//! use cases as admins peer them: the console's instance reads each one's manifest and adds it, the peer's admin
//! approves with the fingerprint, and the `Follow` and `Accept` travel between their routers. Their requests go
//! through an in-process switchboard (an injected transport, as the integration tests' network does) instead of
//! sockets, so the served instance's realm need not be its socket's address and a seeded database can be reused
//! across runs. Of 20 peers: 13 active; one active that is down (items published after peering wait for it, its
//! push rounds fail); one active whose inbox refuses (what it refused is kept as dead letters); one active that the
//! admin blocked; two that were asked to peer and have not answered (`pending_out`); one whose inbox refused the
//! `Follow` (a dead letter); one that asked to peer and waits for the admin (`pending_in`). Levels vary.
//!
//! Pages: the overview, the peers list, a peer's page (each peer in turn), the knowledge search (no filter; words;
//! this instance's origin; words and origin; status filters; words and status filters; a second page through the
//! first page's "Next results" link), an item's page (random seeded items, and apart the items with the most
//! evidence records, and a hot item: the seeder gives no item more than about a dozen records, so the benchmark
//! writes `INTERAI_BENCH_HOT_RECORDS` usage reports on one item of its own, once; each item page evaluates the trust
//! explanation and 24 past moments of the trust plot), people,
//! spaces, and the audit log (first page, filtered by an agent, filtered by a tool).
//!
//! Then it times the service calls those pages make, called directly (no HTTP, no session, no template), to tell a
//! page's own work from the service's.
//!
//! Options (environment variables, all optional):
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `INTERAI_BENCH_ITEMS` | 100000 | content items to seed |
//! | `INTERAI_BENCH_SEED` | 1 | the seeder's seed |
//! | `INTERAI_BENCH_SEED_CONCURRENCY` | 4 | items the seeder writes at the same time |
//! | `INTERAI_BENCH_PEERS` | 20 | peers (the mix above, repeated past 20) |
//! | `INTERAI_BENCH_REQUESTS` | 200 | measured requests per page from one client |
//! | `INTERAI_BENCH_CONCURRENT_REQUESTS` | 200 | measured requests per page across the concurrent clients |
//! | `INTERAI_BENCH_CLIENTS` | 4 | concurrent clients; 0 or 1: no concurrent run |
//! | `INTERAI_BENCH_WARMUP` | 10 | unmeasured requests per page before its measured ones |
//! | `INTERAI_BENCH_PAGE_SECONDS` | 120 | a page's measured requests stop after this long (a slow page is reported with fewer) |
//! | `INTERAI_BENCH_PAGES` | all | which pages to ask for, by key (comma-separated, e.g. `people,item`): `overview`, `peers`, `peer`, `knowledge`, `knowledge-words`, `knowledge-origin`, `knowledge-words-origin`, `knowledge-status`, `knowledge-words-status`, `knowledge-page-2`, `item`, `item-most-evidence`, `item-hot`, `people`, `spaces`, `audit`, `audit-actor`, `audit-tool` |
//! | `INTERAI_BENCH_AUDIT_TOOL` | `publish` | the tool the `audit-tool` page filters by |
//! | `INTERAI_BENCH_HOT_RECORDS` | 2000 | usage reports on the hot item (written once, by 40 agents of their own; 0: no hot item) |
//! | `INTERAI_BENCH_SERVICE_CALLS` | 50 | then, in this process without HTTP nor template, each service call the pages make, timed this many times (the people page's key listing 5 times); 0: not |
//! | `INTERAI_BENCH_BACKENDS` | `sqlite,postgres` | which backends to run (PostgreSQL only with the URL set) |
//! | `INTERAI_BENCH_DATABASE_URL` | — | a PostgreSQL server URL; enables the PostgreSQL run |
//! | `INTERAI_BENCH_DATABASE_PATH` | — | a SQLite file to use instead of a temporary one; seeded only when empty, kept |
//! | `INTERAI_BENCH_POSTGRES_DATABASE` | — | an existing PostgreSQL database (on the server of the URL) to use instead of a fresh one; seeded only when empty, kept |
//! | `INTERAI_BENCH_STATE_DIR` | see below | where the instance's data directory (key-encryption key), the benchmark's admin key and the peers' databases are kept with a kept database: `<file>.console` beside a SQLite file, `<temp>/<database>.console` for a named PostgreSQL database; a temporary directory otherwise |
//! | `INTERAI_BENCH_REALM` | `bench.test` | the instance's realm; a reused database must have been created for it |
//! | `INTERAI_BENCH_KEEP` | 0 | 1: keep the fresh PostgreSQL database and print its name |
//! | `INTERAI_BENCH_SEED_ONLY` | 0 | 1: seed, peer, report and stop |
//! | `INTERAI_BENCH_WORKER_THREADS` | cores | tokio worker threads (server, peers and clients share them) |
//! | `INTERAI_BENCH_LOG` | — | a log filter for the instance, e.g. `sqlx::query=debug` |

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use federation::transport::{Transport, TransportError, TransportFuture};
use interai::apub::client::FederationClient;
use interai::clock::SystemClock;
use interai::config::Config;
use interai::domain::{ActorType, AuthenticatedActor, PeerLevel, PeerState, ScopeSet};
use interai::instance::Instance;
use interai::seed::{SeedOptions, SplitMix64, sample_query};
use interai::service::Service;
use interai::service::actors::NewActor;
use interai::service::content::PublishRequest;
use interai::service::federation::Federation;
use interai::service::keys::NewApiKey;
use interai::service::lookup::{GetRequest, ObjectView};
use interai::service::search::SearchRequest;
use interai::service::trust::TrustViewScope;
use interai::service::writes::{CallMetadata, WriteOperation};
use serde_json::json;
use sqlx::Connection;
use tower::ServiceExt;

use common::{Backend, BenchDatabase, LoopbackServer, backends_from_environment, number, variable};

/// The target of issue 41: a page's p95, in microseconds.
const PAGE_P95_TARGET: u64 = 50_000;

/// Items published on the console's instance after peering, which wait for the peer that is down and become dead
/// letters for the one that refuses.
const BACKLOG_ITEMS: usize = 40;

// ---------------------------------------------------------------- options

#[derive(Debug, Clone)]
struct Options {
    items: u64,
    seed: u64,
    seed_concurrency: usize,
    peers: usize,
    requests: usize,
    concurrent_requests: usize,
    clients: usize,
    warmup: usize,
    page_seconds: u64,
    pages: Option<Vec<String>>,
    audit_tool: String,
    service_calls: usize,
    hot_records: usize,
    backends: Vec<Backend>,
    postgres_url: Option<String>,
    sqlite_path: Option<PathBuf>,
    postgres_database: Option<String>,
    state_dir: Option<PathBuf>,
    realm: String,
    keep: bool,
    seed_only: bool,
    worker_threads: Option<usize>,
    log_filter: Option<String>,
}

impl Options {
    fn from_environment() -> Options {
        let (postgres_url, backends) = backends_from_environment();
        Options {
            items: number("INTERAI_BENCH_ITEMS", 100_000_u64).max(1),
            seed: number("INTERAI_BENCH_SEED", 1_u64),
            seed_concurrency: number("INTERAI_BENCH_SEED_CONCURRENCY", 4_usize).max(1),
            peers: number("INTERAI_BENCH_PEERS", 20_usize),
            requests: number("INTERAI_BENCH_REQUESTS", 200_usize).max(1),
            concurrent_requests: number("INTERAI_BENCH_CONCURRENT_REQUESTS", 200_usize),
            clients: number("INTERAI_BENCH_CLIENTS", 4_usize),
            warmup: number("INTERAI_BENCH_WARMUP", 10_usize),
            page_seconds: number("INTERAI_BENCH_PAGE_SECONDS", 120_u64).max(1),
            pages: variable("INTERAI_BENCH_PAGES").map(|list| {
                list.split(',')
                    .map(|key| key.trim().to_owned())
                    .filter(|key| !key.is_empty())
                    .collect()
            }),
            audit_tool: variable("INTERAI_BENCH_AUDIT_TOOL").unwrap_or_else(|| "publish".to_owned()),
            service_calls: number("INTERAI_BENCH_SERVICE_CALLS", 50_usize),
            hot_records: number("INTERAI_BENCH_HOT_RECORDS", 2000_usize),
            backends,
            postgres_url,
            sqlite_path: variable("INTERAI_BENCH_DATABASE_PATH").map(PathBuf::from),
            postgres_database: variable("INTERAI_BENCH_POSTGRES_DATABASE"),
            state_dir: variable("INTERAI_BENCH_STATE_DIR").map(PathBuf::from),
            realm: variable("INTERAI_BENCH_REALM").unwrap_or_else(|| "bench.test".to_owned()),
            keep: number("INTERAI_BENCH_KEEP", 0_u8) != 0,
            seed_only: number("INTERAI_BENCH_SEED_ONLY", 0_u8) != 0,
            worker_threads: variable("INTERAI_BENCH_WORKER_THREADS").map(|_| number("INTERAI_BENCH_WORKER_THREADS", 2)),
            log_filter: variable("INTERAI_BENCH_LOG"),
        }
    }

    /// Where a run on `backend` keeps its instance's data directory, admin key and peers: beside a kept database, so
    /// that a rerun finds them again; `None` for a temporary run.
    fn kept_state_dir(&self, backend: Backend) -> Option<PathBuf> {
        if let Some(directory) = &self.state_dir {
            return Some(directory.join(backend.name()));
        }
        match backend {
            Backend::Sqlite => self.sqlite_path.as_ref().map(|path| {
                let mut name = path.as_os_str().to_owned();
                name.push(".console");
                PathBuf::from(name)
            }),
            Backend::Postgres => self
                .postgres_database
                .as_ref()
                .map(|database| std::env::temp_dir().join(format!("{database}.console"))),
        }
    }

    fn wants(&self, key: &str) -> bool {
        self.pages
            .as_ref()
            .is_none_or(|keys| keys.iter().any(|wanted| wanted == key))
    }
}

// ---------------------------------------------------------------- the in-process switchboard

/// How the switchboard answers for one host.
#[derive(Debug, Clone)]
enum Route {
    /// The instance's router answers.
    Up(axum::Router),
    /// The host is down: requests fail as a refused connection.
    Down,
    /// The host answers every request with this status (an inbox that refuses).
    Refusing(u16),
}

/// The transport every instance of a run sends its federation requests through: each request goes, by host, to the
/// router of the instance that host names (real signatures, real bytes; no socket).
#[derive(Debug, Clone, Default)]
struct Switchboard {
    routes: Arc<Mutex<HashMap<String, Route>>>,
}

impl Switchboard {
    fn set(&self, host: &str, route: Route) {
        self.routes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(host.to_owned(), route);
    }
}

/// The largest answer passed on, as the real transport caps it.
const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

impl Transport for Switchboard {
    fn send(&self, request: http::Request<Vec<u8>>) -> TransportFuture {
        let routes = Arc::clone(&self.routes);
        Box::pin(async move {
            let host = request
                .uri()
                .authority()
                .map(|authority| authority.as_str().to_ascii_lowercase())
                .ok_or_else(|| TransportError::InvalidRequest {
                    detail: "no authority".to_owned(),
                })?;
            let route = routes
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .get(&host)
                .cloned();
            let router = match route {
                Some(Route::Up(router)) => router,
                Some(Route::Down) => {
                    return Err(TransportError::Connect {
                        detail: format!("{host} is down"),
                    });
                }
                Some(Route::Refusing(status)) => {
                    return http::Response::builder()
                        .status(status)
                        .header("content-type", "application/json")
                        .body(br#"{"error":{"code":"refused","message":"this inbox refuses everything"}}"#.to_vec())
                        .map_err(|error| TransportError::Io {
                            detail: error.to_string(),
                        });
                }
                None => {
                    return Err(TransportError::Dns {
                        host,
                        detail: "no such host in the benchmark's network".to_owned(),
                    });
                }
            };
            let (parts, body) = request.into_parts();
            let response = router
                .oneshot(http::Request::from_parts(parts, Body::from(body)))
                .await
                .map_err(|error| TransportError::Io {
                    detail: error.to_string(),
                })?;
            let (parts, body) = response.into_parts();
            let bytes =
                axum::body::to_bytes(body, MAX_RESPONSE_BYTES)
                    .await
                    .map_err(|_| TransportError::ResponseTooLarge {
                        limit: MAX_RESPONSE_BYTES,
                        declared: None,
                    })?;
            Ok(http::Response::from_parts(parts, bytes.to_vec()))
        })
    }
}

// ---------------------------------------------------------------- peers

/// What a peer is to the console's instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Active,
    /// Active, then down: what is published after peering waits for it.
    Down,
    /// Active, then its inbox refuses: what it refused is kept as dead letters.
    Refusing,
    /// Active, then blocked by the admin.
    Blocked,
    /// Asked to peer; has not answered.
    PendingOut,
    /// Asked to peer; its inbox refused the `Follow` (a dead letter).
    FollowRefused,
    /// Asked this instance to peer; waits for the admin.
    PendingIn,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Active => "active",
            Role::Down => "active, down",
            Role::Refusing => "active, inbox refuses",
            Role::Blocked => "blocked",
            Role::PendingOut => "pending_out",
            Role::FollowRefused => "pending_out, Follow refused",
            Role::PendingIn => "pending_in",
        }
    }
}

/// The peers' roles, 20 at a time.
const ROLES: [Role; 20] = [
    Role::Active,
    Role::Active,
    Role::Down,
    Role::Active,
    Role::PendingIn,
    Role::Active,
    Role::Active,
    Role::Refusing,
    Role::Active,
    Role::PendingOut,
    Role::Active,
    Role::Active,
    Role::Blocked,
    Role::Active,
    Role::FollowRefused,
    Role::Active,
    Role::Active,
    Role::PendingOut,
    Role::Active,
    Role::Active,
];

fn level_of(index: usize) -> PeerLevel {
    match index % 7 {
        0 | 3 => PeerLevel::High,
        5 => PeerLevel::Low,
        6 if index.is_multiple_of(2) => PeerLevel::Quarantine,
        _ => PeerLevel::Standard,
    }
}

/// One peer instance: its realm, what it is to the console's instance, and its use cases.
struct PeerNode {
    realm: String,
    role: Role,
    federation: Federation,
    client: FederationClient,
    /// Kept open for the run (its router answers through the switchboard).
    _instance: Instance,
}

/// Opens (or reopens) the peer `index` on its SQLite file under `directory` and connects it to the switchboard.
async fn open_peer(directory: &Path, index: usize, switchboard: &Switchboard) -> PeerNode {
    let realm = format!("peer-{:02}.console.test", index + 1);
    let data_dir = directory.join(&realm);
    let url = format!("sqlite://{}", data_dir.join("interai.db").display());
    let mut config = Config::for_realm(&realm, &url, &data_dir);
    config.federation_allow_http = true;
    let instance = Instance::open(config, Arc::new(SystemClock))
        .await
        .expect("peer instance opens")
        .with_transport(Arc::new(switchboard.clone()));
    instance.bootstrap().await.expect("peer instance bootstraps");
    switchboard.set(&realm, Route::Up(instance.router()));
    PeerNode {
        realm,
        role: ROLES[index % ROLES.len()],
        federation: instance.federation().clone(),
        client: instance.federation_client(),
        _instance: instance,
    }
}

/// The console's instance as peering sees it.
struct Home {
    realm: String,
    base_url: String,
    federation: Federation,
    client: FederationClient,
}

async fn fingerprint(federation: &Federation) -> String {
    federation
        .signing_key()
        .await
        .expect("the instance's key")
        .key_pair
        .public_key()
        .fingerprint()
}

async fn apply_queued(federation: &Federation) {
    federation
        .apply_queued(interai::apub::queued_activity::read)
        .await
        .expect("queued activities applied");
}

async fn state_of(federation: &Federation, realm: &str) -> Option<PeerState> {
    federation.peer_view(realm).await.ok().map(|view| view.peer.state)
}

/// The console's instance reads the peer's manifest and adds it, which queues a `Follow`.
async fn home_asks(home: &Home, peer: &PeerNode, level: PeerLevel) {
    let url = home
        .client
        .peer_url(peer.federation.public_base_url())
        .expect("the peer's URL");
    let introduction = home.client.fetch_manifest(&url).await.expect("the peer's manifest");
    home.federation
        .add_peer(&introduction, level)
        .await
        .expect("the peer added");
}

/// The console's instance sends what it queued for the peer, and the peer applies it.
async fn home_sends(home: &Home, peer: &PeerNode) {
    home.client
        .deliver_due(16, Some(&peer.realm))
        .await
        .expect("the Follow sent");
    apply_queued(&peer.federation).await;
}

/// Peers the console's instance with one peer as `peer.role` says, through the federation use cases only.
async fn establish(home: &Home, peer: &PeerNode, index: usize, switchboard: &Switchboard, home_fingerprint: &str) {
    let level = level_of(index);
    match peer.role {
        Role::Active | Role::Down | Role::Refusing | Role::Blocked => {
            home_asks(home, peer, level).await;
            home_sends(home, peer).await;
            assert_eq!(
                state_of(&peer.federation, &home.realm).await,
                Some(PeerState::PendingIn),
                "{} received the Follow",
                peer.realm
            );
            peer.federation
                .approve_peer(&home.realm, None, Some(home_fingerprint))
                .await
                .expect("the peer's admin approves");
            peer.client
                .deliver_due(16, Some(&home.realm))
                .await
                .expect("the Accept sent");
            apply_queued(&home.federation).await;
            assert_eq!(
                state_of(&home.federation, &peer.realm).await,
                Some(PeerState::Active),
                "{} is active",
                peer.realm
            );
        }
        Role::PendingOut => {
            home_asks(home, peer, level).await;
            home_sends(home, peer).await;
        }
        Role::FollowRefused => {
            home_asks(home, peer, level).await;
            switchboard.set(&peer.realm, Route::Refusing(400));
            home_sends(home, peer).await;
        }
        Role::PendingIn => {
            let url = peer.client.peer_url(&home.base_url).expect("the home URL");
            let introduction = peer.client.fetch_manifest(&url).await.expect("the home manifest");
            peer.federation
                .add_peer(&introduction, PeerLevel::Standard)
                .await
                .expect("the peer adds the console's instance");
            peer.client
                .deliver_due(16, Some(&home.realm))
                .await
                .expect("the Follow sent");
            apply_queued(&home.federation).await;
            assert_eq!(
                state_of(&home.federation, &peer.realm).await,
                Some(PeerState::PendingIn),
                "{} asked to peer",
                peer.realm
            );
        }
    }
}

/// After peering (and on every rerun): the peers that are down or refuse are so again, the blocked one is blocked.
async fn apply_conditions(home: &Home, peers: &[PeerNode], switchboard: &Switchboard, fresh: bool) {
    for peer in peers {
        match peer.role {
            Role::Down => switchboard.set(&peer.realm, Route::Down),
            Role::Refusing | Role::FollowRefused => switchboard.set(&peer.realm, Route::Refusing(400)),
            Role::Blocked if fresh => {
                home.federation
                    .block_peer(&peer.realm, "sent reviews of items it never used", None)
                    .await
                    .expect("the peer blocked");
            }
            _ => {}
        }
    }
}

fn backlog_item(number: usize) -> PublishRequest {
    let title = format!("Drain a stuck outbox before a peer's maintenance window ({number})");
    PublishRequest {
        content_type: "runbook".to_owned(),
        title: title.clone(),
        summary: "What to check before a peer goes down for maintenance, so its backlog drains when it returns."
            .to_owned(),
        body_markdown: format!(
            "# {title}\n\n1. Read the peer's page: its push cursor and the oldest event waiting.\n\
             2. Let the push rounds run; a peer that is down costs one request per backoff period.\n\
             3. After the window, check that the backlog is gone and no dead letters were kept.\n"
        ),
        tags: vec!["federation".to_owned(), "operations".to_owned()],
        ..PublishRequest::default()
    }
}

// ---------------------------------------------------------------- the admin

/// A new controller and its agent with an `admin`-scope key; the key's secret.
async fn new_admin_key(service: &Service) -> String {
    let owner = service
        .create_actor(NewActor {
            actor_type: ActorType::User,
            display_name: "Console benchmark admin".to_owned(),
            controller: None,
        })
        .await
        .expect("controller created");
    let agent = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: "Console benchmark admin's browser".to_owned(),
            controller: Some(owner.id),
        })
        .await
        .expect("agent created");
    service
        .create_api_key(NewApiKey {
            actor_id: agent.id,
            scopes: ScopeSet::parse_list("admin").expect("scopes"),
            expires_at: None,
            label: Some("console benchmark".to_owned()),
        })
        .await
        .expect("key issued")
        .secret
}

/// The benchmark's admin key: the one kept in `state_dir` if it still works, or a new one (kept there).
async fn admin_key(service: &Service, state_dir: &Path) -> String {
    let path = state_dir.join("benchmark-admin.key");
    if let Ok(secret) = std::fs::read_to_string(&path)
        && service.authenticate(secret.trim()).await.is_ok()
    {
        return secret.trim().to_owned();
    }
    let secret = new_admin_key(service).await;
    interai::instance::write_secret_file(&path, &secret).expect("admin key kept");
    secret
}

// ---------------------------------------------------------------- what to ask for

/// A seeded item and its evidence records.
#[derive(Debug, Clone)]
struct Item {
    id: String,
    records: i64,
}

/// Content items to show: the results of many sampled queries and of the trust order, with their evidence counts.
async fn sampled_items(service: &Service, admin: &AuthenticatedActor, wanted: usize) -> Vec<Item> {
    let mut random = SplitMix64::new(0x17E4);
    let mut ids: Vec<String> = Vec::new();
    let mut requests = vec![SearchRequest {
        kinds: vec!["content".to_owned()],
        sort: Some("trust".to_owned()),
        limit: Some(50),
        ..SearchRequest::default()
    }];
    for _ in 0..wanted {
        let count = 1 + random.index(2);
        let (_, query) = sample_query(&mut random, count);
        requests.push(SearchRequest {
            query: Some(query),
            kinds: vec!["content".to_owned()],
            limit: Some(20),
            ..SearchRequest::default()
        });
    }
    for request in requests {
        if ids.len() >= wanted {
            break;
        }
        let page = service.admin_search(admin, &request).await.expect("search for IDs");
        for hit in page.results {
            if !ids.contains(&hit.id) {
                ids.push(hit.id);
            }
        }
    }
    ids.truncate(wanted);
    let mut items = Vec::with_capacity(ids.len());
    for id in ids {
        let request = GetRequest {
            id: id.clone(),
            revision: None,
            include: Some(vec!["evidence_summary".to_owned()]),
            evidence_cursor: None,
            trust_view: TrustViewScope::All,
        };
        let records = match service.admin_get(admin, &request).await.expect("get") {
            ObjectView::Content(content) => content.evidence_summary.map_or(0, |summary| {
                summary.usage_by_result.iter().map(|(_, count)| count).sum::<i64>()
                    + summary.reviews_by_verdict.iter().map(|(_, count)| count).sum::<i64>()
                    + summary.ratings_by_dimension.iter().map(|(_, count)| count).sum::<i64>()
            }),
            _ => 0,
        };
        items.push(Item { id, records });
    }
    items
}

/// Agents whose audit records the `audit-actor` page filters by.
async fn agent_ids(service: &Service) -> Vec<String> {
    let mut agents: Vec<String> = service
        .list_actors()
        .await
        .expect("actors")
        .into_iter()
        .filter(|actor| actor.actor_type == ActorType::Agent)
        .map(|actor| actor.id.as_str().to_owned())
        .collect();
    agents.truncate(500);
    agents
}

fn encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn words(random: &mut SplitMix64) -> String {
    let count = 1 + random.weighted(&[35, 40, 20, 5]);
    encoded(&sample_query(random, count).1)
}

/// The title of the item the hot item page shows (found again on a rerun).
const HOT_TITLE: &str = "Console benchmark hot item: restart a stuck federation loop";

/// The hot item: an item of its own with `records` usage reports from 40 agents (written once, then found again by
/// its title); its content ID, or `None` when `records` is 0.
async fn hot_item(
    service: &Service,
    admin: &AuthenticatedActor,
    home_instance: &Instance,
    records: usize,
) -> Option<String> {
    if records == 0 {
        return None;
    }
    let request = SearchRequest {
        query: Some(HOT_TITLE.to_owned()),
        kinds: vec!["content".to_owned()],
        limit: Some(5),
        ..SearchRequest::default()
    };
    let found = service.admin_search(admin, &request).await.expect("search");
    if let Some(hit) = found.results.into_iter().find(|hit| hit.title == HOT_TITLE) {
        return Some(hit.id);
    }
    let started = Instant::now();
    let publisher = common::agents(service, 1, "publish", "Console benchmark hot item author")
        .await
        .remove(0);
    let mut item = backlog_item(0);
    item.title = HOT_TITLE.to_owned();
    let id = service
        .publish(
            &publisher,
            &CallMetadata::internal(WriteOperation::Publish, json!({})),
            item,
        )
        .await
        .expect("publish")
        .id;
    let reporters = common::agents(service, 40, "usage", "Console benchmark reporter").await;
    for number in 0..records {
        service
            .report_usage(
                &reporters[number % reporters.len()],
                &CallMetadata::internal(WriteOperation::ReportUsage, json!({})),
                interai::service::evidence::UsageRequest {
                    target: id.clone(),
                    usage_type: "operation".to_owned(),
                    result: if number % 5 == 4 { "failure" } else { "success" }.to_owned(),
                    real_world_use: number % 3 == 0,
                    ..interai::service::evidence::UsageRequest::default()
                },
            )
            .await
            .expect("usage reported");
    }
    // The reports go to the peers before anything is measured, not during.
    let federation_loop = home_instance.federation_loop();
    for _ in 0..500 {
        if federation_loop.run_once().await == 0 {
            break;
        }
    }
    eprintln!(
        "hot item {id}: {records} usage reports written and pushed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Some(id)
}

/// What one page's requests draw from.
struct Targets {
    realm: String,
    peers: Vec<String>,
    items: Vec<Item>,
    most_evidence: Vec<Item>,
    hot: Option<String>,
    agents: Vec<String>,
    audit_tool: String,
    /// Second pages of word searches, found by following the first pages' "Next results" links.
    second_pages: Vec<String>,
}

/// The pages, by key and label.
const PAGES: &[(&str, &str)] = &[
    ("overview", "overview /console/"),
    ("peers", "peers list"),
    ("peer", "a peer's page"),
    ("knowledge", "knowledge, no filter"),
    ("knowledge-words", "knowledge, words"),
    ("knowledge-origin", "knowledge, origin"),
    ("knowledge-words-origin", "knowledge, words + origin"),
    ("knowledge-status", "knowledge, status filters"),
    ("knowledge-words-status", "knowledge, words + status filters"),
    ("knowledge-page-2", "knowledge, words, page 2"),
    ("item", "item page, random item"),
    ("item-most-evidence", "item page, most evidence"),
    ("item-hot", "item page, hot item"),
    ("people", "people"),
    ("spaces", "spaces"),
    ("audit", "audit, first page"),
    ("audit-actor", "audit, one agent"),
    ("audit-tool", "audit, one tool"),
];

/// The path of one request for the page `key`.
fn path_for(key: &str, targets: &Targets, random: &mut SplitMix64) -> String {
    match key {
        "overview" => "/console/".to_owned(),
        "peers" => "/console/peers".to_owned(),
        "peer" => format!("/console/peers/{}", random.pick(&targets.peers)),
        "knowledge" => "/console/knowledge".to_owned(),
        "knowledge-words" => format!("/console/knowledge?q={}", words(random)),
        "knowledge-origin" => format!("/console/knowledge?origin={}", encoded(&targets.realm)),
        "knowledge-words-origin" => format!(
            "/console/knowledge?q={}&origin={}",
            words(random),
            encoded(&targets.realm)
        ),
        "knowledge-status" => format!(
            "/console/knowledge?min_status={}&disputed=leave_out",
            if random.chance(0.7) {
                "supported"
            } else {
                "high_confidence"
            }
        ),
        "knowledge-words-status" => {
            let query = words(random);
            format!(
                "/console/knowledge?q={query}&min_status={}&disputed=leave_out",
                if random.chance(0.7) {
                    "supported"
                } else {
                    "high_confidence"
                }
            )
        }
        "knowledge-page-2" => random.pick(&targets.second_pages).clone(),
        "item" => format!("/console/knowledge/{}", random.pick(&targets.items).id),
        "item-most-evidence" => format!("/console/knowledge/{}", random.pick(&targets.most_evidence).id),
        "item-hot" => format!("/console/knowledge/{}", targets.hot.as_deref().unwrap_or_default()),
        "people" => "/console/people".to_owned(),
        "spaces" => "/console/spaces".to_owned(),
        "audit" => "/console/audit".to_owned(),
        "audit-actor" => format!("/console/audit?actor={}", random.pick(&targets.agents)),
        "audit-tool" => format!("/console/audit?tool={}", encoded(&targets.audit_tool)),
        other => panic!("unknown page {other}"),
    }
}

// ---------------------------------------------------------------- the browser

/// One admin's browser: its own kept-alive connection and the session cookie.
#[derive(Clone)]
struct Browser {
    http: reqwest::Client,
    base_url: String,
    cookie: String,
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(1)
        .tcp_nodelay(true)
        .build()
        .expect("HTTP client")
}

impl Browser {
    /// Posts the sign-in form with `key` and keeps the session cookie the answer sets.
    async fn sign_in(base_url: &str, key: &str) -> Browser {
        let http = http_client();
        let response = http
            .post(format!("{base_url}/console/sign-in"))
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(format!("api_key={}", encoded(key)))
            .send()
            .await
            .expect("the sign-in form answered");
        let status = response.status();
        let cookie = response
            .headers()
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find(|value| value.starts_with("interai_console="))
            .and_then(|value| value.split(';').next())
            .map(str::to_owned);
        let body = response.text().await.unwrap_or_default();
        assert_eq!(status, reqwest::StatusCode::SEE_OTHER, "signing in failed: {body}");
        Browser {
            http,
            base_url: base_url.to_owned(),
            cookie: cookie.expect("the sign-in answer sets the session cookie"),
        }
    }

    /// Another browser of the same session, on a connection of its own.
    fn another(&self) -> Browser {
        Browser {
            http: http_client(),
            base_url: self.base_url.clone(),
            cookie: self.cookie.clone(),
        }
    }

    /// Asks for `path`; the time from sending to the answer's last byte (µs) and the page, or why it failed.
    async fn get(&self, path: &str) -> Result<(u64, String), String> {
        let started = Instant::now();
        let response = self
            .http
            .get(format!("{}{path}", self.base_url))
            .header(reqwest::header::COOKIE, &self.cookie)
            .send()
            .await
            .map_err(|error| format!("request failed: {error}"))?;
        let status = response.status();
        let body = response.text().await.map_err(|error| format!("body failed: {error}"))?;
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        if status != reqwest::StatusCode::OK {
            let excerpt: String = body.chars().take(300).collect();
            return Err(format!("HTTP {status}: {excerpt}"));
        }
        Ok((micros, body))
    }
}

/// The "Next results" link of a knowledge page, as the browser would follow it.
fn next_link(page: &str) -> Option<String> {
    let end = page.find("\" rel=\"next\"")?;
    let start = page[..end].rfind("href=\"")? + "href=\"".len();
    Some(
        page[start..end]
            .replace("&#38;", "&")
            .replace("&amp;", "&")
            .replace("&#39;", "'")
            .replace("&#34;", "\""),
    )
}

/// Second pages of word searches: each first page's "Next results" link.
async fn second_pages(browser: &Browser, wanted: usize) -> Vec<String> {
    let mut random = SplitMix64::new(0x2A6E);
    let mut links = Vec::new();
    for _ in 0..wanted * 4 {
        if links.len() >= wanted {
            break;
        }
        let path = format!("/console/knowledge?q={}", words(&mut random));
        if let Ok((_, page)) = browser.get(&path).await
            && let Some(link) = next_link(&page)
        {
            links.push(link);
        }
    }
    links
}

// ---------------------------------------------------------------- measuring

/// One page's requests: latencies (µs), bytes received, and failures by reason.
#[derive(Debug, Default)]
struct PageSamples {
    latencies: Vec<u64>,
    bytes: u64,
    failures: BTreeMap<String, u64>,
}

impl PageSamples {
    fn merge(&mut self, other: PageSamples) {
        self.latencies.extend(other.latencies);
        self.bytes += other.bytes;
        for (reason, count) in other.failures {
            *self.failures.entry(reason).or_default() += count;
        }
    }
}

/// Asks `count` times for the page `key` (stopping at `deadline`), one request after another.
async fn drive(
    browser: Browser,
    key: &'static str,
    targets: Arc<Targets>,
    count: usize,
    deadline: Instant,
    seed: u64,
) -> PageSamples {
    let mut random = SplitMix64::new(seed);
    let mut samples = PageSamples::default();
    for _ in 0..count {
        if Instant::now() >= deadline {
            break;
        }
        let path = path_for(key, &targets, &mut random);
        match browser.get(&path).await {
            Ok((micros, body)) => {
                samples.latencies.push(micros);
                samples.bytes += body.len() as u64;
            }
            Err(reason) => {
                let failures = samples.failures.entry(reason.clone()).or_default();
                if *failures == 0 {
                    eprintln!("{key}: {path} failed: {reason}");
                }
                *failures += 1;
            }
        }
    }
    samples
}

#[derive(Debug, Clone, Copy, Default)]
struct Summary {
    count: usize,
    p50: u64,
    p95: u64,
    p99: u64,
    max: u64,
    /// The mean answer's size in bytes.
    bytes: u64,
    failures: u64,
}

fn summarize(samples: &PageSamples) -> Summary {
    let failures = samples.failures.values().sum();
    if samples.latencies.is_empty() {
        return Summary {
            failures,
            ..Summary::default()
        };
    }
    let mut sorted = samples.latencies.clone();
    sorted.sort_unstable();
    // Nearest rank.
    let at = |quantile: f64| {
        let position = ((sorted.len() as f64) * quantile).ceil() as usize;
        sorted[position.saturating_sub(1).min(sorted.len() - 1)]
    };
    Summary {
        count: sorted.len(),
        p50: at(0.50),
        p95: at(0.95),
        p99: at(0.99),
        max: sorted[sorted.len() - 1],
        bytes: samples.bytes / sorted.len() as u64,
        failures,
    }
}

fn milliseconds(micros: u64) -> String {
    format!("{:.2}", micros as f64 / 1000.0)
}

fn verdict(summary: &Summary) -> &'static str {
    if summary.count == 0 {
        "no answer"
    } else if summary.p95 <= PAGE_P95_TARGET && summary.failures == 0 {
        "met"
    } else {
        "MISSED"
    }
}

/// Prints `rows`: pages (`pages`: with their size and the target's verdict) or service calls.
fn print_table(title: &str, rows: &[(&'static str, Summary)], pages: bool) {
    println!("\n{title}\n");
    println!(
        "| {:<42} | {:>5} | {:>8} | {:>8} | {:>8} | {:>8} | {:>8} | {:<9} |",
        if pages {
            "page (latency in ms)"
        } else {
            "service call (latency in ms)"
        },
        "n",
        "p50",
        "p95",
        "p99",
        "max",
        if pages { "KiB" } else { "" },
        if pages { "p95≤50ms" } else { "" }
    );
    println!(
        "|{}|-------|----------|----------|----------|----------|----------|-----------|",
        "-".repeat(44)
    );
    for (label, summary) in rows {
        let failures = if summary.failures > 0 {
            format!(" ({} failed)", summary.failures)
        } else {
            String::new()
        };
        println!(
            "| {label:<42} | {:>5} | {:>8} | {:>8} | {:>8} | {:>8} | {:>8} | {:<9} |{failures}",
            summary.count,
            milliseconds(summary.p50),
            milliseconds(summary.p95),
            milliseconds(summary.p99),
            milliseconds(summary.max),
            if pages {
                format!("{:.1}", summary.bytes as f64 / 1024.0)
            } else {
                String::new()
            },
            if pages { verdict(summary) } else { "" },
        );
    }
}

// ---------------------------------------------------------------- the service calls behind the pages

/// Times `call` `count` times.
async fn timed(count: usize, mut call: impl AsyncFnMut(usize)) -> Summary {
    let mut samples = PageSamples::default();
    for index in 0..count {
        let started = Instant::now();
        call(index).await;
        samples
            .latencies
            .push(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
    }
    summarize(&samples)
}

/// The service calls the pages make, each timed in this process: what a page costs before HTTP, the session and
/// its template.
async fn service_times(
    service: &Service,
    federation: &Federation,
    admin: &AuthenticatedActor,
    targets: &Targets,
    count: usize,
) -> Vec<(&'static str, Summary)> {
    let mut rows = Vec::new();
    rows.push((
        "instance_overview",
        timed(count, async |_| {
            service.instance_overview().await.expect("overview");
        })
        .await,
    ));
    rows.push((
        "list_peers (20 peer views)",
        timed(count, async |_| {
            federation.list_peers().await.expect("peers");
        })
        .await,
    ));
    rows.push((
        "peer_view + dead_letters",
        timed(count, async |index| {
            let realm = &targets.peers[index % targets.peers.len()];
            federation.peer_view(realm).await.expect("peer");
            federation.dead_letters(Some(realm), 50).await.expect("dead letters");
        })
        .await,
    ));
    rows.push((
        "list_spaces",
        timed(count, async |_| {
            service.list_spaces().await.expect("spaces");
        })
        .await,
    ));
    let mut random = SplitMix64::new(0x5E4C);
    let queries: Vec<Option<String>> = (0..count)
        .map(|index| {
            (index % 2 == 1).then(|| {
                let words = 1 + random.weighted(&[35, 40, 20, 5]);
                sample_query(&mut random, words).1
            })
        })
        .collect();
    rows.push((
        "admin_search (page 1, none or words)",
        timed(count, async |index| {
            let request = SearchRequest {
                query: queries[index].clone(),
                include_disputed: Some(true),
                limit: Some(25),
                ..SearchRequest::default()
            };
            service.admin_search(admin, &request).await.expect("search");
        })
        .await,
    ));
    let item_request = |id: &str| GetRequest {
        id: id.to_owned(),
        revision: None,
        include: Some(
            ["claims", "revisions", "explanation"]
                .into_iter()
                .map(str::to_owned)
                .collect(),
        ),
        evidence_cursor: None,
        trust_view: TrustViewScope::All,
    };
    let hot: Vec<Item> = targets
        .hot
        .iter()
        .map(|id| Item {
            id: id.clone(),
            records: 0,
        })
        .collect();
    let mut found_by_set = Vec::new();
    for (get_label, history_label, items) in [
        (
            "admin_get (item page), random item",
            "trust_history, 24 moments, random item",
            &targets.items,
        ),
        (
            "admin_get (item page), most evidence",
            "trust_history, 24 moments, most evidence",
            &targets.most_evidence,
        ),
        (
            "admin_get (item page), hot item",
            "trust_history, 24 moments, hot item",
            &hot,
        ),
    ] {
        if items.is_empty() {
            continue;
        }
        let mut found = Vec::new();
        let summary = timed(count, async |index| {
            let item = &items[index % items.len()];
            if let ObjectView::Content(content) = service.admin_get(admin, &item_request(&item.id)).await.expect("get")
                && let Some(explained) = content.explanation
            {
                found.push((content.revision.id.clone(), explained.explanation.computed_at));
            }
        })
        .await;
        rows.push((get_label, summary));
        found_by_set.push((history_label, found));
    }
    for (label, found) in &found_by_set {
        if found.is_empty() {
            continue;
        }
        let summary = timed(count, async |index| {
            let (revision, until) = &found[index % found.len()];
            service
                .trust_history(
                    revision,
                    interai::service::trust::TrustViewScope::All,
                    chrono::DateTime::<chrono::Utc>::MIN_UTC,
                    *until,
                    interai::console::TRUST_PLOT_POINTS,
                )
                .await
                .expect("trust history");
        })
        .await;
        rows.push((*label, summary));
    }
    rows.push((
        "list_actors",
        timed(count, async |_| {
            service.list_actors().await.expect("actors");
        })
        .await,
    ));
    let actors = service.list_actors().await.expect("actors");
    rows.push((
        "list_api_keys of every actor",
        timed(count.min(5), async |_| {
            for actor in &actors {
                service.list_api_keys(&actor.id).await.expect("keys");
            }
        })
        .await,
    ));
    rows.push((
        "audit_log, first page",
        timed(count, async |_| {
            service
                .audit_log(interai::service::audit::AuditQuery::default())
                .await
                .expect("audit");
        })
        .await,
    ));
    rows.push((
        "audit_log, one tool",
        timed(count, async |_| {
            service
                .audit_log(interai::service::audit::AuditQuery {
                    tool: Some(targets.audit_tool.clone()),
                    ..interai::service::audit::AuditQuery::default()
                })
                .await
                .expect("audit");
        })
        .await,
    ));
    rows
}

// ---------------------------------------------------------------- one backend

/// What one backend's run found, for the closing summary.
struct BackendResult {
    backend: Backend,
    sequential: Vec<(&'static str, Summary)>,
}

async fn has_content(service: &Service, admin: &AuthenticatedActor) -> bool {
    let request = SearchRequest {
        kinds: vec!["content".to_owned()],
        sort: Some("recent".to_owned()),
        limit: Some(1),
        ..SearchRequest::default()
    };
    !service
        .admin_search(admin, &request)
        .await
        .expect("browse")
        .results
        .is_empty()
}

async fn seed(service: &Service, backend: Backend, options: &Options) {
    eprintln!("{}: seeding {} items…", backend.name(), options.items);
    let seed_options = SeedOptions {
        items: options.items,
        seed: options.seed,
        controllers: None,
        concurrency: options.seed_concurrency,
    };
    let started = Instant::now();
    let last_report = std::cell::Cell::new(Instant::now());
    let report = interai::seed::seed(service, seed_options, |done, total| {
        if last_report.get().elapsed() >= Duration::from_secs(60) || done == total {
            last_report.set(Instant::now());
            eprintln!("  {done}/{total} items after {:.0} s", started.elapsed().as_secs_f64());
        }
    })
    .await
    .expect("seeding succeeds");
    println!("{}: seeded {report}", backend.name());
}

async fn vacuum_analyze(url: &str) {
    // A production server's autovacuum vacuums and analyzes the new rows; this benchmark's server may have it off.
    let started = Instant::now();
    let mut connection = sqlx::PgConnection::connect(url).await.expect("connect");
    sqlx::query("VACUUM ANALYZE")
        .execute(&mut connection)
        .await
        .expect("VACUUM ANALYZE");
    connection.close().await.ok();
    eprintln!("postgres: VACUUM ANALYZE took {:.1} s", started.elapsed().as_secs_f64());
}

/// Opens the peers and, on a database without peers, peers them with the console's instance; returns them.
async fn set_up_peers(
    home: &Home,
    home_instance: &Instance,
    service: &Service,
    state_dir: &Path,
    switchboard: &Switchboard,
    count: usize,
) -> Vec<PeerNode> {
    let started = Instant::now();
    let mut peers = Vec::with_capacity(count);
    for index in 0..count {
        peers.push(open_peer(&state_dir.join("peers"), index, switchboard).await);
    }
    let known = home.federation.list_peers().await.expect("peers").len();
    let fresh = known == 0;
    if fresh {
        let home_fingerprint = fingerprint(&home.federation).await;
        for (index, peer) in peers.iter().enumerate() {
            establish(home, peer, index, switchboard, &home_fingerprint).await;
        }
    } else if known != count {
        eprintln!(
            "the database already has {known} peers, not {count}: the peers' pages are of those (remove the state \
             directory and the database to start again)"
        );
    }
    apply_conditions(home, &peers, switchboard, fresh).await;
    if fresh {
        // Published after peering: they wait for the peer that is down and become dead letters for the one that
        // refuses; the others receive them in the passes below.
        let publisher = common::agents(service, 1, "publish", "Console benchmark publisher")
            .await
            .remove(0);
        for number in 0..BACKLOG_ITEMS {
            service
                .publish(
                    &publisher,
                    &CallMetadata::internal(WriteOperation::Publish, json!({})),
                    backlog_item(number),
                )
                .await
                .expect("publish");
        }
        let federation_loop = home_instance.federation_loop();
        for _ in 0..3 {
            federation_loop.run_once().await;
        }
    }
    let counts = home.federation.peer_counts().await.expect("peer counts");
    let shown: Vec<String> = counts
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(state, count)| format!("{} {count}", state.as_str()))
        .collect();
    eprintln!(
        "peers {} in {:.1} s: {}; roles: {}",
        if fresh { "set up" } else { "reopened" },
        started.elapsed().as_secs_f64(),
        shown.join(", "),
        peers
            .iter()
            .map(|peer| format!("{} {}", peer.realm, peer.role.name()))
            .collect::<Vec<_>>()
            .join("; ")
    );
    peers
}

async fn run_backend(backend: Backend, options: &Options) -> Option<BackendResult> {
    let database = match backend {
        Backend::Sqlite => match &options.sqlite_path {
            Some(path) => BenchDatabase::sqlite_file(path),
            None => BenchDatabase::temporary_sqlite(),
        },
        Backend::Postgres => {
            let base_url = options.postgres_url.as_deref().expect("PostgreSQL URL");
            BenchDatabase::postgres(base_url, options.postgres_database.as_deref(), options.keep).await
        }
    };
    // The instance's data directory (its key-encryption key), the admin key and the peers, kept with a kept database.
    let temporary_state = tempfile::tempdir().expect("temporary directory");
    let state_dir = options
        .kept_state_dir(backend)
        .unwrap_or_else(|| temporary_state.path().to_path_buf());
    interai::instance::create_private_directory(&state_dir).expect("state directory");
    eprintln!("{}: state directory {}", backend.name(), state_dir.display());

    let switchboard = Switchboard::default();
    let mut config = Config::for_realm(&options.realm, &database.url, &state_dir);
    // The seeder writes far more per controller than any agent may.
    config.writes_per_hour = u32::MAX;
    config.federation_allow_http = true;
    if let Some(filter) = &options.log_filter {
        config.log_filter = filter.clone();
        interai::instance::init_logging(&config);
    }
    let instance = Instance::open(config, Arc::new(SystemClock))
        .await
        .expect("instance opens")
        .with_transport(Arc::new(switchboard.clone()));
    instance.bootstrap().await.expect("instance bootstraps");
    switchboard.set(&options.realm, Route::Up(instance.router()));
    let service = instance.service().clone();
    let key = admin_key(&service, &state_dir).await;
    let admin = service.authenticate(&key).await.expect("the admin key works");

    if has_content(&service, &admin).await {
        eprintln!("{}: the database already holds content; not seeding", backend.name());
    } else {
        seed(&service, backend, options).await;
        if database.is_postgres {
            vacuum_analyze(&database.url).await;
        }
    }
    let home = Home {
        realm: service.realm().as_str().to_owned(),
        base_url: instance.federation().public_base_url().to_owned(),
        federation: instance.federation().clone(),
        client: instance.federation_client(),
    };
    let peers = set_up_peers(&home, &instance, &service, &state_dir, &switchboard, options.peers).await;
    let hot = hot_item(&service, &admin, &instance, options.hot_records).await;
    let sizes = database
        .table_sizes(&[
            "content_items",
            "claims",
            "entities",
            "usage_events",
            "reviews",
            "ratings",
            "actors",
            "api_keys",
            "mcp_calls",
            "peers",
            "federation_deliveries",
            "outbox_events",
        ])
        .await;
    println!(
        "\n{}: {}",
        backend.name(),
        sizes
            .iter()
            .map(|(table, count)| format!("{table} {count}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if options.seed_only {
        instance.close().await;
        return None;
    }

    let started = Instant::now();
    let items = sampled_items(&service, &admin, 1000).await;
    let mut most_evidence = items.clone();
    most_evidence.sort_by_key(|item| std::cmp::Reverse(item.records));
    most_evidence.truncate((items.len() / 50).max(10));
    let mut records: Vec<i64> = items.iter().map(|item| item.records).collect();
    records.sort_unstable();
    eprintln!(
        "{} items sampled in {:.1} s: evidence records per item median {}, max {}; the {} with the most: {}–{}",
        items.len(),
        started.elapsed().as_secs_f64(),
        records.get(records.len() / 2).copied().unwrap_or(0),
        records.last().copied().unwrap_or(0),
        most_evidence.len(),
        most_evidence.last().map_or(0, |item| item.records),
        most_evidence.first().map_or(0, |item| item.records),
    );
    let agents = agent_ids(&service).await;

    let server = LoopbackServer::start(instance).await;
    let base_url = server
        .mcp_url
        .strip_suffix("/mcp")
        .expect("the MCP URL ends in /mcp")
        .to_owned();
    let browser = Browser::sign_in(&base_url, &key).await;
    let second = if options.wants("knowledge-page-2") {
        second_pages(&browser, 50).await
    } else {
        Vec::new()
    };
    let targets = Arc::new(Targets {
        realm: home.realm.clone(),
        peers: peers.iter().map(|peer| peer.realm.clone()).collect(),
        items,
        most_evidence,
        hot,
        agents,
        audit_tool: options.audit_tool.clone(),
        second_pages: second,
    });
    let pages: Vec<(&'static str, &'static str)> = PAGES
        .iter()
        .copied()
        .filter(|(key, _)| options.wants(key))
        .filter(|(key, _)| *key != "knowledge-page-2" || !targets.second_pages.is_empty())
        .filter(|(key, _)| *key != "audit-actor" || !targets.agents.is_empty())
        .filter(|(key, _)| *key != "item-hot" || targets.hot.is_some())
        .collect();

    let mut sequential = Vec::new();
    for (index, &(key, label)) in pages.iter().enumerate() {
        let far = Instant::now() + Duration::from_secs(3600);
        drive(
            browser.clone(),
            key,
            targets.clone(),
            options.warmup,
            far,
            0xAA00 + index as u64,
        )
        .await;
        let deadline = Instant::now() + Duration::from_secs(options.page_seconds);
        let samples = drive(
            browser.clone(),
            key,
            targets.clone(),
            options.requests,
            deadline,
            0x5E00 + index as u64,
        )
        .await;
        let summary = summarize(&samples);
        eprintln!(
            "  {label}: n {} p50 {} p95 {} ms",
            summary.count,
            milliseconds(summary.p50),
            milliseconds(summary.p95)
        );
        sequential.push((label, summary));
    }
    let mut concurrent = Vec::new();
    if options.clients > 1 && options.concurrent_requests > 0 {
        let browsers: Vec<Browser> = (0..options.clients).map(|_| browser.another()).collect();
        let per_client = options.concurrent_requests.div_ceil(options.clients);
        for (index, &(key, label)) in pages.iter().enumerate() {
            let deadline = Instant::now() + Duration::from_secs(options.page_seconds);
            let mut running = tokio::task::JoinSet::new();
            for (client, browser) in browsers.iter().enumerate() {
                running.spawn(drive(
                    browser.clone(),
                    key,
                    targets.clone(),
                    per_client,
                    deadline,
                    0xC000 + (index * 16 + client) as u64,
                ));
            }
            let mut samples = PageSamples::default();
            while let Some(result) = running.join_next().await {
                samples.merge(result.expect("client task"));
            }
            concurrent.push((label, summarize(&samples)));
        }
    }
    let service_rows = if options.service_calls > 0 {
        service_times(&service, &home.federation, &admin, &targets, options.service_calls).await
    } else {
        Vec::new()
    };
    server.stop().await;
    drop(peers);

    println!("\n## {}", backend.name());
    print_table(
        "one client, each request waited for before the next (the target's meaning)",
        &sequential,
        true,
    );
    if !concurrent.is_empty() {
        print_table(
            &format!("{} concurrent clients of the same session", options.clients),
            &concurrent,
            true,
        );
    }
    if !service_rows.is_empty() {
        print_table(
            "the service calls behind the pages, in this process (no HTTP, session nor template; the target does not apply)",
            &service_rows,
            false,
        );
    }
    Some(BackendResult { backend, sequential })
}

fn main() {
    let options = Options::from_environment();
    let runtime = common::runtime(options.worker_threads);
    println!(
        "console benchmark: {} items, {} peers, {} requests per page from one client (after {} unmeasured), {} from \
         {} concurrent clients",
        options.items, options.peers, options.requests, options.warmup, options.concurrent_requests, options.clients
    );
    let results: Vec<BackendResult> = runtime.block_on(async {
        let mut results = Vec::new();
        for backend in &options.backends {
            if let Some(result) = run_backend(*backend, &options).await {
                results.push(result);
            }
        }
        results
    });
    if results.is_empty() {
        return;
    }
    println!(
        "\n## Target: every page p95 ≤ {} ms from one client",
        milliseconds(PAGE_P95_TARGET)
    );
    for result in &results {
        let missed: Vec<String> = result
            .sequential
            .iter()
            .filter(|(_, summary)| verdict(summary) != "met")
            .map(|(label, summary)| format!("{label} (p95 {} ms)", milliseconds(summary.p95)))
            .collect();
        if missed.is_empty() {
            println!(
                "- {}: met by all {} pages",
                result.backend.name(),
                result.sequential.len()
            );
        } else {
            println!(
                "- {}: met by {} of {} pages; MISSED by {}",
                result.backend.name(),
                result.sequential.len() - missed.len(),
                result.sequential.len(),
                missed.join(", ")
            );
        }
    }
}
