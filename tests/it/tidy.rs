//! Conventions turned into tests: file headers, module boundaries and the absence of global state.

use std::path::{Path, PathBuf};

fn rust_files_under(relative: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let mut files = Vec::new();
    let mut pending = vec![root];
    while let Some(directory) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn source(path: &Path) -> String {
    std::fs::read_to_string(path).expect("readable source")
}

/// The code of a file without its `#[cfg(test)]` modules and comments, so that tests may use what the code may not.
fn production_code(path: &Path) -> String {
    let text = source(path);
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or("").to_owned();
    before_tests
        .lines()
        .filter(|line| {
            let trimmed = line.trim_start();
            !trimmed.starts_with("//")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn offenders(files: &[PathBuf], forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let code = production_code(file);
        for needle in forbidden {
            if code.contains(needle) {
                found.push(format!("{} uses {needle}", file.display()));
            }
        }
    }
    found
}

#[test]
fn every_rust_file_starts_with_a_doc_line_saying_what_it_is_for() {
    let mut missing = Vec::new();
    for directory in ["src", "tests", "benches", "federation", "crates"] {
        for file in rust_files_under(directory) {
            if !source(&file).starts_with("//!") {
                missing.push(file.display().to_string());
            }
        }
    }
    assert!(missing.is_empty(), "files without a leading //! line: {missing:?}");
}

#[test]
fn only_the_store_names_sqlx() {
    let files: Vec<PathBuf> = rust_files_under("src")
        .into_iter()
        .filter(|file| !file.to_string_lossy().contains("/src/store/"))
        .collect();
    let found = offenders(&files, &["sqlx::", "use sqlx", "sqlx;"]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn the_service_layer_knows_no_transport() {
    let found = offenders(
        &rust_files_under("src/service"),
        &["axum", "rmcp", "StatusCode", "reqwest", "tower", "activity+json"],
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn adapters_and_background_loops_never_touch_the_store() {
    let mut files = rust_files_under("src/mcp");
    files.extend(rust_files_under("src/http"));
    files.extend(rust_files_under("src/apub"));
    // Background loops run use cases of the service like any adapter; their rules live there.
    files.extend(rust_files_under("src/workers"));
    let found = offenders(&files, &["crate::store", "sqlx::", "use sqlx"]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn there_is_no_process_global_mutable_state() {
    let found = offenders(
        &rust_files_under("src"),
        &[
            "static mut",
            "lazy_static!",
            "OnceLock<",
            "OnceCell<",
            "LazyLock<",
            "thread_local!",
        ],
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn nothing_is_left_unfinished_or_skipped() {
    let mut files = rust_files_under("src");
    files.extend(rust_files_under("tests"));
    let patterns = [
        concat!("todo", "!("),
        concat!("unimplemented", "!("),
        concat!("#[", "ignore"),
    ];
    let found = offenders(&files, &patterns);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn the_trust_engine_is_pure() {
    let found = offenders(
        &rust_files_under("src/trust"),
        &[
            "async ",
            ".await",
            "tokio",
            "std::fs",
            "std::net",
            "std::io",
            "std::thread",
            "std::env",
            "Utc::now",
            "SystemTime",
            "Instant::now",
            "sqlx",
            "serde",
            "rand::",
            "reqwest",
            "println!",
            "tracing::",
        ],
    );
    assert!(found.is_empty(), "{found:?}");
}

/// Every metric family `/metrics` can render is documented in docs/configuration.md, and every peer state an admin
/// can be shown is documented in docs/federation/peering.md.
#[test]
fn every_metric_family_and_every_peer_state_is_documented() {
    use interai::metrics::{ExpositionFormat, InboxOutcome, Metrics};
    let metrics = Metrics::new();
    // One sample of each family, so that every family renders.
    metrics.record_http_request(Some("/mcp"), 200);
    metrics.record_http_duration(Some("/mcp"), 0.01);
    metrics.record_tool_call("whoami", interai::metrics::TOOL_OUTCOME_OK);
    metrics.record_inbox(InboxOutcome::Accepted);
    metrics.record_delivery("delivered");
    metrics.record_peer_delivery("beta.test", "delivered", Some(0.01));
    metrics.record_intake_batch("single");
    metrics.set_replication_lag(&[("beta.test".to_owned(), 1, 1)]);
    metrics.set_inbox_queue_depth(1);
    metrics.refresh_process_metrics();
    let text = metrics.render_as(ExpositionFormat::PrometheusText);
    let documented = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md"))
        .expect("docs/configuration.md");
    let families: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(families.len() >= 15, "{text}");
    let undocumented: Vec<&&str> = families
        .iter()
        .filter(|family| !documented.contains(&format!("| `{family}` |")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "families missing from the table in docs/configuration.md: {undocumented:?}"
    );

    let peering = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/federation/peering.md"))
        .expect("docs/federation/peering.md");
    for state in interai::domain::ShownPeerState::ALL {
        assert!(
            peering.contains(&format!("| `{state}` |")),
            "the peer state {state} has no row in docs/federation/peering.md"
        );
        assert!(
            documented.contains(&format!("`{state}`")),
            "the peer state {state} is not named in docs/configuration.md's interai_peers row"
        );
    }
}

/// The statements of a migration folder, upper case, without comments, each with the file it is in.
fn migration_statements(folder: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations").join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("a migrations folder")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "sql"))
        .collect();
    files.sort();
    let mut statements = Vec::new();
    for file in files {
        let text: String = source(&file)
            .lines()
            .map(|line| line.split("--").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" ");
        let text = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_uppercase();
        let name = file
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        for statement in text.split(';') {
            statements.push((name.clone(), statement.trim().to_owned()));
        }
    }
    statements
}

/// The (parent, child) table pairs whose rows the migrations delete by `ON DELETE CASCADE`, after any renames.
fn delete_cascades(statements: &[(String, String)]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (_, statement) in statements {
        if let Some(rest) = statement.strip_prefix("ALTER TABLE ")
            && let Some((old, new)) = rest.split_once(" RENAME TO ")
        {
            for pair in &mut pairs {
                if pair.1 == old.trim() {
                    pair.1 = new.trim().to_owned();
                }
            }
            continue;
        }
        if let Some(rest) = statement.strip_prefix("DROP TABLE ") {
            let dropped = rest.trim_start_matches("IF EXISTS ").trim();
            pairs.retain(|(parent, child)| parent != dropped && child != dropped);
            continue;
        }
        let cascades = statement.matches("ON DELETE CASCADE").count();
        if cascades == 0 {
            continue;
        }
        let child = statement
            .strip_prefix("CREATE TABLE ")
            .and_then(|rest| rest.split([' ', '(']).next())
            .unwrap_or_else(|| panic!("an ON DELETE CASCADE outside a CREATE TABLE: {statement}"));
        let mut found = 0;
        for (before, _) in statement.match_indices(" ON DELETE CASCADE") {
            let parent = statement[..before]
                .rsplit("REFERENCES ")
                .next()
                .and_then(|rest| rest.split([' ', '(']).next())
                .unwrap_or_default();
            pairs.push((parent.to_owned(), child.to_owned()));
            found += 1;
        }
        assert_eq!(found, cascades, "{statement}");
    }
    pairs.sort();
    pairs.dedup();
    pairs
}

/// PostgreSQL combines a transaction's held writes into one statement when none names a table an earlier one
/// writes (`src/store/postgres_held.rs`), and each write says what it writes. That is true only while nothing in
/// the schema writes a table behind a statement's back: no trigger, rule, view or function, no cascading update
/// or `SET NULL`, and no `ON DELETE CASCADE` but those the store lists (a delete from the parent writes the child
/// too). SQLite sends held writes one after another, so its full-text index triggers see every earlier write; they
/// are the only triggers allowed there.
#[test]
fn the_migrations_write_no_table_behind_a_statement_s_back() {
    let forbidden = [
        "CREATE TRIGGER",
        "CREATE OR REPLACE TRIGGER",
        "CREATE CONSTRAINT TRIGGER",
        "CREATE RULE",
        "CREATE OR REPLACE RULE",
        "CREATE VIEW",
        "CREATE OR REPLACE VIEW",
        "CREATE MATERIALIZED VIEW",
        "CREATE RECURSIVE VIEW",
        "CREATE FUNCTION",
        "CREATE OR REPLACE FUNCTION",
        "CREATE PROCEDURE",
        "CREATE OR REPLACE PROCEDURE",
        "ON UPDATE CASCADE",
        "ON UPDATE SET",
        "ON DELETE SET",
    ];
    // SQLite's full-text index follows its documents through these triggers (migrations 0003, 0004, 0006).
    let sqlite_triggers = [
        "CREATE TRIGGER SEARCH_DOCUMENTS_AFTER_INSERT AFTER INSERT ON SEARCH_DOCUMENTS ",
        "CREATE TRIGGER SEARCH_DOCUMENTS_AFTER_DELETE AFTER DELETE ON SEARCH_DOCUMENTS ",
        "CREATE TRIGGER SEARCH_DOCUMENTS_AFTER_UPDATE AFTER UPDATE ON SEARCH_DOCUMENTS ",
    ];
    let allowed: Vec<(String, String)> = {
        let mut pairs: Vec<(String, String)> = interai::store::DELETE_CASCADES
            .iter()
            .flat_map(|(parent, children)| {
                children
                    .iter()
                    .map(|child| (parent.to_ascii_uppercase(), child.to_ascii_uppercase()))
            })
            .collect();
        pairs.sort();
        pairs
    };
    let mut found = Vec::new();
    let mut every_cascade = Vec::new();
    for folder in ["postgres", "sqlite"] {
        let statements = migration_statements(folder);
        assert!(statements.len() > 50, "{folder}: {} statements read", statements.len());
        for (file, statement) in &statements {
            for needle in forbidden {
                let allowed_trigger =
                    folder == "sqlite" && sqlite_triggers.iter().any(|trigger| statement.starts_with(trigger));
                if statement.contains(needle) && !allowed_trigger {
                    found.push(format!("{folder}/{file}: {needle}"));
                }
            }
        }
        let cascades = delete_cascades(&statements);
        let unlisted: Vec<&(String, String)> = cascades.iter().filter(|pair| !allowed.contains(pair)).collect();
        assert!(
            unlisted.is_empty(),
            "{folder}: cascades `store::DELETE_CASCADES` does not list: {unlisted:?}"
        );
        every_cascade.extend(cascades);
    }
    every_cascade.sort();
    every_cascade.dedup();
    assert_eq!(
        every_cascade, allowed,
        "`store::DELETE_CASCADES` lists only cascades a migration defines"
    );
    assert!(found.is_empty(), "{found:#?}");
}
