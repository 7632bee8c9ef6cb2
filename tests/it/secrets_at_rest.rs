//! No secret at rest: whichever way a secret comes in (a request that fails validation before the content scan, an
//! idempotency key, a search query, the client's name, a key hidden by Unicode tricks), it is nowhere in the
//! database afterwards. Each test reads every text of every row of every table (and on SQLite the raw database
//! files) and looks for the secrets. Also: the data directory and the database files are readable only by their
//! owner.

use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use sqlx::Connection;

use crate::fixtures::{Agent, agent};
use crate::harness::ServedInstance;
use crate::mcp_client::{McpClient, call, connect_initialize};

/// The secrets, built at run time so that this file does not look like a leak to other scanners. Each comes with
/// the distinctive part to look for in the database.
struct Secret {
    /// The text sent.
    text: String,
    /// A part of it that nothing else contains.
    needle: String,
}

fn secret(parts: &[&str], needle: &str) -> Secret {
    Secret {
        text: parts.concat(),
        needle: needle.to_owned(),
    }
}

fn private_key() -> Secret {
    secret(
        &[
            "-----BEGIN RSA ",
            "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA9xKq3Lw7Zr2NbT5uVy8PdC1aFhJ6mR4sQ0eW\n-----END RSA PRIVATE KEY-----",
        ],
        "MIIEpAIBAAKCAQEA9xKq3Lw7Zr2NbT5uVy8PdC1aFhJ6mR4sQ0eW",
    )
}

fn aws_access_key() -> Secret {
    secret(&["AKIA", "R7TQ2MZX4WJ9KD3B"], "R7TQ2MZX4WJ9KD3B")
}

fn github_token() -> Secret {
    secret(
        &["ghp_", "U8JZpDE0iGXlD6gNCFbaEPFjbD0kH8Oool8D"],
        "U8JZpDE0iGXlD6gNCFbaEPFjbD0kH8Oool8D",
    )
}

fn jwt() -> Secret {
    secret(
        &[
            "eyJhbGciOiJIUzI1NiJ9",
            ".eyJzdWIiOiJzZWNyZXQtYWdlbnQtNzcifQ",
            ".Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5n",
        ],
        "eyJzdWIiOiJzZWNyZXQtYWdlbnQtNzcifQ",
    )
}

fn email_address() -> Secret {
    secret(&["mara.kowalski.secret", "@gmail.com"], "mara.kowalski.secret")
}

fn card_number() -> Secret {
    secret(&["4539", "148803436467"], "4539148803436467")
}

/// Every secret of the tests, for the final look through the database.
fn all_needles() -> Vec<String> {
    let mut needles: Vec<String> = [
        private_key(),
        aws_access_key(),
        github_token(),
        jwt(),
        email_address(),
        card_number(),
    ]
    .into_iter()
    .map(|secret| secret.needle)
    .collect();
    needles.extend(
        [
            "4539 1488 0343 6467",
            "４５３９",
            "536-22-8451",
            "DE44500105175407324931",
            "DE44 5001 0517 5407 3249 31",
        ]
        .map(str::to_owned),
    );
    needles
}

/// Every text of every row of every table, lowercased; on SQLite also the raw bytes of the database and its WAL,
/// so that text in index pages and in rows no query shows (deleted ones) counts too.
async fn everything_stored(served: &ServedInstance) -> String {
    let url = served.database_url();
    let mut stored = String::new();
    if url.starts_with("postgres") {
        let mut connection = sqlx::PgConnection::connect(url).await.expect("connect");
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT table_name::TEXT FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
        )
        .fetch_all(&mut connection)
        .await
        .expect("tables");
        assert!(tables.iter().any(|table| table == "mcp_calls"));
        for table in tables {
            let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT row_to_json(t)::TEXT FROM \"{table}\" AS t"
            )))
            .fetch_all(&mut connection)
            .await
            .expect("rows");
            stored.push_str(&rows.join("\n"));
            stored.push('\n');
        }
        connection.close().await.ok();
    } else {
        let mut connection = sqlx::SqliteConnection::connect(url).await.expect("connect");
        let tables: Vec<String> = sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(&mut connection)
            .await
            .expect("tables");
        assert!(tables.iter().any(|table| table == "mcp_calls"));
        for table in tables {
            let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?)")
                .bind(&table)
                .fetch_all(&mut connection)
                .await
                .expect("columns");
            if columns.is_empty() {
                continue;
            }
            let row = columns
                .iter()
                .map(|column| format!("quote(\"{column}\")"))
                .collect::<Vec<_>>()
                .join(" || char(31) || ");
            let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT {row} FROM \"{table}\"")))
                .fetch_all(&mut connection)
                .await
                .expect("rows");
            stored.push_str(&rows.join("\n"));
            stored.push('\n');
        }
        connection.close().await.ok();
        for file in ["interai.db", "interai.db-wal"] {
            if let Ok(bytes) = std::fs::read(served.data_dir().join(file)) {
                stored.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
    }
    stored.to_lowercase()
}

async fn assert_no_secret_stored(served: &ServedInstance) {
    let stored = everything_stored(served).await;
    for needle in all_needles() {
        assert!(
            !stored.contains(&needle.to_lowercase()),
            "{needle} is stored in the database"
        );
    }
}

async fn client_for(served: &ServedInstance, agent: &Agent) -> McpClient {
    connect_initialize(&served.mcp_url(), Some(&agent.key))
        .await
        .expect("client connects")
}

/// The audit rows of an agent, oldest first, as JSON text.
async fn audit_of(served: &ServedInstance, agent: &Agent) -> Vec<(String, String, Value, String)> {
    let mut calls = served
        .service
        .recent_calls(&agent.caller.actor.id, 100)
        .await
        .expect("audit readable");
    calls.reverse();
    calls
        .into_iter()
        .map(|call| (call.tool, call.outcome, call.request, call.result_summary))
        .collect()
}

#[tokio::test]
async fn a_secret_in_a_request_that_fails_validation_before_the_scan_is_not_stored() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author).await;
    let key = private_key().text;

    // A title one character too long, an unknown field, a wrong type: each fails before the content scan.
    let too_long = call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "t".repeat(301), "body_markdown": key }),
    )
    .await;
    too_long.err("validation_failed");
    call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "Deploy keys", "body_markdown": key, "colour": "blue" }),
    )
    .await
    .err("validation_failed");
    call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "Deploy keys", "body_markdown": key, "claims": "one" }),
    )
    .await
    .err("validation_failed");
    // The secret is the value of the wrong type or the unknown field's name: the error message quotes it.
    call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "Deploy keys", "tags": github_token().text }),
    )
    .await
    .err("validation_failed");
    call(
        &client,
        "search",
        json!({ "query": "deploy keys", aws_access_key().text: true }),
    )
    .await
    .err("validation_failed");
    call(&client, "search", json!({ "query": "deploy", "limit": jwt().text }))
        .await
        .err("validation_failed");
    // A malformed ID fails before the note is scanned.
    call(
        &client,
        "report_usage",
        json!({ "target": "cnt_nope", "usage_type": "test", "result": "success", "note": email_address().text }),
    )
    .await
    .err("validation_failed");
    // A card number as a JSON number of the wrong type.
    call(
        &client,
        "rate",
        json!({ "target": "cnt_nope", "dimension": "speed", "score": 4_539_148_803_436_467_u64 }),
    )
    .await
    .err("validation_failed");

    assert_no_secret_stored(&served).await;
    // The calls are still audited, with the rule in place of the secret and the message kept where it can be.
    let audit = audit_of(&served, &author).await;
    let failed: Vec<_> = audit
        .iter()
        .filter(|(_, outcome, _, _)| outcome == "validation_failed")
        .collect();
    assert_eq!(failed.len(), 8, "{audit:?}");
    let (_, _, request, summary) = failed[0];
    assert_eq!(request["body_markdown"], "[redacted: private_key]");
    assert_eq!(request["content_type"], "note");
    assert!(summary.contains("title"), "{summary}");
    let (_, _, request, _) = failed[3];
    assert_eq!(request["tags"], "[redacted: api_token]");
    let (_, _, request, summary) = failed[4];
    assert!(request.get("[redacted key: cloud_access_key]").is_some(), "{request}");
    assert!(summary.contains("[redacted: cloud_access_key]"), "{summary}");
    let (_, _, _, summary) = failed[5];
    assert!(summary.contains("[redacted: jwt]"), "{summary}");
    client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn idempotency_keys_that_are_secrets_are_refused_and_not_stored() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author).await;
    let publish = |key: String| json!({ "content_type": "note", "title": "Retry safely", "idempotency_key": key });

    // Every write tool says what a key may look like.
    let tools = client.list_tools(None).await.expect("tools/list").tools;
    for name in ["publish", "report_usage", "review", "rate", "submit_experience"] {
        let tool = tools.iter().find(|tool| tool.name == name).expect("listed");
        let key = &tool.input_schema["properties"]["idempotency_key"];
        assert_eq!(key["pattern"], "^[A-Za-z0-9._:-]{1,128}$", "{name}: {key}");
        assert_eq!(key["maxLength"], 128, "{name}");
        assert_eq!(key["minLength"], 1, "{name}");
    }

    for key in [aws_access_key().text, jwt().text, github_token().text] {
        let error = call(&client, "publish", publish(key)).await.err("content_rejected");
        assert_eq!(error["details"]["field"], "idempotency_key");
    }
    for key in [email_address().text, "4539 1488 0343 6467".to_owned()] {
        let error = call(&client, "publish", publish(key)).await.err("validation_failed");
        assert_eq!(error["details"]["field"], "idempotency_key");
    }
    let error = call(&client, "publish", publish(card_number().text))
        .await
        .err("content_rejected");
    assert_eq!(error["details"]["rule"], "card_number");
    call(&client, "publish", publish("k".repeat(129)))
        .await
        .err("validation_failed");
    // Keys of the safe alphabet work as before.
    let first = call(
        &client,
        "publish",
        publish("550e8400-e29b-41d4-a716-446655440000".to_owned()),
    )
    .await
    .ok();
    let replayed = call(
        &client,
        "publish",
        publish("550e8400-e29b-41d4-a716-446655440000".to_owned()),
    )
    .await
    .ok();
    assert_eq!(first["id"], replayed["id"]);

    assert_no_secret_stored(&served).await;
    client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn search_queries_and_read_arguments_with_secrets_are_redacted_in_the_audit() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author).await;
    let first = call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "Rotate deploy keys" }),
    )
    .await
    .ok();
    let second = call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "Pin deploy keys" }),
    )
    .await
    .ok();

    let query = format!("deploy keys {}", github_token().text);
    call(&client, "search", json!({ "query": query })).await.ok();
    call(
        &client,
        "search",
        json!({ "query": format!("rotate {}", email_address().text) }),
    )
    .await
    .ok();
    // compare repeats its context, lowercased, in its summary.
    call(
        &client,
        "compare",
        json!({ "ids": [first["id"], second["id"]], "context": { "account": aws_access_key().text } }),
    )
    .await
    .ok();

    assert_no_secret_stored(&served).await;
    let audit = audit_of(&served, &author).await;
    let searches: Vec<_> = audit.iter().filter(|(tool, _, _, _)| tool == "search").collect();
    assert_eq!(searches.len(), 2);
    assert_eq!(searches[0].2["query"], "[redacted: api_token]");
    assert_eq!(searches[1].2["query"], "[redacted: email_address]");
    let (_, outcome, request, summary) = audit
        .iter()
        .find(|(tool, _, _, _)| tool == "compare")
        .expect("compare audited");
    assert_eq!(outcome, "ok");
    assert_eq!(request["context"]["account"], "[redacted: cloud_access_key]");
    // Its summary named the context, with the key lowercased where no rule sees it: withheld, the rule kept.
    assert_eq!(
        summary,
        "[withheld: it repeated input matching the cloud_access_key rule]"
    );
    client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn a_client_name_carrying_a_secret_is_not_stored() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(served.mcp_url());
    transport_config = transport_config.auth_header(author.key.clone());
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(
            format!("agent {}", github_token().text),
            format!("1.0 {}", aws_access_key().text),
        ),
    )
    .serve(StreamableHttpClientTransport::<reqwest::Client>::from_config(
        transport_config,
    ))
    .await
    .expect("client connects");
    call(&client, "whoami", json!({})).await.ok();

    assert_no_secret_stored(&served).await;
    let calls = served
        .service
        .recent_calls(&author.caller.actor.id, 10)
        .await
        .expect("audit readable");
    let initialize = calls
        .iter()
        .find(|call| call.tool == "initialize")
        .expect("the handshake is audited");
    assert_eq!(initialize.client_name.as_deref(), Some("[redacted: api_token]"));
    assert_eq!(
        initialize.client_version.as_deref(),
        Some("[redacted: cloud_access_key]")
    );
    assert_eq!(initialize.request["clientInfo"]["name"], "[redacted: api_token]");
    client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn secrets_hidden_by_unicode_or_of_the_new_kinds_are_rejected_and_not_stored() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author).await;
    let key = aws_access_key().text;
    let split_key = format!("aws_access_key_id = {}\u{200B}{}", &key[..4], &key[4..]);
    let fullwidth_card = "カード ４５３９ １４８８ ０３４３ ６４６７";
    let publish = |field: &str, text: &str| {
        let mut request = json!({ "content_type": "note", "title": "Payment setup" });
        request[field] = json!(text);
        request
    };
    for (field, text, rule) in [
        ("body_markdown", split_key.as_str(), "cloud_access_key"),
        ("summary", fullwidth_card, "card_number"),
        ("body_markdown", "Employee SSN: 536-22-8451", "national_id"),
        (
            "summary",
            "Pay to DE44 5001 0517 5407 3249 31 by Friday",
            "bank_account",
        ),
        ("body_markdown", "IBAN DE44500105175407324931", "bank_account"),
    ] {
        let error = call(&client, "publish", publish(field, text))
            .await
            .err("content_rejected");
        assert_eq!(error["details"]["rule"], rule, "{text}");
        assert_eq!(error["details"]["field"], field);
    }
    // Tags are stored lowercased; the key is found before that.
    let error = call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "Payment setup", "tags": [key] }),
    )
    .await
    .err("content_rejected");
    assert_eq!(error["details"]["field"], "tags/0");

    assert_no_secret_stored(&served).await;
    client.cancel().await.ok();
    served.stop().await;
}

#[cfg(unix)]
mod permissions {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    use std::sync::Arc;

    use interai::clock::ManualClock;
    use interai::config::Config;
    use interai::instance::Instance;

    use crate::harness::{TestDatabase, test_epoch};

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
    }

    /// A configuration whose data directory does not exist yet (below the test's temporary directory), with the
    /// SQLite database inside it.
    fn config_in_new_data_dir(database: &TestDatabase) -> Config {
        let data_dir = database.directory.path().join("data");
        let url = if database.is_postgres() {
            database.url.clone()
        } else {
            format!("sqlite://{}", data_dir.join("interai.db").display())
        };
        Config::for_realm("alpha.test", &url, &data_dir)
    }

    async fn open(config: Config) -> Instance {
        let instance = Instance::open(config, Arc::new(ManualClock::starting_at(test_epoch())))
            .await
            .expect("instance opens");
        instance.bootstrap().await.expect("instance bootstraps");
        instance
    }

    #[tokio::test]
    async fn the_data_directory_and_database_files_are_readable_only_by_their_owner() {
        let database = TestDatabase::create().await;
        let config = config_in_new_data_dir(&database);
        let data_dir = config.data_dir.clone();
        let instance = open(config).await;
        assert_eq!(mode_of(&data_dir), 0o700);
        assert_eq!(mode_of(&data_dir.join("admin.key")), 0o600);
        if !database.is_postgres() {
            // The bootstrap wrote through the WAL, and the shared-memory file exists while the database is open.
            for file in ["interai.db", "interai.db-wal", "interai.db-shm"] {
                assert_eq!(mode_of(&data_dir.join(file)), 0o600, "{file}");
            }
        }
        instance.close().await;
    }

    #[tokio::test]
    async fn wider_modes_left_from_before_are_narrowed_at_start() {
        let database = TestDatabase::create().await;
        let config = config_in_new_data_dir(&database);
        let data_dir = config.data_dir.clone();
        let instance = open(config.clone()).await;
        instance.close().await;
        std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let files = ["interai.db", "interai.db-wal", "interai.db-shm"];
        for file in files {
            let path = data_dir.join(file);
            if path.exists() {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
            }
        }
        let instance = open(config).await;
        assert_eq!(mode_of(&data_dir), 0o700);
        if !database.is_postgres() {
            for file in files {
                assert_eq!(mode_of(&data_dir.join(file)), 0o600, "{file}");
            }
        }
        instance.close().await;
    }
}
