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
