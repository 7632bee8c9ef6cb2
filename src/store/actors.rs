//! Actor rows.

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, dispatch};
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
