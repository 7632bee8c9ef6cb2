//! Actor rows.

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, dispatch, fetch_where_in};
use crate::domain::{Actor, ActorType, PublicId};

#[derive(sqlx::FromRow)]
pub(super) struct ActorRow {
    pub(super) id: String,
    pub(super) actor_type: String,
    pub(super) display_name: String,
    pub(super) controller_id: Option<String>,
    pub(super) root_controller_id: String,
    pub(super) origin: String,
    pub(super) verified_by_email: bool,
    pub(super) verified_by_domain: bool,
    pub(super) created_at: DateTime<Utc>,
}

impl ActorRow {
    pub(super) fn into_actor(self) -> Result<Actor, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("actor {}: {what}", self.id));
        Ok(Actor {
            actor_type: ActorType::parse(&self.actor_type).ok_or_else(|| corrupt("unknown actor_type"))?,
            controller: match &self.controller_id {
                Some(text) => Some(PublicId::parse(text).map_err(|_| corrupt("bad controller_id"))?),
                None => None,
            },
            root_controller: PublicId::parse(&self.root_controller_id)
                .map_err(|_| corrupt("bad root_controller_id"))?,
            id: PublicId::parse(&self.id).map_err(|_| corrupt("bad id"))?,
            display_name: self.display_name,
            origin: self.origin,
            verified_by_email: self.verified_by_email,
            verified_by_domain: self.verified_by_domain,
            created_at: self.created_at,
        })
    }
}

const ACTOR_COLUMNS: &str = "id, actor_type, display_name, controller_id, root_controller_id, origin, \
                             verified_by_email, verified_by_domain, created_at";

/// Inserts a new actor.
pub async fn insert(conn: &mut Conn<'_>, actor: &Actor) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO actors (id, actor_type, display_name, controller_id, root_controller_id, origin, \
             verified_by_email, verified_by_domain, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(actor.id.as_str())
        .bind(actor.actor_type.as_str())
        .bind(&actor.display_name)
        .bind(actor.controller.as_ref().map(PublicId::as_str))
        .bind(actor.root_controller.as_str())
        .bind(&actor.origin)
        .bind(actor.verified_by_email)
        .bind(actor.verified_by_domain)
        .bind(actor.created_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// The actor with this ID, if it exists.
pub async fn find(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<Actor>, StoreError> {
    let row: Option<ActorRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {ACTOR_COLUMNS} FROM actors WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(ActorRow::into_actor).transpose()
}

/// One page of an origin realm's actors, oldest first, and how many there are: those whose display name (any case,
/// for ASCII letters) or ID holds `find` (every actor when it is empty), from the `offset`th on, at most `limit`.
pub async fn page_by_origin(
    conn: &mut Conn<'_>,
    origin: &str,
    find: &str,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Actor>, i64), StoreError> {
    // The text is matched as it is: `%`, `_` and the escape character itself are escaped for LIKE.
    let pattern = format!(
        "%{}%",
        find.to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    const MATCHES: &str = "origin = $1 AND (lower(display_name) LIKE $2 ESCAPE '\\' OR id LIKE $2 ESCAPE '\\')";
    let (total, rows): (i64, Vec<ActorRow>) = dispatch!(conn, |connection| {
        let total = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM actors WHERE {MATCHES}"
        )))
        .bind(origin)
        .bind(&pattern)
        .fetch_one(&mut *connection)
        .await?;
        let rows = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {ACTOR_COLUMNS} FROM actors WHERE {MATCHES} ORDER BY created_at, id LIMIT $3 OFFSET $4"
        )))
        .bind(origin)
        .bind(&pattern)
        .bind(limit)
        .bind(offset)
        .fetch_all(&mut *connection)
        .await?;
        (total, rows)
    });
    let actors = rows.into_iter().map(ActorRow::into_actor).collect::<Result<_, _>>()?;
    Ok((actors, total))
}

/// The actors with these IDs, in one statement; unknown IDs are absent.
pub async fn find_many(conn: &mut Conn<'_>, ids: &[PublicId]) -> Result<Vec<Actor>, StoreError> {
    let rows = fetch_where_in!(
        conn,
        ActorRow,
        format!("SELECT {ACTOR_COLUMNS} FROM actors"),
        "id",
        ids.iter().map(|id| id.as_str().to_owned()).collect(),
        ""
    );
    rows.into_iter().map(ActorRow::into_actor).collect()
}

/// Every actor of an origin realm, oldest first.
pub async fn list_by_origin(conn: &mut Conn<'_>, origin: &str) -> Result<Vec<Actor>, StoreError> {
    let rows: Vec<ActorRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {ACTOR_COLUMNS} FROM actors WHERE origin = $1 ORDER BY created_at, id"
        )))
        .bind(origin)
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(ActorRow::into_actor).collect()
}
