//! The command-line adapter: parses `interai …` and runs one command against an instance.

mod archive_commands;

use std::path::PathBuf;

use anyhow::{Context, bail};
use chrono::{DateTime, TimeDelta, Utc};
use clap::{Args, Parser, Subcommand};

use crate::clock::{SharedClock, SystemClock};
use crate::config::Config;
use crate::domain::{ActorType, PeerLevel, PublicId, ScopeSet};
use crate::instance::Instance;
use crate::service::actors::NewActor;
use crate::service::backups::BackupPace;
use crate::service::keys::NewApiKey;

/// interai: a self-hosted Inter-AI instance.
#[derive(Debug, Parser)]
#[command(name = "interai", version, about, propagate_version = true)]
pub struct Cli {
    /// A TOML configuration file (also INTERAI_CONFIG); INTERAI_* variables override it.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the instance: MCP at /mcp, health at /healthz and /readyz.
    Serve,
    /// Manage the instance's actors, keys and audit log on the configured database.
    Admin(AdminArguments),
}

/// `interai admin [--init] …`
#[derive(Debug, Args)]
pub struct AdminArguments {
    /// Create a new realm (organization, admin user, admin.key) when the configured database holds none. Without
    /// it, admin commands refuse to run on a missing or empty database, so that a command run outside the
    /// instance's data directory cannot start a second realm whose keys the real server rejects.
    #[arg(long, global = true)]
    pub init: bool,
    /// Print list and show answers (and what create, revoke and rotate made) as the admin API's JSON instead of
    /// text: the same answer `GET /admin/…` gives for the same state (docs/admin-api.md).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: AdminCommand,
}

/// `interai admin …`
#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Humans, organizations and agents.
    #[command(subcommand)]
    Actor(ActorCommand),
    /// API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// The audit log of MCP calls.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Peers: the other instances this one federates with.
    #[command(subcommand)]
    Peer(PeerCommand),
    /// The instance's own federation identity, and what peers refused for good.
    #[command(subcommand)]
    Federation(FederationCommand),
    /// Spaces: where content lives; `federated` ones are shared with every active peer, `local` ones never leave.
    #[command(subcommand)]
    Space(SpaceCommand),
    /// Content items.
    #[command(subcommand)]
    Content(ContentCommand),
    /// Back up the instance while it serves. SQLite: a copy of the database file as of one moment; PostgreSQL: an
    /// archive, as `export` writes. Restore either with `restore`.
    Backup {
        /// Where to write it (a new file).
        #[arg(long, value_name = "PATH")]
        to: PathBuf,
        /// Also keep the key-encryption key with it (SQLite: in PATH.key-encryption.key; PostgreSQL: in the
        /// archive). Without it, the backup's signing keys open only with the key kept apart.
        #[arg(long)]
        include_key_encryption_key: bool,
        /// On PostgreSQL, write the archive at most this many MiB a second (default:
        /// INTERAI_BACKUP_MAX_MIB_PER_SECOND, 40), so the instance's requests keep their share of the cores; 0: as
        /// fast as it can.
        #[arg(long, value_name = "N")]
        max_mib_per_second: Option<u32>,
    },
    /// Load a backup (a SQLite file from `backup`, or an archive) into the configured database, which must be empty
    /// (run it with the instance stopped). The outbox starts a new epoch, so peers read it again from a snapshot.
    Restore {
        /// The backup.
        #[arg(long, value_name = "PATH")]
        from: PathBuf,
    },
    /// Write the whole realm to a portable archive (docs/backups.md), read in one snapshot while the instance serves.
    Export {
        /// Where to write it (a new file).
        #[arg(long, value_name = "FILE")]
        to: PathBuf,
        /// Also put the key-encryption key in the archive.
        #[arg(long)]
        include_key_encryption_key: bool,
    },
    /// Load an archive into the configured database, which must be empty, in one transaction. The outbox starts a
    /// new epoch unless --keep-outbox-epoch.
    Import {
        /// The archive.
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        /// Keep the outbox's epoch: only when the exported instance stopped before the export and never serves
        /// again (peers then go on where they were). A restore of an older archive must not keep it.
        #[arg(long)]
        keep_outbox_epoch: bool,
    },
    /// Copy the realm from its SQLite database to an empty PostgreSQL database, checking every table's rows and
    /// checksum on both sides. Stop the instance first.
    Migrate {
        /// The PostgreSQL database, e.g. postgres://interai@db.internal/interai.
        #[arg(long, value_name = "URL")]
        to: String,
    },
    /// Fill the database with realistic synthetic knowledge and evidence (for benchmarks and demonstrations).
    Seed {
        /// How many content items to publish.
        #[arg(long, value_name = "N")]
        items: u64,
        /// The generator's seed; the same seed gives the same knowledge and evidence.
        #[arg(long, value_name = "S", default_value_t = 1)]
        seed: u64,
        /// How many root controllers publish and report (default: one per 50 items, 20 to 2,000).
        #[arg(long, value_name = "C")]
        controllers: Option<u64>,
    },
}

/// `interai admin peer …`
#[derive(Debug, Subcommand)]
pub enum PeerCommand {
    /// Read a peer's manifest, show its key fingerprint, pin it once confirmed, and ask to peer (a signed Follow).
    /// A peer that had already asked is accepted at once.
    Add {
        /// The peer's URL, e.g. https://beta.example.
        url: String,
        /// The base trust in the peer: quarantine, low, standard or high.
        #[arg(long, default_value = "standard")]
        level: String,
        /// The fingerprint you got from the peer's admin (SHA256:…); without it, you are shown the fingerprint and
        /// asked to confirm.
        #[arg(long, value_name = "SHA256:…")]
        fingerprint: Option<String>,
        /// Confirm without asking (only together with --fingerprint in scripts; never trust silently).
        #[arg(long)]
        yes: bool,
    },
    /// Every peer: state, level, last contact, last error, pending deliveries, pinned keys.
    List,
    /// One peer: the same rows as `list` shows for it.
    Show {
        /// The peer's realm, e.g. beta.example.
        realm: String,
    },
    /// Accept a peer that asked to peer (pending_in).
    Approve {
        /// The peer's realm, e.g. beta.example.
        realm: String,
        /// Its level: quarantine, low, standard or high (default: standard).
        #[arg(long)]
        level: Option<String>,
        /// The fingerprint you got from the peer's admin; it must match the key the peer signed with.
        #[arg(long, value_name = "SHA256:…")]
        fingerprint: Option<String>,
    },
    /// Refuse a peer's request (or end an active peering).
    Reject {
        /// The peer's realm.
        realm: String,
    },
    /// Block a peer: its requests get 403 from the next one on, in every process.
    Block {
        /// The peer's realm.
        realm: String,
        /// Why (shown in peer list).
        #[arg(long)]
        reason: String,
        /// When the block lifts on its own: an RFC 3339 time or a duration from now (7d, 12h).
        #[arg(long)]
        until: Option<String>,
    },
    /// Lift a block.
    Unblock {
        /// The peer's realm.
        realm: String,
    },
    /// Change a peer's level.
    SetLevel {
        /// The peer's realm.
        realm: String,
        /// quarantine, low, standard or high.
        level: String,
    },
    /// Pin a peer's trust: its evidence is weighed by this value (0 to 1, used up to 0.9) instead of its level and
    /// the agreement observed. A block or quarantine still counts 0.
    Pin {
        /// The peer's realm.
        realm: String,
        /// The trust to use, e.g. 0.8.
        trust: f64,
    },
    /// Remove a peer's pin: its level and the agreement observed decide again.
    Unpin {
        /// The peer's realm.
        realm: String,
    },
    /// Delete every evidence record a peer's realm originated, with its effects: every target it was about is
    /// assessed again without it. The peer, its content and its keys stay (block it to stop new evidence counting).
    Purge {
        /// The peer's realm.
        realm: String,
    },
    /// Forget a peer (an Undo of this instance's Follow is sent first).
    Remove {
        /// The peer's realm.
        realm: String,
    },
}

/// `interai admin federation …`
#[derive(Debug, Subcommand)]
pub enum FederationCommand {
    /// Show the instance's actor URL and its keys with their fingerprints (what peers' admins compare).
    Identity,
    /// Make a new signing key, endorsed by the current one, and announce it to every active peer.
    RotateKey,
    /// Activities a peer refused for good (a 4xx other than 408 and 429), newest first.
    DeadLetters {
        /// Only this peer's.
        #[arg(long, value_name = "REALM")]
        peer: Option<String>,
    },
    /// Send a dead letter again (the same activity and origin proof, the request signed afresh).
    Replay {
        /// The dead letter's ID (from `dead-letters`).
        id: String,
    },
    /// Forget a dead letter.
    Drop {
        /// The dead letter's ID.
        id: String,
    },
    /// Instance trust: what each peer's evidence is weighed by here.
    #[command(subcommand)]
    Trust(TrustCommand),
}

/// `interai admin federation trust …`
#[derive(Debug, Subcommand)]
pub enum TrustCommand {
    /// Recompute every peer's effective trust now (it is also recomputed on every change of a peer and on a
    /// schedule), and print it.
    Recompute,
}

/// `interai admin space …`
#[derive(Debug, Subcommand)]
pub enum SpaceCommand {
    /// Create a space of this realm.
    Create {
        /// Its name, unique in the realm; agents name it in `publish`.
        name: String,
        /// `federated` (shared with every active peer) or `local` (never leaves this instance). Fixed for good.
        #[arg(long)]
        visibility: String,
        /// What it is for.
        #[arg(long)]
        description: Option<String>,
    },
    /// Every space this instance knows, its own and its peers'.
    List,
}

/// `interai admin content …`
#[derive(Debug, Subcommand)]
pub enum ContentCommand {
    /// Delete a content item: it becomes a tombstone (who, when, why) here and, for this realm's own federated
    /// content, on every peer. Final.
    Delete {
        /// The item's ID (`cnt_…`).
        id: String,
        /// Why (kept with the tombstone and shown to every reader).
        #[arg(long)]
        reason: String,
    },
    /// Content items (this realm's and replicated ones, deleted ones too), newest first, a page at a time.
    List(ContentListArguments),
}

/// Arguments of `admin content list`.
#[derive(Debug, Args)]
pub struct ContentListArguments {
    /// Only items of this space (spc_…).
    #[arg(long, value_name = "ID")]
    pub space: Option<String>,
    /// Only items made by this realm.
    #[arg(long, value_name = "REALM")]
    pub origin: Option<String>,
    /// Only items in this state: deleted, or a trust status (unverified, supported, high_confidence, disputed,
    /// outdated, incorrect, superseded).
    #[arg(long)]
    pub status: Option<String>,
    /// Continue after the page that printed this next cursor.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Items per page (1 to 500, default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

/// `interai admin audit …`
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Delete the audit records older than an age now, and print how many went (the instance also does this on its
    /// own, after INTERAI_AUDIT_RETENTION_DAYS). Write limits are unaffected: they count writes elsewhere.
    Prune {
        /// The age: a duration such as 30d, 12h or 90m (at least 61m, the write-limit window).
        #[arg(long, value_name = "AGE")]
        older_than: String,
    },
    /// Audited calls, newest first, a page at a time.
    List(AuditListArguments),
}

/// Arguments of `admin audit list`.
#[derive(Debug, Args)]
pub struct AuditListArguments {
    /// Only this actor's calls.
    #[arg(long, value_name = "ID")]
    pub actor: Option<String>,
    /// Only calls of this tool (search, publish, …, or resources/read).
    #[arg(long)]
    pub tool: Option<String>,
    /// Only calls with this outcome: ok or an error code (validation_failed, rate_limited, …).
    #[arg(long)]
    pub outcome: Option<String>,
    /// Only calls made at or after this RFC 3339 time.
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,
    /// Only calls made before this RFC 3339 time.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Continue after the page that printed this next cursor.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Records per page (1 to 500, default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

/// `interai admin actor …`
#[derive(Debug, Subcommand)]
pub enum ActorCommand {
    /// Create an actor and print its ID.
    Create(CreateActorArguments),
    /// List the actors of this realm.
    List,
    /// Show one actor.
    Show {
        /// The actor's ID (usr_…, org_… or ai_…).
        id: String,
    },
}

/// Arguments of `admin actor create`.
#[derive(Debug, Args)]
pub struct CreateActorArguments {
    /// usr (human), org (organization) or ai (agent).
    #[arg(long = "type", value_name = "usr|org|ai")]
    pub actor_type: String,
    /// The display name.
    #[arg(long)]
    pub name: String,
    /// The accountable controller (a usr_ or org_ ID); required for ai.
    #[arg(long, value_name = "ID")]
    pub controller: Option<String>,
}

/// `interai admin key …`
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Issue a key and print its secret once.
    Create(CreateKeyArguments),
    /// List an actor's keys (never their secrets).
    List {
        /// The actor whose keys to list.
        #[arg(long, value_name = "ID")]
        actor: String,
    },
    /// Revoke a key at once.
    Revoke {
        /// The key's ID (key_…).
        id: String,
    },
}

/// Arguments of `admin key create`.
#[derive(Debug, Args)]
pub struct CreateKeyArguments {
    /// The actor the key authenticates.
    #[arg(long, value_name = "ID")]
    pub actor: String,
    /// Comma-separated scopes: read, publish, usage, review, rate, moderate, admin.
    #[arg(long, default_value = "read,publish,usage,review,rate")]
    pub scopes: String,
    /// When the key expires: an RFC 3339 time (2027-01-31T00:00:00Z) or a duration from now (90d, 12h, 30m).
    #[arg(long)]
    pub expires: Option<String>,
    /// A label to recognise the key by.
    #[arg(long)]
    pub label: Option<String>,
}

/// An error as the command line prints it: the error and each of its causes once. Many errors already say their cause
/// in their own text (`database: database error: …`), so a cause whose text was already said is left out; before,
/// a PostgreSQL error was printed four times.
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let said = cause.to_string();
        if said.is_empty() || text.contains(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let mut config = Config::load(cli.config.as_deref())?;
    if let Command::Admin(AdminArguments {
        command: AdminCommand::Seed { .. },
        ..
    }) = &cli.command
    {
        // The seeder writes far more per controller than any agent may, so the hourly write limit would stop it; and
        // its thousands of actor and key events would drown the progress bar unless INTERAI_LOG asks for them.
        config.writes_per_hour = u32::MAX;
        if std::env::var_os("INTERAI_LOG").is_none() {
            config.log_filter = "warn".to_owned();
        }
    }
    crate::instance::init_logging(&config);
    let clock: SharedClock = std::sync::Arc::new(SystemClock);
    match cli.command {
        Command::Serve => {
            let listener = tokio::net::TcpListener::bind(config.listen)
                .await
                .with_context(|| format!("cannot listen on {} (INTERAI_LISTEN)", config.listen))?;
            let instance = Instance::open(config, clock).await?;
            instance.bootstrap().await?;
            instance.serve(listener, crate::instance::shutdown_signal()).await?;
        }
        Command::Admin(AdminArguments { command, .. })
            if matches!(
                command,
                AdminCommand::Backup { .. }
                    | AdminCommand::Restore { .. }
                    | AdminCommand::Export { .. }
                    | AdminCommand::Import { .. }
                    | AdminCommand::Migrate { .. }
            ) =>
        {
            run_archive_command(cli.config.as_deref(), config, command).await?;
        }
        Command::Admin(AdminArguments { init, json, command }) => {
            // Only `serve` (or an explicit --init) creates a realm; an admin command needs the one it manages.
            let instance = if init {
                Instance::open(config, clock).await?
            } else {
                let config = with_stored_realm(cli.config.as_deref(), config).await?;
                Instance::open_existing(config, clock).await?
            };
            instance.bootstrap().await?;
            let result = match json_answer(&instance, &command, json).await {
                Some(answered) => answered,
                None => run_admin(&instance, command).await,
            };
            instance.close().await;
            result?;
        }
    }
    Ok(())
}

/// Prints an admin API answer as JSON.
fn print_json(answer: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(answer)?);
    Ok(())
}

/// Runs a command with `--json` that has a JSON answer: the one `http::admin::views` builds for the admin API, from
/// the same service call. `None` when the command prints text (no `--json`, or a command without a JSON answer).
async fn json_answer(instance: &Instance, command: &AdminCommand, json: bool) -> Option<anyhow::Result<()>> {
    use crate::http::admin::views;
    if !json {
        return None;
    }
    let service = instance.service();
    let answered = match command {
        AdminCommand::Actor(ActorCommand::List) => views::actors(service).await.map(|answer| print_json(&answer)),
        AdminCommand::Actor(ActorCommand::Show { id }) => {
            views::actor(service, id).await.map(|answer| print_json(&answer))
        }
        AdminCommand::Actor(ActorCommand::Create(_)) | AdminCommand::Key(KeyCommand::Create(_)) => {
            return Some(create_as_json(instance, command).await);
        }
        AdminCommand::Key(KeyCommand::List { actor }) => {
            views::keys(service, actor).await.map(|answer| print_json(&answer))
        }
        AdminCommand::Key(KeyCommand::Revoke { id }) => {
            let revoked = async {
                let key = service
                    .revoke_api_key(&crate::service::validation::parse_id("id", id)?)
                    .await?;
                Ok(views::key_wire(&key, service.now()))
            };
            revoked.await.map(|answer| print_json(&answer))
        }
        AdminCommand::Audit(AuditCommand::List(arguments)) => views::audit(service, audit_query(arguments))
            .await
            .map(|answer| print_json(&answer)),
        AdminCommand::Content(ContentCommand::List(arguments)) => views::content(service, content_query(arguments))
            .await
            .map(|answer| print_json(&answer)),
        AdminCommand::Peer(PeerCommand::List) => views::peers(instance.federation())
            .await
            .map(|answer| print_json(&answer)),
        AdminCommand::Peer(PeerCommand::Show { realm }) => views::peer(instance.federation(), realm)
            .await
            .map(|answer| print_json(&answer)),
        AdminCommand::Federation(FederationCommand::Identity) => views::identity(instance.federation())
            .await
            .map(|answer| print_json(&answer)),
        AdminCommand::Federation(FederationCommand::RotateKey) => {
            if let Err(error) = instance.federation().rotate_instance_key().await {
                return Some(Err(error.into()));
            }
            deliver_now(instance).await;
            views::identity(instance.federation())
                .await
                .map(|answer| print_json(&answer))
        }
        AdminCommand::Federation(FederationCommand::DeadLetters { peer }) => {
            views::dead_letters(instance.federation(), peer.as_deref())
                .await
                .map(|answer| print_json(&answer))
        }
        AdminCommand::Federation(FederationCommand::Trust(TrustCommand::Recompute)) => {
            views::recompute_instance_trust(instance.federation())
                .await
                .map(|answer| print_json(&answer))
        }
        AdminCommand::Peer(PeerCommand::Pin { realm, trust }) => instance
            .federation()
            .pin_peer_trust(realm, *trust)
            .await
            .map(|view| print_json(&views::peer_wire(view))),
        AdminCommand::Peer(PeerCommand::Unpin { realm }) => instance
            .federation()
            .unpin_peer_trust(realm)
            .await
            .map(|view| print_json(&views::peer_wire(view))),
        AdminCommand::Peer(PeerCommand::Purge { realm }) => views::purge_peer_evidence(instance.federation(), realm)
            .await
            .map(|answer| print_json(&answer)),
        AdminCommand::Space(SpaceCommand::List) => views::spaces(service).await.map(|answer| print_json(&answer)),
        _ => return None,
    };
    Some(answered.map_err(anyhow::Error::from).and_then(|printed| printed))
}

/// `actor create` and `key create` with `--json`: what was made, as the admin API's `POST` answers it (a key with
/// its secret, shown this once).
async fn create_as_json(instance: &Instance, command: &AdminCommand) -> anyhow::Result<()> {
    use crate::http::admin::views;
    let service = instance.service();
    match command {
        AdminCommand::Actor(ActorCommand::Create(arguments)) => {
            let actor = service.create_actor(new_actor(arguments)?).await?;
            print_json(&views::actor_wire(&actor))
        }
        AdminCommand::Key(KeyCommand::Create(arguments)) => {
            let issued = service.create_api_key(new_api_key(arguments, service.now())?).await?;
            print_json(&views::issued_key_wire(&issued, service.now()))
        }
        _ => bail!("not a create command"),
    }
}

fn new_actor(arguments: &CreateActorArguments) -> anyhow::Result<NewActor> {
    let actor_type = ActorType::parse(&arguments.actor_type)
        .with_context(|| format!("--type must be usr, org or ai, not {:?}", arguments.actor_type))?;
    let controller = arguments
        .controller
        .as_deref()
        .map(|text| parse_id("--controller", text))
        .transpose()?;
    Ok(NewActor {
        actor_type,
        display_name: arguments.name.clone(),
        controller,
    })
}

fn new_api_key(arguments: &CreateKeyArguments, now: DateTime<Utc>) -> anyhow::Result<NewApiKey> {
    let actor_id = parse_id("--actor", &arguments.actor)?;
    let scopes = ScopeSet::parse_list(&arguments.scopes).map_err(|unknown| {
        anyhow::anyhow!(
            "--scopes: unknown scope {unknown:?}; known scopes are read, publish, usage, review, rate, moderate, admin"
        )
    })?;
    let expires_at = arguments
        .expires
        .as_deref()
        .map(|text| parse_expiry(text, now))
        .transpose()?;
    Ok(NewApiKey {
        actor_id,
        scopes,
        expires_at,
        label: arguments.label.clone(),
    })
}

fn audit_query(arguments: &AuditListArguments) -> crate::service::audit::AuditQuery {
    crate::service::audit::AuditQuery {
        actor: arguments.actor.clone(),
        tool: arguments.tool.clone(),
        outcome: arguments.outcome.clone(),
        from: arguments.from.clone(),
        until: arguments.until.clone(),
        cursor: arguments.cursor.clone(),
        limit: arguments.limit,
    }
}

fn content_query(arguments: &ContentListArguments) -> crate::service::content::ContentQuery {
    crate::service::content::ContentQuery {
        space: arguments.space.clone(),
        origin: arguments.origin.clone(),
        status: arguments.status.clone(),
        cursor: arguments.cursor.clone(),
        limit: arguments.limit,
    }
}

/// Says where the next page starts, on standard error so that the listing itself stays plain rows.
fn print_next_cursor(next_cursor: Option<&str>) {
    if let Some(cursor) = next_cursor {
        eprintln!("more: --cursor {cursor}");
    }
}

/// The configuration an admin command runs with. An admin command manages the realm its database holds, so when
/// neither `INTERAI_REALM` nor the configuration file names a realm, the realm is read from the database (before, the
/// default realm was assumed, and every command on a database of another realm failed with "a realm cannot be
/// renamed"). A realm that is named and differs from the stored one is still refused, once, by the bootstrap.
async fn with_stored_realm(file: Option<&std::path::Path>, config: Config) -> anyhow::Result<Config> {
    let (environment, file_text, named) = realm_named(file)?;
    if named {
        return Ok(config);
    }
    let stored = crate::store::settings::peek(&config.database_url, crate::service::bootstrap::SETTING_REALM).await?;
    match stored {
        Some(stored) if stored != config.realm => {
            let mut environment = environment;
            environment.insert("INTERAI_REALM".to_owned(), stored);
            Ok(Config::from_sources(file_text.as_deref(), &environment)?)
        }
        _ => Ok(config),
    }
}

/// The `INTERAI_*` variables, the configuration file's text, and whether either names the realm.
type RealmSources = (std::collections::BTreeMap<String, String>, Option<String>, bool);

fn realm_named(file: Option<&std::path::Path>) -> anyhow::Result<RealmSources> {
    let environment: std::collections::BTreeMap<String, String> = std::env::vars()
        .filter(|(name, _)| name.starts_with("INTERAI_"))
        .collect();
    let file_path = file
        .map(std::path::Path::to_path_buf)
        .or_else(|| environment.get("INTERAI_CONFIG").map(PathBuf::from));
    // `Config::load` read this file a moment ago and accepted it.
    let file_text = file_path.as_deref().map(std::fs::read_to_string).transpose()?;
    let named = environment.contains_key("INTERAI_REALM")
        || file_text
            .as_deref()
            .and_then(|text| toml::from_str::<toml::Table>(text).ok())
            .is_some_and(|table| table.contains_key("realm"));
    Ok((environment, file_text, named))
}

/// Runs `backup`, `restore`, `export`, `import` or `migrate`, which work on the database without an instance.
async fn run_archive_command(
    file: Option<&std::path::Path>,
    config: Config,
    command: AdminCommand,
) -> anyhow::Result<()> {
    let (_, _, realm_configured) = realm_named(file)?;
    match command {
        AdminCommand::Backup {
            to,
            include_key_encryption_key,
            max_mib_per_second,
        } => {
            let pace = BackupPace {
                max_mib_per_second: max_mib_per_second.unwrap_or(config.backup_max_mib_per_second),
            };
            archive_commands::backup(&config, &to, include_key_encryption_key, pace).await
        }
        AdminCommand::Restore { from } => archive_commands::restore(&config, realm_configured, &from).await,
        AdminCommand::Export {
            to,
            include_key_encryption_key,
        } => archive_commands::export(&config, &to, include_key_encryption_key).await,
        AdminCommand::Import {
            from,
            keep_outbox_epoch,
        } => archive_commands::import(&config, realm_configured, &from, keep_outbox_epoch).await,
        AdminCommand::Migrate { to } => archive_commands::migrate(&config, &to).await,
        other => bail!("not an archive command: {other:?}"),
    }
}

async fn run_admin(instance: &Instance, command: AdminCommand) -> anyhow::Result<()> {
    let service = instance.service();
    match command {
        AdminCommand::Actor(ActorCommand::Create(arguments)) => {
            let actor = service.create_actor(new_actor(&arguments)?).await?;
            println!("{}", actor.id);
        }
        AdminCommand::Actor(ActorCommand::Show { id }) => {
            let actor = service.find_actor(&parse_id("actor ID", &id)?).await?;
            println!("id\t{}", actor.id);
            println!("type\t{}", actor.actor_type.as_str());
            println!("name\t{}", actor.display_name);
            println!(
                "controller\t{}",
                actor.controller.as_ref().map_or("-", PublicId::as_str)
            );
            println!("root_controller\t{}", actor.root_controller);
            println!("origin\t{}", actor.origin);
            println!("created_at\t{}", actor.created_at.to_rfc3339());
        }
        AdminCommand::Actor(ActorCommand::List) => {
            println!("id\ttype\tname\tcontroller\troot_controller\tcreated_at");
            for actor in service.list_actors().await? {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    actor.id,
                    actor.actor_type.as_str(),
                    actor.display_name,
                    actor.controller.as_ref().map_or("-", PublicId::as_str),
                    actor.root_controller,
                    actor.created_at.to_rfc3339()
                );
            }
        }
        AdminCommand::Key(KeyCommand::Create(arguments)) => {
            let issued = service.create_api_key(new_api_key(&arguments, service.now())?).await?;
            eprintln!(
                "key {} for {} with scopes {} (the secret below is shown only once)",
                issued.key.id,
                issued.key.actor_id,
                issued.key.scopes.to_list()
            );
            println!("{}", issued.secret);
        }
        AdminCommand::Key(KeyCommand::List { actor }) => {
            let actor_id = parse_id("--actor", &actor)?;
            println!("id\tscopes\tlabel\tcreated_at\texpires_at\trevoked_at\tlast_used_at");
            let show =
                |instant: Option<DateTime<Utc>>| instant.map_or_else(|| "-".to_owned(), |value| value.to_rfc3339());
            for key in service.list_api_keys(&actor_id).await? {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    key.id,
                    key.scopes.to_list(),
                    key.label.as_deref().unwrap_or("-"),
                    key.created_at.to_rfc3339(),
                    show(key.expires_at),
                    show(key.revoked_at),
                    show(key.last_used_at)
                );
            }
        }
        AdminCommand::Key(KeyCommand::Revoke { id }) => {
            let key_id = parse_id("key ID", &id)?;
            let key = service.revoke_api_key(&key_id).await?;
            println!("{} revoked", key.id);
        }
        AdminCommand::Audit(AuditCommand::Prune { older_than }) => {
            let age = parse_age("--older-than", &older_than)?;
            let prune = service.prune_audit(age).await?;
            println!(
                "deleted {} audit records made before {}",
                prune.deleted,
                prune.cutoff.to_rfc3339()
            );
        }
        AdminCommand::Audit(AuditCommand::List(arguments)) => {
            let page = service.audit_log(audit_query(&arguments)).await?;
            println!("id\tcreated_at\tactor\ttool\toutcome\tduration_ms\tsummary");
            for record in &page.records {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{:.1}\t{}",
                    record.id,
                    record.created_at.to_rfc3339(),
                    record.actor_id,
                    record.tool,
                    record.outcome,
                    record.duration_micros as f64 / 1000.0,
                    record.result_summary
                );
            }
            print_next_cursor(page.next_cursor.as_deref());
        }
        AdminCommand::Peer(command) => run_peer_command(instance, command).await?,
        AdminCommand::Federation(FederationCommand::Identity) => {
            println!("actor\t{}", instance.federation().instance_actor_url());
            let signing = instance.federation().signing_key().await?;
            for key in instance.federation().published_instance_keys().await? {
                let marker = if key.description.key_id == signing.key_id {
                    "signing"
                } else {
                    "published"
                };
                println!(
                    "key\t{}\t{}\t{marker}",
                    key.description.key_id,
                    key.description.public_key.fingerprint()
                );
            }
        }
        AdminCommand::Federation(FederationCommand::RotateKey) => {
            let key = instance.federation().rotate_instance_key().await?;
            println!(
                "{}\t{}",
                key.description.key_id,
                key.description.public_key.fingerprint()
            );
            deliver_now(instance).await;
        }
        AdminCommand::Federation(FederationCommand::DeadLetters { peer }) => {
            println!("id\tpeer\tactivity_type\tactivity_id\trefused_at\terror");
            for row in instance.federation().dead_letters(peer.as_deref(), 1000).await? {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    row.id,
                    row.peer_realm,
                    row.activity_type,
                    row.activity_id,
                    row.finished_at.unwrap_or(row.created_at).to_rfc3339(),
                    row.last_error.as_deref().unwrap_or("-")
                );
            }
        }
        AdminCommand::Federation(FederationCommand::Replay { id }) => {
            let row = instance
                .federation()
                .replay_dead_letter(&id)
                .await
                .with_context(|| format!("dead letter {id}"))?;
            println!("{}\tqueued again for {}", row.id, row.peer_realm);
            deliver_now(instance).await;
        }
        AdminCommand::Federation(FederationCommand::Drop { id }) => {
            instance
                .federation()
                .drop_dead_letter(&id)
                .await
                .with_context(|| format!("dead letter {id}"))?;
            println!("{id}\tdropped");
        }
        AdminCommand::Federation(FederationCommand::Trust(TrustCommand::Recompute)) => {
            let batch = instance.federation().recompute_instance_trust().await?;
            println!("epoch\t{}\t{}", batch.epoch, batch.computed_at.to_rfc3339());
            println!("realm\ttrust\treason\tagreements\tdisagreements");
            for row in batch.peers {
                println!(
                    "{}\t{:.2}\t{}\t{}\t{}",
                    row.peer_realm,
                    row.trust,
                    row.reason.to_text(),
                    row.agreements,
                    row.disagreements
                );
            }
        }
        AdminCommand::Space(SpaceCommand::Create {
            name,
            visibility,
            description,
        }) => {
            let visibility = crate::domain::knowledge::SpaceVisibility::parse(visibility.trim())
                .with_context(|| format!("--visibility must be federated or local, not {visibility:?}"))?;
            let admin = service.realm_admin().await?;
            let space = service
                .create_space(
                    &admin,
                    crate::service::spaces::NewSpace {
                        name,
                        description,
                        visibility,
                    },
                )
                .await?;
            println!("{}\t{}\t{}", space.id, space.name, space.visibility.as_str());
        }
        AdminCommand::Space(SpaceCommand::List) => {
            println!("id\tname\tvisibility\torigin\tcreated_at");
            for space in service.list_spaces().await? {
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    space.id,
                    space.name,
                    space.visibility.as_str(),
                    space.origin,
                    space.created_at.to_rfc3339()
                );
            }
        }
        AdminCommand::Content(ContentCommand::Delete { id, reason }) => {
            let admin = service.realm_admin().await?;
            let deletion = service
                .delete_content(&admin, &id, &reason)
                .await
                .with_context(|| format!("deleting {id}"))?;
            if deletion.already_deleted {
                println!(
                    "{}\talready deleted at {} by {}",
                    deletion.tombstone.content_id,
                    deletion.tombstone.deleted_at.to_rfc3339(),
                    deletion.tombstone.deleted_by
                );
            } else {
                println!("{}\tdeleted", deletion.tombstone.content_id);
            }
        }
        AdminCommand::Content(ContentCommand::List(arguments)) => {
            let page = service.list_content(content_query(&arguments)).await?;
            println!("id\tstatus\ttype\tspace\torigin\trevision\tcreated_at\ttitle");
            for listing in &page.items {
                let item = &listing.content;
                let status = match item.deleted_at {
                    Some(_) => "deleted",
                    None => listing.trust_status.as_deref().unwrap_or("unverified"),
                };
                println!(
                    "{}\t{status}\t{}\t{}\t{}\t{}\t{}\t{}",
                    item.id,
                    item.content_type,
                    item.space_id,
                    item.origin,
                    item.current_revision_no,
                    item.created_at.to_rfc3339(),
                    listing.title
                );
            }
            print_next_cursor(page.next_cursor.as_deref());
        }
        AdminCommand::Seed {
            items,
            seed,
            controllers,
        } => {
            let bar = indicatif::ProgressBar::new(items);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} items, {per_sec}, {eta} left",
                )
                .map_err(|error| anyhow::anyhow!("progress bar template: {error}"))?
                .progress_chars("=> "),
            );
            let options = crate::seed::SeedOptions {
                items,
                seed,
                controllers,
                ..crate::seed::SeedOptions::default()
            };
            let report = crate::seed::seed(service, options, |done, total| {
                bar.set_length(total);
                bar.set_position(done);
            })
            .await;
            bar.finish_and_clear();
            let report = report?;
            println!("seeded {report}");
        }
        AdminCommand::Backup { .. }
        | AdminCommand::Restore { .. }
        | AdminCommand::Export { .. }
        | AdminCommand::Import { .. }
        | AdminCommand::Migrate { .. } => bail!("this command runs without an instance (run_archive_command)"),
    }
    Ok(())
}

fn parse_level(text: &str) -> anyhow::Result<PeerLevel> {
    PeerLevel::parse(text.trim())
        .ok_or_else(|| anyhow::anyhow!("--level must be quarantine, low, standard or high, not {text:?}"))
}

/// Delivers what this command queued right away, so that a peering starts without waiting for the server's next
/// pass; whatever fails here is retried by the running server.
async fn deliver_now(instance: &Instance) {
    match instance.federation_client().deliver_due(32, None).await {
        Ok(attempts) if attempts > 0 => eprintln!(
            "sent {attempts} queued activit{}",
            if attempts == 1 { "y" } else { "ies" }
        ),
        Ok(_) => {}
        Err(error) => eprintln!("could not deliver now ({error}); the running instance retries"),
    }
}

/// Asks on the terminal; anything but `yes` (or no terminal at all) refuses.
fn confirm(question: &str) -> anyhow::Result<()> {
    use std::io::{BufRead, IsTerminal, Write};
    if !std::io::stdin().is_terminal() {
        bail!("confirm the fingerprint with --fingerprint SHA256:… (no terminal to ask on)");
    }
    eprint!("{question}");
    std::io::stderr().flush().ok();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        bail!("not confirmed; nothing was pinned");
    }
    Ok(())
}

/// The header row of `peer list` and `peer show`.
const PEER_HEADER: &str = "realm\tstate\tlevel\tlast_contact\tlast_error\tpending_deliveries";

/// One peer as `peer list` and `peer show` print it: the status row (the state as shown, the newest failure of any
/// channel with its class and time, everything waiting for the peer), its keys, then its outbox and pull lines.
fn print_peer(view: &crate::service::federation::peering::PeerView, now: DateTime<Utc>) {
    let show = |instant: Option<DateTime<Utc>>| instant.map_or_else(|| "-".to_owned(), |value| value.to_rfc3339());
    let peer = &view.peer;
    let state = match (&peer.blocked_reason, peer.blocked_until) {
        (Some(reason), until) => format!(
            "{} ({reason}{})",
            view.state,
            until.map_or(String::new(), |until| format!(" until {}", until.to_rfc3339()))
        ),
        _ => view.state.to_string(),
    };
    let last_error = view.last_error.as_ref().map_or_else(
        || "-".to_owned(),
        |failure| format!("{} ({}) at {}", failure.class, failure.detail, failure.at.to_rfc3339()),
    );
    println!(
        "{}\t{}\t{}\t{}\t{}\t{}",
        peer.realm,
        state,
        peer.level,
        show(peer.last_contact_at),
        last_error,
        view.pending_deliveries
    );
    for key in &view.keys {
        println!(
            "  key\t{}\t{}\tpinned by {}",
            key.key_id, key.fingerprint, key.pinned_by
        );
    }
    println!("  queue\tpeering messages {}", view.pending_peering_messages);
    println!("  trust\t{}", trust_summary(view));
    if let Some(lag) = &view.replication {
        print_lag(lag, view.undelivered_events, now);
    }
}

/// A peer's instance trust in one line: `0.50 (level:standard, epoch 3)`, with its pin when it has one.
fn trust_summary(view: &crate::service::federation::peering::PeerView) -> String {
    let pin = view.trust_pin.map_or(String::new(), |pin| format!(", pinned {pin}"));
    match &view.trust {
        Some(trust) => format!(
            "{:.2} ({}{pin}, agreements {}, disagreements {}, epoch {})",
            trust.trust,
            trust.reason.to_text(),
            trust.agreements,
            trust.disagreements,
            trust.epoch
        ),
        None => format!("not computed yet{pin}"),
    }
}

/// What `peer pin` and `peer unpin` print: the peer and its trust.
fn print_peer_trust(view: &crate::service::federation::peering::PeerView) {
    println!("{}\t{}", view.peer.realm, trust_summary(view));
}

fn print_lag(lag: &crate::service::federation::peer_status::ReplicationLag, undelivered: i64, now: DateTime<Utc>) {
    let show = |instant: Option<DateTime<Utc>>| instant.map_or_else(|| "-".to_owned(), |value| value.to_rfc3339());
    let replication = &lag.replication;
    let oldest = lag
        .oldest_undelivered_at
        .filter(|_| undelivered > 0)
        .map_or_else(|| "-".to_owned(), |at| format!("{}s", (now - at).num_seconds().max(0)));
    let error = match (&replication.last_error_class, &replication.last_error) {
        (Some(class), Some(excerpt)) if replication.consecutive_failures > 0 => format!("{class} ({excerpt})"),
        _ => "-".to_owned(),
    };
    let next_retry = if replication.consecutive_failures > 0 {
        replication.next_attempt_at.to_rfc3339()
    } else {
        "-".to_owned()
    };
    println!(
        "  outbox\tundelivered {undelivered}\toldest {oldest}\tlast success {}\tfailing {error}\tnext retry {next_retry}\tdead letters {}",
        show(replication.last_success_at),
        lag.dead_letters
    );
    println!(
        "  pull\t{}\tlast {}\terror {}",
        replication
            .pull_cursor
            .map_or_else(|| "backfilling".to_owned(), |cursor| format!("cursor {cursor}")),
        show(replication.last_pull_at),
        replication.last_pull_error.as_deref().unwrap_or("-")
    );
}

async fn run_peer_command(instance: &Instance, command: PeerCommand) -> anyhow::Result<()> {
    let service = instance.service();
    match command {
        PeerCommand::Add {
            url,
            level,
            fingerprint,
            yes,
        } => {
            let level = parse_level(&level)?;
            let client = instance.federation_client();
            let url = client.peer_url(&url)?;
            let introduction = client.fetch_manifest(&url).await?;
            let fingerprints: Vec<String> = introduction
                .keys
                .iter()
                .map(|key| key.public_key.fingerprint())
                .collect();
            eprintln!("{} ({}) signs with:", introduction.realm, introduction.actor_url);
            for (key, print) in introduction.keys.iter().zip(&fingerprints) {
                eprintln!("  {print}  {}", key.key_id);
            }
            match fingerprint {
                Some(expected) if fingerprints.iter().any(|print| *print == expected.trim()) => {}
                Some(expected) => bail!(
                    "the peer's key fingerprint is not {expected}; nothing was pinned. Check with the peer's admin \
                     (interai admin federation identity on their side)"
                ),
                None if yes => bail!("--yes needs --fingerprint: a key is never pinned without being compared"),
                None => confirm(&format!(
                    "Pin this key and ask {} to peer? Type yes: ",
                    introduction.realm
                ))?,
            }
            let view = instance.federation().add_peer(&introduction, level).await?;
            deliver_now(instance).await;
            let view = instance.federation().peer_view(&view.peer.realm).await?;
            println!("{}\t{}", view.peer.realm, view.peer.state);
        }
        PeerCommand::List => {
            println!("{PEER_HEADER}");
            let now = service.now();
            for view in instance.federation().list_peers().await? {
                print_peer(&view, now);
            }
        }
        PeerCommand::Show { realm } => {
            let view = instance.federation().peer_view(&realm).await?;
            println!("{PEER_HEADER}");
            print_peer(&view, service.now());
        }
        PeerCommand::Approve {
            realm,
            level,
            fingerprint,
        } => {
            let level = level.as_deref().map(parse_level).transpose()?;
            let fingerprint = match fingerprint {
                Some(fingerprint) => Some(fingerprint),
                None => {
                    let view = instance.federation().peer_view(&realm).await?;
                    let provisional: Vec<&str> = view
                        .keys
                        .iter()
                        .filter(|key| key.pinned_by.is_provisional())
                        .map(|key| key.fingerprint.as_str())
                        .collect();
                    match provisional.first() {
                        Some(first) => {
                            eprintln!("{realm} signed its request with {}", provisional.join(", "));
                            confirm(&format!("Is this the fingerprint {realm}'s admin gave you? Type yes: "))?;
                            Some((*first).to_owned())
                        }
                        None => None,
                    }
                }
            };
            let view = instance
                .federation()
                .approve_peer(&realm, level, fingerprint.as_deref())
                .await?;
            deliver_now(instance).await;
            println!("{}\t{}", view.peer.realm, view.peer.state);
        }
        PeerCommand::Reject { realm } => {
            let view = instance.federation().reject_peer(&realm).await?;
            deliver_now(instance).await;
            println!("{}\t{}", view.peer.realm, view.peer.state);
        }
        PeerCommand::Block { realm, reason, until } => {
            let until = until
                .as_deref()
                .map(|text| parse_instant("--until", text, service.now()))
                .transpose()?;
            let view = instance.federation().block_peer(&realm, &reason, until).await?;
            println!("{}\t{}", view.peer.realm, view.peer.state);
        }
        PeerCommand::Unblock { realm } => {
            let view = instance.federation().unblock_peer(&realm).await?;
            println!("{}\t{}", view.peer.realm, view.peer.state);
        }
        PeerCommand::SetLevel { realm, level } => {
            let view = instance
                .federation()
                .set_peer_level(&realm, parse_level(&level)?)
                .await?;
            println!("{}\t{}", view.peer.realm, view.peer.level);
        }
        PeerCommand::Pin { realm, trust } => {
            let view = instance.federation().pin_peer_trust(&realm, trust).await?;
            print_peer_trust(&view);
        }
        PeerCommand::Unpin { realm } => {
            let view = instance.federation().unpin_peer_trust(&realm).await?;
            print_peer_trust(&view);
        }
        PeerCommand::Purge { realm } => {
            let report = instance.federation().purge_peer_evidence(&realm).await?;
            println!(
                "{}\t{} evidence records deleted\t{} targets assessed again",
                report.realm, report.records, report.targets
            );
        }
        PeerCommand::Remove { realm } => {
            instance.federation().remove_peer(&realm).await?;
            deliver_now(instance).await;
            println!("{realm}\tremoved");
        }
    }
    Ok(())
}

fn parse_id(argument: &str, text: &str) -> anyhow::Result<PublicId> {
    PublicId::parse(text.trim()).map_err(|error| anyhow::anyhow!("{argument}: {error}"))
}

/// Parses `--expires`: an RFC 3339 instant, or a count of days, hours or minutes from `now`.
pub fn parse_expiry(text: &str, now: DateTime<Utc>) -> anyhow::Result<DateTime<Utc>> {
    parse_instant("--expires", text, now)
}

/// Parses an instant argument: an RFC 3339 instant, or a count of days, hours or minutes from `now`.
fn parse_instant(argument: &str, text: &str, now: DateTime<Utc>) -> anyhow::Result<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Ok(instant.to_utc());
    }
    // A duration too long for the calendar is refused like one that does not parse (adding it would panic).
    match positive_duration(text).and_then(|delta| now.checked_add_signed(delta)) {
        Some(instant) => Ok(instant),
        None => bail!(
            "{argument}: expected an RFC 3339 time such as 2027-01-31T00:00:00Z or a positive duration such as 90d, 12h, 30m"
        ),
    }
}

/// Parses an age such as `30d`, `12h` or `90m`.
pub fn parse_age(argument: &str, text: &str) -> anyhow::Result<TimeDelta> {
    positive_duration(text.trim())
        .ok_or_else(|| anyhow::anyhow!("{argument}: expected a positive duration such as 30d, 12h or 90m"))
}

/// A positive count of days (`d`), hours (`h`) or minutes (`m`), read as the console reads it.
fn positive_duration(text: &str) -> Option<TimeDelta> {
    crate::service::paging::positive_duration(text)
}
