//! Rebuilds the crate when a migration changes, because `sqlx::migrate!` embeds the migration files.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=well-known");
}
