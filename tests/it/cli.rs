//! The `interai …` commands, run as a user would run them, against a fresh database.

use std::process::Output;

use crate::harness::{TestDatabase, TestInstance};

struct CommandLine<'a> {
    database: &'a TestDatabase,
}

impl CommandLine<'_> {
    fn run(&self, arguments: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_interai"))
            .args(arguments)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("INTERAI_DATA_DIR", self.database.directory.path())
            .env("INTERAI_DATABASE_URL", &self.database.url)
            .env("INTERAI_REALM", "cli.test")
            .env("INTERAI_LOG", "warn")
            .output()
            .expect("the interai binary runs")
    }

    fn succeed(&self, arguments: &[&str]) -> String {
        let output = self.run(arguments);
        assert!(
            output.status.success(),
            "{arguments:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf-8 output")
    }

    /// Creates the realm, as the first `serve` would.
    fn initialize(&self) {
        self.succeed(&["admin", "--init", "actor", "list"]);
    }

    /// Runs a command that must fail with exactly one line on standard error.
    fn fail(&self, arguments: &[&str]) -> String {
        let output = self.run(arguments);
        assert!(!output.status.success(), "{arguments:?} should have failed");
        let error = String::from_utf8(output.stderr).expect("utf-8 output");
        let lines: Vec<&str> = error.lines().filter(|line| !line.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "expected one clear line, got: {error}");
        assert!(lines[0].starts_with("error: "), "{error}");
        lines[0].to_owned()
    }
}

#[tokio::test]
async fn actors_and_keys_can_be_managed_from_the_command_line() {
    let database = TestDatabase::create().await;
    let cli = CommandLine { database: &database };
    cli.initialize();

    let alice = cli.succeed(&["admin", "actor", "create", "--type", "usr", "--name", "Alice"]);
    let alice = alice.trim();
    assert!(alice.starts_with("usr_"), "{alice}");
    let agent = cli.succeed(&[
        "admin",
        "actor",
        "create",
        "--type",
        "ai",
        "--name",
        "Research Agent",
        "--controller",
        alice,
    ]);
    let agent = agent.trim();
    assert!(agent.starts_with("ai_"), "{agent}");

    let listing = cli.succeed(&["admin", "actor", "list"]);
    assert!(listing.contains("Research Agent"));
    assert!(
        listing
            .lines()
            .any(|line| line.starts_with(agent) && line.contains(alice))
    );
    assert!(listing.contains("cli.test"), "the realm organization is listed");

    let output = cli.run(&[
        "admin",
        "key",
        "create",
        "--actor",
        agent,
        "--scopes",
        "read,usage",
        "--expires",
        "30d",
        "--label",
        "ci",
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let secret = String::from_utf8(output.stdout).expect("utf-8");
    assert!(secret.trim().starts_with("iak_"));
    assert!(String::from_utf8_lossy(&output.stderr).contains("shown only once"));

    let keys = cli.succeed(&["admin", "key", "list", "--actor", agent]);
    assert!(keys.contains("read,usage"));
    assert!(!keys.contains(secret.trim()), "secrets are never listed");
    let key_id = keys
        .lines()
        .nth(1)
        .and_then(|line| line.split('\t').next())
        .expect("one key row")
        .to_owned();
    assert!(cli.succeed(&["admin", "key", "revoke", &key_id]).contains("revoked"));
    let keys = cli.succeed(&["admin", "key", "list", "--actor", agent]);
    let row = keys.lines().nth(1).expect("key row");
    assert_ne!(row.split('\t').nth(5), Some("-"), "revoked_at is set: {row}");
}

#[tokio::test]
async fn bad_input_gets_one_clear_line_and_a_failure_exit() {
    let database = TestDatabase::create().await;
    let cli = CommandLine { database: &database };
    cli.initialize();
    assert!(
        cli.fail(&["admin", "actor", "create", "--type", "robot", "--name", "R"])
            .contains("--type")
    );
    assert!(
        cli.fail(&["admin", "actor", "create", "--type", "ai", "--name", "Orphan"])
            .contains("controller")
    );
    assert!(
        cli.fail(&[
            "admin",
            "actor",
            "create",
            "--type",
            "ai",
            "--name",
            "A",
            "--controller",
            "usr_nope"
        ])
        .contains("--controller")
    );
    assert!(
        cli.fail(&[
            "admin",
            "actor",
            "create",
            "--type",
            "ai",
            "--name",
            "A",
            "--controller",
            "usr_01j9zq3k5m8n2p4r6t8v0w2x4y"
        ])
        .contains("not_found")
    );
    let alice = cli.succeed(&["admin", "actor", "create", "--type", "usr", "--name", "Alice"]);
    assert!(
        cli.fail(&[
            "admin",
            "key",
            "create",
            "--actor",
            alice.trim(),
            "--scopes",
            "read,write"
        ])
        .contains("write")
    );
    assert!(
        cli.fail(&[
            "admin",
            "key",
            "create",
            "--actor",
            alice.trim(),
            "--expires",
            "tomorrow"
        ])
        .contains("--expires")
    );
    assert!(
        cli.fail(&["admin", "key", "revoke", "key_01j9zq3k5m8n2p4r6t8v0w2x4y"])
            .contains("not_found")
    );
    assert!(
        cli.fail(&["admin", "key", "list", "--actor", "cnt_x"])
            .contains("--actor")
    );
}

#[tokio::test]
async fn admin_commands_refuse_to_create_a_realm_unless_told_to() {
    let database = TestDatabase::create().await;
    let cli = CommandLine { database: &database };
    let data_dir = database.directory.path().display().to_string();
    let refusal = cli.fail(&["admin", "actor", "create", "--type", "usr", "--name", "Alice"]);
    assert!(refusal.contains("no interai realm"), "{refusal}");
    assert!(refusal.contains(&database.url), "the database is named: {refusal}");
    assert!(refusal.contains(&data_dir), "the data directory is named: {refusal}");
    assert!(refusal.contains("--init"), "the way out is named: {refusal}");
    assert!(
        !database.directory.path().join("admin.key").exists(),
        "no admin key was made for a realm nobody asked for"
    );
    if !database.is_postgres() {
        assert!(
            !database.directory.path().join("interai.db").exists(),
            "checking for the database did not create it"
        );
    }

    let listing = cli.succeed(&["admin", "actor", "list", "--init"]);
    assert!(listing.contains("cli.test"), "--init creates the realm: {listing}");
    assert!(database.directory.path().join("admin.key").exists());
    let again = cli.succeed(&["admin", "actor", "list"]);
    assert_eq!(again, listing, "later commands manage the same realm");
}

#[tokio::test]
async fn audit_records_can_be_pruned_from_the_command_line() {
    let alpha = TestInstance::start("cli.test").await;
    // Activity from long ago (the command line runs on the real clock, which is later than this).
    alpha.clock.set(
        chrono::DateTime::parse_from_rfc3339("2001-01-01T00:00:00Z")
            .expect("valid instant")
            .to_utc(),
    );
    let service = alpha.service();
    let author = crate::fixtures::agent(service, "author").await;
    crate::fixtures::publish_procedure(service, &author, "first", &[]).await;
    crate::fixtures::publish_procedure(service, &author, "second", &[]).await;
    let cli = CommandLine {
        database: &alpha.database,
    };
    assert!(
        cli.fail(&["admin", "audit", "prune", "--older-than", "30m"])
            .contains("61 minutes")
    );
    assert!(
        cli.fail(&["admin", "audit", "prune", "--older-than", "soon"])
            .contains("--older-than")
    );
    let pruned = cli.succeed(&["admin", "audit", "prune", "--older-than", "30d"]);
    assert!(pruned.starts_with("deleted 2 audit records"), "{pruned}");
    assert!(
        service
            .recent_calls(&author.caller.actor.id, 10)
            .await
            .expect("audit readable")
            .is_empty()
    );
    let pruned = cli.succeed(&["admin", "audit", "prune", "--older-than", "30d"]);
    assert!(pruned.starts_with("deleted 0 audit records"), "{pruned}");
}

#[tokio::test]
async fn an_invalid_setting_stops_the_start_naming_the_setting() {
    let database = TestDatabase::create().await;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_interai"))
        .args(["admin", "actor", "list"])
        .env("INTERAI_DATA_DIR", database.directory.path())
        .env("INTERAI_DATABASE_URL", &database.url)
        .env("INTERAI_WRITES_PER_HOUR", "lots")
        .output()
        .expect("runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("INTERAI_WRITES_PER_HOUR"));
}

#[tokio::test]
async fn serve_starts_answers_and_stops_cleanly_on_sigterm() {
    use std::io::BufRead;
    let database = TestDatabase::create().await;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_interai"))
        .arg("serve")
        .env("INTERAI_DATA_DIR", database.directory.path())
        .env("INTERAI_DATABASE_URL", &database.url)
        .env("INTERAI_LISTEN", "127.0.0.1:0")
        .env("INTERAI_LOG", "info")
        .env("INTERAI_LOG_FORMAT", "json")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let address = loop {
        let line = lines
            .next()
            .expect("serve logs until it listens")
            .expect("utf-8 log line");
        let event: serde_json::Value = serde_json::from_str(&line).expect("JSON log line");
        if event["fields"]["message"] == "serving" {
            break event["fields"]["address"].as_str().expect("address field").to_owned();
        }
    };
    let health = reqwest::get(format!("http://{address}/healthz"))
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200);
    let key = std::fs::read_to_string(database.directory.path().join("admin.key")).expect("admin key written");
    let whoami = reqwest::Client::new()
        .post(format!("http://{address}/mcp"))
        .header("authorization", format!("Bearer {}", key.trim()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#)
        .send()
        .await
        .expect("whoami");
    assert_eq!(whoami.status(), 200);
    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(terminated.success());
    let status = child.wait().expect("serve exits");
    assert!(status.success(), "a clean shutdown exits 0: {status}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|line| line.contains("stopped")), "{rest:?}");
}

#[tokio::test]
async fn serve_logs_one_plain_line_per_request_by_default() {
    use std::io::BufRead;
    let database = TestDatabase::create().await;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_interai"))
        .arg("serve")
        .env_remove("INTERAI_LOG")
        .env_remove("INTERAI_LOG_FORMAT")
        .env_remove("NO_COLOR")
        .env("INTERAI_DATA_DIR", database.directory.path())
        .env("INTERAI_DATABASE_URL", &database.url)
        .env("INTERAI_LISTEN", "127.0.0.1:0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut server = StopOnDrop(Some(child));
    let mut lines = std::io::BufReader::new(stderr).lines();
    let address = loop {
        let line = lines
            .next()
            .expect("serve logs until it listens")
            .expect("utf-8 log line");
        assert!(
            !line.contains('\u{1b}'),
            "no colour codes when standard error is not a terminal: {line:?}"
        );
        if line.contains(" serving ") {
            let address = line
                .split_whitespace()
                .find_map(|field| field.strip_prefix("address="))
                .expect("the serving line names its address");
            break address.to_owned();
        }
    };
    let key = std::fs::read_to_string(database.directory.path().join("admin.key")).expect("admin key written");
    let client = reqwest::Client::new();
    let requests = 4;
    for id in 0..requests {
        let response = client
            .post(format!("http://{address}/mcp"))
            .header("authorization", format!("Bearer {}", key.trim()))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"whoami","arguments":{{}}}}}}"#
            ))
            .send()
            .await
            .expect("whoami");
        assert_eq!(response.status(), 200);
        response.bytes().await.expect("whoami body");
    }
    let child = server.0.take().expect("still running");
    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(terminated.success());
    let output = child.wait_with_output().expect("serve exits");
    assert!(output.status.success(), "a clean shutdown exits 0");
    assert!(output.stdout.is_empty(), "logs go to standard error only");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let while_serving: Vec<&String> = rest.iter().take_while(|line| !line.contains("shutting down")).collect();
    assert_eq!(
        while_serving.len(),
        requests,
        "one line per request and nothing else: {while_serving:#?}"
    );
    for line in &while_serving {
        assert!(
            line.contains(" INFO ") && line.contains("method=POST path=/mcp status=200 duration_ms="),
            "{line}"
        );
    }
    assert!(
        rest.iter().all(|line| !line.contains('\u{1b}')),
        "no colour codes when standard error is not a terminal: {rest:?}"
    );
}

/// A server process that is killed if a failing assertion ends its test before the test stops it.
struct StopOnDrop(Option<std::process::Child>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::test]
async fn spaces_content_deletion_and_dead_letters_are_managed_from_the_command_line() {
    let database = TestDatabase::create().await;
    let cli = CommandLine { database: &database };
    cli.initialize();
    let local = cli.succeed(&["admin", "space", "create", "internal", "--visibility", "local"]);
    let fields: Vec<&str> = local.trim().split('\t').collect();
    assert_eq!(fields[1..], ["internal", "local"], "{local}");
    assert!(fields[0].starts_with("spc_"));
    cli.succeed(&[
        "admin",
        "space",
        "create",
        "shared",
        "--visibility",
        "federated",
        "--description",
        "What every peer sees",
    ]);
    let spaces = cli.succeed(&["admin", "space", "list"]);
    assert!(
        spaces
            .lines()
            .any(|line| line.contains("\tinternal\tlocal\tcli.test\t")),
        "{spaces}"
    );
    assert!(
        spaces
            .lines()
            .any(|line| line.contains("\tshared\tfederated\tcli.test\t")),
        "{spaces}"
    );
    let error = cli.fail(&["admin", "space", "create", "other", "--visibility", "public"]);
    assert!(error.contains("--visibility must be federated or local"), "{error}");
    let error = cli.fail(&["admin", "space", "create", "internal", "--visibility", "local"]);
    assert!(error.contains("exists already"), "{error}");

    let error = cli.fail(&[
        "admin",
        "content",
        "delete",
        "cnt_01jd0000000000000000000000",
        "--reason",
        "wrong",
    ]);
    assert!(error.contains("cnt_01jd0000000000000000000000"), "{error}");

    let letters = cli.succeed(&["admin", "federation", "dead-letters"]);
    assert_eq!(
        letters.trim(),
        "id\tpeer\tactivity_type\tactivity_id\trefused_at\terror"
    );
    let error = cli.fail(&["admin", "federation", "replay", "no-such-letter"]);
    assert!(error.contains("no-such-letter"), "{error}");
}

/// Runs `interai` with exactly the given `INTERAI_*` variables.
fn run_with(variables: &[(&str, &str)], arguments: &[&str]) -> Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_interai"));
    command
        .args(arguments)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("INTERAI_LOG", "warn");
    for (name, value) in variables {
        command.env(name, value);
    }
    command.output().expect("the interai binary runs")
}

/// The one line of standard error of a command that must fail.
fn one_error_line(output: &Output) -> String {
    assert!(!output.status.success(), "should have failed");
    let error = String::from_utf8_lossy(&output.stderr).into_owned();
    let lines: Vec<&str> = error.lines().filter(|line| !line.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one clear line, got: {error}");
    lines[0].to_owned()
}

#[tokio::test]
async fn admin_commands_read_the_realm_from_the_database_and_errors_say_each_thing_once() {
    let database = TestDatabase::create().await;
    let directory = database.directory.path().display().to_string();
    let place = [
        ("INTERAI_DATA_DIR", directory.as_str()),
        ("INTERAI_DATABASE_URL", database.url.as_str()),
    ];
    // A failure with a cause says the cause once.
    let line = one_error_line(&run_with(
        &[
            ("INTERAI_DATA_DIR", directory.as_str()),
            ("INTERAI_DATABASE_URL", "sqlite:///proc/no-such-directory/interai.db"),
        ],
        &["admin", "--init", "actor", "list"],
    ));
    assert_eq!(line.matches("No such file or directory").count(), 1, "{line}");

    // On PostgreSQL, a database that does not exist: its message once, without PostgreSQL's source line.
    if database.url.starts_with("postgres") {
        let missing = match database.url.rsplit_once('/') {
            Some((server, _)) => format!("{server}/interai_no_such_database"),
            None => panic!("a database URL has a path"),
        };
        let line = one_error_line(&run_with(
            &[
                ("INTERAI_DATA_DIR", directory.as_str()),
                ("INTERAI_DATABASE_URL", missing.as_str()),
            ],
            &["admin", "--init", "actor", "list"],
        ));
        assert_eq!(line.matches("does not exist").count(), 1, "{line}");
        assert!(!line.contains("at line"), "{line}");
    }

    let mut named = place.to_vec();
    named.push(("INTERAI_REALM", "cli.test"));
    assert!(run_with(&named, &["admin", "--init", "actor", "list"]).status.success());

    // Without INTERAI_REALM an admin command manages the realm its database holds.
    let output = run_with(&place, &["admin", "actor", "list"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let listing = String::from_utf8_lossy(&output.stdout);
    assert!(listing.contains("\tcli.test\t"), "the realm's organization: {listing}");

    // Another realm named explicitly is refused, in one line that says so once.
    let mut other = place.to_vec();
    other.push(("INTERAI_REALM", "other.test"));
    let line = one_error_line(&run_with(&other, &["admin", "actor", "list"]));
    assert_eq!(line.matches("cannot be renamed").count(), 1, "{line}");
    assert!(line.contains("cli.test") && line.contains("other.test"), "{line}");
}

#[tokio::test]
async fn a_mistyped_variable_and_an_unreadable_config_file_are_named_as_they_were_given() {
    let database = TestDatabase::create().await;
    let cli = CommandLine { database: &database };
    cli.initialize();
    let run = |arguments: &[&str], extra: &[(&str, &str)]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_interai"));
        command
            .args(arguments)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("INTERAI_DATA_DIR", database.directory.path())
            .env("INTERAI_DATABASE_URL", &database.url)
            .env("INTERAI_LOG", "warn");
        for (name, value) in extra {
            command.env(name, value);
        }
        let output = command.output().expect("the interai binary runs");
        assert!(!output.status.success(), "{arguments:?} {extra:?} should have failed");
        let error = String::from_utf8(output.stderr).expect("utf-8 output");
        let lines: Vec<String> = error
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(str::to_owned)
            .collect();
        assert_eq!(lines.len(), 1, "expected one clear line, got: {error}");
        lines[0].clone()
    };
    // A typo in a variable is refused as the same typo in the file is, naming the closest setting.
    let line = run(&["admin", "actor", "list"], &[("INTERAI_MAX_CONECTIONS", "30")]);
    assert!(line.contains("INTERAI_MAX_CONECTIONS"), "{line}");
    assert!(line.contains("did you mean INTERAI_MAX_CONNECTIONS?"), "{line}");
    // A file named with --config is named so, not as INTERAI_CONFIG.
    let line = run(
        &["--config", "/nonexistent/interai.toml", "admin", "actor", "list"],
        &[],
    );
    assert!(line.contains("--config /nonexistent/interai.toml"), "{line}");
    assert!(!line.contains("INTERAI_CONFIG"), "{line}");
    let line = run(
        &["admin", "actor", "list"],
        &[("INTERAI_CONFIG", "/nonexistent/interai.toml")],
    );
    assert!(line.contains("INTERAI_CONFIG /nonexistent/interai.toml"), "{line}");
    // A file's own mistake says where, on that one line.
    let file = database.directory.path().join("interai.toml");
    std::fs::write(&file, "writes_per_hour = \"many\"\n").expect("file written");
    let path = file.display().to_string();
    let line = run(&["--config", &path, "admin", "actor", "list"], &[]);
    assert!(line.contains(&format!("--config {path}: line 1, column 19:")), "{line}");
}
