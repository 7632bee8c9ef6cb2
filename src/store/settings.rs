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

/// Removes a setting (nothing when it is unset).
pub async fn delete(conn: &mut Conn<'_>, name: &str) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("DELETE FROM instance_settings WHERE name = $1")
            .bind(name)
            .execute(&mut *connection)
            .await?;
    });
    Ok(())
}

/// Reads one setting of the database at `url` without creating, migrating or changing anything, for commands that
/// must not start a realm of their own. `None` when there is no such database (for SQLite, no such file; for
/// PostgreSQL, no such database), when it holds no tables yet, or when the setting is unset.
pub async fn peek(url: &str, name: &str) -> Result<Option<String>, StoreError> {
    use std::str::FromStr;

    use sqlx::Connection;

    const SETTING_SQL: &str = "SELECT value FROM instance_settings WHERE name = $1";
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let options =
            sqlx::postgres::PgConnectOptions::from_str(url).map_err(|error| StoreError::Url(error.to_string()))?;
        let mut connection = match sqlx::PgConnection::connect_with(&options).await {
            Ok(connection) => connection,
            // invalid_catalog_name: the database itself does not exist.
            Err(sqlx::Error::Database(error)) if error.code().as_deref() == Some("3D000") => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let has_settings: bool = sqlx::query_scalar("SELECT to_regclass('instance_settings') IS NOT NULL")
            .fetch_one(&mut connection)
            .await?;
        let value = if has_settings {
            sqlx::query_scalar(SETTING_SQL)
                .bind(name)
                .fetch_optional(&mut connection)
                .await?
        } else {
            None
        };
        connection.close().await?;
        Ok(value)
    } else {
        let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)
            .map_err(|error| StoreError::Url(error.to_string()))?
            .create_if_missing(false);
        let path = options.get_filename();
        if path.as_os_str().is_empty() || path == std::path::Path::new(":memory:") || !path.exists() {
            return Ok(None);
        }
        let mut connection = sqlx::SqliteConnection::connect_with(&options).await?;
        let has_settings: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'instance_settings')",
        )
        .fetch_one(&mut connection)
        .await?;
        let value = if has_settings {
            sqlx::query_scalar(SETTING_SQL)
                .bind(name)
                .fetch_optional(&mut connection)
                .await?
        } else {
            None
        };
        connection.close().await?;
        Ok(value)
    }
}
