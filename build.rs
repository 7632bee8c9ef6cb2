//! Rebuilds the crate when a migration changes, because `sqlx::migrate!` embeds the migration files, and turns the
//! seeder's topic vocabulary (`src/seed/topics.json`, data rather than code) into the `static` the seeder reads.

use std::fmt::Write as _;

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=well-known");
    println!("cargo:rerun-if-changed=src/seed/topics.json");
    if let Err(error) = write_seed_topics() {
        panic!("src/seed/topics.json: {error}");
    }
}

/// `$OUT_DIR/seed_topics.rs`: `static TOPICS: &[Topic]` with every topic of the data file, in its order.
fn write_seed_topics() -> Result<(), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string("src/seed/topics.json")?;
    let topics: Vec<serde_json::Value> = serde_json::from_str(&text)?;
    let text_of = |value: &serde_json::Value, what: &str| -> Result<String, String> {
        value
            .as_str()
            .map(|text| format!("{text:?}"))
            .ok_or_else(|| format!("{what} must be a string"))
    };
    let list_of = |topic: &serde_json::Value, key: &str| -> Result<String, String> {
        let items = topic[key].as_array().ok_or_else(|| format!("{key} must be an array"))?;
        let texts: Result<Vec<String>, String> = items.iter().map(|item| text_of(item, key)).collect();
        Ok(format!("&[{}]", texts?.join(", ")))
    };
    let mut code = String::from(
        "/// The topics the seeder writes about (generated from `src/seed/topics.json`).
pub static TOPICS: &[Topic] = &[
",
    );
    for topic in &topics {
        let entities = topic["entities"].as_array().ok_or("entities must be an array")?;
        let mut pairs = Vec::with_capacity(entities.len());
        for entity in entities {
            pairs.push(format!(
                "({}, {})",
                text_of(&entity[0], "an entity's name")?,
                text_of(&entity[1], "an entity's type")?
            ));
        }
        writeln!(
            code,
            "    Topic {{ tag: {}, name: {}, area: {}, entities: &[{}], terms: {}, tasks: {}, claims: {} }},",
            text_of(&topic["tag"], "tag")?,
            text_of(&topic["name"], "name")?,
            text_of(&topic["area"], "area")?,
            pairs.join(", "),
            list_of(topic, "terms")?,
            list_of(topic, "tasks")?,
            list_of(topic, "claims")?,
        )?;
    }
    code.push_str(
        "];
",
    );
    let out_dir = std::env::var("OUT_DIR")?;
    std::fs::write(std::path::Path::new(&out_dir).join("seed_topics.rs"), code)?;
    Ok(())
}
