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
    files.extend(rust_files_under("src/console"));
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
    let unfinished = [concat!("todo", "!("), concat!("unimplemented", "!(")];
    let skipped = concat!("#[", "ignore");
    // The one exception: the browser tests need Chromium, and `cargo test` must not. They are ignored there, each
    // saying so in the same words, and `.ci/run` installs Chromium and runs them with `--ignored`.
    let browser_tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/main.rs");
    let needs_chromium = concat!("#[", "ignore = \"needs Chromium: .ci/run installs it and runs them\"]");
    let mut found = offenders(&files, &unfinished);
    for file in &files {
        let code = production_code(file);
        let skips = code.matches(skipped).count();
        let allowed = if *file == browser_tests {
            code.matches(needs_chromium).count()
        } else {
            0
        };
        if skips > allowed {
            found.push(format!("{} uses {skipped}", file.display()));
        }
    }
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

/// Where the code map lives: the table of its "Code map" section, whose `Path` and `May use` columns the test reads.
const ARCHITECTURE: &str = "docs/ARCHITECTURE.md";

/// What one row of the code map lets its modules use.
enum MayUse {
    /// `everything`: the command line, the binary and the tests, which put the other modules together.
    Everything,
    /// The names in backticks, separated by commas; `—` for none.
    Only(std::collections::BTreeSet<String>),
}

/// One row of the code map.
struct CodeMapRow {
    /// The row's line in docs/ARCHITECTURE.md, counted from 1.
    line: usize,
    /// The paths of its `Path` cell, such as `src/service/`.
    paths: Vec<String>,
    /// Its `May use` cell as written, and as read (`None` for rows outside `src/`, which the test does not check).
    cell: String,
    may_use: Option<MayUse>,
}

/// The code map: its rows, the row of each module of `src/`, and the names a `May use` cell may hold (every row's
/// own: a module of `src/`, or the last folder of another path, such as `federation` for the crate `federation/`).
struct CodeMap {
    rows: Vec<CodeMapRow>,
    row_of_module: std::collections::BTreeMap<String, usize>,
    names: std::collections::BTreeSet<String>,
}

/// The module of the crate a path under `src/` belongs to: `src/service/`, `src/service/mod.rs` and
/// `src/service/federation/inbox.rs` are `service`, `src/config.rs` is `config`, `src/lib.rs` is `lib`; `None` outside
/// `src/`.
fn module_of_source_path(path: &str) -> Option<String> {
    let inside = path.strip_prefix("src/")?;
    let first = inside.split('/').next().unwrap_or(inside);
    Some(first.strip_suffix(".rs").unwrap_or(first).to_owned())
}

/// The cells of one Markdown table line, trimmed.
fn table_cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(|cell| cell.trim().to_owned()).collect()
}

/// Reads a `May use` cell: `everything`, `—`, or names in backticks separated by commas.
fn read_may_use(cell: &str) -> Result<MayUse, String> {
    match cell {
        "everything" => Ok(MayUse::Everything),
        "—" => Ok(MayUse::Only(Default::default())),
        listed => listed
            .split(',')
            .map(|item| {
                let name = item.trim().strip_prefix('`').and_then(|rest| rest.strip_suffix('`'));
                match name {
                    Some(name) if !name.is_empty() && !name.contains('`') && !name.contains(' ') => Ok(name.to_owned()),
                    _ => Err(format!("{item:?} is not a name in backticks")),
                }
            })
            .collect::<Result<std::collections::BTreeSet<String>, String>>()
            .map(MayUse::Only),
    }
}

/// Reads the code map table of docs/ARCHITECTURE.md; panics saying what to fix where the table cannot be read.
fn read_code_map() -> CodeMap {
    let text = source(&Path::new(env!("CARGO_MANIFEST_DIR")).join(ARCHITECTURE));
    let lines: Vec<&str> = text.lines().collect();
    let section = lines
        .iter()
        .position(|line| line.trim() == "## Code map")
        .unwrap_or_else(|| panic!("{ARCHITECTURE} has no \"## Code map\" section"));
    let header_index = (section + 1..lines.len())
        .take_while(|&index| !lines[index].starts_with("## "))
        .find(|&index| lines[index].starts_with('|'))
        .unwrap_or_else(|| panic!("{ARCHITECTURE}: the \"Code map\" section has no table"));
    let header = table_cells(lines[header_index]);
    let column = |name: &str| {
        header.iter().position(|cell| cell == name).unwrap_or_else(|| {
            panic!(
                "{ARCHITECTURE}:{}: the code map table has no `{name}` column",
                header_index + 1
            )
        })
    };
    let (path_column, may_use_column) = (column("Path"), column("May use"));
    let mut map = CodeMap {
        rows: Vec::new(),
        row_of_module: Default::default(),
        names: Default::default(),
    };
    // The line after the header is the alignment row.
    for (index, line) in lines.iter().enumerate().skip(header_index + 2) {
        if !line.starts_with('|') {
            break;
        }
        let line_number = index + 1;
        let cells = table_cells(line);
        assert_eq!(
            cells.len(),
            header.len(),
            "{ARCHITECTURE}:{line_number}: a code map row with {} cells under a header of {} (a `|` inside a cell?)",
            cells.len(),
            header.len()
        );
        let paths: Vec<String> = cells[path_column]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect();
        assert!(
            !paths.is_empty(),
            "{ARCHITECTURE}:{line_number}: the `Path` cell names no path in backticks"
        );
        let modules: Vec<String> = paths.iter().filter_map(|path| module_of_source_path(path)).collect();
        for path in &paths {
            let name = module_of_source_path(path).unwrap_or_else(|| {
                let folder = path.trim_end_matches('/');
                folder.rsplit('/').next().unwrap_or(folder).to_owned()
            });
            map.names.insert(name);
        }
        let cell = cells[may_use_column].clone();
        // Rows outside `src/` (the workspace's other crates, migrations, templates, tests, benchmarks) describe what
        // they rely on in words: no `use crate::` line of theirs can break them.
        let may_use = if modules.is_empty() {
            None
        } else {
            Some(read_may_use(&cell).unwrap_or_else(|problem| {
                panic!(
                    "{ARCHITECTURE}:{line_number}: the `May use` cell of {paths:?} must be `everything`, `—`, or names in \
                     backticks separated by commas, such as `domain`, `store` ({problem})"
                )
            }))
        };
        let row_index = map.rows.len();
        for module in modules {
            if let Some(earlier) = map.row_of_module.insert(module.clone(), row_index)
                && earlier != row_index
            {
                panic!(
                    "{ARCHITECTURE}:{line_number}: the module `{module}` has a second row (the first is line {})",
                    map.rows[earlier].line
                );
            }
        }
        map.rows.push(CodeMapRow {
            line: line_number,
            paths,
            cell,
            may_use,
        });
    }
    map
}

/// The modules of the crate a file's code names through `crate::` (in `use` lines and inline paths alike, each
/// module of a `crate::{…}` group included), with the line that names each. Comment lines are left out, and so is a
/// trailing `#[cfg(test)]` module, as in the checks above: tests may reach further than the code.
fn crate_modules_named(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let opens_a_module = |line: &str| {
        let line = line.trim();
        let line = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        line.starts_with("mod ") && line.ends_with('{')
    };
    let test_module = (0..lines.len())
        .find(|&index| {
            lines[index].trim() == "#[cfg(test)]" && lines.get(index + 1).copied().is_some_and(opens_a_module)
        })
        .unwrap_or(lines.len());
    // Blank comment lines instead of dropping them, so that byte offsets still give line numbers.
    let code: String = lines[..test_module]
        .iter()
        .map(|line| if line.trim_start().starts_with("//") { "" } else { *line })
        .collect::<Vec<_>>()
        .join("\n");
    let identifier = |text: &str| -> String {
        text.chars()
            .take_while(|character| character.is_ascii_alphanumeric() || *character == '_')
            .collect()
    };
    let line_of = |offset: usize| code[..offset].matches('\n').count() + 1;
    let mut named = Vec::new();
    for (offset, _) in code.match_indices("crate::") {
        // `foocrate::` is another name; `$crate::` (a macro's path to this crate) is this crate.
        let before = code[..offset].chars().next_back();
        if before.is_some_and(|character| character.is_ascii_alphanumeric() || character == '_') {
            continue;
        }
        let after_offset = offset + "crate::".len();
        let after = &code[after_offset..];
        let Some(group) = after.strip_prefix('{') else {
            named.push((line_of(offset), identifier(after)));
            continue;
        };
        // A group: the first name of every item at its top level, up to its closing brace, each on its own line.
        let group_offset = after_offset + 1;
        let mut depth = 0usize;
        let mut in_item = false;
        for (position, character) in group.char_indices() {
            match character {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => in_item = false,
                character if depth == 0 && !in_item && !character.is_whitespace() => {
                    in_item = true;
                    named.push((line_of(group_offset + position), identifier(&group[position..])));
                }
                _ => {}
            }
        }
    }
    named.retain(|(_, module)| !module.is_empty() && module != "self");
    named
}

#[test]
fn the_code_map_reader_finds_every_crate_path() {
    let text = "//! A file.\n\
                use crate::domain::Id;\n\
                // use crate::commented_out;\n\
                use crate::{\n    clock::Clock,\n    store::{self, Conn},\n    trust,\n};\n\
                fn f() { let _ = crate::metrics::Metrics::new(); let _ = $crate::seed::x; let _ = mycrate::no; }\n\
                #[cfg(test)]\n\
                fn helper() -> crate::http::Thing {}\n\
                #[cfg(test)]\n\
                mod tests {\n    use crate::instance::Instance;\n}\n";
    let named = crate_modules_named(text);
    let expected: Vec<(usize, String)> = [
        (2, "domain"),
        (5, "clock"),
        (6, "store"),
        (7, "trust"),
        (9, "metrics"),
        (9, "seed"),
        (11, "http"),
    ]
    .into_iter()
    .map(|(line, module)| (line, module.to_owned()))
    .collect();
    assert_eq!(named, expected);
    assert_eq!(
        module_of_source_path("src/service/federation/inbox.rs").as_deref(),
        Some("service")
    );
    assert_eq!(module_of_source_path("src/config.rs").as_deref(), Some("config"));
    assert_eq!(module_of_source_path("federation/src/lib.rs"), None);
    assert!(matches!(read_may_use("everything"), Ok(MayUse::Everything)));
    assert!(matches!(read_may_use("—"), Ok(MayUse::Only(names)) if names.is_empty()));
    assert!(matches!(read_may_use("`domain`, `store`"), Ok(MayUse::Only(names)) if names.len() == 2));
    assert!(read_may_use("`domain` and `store`").is_err());
    assert!(read_may_use("constants of `service`").is_err());
}

/// The code map of docs/ARCHITECTURE.md says which module may use which; every module of `src/` has a row, and
/// uses, through `crate::`, only the modules its row's `May use` cell names.
#[test]
fn every_module_uses_only_what_its_code_map_row_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = read_code_map();
    let mut problems = Vec::new();
    for file in rust_files_under("src") {
        let relative = file
            .strip_prefix(root)
            .expect("under the manifest directory")
            .display()
            .to_string();
        let module = module_of_source_path(&relative).expect("a file under src/");
        let Some(&row_index) = map.row_of_module.get(&module) else {
            problems.push(format!(
                "{relative}: the module `{module}` has no row in {ARCHITECTURE}'s code map: add one (its path, what it \
                 holds, and the modules it may use)"
            ));
            continue;
        };
        let row = &map.rows[row_index];
        let Some(MayUse::Only(allowed)) = &row.may_use else {
            continue;
        };
        for (line, used) in crate_modules_named(&source(&file)) {
            if used != module && !allowed.contains(&used) {
                problems.push(format!(
                    "{relative}:{line}: the module `{module}` uses `{used}`, which its row ({ARCHITECTURE}:{}, May use: \
                     {}) does not name: reach it through a module the row names, or, if `{module}` should depend on \
                     `{used}`, add `{used}` to that cell",
                    row.line, row.cell
                ));
            }
        }
    }
    for row in &map.rows {
        if let Some(MayUse::Only(allowed)) = &row.may_use {
            for name in allowed.iter().filter(|name| !map.names.contains(*name)) {
                problems.push(format!(
                    "{ARCHITECTURE}:{}: the `May use` cell names `{name}`, which has no row of its own (misspelt, or \
                     a module that was moved or removed?)",
                    row.line
                ));
            }
        }
        for path in row.paths.iter().filter(|path| path.starts_with("src/")) {
            if !root.join(path).exists() {
                problems.push(format!(
                    "{ARCHITECTURE}:{}: the row's path `{path}` does not exist: update or remove the row",
                    row.line
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{ARCHITECTURE}'s code map and the code disagree:\n{}",
        problems.join("\n")
    );
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
