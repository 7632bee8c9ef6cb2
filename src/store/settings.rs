//! The instance's own settings: a small name → value table (realm, bootstrap identities).

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, dispatch};

/// The value of a setting, if set.
pub async fn get(conn: &mut Conn<'_>, name: &str) -> Result<Option<String>, StoreError> {
    let value: Option<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT value FROM instance_settings WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut *connection)
            .await?
    });
    Ok(value)
}

/// Sets a setting, replacing any earlier value.
pub async fn put(conn: &mut Conn<'_>, name: &str, value: &str, updated_at: DateTime<Utc>) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO instance_settings (name, value, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(name)
        .bind(value)
        .bind(updated_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}
