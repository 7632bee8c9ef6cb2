//! Knowledge rows: spaces, entities, sources, content items, revisions, claims and what revisions link to.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use super::statement::{Bind, Column, Insert, InsertShape, SqlType, Statement};
use super::{Conn, StoreError, dispatch, fetch_where_in, stored_id};
use crate::domain::PublicId;
use crate::domain::knowledge::{
    Claim, ClaimAlias, ContentItem, Entity, Relation, RelationType, Revision, Source, Space, SpaceVisibility,
};
use crate::domain::replication::OriginProof;

// ---------------------------------------------------------------- spaces

#[derive(sqlx::FromRow)]
struct SpaceRow {
    id: String,
    name: String,
    description: String,
    visibility: String,
    is_default: bool,
    origin: String,
    created_by: String,
    created_at: DateTime<Utc>,
    received_at: DateTime<Utc>,
}

impl SpaceRow {
    fn into_space(self) -> Result<Space, StoreError> {
        Ok(Space {
            visibility: SpaceVisibility::parse(&self.visibility)
                .ok_or_else(|| StoreError::Corrupt(format!("space {}: unknown visibility", self.id)))?,
            created_by: stored_id(&self.created_by, "space creator")?,
            id: stored_id(&self.id, "space id")?,
            name: self.name,
            description: self.description,
            is_default: self.is_default,
            origin: self.origin,
            created_at: self.created_at,
            received_at: self.received_at,
        })
    }
}

const SPACE_COLUMNS: &str =
    "id, name, description, visibility, is_default, origin, created_by, created_at, received_at";

/// Inserts a space.
pub async fn insert_space(conn: &mut Conn<'_>, space: &Space) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO spaces (id, name, description, visibility, is_default, origin, created_by, created_at, \
             received_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(space.id.as_str())
        .bind(&space.name)
        .bind(&space.description)
        .bind(space.visibility.as_str())
        .bind(space.is_default)
        .bind(&space.origin)
        .bind(space.created_by.as_str())
        .bind(space.created_at)
        .bind(space.received_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// The space with this ID.
pub async fn find_space(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<Space>, StoreError> {
    let row: Option<SpaceRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SPACE_COLUMNS} FROM spaces WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(SpaceRow::into_space).transpose()
}

/// The default space of an origin.
pub async fn find_default_space(conn: &mut Conn<'_>, origin: &str) -> Result<Option<Space>, StoreError> {
    let row: Option<SpaceRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SPACE_COLUMNS} FROM spaces WHERE origin = $1 AND is_default ORDER BY created_at LIMIT 1"
        )))
        .bind(origin)
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(SpaceRow::into_space).transpose()
}

/// Every space, oldest first.
pub async fn list_spaces(conn: &mut Conn<'_>) -> Result<Vec<Space>, StoreError> {
    let rows: Vec<SpaceRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SPACE_COLUMNS} FROM spaces ORDER BY created_at, id"
        )))
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(SpaceRow::into_space).collect()
}

// ---------------------------------------------------------------- entities

#[derive(sqlx::FromRow)]
struct EntityRow {
    id: String,
    entity_type: String,
    name: String,
    normalized_name: String,
    aliases: Json<Vec<String>>,
    description: String,
    origin: String,
    created_by: String,
    created_by_root_controller: String,
    created_at: DateTime<Utc>,
}

impl EntityRow {
    fn into_entity(self) -> Result<Entity, StoreError> {
        Ok(Entity {
            id: stored_id(&self.id, "entity id")?,
            created_by: stored_id(&self.created_by, "entity creator")?,
            created_by_root_controller: stored_id(&self.created_by_root_controller, "entity creator root")?,
            entity_type: self.entity_type,
            name: self.name,
            normalized_name: self.normalized_name,
            aliases: self.aliases.0,
            description: self.description,
            origin: self.origin,
            created_at: self.created_at,
        })
    }
}

const ENTITY_COLUMNS: &str = "id, entity_type, name, normalized_name, aliases, description, origin, created_by, \
                              created_by_root_controller, created_at";

/// Inserts an entity.
pub async fn insert_entity(conn: &mut Conn<'_>, entity: &Entity) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO entities (id, entity_type, name, normalized_name, aliases, description, origin, created_by, \
             created_by_root_controller, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(entity.id.as_str())
        .bind(&entity.entity_type)
        .bind(&entity.name)
        .bind(&entity.normalized_name)
        .bind(Json(&entity.aliases))
        .bind(&entity.description)
        .bind(&entity.origin)
        .bind(entity.created_by.as_str())
        .bind(entity.created_by_root_controller.as_str())
        .bind(entity.created_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// The entity with this ID.
pub async fn find_entity(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<Entity>, StoreError> {
    let row: Option<EntityRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {ENTITY_COLUMNS} FROM entities WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(EntityRow::into_entity).transpose()
}

/// The entity of `origin` with this type and normalized name.
pub async fn find_entity_by_name(
    conn: &mut Conn<'_>,
    origin: &str,
    entity_type: &str,
    normalized_name: &str,
) -> Result<Option<Entity>, StoreError> {
    let row: Option<EntityRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {ENTITY_COLUMNS} FROM entities WHERE origin = $1 AND entity_type = $2 AND normalized_name = $3"
        )))
        .bind(origin)
        .bind(entity_type)
        .bind(normalized_name)
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(EntityRow::into_entity).transpose()
}

// ---------------------------------------------------------------- sources

#[derive(sqlx::FromRow)]
struct SourceRow {
    id: String,
    url: String,
    normalized_url: String,
    title: Option<String>,
    family: String,
    origin: String,
    created_at: DateTime<Utc>,
}

impl SourceRow {
    fn into_source(self) -> Result<Source, StoreError> {
        Ok(Source {
            id: stored_id(&self.id, "source id")?,
            url: self.url,
            normalized_url: self.normalized_url,
            title: self.title,
            family: self.family,
            origin: self.origin,
            created_at: self.created_at,
        })
    }
}

const SOURCE_COLUMNS: &str = "id, url, normalized_url, title, family, origin, created_at";

/// Inserts a source.
pub async fn insert_source(conn: &mut Conn<'_>, source: &Source) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO sources (id, url, normalized_url, title, family, origin, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(source.id.as_str())
        .bind(&source.url)
        .bind(&source.normalized_url)
        .bind(&source.title)
        .bind(&source.family)
        .bind(&source.origin)
        .bind(source.created_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// The source with this ID.
pub async fn find_source(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<Source>, StoreError> {
    let row: Option<SourceRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SOURCE_COLUMNS} FROM sources WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(SourceRow::into_source).transpose()
}

/// The source of `origin` with this normalized URL.
pub async fn find_source_by_url(
    conn: &mut Conn<'_>,
    origin: &str,
    normalized_url: &str,
) -> Result<Option<Source>, StoreError> {
    let row: Option<SourceRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SOURCE_COLUMNS} FROM sources WHERE origin = $1 AND normalized_url = $2"
        )))
        .bind(origin)
        .bind(normalized_url)
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(SourceRow::into_source).transpose()
}

// ---------------------------------------------------------------- content items and revisions

#[derive(sqlx::FromRow)]
struct ContentRow {
    id: String,
    content_type: String,
    space_id: String,
    author_id: String,
    author_root_controller_id: String,
    origin: String,
    current_revision_id: String,
    current_revision_no: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    received_at: DateTime<Utc>,
    deleted_at: Option<DateTime<Utc>>,
}

impl ContentRow {
    fn into_content(self) -> Result<ContentItem, StoreError> {
        Ok(ContentItem {
            id: stored_id(&self.id, "content id")?,
            space_id: stored_id(&self.space_id, "space id")?,
            author_id: stored_id(&self.author_id, "author id")?,
            author_root_controller: stored_id(&self.author_root_controller_id, "author root")?,
            current_revision_id: stored_id(&self.current_revision_id, "revision id")?,
            content_type: self.content_type,
            origin: self.origin,
            current_revision_no: self.current_revision_no,
            created_at: self.created_at,
            updated_at: self.updated_at,
            received_at: self.received_at,
            deleted_at: self.deleted_at,
        })
    }
}

// ---------------------------------------------------------------- the rows written here, as data

/// A content item's row (its columns as migration 0002 and later declare them).
const CONTENT_ITEM: InsertShape = InsertShape::new(
    "content_items",
    &[
        Column::new("id", SqlType::Text),
        Column::new("content_type", SqlType::Text),
        Column::new("space_id", SqlType::Text),
        Column::new("author_id", SqlType::Text),
        Column::new("author_root_controller_id", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("current_revision_id", SqlType::Text),
        Column::new("current_revision_no", SqlType::Integer),
        Column::new("created_at", SqlType::TimestampTz),
        Column::new("updated_at", SqlType::TimestampTz),
        Column::new("received_at", SqlType::TimestampTz),
        Column::new("deleted_at", SqlType::TimestampTz),
    ],
);

/// A revision's row; a replicated one's with its origin's proof.
const REVISION: InsertShape = InsertShape::new(
    "content_revisions",
    &[
        Column::new("id", SqlType::Text),
        Column::new("content_id", SqlType::Text),
        Column::new("revision_no", SqlType::Integer),
        Column::new("title", SqlType::Text),
        Column::new("summary", SqlType::Text),
        Column::new("body_markdown", SqlType::Text),
        Column::new("structured_data", SqlType::Jsonb),
        Column::new("language", SqlType::Text),
        Column::new("change_note", SqlType::Text),
        Column::new("context_key", SqlType::Text),
        Column::new("author_id", SqlType::Text),
        Column::new("content_sha256", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("created_at", SqlType::TimestampTz),
        Column::new("received_at", SqlType::TimestampTz),
        Column::new("signed_object", SqlType::Text),
        Column::new("proof_key_id", SqlType::Text),
    ],
);

/// A claim's row.
const CLAIM: InsertShape = InsertShape::new(
    "claims",
    &[
        Column::new("id", SqlType::Text),
        Column::new("text", SqlType::Text),
        Column::new("normalized_text", SqlType::Text),
        Column::new("fingerprint", SqlType::Text),
        Column::new("author_id", SqlType::Text),
        Column::new("author_root_controller_id", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("created_at", SqlType::TimestampTz),
    ],
);

/// A claim a revision makes.
const REVISION_CLAIM: InsertShape = InsertShape::new(
    "revision_claims",
    &[
        Column::new("revision_id", SqlType::Text),
        Column::new("claim_id", SqlType::Text),
        Column::new("position", SqlType::Integer),
        Column::new("matched_existing", SqlType::Boolean),
    ],
);

/// An entity a revision is about.
const REVISION_SUBJECT: InsertShape = InsertShape::new(
    "revision_subjects",
    &[
        Column::new("revision_id", SqlType::Text),
        Column::new("entity_id", SqlType::Text),
    ],
);

/// A revision's tag.
const REVISION_TAG: InsertShape = InsertShape::new(
    "revision_tags",
    &[
        Column::new("revision_id", SqlType::Text),
        Column::new("tag", SqlType::Text),
    ],
);

/// A source a revision cites.
const REVISION_SOURCE: InsertShape = InsertShape::new(
    "revision_sources",
    &[
        Column::new("revision_id", SqlType::Text),
        Column::new("source_id", SqlType::Text),
        Column::new("title", SqlType::Text),
        Column::new("position", SqlType::Integer),
    ],
);

/// A relation a revision declares.
const RELATION: InsertShape = InsertShape::new(
    "relations",
    &[
        Column::new("id", SqlType::Text),
        Column::new("source_content_id", SqlType::Text),
        Column::new("source_revision_id", SqlType::Text),
        Column::new("relation_type", SqlType::Text),
        Column::new("target_id", SqlType::Text),
        Column::new("reason", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("created_at", SqlType::TimestampTz),
    ],
);

const CONTENT_COLUMNS: &str = "id, content_type, space_id, author_id, author_root_controller_id, origin, \
                               current_revision_id, current_revision_no, created_at, updated_at, received_at, \
                               deleted_at";

/// Inserts a content item (its first revision is inserted separately, in the same transaction).
pub async fn insert_content(conn: &mut Conn<'_>, content: &ContentItem) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        super::statement::Insert::new(&CONTENT_ITEM)
            .bind(content.id.as_str())
            .bind(&content.content_type)
            .bind(content.space_id.as_str())
            .bind(content.author_id.as_str())
            .bind(content.author_root_controller.as_str())
            .bind(&content.origin)
            .bind(content.current_revision_id.as_str())
            .bind(content.current_revision_no)
            .bind(content.created_at)
            .bind(content.updated_at)
            .bind(content.received_at)
            .bind(content.deleted_at),
    )
    .await
}

/// Points a content item at a new current revision.
pub async fn set_current_revision(
    conn: &mut Conn<'_>,
    content_id: &PublicId,
    revision_id: &PublicId,
    revision_no: i32,
    updated_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        Statement::update(
            "content_items",
            "UPDATE content_items SET current_revision_id = $2, current_revision_no = $3, updated_at = $4 WHERE id = $1",
        )
        .bind(content_id.as_str())
        .bind(revision_id.as_str())
        .bind(revision_no)
        .bind(updated_at),
    )
    .await
}

/// The content item with this ID.
pub async fn find_content(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<ContentItem>, StoreError> {
    let row: Option<ContentRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {CONTENT_COLUMNS} FROM content_items WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(ContentRow::into_content).transpose()
}

/// A revision as a trust target: its content item and when the revision was created.
#[derive(sqlx::FromRow)]
struct RevisionTargetRow {
    #[sqlx(flatten)]
    content: ContentRow,
    revision_id: String,
    revision_created_at: DateTime<Utc>,
}

/// Which revision [`revision_target`] looks up.
#[derive(Debug, Clone, Copy)]
pub enum RevisionOf<'a> {
    /// The current revision of this content item.
    CurrentOf(&'a PublicId),
    /// This revision.
    Revision(&'a PublicId),
}

/// A revision with its content item, in one statement: the revision's ID and creation time, and the item.
/// `None` when the content item or revision does not exist.
pub async fn revision_target(
    conn: &mut Conn<'_>,
    which: RevisionOf<'_>,
) -> Result<Option<(ContentItem, PublicId, DateTime<Utc>)>, StoreError> {
    let columns = "ci.id, ci.content_type, ci.space_id, ci.author_id, ci.author_root_controller_id, ci.origin, \
                   ci.current_revision_id, ci.current_revision_no, ci.created_at, ci.updated_at, ci.received_at, \
                   ci.deleted_at, r.id AS revision_id, r.created_at AS revision_created_at";
    let (sql, id) = match which {
        RevisionOf::CurrentOf(content_id) => (
            format!(
                "SELECT {columns} FROM content_items ci JOIN content_revisions r ON r.id = ci.current_revision_id \
                 WHERE ci.id = $1"
            ),
            content_id,
        ),
        RevisionOf::Revision(revision_id) => (
            format!(
                "SELECT {columns} FROM content_revisions r JOIN content_items ci ON ci.id = r.content_id WHERE r.id = $1"
            ),
            revision_id,
        ),
    };
    let row: Option<RevisionTargetRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(id.as_str())
            .fetch_optional(&mut *connection)
            .await?
    });
    row.map(|row| {
        let revision_id = stored_id(&row.revision_id, "revision id")?;
        Ok((row.content.into_content()?, revision_id, row.revision_created_at))
    })
    .transpose()
}

/// The content item, locked against concurrent revisions until the transaction ends (PostgreSQL; SQLite's
/// single writer already serializes).
pub async fn find_content_for_update(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<ContentItem>, StoreError> {
    let row: Option<ContentRow> = match conn {
        postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
            let connection = super::postgres_connection(postgres).await?;
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "SELECT {CONTENT_COLUMNS} FROM content_items WHERE id = $1 FOR UPDATE"
            )))
            .bind(id.as_str())
            .fetch_optional(&mut *connection)
            .await?
        }
        sqlite => {
            let connection = super::sqlite_connection(sqlite).await?;
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "SELECT {CONTENT_COLUMNS} FROM content_items WHERE id = $1"
            )))
            .bind(id.as_str())
            .fetch_optional(&mut *connection)
            .await?
        }
    };
    row.map(ContentRow::into_content).transpose()
}

#[derive(sqlx::FromRow)]
struct RevisionRow {
    id: String,
    content_id: String,
    revision_no: i32,
    title: String,
    summary: String,
    body_markdown: String,
    structured_data: Json<serde_json::Value>,
    language: Option<String>,
    change_note: Option<String>,
    context_key: Option<String>,
    author_id: String,
    content_sha256: String,
    origin: String,
    created_at: DateTime<Utc>,
    received_at: DateTime<Utc>,
}

impl RevisionRow {
    fn into_revision(self) -> Result<Revision, StoreError> {
        Ok(Revision {
            id: stored_id(&self.id, "revision id")?,
            content_id: stored_id(&self.content_id, "content id")?,
            author_id: stored_id(&self.author_id, "author id")?,
            revision_no: self.revision_no,
            title: self.title,
            summary: self.summary,
            body_markdown: self.body_markdown,
            structured_data: self.structured_data.0,
            language: self.language,
            change_note: self.change_note,
            context_key: self.context_key,
            content_sha256: self.content_sha256,
            origin: self.origin,
            created_at: self.created_at,
            received_at: self.received_at,
        })
    }
}

const REVISION_COLUMNS: &str = "id, content_id, revision_no, title, summary, body_markdown, structured_data, language, \
                                change_note, context_key, author_id, content_sha256, origin, created_at, received_at";

/// Inserts an immutable revision; a replicated one with its origin's proof: the object exactly as its origin signed
/// it, and the key that signed it.
pub async fn insert_revision(
    conn: &mut Conn<'_>,
    revision: &Revision,
    proof: Option<&OriginProof>,
) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        super::statement::Insert::new(&REVISION)
            .bind(revision.id.as_str())
            .bind(revision.content_id.as_str())
            .bind(revision.revision_no)
            .bind(&revision.title)
            .bind(&revision.summary)
            .bind(&revision.body_markdown)
            .bind(&revision.structured_data)
            .bind(&revision.language)
            .bind(&revision.change_note)
            .bind(&revision.context_key)
            .bind(revision.author_id.as_str())
            .bind(&revision.content_sha256)
            .bind(&revision.origin)
            .bind(revision.created_at)
            .bind(revision.received_at)
            .bind(proof.map(|proof| proof.signed_object.as_str()))
            .bind(proof.map(|proof| proof.key_id.as_str())),
    )
    .await
}

/// The revision with this ID.
pub async fn find_revision(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<Revision>, StoreError> {
    let row: Option<RevisionRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {REVISION_COLUMNS} FROM content_revisions WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(RevisionRow::into_revision).transpose()
}

/// Revision number `revision_no` of a content item.
pub async fn find_revision_by_number(
    conn: &mut Conn<'_>,
    content_id: &PublicId,
    revision_no: i32,
) -> Result<Option<Revision>, StoreError> {
    let row: Option<RevisionRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {REVISION_COLUMNS} FROM content_revisions WHERE content_id = $1 AND revision_no = $2"
        )))
        .bind(content_id.as_str())
        .bind(revision_no)
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(RevisionRow::into_revision).transpose()
}

/// Every revision of a content item, newest first.
pub async fn list_revisions(conn: &mut Conn<'_>, content_id: &PublicId) -> Result<Vec<Revision>, StoreError> {
    let rows: Vec<RevisionRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {REVISION_COLUMNS} FROM content_revisions WHERE content_id = $1 ORDER BY revision_no DESC"
        )))
        .bind(content_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(RevisionRow::into_revision).collect()
}

// ---------------------------------------------------------------- claims

#[derive(sqlx::FromRow)]
struct ClaimRow {
    id: String,
    text: String,
    normalized_text: String,
    fingerprint: String,
    author_id: String,
    author_root_controller_id: String,
    origin: String,
    created_at: DateTime<Utc>,
}

impl ClaimRow {
    fn into_claim(self) -> Result<Claim, StoreError> {
        Ok(Claim {
            id: stored_id(&self.id, "claim id")?,
            author_id: stored_id(&self.author_id, "claim author")?,
            author_root_controller: stored_id(&self.author_root_controller_id, "claim author root")?,
            text: self.text,
            normalized_text: self.normalized_text,
            fingerprint: self.fingerprint,
            origin: self.origin,
            created_at: self.created_at,
        })
    }
}

const CLAIM_COLUMNS: &str =
    "id, text, normalized_text, fingerprint, author_id, author_root_controller_id, origin, created_at";

/// Inserts new claims in one statement (nothing when the list is empty).
pub async fn insert_claims(conn: &mut Conn<'_>, claims: &[Claim]) -> Result<(), StoreError> {
    if claims.is_empty() {
        return Ok(());
    }
    let statement = Insert::rows(&CLAIM, claims, |claim| {
        vec![
            Bind::from(claim.id.as_str()),
            Bind::from(&claim.text),
            Bind::from(&claim.normalized_text),
            Bind::from(&claim.fingerprint),
            Bind::from(claim.author_id.as_str()),
            Bind::from(claim.author_root_controller.as_str()),
            Bind::from(&claim.origin),
            Bind::from(claim.created_at),
        ]
    });
    super::statement::execute(conn, statement).await
}

/// A claim alias's row (a second sighting of the same alias changes nothing).
const CLAIM_ALIAS: InsertShape = InsertShape::new(
    "claim_aliases",
    &[
        Column::new("alias_id", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("canonical_claim_id", SqlType::Text),
        Column::new("created_at", SqlType::TimestampTz),
    ],
)
.on_conflict(super::statement::OnConflict::Ignore { key: &["alias_id"] });

/// Records other realms' IDs of claims held here, in one statement (nothing when the list is empty).
pub async fn insert_claim_aliases(conn: &mut Conn<'_>, aliases: &[ClaimAlias]) -> Result<(), StoreError> {
    if aliases.is_empty() {
        return Ok(());
    }
    let statement = Insert::rows(&CLAIM_ALIAS, aliases, |alias| {
        vec![
            Bind::from(alias.alias_id.as_str()),
            Bind::from(&alias.origin),
            Bind::from(alias.canonical_claim_id.as_str()),
            Bind::from(alias.created_at),
        ]
    });
    super::statement::execute(conn, statement).await
}

/// The canonical claim an alias names, if `id` is an alias.
pub async fn canonical_claim_of(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<PublicId>, StoreError> {
    let canonical: Option<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT canonical_claim_id FROM claim_aliases WHERE alias_id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut *connection)
            .await?
    });
    canonical.map(|id| stored_id(&id, "canonical claim")).transpose()
}

/// Every alias of a claim, by ID.
pub async fn aliases_of_claim(conn: &mut Conn<'_>, claim_id: &PublicId) -> Result<Vec<ClaimAlias>, StoreError> {
    let rows: Vec<(String, String, String, DateTime<Utc>)> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT alias_id, origin, canonical_claim_id, created_at FROM claim_aliases \
             WHERE canonical_claim_id = $1 ORDER BY alias_id",
        )
        .bind(claim_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter()
        .map(|(alias_id, origin, canonical_claim_id, created_at)| {
            Ok(ClaimAlias {
                alias_id: stored_id(&alias_id, "claim alias")?,
                origin,
                canonical_claim_id: stored_id(&canonical_claim_id, "canonical claim")?,
                created_at,
            })
        })
        .collect()
}

/// The claim with this ID.
pub async fn find_claim(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<Claim>, StoreError> {
    let row: Option<ClaimRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {CLAIM_COLUMNS} FROM claims WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(ClaimRow::into_claim).transpose()
}

/// The claims with these fingerprints (of their normalized text), in one statement; missing ones are absent.
pub async fn find_claims_by_fingerprints(conn: &mut Conn<'_>, fingerprints: &[&str]) -> Result<Vec<Claim>, StoreError> {
    let rows = fetch_where_in!(
        conn,
        ClaimRow,
        format!("SELECT {CLAIM_COLUMNS} FROM claims"),
        "fingerprint",
        fingerprints
            .iter()
            .map(|fingerprint| (*fingerprint).to_owned())
            .collect(),
        ""
    );
    rows.into_iter().map(ClaimRow::into_claim).collect()
}

/// One claim of a revision: which claim, at which position, and whether it matched an existing claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionClaimLink {
    /// The claim.
    pub claim_id: PublicId,
    /// Its position in the revision's claim list.
    pub position: i32,
    /// Whether the claim existed before this revision named it.
    pub matched_existing: bool,
}

/// Links claims to a revision, in one statement.
pub async fn link_revision_claims(
    conn: &mut Conn<'_>,
    revision_id: &PublicId,
    links: &[RevisionClaimLink],
) -> Result<(), StoreError> {
    if links.is_empty() {
        return Ok(());
    }
    let statement = Insert::rows(&REVISION_CLAIM, links, |link| {
        vec![
            Bind::from(revision_id.as_str()),
            Bind::from(link.claim_id.as_str()),
            Bind::from(link.position),
            Bind::from(link.matched_existing),
        ]
    });
    super::statement::execute(conn, statement).await
}

/// The claims of a revision in their published order.
pub async fn claims_of_revision(conn: &mut Conn<'_>, revision_id: &PublicId) -> Result<Vec<Claim>, StoreError> {
    let rows: Vec<ClaimRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT c.id, c.text, c.normalized_text, c.fingerprint, c.author_id, c.author_root_controller_id, c.origin, \
             c.created_at FROM revision_claims rc JOIN claims c ON c.id = rc.claim_id \
             WHERE rc.revision_id = $1 ORDER BY rc.position",
        )
        .bind(revision_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(ClaimRow::into_claim).collect()
}

/// Whether a revision makes a claim.
pub async fn revision_has_claim(
    conn: &mut Conn<'_>,
    revision_id: &PublicId,
    claim_id: &PublicId,
) -> Result<bool, StoreError> {
    let found: Option<i32> = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT position FROM revision_claims WHERE revision_id = $1 AND claim_id = $2")
            .bind(revision_id.as_str())
            .bind(claim_id.as_str())
            .fetch_optional(&mut *connection)
            .await?
    });
    Ok(found.is_some())
}

/// The content items whose current revision makes a claim.
pub async fn contents_making_claim(conn: &mut Conn<'_>, claim_id: &PublicId) -> Result<Vec<PublicId>, StoreError> {
    let ids: Vec<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar(
            "SELECT ci.id FROM revision_claims rc JOIN content_items ci ON ci.current_revision_id = rc.revision_id \
             WHERE rc.claim_id = $1 ORDER BY ci.id",
        )
        .bind(claim_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    ids.iter().map(|id| stored_id(id, "content id")).collect()
}

// ---------------------------------------------------------------- subjects, tags, sources of revisions

/// Names entities as subjects of a revision, in one statement.
pub async fn link_revision_subjects(
    conn: &mut Conn<'_>,
    revision_id: &PublicId,
    entity_ids: &[PublicId],
) -> Result<(), StoreError> {
    if entity_ids.is_empty() {
        return Ok(());
    }
    let statement = Insert::rows(&REVISION_SUBJECT, entity_ids, |entity_id| {
        vec![Bind::from(revision_id.as_str()), Bind::from(entity_id.as_str())]
    });
    super::statement::execute(conn, statement).await
}

/// The entities a revision is about.
pub async fn subjects_of_revision(conn: &mut Conn<'_>, revision_id: &PublicId) -> Result<Vec<Entity>, StoreError> {
    let rows: Vec<EntityRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT e.id, e.entity_type, e.name, e.normalized_name, e.aliases, e.description, e.origin, e.created_by, \
             e.created_by_root_controller, e.created_at FROM revision_subjects rs JOIN entities e ON e.id = rs.entity_id \
             WHERE rs.revision_id = $1 ORDER BY e.name, e.id",
        )
        .bind(revision_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(EntityRow::into_entity).collect()
}

/// Tags a revision, in one statement.
pub async fn add_revision_tags(conn: &mut Conn<'_>, revision_id: &PublicId, tags: &[String]) -> Result<(), StoreError> {
    if tags.is_empty() {
        return Ok(());
    }
    let statement = Insert::rows(&REVISION_TAG, tags, |tag| {
        vec![Bind::from(revision_id.as_str()), Bind::from(tag)]
    });
    super::statement::execute(conn, statement).await
}

/// The tags of a revision, sorted.
pub async fn tags_of_revision(conn: &mut Conn<'_>, revision_id: &PublicId) -> Result<Vec<String>, StoreError> {
    let tags: Vec<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT tag FROM revision_tags WHERE revision_id = $1 ORDER BY tag")
            .bind(revision_id.as_str())
            .fetch_all(&mut *connection)
            .await?
    });
    Ok(tags)
}

/// Cites a source in a revision.
pub async fn link_revision_source(
    conn: &mut Conn<'_>,
    revision_id: &PublicId,
    source_id: &PublicId,
    title: Option<&str>,
    position: i32,
) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        super::statement::Insert::new(&REVISION_SOURCE)
            .bind(revision_id.as_str())
            .bind(source_id.as_str())
            .bind(title)
            .bind(position),
    )
    .await
}

/// The sources a revision cites, in order.
pub async fn sources_of_revision(conn: &mut Conn<'_>, revision_id: &PublicId) -> Result<Vec<Source>, StoreError> {
    let rows: Vec<SourceRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT s.id, s.url, s.normalized_url, COALESCE(rs.title, s.title) AS title, s.family, s.origin, s.created_at \
             FROM revision_sources rs JOIN sources s ON s.id = rs.source_id WHERE rs.revision_id = $1 ORDER BY rs.position",
        )
        .bind(revision_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(SourceRow::into_source).collect()
}

// ---------------------------------------------------------------- relations

#[derive(sqlx::FromRow)]
struct RelationRow {
    id: String,
    source_content_id: String,
    source_revision_id: String,
    relation_type: String,
    target_id: String,
    reason: Option<String>,
    origin: String,
    created_at: DateTime<Utc>,
}

impl RelationRow {
    fn into_relation(self) -> Result<Relation, StoreError> {
        Ok(Relation {
            relation_type: RelationType::parse(&self.relation_type)
                .ok_or_else(|| StoreError::Corrupt(format!("relation {}: unknown type", self.id)))?,
            source_content_id: stored_id(&self.source_content_id, "relation source")?,
            source_revision_id: stored_id(&self.source_revision_id, "relation source revision")?,
            target_id: stored_id(&self.target_id, "relation target")?,
            id: self.id,
            reason: self.reason,
            origin: self.origin,
            created_at: self.created_at,
        })
    }
}

/// Inserts a relation.
pub async fn insert_relation(conn: &mut Conn<'_>, relation: &Relation) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        super::statement::Insert::new(&RELATION)
            .bind(&relation.id)
            .bind(relation.source_content_id.as_str())
            .bind(relation.source_revision_id.as_str())
            .bind(relation.relation_type.as_str())
            .bind(relation.target_id.as_str())
            .bind(&relation.reason)
            .bind(&relation.origin)
            .bind(relation.created_at),
    )
    .await
}

/// The relations a revision declares.
pub async fn relations_of_revision(conn: &mut Conn<'_>, revision_id: &PublicId) -> Result<Vec<Relation>, StoreError> {
    let rows: Vec<RelationRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT id, source_content_id, source_revision_id, relation_type, target_id, reason, origin, created_at \
             FROM relations WHERE source_revision_id = $1 ORDER BY created_at, id",
        )
        .bind(revision_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(RelationRow::into_relation).collect()
}

/// Whether a content item is replaced, read in one statement: its current revision, and whether an effective
/// `supersedes` relation points at it (declared by the current revision of content by the same author, or of
/// content whose current revision is `high_confidence`). `None` when the item does not exist.
pub async fn supersession_of(conn: &mut Conn<'_>, content_id: &PublicId) -> Result<Option<Supersession>, StoreError> {
    let sql = format!(
        "SELECT ci.current_revision_id, {} FROM content_items ci WHERE ci.id = $1",
        effective_superseder_exists("ci")
    );
    let row: Option<(String, bool)> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(content_id.as_str())
            .fetch_optional(&mut *connection)
            .await?
    });
    row.map(|(current_revision_id, has_effective_superseder)| {
        Ok(Supersession {
            current_revision_id: stored_id(&current_revision_id, "current revision id")?,
            has_effective_superseder,
        })
    })
    .transpose()
}

/// The SQL expression for "an effective `supersedes` relation replaces the content item aliased `content`": one
/// declared by the current revision of content by the same author, or of content whose current revision is
/// `high_confidence`.
pub(super) fn effective_superseder_exists(content: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM relations r JOIN content_items source \
         ON source.id = r.source_content_id AND source.current_revision_id = r.source_revision_id \
         LEFT JOIN trust_summaries source_trust ON source_trust.target_id = source.current_revision_id \
         WHERE r.target_id = {content}.id AND r.relation_type = 'supersedes' \
         AND (source.author_id = {content}.author_id OR source_trust.status = 'high_confidence'))"
    )
}

/// What [`supersession_of`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Supersession {
    /// The content item's current revision; older revisions are superseded by it.
    pub current_revision_id: PublicId,
    /// Whether an effective `supersedes` relation replaces the whole item.
    pub has_effective_superseder: bool,
}

/// The `supersedes` relations declared by the current revision of a content item, in one statement.
pub async fn supersedes_relations_of_current_revision(
    conn: &mut Conn<'_>,
    content_id: &PublicId,
) -> Result<Vec<Relation>, StoreError> {
    let rows: Vec<RelationRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT r.id, r.source_content_id, r.source_revision_id, r.relation_type, r.target_id, r.reason, r.origin, \
             r.created_at FROM relations r JOIN content_items ci ON ci.id = r.source_content_id \
             AND ci.current_revision_id = r.source_revision_id WHERE ci.id = $1 AND r.relation_type = 'supersedes' \
             ORDER BY r.created_at, r.id",
        )
        .bind(content_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(RelationRow::into_relation).collect()
}

/// The `supersedes` relations declared by one revision, current or not, in one statement.
pub async fn supersedes_relations_declared_by(
    conn: &mut Conn<'_>,
    revision_id: &PublicId,
) -> Result<Vec<Relation>, StoreError> {
    let rows: Vec<RelationRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT r.id, r.source_content_id, r.source_revision_id, r.relation_type, r.target_id, r.reason, r.origin, \
             r.created_at FROM relations r WHERE r.source_revision_id = $1 AND r.relation_type = 'supersedes' \
             ORDER BY r.created_at, r.id",
        )
        .bind(revision_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(RelationRow::into_relation).collect()
}

/// The relations pointing at an object that are declared by the current revision of their source content.
pub async fn current_relations_targeting(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
) -> Result<Vec<Relation>, StoreError> {
    let rows: Vec<RelationRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT r.id, r.source_content_id, r.source_revision_id, r.relation_type, r.target_id, r.reason, r.origin, \
             r.created_at FROM relations r JOIN content_items ci ON ci.id = r.source_content_id \
             AND ci.current_revision_id = r.source_revision_id WHERE r.target_id = $1 ORDER BY r.created_at, r.id",
        )
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(RelationRow::into_relation).collect()
}

// ---------------------------------------------------------------- many at once

/// The spaces with these IDs, in one statement; missing ones are absent.
pub async fn find_spaces(conn: &mut Conn<'_>, ids: &[PublicId]) -> Result<Vec<Space>, StoreError> {
    let rows = fetch_where_in!(
        conn,
        SpaceRow,
        format!("SELECT {SPACE_COLUMNS} FROM spaces"),
        "id",
        id_strings(ids),
        ""
    );
    rows.into_iter().map(SpaceRow::into_space).collect()
}

/// The entities with these IDs, in one statement; missing ones are absent.
pub async fn find_entities(conn: &mut Conn<'_>, ids: &[PublicId]) -> Result<Vec<Entity>, StoreError> {
    let rows = fetch_where_in!(
        conn,
        EntityRow,
        format!("SELECT {ENTITY_COLUMNS} FROM entities"),
        "id",
        id_strings(ids),
        ""
    );
    rows.into_iter().map(EntityRow::into_entity).collect()
}

/// The sources with these IDs, in one statement; missing ones are absent.
pub async fn find_sources(conn: &mut Conn<'_>, ids: &[PublicId]) -> Result<Vec<Source>, StoreError> {
    let rows = fetch_where_in!(
        conn,
        SourceRow,
        format!("SELECT {SOURCE_COLUMNS} FROM sources"),
        "id",
        id_strings(ids),
        ""
    );
    rows.into_iter().map(SourceRow::into_source).collect()
}

/// The content items with these IDs, locked for the rest of the transaction as [`find_content_for_update`] locks
/// one (on PostgreSQL, in ID order, so that two transactions locking overlapping sets wait instead of deadlocking),
/// in one statement; missing ones are absent.
pub async fn find_contents_for_update(conn: &mut Conn<'_>, ids: &[PublicId]) -> Result<Vec<ContentItem>, StoreError> {
    let lock = match conn {
        Conn::Postgres(_) | Conn::PostgresWrite(_) => " ORDER BY id FOR UPDATE",
        _ => "",
    };
    let rows = fetch_where_in!(
        conn,
        ContentRow,
        format!("SELECT {CONTENT_COLUMNS} FROM content_items"),
        "id",
        id_strings(ids),
        lock
    );
    rows.into_iter().map(ContentRow::into_content).collect()
}

/// The revisions with these IDs, in one statement; missing ones are absent.
pub async fn find_revisions(conn: &mut Conn<'_>, ids: &[PublicId]) -> Result<Vec<Revision>, StoreError> {
    let rows = fetch_where_in!(
        conn,
        RevisionRow,
        format!("SELECT {REVISION_COLUMNS} FROM content_revisions"),
        "id",
        id_strings(ids),
        ""
    );
    rows.into_iter().map(RevisionRow::into_revision).collect()
}

/// The claims with these IDs, in one statement; missing ones are absent.
pub async fn find_claims(conn: &mut Conn<'_>, ids: &[PublicId]) -> Result<Vec<Claim>, StoreError> {
    let rows = fetch_where_in!(
        conn,
        ClaimRow,
        format!("SELECT {CLAIM_COLUMNS} FROM claims"),
        "id",
        id_strings(ids),
        ""
    );
    rows.into_iter().map(ClaimRow::into_claim).collect()
}

fn id_strings(ids: &[PublicId]) -> Vec<String> {
    ids.iter().map(|id| id.as_str().to_owned()).collect()
}

// ---------------------------------------------------------------- content listed for an admin

/// Which content items [`list_content`] reads. Every filter is optional; `after` continues from the last item of the
/// previous page.
#[derive(Debug, Clone, Default)]
pub struct ContentFilter {
    /// Only items of this space.
    pub space_id: Option<PublicId>,
    /// Only items made by this realm.
    pub origin: Option<String>,
    /// Only items in this state.
    pub status: Option<ContentStatusFilter>,
    /// Only items that come after this one (its creation time and ID) in newest-first order.
    pub after: Option<(DateTime<Utc>, String)>,
}

/// The state a content listing is filtered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentStatusFilter {
    /// Deleted items (tombstones).
    Deleted,
    /// Items not deleted whose current revision has this trust status (`unverified` when none was computed yet).
    Trust(crate::domain::TrustStatus),
}

/// A content item as an admin lists it: the item, its current revision's title and trust.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentListing {
    /// The item.
    pub content: ContentItem,
    /// The current revision's title.
    pub title: String,
    /// The current revision's trust status, when one was computed.
    pub trust_status: Option<String>,
    /// The current revision's trust value, when one was computed.
    pub trust_value: Option<f64>,
}

#[derive(sqlx::FromRow)]
struct ContentListingRow {
    #[sqlx(flatten)]
    content: ContentRow,
    title: String,
    trust_status: Option<String>,
    trust_value: Option<f64>,
}

fn push_content_filter<DB: sqlx::Database>(builder: &mut sqlx::QueryBuilder<DB>, filter: &ContentFilter)
where
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    builder.push(" WHERE 1 = 1");
    if let Some(space_id) = &filter.space_id {
        builder
            .push(" AND ci.space_id = ")
            .push_bind(space_id.as_str().to_owned());
    }
    if let Some(origin) = &filter.origin {
        builder.push(" AND ci.origin = ").push_bind(origin.clone());
    }
    match filter.status {
        Some(ContentStatusFilter::Deleted) => {
            builder.push(" AND ci.deleted_at IS NOT NULL");
        }
        Some(ContentStatusFilter::Trust(status)) => {
            builder
                .push(" AND ci.deleted_at IS NULL AND COALESCE(t.status, 'unverified') = ")
                .push_bind(status.as_str().to_owned());
        }
        None => {}
    }
    if let Some(after) = &filter.after {
        super::keyset_page::push_newest_first_after(builder, "ci.", after);
    }
}

/// The content items `filter` selects, newest first (ties broken by ID), at most `limit` of them.
pub async fn list_content(
    conn: &mut Conn<'_>,
    filter: &ContentFilter,
    limit: i64,
) -> Result<Vec<ContentListing>, StoreError> {
    const SELECT: &str = "SELECT ci.id, ci.content_type, ci.space_id, ci.author_id, ci.author_root_controller_id, \
                          ci.origin, ci.current_revision_id, ci.current_revision_no, ci.created_at, ci.updated_at, \
                          ci.received_at, ci.deleted_at, r.title, t.status AS trust_status, t.value AS trust_value \
                          FROM content_items ci JOIN content_revisions r ON r.id = ci.current_revision_id \
                          LEFT JOIN trust_summaries t ON t.target_id = ci.current_revision_id";
    let rows: Vec<ContentListingRow> = dispatch!(conn, |connection| {
        let mut builder = sqlx::QueryBuilder::new(SELECT);
        push_content_filter(&mut builder, filter);
        builder
            .push(" ORDER BY ci.created_at DESC, ci.id DESC LIMIT ")
            .push_bind(limit);
        builder
            .build_query_as()
            .persistent(false)
            .fetch_all(&mut *connection)
            .await?
    });
    rows.into_iter()
        .map(|row| {
            Ok(ContentListing {
                content: row.content.into_content()?,
                title: row.title,
                trust_status: row.trust_status,
                trust_value: row.trust_value,
            })
        })
        .collect()
}
