//! The data seeder behind `interai admin seed`: realistic synthetic knowledge and evidence, written only through
//! the service layer's public use cases, deterministic for a given seed number.
//!
//! What it writes: root controllers (humans and organizations) with one to five agents each; content items about
//! 80 technical and non-technical topics (titles, summaries, Markdown bodies of 0.5–5 KB, zero to five claims of
//! which many are shared between items so that claim matching happens, named subjects, tags, sources, relations
//! such as `alternative_to`, `corrects` and `supersedes`, and some second revisions); first-hand experiences; and
//! evidence from many controllers: usage reports with mixed results in the real world and in tests, reviews
//! (some grounded in the reviewer's own usage), and ratings of content and entities in contexts. A handful of
//! items collect eight or more real-world successes from different controllers and reach `high_confidence`; some
//! collect a real-world failure and become `disputed`.
//!
//! Determinism: every item's text and evidence plan comes from a SplitMix64 generator seeded with the seed number
//! and the item's index, and references to earlier items only point at items of completed batches, so the same
//! seed gives the same knowledge and the same evidence. Public IDs and timestamps come from the service and differ
//! between runs, as does which of two concurrent publishers of one shared claim creates it.
//!
//! The seeder does not raise any rate limit itself: the caller builds the service with a `writes_per_hour` large
//! enough for the volume (the CLI command does).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::domain::knowledge::ALTERNATIVE_REASONS;
use crate::domain::{ActorType, AuthenticatedActor, PublicId, ScopeSet};
use crate::service::actors::NewActor;
use crate::service::content::{ExperienceRequest, PublishRequest, RelationRequest, UsedRequest};
use crate::service::evidence::{RateRequest, ReviewRequest, UsageRequest};
use crate::service::keys::NewApiKey;
use crate::service::references::{SourceReference, SubjectReference};
use crate::service::writes::{CallMetadata, WriteOperation};
use crate::service::{ErrorCode, Service, ServiceError};

/// What to seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedOptions {
    /// Content items to publish (experiences included).
    pub items: u64,
    /// The generator's seed; the same seed gives the same data.
    pub seed: u64,
    /// Root controllers to create; `None` chooses one per 50 items, at least 20 and at most 2,000.
    pub controllers: Option<u64>,
    /// Items written at the same time (each item's writes run in order).
    pub concurrency: usize,
}

impl Default for SeedOptions {
    fn default() -> SeedOptions {
        SeedOptions {
            items: 1000,
            seed: 1,
            controllers: None,
            concurrency: 4,
        }
    }
}

impl SeedOptions {
    /// The number of root controllers this run creates.
    pub fn controller_count(&self) -> u64 {
        self.controllers.unwrap_or((self.items / 50).clamp(20, 2000)).max(2)
    }
}

/// What a seeding run wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeedReport {
    /// Root controllers created.
    pub controllers: u64,
    /// Agents created (each with one API key).
    pub agents: u64,
    /// Content items created, experiences included.
    pub items: u64,
    /// Of these, experiences.
    pub experiences: u64,
    /// Second revisions published.
    pub revisions: u64,
    /// Claims created (a claim matched to an existing one is not counted here).
    pub claims: u64,
    /// Claims linked to revisions, matched ones included.
    pub claim_links: u64,
    /// Distinct named entities used as subjects (created unless an earlier run created them).
    pub entities: u64,
    /// Relations declared.
    pub relations: u64,
    /// Usage events, those of experiences included.
    pub usage_events: u64,
    /// Reviews.
    pub reviews: u64,
    /// Ratings.
    pub ratings: u64,
    /// Items planned to reach `high_confidence`.
    pub planned_high_confidence: u64,
    /// Of these, the items whose current revision is `high_confidence` at the end.
    pub high_confidence: u64,
    /// Items planned to be `disputed` by one real-world failure.
    pub planned_disputed: u64,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

impl std::fmt::Display for SeedReport {
    /// One line saying what the run wrote and how long it took.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "{} items ({} experiences, {} revisions), {} claims ({} links), {} entities, {} evidence records \
             ({} usage, {} reviews, {} ratings), {} high_confidence of {} planned, from {} controllers and {} agents \
             in {:.1} s",
            self.items,
            self.experiences,
            self.revisions,
            self.claims,
            self.claim_links,
            self.entities,
            self.evidence_records(),
            self.usage_events,
            self.reviews,
            self.ratings,
            self.high_confidence,
            self.planned_high_confidence,
            self.controllers,
            self.agents,
            self.elapsed.as_secs_f64()
        )
    }
}

impl SeedReport {
    /// Usage events, reviews and ratings together.
    pub fn evidence_records(&self) -> u64 {
        self.usage_events + self.reviews + self.ratings
    }
}

// ---------------------------------------------------------------- deterministic randomness

/// SplitMix64: a tiny, fast, well-mixed generator with a 64-bit state; every value depends only on the seed.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// A generator for one purpose (`stream`) and one position (`index`) under a seed, independent of the others.
    pub fn derived(seed: u64, stream: u64, index: u64) -> SplitMix64 {
        let mut mixer = SplitMix64::new(seed ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        let first = mixer.next_u64();
        SplitMix64::new(first ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut mixed = self.state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        mixed ^ (mixed >> 31)
    }

    /// A number in `0..bound` (0 when `bound` is 0), without modulo bias worth mentioning.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high.saturating_sub(low) + 1)
    }

    /// An index into a slice of `length` elements (0 for an empty one).
    pub fn index(&mut self, length: usize) -> usize {
        usize::try_from(self.below(length as u64)).unwrap_or(0)
    }

    /// A uniform number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// True with probability `probability`.
    pub fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// One text of a non-empty slice of texts.
    pub fn text(&mut self, items: &[&'static str]) -> &'static str {
        items[self.index(items.len())]
    }

    /// An index chosen with the given relative weights.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|weight| u64::from(*weight)).sum();
        let mut draw = self.below(total.max(1));
        for (position, weight) in weights.iter().enumerate() {
            let weight = u64::from(*weight);
            if draw < weight {
                return position;
            }
            draw -= weight;
        }
        weights.len().saturating_sub(1)
    }
}

// ---------------------------------------------------------------- vocabulary

/// One domain the seeder writes about.
#[derive(Debug)]
pub struct Topic {
    /// The topic's tag, e.g. `webhooks`.
    pub tag: &'static str,
    /// Its name in running text, e.g. `webhook delivery`.
    pub name: &'static str,
    /// The broad area, also a tag: engineering, operations, data, security, ai, cooking, finance, people,
    /// workplace, home, legal.
    pub area: &'static str,
    /// Named entities of the domain: (name, entity type).
    pub entities: &'static [(&'static str, &'static str)],
    /// Things people in the domain talk about.
    pub terms: &'static [&'static str],
    /// Things people in the domain do, as verb phrases.
    pub tasks: &'static [&'static str],
    /// Checkable statements of the domain, shared by many items.
    pub claims: &'static [&'static str],
}

impl Topic {
    fn is_technical(&self) -> bool {
        matches!(self.area, "engineering" | "operations" | "data" | "security" | "ai")
    }
}

/// The seeder's topics.
pub fn topics() -> &'static [Topic] {
    TOPICS
}

/// A search query of `words` words (one to five) about a random topic, as an agent would type it, with the index
/// of the topic it came from. For benchmarks and tests of search over seeded data.
pub fn sample_query(random: &mut SplitMix64, words: usize) -> (usize, String) {
    let topic_index = random.index(TOPICS.len());
    let topic = &TOPICS[topic_index];
    let mut chosen: Vec<String> = Vec::new();
    let mut attempts = 0;
    while chosen.len() < words.max(1) && attempts < 12 {
        attempts += 1;
        let phrase = match random.weighted(&[4, 3, 2, 2]) {
            0 => random.text(topic.terms),
            1 => random.text(topic.tasks),
            2 => random.pick(topic.entities).0,
            _ => topic.name,
        };
        for word in phrase.split_whitespace() {
            let word = word.trim_matches(|character: char| !character.is_alphanumeric());
            let lower = word.to_lowercase();
            if word.is_empty() || QUERY_FILLER.contains(&lower.as_str()) || chosen.contains(&lower) {
                continue;
            }
            if chosen.len() < words.max(1) {
                chosen.push(lower);
            }
        }
    }
    (topic_index, chosen.join(" "))
}

/// Words a person would leave out of a search query.
const QUERY_FILLER: &[&str] = &[
    "a", "an", "the", "of", "to", "for", "in", "on", "with", "and", "or", "by", "at", "from", "before", "after",
    "without", "into", "it", "its",
];
/// The topics the seeder writes about: technical and non-technical domains, each with its named entities, terms,
/// tasks and a few checkable claims that several items share.
pub static TOPICS: &[Topic] = &[
    Topic {
        tag: "webhooks",
        name: "webhook delivery",
        area: "engineering",
        entities: &[
            ("Stripe webhooks", "service"),
            ("GitHub webhooks", "service"),
            ("Svix", "service"),
            ("ngrok", "tool"),
        ],
        terms: &[
            "delivery id",
            "signature header",
            "retry schedule",
            "dead letter queue",
            "replay window",
            "event payload",
        ],
        tasks: &[
            "verify webhook signatures",
            "deduplicate webhook deliveries",
            "replay failed webhook events",
            "rotate webhook signing secrets",
            "acknowledge webhooks before processing",
        ],
        claims: &[
            "Verifying the HMAC signature before parsing the payload blocks forged webhook calls.",
            "Storing processed delivery ids makes webhook handlers idempotent.",
            "Answering with a 2xx status within five seconds avoids most provider retries.",
            "Webhook providers retry failed deliveries for up to three days.",
        ],
    },
    Topic {
        tag: "postgresql",
        name: "PostgreSQL operations",
        area: "data",
        entities: &[
            ("PostgreSQL", "database"),
            ("pgbouncer", "tool"),
            ("pg_stat_statements", "extension"),
            ("Patroni", "tool"),
        ],
        terms: &[
            "autovacuum",
            "table bloat",
            "connection pool",
            "query plan",
            "replication lag",
            "index scan",
        ],
        tasks: &[
            "tune autovacuum for busy tables",
            "find slow queries",
            "reduce table bloat",
            "add an index without locking writes",
            "monitor replication lag",
        ],
        claims: &[
            "CREATE INDEX CONCURRENTLY builds an index without blocking writes to the table.",
            "Autovacuum falls behind on tables with heavy update traffic unless its thresholds are lowered.",
            "A transaction-mode connection pool breaks session-level prepared statements.",
            "Long-running transactions prevent vacuum from removing dead rows.",
        ],
    },
    Topic {
        tag: "caching",
        name: "application caching",
        area: "engineering",
        entities: &[
            ("Redis", "database"),
            ("Memcached", "database"),
            ("Varnish", "software"),
            ("Caffeine", "library"),
        ],
        terms: &[
            "cache key",
            "time to live",
            "cache stampede",
            "hit rate",
            "eviction policy",
            "stale read",
        ],
        tasks: &[
            "prevent cache stampedes",
            "choose cache expiry times",
            "invalidate cached pages after writes",
            "warm the cache after a deploy",
            "measure the cache hit rate",
        ],
        claims: &[
            "Adding random jitter to expiry times prevents many keys from expiring at once.",
            "Request coalescing stops a cache stampede when a hot key expires.",
            "Deleting a cache entry after a write is safer than updating it in place.",
            "A cache hit rate below fifty percent usually means the keys are too specific.",
        ],
    },
    Topic {
        tag: "message-queues",
        name: "message queues",
        area: "engineering",
        entities: &[
            ("RabbitMQ", "message_broker"),
            ("Amazon SQS", "service"),
            ("NATS", "message_broker"),
            ("Celery", "library"),
        ],
        terms: &[
            "visibility timeout",
            "poison message",
            "consumer prefetch",
            "queue depth",
            "acknowledgement",
            "redelivery",
        ],
        tasks: &[
            "handle poison messages",
            "scale queue consumers",
            "set visibility timeouts",
            "drain a queue before maintenance",
            "alert on queue depth",
        ],
        claims: &[
            "A visibility timeout shorter than the processing time causes duplicate processing.",
            "Moving a message to a dead letter queue after five failures keeps one bad message from blocking a queue.",
            "Consumers must be idempotent because brokers deliver at least once.",
            "A low prefetch count spreads slow messages more evenly across consumers.",
        ],
    },
    Topic {
        tag: "authentication",
        name: "user authentication",
        area: "security",
        entities: &[
            ("Argon2", "algorithm"),
            ("WebAuthn", "standard"),
            ("Keycloak", "software"),
            ("Auth0", "service"),
        ],
        terms: &[
            "password hash",
            "session cookie",
            "passkey",
            "login throttling",
            "account recovery",
            "second factor",
        ],
        tasks: &[
            "store passwords safely",
            "add passkey login",
            "throttle failed logins",
            "expire idle sessions",
            "design account recovery",
        ],
        claims: &[
            "Argon2id with at least 19 MiB of memory is a sound default for password hashing.",
            "Session cookies should carry the Secure, HttpOnly and SameSite attributes.",
            "Passkeys resist phishing because the browser binds them to the site's origin.",
            "Throttling logins per account and per source slows credential stuffing.",
        ],
    },
    Topic {
        tag: "deployment",
        name: "application deployment",
        area: "operations",
        entities: &[
            ("Argo CD", "tool"),
            ("Spinnaker", "tool"),
            ("GitHub Actions", "service"),
            ("Nomad", "software"),
        ],
        terms: &[
            "rolling update",
            "canary release",
            "health check",
            "rollback plan",
            "release train",
            "blue green switch",
        ],
        tasks: &[
            "roll back a failed release",
            "run a canary release",
            "deploy database changes safely",
            "freeze deploys before holidays",
            "verify a release after deploy",
        ],
        claims: &[
            "A canary that receives five percent of traffic catches most bad releases before full rollout.",
            "Readiness checks must fail while a new instance is still warming up.",
            "Database changes should be deployed separately from the code that needs them.",
            "Rollbacks are fastest when the previous artifact is kept ready to serve.",
        ],
    },
    Topic {
        tag: "testing",
        name: "automated testing",
        area: "engineering",
        entities: &[
            ("pytest", "library"),
            ("Playwright", "tool"),
            ("JUnit", "library"),
            ("Testcontainers", "library"),
        ],
        terms: &[
            "flaky test",
            "test fixture",
            "integration test",
            "code coverage",
            "test double",
            "snapshot test",
        ],
        tasks: &[
            "quarantine flaky tests",
            "write integration tests against a real database",
            "speed up a slow test suite",
            "test time-dependent code",
            "review test coverage",
        ],
        claims: &[
            "Injecting a clock instead of reading system time makes time-dependent tests deterministic.",
            "Running integration tests against a real database catches bugs that mocks hide.",
            "Most flaky tests are caused by shared state or fixed sleeps.",
            "Line coverage above ninety percent says little about the quality of the assertions.",
        ],
    },
    Topic {
        tag: "observability",
        name: "observability",
        area: "operations",
        entities: &[
            ("Prometheus", "software"),
            ("Grafana", "software"),
            ("OpenTelemetry", "standard"),
            ("Jaeger", "software"),
        ],
        terms: &[
            "latency histogram",
            "trace span",
            "alert rule",
            "service level objective",
            "metric cardinality",
            "error budget",
        ],
        tasks: &[
            "define service level objectives",
            "reduce alert noise",
            "trace requests across services",
            "control metric cardinality",
            "build an on-call dashboard",
        ],
        claims: &[
            "Alerting on symptoms such as error rate pages less often than alerting on causes.",
            "Histograms allow percentiles to be aggregated across instances while summaries do not.",
            "A user id used as a metric label can multiply cardinality by millions.",
            "Propagating trace context through queues requires copying it into message headers.",
        ],
    },
    Topic {
        tag: "kubernetes",
        name: "Kubernetes workloads",
        area: "operations",
        entities: &[
            ("Kubernetes", "software"),
            ("Helm", "tool"),
            ("kubectl", "tool"),
            ("Karpenter", "tool"),
        ],
        terms: &[
            "pod disruption budget",
            "resource limits",
            "liveness probe",
            "node pool",
            "horizontal autoscaler",
            "config map",
        ],
        tasks: &[
            "set resource requests and limits",
            "debug a crash-looping pod",
            "drain a node safely",
            "autoscale on queue length",
            "roll out a config change",
        ],
        claims: &[
            "A liveness probe that checks dependencies can restart every pod during an outage.",
            "Pods without memory limits can get the whole node killed by the kernel.",
            "A pod disruption budget keeps a minimum number of replicas up during node drains.",
            "CPU limits cause throttling even when the node has idle cores.",
        ],
    },
    Topic {
        tag: "ci",
        name: "CI pipelines",
        area: "engineering",
        entities: &[
            ("GitLab CI", "service"),
            ("Jenkins", "software"),
            ("Buildkite", "service"),
            ("sccache", "tool"),
        ],
        terms: &[
            "build cache",
            "pipeline stage",
            "artifact",
            "runner",
            "merge queue",
            "test shard",
        ],
        tasks: &[
            "cache dependencies between builds",
            "shard a slow test stage",
            "keep the main branch green",
            "sign build artifacts",
            "cut pipeline time in half",
        ],
        claims: &[
            "Caching dependencies keyed by the lock file hash saves minutes per pipeline.",
            "A merge queue keeps the main branch green when many changes land at once.",
            "Splitting tests by historical duration balances shards better than by file count.",
            "Pinning runner images prevents builds from breaking when a base image changes.",
        ],
    },
    Topic {
        tag: "dns",
        name: "DNS",
        area: "operations",
        entities: &[
            ("Route 53", "service"),
            ("CoreDNS", "software"),
            ("BIND", "software"),
            ("dig", "tool"),
        ],
        terms: &[
            "TTL",
            "CNAME record",
            "zone delegation",
            "negative caching",
            "resolver",
            "propagation",
        ],
        tasks: &[
            "migrate DNS to a new provider",
            "lower TTLs before a cutover",
            "debug resolution failures",
            "delegate a subdomain",
            "monitor DNS changes",
        ],
        claims: &[
            "Lowering a record's TTL a day before a migration makes the cutover fast.",
            "A CNAME record cannot coexist with other records at the same name.",
            "Resolvers cache failed lookups for the SOA minimum TTL.",
            "DNS changes are not propagated; old answers expire from caches.",
        ],
    },
    Topic {
        tag: "tls",
        name: "TLS certificates",
        area: "security",
        entities: &[
            ("Let's Encrypt", "service"),
            ("cert-manager", "tool"),
            ("OpenSSL", "tool"),
            ("Caddy", "software"),
        ],
        terms: &[
            "certificate chain",
            "expiry date",
            "ACME challenge",
            "private key",
            "cipher suite",
            "HSTS header",
        ],
        tasks: &[
            "automate certificate renewal",
            "debug an incomplete certificate chain",
            "rotate a compromised key",
            "monitor certificate expiry",
            "enable HSTS safely",
        ],
        claims: &[
            "Renewing certificates thirty days before expiry leaves time to fix failed renewals.",
            "Serving the intermediate certificate avoids chain errors on older clients.",
            "Enabling HSTS with a long max-age is hard to undo.",
            "The DNS challenge is the only ACME challenge that can issue wildcard certificates.",
        ],
    },
    Topic {
        tag: "rate-limiting",
        name: "rate limiting",
        area: "engineering",
        entities: &[
            ("Envoy", "software"),
            ("nginx", "software"),
            ("Kong", "software"),
            ("Redis", "database"),
        ],
        terms: &[
            "token bucket",
            "sliding window",
            "burst size",
            "retry-after header",
            "quota",
            "client identity",
        ],
        tasks: &[
            "rate limit an API per client",
            "choose burst sizes",
            "return useful retry hints",
            "protect login endpoints",
            "share limits across instances",
        ],
        claims: &[
            "A token bucket allows short bursts while enforcing the average rate.",
            "Returning a Retry-After header reduces aggressive client retries.",
            "Per-instance limits multiply the effective limit by the number of instances.",
            "Sliding window counters avoid the burst at fixed window boundaries.",
        ],
    },
    Topic {
        tag: "search",
        name: "full-text search",
        area: "data",
        entities: &[
            ("Elasticsearch", "software"),
            ("OpenSearch", "software"),
            ("SQLite FTS5", "software"),
            ("Meilisearch", "software"),
        ],
        terms: &[
            "inverted index",
            "stemming",
            "relevance score",
            "synonym list",
            "analyzer",
            "reindex",
        ],
        tasks: &[
            "tune search relevance",
            "reindex without downtime",
            "add synonyms to search",
            "measure search quality",
            "handle typos in queries",
        ],
        claims: &[
            "BM25 ranks short documents with rare query words highest.",
            "Reindexing into a new index behind an alias avoids downtime.",
            "A labeled query set catches relevance regressions that manual checks miss.",
            "Stemming improves recall but can merge unrelated words.",
        ],
    },
    Topic {
        tag: "api-design",
        name: "HTTP API design",
        area: "engineering",
        entities: &[
            ("OpenAPI", "standard"),
            ("JSON Schema", "standard"),
            ("gRPC", "protocol"),
            ("Postman", "tool"),
        ],
        terms: &[
            "pagination cursor",
            "idempotency key",
            "error format",
            "versioning scheme",
            "partial update",
            "status code",
        ],
        tasks: &[
            "paginate large collections",
            "version a public API",
            "design error responses",
            "make POST requests idempotent",
            "deprecate an endpoint",
        ],
        claims: &[
            "Cursor pagination stays stable when items are inserted between pages.",
            "An idempotency key lets clients retry POST requests without duplicates.",
            "Error responses should carry a stable machine-readable code.",
            "Adding optional fields to responses does not break well-written clients.",
        ],
    },
    Topic {
        tag: "graphql",
        name: "GraphQL APIs",
        area: "engineering",
        entities: &[
            ("Apollo Server", "software"),
            ("GraphQL", "standard"),
            ("DataLoader", "library"),
            ("Hasura", "software"),
        ],
        terms: &[
            "resolver",
            "N plus one query",
            "query depth",
            "persisted query",
            "schema stitching",
            "field cost",
        ],
        tasks: &[
            "batch resolver queries",
            "limit query complexity",
            "cache GraphQL responses",
            "evolve a GraphQL schema",
            "secure introspection",
        ],
        claims: &[
            "DataLoader batches per-field lookups into one query per request.",
            "Limiting query depth and cost protects a GraphQL server from expensive queries.",
            "Persisted queries allow GraphQL responses to be cached by URL.",
            "Deprecating fields is safer than removing them from a GraphQL schema.",
        ],
    },
    Topic {
        tag: "feature-flags",
        name: "feature flags",
        area: "engineering",
        entities: &[
            ("LaunchDarkly", "service"),
            ("Unleash", "software"),
            ("OpenFeature", "standard"),
            ("Flagsmith", "service"),
        ],
        terms: &[
            "flag rule",
            "percentage rollout",
            "kill switch",
            "stale flag",
            "targeting",
            "flag default",
        ],
        tasks: &[
            "roll out a feature gradually",
            "clean up stale flags",
            "add a kill switch",
            "test both flag states",
            "audit flag changes",
        ],
        claims: &[
            "Every flag should have an owner and a removal date.",
            "Flag evaluation must fall back to a safe default when the flag service is down.",
            "Percentage rollouts should hash a stable user id so users keep their variant.",
            "Testing both sides of a flag doubles the paths but prevents surprises at removal.",
        ],
    },
    Topic {
        tag: "migrations",
        name: "schema migrations",
        area: "data",
        entities: &[
            ("Flyway", "tool"),
            ("Liquibase", "tool"),
            ("Alembic", "library"),
            ("sqlx", "library"),
        ],
        terms: &[
            "expand contract",
            "backfill",
            "column rename",
            "lock timeout",
            "migration order",
            "down migration",
        ],
        tasks: &[
            "rename a column without downtime",
            "backfill a new column",
            "set a lock timeout for migrations",
            "split a large table",
            "review migrations before release",
        ],
        claims: &[
            "Renaming a column safely takes three releases: add, backfill and switch, then drop.",
            "Setting a short lock timeout makes a blocked migration fail fast instead of stalling traffic.",
            "Backfills in small batches keep replication lag low.",
            "Forward-only migrations are easier to reason about than down migrations.",
        ],
    },
    Topic {
        tag: "backups",
        name: "backups and restore",
        area: "operations",
        entities: &[
            ("pgBackRest", "tool"),
            ("restic", "tool"),
            ("Velero", "tool"),
            ("Amazon S3", "service"),
        ],
        terms: &[
            "restore test",
            "retention policy",
            "point in time recovery",
            "backup encryption",
            "snapshot",
            "recovery time",
        ],
        tasks: &[
            "test backup restores",
            "set backup retention",
            "restore to a point in time",
            "encrypt backups at rest",
            "document recovery steps",
        ],
        claims: &[
            "A backup that has never been restored should not be trusted.",
            "Point in time recovery needs both a base backup and continuous WAL archives.",
            "Keeping one backup copy in another account protects against compromised credentials.",
            "Restore time grows with data size, so it should be measured regularly.",
        ],
    },
    Topic {
        tag: "incident-response",
        name: "incident response",
        area: "operations",
        entities: &[
            ("PagerDuty", "service"),
            ("Opsgenie", "service"),
            ("Statuspage", "service"),
            ("FireHydrant", "service"),
        ],
        terms: &[
            "incident commander",
            "severity level",
            "status update",
            "postmortem",
            "timeline",
            "action item",
        ],
        tasks: &[
            "run an incident call",
            "write a blameless postmortem",
            "communicate status during an outage",
            "assign severity levels",
            "follow up on action items",
        ],
        claims: &[
            "Naming one incident commander shortens outages by removing competing decisions.",
            "Status updates every thirty minutes reduce duplicate questions during incidents.",
            "Blameless postmortems surface more contributing factors than blame-focused ones.",
            "Action items without an owner and due date are rarely completed.",
        ],
    },
    Topic {
        tag: "logging",
        name: "structured logging",
        area: "operations",
        entities: &[
            ("Loki", "software"),
            ("Fluent Bit", "tool"),
            ("Elastic Stack", "software"),
            ("Vector", "tool"),
        ],
        terms: &[
            "log level",
            "correlation id",
            "log retention",
            "sampling",
            "JSON lines",
            "redaction",
        ],
        tasks: &[
            "add correlation ids to logs",
            "redact personal data in logs",
            "set log retention",
            "sample noisy debug logs",
            "search logs during an incident",
        ],
        claims: &[
            "A correlation id in every log line makes one request traceable across services.",
            "Structured JSON logs are cheaper to query than free text.",
            "Redacting secrets at the source is safer than filtering them in the pipeline.",
            "Debug logging in production should be sampled or time-limited.",
        ],
    },
    Topic {
        tag: "secrets",
        name: "secrets management",
        area: "security",
        entities: &[
            ("HashiCorp Vault", "software"),
            ("AWS Secrets Manager", "service"),
            ("SOPS", "tool"),
            ("1Password", "service"),
        ],
        terms: &[
            "secret rotation",
            "dynamic credentials",
            "access policy",
            "secret scanning",
            "encryption key",
            "audit trail",
        ],
        tasks: &[
            "rotate database passwords",
            "remove a leaked secret from git history",
            "issue short-lived credentials",
            "scan repositories for secrets",
            "share secrets with a team",
        ],
        claims: &[
            "A secret pushed to a public repository must be rotated even after it is deleted.",
            "Short-lived dynamic credentials limit the damage of a leak.",
            "Encrypting secrets in the repository with SOPS keeps them reviewable.",
            "Secret scanning in pre-commit hooks catches leaks before they are pushed.",
        ],
    },
    Topic {
        tag: "containers",
        name: "container images",
        area: "operations",
        entities: &[
            ("Docker", "tool"),
            ("Podman", "tool"),
            ("Trivy", "tool"),
            ("distroless images", "software"),
        ],
        terms: &[
            "base image",
            "image layer",
            "multi-stage build",
            "vulnerability scan",
            "image tag",
            "build context",
        ],
        tasks: &[
            "shrink container images",
            "scan images for vulnerabilities",
            "pin base image digests",
            "speed up docker builds",
            "run containers as non-root",
        ],
        claims: &[
            "Multi-stage builds keep compilers and build tools out of the final image.",
            "Ordering Dockerfile steps from least to most frequently changed maximizes layer caching.",
            "Pinning base images by digest makes builds reproducible.",
            "Running containers as a non-root user limits the impact of an escape.",
        ],
    },
    Topic {
        tag: "load-balancing",
        name: "load balancing",
        area: "operations",
        entities: &[
            ("HAProxy", "software"),
            ("AWS Application Load Balancer", "service"),
            ("Traefik", "software"),
            ("nginx", "software"),
        ],
        terms: &[
            "connection draining",
            "sticky sessions",
            "health probe",
            "least connections",
            "idle timeout",
            "upstream pool",
        ],
        tasks: &[
            "drain connections before shutdown",
            "choose a balancing algorithm",
            "configure health probes",
            "avoid sticky sessions",
            "tune idle timeouts",
        ],
        claims: &[
            "Least-connections balancing handles uneven request costs better than round robin.",
            "The load balancer idle timeout must be shorter than the backend keep-alive timeout.",
            "Connection draining prevents errors during rolling restarts.",
            "Sticky sessions make scaling and failover harder.",
        ],
    },
    Topic {
        tag: "cdn",
        name: "CDN and edge caching",
        area: "operations",
        entities: &[
            ("Cloudflare", "service"),
            ("Fastly", "service"),
            ("Amazon CloudFront", "service"),
            ("Akamai", "service"),
        ],
        terms: &[
            "cache-control header",
            "purge",
            "origin shield",
            "edge location",
            "surrogate key",
            "stale-while-revalidate",
        ],
        tasks: &[
            "set cache headers for static assets",
            "purge content after a release",
            "protect the origin from traffic spikes",
            "cache API responses at the edge",
            "debug cache misses",
        ],
        claims: &[
            "Fingerprinted asset file names allow caching them for a year.",
            "stale-while-revalidate serves cached content while the edge fetches a fresh copy.",
            "An origin shield reduces the load that cache misses put on the origin.",
            "Surrogate keys allow purging groups of pages without purging everything.",
        ],
    },
    Topic {
        tag: "email",
        name: "transactional email",
        area: "engineering",
        entities: &[
            ("Postmark", "service"),
            ("Amazon SES", "service"),
            ("SendGrid", "service"),
            ("DMARC", "standard"),
        ],
        terms: &[
            "bounce rate",
            "SPF record",
            "DKIM signature",
            "suppression list",
            "sending domain",
            "email template",
        ],
        tasks: &[
            "set up SPF, DKIM and DMARC",
            "handle bounces and complaints",
            "warm up a new sending domain",
            "test email templates",
            "separate marketing and transactional mail",
        ],
        claims: &[
            "DMARC with a reject policy stops spoofed mail from the domain.",
            "Sending marketing mail from the transactional domain hurts its deliverability.",
            "Addresses that hard bounce must be suppressed immediately.",
            "A new sending domain needs gradually increasing volume to build reputation.",
        ],
    },
    Topic {
        tag: "payments",
        name: "payment integration",
        area: "engineering",
        entities: &[
            ("Stripe", "service"),
            ("Adyen", "service"),
            ("PayPal", "service"),
            ("3-D Secure", "standard"),
        ],
        terms: &[
            "payment intent",
            "refund",
            "chargeback",
            "strong customer authentication",
            "settlement report",
            "currency rounding",
        ],
        tasks: &[
            "handle failed card payments",
            "reconcile payouts with orders",
            "process refunds safely",
            "store amounts in minor units",
            "test payment flows",
        ],
        claims: &[
            "Money amounts should be stored as integers in minor units, never as floats.",
            "Payment state must be driven by provider webhooks, not by client redirects.",
            "Strong customer authentication is required for most card payments in the EU.",
            "Reconciling payouts daily catches missing settlements early.",
        ],
    },
    Topic {
        tag: "mobile-releases",
        name: "mobile app releases",
        area: "engineering",
        entities: &[
            ("App Store Connect", "service"),
            ("Google Play Console", "service"),
            ("fastlane", "tool"),
            ("Firebase Crashlytics", "service"),
        ],
        terms: &[
            "staged rollout",
            "build number",
            "crash rate",
            "app review",
            "minimum supported version",
            "release notes",
        ],
        tasks: &[
            "automate app store releases",
            "run a staged rollout",
            "force users to update",
            "monitor crash rates after release",
            "prepare release notes",
        ],
        claims: &[
            "Staged rollouts let a team halt a bad mobile release before most users get it.",
            "A server-side minimum version check allows forcing updates for broken builds.",
            "App review times vary, so urgent fixes need slack in the schedule.",
            "Crash rates should be compared per version, not across all users.",
        ],
    },
    Topic {
        tag: "frontend-performance",
        name: "frontend performance",
        area: "engineering",
        entities: &[
            ("Lighthouse", "tool"),
            ("webpack", "tool"),
            ("Vite", "tool"),
            ("Core Web Vitals", "standard"),
        ],
        terms: &[
            "largest contentful paint",
            "bundle size",
            "code splitting",
            "image format",
            "layout shift",
            "render blocking script",
        ],
        tasks: &[
            "reduce bundle size",
            "improve largest contentful paint",
            "lazy load images",
            "remove render blocking scripts",
            "measure real user performance",
        ],
        claims: &[
            "Serving images in AVIF or WebP cuts their size by a third or more.",
            "Reserving space for images and ads prevents layout shift.",
            "Route-based code splitting reduces the JavaScript needed for the first page.",
            "Lab scores differ from real user measurements, so both are needed.",
        ],
    },
    Topic {
        tag: "accessibility",
        name: "web accessibility",
        area: "engineering",
        entities: &[
            ("WCAG", "standard"),
            ("axe", "tool"),
            ("NVDA", "tool"),
            ("VoiceOver", "tool"),
        ],
        terms: &[
            "color contrast",
            "focus order",
            "alt text",
            "ARIA label",
            "keyboard trap",
            "screen reader",
        ],
        tasks: &[
            "audit a page for accessibility",
            "make forms usable with a keyboard",
            "write useful alt text",
            "fix color contrast",
            "test with a screen reader",
        ],
        claims: &[
            "Automated checkers find only about a third of accessibility problems.",
            "Native HTML controls are more accessible than custom widgets with ARIA.",
            "Body text needs a contrast ratio of at least 4.5 to 1.",
            "Every interactive element must be reachable and usable with the keyboard alone.",
        ],
    },
    Topic {
        tag: "data-pipelines",
        name: "data pipelines",
        area: "data",
        entities: &[
            ("Apache Airflow", "software"),
            ("dbt", "tool"),
            ("Apache Spark", "software"),
            ("Dagster", "software"),
        ],
        terms: &[
            "backfill run",
            "data freshness",
            "schema drift",
            "partition",
            "late arriving data",
            "data contract",
        ],
        tasks: &[
            "make pipeline runs idempotent",
            "detect schema drift",
            "backfill a month of data",
            "alert on stale tables",
            "test transformations",
        ],
        claims: &[
            "Writing each partition with overwrite semantics makes pipeline reruns idempotent.",
            "Freshness checks catch silent pipeline failures faster than row counts.",
            "Data contracts between producers and consumers reduce breaking schema changes.",
            "Late arriving data needs a reprocessing window, not a single daily run.",
        ],
    },
    Topic {
        tag: "ml-deployment",
        name: "model deployment",
        area: "data",
        entities: &[
            ("MLflow", "tool"),
            ("KServe", "software"),
            ("ONNX Runtime", "library"),
            ("Triton Inference Server", "software"),
        ],
        terms: &[
            "model registry",
            "feature drift",
            "shadow deployment",
            "inference latency",
            "model version",
            "batch scoring",
        ],
        tasks: &[
            "deploy a model behind an API",
            "monitor feature drift",
            "run a shadow deployment",
            "roll back a model version",
            "reduce inference latency",
        ],
        claims: &[
            "A shadow deployment compares a new model on live traffic without affecting users.",
            "Training and serving must share feature code to avoid skew.",
            "Dynamic batching raises GPU throughput at the cost of some latency.",
            "Models degrade silently when input distributions drift.",
        ],
    },
    Topic {
        tag: "llm-prompting",
        name: "LLM prompting",
        area: "ai",
        entities: &[
            ("Claude", "model"),
            ("GPT-4o", "model"),
            ("Llama 3", "model"),
            ("LangChain", "library"),
        ],
        terms: &[
            "system prompt",
            "few-shot example",
            "output schema",
            "context window",
            "temperature",
            "tool call",
        ],
        tasks: &[
            "get structured output from a model",
            "write a reusable system prompt",
            "evaluate prompt changes",
            "reduce hallucinated citations",
            "fit long documents in the context window",
        ],
        claims: &[
            "Asking for output that matches a JSON schema reduces parsing failures.",
            "A small fixed evaluation set catches prompt regressions before release.",
            "Few-shot examples steer output format more reliably than instructions alone.",
            "Lower temperature makes outputs more repeatable but not more correct.",
        ],
    },
    Topic {
        tag: "vector-search",
        name: "vector search",
        area: "ai",
        entities: &[
            ("pgvector", "extension"),
            ("FAISS", "library"),
            ("Qdrant", "software"),
            ("HNSW", "algorithm"),
        ],
        terms: &[
            "embedding model",
            "approximate nearest neighbor",
            "chunk size",
            "recall at k",
            "hybrid search",
            "reranker",
        ],
        tasks: &[
            "choose a chunk size for retrieval",
            "combine keyword and vector search",
            "measure retrieval recall",
            "tune HNSW parameters",
            "rerank retrieved passages",
        ],
        claims: &[
            "Hybrid keyword and vector search beats either alone on most retrieval benchmarks.",
            "Raising HNSW ef_search improves recall at the cost of latency.",
            "Chunks of a few hundred tokens with overlap retrieve better than whole documents.",
            "A cross-encoder reranker improves precision of the top results.",
        ],
    },
    Topic {
        tag: "python-packaging",
        name: "Python packaging",
        area: "engineering",
        entities: &[("pip", "tool"), ("uv", "tool"), ("Poetry", "tool"), ("PyPI", "service")],
        terms: &[
            "lock file",
            "virtual environment",
            "wheel",
            "dependency conflict",
            "pyproject file",
            "version pin",
        ],
        tasks: &[
            "pin Python dependencies",
            "publish a package to PyPI",
            "resolve dependency conflicts",
            "build wheels for several platforms",
            "set up a virtual environment",
        ],
        claims: &[
            "A lock file with hashes makes Python installs reproducible.",
            "Libraries should declare version ranges while applications pin exact versions.",
            "Installing into the system Python breaks operating system tools.",
            "Trusted publishing removes the need for long-lived PyPI tokens.",
        ],
    },
    Topic {
        tag: "async-rust",
        name: "async Rust",
        area: "engineering",
        entities: &[
            ("Tokio", "library"),
            ("async-std", "library"),
            ("tracing", "library"),
            ("Rust", "language"),
        ],
        terms: &[
            "blocking call",
            "task cancellation",
            "Send bound",
            "select loop",
            "backpressure",
            "runtime",
        ],
        tasks: &[
            "avoid blocking the async runtime",
            "cancel tasks cleanly",
            "add backpressure to a stream",
            "debug a stuck future",
            "share state between tasks",
        ],
        claims: &[
            "Blocking calls inside async tasks stall every task on that worker thread.",
            "Dropping a future cancels it at its next await point.",
            "Bounded channels provide backpressure that unbounded channels hide.",
            "spawn_blocking moves CPU-heavy or blocking work off the async workers.",
        ],
    },
    Topic {
        tag: "javascript-tooling",
        name: "JavaScript build tooling",
        area: "engineering",
        entities: &[
            ("npm", "tool"),
            ("pnpm", "tool"),
            ("esbuild", "tool"),
            ("TypeScript", "language"),
        ],
        terms: &[
            "package lock",
            "monorepo workspace",
            "tree shaking",
            "source map",
            "transpile step",
            "peer dependency",
        ],
        tasks: &[
            "speed up TypeScript builds",
            "set up a monorepo",
            "audit npm dependencies",
            "publish source maps privately",
            "remove unused dependencies",
        ],
        claims: &[
            "Committing the lock file makes JavaScript installs reproducible.",
            "Type checking in a separate step lets the bundler build much faster.",
            "Tree shaking only works with ES module imports.",
            "Workspaces link local packages without publishing them.",
        ],
    },
    Topic {
        tag: "git",
        name: "Git workflows",
        area: "engineering",
        entities: &[
            ("Git", "tool"),
            ("GitHub", "service"),
            ("GitLab", "service"),
            ("pre-commit", "tool"),
        ],
        terms: &[
            "rebase",
            "merge commit",
            "branch protection",
            "commit message",
            "bisect",
            "signed commit",
        ],
        tasks: &[
            "find a regression with git bisect",
            "clean up history before merging",
            "protect the main branch",
            "recover a deleted branch",
            "write good commit messages",
        ],
        claims: &[
            "git bisect finds the commit that introduced a bug in logarithmic time.",
            "Branch protection with required reviews prevents unreviewed changes on main.",
            "The reflog can recover commits that no branch points to.",
            "Small focused commits make reverts and bisects easier.",
        ],
    },
    Topic {
        tag: "code-review",
        name: "code review",
        area: "engineering",
        entities: &[
            ("GitHub pull requests", "service"),
            ("Gerrit", "software"),
            ("CODEOWNERS", "standard"),
            ("Danger", "tool"),
        ],
        terms: &[
            "review checklist",
            "change size",
            "review latency",
            "nit comment",
            "approval rule",
            "reviewer rotation",
        ],
        tasks: &[
            "keep pull requests small",
            "review code faster",
            "write helpful review comments",
            "assign reviewers automatically",
            "review database changes",
        ],
        claims: &[
            "Reviews of changes under four hundred lines find more defects per line.",
            "Labeling nit comments lets authors prioritize the important feedback.",
            "Review latency matters more to throughput than review depth.",
            "Automated formatting removes most style discussions from reviews.",
        ],
    },
    Topic {
        tag: "terraform",
        name: "infrastructure as code",
        area: "operations",
        entities: &[
            ("Terraform", "tool"),
            ("OpenTofu", "tool"),
            ("Pulumi", "tool"),
            ("Atlantis", "tool"),
        ],
        terms: &[
            "state file",
            "plan output",
            "drift detection",
            "module version",
            "state lock",
            "import block",
        ],
        tasks: &[
            "review Terraform plans",
            "detect configuration drift",
            "split a large state file",
            "import existing resources",
            "pin module versions",
        ],
        claims: &[
            "Remote state with locking prevents two applies from corrupting the state.",
            "Reviewing the plan output catches destructive changes before apply.",
            "Small state files per environment limit the blast radius of mistakes.",
            "Pinning provider versions avoids surprise changes on the next plan.",
        ],
    },
    Topic {
        tag: "networking",
        name: "network troubleshooting",
        area: "operations",
        entities: &[
            ("tcpdump", "tool"),
            ("Wireshark", "tool"),
            ("mtr", "tool"),
            ("iperf3", "tool"),
        ],
        terms: &[
            "packet loss",
            "MTU",
            "TCP retransmission",
            "firewall rule",
            "round trip time",
            "NAT gateway",
        ],
        tasks: &[
            "diagnose packet loss",
            "find an MTU mismatch",
            "capture traffic on a server",
            "measure bandwidth between hosts",
            "debug connection timeouts",
        ],
        claims: &[
            "An MTU mismatch shows up as connections that hang only on large responses.",
            "mtr reveals where along a path packet loss begins.",
            "Connection timeouts without resets usually mean a firewall drops packets silently.",
            "NAT gateways have per-destination connection limits that cause sporadic failures.",
        ],
    },
    Topic {
        tag: "linux-performance",
        name: "Linux performance",
        area: "operations",
        entities: &[
            ("perf", "tool"),
            ("htop", "tool"),
            ("bpftrace", "tool"),
            ("Linux", "software"),
        ],
        terms: &[
            "CPU steal",
            "load average",
            "page cache",
            "IO wait",
            "flame graph",
            "context switch",
        ],
        tasks: &[
            "profile CPU usage with perf",
            "find IO bottlenecks",
            "read a flame graph",
            "diagnose high load average",
            "tune file descriptor limits",
        ],
        claims: &[
            "A flame graph shows where CPU time is spent across whole call stacks.",
            "Load average on Linux counts tasks waiting on disk as well as on CPU.",
            "High CPU steal means the hypervisor gives the virtual machine less CPU than requested.",
            "Free memory on Linux is mostly used as page cache, which is reclaimable.",
        ],
    },
    Topic {
        tag: "memory-leaks",
        name: "memory leaks",
        area: "engineering",
        entities: &[
            ("Valgrind", "tool"),
            ("heaptrack", "tool"),
            ("Chrome DevTools", "tool"),
            ("jemalloc", "library"),
        ],
        terms: &[
            "heap snapshot",
            "retained size",
            "allocation profile",
            "reference cycle",
            "resident memory",
            "out of memory kill",
        ],
        tasks: &[
            "find a memory leak in production",
            "compare heap snapshots",
            "reduce memory fragmentation",
            "set memory alerts",
            "profile allocations",
        ],
        claims: &[
            "Comparing two heap snapshots taken minutes apart isolates what keeps growing.",
            "Unbounded in-memory caches are the most common cause of slow memory leaks.",
            "Switching the allocator to jemalloc can reduce fragmentation in long-running services.",
            "Resident memory that plateaus is not a leak, even if it is high.",
        ],
    },
    Topic {
        tag: "concurrency",
        name: "concurrency bugs",
        area: "engineering",
        entities: &[
            ("ThreadSanitizer", "tool"),
            ("Go race detector", "tool"),
            ("Loom", "library"),
            ("Java", "language"),
        ],
        terms: &[
            "race condition",
            "deadlock",
            "lock ordering",
            "atomic operation",
            "thread pool",
            "lost update",
        ],
        tasks: &[
            "find data races",
            "prevent deadlocks",
            "avoid lost updates in the database",
            "size thread pools",
            "test concurrent code",
        ],
        claims: &[
            "Acquiring locks in one global order prevents deadlocks.",
            "Optimistic locking with a version column prevents lost updates.",
            "Race detectors only find races that the tests actually execute.",
            "A thread pool larger than the database pool only adds waiting threads.",
        ],
    },
    Topic {
        tag: "time-zones",
        name: "dates and time zones",
        area: "engineering",
        entities: &[
            ("IANA time zone database", "standard"),
            ("ISO 8601", "standard"),
            ("chrono", "library"),
            ("Temporal", "library"),
        ],
        terms: &[
            "UTC timestamp",
            "daylight saving change",
            "local time",
            "time zone offset",
            "leap second",
            "calendar date",
        ],
        tasks: &[
            "store timestamps correctly",
            "schedule jobs across daylight saving changes",
            "display local times",
            "parse dates from user input",
            "test time zone handling",
        ],
        claims: &[
            "Timestamps should be stored in UTC and converted only for display.",
            "Future events in local time need the zone name, not just the offset.",
            "Jobs scheduled at 02:30 local time run twice or never on daylight saving days.",
            "A calendar date without a time should not be stored as a timestamp.",
        ],
    },
    Topic {
        tag: "text-encoding",
        name: "text encoding",
        area: "engineering",
        entities: &[
            ("UTF-8", "standard"),
            ("Unicode", "standard"),
            ("ICU", "library"),
            ("iconv", "tool"),
        ],
        terms: &[
            "byte order mark",
            "normalization form",
            "grapheme cluster",
            "mojibake",
            "code point",
            "collation",
        ],
        tasks: &[
            "fix mojibake in imported text",
            "normalize Unicode before comparing",
            "count characters correctly",
            "sort names by locale",
            "detect file encodings",
        ],
        claims: &[
            "Comparing user text requires Unicode normalization first.",
            "String length in code points differs from what users see as characters.",
            "Mojibake usually comes from decoding UTF-8 bytes as Latin-1.",
            "Sorting by code point gives wrong orders for most languages.",
        ],
    },
    Topic {
        tag: "csv-imports",
        name: "CSV imports",
        area: "data",
        entities: &[
            ("Microsoft Excel", "software"),
            ("pandas", "library"),
            ("DuckDB", "software"),
            ("RFC 4180", "standard"),
        ],
        terms: &[
            "delimiter",
            "quoted field",
            "header row",
            "encoding",
            "validation report",
            "duplicate row",
        ],
        tasks: &[
            "import large CSV files",
            "validate rows before import",
            "handle quoted line breaks",
            "report import errors to users",
            "deduplicate imported rows",
        ],
        claims: &[
            "Excel opens CSV files with the system's regional delimiter, not always a comma.",
            "Quoted fields in CSV may contain line breaks, so files cannot be split by lines.",
            "Validating the whole file before writing avoids half-finished imports.",
            "Leading zeros in codes are lost when spreadsheets guess column types.",
        ],
    },
    Topic {
        tag: "oauth",
        name: "OAuth and OpenID Connect",
        area: "security",
        entities: &[
            ("OAuth 2.1", "standard"),
            ("OpenID Connect", "standard"),
            ("PKCE", "standard"),
            ("Okta", "service"),
        ],
        terms: &[
            "authorization code",
            "refresh token",
            "redirect URI",
            "access token lifetime",
            "scope",
            "ID token",
        ],
        tasks: &[
            "add PKCE to a login flow",
            "validate ID tokens",
            "rotate refresh tokens",
            "restrict redirect URIs",
            "choose token lifetimes",
        ],
        claims: &[
            "PKCE protects the authorization code flow against code interception.",
            "Redirect URIs must be matched exactly, never by prefix.",
            "Refresh token rotation detects stolen refresh tokens on reuse.",
            "The implicit flow should not be used for new applications.",
        ],
    },
    Topic {
        tag: "object-storage",
        name: "object storage",
        area: "operations",
        entities: &[
            ("Amazon S3", "service"),
            ("MinIO", "software"),
            ("Google Cloud Storage", "service"),
            ("rclone", "tool"),
        ],
        terms: &[
            "bucket policy",
            "presigned URL",
            "lifecycle rule",
            "multipart upload",
            "object versioning",
            "storage class",
        ],
        tasks: &[
            "share files with presigned URLs",
            "expire old objects automatically",
            "upload large files reliably",
            "block public bucket access",
            "replicate buckets across regions",
        ],
        claims: &[
            "Presigned URLs grant time-limited access without sharing credentials.",
            "Lifecycle rules cut storage costs by moving old objects to cheaper classes.",
            "Multipart uploads let large uploads resume after a failure.",
            "Blocking public access at the account level prevents accidental exposure.",
        ],
    },
    Topic {
        tag: "kafka",
        name: "Kafka streaming",
        area: "data",
        entities: &[
            ("Apache Kafka", "message_broker"),
            ("Kafka Connect", "software"),
            ("Schema Registry", "software"),
            ("Redpanda", "message_broker"),
        ],
        terms: &[
            "consumer lag",
            "partition count",
            "offset commit",
            "retention",
            "rebalance",
            "exactly once",
        ],
        tasks: &[
            "monitor consumer lag",
            "choose the partition count",
            "reset consumer offsets",
            "evolve message schemas",
            "avoid consumer rebalance storms",
        ],
        claims: &[
            "Ordering in Kafka is guaranteed only within a partition.",
            "Adding partitions later changes which partition a key maps to.",
            "Consumer lag is the best single signal of a struggling consumer group.",
            "Static group membership reduces rebalances during rolling restarts.",
        ],
    },
    Topic {
        tag: "cron",
        name: "scheduled jobs",
        area: "operations",
        entities: &[
            ("cron", "tool"),
            ("systemd timers", "software"),
            ("Kubernetes CronJob", "software"),
            ("Sidekiq", "library"),
        ],
        terms: &[
            "schedule expression",
            "overlapping runs",
            "missed run",
            "job lock",
            "heartbeat",
            "job timeout",
        ],
        tasks: &[
            "prevent overlapping job runs",
            "monitor scheduled jobs",
            "retry failed jobs",
            "move cron jobs to a scheduler",
            "make jobs safe to rerun",
        ],
        claims: &[
            "A dead man's switch alerts when a scheduled job stops running at all.",
            "Jobs must take a lock or be idempotent because schedulers can start them twice.",
            "Every job needs a timeout so a hung run does not block the next one.",
            "Logging start and end of each run makes missed runs visible.",
        ],
    },
    Topic {
        tag: "websockets",
        name: "WebSockets",
        area: "engineering",
        entities: &[
            ("Socket.IO", "library"),
            ("WebSocket API", "standard"),
            ("Phoenix Channels", "library"),
            ("Centrifugo", "software"),
        ],
        terms: &[
            "heartbeat ping",
            "reconnect backoff",
            "message ordering",
            "connection limit",
            "fan-out",
            "sticky routing",
        ],
        tasks: &[
            "reconnect clients gracefully",
            "scale WebSocket servers",
            "detect dead connections",
            "authenticate WebSocket connections",
            "broadcast messages to many clients",
        ],
        claims: &[
            "Heartbeat pings detect dead connections that TCP alone keeps open for hours.",
            "Clients should reconnect with jittered exponential backoff.",
            "Load balancers need long idle timeouts for WebSocket connections.",
            "A pub/sub backplane lets many WebSocket servers share broadcasts.",
        ],
    },
    Topic {
        tag: "privacy-requests",
        name: "data protection requests",
        area: "legal",
        entities: &[
            ("GDPR", "regulation"),
            ("CCPA", "regulation"),
            ("OneTrust", "service"),
            ("data processing agreement", "document"),
        ],
        terms: &[
            "subject access request",
            "deletion request",
            "retention schedule",
            "processing record",
            "consent log",
            "response deadline",
        ],
        tasks: &[
            "answer a subject access request",
            "delete a user's data everywhere",
            "keep a record of processing",
            "set data retention periods",
            "review processor agreements",
        ],
        claims: &[
            "Subject access requests under GDPR must be answered within one month.",
            "Deleting personal data must include backups on their normal expiry cycle.",
            "A data map of every system holding personal data makes requests answerable.",
            "Consent must be as easy to withdraw as it was to give.",
        ],
    },
    Topic {
        tag: "sourdough",
        name: "sourdough baking",
        area: "cooking",
        entities: &[
            ("sourdough starter", "ingredient"),
            ("Dutch oven", "equipment"),
            ("banneton", "equipment"),
            ("bread flour", "ingredient"),
        ],
        terms: &[
            "bulk fermentation",
            "hydration",
            "levain",
            "oven spring",
            "crumb",
            "cold retard",
        ],
        tasks: &[
            "revive a sluggish starter",
            "shape a sourdough loaf",
            "get more oven spring",
            "bake sourdough on a schedule",
            "adjust hydration for new flour",
        ],
        claims: &[
            "A starter that doubles within six hours of feeding is ready to bake with.",
            "Baking in a preheated Dutch oven traps steam and improves oven spring.",
            "A cold retard overnight makes sourdough easier to score and more flavorful.",
            "Bulk fermentation is finished by dough volume and texture, not by the clock.",
        ],
    },
    Topic {
        tag: "meal-prep",
        name: "meal preparation",
        area: "cooking",
        entities: &[
            ("rice cooker", "equipment"),
            ("sheet pan", "equipment"),
            ("vacuum sealer", "equipment"),
            ("chickpeas", "ingredient"),
        ],
        terms: &[
            "batch cooking",
            "portion size",
            "reheating",
            "fridge life",
            "freezer storage",
            "weekly menu",
        ],
        tasks: &[
            "plan a weekly menu",
            "batch cook for five days",
            "freeze meals safely",
            "reheat rice safely",
            "keep prepared salads crisp",
        ],
        claims: &[
            "Cooked meals keep three to four days in a fridge at or below five degrees.",
            "Cooling food in shallow containers gets it out of the danger zone faster.",
            "Dressing stored separately keeps prepared salads from going soggy.",
            "Rice should be cooled quickly and reheated only once.",
        ],
    },
    Topic {
        tag: "coffee",
        name: "coffee brewing",
        area: "cooking",
        entities: &[
            ("pour-over dripper", "equipment"),
            ("espresso machine", "equipment"),
            ("burr grinder", "equipment"),
            ("AeroPress", "equipment"),
        ],
        terms: &[
            "grind size",
            "brew ratio",
            "extraction time",
            "water temperature",
            "bloom",
            "crema",
        ],
        tasks: &[
            "dial in espresso",
            "brew pour-over coffee",
            "choose a brew ratio",
            "descale a coffee machine",
            "store coffee beans",
        ],
        claims: &[
            "A brew ratio of about one to sixteen is a good start for pour-over coffee.",
            "Sour espresso usually means under-extraction, so grind finer.",
            "Water just off the boil, around ninety-three degrees, suits most brewing methods.",
            "Whole beans stay fresh longer than ground coffee in an airtight container.",
        ],
    },
    Topic {
        tag: "food-safety",
        name: "kitchen food safety",
        area: "cooking",
        entities: &[
            ("HACCP", "standard"),
            ("probe thermometer", "equipment"),
            ("blast chiller", "equipment"),
            ("allergen matrix", "document"),
        ],
        terms: &[
            "core temperature",
            "cross contamination",
            "allergen labeling",
            "cooling log",
            "date label",
            "cleaning schedule",
        ],
        tasks: &[
            "check core temperatures",
            "prevent cross contamination",
            "label allergens on the menu",
            "keep a cooling log",
            "train new kitchen staff",
        ],
        claims: &[
            "Poultry is safe when its core reaches seventy-five degrees.",
            "Separate cutting boards for raw meat and vegetables prevent cross contamination.",
            "Cooked food should cool below eight degrees within ninety minutes.",
            "Allergen information must be available for every dish served.",
        ],
    },
    Topic {
        tag: "invoicing",
        name: "invoicing",
        area: "finance",
        entities: &[
            ("Xero", "software"),
            ("QuickBooks", "software"),
            ("Peppol", "standard"),
            ("purchase order", "document"),
        ],
        terms: &[
            "payment terms",
            "invoice number",
            "credit note",
            "late fee",
            "remittance advice",
            "VAT line",
        ],
        tasks: &[
            "send invoices on time",
            "chase overdue invoices",
            "issue a credit note",
            "match payments to invoices",
            "set payment terms",
        ],
        claims: &[
            "Invoices that reference the customer's purchase order number get paid faster.",
            "A credit note, not an edited invoice, is the correct way to fix a sent invoice.",
            "Sending a reminder three days before the due date reduces late payments.",
            "Invoice numbers must be sequential without gaps for tax purposes in many countries.",
        ],
    },
    Topic {
        tag: "expenses",
        name: "expense reports",
        area: "finance",
        entities: &[
            ("Expensify", "software"),
            ("SAP Concur", "software"),
            ("corporate card", "tool"),
            ("per diem", "policy"),
        ],
        terms: &[
            "receipt",
            "expense policy",
            "approval chain",
            "mileage claim",
            "reimbursement",
            "cost center",
        ],
        tasks: &[
            "submit an expense report",
            "reimburse travel costs",
            "approve expenses quickly",
            "set an expense policy",
            "audit expense claims",
        ],
        claims: &[
            "Photographing receipts on the day they are issued prevents most missing-receipt problems.",
            "Per diem allowances reduce the number of receipts to review.",
            "Expenses should be approved by someone other than the person who incurred them.",
            "Corporate cards with automatic feeds cut expense report preparation time.",
        ],
    },
    Topic {
        tag: "month-end-close",
        name: "month-end close",
        area: "finance",
        entities: &[
            ("NetSuite", "software"),
            ("BlackLine", "software"),
            ("general ledger", "document"),
            ("trial balance", "document"),
        ],
        terms: &[
            "accrual",
            "bank reconciliation",
            "journal entry",
            "close checklist",
            "intercompany balance",
            "variance analysis",
        ],
        tasks: &[
            "close the books in five days",
            "reconcile bank accounts",
            "book accruals",
            "review variances",
            "document journal entries",
        ],
        claims: &[
            "Reconciling bank accounts weekly shortens the month-end close.",
            "A close checklist with owners and deadlines keeps the close on schedule.",
            "Accruals should be reversed automatically at the start of the next month.",
            "Variance analysis against budget catches misposted entries.",
        ],
    },
    Topic {
        tag: "payroll",
        name: "payroll",
        area: "finance",
        entities: &[
            ("ADP", "service"),
            ("Gusto", "service"),
            ("payslip", "document"),
            ("tax withholding", "policy"),
        ],
        terms: &[
            "pay period",
            "gross pay",
            "deduction",
            "overtime",
            "payroll cutoff",
            "year-end report",
        ],
        tasks: &[
            "run payroll on time",
            "correct a payroll error",
            "process overtime",
            "onboard a new employee to payroll",
            "prepare year-end payroll reports",
        ],
        claims: &[
            "Changes submitted after the payroll cutoff must wait for the next period.",
            "Payroll corrections are easier as an off-cycle payment than as a reversal.",
            "Two-person review of payroll changes prevents most costly errors.",
            "Overtime must be calculated from recorded hours, not estimates.",
        ],
    },
    Topic {
        tag: "budgeting",
        name: "team budgeting",
        area: "finance",
        entities: &[
            ("Google Sheets", "software"),
            ("Anaplan", "software"),
            ("annual budget", "document"),
            ("rolling forecast", "method"),
        ],
        terms: &[
            "budget line",
            "forecast",
            "headcount plan",
            "run rate",
            "variance",
            "approval threshold",
        ],
        tasks: &[
            "plan a team budget",
            "track spending against budget",
            "build a rolling forecast",
            "justify a budget increase",
            "cut costs without layoffs",
        ],
        claims: &[
            "A rolling forecast updated monthly is more accurate than a fixed annual budget.",
            "Headcount is usually the largest line of a team budget.",
            "Tracking the monthly run rate reveals overspending before year end.",
            "Budget requests tied to measurable outcomes are approved more often.",
        ],
    },
    Topic {
        tag: "procurement",
        name: "procurement",
        area: "finance",
        entities: &[
            ("Coupa", "software"),
            ("SAP Ariba", "software"),
            ("request for proposal", "document"),
            ("vendor contract", "document"),
        ],
        terms: &[
            "purchase request",
            "vendor selection",
            "three quotes",
            "contract renewal",
            "approval workflow",
            "spend category",
        ],
        tasks: &[
            "run a request for proposal",
            "compare vendor quotes",
            "renew contracts on time",
            "onboard a new vendor",
            "negotiate a discount",
        ],
        claims: &[
            "Tracking renewal dates prevents unwanted automatic contract renewals.",
            "Three competing quotes usually lower the price of large purchases.",
            "Standard contract templates shorten vendor onboarding.",
            "Consolidating spend with fewer vendors improves negotiating power.",
        ],
    },
    Topic {
        tag: "hiring",
        name: "hiring interviews",
        area: "people",
        entities: &[
            ("Greenhouse", "software"),
            ("Lever", "software"),
            ("scorecard", "document"),
            ("job description", "document"),
        ],
        terms: &[
            "structured interview",
            "interview loop",
            "work sample",
            "debrief",
            "hiring bar",
            "candidate experience",
        ],
        tasks: &[
            "run structured interviews",
            "write a job description",
            "hold a hiring debrief",
            "design a work sample",
            "reduce time to hire",
        ],
        claims: &[
            "Structured interviews with fixed questions predict job performance better than unstructured ones.",
            "Interviewers should submit scores before the debrief to avoid anchoring.",
            "Short paid work samples are fairer than long unpaid take-home assignments.",
            "Replying to every candidate within a week improves acceptance rates.",
        ],
    },
    Topic {
        tag: "onboarding",
        name: "employee onboarding",
        area: "people",
        entities: &[
            ("BambooHR", "software"),
            ("Notion", "software"),
            ("onboarding buddy", "role"),
            ("30-60-90 plan", "document"),
        ],
        terms: &[
            "first week plan",
            "account setup",
            "buddy",
            "checklist",
            "first task",
            "feedback session",
        ],
        tasks: &[
            "prepare a new hire's first week",
            "set up accounts before day one",
            "assign an onboarding buddy",
            "plan the first ninety days",
            "collect onboarding feedback",
        ],
        claims: &[
            "New hires who ship a small change in their first week ramp up faster.",
            "Accounts and equipment ready on day one remove the most common onboarding frustration.",
            "A named buddy gives new hires someone to ask without feeling judged.",
            "A written 30-60-90 plan sets shared expectations for the first months.",
        ],
    },
    Topic {
        tag: "meetings",
        name: "meeting facilitation",
        area: "workplace",
        entities: &[
            ("Zoom", "software"),
            ("Microsoft Teams", "software"),
            ("agenda", "document"),
            ("decision log", "document"),
        ],
        terms: &[
            "agenda",
            "time box",
            "decision owner",
            "meeting notes",
            "action items",
            "standup",
        ],
        tasks: &[
            "run shorter meetings",
            "write a useful agenda",
            "record decisions",
            "run a remote retrospective",
            "cancel unnecessary meetings",
        ],
        claims: &[
            "Meetings with a written agenda sent in advance end on time more often.",
            "Every decision should be written down with its owner and date.",
            "Standups longer than fifteen minutes turn into status reports.",
            "Reviewing recurring meetings each quarter removes ones nobody needs.",
        ],
    },
    Topic {
        tag: "customer-support",
        name: "customer support",
        area: "workplace",
        entities: &[
            ("Zendesk", "software"),
            ("Intercom", "software"),
            ("Freshdesk", "software"),
            ("help center", "document"),
        ],
        terms: &[
            "first response time",
            "ticket queue",
            "macro",
            "escalation path",
            "satisfaction score",
            "knowledge base article",
        ],
        tasks: &[
            "reduce first response time",
            "write help center articles",
            "escalate bugs to engineering",
            "handle angry customers",
            "triage the ticket queue",
        ],
        claims: &[
            "A help center article for each top ticket reason deflects many tickets.",
            "Acknowledging a customer's frustration first shortens difficult conversations.",
            "Escalations with reproduction steps get fixed faster.",
            "Tagging tickets by reason shows which product problems cost the most support time.",
        ],
    },
    Topic {
        tag: "technical-writing",
        name: "technical writing",
        area: "workplace",
        entities: &[
            ("Markdown", "standard"),
            ("Vale", "tool"),
            ("Docusaurus", "software"),
            ("Diátaxis", "method"),
        ],
        terms: &[
            "tutorial",
            "reference page",
            "how-to guide",
            "style guide",
            "code sample",
            "docs review",
        ],
        tasks: &[
            "write a getting started tutorial",
            "structure documentation",
            "keep docs up to date",
            "write good code samples",
            "review documentation changes",
        ],
        claims: &[
            "Separating tutorials, how-to guides, reference and explanation makes docs easier to use.",
            "Documentation kept in the same repository as the code stays current more often.",
            "Code samples that are tested in CI stay correct.",
            "Short sentences and active voice make technical text easier to follow.",
        ],
    },
    Topic {
        tag: "project-planning",
        name: "project planning",
        area: "workplace",
        entities: &[
            ("Jira", "software"),
            ("Linear", "software"),
            ("Gantt chart", "method"),
            ("project charter", "document"),
        ],
        terms: &[
            "milestone",
            "estimate",
            "critical path",
            "scope creep",
            "risk register",
            "dependency",
        ],
        tasks: &[
            "estimate a project",
            "track project risks",
            "control scope creep",
            "plan milestones",
            "report project status",
        ],
        claims: &[
            "Estimates in ranges communicate uncertainty better than single numbers.",
            "Writing down what is out of scope limits scope creep.",
            "Projects slip most at dependencies on other teams.",
            "A weekly written status update keeps stakeholders aligned.",
        ],
    },
    Topic {
        tag: "business-travel",
        name: "business travel",
        area: "workplace",
        entities: &[
            ("TravelPerk", "service"),
            ("Navan", "service"),
            ("travel policy", "policy"),
            ("rail pass", "document"),
        ],
        terms: &[
            "booking window",
            "travel approval",
            "hotel rate",
            "itinerary",
            "duty of care",
            "carbon budget",
        ],
        tasks: &[
            "book business trips within policy",
            "plan a team offsite",
            "reduce travel costs",
            "support travelers in emergencies",
            "choose trains over flights",
        ],
        claims: &[
            "Booking flights at least two weeks ahead lowers fares considerably.",
            "Trains are faster than flights door to door for trips under four hours.",
            "A central booking tool lets the company locate travelers in an emergency.",
            "Negotiated hotel rates only pay off above a minimum number of nights.",
        ],
    },
    Topic {
        tag: "gardening",
        name: "vegetable gardening",
        area: "home",
        entities: &[
            ("tomato", "plant"),
            ("raised bed", "equipment"),
            ("compost", "material"),
            ("drip irrigation", "equipment"),
        ],
        terms: &[
            "soil test",
            "crop rotation",
            "seedling",
            "mulch",
            "watering schedule",
            "frost date",
        ],
        tasks: &[
            "start seeds indoors",
            "build a raised bed",
            "water vegetables efficiently",
            "rotate crops",
            "protect plants from frost",
        ],
        claims: &[
            "Watering deeply and less often grows deeper roots than daily light watering.",
            "Mulch keeps soil moist and suppresses weeds.",
            "Rotating plant families each year reduces soil-borne disease.",
            "Seedlings need hardening off for a week before planting outside.",
        ],
    },
    Topic {
        tag: "home-repair",
        name: "home repair",
        area: "home",
        entities: &[
            ("drywall", "material"),
            ("stud finder", "tool"),
            ("silicone sealant", "material"),
            ("circuit breaker", "equipment"),
        ],
        terms: &[
            "wall anchor",
            "leaking tap",
            "caulk line",
            "paint primer",
            "grout",
            "shut-off valve",
        ],
        tasks: &[
            "fix a leaking tap",
            "patch a hole in drywall",
            "re-caulk a bathtub",
            "hang heavy shelves",
            "paint over stains",
        ],
        claims: &[
            "Turning off the water at the shut-off valve is the first step of any tap repair.",
            "Heavy shelves need to be screwed into studs, not only drywall anchors.",
            "Old caulk must be removed completely before new caulk will seal.",
            "A stain-blocking primer stops water stains from bleeding through new paint.",
        ],
    },
    Topic {
        tag: "bicycles",
        name: "bicycle maintenance",
        area: "home",
        entities: &[
            ("chain checker", "tool"),
            ("disc brakes", "equipment"),
            ("tubeless tires", "equipment"),
            ("derailleur", "equipment"),
        ],
        terms: &[
            "chain wear",
            "tire pressure",
            "brake pads",
            "gear indexing",
            "chain lube",
            "spoke tension",
        ],
        tasks: &[
            "replace a worn chain",
            "adjust gear shifting",
            "fix a flat tire",
            "bed in disc brakes",
            "clean and lube the drivetrain",
        ],
        claims: &[
            "Replacing a chain at 0.5 percent wear saves the cassette and chainrings.",
            "Tire pressure should be set by rider weight and tire width, not the maximum on the sidewall.",
            "New disc brake pads need bedding in before they reach full power.",
            "A dirty chain wears the drivetrain faster than a dry one.",
        ],
    },
    Topic {
        tag: "photography",
        name: "product photography",
        area: "workplace",
        entities: &[
            ("light tent", "equipment"),
            ("Adobe Lightroom", "software"),
            ("tripod", "equipment"),
            ("softbox", "equipment"),
        ],
        terms: &[
            "white balance",
            "diffused light",
            "background",
            "aperture",
            "color profile",
            "batch editing",
        ],
        tasks: &[
            "shoot products on a white background",
            "set white balance",
            "light reflective products",
            "batch edit product photos",
            "photograph products with a phone",
        ],
        claims: &[
            "Diffused light from large sources hides most reflections on products.",
            "A gray card sets white balance more accurately than automatic modes.",
            "A tripod and timer remove most blur in product photos.",
            "Consistent angles and backgrounds make a catalog look professional.",
        ],
    },
    Topic {
        tag: "events",
        name: "event planning",
        area: "workplace",
        entities: &[
            ("Eventbrite", "service"),
            ("venue contract", "document"),
            ("run sheet", "document"),
            ("catering order", "document"),
        ],
        terms: &[
            "guest list",
            "venue booking",
            "dietary requirements",
            "run of show",
            "budget buffer",
            "registration",
        ],
        tasks: &[
            "plan a company offsite",
            "book a venue",
            "collect dietary requirements",
            "write a run of show",
            "run event registration",
        ],
        claims: &[
            "Venues for more than fifty people should be booked at least three months ahead.",
            "A budget buffer of ten to fifteen percent absorbs most surprise costs.",
            "Collecting dietary requirements at registration prevents catering problems.",
            "A minute-by-minute run of show keeps an event on schedule.",
        ],
    },
    Topic {
        tag: "small-business-tax",
        name: "small business taxes",
        area: "finance",
        entities: &[
            ("VAT return", "document"),
            ("tax advisor", "role"),
            ("bookkeeping software", "software"),
            ("estimated tax payment", "policy"),
        ],
        terms: &[
            "deductible expense",
            "tax deadline",
            "receipt archive",
            "quarterly payment",
            "depreciation",
            "mileage log",
        ],
        tasks: &[
            "prepare a VAT return",
            "track deductible expenses",
            "set aside money for taxes",
            "keep records for an audit",
            "file quarterly estimates",
        ],
        claims: &[
            "Setting aside a fixed share of every payment prevents tax surprises.",
            "Records supporting a tax return must be kept for several years.",
            "A mileage log written at the time is accepted where estimates are not.",
            "Missing a VAT deadline usually costs a penalty even when nothing is owed.",
        ],
    },
    Topic {
        tag: "inventory",
        name: "warehouse inventory",
        area: "operations",
        entities: &[
            ("barcode scanner", "equipment"),
            ("warehouse management system", "software"),
            ("cycle count", "method"),
            ("safety stock", "policy"),
        ],
        terms: &[
            "stock level",
            "reorder point",
            "bin location",
            "picking error",
            "shrinkage",
            "stock take",
        ],
        tasks: &[
            "run cycle counts",
            "set reorder points",
            "reduce picking errors",
            "organize bin locations",
            "investigate stock shrinkage",
        ],
        claims: &[
            "Cycle counting a few bins each day replaces most annual stock takes.",
            "Reorder points should include safety stock for supplier delays.",
            "Scanning every pick nearly eliminates wrong-item shipments.",
            "Placing fast-moving items near packing stations shortens pick routes.",
        ],
    },
    Topic {
        tag: "redis-operations",
        name: "Redis operations",
        area: "data",
        entities: &[
            ("Redis", "database"),
            ("Redis Sentinel", "software"),
            ("Valkey", "database"),
            ("redis-cli", "tool"),
        ],
        terms: &[
            "maxmemory policy",
            "persistence mode",
            "key expiry",
            "big key",
            "replica",
            "slow log",
        ],
        tasks: &[
            "choose a maxmemory policy",
            "find big keys",
            "set up Redis failover",
            "persist Redis data safely",
            "read the Redis slow log",
        ],
        claims: &[
            "Without a maxmemory setting Redis can grow until the kernel kills it.",
            "Big keys block Redis while they are deleted unless UNLINK is used.",
            "The KEYS command blocks the server and should be replaced by SCAN.",
            "AOF persistence with fsync every second loses at most about one second of writes.",
        ],
    },
    Topic {
        tag: "elasticsearch",
        name: "Elasticsearch clusters",
        area: "data",
        entities: &[
            ("Elasticsearch", "software"),
            ("Kibana", "software"),
            ("index lifecycle management", "software"),
            ("Logstash", "tool"),
        ],
        terms: &[
            "shard size",
            "mapping explosion",
            "heap pressure",
            "index template",
            "cluster health",
            "snapshot repository",
        ],
        tasks: &[
            "size shards correctly",
            "recover a red cluster",
            "prevent mapping explosions",
            "roll over time-based indices",
            "snapshot indices to object storage",
        ],
        claims: &[
            "Shards between ten and fifty gigabytes balance recovery time and overhead.",
            "Dynamic mappings on arbitrary keys lead to mapping explosions.",
            "Heap usage above seventy-five percent for long periods precedes node failures.",
            "Index lifecycle rollover keeps time-based indices at a steady size.",
        ],
    },
    Topic {
        tag: "saml",
        name: "SAML single sign-on",
        area: "security",
        entities: &[
            ("SAML 2.0", "standard"),
            ("Azure AD", "service"),
            ("Shibboleth", "software"),
            ("SCIM", "standard"),
        ],
        terms: &[
            "assertion",
            "identity provider",
            "service provider metadata",
            "clock skew",
            "attribute mapping",
            "signing certificate",
        ],
        tasks: &[
            "set up SAML login for a customer",
            "debug failed SAML assertions",
            "rotate SAML signing certificates",
            "provision users with SCIM",
            "map group attributes to roles",
        ],
        claims: &[
            "Clock skew between the identity provider and the application is a common cause of rejected assertions.",
            "SCIM provisioning removes access promptly when people leave.",
            "Signing certificates must be rotated with an overlap where both are trusted.",
            "Assertions must be checked for audience and recipient, not only the signature.",
        ],
    },
];

// ---------------------------------------------------------------- text

/// What one item is about: the slots its templates are filled from.
struct Focus {
    topic: &'static Topic,
    task: &'static str,
    term: &'static str,
    term2: &'static str,
    entity: (&'static str, &'static str),
    entity2: (&'static str, &'static str),
}

impl Focus {
    fn choose(topic: &'static Topic, random: &mut SplitMix64) -> Focus {
        let term = random.text(topic.terms);
        let mut term2 = random.text(topic.terms);
        if term2 == term {
            term2 = topic.terms
                [(topic.terms.iter().position(|candidate| *candidate == term).unwrap_or(0) + 1) % topic.terms.len()];
        }
        let entity_index = random.index(topic.entities.len());
        let entity2_index =
            (entity_index + 1 + random.index(topic.entities.len().saturating_sub(1).max(1))) % topic.entities.len();
        Focus {
            topic,
            task: random.text(topic.tasks),
            term,
            term2,
            entity: topic.entities[entity_index],
            entity2: topic.entities[entity2_index],
        }
    }
}

/// Fills `{slot}` placeholders: `task`, `term`, `term2`, `entity`, `entity2`, `name` (this item's focus; a
/// capitalized slot name capitalizes the value), `any_term` and `any_task` (a fresh pick each time), `n`, `n2`
/// (small numbers) and `pct` (a percentage).
fn fill(template: &str, focus: &Focus, random: &mut SplitMix64) -> String {
    let mut output = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        output.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else {
            output.push_str(&rest[start..]);
            return output;
        };
        let slot = &after[..end];
        let lower = slot.to_ascii_lowercase();
        let value: String = match lower.as_str() {
            "task" => focus.task.to_owned(),
            "term" => focus.term.to_owned(),
            "term2" => focus.term2.to_owned(),
            "entity" => focus.entity.0.to_owned(),
            "entity2" => focus.entity2.0.to_owned(),
            "name" => focus.topic.name.to_owned(),
            "any_term" => (random.text(focus.topic.terms)).to_owned(),
            "any_task" => (random.text(focus.topic.tasks)).to_owned(),
            "n" => random.between(2, 30).to_string(),
            "n2" => random.between(31, 60).to_string(),
            "pct" => (5 * random.between(2, 18)).to_string(),
            _ => slot.to_owned(),
        };
        if slot.starts_with(|character: char| character.is_ascii_uppercase()) {
            output.push_str(&capitalize(&value));
        } else {
            output.push_str(&value);
        }
        rest = &after[end + 1..];
    }
    output.push_str(rest);
    output
}

fn capitalize(text: &str) -> String {
    let mut characters = text.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => String::new(),
    }
}

/// A tag or URL segment: lowercase letters and digits joined by dashes.
fn slug(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for character in text.to_lowercase().chars() {
        if character.is_ascii_alphanumeric() {
            slug.push(character);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

const SENTENCES: &[&str] = &[
    "Start by checking the {term} before you {task}.",
    "In our experience with {entity}, the {any_term} is where most problems begin.",
    "Teams that {any_task} regularly report fewer surprises with the {term}.",
    "Keep a written record of the {any_term}, so that the next person can {task} without guessing.",
    "If the {any_term} looks wrong, stop and compare it with the last known good state.",
    "{Entity} handles the {any_term} well, but its defaults are not always right for {name}.",
    "Allow about {n} minutes for this step the first time; it gets faster with practice.",
    "A common mistake is to {any_task} before the {term} is ready.",
    "Measure the {any_term} before and after the change and write both numbers down.",
    "We tried the same with {entity2}; the steps are the same, only the names differ.",
    "The {term} and the {term2} interact, so changing one usually means checking the other.",
    "Most of the time here goes into understanding the {any_term}, not into the change itself.",
    "When in doubt, {any_task} first and come back to this step afterwards.",
    "This worked in {n} of our last {n2} attempts once we paid attention to the {any_term}.",
    "Write down who owns the {term}, because questions about it come up again and again.",
    "Do not skip the check of the {any_term}; it is cheap and catches most mistakes.",
    "The documentation of {entity} covers the {term} only briefly, so the details below come from practice.",
    "If you only have a few minutes, focus on the {term}; everything else can wait.",
    "Roughly {pct} percent of the problems we saw came from the {any_term}.",
    "Ask a colleague to look at the {term} before you continue; a second pair of eyes helps.",
    "After the change, watch the {any_term} for a day before you call it done.",
    "Small, reversible steps make it easy to {task} again if something goes wrong.",
    "Put the {term} in the team's runbook so that it does not live only in one person's head.",
    "{Entity} and {entity2} both work for {name}; we chose {entity} because the team already knew it.",
    "The first time we tried to {task}, we underestimated the {any_term}.",
    "Plan the work for a quiet moment, not right before a deadline.",
    "Keep the old setup around until the new {term} has proven itself.",
    "Automate the check of the {term} once you have done it by hand a few times.",
    "People new to {name} often confuse the {term} with the {term2}.",
    "Expect the {any_term} to behave differently under load than in a quick test.",
    "A checklist for the {term} saved us more time than any tool did.",
    "Compare the result with what {entity} reports; the two should agree.",
];

const STEPS: &[&str] = &[
    "{Any_task}: check the {any_term} and confirm it matches what {entity} expects.",
    "Note the current state of the {any_term} so you can compare later.",
    "Change the {term} in one small step and nothing else at the same time.",
    "Confirm that the {any_term} looks as expected.",
    "Tell the people affected that you are about to {task}.",
    "Wait {n} minutes and check the {any_term} again.",
    "Record what you changed and why in the team notes.",
    "Repeat for the {term2} if the first change worked.",
    "Ask someone else to {any_task} using only your notes.",
    "Remove the temporary workaround once the {term} is stable.",
];

const PITFALLS: &[&str] = &[
    "Forgetting the {any_term} when you {any_task}.",
    "Changing the {term} and the {term2} at the same time.",
    "Trusting the defaults of {entity} for the {any_term}.",
    "Skipping the final check of the {any_term}.",
    "Doing this for the first time under time pressure.",
    "Assuming {entity2} behaves exactly like {entity}.",
];

const SUMMARIES: &[&str] = &[
    "{Task} with {entity}, including the checks that catch problems with the {term} early.",
    "What we learned when we had to {task}: the {term} matters more than the tooling.",
    "A short, tested procedure to {task} for {name}.",
    "How the {term} and the {term2} affect {name}, with examples from {entity}.",
    "Practical notes on the {term} for teams that {task}.",
    "The steps we follow to {task}, and the mistakes we made with the {term} along the way.",
];

/// Content types by weight, for technical and for other topics.
const TECHNICAL_TYPES: &[(&str, u32)] = &[
    ("procedure", 26),
    ("guide", 16),
    ("troubleshooting", 14),
    ("runbook", 10),
    ("note", 12),
    ("code", 10),
    ("decision", 6),
    ("checklist", 6),
];
const GENERAL_TYPES: &[(&str, u32)] = &[
    ("procedure", 30),
    ("guide", 20),
    ("checklist", 18),
    ("note", 16),
    ("template", 8),
    ("decision", 8),
];

fn title_templates(content_type: &str) -> &'static [&'static str] {
    match content_type {
        "procedure" => &[
            "How to {task}",
            "{Task} step by step",
            "{Task} with {entity}",
            "{Task} without surprises",
            "{Task}: the short version",
        ],
        "guide" => &[
            "A practical guide to {name}",
            "{Entity} for {name}: what we learned",
            "Getting the {term} right with {entity}",
            "Understanding the {term} in {name}",
        ],
        "troubleshooting" => &[
            "Troubleshooting {term} problems in {entity}",
            "Why the {term} breaks and how to fix it",
            "{Entity}: {term} errors explained",
        ],
        "runbook" => &[
            "Runbook: {task}",
            "On-call runbook for {term} incidents",
            "Runbook: when the {term} fails",
        ],
        "note" => &[
            "Notes on the {term} and the {term2}",
            "What {entity} does with the {term}",
            "A note on {name}",
        ],
        "code" => &["{Task}: an example", "Script to {task}", "Code to check the {term}"],
        "decision" => &[
            "Choosing between {entity} and {entity2} for {name}",
            "Why we moved from {entity2} to {entity}",
            "Decision: how we {task}",
        ],
        "checklist" => &[
            "Checklist: {task}",
            "{Name} checklist for {entity}",
            "Before you {task}: a checklist",
        ],
        "template" => &["Template: {task}", "A reusable template for the {term}"],
        _ => &["{Task}"],
    }
}

/// Unique-ish claims, parameterized so that some repeat across items and some do not.
const CLAIM_TEMPLATES: &[&str] = &[
    "{Entity} needs the {term} set explicitly before you {task}.",
    "Checking the {term} takes about {n} minutes with {entity}.",
    "The default {term} of {entity} is a poor fit for {name}.",
    "Changing the {term} without checking the {term2} caused {n} of our incidents.",
    "Teams that {task} weekly see fewer problems with the {term}.",
];

const LANGUAGES: &[&str] = &["python", "rust", "typescript", "go", "sql", "bash"];

/// A code sample in `language` for the focus.
fn code_sample(language: &str, focus: &Focus, random: &mut SplitMix64) -> String {
    let function = slug(focus.task).replace('-', "_");
    let field = slug(focus.term).replace('-', "_");
    let limit = random.between(10, 500);
    match language {
        "python" => format!(
            "```python\ndef {function}(records, limit={limit}):\n    \"\"\"{}.\"\"\"\n    done = []\n    for record in records[:limit]:\n        if record.get(\"{field}\") is None:\n            continue\n        done.append(record)\n    return done\n```\n",
            capitalize(focus.task)
        ),
        "rust" => format!(
            "```rust\n/// {}.\nfn {function}(records: &[Record]) -> Vec<&Record> {{\n    records.iter().filter(|record| record.{field}.is_some()).take({limit}).collect()\n}}\n```\n",
            capitalize(focus.task)
        ),
        "typescript" => format!(
            "```typescript\n// {}.\nexport function {function}(records: Item[]): Item[] {{\n  return records.filter((record) => record.{field} !== undefined).slice(0, {limit});\n}}\n```\n",
            capitalize(focus.task)
        ),
        "go" => format!(
            "```go\n// {function} keeps records that have a {}.\nfunc {function}(records []Record) []Record {{\n\tkept := make([]Record, 0, {limit})\n\tfor _, record := range records {{\n\t\tif record.{field} != \"\" {{\n\t\t\tkept = append(kept, record)\n\t\t}}\n\t}}\n\treturn kept\n}}\n```\n",
            focus.term
        ),
        "sql" => format!(
            "```sql\n-- {}.\nSELECT id, {field}, updated_at\nFROM records\nWHERE {field} IS NOT NULL\nORDER BY updated_at DESC\nLIMIT {limit};\n```\n",
            capitalize(focus.task)
        ),
        _ => format!(
            "```bash\n# {}.\nset -euo pipefail\n{} check --{} --limit {limit}\n```\n",
            capitalize(focus.task),
            slug(focus.entity.0),
            slug(focus.term)
        ),
    }
}

/// `count` different templates of `templates` (fewer when there are not that many), in random order.
fn distinct(templates: &[&'static str], random: &mut SplitMix64, count: u64) -> Vec<&'static str> {
    let count = usize::try_from(count).unwrap_or(0).min(templates.len());
    let mut chosen: Vec<&'static str> = Vec::with_capacity(count);
    while chosen.len() < count {
        let candidate = random.text(templates);
        if !chosen.contains(&candidate) {
            chosen.push(candidate);
        }
    }
    chosen
}

/// A paragraph of `low` to `high` different sentences.
fn paragraph(focus: &Focus, random: &mut SplitMix64, low: u64, high: u64) -> String {
    let count = random.between(low, high);
    let sentences: Vec<String> = distinct(SENTENCES, random, count)
        .into_iter()
        .map(|template| fill(template, focus, random))
        .collect();
    sentences.join(" ")
}

/// A Markdown list of `low` to `high` different items.
fn list(
    templates: &[&'static str],
    focus: &Focus,
    random: &mut SplitMix64,
    low: u64,
    high: u64,
    numbered: bool,
) -> String {
    let count = random.between(low, high);
    let mut text = String::new();
    for (position, template) in distinct(templates, random, count).into_iter().enumerate() {
        let line = fill(template, focus, random);
        if numbered {
            text.push_str(&format!("{}. {line}\n", position + 1));
        } else {
            text.push_str(&format!("- {line}\n"));
        }
    }
    text
}

/// A Markdown body of roughly `target` bytes (at least one section, then whole sections until it is reached).
fn body(
    focus: &Focus,
    summary: &str,
    content_type: &str,
    language: Option<&str>,
    target: usize,
    random: &mut SplitMix64,
) -> String {
    let mut body = format!("{summary}\n\n## Context\n\n{}\n", paragraph(focus, random, 2, 4));
    if let Some(language) = language {
        body.push_str(&format!("\n## Code\n\n{}", code_sample(language, focus, random)));
    }
    let mut section = 0_u32;
    while body.len() < target && section < 12 {
        section += 1;
        match (section, content_type) {
            (1, "checklist" | "template") => {
                body.push_str(&format!(
                    "\n## Checklist\n\n{}",
                    list(STEPS, focus, random, 4, 8, false)
                ));
            }
            (1, _) => {
                body.push_str(&format!("\n## Steps\n\n{}", list(STEPS, focus, random, 3, 7, true)));
            }
            (2, _) => {
                body.push_str(&format!(
                    "\n## Pitfalls\n\n{}",
                    list(PITFALLS, focus, random, 2, 4, false)
                ));
            }
            (3, _) if focus.topic.is_technical() && language.is_none() && random.chance(0.5) => {
                body.push_str(&format!(
                    "\n## Verification\n\n```sh\n{} status --{}\n```\n\n{}\n",
                    slug(focus.entity.0),
                    slug(focus.term),
                    paragraph(focus, random, 2, 2)
                ));
            }
            (_, _) => {
                let heading = random.text(&["Notes", "What we learned", "Background", "Results", "Details"]);
                body.push_str(&format!("\n## {heading}\n\n{}\n", paragraph(focus, random, 3, 6)));
            }
        }
    }
    body
}

/// A body length in bytes between 0.5 and 5 KB, most between 1 and 2.5 KB.
fn body_target(random: &mut SplitMix64) -> usize {
    let bytes = match random.weighted(&[15, 45, 28, 12]) {
        0 => random.between(500, 1000),
        1 => random.between(1000, 2000),
        2 => random.between(2000, 3500),
        _ => random.between(3500, 4800),
    };
    usize::try_from(bytes).unwrap_or(1000)
}

// ---------------------------------------------------------------- execution

/// How often a write is tried when it fails in a way a new attempt can fix.
const ATTEMPTS: u32 = 4;

/// Whether a failed write may succeed when tried again: a database conflict, or (on PostgreSQL) a concurrent
/// publish that created the same shared claim or entity first.
fn is_transient(error: &ServiceError) -> bool {
    error.retryable || error.code == ErrorCode::InternalError
}

/// Awaits a service call, calling it again (with a short pause) while it fails transiently.
macro_rules! retrying {
    ($call:expr) => {{
        let mut attempt = 1_u32;
        loop {
            match $call.await {
                Err(error) if attempt < ATTEMPTS && is_transient(&error) => {
                    tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt))).await;
                    attempt += 1;
                }
                result => break result,
            }
        }
    }};
}

fn metadata(operation: WriteOperation) -> CallMetadata {
    CallMetadata::internal(operation, json!({ "seeded": true }))
}

/// The IDs evidence of one item points at.
struct Targets {
    content_id: String,
    claims: Vec<String>,
    subjects: Vec<(String, String)>,
    entities: Vec<Option<String>>,
}

impl Targets {
    async fn resolve(&mut self, service: &Service, on: On) -> Result<Option<String>, ServiceError> {
        Ok(match on {
            On::Content => Some(self.content_id.clone()),
            On::Claim(position) => self.claims.get(position).cloned(),
            On::Entity(position) => {
                if let Some(Some(id)) = self.entities.get(position) {
                    return Ok(Some(id.clone()));
                }
                let Some((entity_type, name)) = self.subjects.get(position) else {
                    return Ok(None);
                };
                let id = service.find_entity_by_name(entity_type, name).await?.id.into_string();
                if let Some(slot) = self.entities.get_mut(position) {
                    *slot = Some(id.clone());
                }
                Some(id)
            }
        })
    }
}

async fn run_action(
    service: &Service,
    targets: &mut Targets,
    action: Action,
    outcome: &mut ItemOutcome,
) -> Result<(), ServiceError> {
    match action {
        Action::Usage {
            caller,
            on,
            mut request,
            then_review,
        } => {
            let Some(target) = targets.resolve(service, on).await? else {
                return Ok(());
            };
            request.target = target;
            let usage =
                retrying!(service.report_usage(&caller, &metadata(WriteOperation::ReportUsage), request.clone()))?;
            outcome.usage_events += 1;
            if let Some(mut review) = then_review {
                review.target = targets.content_id.clone();
                review.based_on_usage = Some(usage.id);
                retrying!(service.review(&caller, &metadata(WriteOperation::Review), review.clone()))?;
                outcome.reviews += 1;
            }
        }
        Action::Review { caller, mut request } => {
            request.target = targets.content_id.clone();
            retrying!(service.review(&caller, &metadata(WriteOperation::Review), request.clone()))?;
            outcome.reviews += 1;
        }
        Action::Rate {
            caller,
            on,
            mut request,
        } => {
            let Some(target) = targets.resolve(service, on).await? else {
                return Ok(());
            };
            request.target = target;
            retrying!(service.rate(&caller, &metadata(WriteOperation::Rate), request.clone()))?;
            outcome.ratings += 1;
        }
    }
    Ok(())
}

/// Writes one item and its evidence, in order.
async fn run_item(service: Service, plan: ItemPlan) -> Result<ItemOutcome, ServiceError> {
    let mut outcome = ItemOutcome {
        index: plan.index,
        topic: plan.topic,
        relations: plan.relations,
        proven: plan.proven,
        disputed: plan.disputed,
        ..ItemOutcome::default()
    };
    let author = &plan.author;
    let mut targets = match &plan.publication {
        Publication::Content(request) => {
            let published =
                retrying!(service.publish(author, &metadata(WriteOperation::Publish), request.as_ref().clone()))?;
            outcome.claim_links = published.claims.len() as u64;
            outcome.claims = published.claims.iter().filter(|claim| !claim.matched_existing).count() as u64;
            outcome.revision_id = published.revision_id;
            Targets {
                content_id: published.id,
                claims: published.claims.into_iter().map(|claim| claim.id).collect(),
                subjects: plan.subjects.clone(),
                entities: vec![None; plan.subjects.len()],
            }
        }
        Publication::Experience(request) => {
            let recorded = retrying!(service.submit_experience(
                author,
                &metadata(WriteOperation::SubmitExperience),
                request.as_ref().clone()
            ))?;
            outcome.experience = true;
            outcome.usage_events = recorded.usage_ids.len() as u64;
            outcome.revision_id = recorded.revision_id;
            Targets {
                content_id: recorded.id,
                claims: Vec::new(),
                subjects: plan.subjects.clone(),
                entities: vec![None; plan.subjects.len()],
            }
        }
    };
    outcome.content_id = targets.content_id.clone();
    for action in plan.before_revision {
        run_action(&service, &mut targets, action, &mut outcome).await?;
    }
    if let Some(mut revision) = plan.revision {
        revision.revision_of = Some(targets.content_id.clone());
        let published =
            retrying!(service.publish(author, &metadata(WriteOperation::Publish), revision.as_ref().clone()))?;
        outcome.revisions += 1;
        outcome.claim_links += published.claims.len() as u64;
        outcome.claims += published.claims.iter().filter(|claim| !claim.matched_existing).count() as u64;
        outcome.revision_id = published.revision_id;
        targets.claims = published.claims.into_iter().map(|claim| claim.id).collect();
    }
    for action in plan.after_revision {
        run_action(&service, &mut targets, action, &mut outcome).await?;
    }
    Ok(outcome)
}

/// Items planned and written between two points where earlier items become referable: a twentieth of the run, at
/// least 16 and at most 256, so that small runs have relations and experiences too.
fn batch_size(items: u64) -> u64 {
    (items / 20).clamp(16, 256)
}

/// Seeds `service` with `options.items` items of realistic synthetic knowledge and evidence, calling
/// `progress(done, total)` as items complete. Writes go only through the service's public use cases.
pub async fn seed(
    service: &Service,
    options: SeedOptions,
    progress: impl Fn(u64, u64),
) -> Result<SeedReport, ServiceError> {
    let started = Instant::now();
    let concurrency = options.concurrency.max(1);
    let total = options.items;
    progress(0, total);
    let population = create_population(service, options.seed, options.controller_count(), concurrency).await?;
    let weights = topic_weights(options.seed);
    let proven = ProvenSchedule::new(total);
    let mut report = SeedReport {
        controllers: population.len() as u64,
        agents: population.iter().map(|controller| controller.agents.len() as u64).sum(),
        ..SeedReport::default()
    };
    let mut by_topic: Vec<Vec<String>> = vec![Vec::new(); TOPICS.len()];
    let mut entities: BTreeSet<(String, String)> = BTreeSet::new();
    let mut proven_revisions: Vec<String> = Vec::new();
    let mut done = 0_u64;
    let mut next = 0_u64;
    while next < total {
        let end = (next + batch_size(total)).min(total);
        let mut running = JoinSet::new();
        let mut finished: Vec<ItemOutcome> = Vec::with_capacity(usize::try_from(end - next).unwrap_or(0));
        for index in next..end {
            let plan = plan_item(
                options.seed,
                index,
                &population,
                &weights,
                &by_topic,
                proven.includes(index),
            );
            entities.extend(plan.subjects.iter().cloned());
            while running.len() >= concurrency {
                finished.push(joined(running.join_next().await)?);
                done += 1;
                progress(done, total);
            }
            running.spawn(run_item(service.clone(), plan));
        }
        while !running.is_empty() {
            finished.push(joined(running.join_next().await)?);
            done += 1;
            progress(done, total);
        }
        // Later items may refer to these, in index order so that the references do not depend on timing.
        finished.sort_by_key(|outcome| outcome.index);
        for outcome in finished {
            by_topic[outcome.topic].push(outcome.content_id.clone());
            report.items += 1;
            report.experiences += u64::from(outcome.experience);
            report.revisions += outcome.revisions;
            report.claims += outcome.claims;
            report.claim_links += outcome.claim_links;
            report.relations += outcome.relations;
            report.usage_events += outcome.usage_events;
            report.reviews += outcome.reviews;
            report.ratings += outcome.ratings;
            report.planned_disputed += u64::from(outcome.disputed);
            if outcome.proven {
                report.planned_high_confidence += 1;
                proven_revisions.push(outcome.revision_id);
            }
        }
        next = end;
    }
    for revision in proven_revisions {
        let revision = PublicId::parse(&revision)
            .map_err(|error| ServiceError::internal(format!("a published revision ID is malformed: {error}")))?;
        if service.trust_summary(&revision).await?.status == crate::domain::TrustStatus::HighConfidence {
            report.high_confidence += 1;
        }
    }
    report.entities = entities.len() as u64;
    report.elapsed = started.elapsed();
    Ok(report)
}

// ---------------------------------------------------------------- population

const ORGANIZATION_PREFIXES: &[&str] = &[
    "Northwind",
    "Bluebird",
    "Granite",
    "Harbor",
    "Juniper",
    "Lumen",
    "Maple",
    "Orbit",
    "Pioneer",
    "Quartz",
    "Redwood",
    "Summit",
    "Tidal",
    "Vertex",
    "Willow",
    "Aurora",
    "Cedar",
    "Delta",
    "Ember",
    "Falcon",
    "Beacon",
    "Copper",
    "Meridian",
    "Saffron",
];
const ORGANIZATION_SUFFIXES: &[&str] = &[
    "Logistics",
    "Health",
    "Labs",
    "Foods",
    "Bank",
    "Studios",
    "Analytics",
    "Retail",
    "Energy",
    "Travel",
    "Robotics",
    "Insurance",
    "Media",
    "Bakery",
    "Consulting",
    "Software",
    "Clinics",
    "Freight",
];
const FIRST_NAMES: &[&str] = &[
    "Ada", "Bruno", "Chen", "Dara", "Elif", "Femi", "Greta", "Hiro", "Ines", "Jonas", "Kavya", "Luis", "Maya", "Nils",
    "Olu", "Priya", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Viktor", "Wen", "Yara", "Zoe",
];
const LAST_NAMES: &[&str] = &[
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Novak",
    "Haddad",
    "Kowalski",
    "Fernandes",
    "Mensah",
    "Schmidt",
    "Rossi",
    "Nakamura",
    "Olsen",
    "Petrov",
    "Quispe",
    "Reyes",
    "Singh",
    "Takahashi",
    "Varga",
    "Weber",
];
const AGENT_ROLES: &[&str] = &[
    "research",
    "support",
    "coding",
    "operations",
    "finance",
    "kitchen",
    "review",
    "data",
    "planning",
    "writing",
];

/// A root controller's agents, authenticated as the MCP layer would hand them to the service.
#[derive(Debug, Clone)]
struct Controller {
    agents: Vec<AuthenticatedActor>,
}

async fn create_controller(service: Service, seed: u64, index: u64) -> Result<Controller, ServiceError> {
    let mut random = SplitMix64::derived(seed, 1, index);
    let (actor_type, name) = if random.chance(0.6) {
        (
            ActorType::Organization,
            format!(
                "{} {} (team {index})",
                random.pick(ORGANIZATION_PREFIXES),
                random.pick(ORGANIZATION_SUFFIXES)
            ),
        )
    } else {
        (
            ActorType::User,
            format!("{} {}", random.pick(FIRST_NAMES), random.pick(LAST_NAMES)),
        )
    };
    let controller = retrying!(service.create_actor(NewActor {
        actor_type,
        display_name: name.clone(),
        controller: None,
    }))?;
    let agent_count = 1 + random.weighted(&[35, 30, 18, 10, 7]);
    let mut agents = Vec::with_capacity(agent_count);
    for number in 1..=agent_count {
        let agent = retrying!(service.create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: format!("{name} {} agent {number}", random.pick(AGENT_ROLES)),
            controller: Some(controller.id.clone()),
        }))?;
        let scopes = ScopeSet::parse_list("read,publish,usage,review,rate")
            .map_err(|unknown| ServiceError::internal(format!("unknown scope {unknown}")))?;
        let issued = retrying!(service.create_api_key(NewApiKey {
            actor_id: agent.id.clone(),
            scopes: scopes.clone(),
            expires_at: None,
            label: Some("seeded".to_owned()),
        }))?;
        agents.push(service.authenticate(&issued.secret).await?);
    }
    Ok(Controller { agents })
}

async fn create_population(
    service: &Service,
    seed: u64,
    count: u64,
    concurrency: usize,
) -> Result<Vec<Controller>, ServiceError> {
    let mut created: Vec<(u64, Controller)> = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut running = JoinSet::new();
    for index in 0..count {
        while running.len() >= concurrency {
            created.push(joined(running.join_next().await)?);
        }
        let service = service.clone();
        running.spawn(async move {
            create_controller(service, seed, index)
                .await
                .map(|controller| (index, controller))
        });
    }
    while !running.is_empty() {
        created.push(joined(running.join_next().await)?);
    }
    created.sort_by_key(|(index, _)| *index);
    Ok(created.into_iter().map(|(_, controller)| controller).collect())
}

/// The result of a finished task, with a panic or cancellation turned into an internal error.
fn joined<T>(result: Option<Result<Result<T, ServiceError>, tokio::task::JoinError>>) -> Result<T, ServiceError> {
    match result {
        Some(Ok(outcome)) => outcome,
        Some(Err(error)) => Err(ServiceError::internal(format!("a seeding task failed: {error}"))),
        None => Err(ServiceError::internal("no seeding task was running")),
    }
}

// ---------------------------------------------------------------- plans

/// What an evidence record is about: the item, one of its claims, or one of its subjects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    Content,
    Claim(usize),
    Entity(usize),
}

/// One evidence write; the target is filled in when the item's IDs are known.
#[derive(Debug, Clone)]
enum Action {
    Usage {
        caller: AuthenticatedActor,
        on: On,
        request: UsageRequest,
        /// A review by the same agent, grounded in this usage.
        then_review: Option<ReviewRequest>,
    },
    Review {
        caller: AuthenticatedActor,
        request: ReviewRequest,
    },
    Rate {
        caller: AuthenticatedActor,
        on: On,
        request: RateRequest,
    },
}

#[derive(Debug, Clone)]
enum Publication {
    Content(Box<PublishRequest>),
    Experience(Box<ExperienceRequest>),
}

/// Everything one item's task writes, in order.
#[derive(Debug, Clone)]
struct ItemPlan {
    index: u64,
    topic: usize,
    author: AuthenticatedActor,
    publication: Publication,
    /// Subjects as (entity type, name), for evidence on entities.
    subjects: Vec<(String, String)>,
    /// A second revision by the author (its `revision_of` is filled in once the item exists).
    revision: Option<Box<PublishRequest>>,
    before_revision: Vec<Action>,
    after_revision: Vec<Action>,
    proven: bool,
    disputed: bool,
    relations: u64,
}

/// What one item's task wrote.
#[derive(Debug, Clone, Default)]
struct ItemOutcome {
    index: u64,
    topic: usize,
    content_id: String,
    revision_id: String,
    experience: bool,
    revisions: u64,
    claims: u64,
    claim_links: u64,
    relations: u64,
    usage_events: u64,
    reviews: u64,
    ratings: u64,
    proven: bool,
    disputed: bool,
}

/// Which items get enough independent real-world successes to reach `high_confidence`: a handful, evenly spread.
#[derive(Debug, Clone, Copy)]
struct ProvenSchedule {
    stride: u64,
    count: u64,
}

impl ProvenSchedule {
    fn new(items: u64) -> ProvenSchedule {
        let count = (items / 2000).clamp(5, 50).min(items);
        ProvenSchedule {
            stride: (items / count.max(1)).max(1),
            count,
        }
    }

    fn includes(&self, index: u64) -> bool {
        index % self.stride == self.stride / 2 && index / self.stride < self.count
    }
}

/// Per-topic popularity weights (1–4), fixed by the seed, so that some topics are much more common than others.
fn topic_weights(seed: u64) -> Vec<u32> {
    (0..TOPICS.len() as u64)
        .map(|index| 1 + u32::try_from(SplitMix64::derived(seed, 2, index).below(4)).unwrap_or(0))
        .collect()
}

/// `count` distinct controller indices other than `except`, uniformly chosen.
fn other_controllers(random: &mut SplitMix64, total: usize, except: usize, count: usize) -> Vec<usize> {
    let count = count.min(total.saturating_sub(1));
    let mut chosen: Vec<usize> = Vec::with_capacity(count);
    while chosen.len() < count {
        let candidate = random.index(total);
        if candidate != except && !chosen.contains(&candidate) {
            chosen.push(candidate);
        }
    }
    chosen
}

fn agent_of(population: &[Controller], controller: usize, random: &mut SplitMix64) -> AuthenticatedActor {
    let agents = &population[controller].agents;
    agents[random.index(agents.len())].clone()
}

/// A usage context: where the knowledge was used.
fn context_for(topic: &Topic, random: &mut SplitMix64) -> Value {
    if topic.is_technical() {
        json!({
            "environment": random.pick(&["production", "staging", "development", "ci"]),
            "scale": random.pick(&["small", "medium", "large"]),
        })
    } else {
        json!({
            "setting": random.pick(&["office", "home", "remote", "on_site"]),
            "team_size": random.pick(&["solo", "small", "large"]),
        })
    }
}

fn usage_note(result: &str, focus: &Focus, random: &mut SplitMix64) -> String {
    let template = match result {
        "success" => random.text(&[
            "Worked as described; the check of the {term} caught one problem early.",
            "Followed the steps to {task}; no surprises.",
            "Worked with {entity} on the first try.",
        ]),
        "partial" => random.text(&[
            "Worked after adjusting the {term}.",
            "Most steps worked; the part about the {term2} did not apply to our setup.",
        ]),
        "failure" => random.text(&[
            "Did not work for us: the {term} behaved differently with {entity2}.",
            "Failed at the step about the {term}; we had to roll back.",
        ]),
        _ => "Applied it; too early to tell whether the {term} is fixed.",
    };
    fill(template, focus, random)
}

fn usage_result(random: &mut SplitMix64) -> &'static str {
    ["success", "partial", "failure", "unknown"][random.weighted(&[66, 12, 12, 10])]
}

fn usage_request(result: &str, real_world: bool, focus: &Focus, random: &mut SplitMix64) -> UsageRequest {
    let usage_type = if real_world {
        random.text(&["implementation", "execution", "configuration", "operation"])
    } else {
        "test"
    };
    UsageRequest {
        target: String::new(),
        usage_type: usage_type.to_owned(),
        result: result.to_owned(),
        real_world_use: real_world,
        context: Some(context_for(focus.topic, random)),
        metrics: random
            .chance(0.4)
            .then(|| json!({ "duration_minutes": random.between(1, 240) })),
        note: random.chance(0.35).then(|| usage_note(result, focus, random)),
        idempotency_key: None,
    }
}

fn review_request(verdict: &str, focus: &Focus, random: &mut SplitMix64) -> ReviewRequest {
    let rationale = match verdict {
        "confirmed" | "mostly_correct" => "Matches what we see with {entity}; the part about the {term} is accurate.",
        "outdated" => "This was right for older versions of {entity}; the {term} works differently now.",
        "cannot_verify" => "We could not reproduce the setup needed to check the {term}.",
        _ => "The advice on the {term} does not hold for {entity2} and may mislead readers.",
    };
    ReviewRequest {
        target: String::new(),
        verdict: verdict.to_owned(),
        confidence: 0.5 + 0.05 * random.between(0, 9) as f64,
        rationale_markdown: Some(fill(rationale, focus, random)),
        sources: Vec::new(),
        based_on_usage: None,
        idempotency_key: None,
    }
}

fn rate_request(dimension: &str, quality: f64, focus: &Focus, random: &mut SplitMix64) -> RateRequest {
    let noise = random.unit() * 30.0 - 15.0;
    RateRequest {
        target: String::new(),
        context: Some(context_for(focus.topic, random)),
        dimension: dimension.to_owned(),
        score: (quality + noise).clamp(0.0, 100.0).round(),
        confidence: 0.4 + 0.1 * random.between(0, 6) as f64,
        based_on_usage: None,
        rationale_markdown: random
            .chance(0.3)
            .then(|| fill("Rated after using it for {name} with {entity}.", focus, random)),
        idempotency_key: None,
    }
}

/// A stable quality (20–95) of a named thing, so that ratings of one entity agree roughly across raters.
fn quality_of(seed: u64, name: &str) -> f64 {
    let hash = name.bytes().fold(0xCBF2_9CE4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3)
    });
    20.0 + SplitMix64::derived(seed, 3, hash).below(76) as f64
}

/// Plans item `index`: its text, its references to earlier items (`earlier`, by topic) and its evidence.
fn plan_item(
    seed: u64,
    index: u64,
    population: &[Controller],
    weights: &[u32],
    earlier: &[Vec<String>],
    proven: bool,
) -> ItemPlan {
    let mut random = SplitMix64::derived(seed, 4, index);
    let topic_index = random.weighted(weights);
    let topic: &'static Topic = &TOPICS[topic_index];
    let focus = Focus::choose(topic, &mut random);
    let author_controller = {
        // Skewed: a few controllers publish much more than the rest.
        let draw = random.unit();
        ((draw * draw * population.len() as f64) as usize).min(population.len() - 1)
    };
    let author = agent_of(population, author_controller, &mut random);
    let same_topic = &earlier[topic_index];
    let mut subjects = vec![(focus.entity.1.to_owned(), focus.entity.0.to_owned())];
    if random.chance(0.35) {
        subjects.push((focus.entity2.1.to_owned(), focus.entity2.0.to_owned()));
    }
    let subject_references: Vec<SubjectReference> = subjects
        .iter()
        .map(|(entity_type, name)| SubjectReference::Named {
            name: name.clone(),
            entity_type: entity_type.clone(),
            aliases: Vec::new(),
            description: Some(format!(
                "{name}, a {} used for {}.",
                entity_type.replace('_', " "),
                topic.name
            )),
        })
        .collect();
    let mut tags = vec![topic.tag.to_owned(), topic.area.to_owned()];
    if random.chance(0.3) {
        tags.push(slug(focus.term));
    }
    if random.chance(0.15) {
        tags.push(slug(focus.entity.0));
    }

    let experience = !proven && !same_topic.is_empty() && random.chance(0.04);
    let publication = if experience {
        let result = ["success", "partial", "failure"][random.weighted(&[70, 20, 10])];
        let used = (0..random.between(1, 3))
            .map(|_| UsedRequest {
                id: same_topic[random.index(same_topic.len())].clone(),
                result: if random.chance(0.8) {
                    result.to_owned()
                } else {
                    usage_result(&mut random).to_owned()
                },
                note: random.chance(0.3).then(|| usage_note(result, &focus, &mut random)),
            })
            .collect();
        let title = fill(
            random.text(&[
                "Experience: {task} with {entity}",
                "What happened when we tried to {task}",
                "Field report: the {term} in {entity}",
            ]),
            &focus,
            &mut random,
        );
        let summary = fill(
            random.text(&[
                "We tried to {task} with {entity}; this is what worked and what did not.",
                "A first-hand account of the {term} in a real setup.",
            ]),
            &focus,
            &mut random,
        );
        let target = body_target(&mut random);
        let mut text = body(&focus, &summary, "note", None, target, &mut random);
        text.push_str(&format!(
            "\n## Outcome\n\n{}\n",
            usage_note(result, &focus, &mut random)
        ));
        Publication::Experience(Box::new(ExperienceRequest {
            title,
            summary,
            body_markdown: text,
            subjects: subject_references.clone(),
            result: result.to_owned(),
            real_world_use: random.chance(0.7),
            context: Some(context_for(topic, &mut random)),
            configuration: None,
            observations: random.chance(0.5).then(
                || json!({ "surprises": fill("The {term} needed more attention than expected.", &focus, &mut random) }),
            ),
            metrics: random
                .chance(0.5)
                .then(|| json!({ "hours_spent": random.between(1, 40) })),
            used,
            tags: tags.clone(),
            space: None,
            language: Some("en".to_owned()),
            idempotency_key: None,
        }))
    } else {
        let types = if topic.is_technical() {
            TECHNICAL_TYPES
        } else {
            GENERAL_TYPES
        };
        let weights: Vec<u32> = types.iter().map(|(_, weight)| *weight).collect();
        let mut content_type = types[random.weighted(&weights)].0;
        if topic.tag == "llm-prompting" && random.chance(0.4) {
            content_type = "prompt";
        }
        let language = match content_type {
            "code" => Some(random.text(LANGUAGES)),
            _ => None,
        };
        let structured_data = match content_type {
            "code" => Some(json!({ "language": language.unwrap_or("python"), "license": "MIT" })),
            "prompt" => Some(json!({ "target_model": focus.entity.0 })),
            _ => None,
        };
        let title = fill(random.text(title_templates(content_type)), &focus, &mut random);
        let summary = fill(random.text(SUMMARIES), &focus, &mut random);
        let target = body_target(&mut random);
        let body_markdown = body(&focus, &summary, content_type, language, target, &mut random);
        let claim_count = random.weighted(&[15, 20, 25, 20, 12, 8]);
        let mut claims: Vec<String> = Vec::new();
        for _ in 0..claim_count {
            let claim = if random.chance(0.55) {
                (random.text(topic.claims)).to_owned()
            } else {
                fill(random.text(CLAIM_TEMPLATES), &focus, &mut random)
            };
            if !claims.contains(&claim) {
                claims.push(claim);
            }
        }
        let sources = if random.chance(0.25) {
            vec![SourceReference::Url {
                url: format!("https://docs.example.org/{}/{}", topic.tag, slug(focus.term)),
                title: Some(format!("{} notes on the {}", focus.entity.0, focus.term)),
            }]
        } else {
            Vec::new()
        };
        let mut relations = Vec::new();
        if !same_topic.is_empty() && !proven {
            match random.weighted(&[900, 50, 15, 10, 20, 5]) {
                1 => relations.push(RelationRequest {
                    relation_type: "alternative_to".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: Some((random.text(&ALTERNATIVE_REASONS)).to_owned()),
                }),
                2 => relations.push(RelationRequest {
                    relation_type: "corrects".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: None,
                }),
                3 => relations.push(RelationRequest {
                    relation_type: "supersedes".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: None,
                }),
                4 => relations.push(RelationRequest {
                    relation_type: "derived_from".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: None,
                }),
                5 => relations.push(RelationRequest {
                    relation_type: "known_issue_of".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: None,
                }),
                _ => {}
            }
        }
        Publication::Content(Box::new(PublishRequest {
            content_type: content_type.to_owned(),
            title,
            summary,
            body_markdown,
            structured_data,
            revision_of: None,
            change_note: None,
            subjects: subject_references.clone(),
            claims,
            sources,
            relations,
            tags: tags.clone(),
            space: None,
            language: Some("en".to_owned()),
            idempotency_key: None,
        }))
    };
    let relations = match &publication {
        Publication::Content(request) => request.relations.len() as u64,
        Publication::Experience(_) => 0,
    };
    let claim_count = match &publication {
        Publication::Content(request) => request.claims.len(),
        Publication::Experience(_) => 0,
    };

    // Evidence.
    let mut actions: Vec<Action> = Vec::new();
    let disputed = !proven && random.chance(0.015);
    let controllers = population.len();
    if proven {
        let count = 8 + random.index(4);
        let parties = other_controllers(&mut random, controllers, author_controller, count);
        for controller in parties {
            let caller = agent_of(population, controller, &mut random);
            actions.push(Action::Usage {
                caller,
                on: On::Content,
                request: usage_request("success", true, &focus, &mut random),
                then_review: None,
            });
        }
        if random.chance(0.5) {
            let reviewer = other_controllers(&mut random, controllers, author_controller, 1);
            if let Some(controller) = reviewer.first() {
                actions.push(Action::Review {
                    caller: agent_of(population, *controller, &mut random),
                    request: review_request("confirmed", &focus, &mut random),
                });
            }
        }
    } else if disputed {
        let parties = other_controllers(&mut random, controllers, author_controller, 2);
        if let Some(controller) = parties.first() {
            actions.push(Action::Usage {
                caller: agent_of(population, *controller, &mut random),
                on: On::Content,
                request: usage_request("failure", true, &focus, &mut random),
                then_review: None,
            });
        }
        if random.chance(0.4)
            && let Some(controller) = parties.get(1)
        {
            actions.push(Action::Usage {
                caller: agent_of(population, *controller, &mut random),
                on: On::Content,
                request: usage_request("success", true, &focus, &mut random),
                then_review: None,
            });
        }
    } else {
        if random.chance(0.5) {
            let count = 1 + random.weighted(&[40, 30, 18, 12]);
            for controller in other_controllers(&mut random, controllers, author_controller, count) {
                let result = usage_result(&mut random);
                let real_world = random.chance(0.55);
                actions.push(Action::Usage {
                    caller: agent_of(population, controller, &mut random),
                    on: On::Content,
                    request: usage_request(result, real_world, &focus, &mut random),
                    then_review: None,
                });
            }
        }
        if random.chance(0.12) {
            let verdict = [
                "confirmed",
                "mostly_correct",
                "questionable",
                "misleading",
                "contradicted",
                "outdated",
                "cannot_verify",
            ][random.weighted(&[45, 25, 8, 3, 5, 6, 8])];
            for controller in other_controllers(&mut random, controllers, author_controller, 1) {
                let caller = agent_of(population, controller, &mut random);
                let review = review_request(verdict, &focus, &mut random);
                if random.chance(0.5) {
                    // Grounded: the reviewer used it first.
                    let result = if matches!(verdict, "confirmed" | "mostly_correct") {
                        "success"
                    } else {
                        "partial"
                    };
                    let real_world = random.chance(0.5);
                    actions.push(Action::Usage {
                        caller,
                        on: On::Content,
                        request: usage_request(result, real_world, &focus, &mut random),
                        then_review: Some(review),
                    });
                } else {
                    actions.push(Action::Review {
                        caller,
                        request: review,
                    });
                }
            }
        }
        if random.chance(0.08) {
            let quality = quality_of(seed, &format!("content {index}"));
            let count = 1 + random.index(3);
            for controller in other_controllers(&mut random, controllers, author_controller, count) {
                let dimension = random.text(&["reliability", "clarity", "completeness", "time_saved"]);
                actions.push(Action::Rate {
                    caller: agent_of(population, controller, &mut random),
                    on: On::Content,
                    request: rate_request(dimension, quality, &focus, &mut random),
                });
            }
        }
    }
    if claim_count > 0 && random.chance(0.08) {
        let claim = random.index(claim_count);
        for controller in other_controllers(&mut random, controllers, author_controller, 1) {
            let result = usage_result(&mut random);
            let real_world = random.chance(0.5);
            actions.push(Action::Usage {
                caller: agent_of(population, controller, &mut random),
                on: On::Claim(claim),
                request: usage_request(result, real_world, &focus, &mut random),
                then_review: None,
            });
        }
    }
    if random.chance(0.06) {
        let subject = random.index(subjects.len());
        let quality = quality_of(seed, &subjects[subject].1);
        let count = 1 + random.index(2);
        for controller in other_controllers(&mut random, controllers, author_controller, count) {
            let dimension = random.text(&[
                "reliability",
                "ease_of_use",
                "cost_efficiency",
                "performance",
                "documentation_quality",
            ]);
            actions.push(Action::Rate {
                caller: agent_of(population, controller, &mut random),
                on: On::Entity(subject),
                request: rate_request(dimension, quality, &focus, &mut random),
            });
        }
    }
    if random.chance(0.03) {
        let subject = random.index(subjects.len());
        for controller in other_controllers(&mut random, controllers, author_controller, 1) {
            let result = usage_result(&mut random);
            actions.push(Action::Usage {
                caller: agent_of(population, controller, &mut random),
                on: On::Entity(subject),
                request: usage_request(result, true, &focus, &mut random),
                then_review: None,
            });
        }
    }

    // Some items get a second revision, part of the way through their evidence.
    let revision = match &publication {
        Publication::Content(request) if !proven && !disputed && random.chance(0.05) => {
            let mut revised = request.as_ref().clone();
            revised.summary = format!("{} Updated with what we learned since.", revised.summary);
            revised
                .body_markdown
                .push_str(&format!("\n## Update\n\n{}\n", paragraph(&focus, &mut random, 2, 4)));
            revised.change_note = Some(fill(
                "Added what we learned about the {term} since.",
                &focus,
                &mut random,
            ));
            revised.relations = Vec::new();
            if random.chance(0.5) {
                revised
                    .claims
                    .push(fill(random.text(CLAIM_TEMPLATES), &focus, &mut random));
            }
            Some(Box::new(revised))
        }
        _ => None,
    };
    let split = if revision.is_some() {
        random.index(actions.len() + 1)
    } else {
        actions.len()
    };
    let after_revision = actions.split_off(split);
    ItemPlan {
        index,
        topic: topic_index,
        author,
        publication,
        subjects,
        revision,
        before_revision: actions,
        after_revision,
        proven,
        disputed,
        relations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::text::{is_lower_snake_case, normalize_tag};
    use crate::service::scan::ContentScanner;

    #[test]
    fn the_generator_depends_only_on_its_seed() {
        let draw = |seed| {
            let mut random = SplitMix64::derived(seed, 4, 17);
            (0..8).map(|_| random.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        let mut random = SplitMix64::new(5);
        assert!((0..1000).all(|_| random.below(7) < 7));
        assert!((0..1000).all(|_| (3..=9).contains(&random.between(3, 9))));
        assert_eq!(
            sample_query(&mut SplitMix64::new(9), 3),
            sample_query(&mut SplitMix64::new(9), 3)
        );
    }

    #[test]
    fn templates_fill_every_slot_and_keep_capitals() {
        let topic = &TOPICS[0];
        let mut random = SplitMix64::new(3);
        let focus = Focus::choose(topic, &mut random);
        let filled = fill(
            "{Task} with {entity}: the {term} and the {term2} ({n} min)",
            &focus,
            &mut random,
        );
        assert!(!filled.contains('{') && !filled.contains('}'), "{filled}");
        assert!(
            filled.starts_with(|character: char| character.is_uppercase()),
            "{filled}"
        );
        assert!(filled.contains(focus.entity.0));
        assert_eq!(slug("Let's Encrypt: ACME challenge"), "let-s-encrypt-acme-challenge");
    }

    #[test]
    fn the_vocabulary_is_valid_input_for_publish() {
        assert!((60..=100).contains(&TOPICS.len()));
        for topic in TOPICS {
            assert_eq!(normalize_tag(topic.tag).as_deref(), Ok(topic.tag), "tag {}", topic.tag);
            assert_eq!(
                normalize_tag(topic.area).as_deref(),
                Ok(topic.area),
                "area {}",
                topic.area
            );
            assert!(topic.entities.len() >= 2 && topic.terms.len() >= 2 && !topic.tasks.is_empty());
            assert!(!topic.claims.is_empty());
            for (name, entity_type) in topic.entities {
                assert!(is_lower_snake_case(entity_type), "entity type {entity_type} of {name}");
                assert!(normalize_tag(&slug(name)).is_ok(), "entity tag {name}");
            }
            for term in topic.terms {
                assert_eq!(normalize_tag(&slug(term)), Ok(slug(term)), "term tag {term}");
            }
        }
    }

    #[test]
    fn generated_text_passes_the_content_scan_and_stays_within_size() {
        let scanner = ContentScanner::new();
        let mut random = SplitMix64::new(11);
        for round in 0..400 {
            let topic = &TOPICS[round % TOPICS.len()];
            let focus = Focus::choose(topic, &mut random);
            let language = (round % 5 == 0).then(|| random.text(LANGUAGES));
            let summary = fill(random.text(SUMMARIES), &focus, &mut random);
            let target = body_target(&mut random);
            let text = body(&focus, &summary, "procedure", language, target, &mut random);
            assert!((450..=7000).contains(&text.len()), "body of {} bytes", text.len());
            let claim = fill(random.text(CLAIM_TEMPLATES), &focus, &mut random);
            for (field, text) in [("body", text.as_str()), ("summary", &summary), ("claim", &claim)] {
                assert_eq!(scanner.scan_text(field, text), None, "{field}: {text}");
            }
        }
        for topic in TOPICS {
            for claim in topic.claims {
                assert_eq!(scanner.scan_text("claim", claim), None, "{claim}");
            }
        }
    }

    #[test]
    fn a_handful_of_items_is_planned_to_be_proven() {
        let schedule = ProvenSchedule::new(100_000);
        assert_eq!((0..100_000).filter(|index| schedule.includes(*index)).count(), 50);
        let small = ProvenSchedule::new(120);
        assert_eq!((0..120).filter(|index| small.includes(*index)).count(), 5);
        let tiny = ProvenSchedule::new(3);
        assert_eq!((0..3).filter(|index| tiny.includes(*index)).count(), 3);
    }
}
