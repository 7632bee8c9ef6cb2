//! Search documents and the full-text candidate query, with one arm per backend (PostgreSQL `tsvector`, SQLite
//! FTS5). The text query arrives already translated into each backend's safe syntax; it is always bound, never
//! spliced into SQL.

use chrono::{DateTime, Utc};
use sqlx::{Postgres, QueryBuilder, Sqlite};

use super::statement::{Bind, Statement};
use super::{Conn, StoreError, dispatch};

/// The kinds of searchable objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SearchKind {
    /// A content item (its current revision).
    Content,
    /// A claim.
    Claim,
    /// An entity.
    Entity,
}

impl SearchKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchKind::Content => "content",
            SearchKind::Claim => "claim",
            SearchKind::Entity => "entity",
        }
    }
}

/// One searchable object.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchDocument {
    /// The object's ID.
    pub object_id: String,
    /// Its kind.
    pub kind: SearchKind,
    /// Content type, entity type, or `claim`.
    pub object_type: String,
    /// The content's space.
    pub space_id: Option<String>,
    /// Where its trust lives: the current revision, the claim, the entity.
    pub trust_target_id: String,
    /// Who wrote it.
    pub author_id: Option<String>,
    /// Its realm.
    pub origin: String,
    /// Title, claim text or entity name.
    pub title: String,
    /// Summary or description.
    pub summary: String,
    /// Body text (plain), aliases, tags.
    pub body: String,
    /// When the object was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// Writes (or rewrites) search documents, in one statement.
pub async fn upsert_documents(conn: &mut Conn<'_>, documents: &[SearchDocument]) -> Result<(), StoreError> {
    if documents.is_empty() {
        return Ok(());
    }
    let statement = Statement::insert_rows(
        "INSERT INTO search_documents (object_id, kind, object_type, space_id, trust_target_id, author_id, origin, \
         title, summary, body, created_at, updated_at)",
        documents,
        "ON CONFLICT (object_id) DO UPDATE SET object_type = excluded.object_type, space_id = excluded.space_id, \
         trust_target_id = excluded.trust_target_id, author_id = excluded.author_id, title = excluded.title, \
         summary = excluded.summary, body = excluded.body, updated_at = excluded.updated_at",
        |document| {
            vec![
                Bind::from(&document.object_id),
                Bind::from(document.kind.as_str()),
                Bind::from(&document.object_type),
                Bind::from(&document.space_id),
                Bind::from(&document.trust_target_id),
                Bind::from(&document.author_id),
                Bind::from(&document.origin),
                Bind::from(&document.title),
                Bind::from(&document.summary),
                Bind::from(&document.body),
                Bind::from(document.created_at),
                Bind::from(document.updated_at),
            ]
        },
    );
    super::statement::execute(conn, statement).await
}

/// How candidates are ordered and where a page starts.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchOrder {
    /// By text relevance, the `cap` most relevant (requires a text query); the final rank is computed by the caller.
    Relevance {
        /// Most candidates returned.
        cap: i64,
    },
    /// By status rank, then lower bound (descending), then ID; after the given position.
    Trust {
        /// The last (status rank, lower bound, object ID) of the previous page.
        after: Option<(i32, f64, String)>,
    },
    /// By last change (newest first), then ID; after the given position.
    Recent {
        /// The last (updated_at, object ID) of the previous page.
        after: Option<(DateTime<Utc>, String)>,
    },
}

/// What to search for.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchFilter {
    /// The translated text query for this backend, or `None` to browse.
    pub text: Option<String>,
    /// Kinds to include.
    pub kinds: Vec<SearchKind>,
    /// Content types to include (content only; empty means all).
    pub content_types: Vec<String>,
    /// Entity types to include (entities only; empty means all).
    pub entity_types: Vec<String>,
    /// Tags every content result must carry.
    pub tags: Vec<String>,
    /// The space content must be in.
    pub space_id: Option<String>,
    /// Statuses to include.
    pub statuses: Vec<String>,
    /// Only objects created at or before this instant (a cursor's snapshot).
    pub created_at_or_before: DateTime<Utc>,
    /// When set, only these objects.
    pub restrict_to: Option<Vec<String>>,
    /// Ordering and paging.
    pub order: SearchOrder,
    /// Rows to return (for `Trust` and `Recent`).
    pub limit: i64,
}

/// One matching object with what ranking needs.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct SearchCandidate {
    /// The object's ID.
    pub object_id: String,
    /// `content`, `claim` or `entity`.
    pub kind: String,
    /// Content type, entity type, or `claim`.
    pub object_type: String,
    /// Title, claim text or entity name.
    pub title: String,
    /// Summary or description.
    pub summary: String,
    /// Who wrote it.
    pub author_id: Option<String>,
    /// Its realm.
    pub origin: String,
    /// Where its trust lives.
    pub trust_target_id: String,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Text relevance in (0, 1); 0 when browsing.
    pub relevance: f64,
    /// Trust value.
    pub value: f64,
    /// Trust lower bound.
    pub lower_bound: f64,
    /// Trust status.
    pub status: String,
    /// Status rank (0 = high_confidence … 6 = incorrect), as ordered by `trust`.
    pub status_rank: i32,
    /// Independent confirmations.
    pub independent_confirmations: i32,
    /// Contradictions.
    pub contradictions: i32,
    /// Real-world confirmations.
    pub real_world_confirmations: i32,
}

const STATUS_RANK: &str = "(CASE t.status WHEN 'high_confidence' THEN 0 WHEN 'supported' THEN 1 WHEN 'unverified' THEN 2 \
    WHEN 'disputed' THEN 3 WHEN 'outdated' THEN 4 WHEN 'superseded' THEN 5 ELSE 6 END)";

const CANDIDATE_COLUMNS: &str = "d.object_id, d.kind, d.object_type, d.title, d.summary, d.author_id, d.origin, \
    d.trust_target_id, d.updated_at, t.value, t.lower_bound, t.status, t.independent_confirmations, t.contradictions, \
    t.real_world_confirmations";

/// Appends the filters shared by both backends to a query builder whose FROM clause aliases the documents `d` and
/// their trust summaries `t`. Every value is bound.
macro_rules! push_filters {
    ($builder:expr, $filter:expr) => {{
        let builder = $builder;
        let filter: &SearchFilter = $filter;
        builder.push(" AND d.created_at <= ").push_bind(filter.created_at_or_before);
        builder.push(" AND d.kind IN (");
        {
            let mut kinds = builder.separated(", ");
            for kind in &filter.kinds {
                kinds.push_bind(kind.as_str().to_owned());
            }
        }
        builder.push(")");
        if !filter.content_types.is_empty() {
            builder.push(" AND (d.kind <> 'content' OR d.object_type IN (");
            {
                let mut types = builder.separated(", ");
                for content_type in &filter.content_types {
                    types.push_bind(content_type.clone());
                }
            }
            builder.push("))");
        }
        if !filter.entity_types.is_empty() {
            builder.push(" AND (d.kind <> 'entity' OR d.object_type IN (");
            {
                let mut types = builder.separated(", ");
                for entity_type in &filter.entity_types {
                    types.push_bind(entity_type.clone());
                }
            }
            builder.push("))");
        }
        for tag in &filter.tags {
            builder
                .push(" AND (d.kind <> 'content' OR d.trust_target_id IN (SELECT revision_id FROM revision_tags WHERE tag = ")
                .push_bind(tag.clone())
                .push("))");
        }
        if let Some(space_id) = &filter.space_id {
            builder.push(" AND (d.kind <> 'content' OR d.space_id = ").push_bind(space_id.clone()).push(")");
        }
        builder.push(" AND t.status IN (");
        {
            let mut statuses = builder.separated(", ");
            for status in &filter.statuses {
                statuses.push_bind(status.clone());
            }
        }
        builder.push(")");
        if let Some(ids) = &filter.restrict_to {
            if ids.is_empty() {
                builder.push(" AND 1 = 0");
            } else {
                builder.push(" AND d.object_id IN (");
                {
                    let mut restricted = builder.separated(", ");
                    for id in ids {
                        restricted.push_bind(id.clone());
                    }
                }
                builder.push(")");
            }
        }
        match &filter.order {
            SearchOrder::Relevance { .. } => {}
            SearchOrder::Trust { after: Some((rank, lower_bound, id)) } => {
                builder
                    .push(format_args!(" AND ({STATUS_RANK} > "))
                    .push_bind(*rank)
                    .push(format_args!(" OR ({STATUS_RANK} = "))
                    .push_bind(*rank)
                    .push(" AND (t.lower_bound < ")
                    .push_bind(*lower_bound)
                    .push(" OR (t.lower_bound = ")
                    .push_bind(*lower_bound)
                    .push(" AND d.object_id > ")
                    .push_bind(id.clone())
                    .push("))))");
            }
            SearchOrder::Recent { after: Some((updated_at, id)) } => {
                builder
                    .push(" AND (d.updated_at < ")
                    .push_bind(*updated_at)
                    .push(" OR (d.updated_at = ")
                    .push_bind(*updated_at)
                    .push(" AND d.object_id < ")
                    .push_bind(id.clone())
                    .push("))");
            }
            SearchOrder::Trust { after: None } | SearchOrder::Recent { after: None } => {}
        }
        match &filter.order {
            SearchOrder::Relevance { cap } => {
                builder.push(" ORDER BY relevance DESC, d.object_id LIMIT ").push_bind(*cap);
            }
            SearchOrder::Trust { .. } => {
                builder
                    .push(format_args!(" ORDER BY {STATUS_RANK}, t.lower_bound DESC, d.object_id LIMIT "))
                    .push_bind(filter.limit);
            }
            SearchOrder::Recent { .. } => {
                builder
                    .push(" ORDER BY d.updated_at DESC, d.object_id DESC LIMIT ")
                    .push_bind(filter.limit);
            }
        }
    }};
}

/// The candidates matching a filter, in the filter's order.
pub async fn search(conn: &mut Conn<'_>, filter: &SearchFilter) -> Result<Vec<SearchCandidate>, StoreError> {
    let candidates = match conn {
        Conn::Postgres(connection) => {
            let mut builder: QueryBuilder<Postgres> = QueryBuilder::new(format!("SELECT {CANDIDATE_COLUMNS}, "));
            match &filter.text {
                Some(text) => {
                    builder
                        .push("ts_rank_cd(d.document, websearch_to_tsquery('english', ")
                        .push_bind(text.clone())
                        .push("), 32)::DOUBLE PRECISION AS relevance, ");
                }
                None => {
                    builder.push("0.0::DOUBLE PRECISION AS relevance, ");
                }
            }
            builder.push(format_args!(
                "{STATUS_RANK} AS status_rank FROM search_documents d JOIN trust_summaries t ON t.target_id = d.trust_target_id WHERE TRUE"
            ));
            if let Some(text) = &filter.text {
                builder
                    .push(" AND d.document @@ websearch_to_tsquery('english', ")
                    .push_bind(text.clone())
                    .push(")");
            }
            push_filters!(&mut builder, filter);
            builder
                .build_query_as::<SearchCandidate>()
                .fetch_all(&mut **connection)
                .await?
        }
        sqlite => {
            let connection = super::sqlite_connection(sqlite).await?;
            match (&filter.text, &filter.order) {
                (Some(text), SearchOrder::Relevance { cap }) => {
                    sqlite_relevance_search(connection, filter, text, *cap).await?
                }
                _ => sqlite_one_pass_search(connection, filter).await?,
            }
        }
    };
    Ok(candidates)
}

/// bm25 is lower for better matches; b/(1+b) maps its negation into (0, 1) like PostgreSQL's normalization 32
/// does for ts_rank_cd. Titles weigh 10, summaries 4, bodies 1.
const SQLITE_RELEVANCE: &str = "(-bm25(search_fts, 10.0, 4.0, 1.0)) / (1.0 - bm25(search_fts, 10.0, 4.0, 1.0))";

/// The first window of a SQLite relevance search, as a multiple of the candidate cap.
const SQLITE_RELEVANCE_WINDOW_FACTOR: i64 = 2;

/// How many scored matches the first pass of a SQLite relevance search lists at most, as a multiple of the
/// candidate cap. Scoring costs the same whatever the limit; the limit only bounds what comes back.
const SQLITE_LISTED_MATCHES_FACTOR: i64 = 100;

/// The candidates matching a filter in one query over every match (browsing, `trust` and `recent` orders, and
/// the relevance search's last resort).
async fn sqlite_one_pass_search(
    connection: &mut sqlx::SqliteConnection,
    filter: &SearchFilter,
) -> Result<Vec<SearchCandidate>, StoreError> {
    let mut builder: QueryBuilder<Sqlite> = QueryBuilder::new(format!("SELECT {CANDIDATE_COLUMNS}, "));
    match &filter.text {
        Some(text) => {
            builder.push(format_args!(
                "{SQLITE_RELEVANCE} AS relevance, {STATUS_RANK} AS status_rank FROM search_fts \
                 JOIN search_documents d ON d.rowid = search_fts.rowid \
                 JOIN trust_summaries t ON t.target_id = d.trust_target_id WHERE search_fts MATCH "
            ));
            builder.push_bind(text.clone());
        }
        None => {
            builder.push(format_args!(
                "0.0 AS relevance, {STATUS_RANK} AS status_rank FROM search_documents d \
                 JOIN trust_summaries t ON t.target_id = d.trust_target_id WHERE 1 = 1"
            ));
        }
    }
    push_filters!(&mut builder, filter);
    Ok(builder
        .build_query_as::<SearchCandidate>()
        .fetch_all(&mut *connection)
        .await?)
}

/// The `cap` most relevant candidates that pass the filter, on SQLite, in two passes. The first pass scores the
/// full-text matches inside the FTS index alone and lists them best first; the second joins them to the documents
/// and trust summaries and applies the filters, a window at a time: the best `2 × cap` first, then sixteen times
/// as many, until `cap` candidates pass or the list ends. Joining every match instead costs several times as much
/// for common words. When the list was cut short and still too few pass, one pass over every match decides. The
/// answer is the one a single pass gives, except that among matches of exactly equal relevance at a window's edge
/// the earlier rows come first.
async fn sqlite_relevance_search(
    connection: &mut sqlx::SqliteConnection,
    filter: &SearchFilter,
    text: &str,
    cap: i64,
) -> Result<Vec<SearchCandidate>, StoreError> {
    let listed_limit = cap.saturating_mul(SQLITE_LISTED_MATCHES_FACTOR).max(1);
    let matches: Vec<(i64, f64)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT rowid, {SQLITE_RELEVANCE} AS relevance FROM search_fts WHERE search_fts MATCH $1 \
         ORDER BY relevance DESC, rowid LIMIT $2"
    )))
    .bind(text)
    .bind(listed_limit)
    .fetch_all(&mut *connection)
    .await?;
    let every_match_listed = i64::try_from(matches.len()).unwrap_or(i64::MAX) < listed_limit;
    let wanted = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut window = usize::try_from(cap.saturating_mul(SQLITE_RELEVANCE_WINDOW_FACTOR).max(1)).unwrap_or(usize::MAX);
    let mut start = 0;
    let mut candidates: Vec<SearchCandidate> = Vec::new();
    while start < matches.len() && candidates.len() < wanted {
        let end = matches.len().min(start.saturating_add(window));
        let pairs = serde_json::to_string(&matches[start..end])
            .map_err(|error| StoreError::Corrupt(format!("cannot encode the match window: {error}")))?;
        let mut builder: QueryBuilder<Sqlite> = QueryBuilder::new(format!(
            "SELECT {CANDIDATE_COLUMNS}, CAST(json_extract(w.value, '$[1]') AS REAL) AS relevance, \
             {STATUS_RANK} AS status_rank FROM json_each("
        ));
        builder.push_bind(pairs);
        builder.push(
            ") AS w JOIN search_documents d ON d.rowid = json_extract(w.value, '$[0]') \
             JOIN trust_summaries t ON t.target_id = d.trust_target_id WHERE 1 = 1",
        );
        push_filters!(&mut builder, filter);
        candidates.extend(
            builder
                .build_query_as::<SearchCandidate>()
                .fetch_all(&mut *connection)
                .await?,
        );
        start = end;
        window = window.saturating_mul(16);
    }
    if candidates.len() < wanted && !every_match_listed {
        return sqlite_one_pass_search(connection, filter).await;
    }
    // Windows come best first, so only ties across a window's edge can be out of the single pass's order.
    candidates.sort_by(|left, right| {
        right
            .relevance
            .total_cmp(&left.relevance)
            .then_with(|| left.object_id.cmp(&right.object_id))
    });
    candidates.truncate(wanted);
    Ok(candidates)
}

/// Appends `AND column IN (ids…)` and one whole-facet match per facet on the `;`-joined context key.
macro_rules! push_context_filter {
    ($builder:expr, $column:expr, $ids:expr, $facets:expr) => {{
        let builder = $builder;
        builder.push(format_args!(" AND {} IN (", $column));
        {
            let mut ids = builder.separated(", ");
            for id in $ids {
                ids.push_bind(id.clone());
            }
        }
        builder.push(")");
        for facet in $facets {
            builder
                .push(" AND (';' || context_key || ';') LIKE ")
                .push_bind(format!("%;{};%", facet.replace('%', "\\%").replace('_', "\\_")))
                .push(" ESCAPE '\\'");
        }
    }};
}

/// Among `object_ids`, the content items and entities with active usage events or ratings whose context holds
/// every facet in `facets` (each `key=value`, as stored in context keys).
pub async fn objects_with_evidence_in_context(
    conn: &mut Conn<'_>,
    object_ids: &[String],
    facets: &[String],
) -> Result<Vec<String>, StoreError> {
    if object_ids.is_empty() || facets.is_empty() {
        return Ok(Vec::new());
    }
    let mut matched: Vec<String> = Vec::new();
    for (table, column) in [
        ("usage_events", "target_content_id"),
        ("usage_events", "target_id"),
        ("ratings", "target_id"),
    ] {
        let rows: Vec<String> = match &mut *conn {
            Conn::Postgres(connection) => {
                let mut builder: QueryBuilder<Postgres> =
                    QueryBuilder::new(format!("SELECT DISTINCT {column} FROM {table} WHERE status = 'active'"));
                push_context_filter!(&mut builder, column, object_ids, facets);
                builder
                    .build_query_scalar::<String>()
                    .fetch_all(&mut **connection)
                    .await?
            }
            sqlite => {
                let connection = super::sqlite_connection(sqlite).await?;
                let mut builder: QueryBuilder<Sqlite> =
                    QueryBuilder::new(format!("SELECT DISTINCT {column} FROM {table} WHERE status = 'active'"));
                push_context_filter!(&mut builder, column, object_ids, facets);
                builder
                    .build_query_scalar::<String>()
                    .fetch_all(&mut *connection)
                    .await?
            }
        };
        for row in rows {
            if !matched.contains(&row) {
                matched.push(row);
            }
        }
    }
    Ok(matched)
}

/// Content whose current revision declares `alternative_to` towards `target_id` (with `reason`, when given).
pub async fn alternatives_declared_for(
    conn: &mut Conn<'_>,
    target_id: &str,
    reason: Option<&str>,
) -> Result<Vec<String>, StoreError> {
    let ids: Vec<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar(
            "SELECT DISTINCT r.source_content_id FROM relations r JOIN content_items ci ON ci.id = r.source_content_id \
             AND ci.current_revision_id = r.source_revision_id WHERE r.target_id = $1 AND r.relation_type = 'alternative_to' \
             AND ($2 IS NULL OR r.reason = $2) ORDER BY r.source_content_id",
        )
        .bind(target_id)
        .bind(reason)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(ids)
}

/// The subjects (entity IDs) of the current revisions of some content items.
pub async fn subjects_of_contents(
    conn: &mut Conn<'_>,
    content_ids: &[String],
) -> Result<Vec<(String, String)>, StoreError> {
    let mut pairs = Vec::new();
    for content_id in content_ids {
        let entities: Vec<String> = dispatch!(conn, |connection| {
            sqlx::query_scalar(
                "SELECT rs.entity_id FROM content_items ci JOIN revision_subjects rs ON rs.revision_id = ci.current_revision_id \
                 WHERE ci.id = $1 ORDER BY rs.entity_id",
            )
            .bind(content_id)
            .fetch_all(&mut *connection)
            .await?
        });
        pairs.extend(entities.into_iter().map(|entity| (content_id.clone(), entity)));
    }
    Ok(pairs)
}

/// Content items whose current revision has any of these subjects and declares an `alternative_to` relation.
pub async fn alternative_contents_about(conn: &mut Conn<'_>, entity_ids: &[String]) -> Result<Vec<String>, StoreError> {
    let mut found = Vec::new();
    for entity_id in entity_ids {
        let ids: Vec<String> = dispatch!(conn, |connection| {
            sqlx::query_scalar(
                "SELECT DISTINCT ci.id FROM revision_subjects rs JOIN content_items ci ON ci.current_revision_id = rs.revision_id \
                 JOIN relations r ON r.source_revision_id = ci.current_revision_id AND r.relation_type = 'alternative_to' \
                 WHERE rs.entity_id = $1 ORDER BY ci.id",
            )
            .bind(entity_id)
            .fetch_all(&mut *connection)
            .await?
        });
        for id in ids {
            if !found.contains(&id) {
                found.push(id);
            }
        }
    }
    Ok(found)
}
