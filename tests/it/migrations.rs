//! The two migration folders stay in step: same versions and names, equivalent tables and columns.

use std::collections::BTreeMap;

use interai::store::Store;

use crate::harness::TestDatabase;

fn migration_files(folder: &str) -> Vec<String> {
    let path = format!("{}/migrations/{folder}", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&path)
        .expect("migration folder exists")
        .map(|entry| {
            entry
                .expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".sql"))
        .collect();
    names.sort();
    names
}

/// Tables and their columns as declared by `CREATE TABLE` and `ALTER TABLE … ADD COLUMN` / `DROP COLUMN` in a folder.
fn declared_schema(folder: &str) -> BTreeMap<String, Vec<String>> {
    let mut tables: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for name in migration_files(folder) {
        let text = std::fs::read_to_string(format!("{}/migrations/{folder}/{name}", env!("CARGO_MANIFEST_DIR")))
            .expect("readable migration");
        let without_comments: String = text
            .lines()
            .map(|line| line.split("--").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        for statement in without_comments.split(';') {
            let words: Vec<&str> = statement.split_whitespace().collect();
            let upper: Vec<String> = words.iter().map(|word| word.to_ascii_uppercase()).collect();
            if upper.len() > 2 && upper[0] == "CREATE" && upper[1] == "TABLE" {
                let table_name = words[2].trim_end_matches('(').to_owned();
                let body_start = statement.find('(').expect("table body");
                let body = &statement[body_start + 1..statement.rfind(')').expect("table body end")];
                let mut columns = Vec::new();
                let mut depth = 0_i32;
                let mut current = String::new();
                for character in body.chars() {
                    match character {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        ',' if depth == 0 => {
                            columns.push(std::mem::take(&mut current));
                            continue;
                        }
                        _ => {}
                    }
                    current.push(character);
                }
                columns.push(current);
                let column_names = columns
                    .iter()
                    .filter_map(|definition| definition.split_whitespace().next())
                    .filter(|first| {
                        !["PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT"]
                            .contains(&first.to_ascii_uppercase().as_str())
                    })
                    .map(str::to_owned)
                    .collect();
                tables.insert(table_name, column_names);
            } else if upper.len() > 2 && upper[0] == "DROP" && upper[1] == "TABLE" {
                tables.remove(words[2]);
            } else if upper.len() > 5
                && upper[0] == "ALTER"
                && upper[1] == "TABLE"
                && upper[3] == "RENAME"
                && upper[4] == "TO"
            {
                let columns = tables.remove(words[2]).unwrap_or_default();
                tables.insert(words[5].to_owned(), columns);
            } else if upper.len() > 5
                && upper[0] == "ALTER"
                && upper[1] == "TABLE"
                && upper[3] == "ADD"
                && upper[4] == "COLUMN"
            {
                tables.entry(words[2].to_owned()).or_default().push(words[5].to_owned());
            } else if upper.len() > 5
                && upper[0] == "ALTER"
                && upper[1] == "TABLE"
                && upper[3] == "DROP"
                && upper[4] == "COLUMN"
                && let Some(columns) = tables.get_mut(words[2])
            {
                columns.retain(|column| column != words[5]);
            }
        }
    }
    for columns in tables.values_mut() {
        columns.sort();
    }
    tables
}

/// Columns only one backend has, each for a reason of that backend's own.
const BACKEND_SPECIFIC_COLUMNS: &[(&str, &str, &str)] = &[(
    "sqlite",
    "search_documents",
    // The explicit rowid SQLite's external-content FTS index refers to; PostgreSQL indexes the tsvector in the row.
    "document_rowid",
)];

/// Tables only one backend has, each for a reason of that backend's own.
const BACKEND_SPECIFIC_TABLES: &[(&str, &str)] = &[(
    "postgres",
    // Search vectors in a narrow table of their own, kept in the row with each document's change number and
    // trust target; SQLite's FTS5 index and its rowids play that part.
    "search_vectors",
)];

/// The declared schema without the tables and columns that belong to this backend alone.
fn comparable_schema(folder: &str) -> BTreeMap<String, Vec<String>> {
    let mut tables = declared_schema(folder);
    for (backend, table) in BACKEND_SPECIFIC_TABLES {
        if *backend == folder {
            tables.remove(*table);
        }
    }
    for (backend, table, column) in BACKEND_SPECIFIC_COLUMNS {
        if *backend == folder
            && let Some(columns) = tables.get_mut(*table)
        {
            columns.retain(|name| name != column);
        }
    }
    tables
}

#[test]
fn both_backends_have_the_same_migration_versions_and_names() {
    let postgres = migration_files("postgres");
    let sqlite = migration_files("sqlite");
    assert!(!postgres.is_empty());
    assert_eq!(
        postgres, sqlite,
        "migrations/postgres and migrations/sqlite must list the same files"
    );
}

#[test]
fn both_backends_declare_equivalent_tables_and_columns() {
    let postgres = comparable_schema("postgres");
    let sqlite = comparable_schema("sqlite");
    assert!(postgres.contains_key("actors"));
    assert!(
        declared_schema("sqlite")["search_documents"].contains(&"document_rowid".to_owned()),
        "the parser follows the table rebuild of migration 0004"
    );
    assert!(declared_schema("postgres").contains_key("search_vectors"));
    assert_eq!(postgres, sqlite);
}

#[tokio::test]
async fn the_migrated_database_matches_the_declared_schema() {
    let database = TestDatabase::create().await;
    let store = Store::connect(&database.url, 2, std::time::Duration::from_secs(5))
        .await
        .expect("store connects and migrates");
    let live: BTreeMap<String, Vec<String>> = store
        .describe_tables()
        .await
        .expect("describe tables")
        .into_iter()
        .map(|(table, mut columns)| {
            columns.sort();
            (table, columns)
        })
        .collect();
    let folder = if database.is_postgres() { "postgres" } else { "sqlite" };
    let declared: BTreeMap<String, Vec<String>> = declared_schema(folder)
        .into_iter()
        .filter(|(table, _)| !table.contains("_fts"))
        .collect();
    assert_eq!(live, declared);
    store.close().await;
}
