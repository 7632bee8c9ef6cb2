//! A network of instances in one process: each instance's outgoing requests are routed in memory, by host, to the
//! router of the instance that host names, with real signatures and real bytes (an injected transport, as
//! GoToSocial's test rig and Kitsune do). An instance can be taken down (requests to it fail as a refused
//! connection) and brought back; one manual clock drives every instance; `settle()` runs every queue until quiet.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use chrono::TimeDelta;
use federation::transport::{Transport, TransportError, TransportFuture};
use interai::apub::client::FederationClient;
use interai::clock::ManualClock;
use interai::config::Config;
use interai::domain::PeerLevel;
use interai::instance::Instance;
use interai::service::Service;
use interai::service::federation::peering::PeerView;
use tower::ServiceExt;

use crate::harness::{TestDatabase, test_epoch};

/// The largest response the in-memory transport passes on, as the real one.
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

#[derive(Debug, Default)]
struct Routes {
    routers: HashMap<String, axum::Router>,
    down: std::collections::HashSet<String>,
    /// Hosts that answer every request with this status and body instead of their router (a peer that refuses).
    refusing: HashMap<String, (u16, String)>,
    /// Every request sent, by target host, for tests that count deliveries.
    sent: Vec<(String, String, String)>,
    /// Requests to a host whose body contains a marker wait until released: (host, marker, the gate they wait at).
    holds: Vec<(String, String, Arc<tokio::sync::Semaphore>)>,
    /// Requests waiting at a hold right now.
    held: usize,
    /// The bodies of the requests that reached a router, in the order they reached it.
    delivered_bodies: Vec<String>,
}

/// The in-memory switchboard all instances of one network share.
#[derive(Debug, Clone, Default)]
pub struct Switchboard {
    routes: Arc<Mutex<Routes>>,
    /// Woken whenever a request is held or reaches an instance.
    changed: Arc<tokio::sync::Notify>,
}

impl Switchboard {
    fn connect(&self, host: &str, router: axum::Router) {
        self.lock().routers.insert(host.to_owned(), router);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Requests to `host`, and its own requests, fail from now on, as if its server were down.
    pub fn take_down(&self, host: &str) {
        self.lock().down.insert(host.to_owned());
    }

    /// Requests to `host` reach it again.
    pub fn bring_up(&self, host: &str) {
        self.lock().down.remove(host);
    }

    /// Requests to `host` are answered with `status` and `body` from now on, as a peer that refuses them would.
    pub fn refuse(&self, host: &str, status: u16, body: &str) {
        self.lock().refusing.insert(host.to_owned(), (status, body.to_owned()));
    }

    /// Requests to `host` reach its router again.
    pub fn stop_refusing(&self, host: &str) {
        self.lock().refusing.remove(host);
    }

    /// Every request sent so far: (host, method, path).
    pub fn sent(&self) -> Vec<(String, String, String)> {
        self.lock().sent.clone()
    }

    /// Requests to `host` whose body contains `marker` wait from now on, until [`Switchboard::release_all`] (a
    /// request in flight for as long as a test needs).
    pub fn hold(&self, host: &str, marker: &str) {
        self.lock().holds.push((
            host.to_owned(),
            marker.to_owned(),
            Arc::new(tokio::sync::Semaphore::new(0)),
        ));
    }

    /// How many requests wait at a hold now.
    pub fn held(&self) -> usize {
        self.lock().held
    }

    /// Lets every held request through, and holds nothing more.
    pub fn release_all(&self) {
        for (_, _, gate) in self.lock().holds.drain(..) {
            gate.close();
        }
    }

    /// The bodies of the requests that reached an instance, in the order they reached it.
    pub fn delivered_bodies(&self) -> Vec<String> {
        self.lock().delivered_bodies.clone()
    }

    /// Waits until `condition` holds, checked whenever a request is held or reaches an instance (a minute at
    /// most, then the test fails naming `what`).
    pub async fn wait_until(&self, what: &str, condition: impl Fn(&Switchboard) -> bool) {
        let wait = async {
            loop {
                let notified = self.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if condition(self) {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(60), wait)
            .await
            .unwrap_or_else(|_| panic!("waited a minute for {what}"));
    }
}

/// One instance's connection to the switchboard: while that instance is down, its own requests fail too.
#[derive(Debug, Clone)]
struct NodeTransport {
    switchboard: Switchboard,
    from: String,
}

impl Transport for NodeTransport {
    fn send(&self, request: http::Request<Vec<u8>>) -> TransportFuture {
        if self.switchboard.lock().down.contains(&self.from) {
            let from = self.from.clone();
            return Box::pin(async move {
                Err(TransportError::Connect {
                    detail: format!("{from} is down"),
                })
            });
        }
        self.switchboard.send(request)
    }
}

impl Transport for Switchboard {
    fn send(&self, request: http::Request<Vec<u8>>) -> TransportFuture {
        let routes = self.routes.clone();
        let changed = Arc::clone(&self.changed);
        Box::pin(async move {
            let host = request
                .uri()
                .authority()
                .map(|authority| authority.as_str().to_ascii_lowercase())
                .ok_or_else(|| TransportError::InvalidRequest {
                    detail: "no authority".to_owned(),
                })?;
            let router = {
                let mut routes = routes.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                routes.sent.push((
                    host.clone(),
                    request.method().to_string(),
                    request.uri().path().to_owned(),
                ));
                if routes.down.contains(&host) {
                    return Err(TransportError::Connect {
                        detail: format!("{host} is down"),
                    });
                }
                if let Some((status, body)) = routes.refusing.get(&host) {
                    let response = http::Response::builder()
                        .status(*status)
                        .header("content-type", "application/json")
                        .body(body.clone().into_bytes())
                        .map_err(|error| TransportError::Io {
                            detail: error.to_string(),
                        })?;
                    return Ok(response);
                }
                routes.routers.get(&host).cloned().ok_or_else(|| TransportError::Dns {
                    host: host.clone(),
                    detail: "no such host in the test network".to_owned(),
                })?
            };
            let (parts, body) = request.into_parts();
            let text = String::from_utf8_lossy(&body).into_owned();
            let gate = {
                let routes = routes.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                routes
                    .holds
                    .iter()
                    .find(|(held_host, marker, _)| *held_host == host && text.contains(marker.as_str()))
                    .map(|(_, _, gate)| Arc::clone(gate))
            };
            if let Some(gate) = gate {
                routes.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).held += 1;
                changed.notify_waiters();
                // Closed when released: the wait ends with an error, which is the signal to go on.
                let _ = gate.acquire().await;
                routes.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).held -= 1;
            }
            routes
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .delivered_bodies
                .push(text);
            changed.notify_waiters();
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

/// One instance of the network.
pub struct Node {
    /// Its realm, e.g. `alpha.test`.
    pub realm: String,
    /// The instance.
    pub instance: Instance,
    /// Its database, kept as long as the node.
    _database: TestDatabase,
    /// Its router (as the switchboard reaches it).
    pub router: axum::Router,
}

impl Node {
    /// The service.
    pub fn service(&self) -> &Service {
        self.instance.service()
    }

    /// The instance's federation use cases.
    pub fn federation(&self) -> &interai::service::federation::Federation {
        self.instance.federation()
    }

    /// Its outgoing requests.
    pub fn federation_client(&self) -> FederationClient {
        self.instance.federation_client()
    }

    /// Its database's URL (for tests that set a stored state up directly, as an older version left it).
    pub fn database_url(&self) -> &str {
        &self._database.url
    }

    /// Its public URL.
    pub fn url(&self) -> String {
        self.federation().public_base_url().to_owned()
    }

    /// Adds `other` as a peer the way `interai admin peer add` does: reads its manifest, pins its keys, queues a
    /// `Follow`.
    pub async fn add_peer(&self, other: &Node, level: PeerLevel) -> PeerView {
        let client = self.federation_client();
        let url = client.peer_url(&other.url()).expect("peer URL");
        let introduction = client.fetch_manifest(&url).await.expect("the peer's manifest");
        self.federation()
            .add_peer(&introduction, level)
            .await
            .expect("peer added")
    }

    /// This node's view of the peer `other`.
    pub async fn peer(&self, other: &Node) -> PeerView {
        self.federation().peer_view(&other.realm).await.expect("peer known")
    }
}

/// N instances on one switchboard and one clock.
pub struct Network {
    /// The instances, in the order they were named.
    pub nodes: Vec<Node>,
    /// The switchboard.
    pub switchboard: Switchboard,
    /// The clock every instance reads.
    pub clock: ManualClock,
}

impl Network {
    /// Instances for each realm (`alpha.test`, …), each with its own database on the configured backend.
    pub async fn start(realms: &[&str]) -> Network {
        Network::start_configured(realms, |_, _| {}).await
    }

    /// Like [`Network::start`], with each instance's configuration adjusted by `configure(realm, config)` first.
    pub async fn start_configured(realms: &[&str], configure: impl Fn(&str, &mut Config)) -> Network {
        let mut databases = Vec::new();
        for _ in realms {
            databases.push(TestDatabase::create().await);
        }
        Network::start_on(realms, databases, configure).await
    }

    /// Like [`Network::start_configured`], each realm on the database given for it (in the same order).
    pub async fn start_on(
        realms: &[&str],
        databases: Vec<TestDatabase>,
        configure: impl Fn(&str, &mut Config),
    ) -> Network {
        let switchboard = Switchboard::default();
        let clock = ManualClock::starting_at(test_epoch());
        let mut nodes = Vec::new();
        for (realm, database) in realms.iter().zip(databases) {
            let mut config = Config::for_realm(realm, &database.url, database.directory.path());
            config.federation_allow_http = true;
            configure(realm, &mut config);
            let instance = Instance::open(config, Arc::new(clock.clone()))
                .await
                .expect("instance opens")
                .with_transport(Arc::new(NodeTransport {
                    switchboard: switchboard.clone(),
                    from: (*realm).to_owned(),
                }));
            instance.bootstrap().await.expect("instance bootstraps");
            let router = instance.router();
            switchboard.connect(realm, router.clone());
            nodes.push(Node {
                realm: (*realm).to_owned(),
                instance,
                _database: database,
                router,
            });
        }
        Network {
            nodes,
            switchboard,
            clock,
        }
    }

    /// The node of `realm`.
    pub fn node(&self, realm: &str) -> &Node {
        self.nodes
            .iter()
            .find(|node| node.realm == realm)
            .unwrap_or_else(|| panic!("no node {realm}"))
    }

    /// Runs every instance's queues (inbound activities, deliveries) until a whole round finds nothing to do.
    /// Work that waits for a later time (a backoff) stays queued; move the clock and settle again.
    pub async fn settle(&self) {
        for _ in 0..100 {
            let mut handled = 0;
            for node in &self.nodes {
                handled += node.instance.federation_loop().run_once().await;
            }
            if handled == 0 {
                return;
            }
        }
        panic!("the network did not settle within 100 rounds");
    }

    /// A second instance process on `realm`'s database (same configuration and key-encryption key file), as a
    /// second `serve` behind a load balancer would be, with its own router.
    pub async fn second_process(&self, realm: &str) -> (Instance, axum::Router) {
        let node = self.node(realm);
        let mut config = node.instance.config().clone();
        config.federation_allow_http = true;
        let instance = Instance::open(config, Arc::new(self.clock.clone()))
            .await
            .expect("a second instance opens on the same database")
            .with_transport(Arc::new(self.switchboard.clone()));
        let router = instance.router();
        (instance, router)
    }

    /// Writes `realm`'s whole database as an archive (`interai admin export`), while it goes on serving.
    pub async fn export(&self, realm: &str) -> Vec<u8> {
        use interai::clock::Clock;
        let mut archive = Vec::new();
        interai::service::archive::export(self.node(realm).database_url(), self.clock.now(), None, &mut archive)
            .await
            .expect("export");
        archive
    }

    /// Replaces `realm`'s instance by one restored from `archive` (`interai admin restore`) into a new, empty
    /// database, with the same configuration and key-encryption key: the old instance is closed and gone, as a
    /// machine that failed. The restored outbox starts a new epoch.
    pub async fn restore(&mut self, realm: &str, archive: &[u8]) {
        use interai::clock::Clock;
        use interai::service::archive::{self, EpochOnLoad};
        let (config, old_database) = self.close_node(realm).await;
        let database = TestDatabase::create().await;
        let mut input = std::io::BufReader::new(archive);
        let header = archive::read_header(&mut input).expect("an archive");
        archive::import(
            &database.url,
            realm,
            header,
            input,
            EpochOnLoad::Start(format!("restored-{}", self.clock.now().timestamp_micros())),
            self.clock.now(),
        )
        .await
        .expect("the backup loads");
        self.open_node(realm, config, &old_database, database).await;
    }

    /// Stops `realm`'s instance (it answers nothing until [`Network::open_node`]), returning its configuration and
    /// database.
    pub async fn close_node(&mut self, realm: &str) -> (Config, TestDatabase) {
        let index = self
            .nodes
            .iter()
            .position(|node| node.realm == realm)
            .unwrap_or_else(|| panic!("no node {realm}"));
        let old = self.nodes.remove(index);
        self.switchboard.take_down(realm);
        old.instance.close().await;
        (old.instance.config().clone(), old._database)
    }

    /// Starts `realm` again on `database` (which already holds the realm) with `config` otherwise, the
    /// key-encryption key taken from the data directory of `previous`.
    pub async fn open_node(&mut self, realm: &str, config: Config, previous: &TestDatabase, database: TestDatabase) {
        let key_file = interai::instance::KEY_ENCRYPTION_KEY_FILE;
        if previous.directory.path() != database.directory.path() {
            std::fs::copy(
                previous.directory.path().join(key_file),
                database.directory.path().join(key_file),
            )
            .expect("the key-encryption key goes with the data");
        }
        let mut config = config;
        config.database_url = database.url.clone();
        config.data_dir = database.directory.path().to_path_buf();
        let instance = Instance::open(config, Arc::new(self.clock.clone()))
            .await
            .expect("the instance opens on its new database")
            .with_transport(Arc::new(NodeTransport {
                switchboard: self.switchboard.clone(),
                from: realm.to_owned(),
            }));
        instance.bootstrap().await.expect("the instance starts");
        let router = instance.router();
        self.switchboard.connect(realm, router.clone());
        self.switchboard.bring_up(realm);
        self.nodes.push(Node {
            realm: realm.to_owned(),
            instance,
            _database: database,
            router,
        });
    }

    /// Moves the shared clock.
    pub fn advance(&self, delta: TimeDelta) {
        self.clock.advance(delta);
    }
}
