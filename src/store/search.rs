//! Search documents and the full-text candidate query, with one arm per backend (PostgreSQL `tsvector`, SQLite
//! FTS5). The text query arrives already translated into each backend's safe syntax; it is always bound, never
//! spliced into SQL.

use chrono::{DateTime, Utc};
use sqlx::{Postgres, QueryBuilder, Sqlite};

use super::statement::{Bind, Column, FollowedBy, Insert, InsertShape, OnConflict, SqlType, Statement};
use super::{Conn, StoreError, dispatch};
use crate::domain::search_query::ParsedQuery;
use crate::domain::{TrustStatus, TrustStatuses, TrustViewScope};

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
    /// The tags of a content item's current revision (empty for claims and entities).
    pub tags: Vec<String>,
    /// The trust statuses of the object's trust target, in each trust view.
    pub statuses: TrustStatuses,
}

/// The index term of one filterable property: a letter naming the property, the value's UTF-8 bytes in lowercase
/// hex, and a closing `0`. Neither FTS5's tokenizer and Porter stemmer nor PostgreSQL's `simple` configuration
/// changes such a term, and no value can collide with another (migration 0006 writes the same terms in SQL).
pub fn facet_term(property: char, value: &str) -> String {
    format!("{property}{}0", hex::encode(value.as_bytes()))
}

/// The facet terms of a document: its kind, its kind and type, its space, and each tag of a content item.
fn document_facets(document: &SearchDocument) -> String {
    let kind = document.kind.as_str();
    let mut terms = vec![
        facet_term('k', kind),
        facet_term('t', &format!("{kind}/{}", document.object_type)),
    ];
    if let Some(space_id) = &document.space_id {
        terms.push(facet_term('p', space_id));
    }
    if document.kind == SearchKind::Content {
        terms.extend(document.tags.iter().map(|tag| facet_term('g', tag)));
    }
    terms.join(" ")
}

/// The kind a SQLite document rowid carries in its last two bits (migration 0006 numbers them the same way).
fn kind_code(kind: SearchKind) -> i64 {
    match kind {
        SearchKind::Content => 1,
        SearchKind::Claim => 2,
        SearchKind::Entity => 3,
    }
}

/// The index term of a trust status (the `all` view).
fn status_facet(status: TrustStatus) -> String {
    facet_term('s', status.as_str())
}

/// The index term of a first-party status, which a document carries only when it differs from its status.
fn first_party_status_facet(status: TrustStatus) -> String {
    facet_term('f', status.as_str())
}

/// The index term of a document whose first-party status differs from its status (it carries a first-party term).
fn first_party_differs_facet() -> String {
    facet_term('d', "first_party")
}

/// A document's status terms (its `status_facet` column): its status; and, when its first-party status differs (it
/// holds other realms' evidence that changes the status), that status and the term saying so. Most documents hold
/// no such evidence, so most carry one term, as before the first-party view; a first-party status filter matches
/// the first-party term, or the status term of a document without the marker (see `FacetFilter::of`).
fn status_facets(statuses: TrustStatuses) -> String {
    if statuses.first_party == statuses.all {
        status_facet(statuses.all)
    } else {
        format!(
            "{} {} {}",
            status_facet(statuses.all),
            first_party_status_facet(statuses.first_party),
            first_party_differs_facet()
        )
    }
}

/// Whether the documents a write indexes may have been indexed before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentsAre {
    /// Their objects were created by the same write (a new item, new claims): nothing to remove first.
    New,
    /// Some may exist already and are rewritten.
    MaybeIndexed,
}

/// Writes (or rewrites) search documents. On SQLite a document that exists is removed and written anew, so that
/// its full-text rowid moves to the end and the index stays in the order documents last changed; documents that are
/// [`DocumentsAre::New`] skip the removal (one statement less for every replicated or published item).
pub async fn upsert_documents(
    conn: &mut Conn<'_>,
    documents: &[SearchDocument],
    documents_are: DocumentsAre,
) -> Result<(), StoreError> {
    if documents.is_empty() {
        return Ok(());
    }
    let row_binds = |document: &SearchDocument| {
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
            Bind::from(document_facets(document).as_str()),
            Bind::from(status_facets(document.statuses).as_str()),
        ]
    };
    match conn {
        Conn::Postgres(_) | Conn::PostgresWrite(_) => {
            // One statement: the documents, then their vectors from what was written (see the shape).
            let statement = Insert::rows(&SEARCH_DOCUMENT_WITH_VECTOR, documents, row_binds);
            super::statement::execute(conn, statement).await
        }
        _ => {
            if documents_are == DocumentsAre::MaybeIndexed {
                let removed = Statement::delete_in_list(
                    "search_documents",
                    "DELETE FROM search_documents WHERE object_id IN",
                    documents
                        .iter()
                        .map(|document| Bind::from(&document.object_id))
                        .collect(),
                );
                super::statement::execute(conn, removed).await?;
            }
            // Rowids continue after the highest one, each in its kind's slot (see `kind_code`).
            let numbered: Vec<(i64, &SearchDocument)> = documents
                .iter()
                .enumerate()
                .map(|(position, document)| (i64::try_from(position).unwrap_or(i64::MAX) + 1, document))
                .collect();
            let statement = Statement::insert_computed_rows(
                "search_documents",
                "INSERT INTO search_documents (document_rowid, object_id, kind, object_type, space_id, \
                 trust_target_id, author_id, origin, title, summary, body, created_at, updated_at, facets, \
                 status_facet) SELECT ((SELECT COALESCE(MAX(document_rowid), 0) FROM search_documents) / 4 \
                 + column1) * 4 + column2, column3, column4, column5, column6, column7, column8, column9, column10, \
                 column11, column12, column13, column14, column15, column16 FROM (",
                &numbered,
                ")",
                |(position, document)| {
                    let mut binds = vec![Bind::from(*position), Bind::from(kind_code(document.kind))];
                    binds.extend(row_binds(document));
                    binds
                },
            );
            super::statement::execute(conn, statement).await
        }
    }
}

/// Records a trust target's new status on the documents whose trust lives there, for status filters. On
/// PostgreSQL the status lexeme of each vector is replaced in place: the document did not change, so it keeps its
/// change number, and its text need not be parsed again.
pub async fn set_document_status(
    conn: &mut Conn<'_>,
    trust_target_id: &str,
    statuses: TrustStatuses,
) -> Result<(), StoreError> {
    let statement = match conn {
        Conn::Postgres(_) | Conn::PostgresWrite(_) => {
            // Status terms are a letter and hex digits (see `facet_term`), so they can stand in the SQL text.
            let every_status_lexeme: Vec<String> = ALL_STATUSES
                .iter()
                .flat_map(|each| [status_facet(*each), first_party_status_facet(*each)])
                .chain([first_party_differs_facet()])
                .map(|term| format!("' {term}'"))
                .collect();
            Statement::update(
                "search_vectors",
                format!(
                    "UPDATE search_vectors v SET document = ts_delete(v.document, ARRAY[{}]) \
                     || array_to_tsvector(string_to_array(' ' || replace($2, ' ', '| '), '|')) \
                     FROM changed WHERE v.object_id = changed.object_id",
                    every_status_lexeme.join(", ")
                ),
            )
            .with_queries(
                "changed AS (UPDATE search_documents SET status_facet = $2 WHERE trust_target_id = $1 \
                 AND status_facet <> $2 RETURNING object_id)",
            )
            .also_writes("search_documents")
        }
        _ => Statement::update(
            "search_documents",
            "UPDATE search_documents SET status_facet = $2 WHERE trust_target_id = $1 AND status_facet <> $2",
        ),
    };
    super::statement::execute(
        conn,
        statement.bind(trust_target_id).bind(status_facets(statuses).as_str()),
    )
    .await
}

/// A PostgreSQL document's vector, from the columns of its `search_documents` row: title (weight A), summary (B),
/// body (C), and each facet term as a lexeme of its own after a space (see migration 0007). A macro, so that the
/// vector's statement is one fixed text.
macro_rules! postgres_vector {
    () => {
        "setweight(to_tsvector('english', title), 'A') \
         || setweight(to_tsvector('english', summary), 'B') \
         || setweight(to_tsvector('english', left(body, 100000)), 'C') \
         || array_to_tsvector(string_to_array(' ' || replace(facets || ' ' || status_facet, ' ', '| '), '|'))"
    };
}

/// A search document (PostgreSQL), and its vector from what was written, in one statement. A document that changed
/// gets a new change number, so that the candidate pool (the newest matches) follows it. Both upserts are on
/// `object_id`, the vectors' taken unchanged from the documents', which is what lets a later batch's documents join
/// these rows (`merged_rows.rs` checks the documents' keys; the vectors' are the same).
const SEARCH_DOCUMENT_WITH_VECTOR: InsertShape = InsertShape::new(
    "search_documents",
    &[
        Column::new("object_id", SqlType::Text),
        Column::new("kind", SqlType::Text),
        Column::new("object_type", SqlType::Text),
        Column::new("space_id", SqlType::Text),
        Column::new("trust_target_id", SqlType::Text),
        Column::new("author_id", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("title", SqlType::Text),
        Column::new("summary", SqlType::Text),
        Column::new("body", SqlType::Text),
        Column::new("created_at", SqlType::TimestampTz),
        Column::new("updated_at", SqlType::TimestampTz),
        Column::new("facets", SqlType::Text),
        Column::new("status_facet", SqlType::Text),
    ],
)
.on_conflict(OnConflict::Update {
    key: &["object_id"],
    set: "object_type = excluded.object_type, space_id = excluded.space_id, \
          trust_target_id = excluded.trust_target_id, author_id = excluded.author_id, title = excluded.title, \
          summary = excluded.summary, body = excluded.body, updated_at = excluded.updated_at, \
          facets = excluded.facets, status_facet = excluded.status_facet",
})
.followed_by(FollowedBy {
    name: "written",
    returning: "object_id, trust_target_id, origin, created_at, updated_at, title, summary, body, facets, \
                status_facet",
    statement: concat!(
        "INSERT INTO search_vectors (object_id, trust_target_id, origin, created_at, updated_at, document) \
         SELECT object_id, trust_target_id, origin, created_at, updated_at, ",
        postgres_vector!(),
        " FROM written ON CONFLICT (object_id) DO UPDATE SET change_number = nextval('search_change_numbers'), \
         trust_target_id = excluded.trust_target_id, updated_at = excluded.updated_at, \
         document = excluded.document"
    ),
    writes: &["search_vectors"],
});

/// Builds every search document's vector (PostgreSQL) after a load (`portable.rs`), numbering them in the order the
/// documents last changed, as their writes would have.
pub(super) async fn rebuild_postgres_vectors(connection: &mut sqlx::PgConnection) -> Result<(), StoreError> {
    sqlx::query(concat!(
        "INSERT INTO search_vectors (object_id, trust_target_id, origin, created_at, updated_at, document) \
         SELECT object_id, trust_target_id, origin, created_at, updated_at, ",
        postgres_vector!(),
        " FROM search_documents ORDER BY updated_at, object_id COLLATE \"C\""
    ))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// How candidates are ordered and where a page starts.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchOrder {
    /// For a text query: the `best` most relevant of its candidate pool, each with its relevance, in no particular
    /// order; the caller orders them.
    Relevance {
        /// How many of the pool to return.
        best: usize,
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
    /// The text query, or `None` to browse.
    pub text: Option<ParsedQuery>,
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
    /// The realm every result must come from.
    pub origin: Option<String>,
    /// Statuses to include.
    pub statuses: Vec<TrustStatus>,
    /// Whose evidence the statuses, the trust order and the candidates' trust weigh.
    pub trust_view: TrustViewScope,
    /// Only objects created at or before this instant (a cursor's snapshot);
    /// `None` on a first page: nothing was created after the instant the search runs at.
    pub created_at_or_before: Option<DateTime<Utc>>,
    /// When set, only these objects.
    pub restrict_to: Option<Vec<String>>,
    /// Ordering and paging.
    pub order: SearchOrder,
    /// For a text query: the candidate pool, at most this many of the most recently changed matches that pass
    /// every filter; every order applies to the pool. Browsing has no pool.
    pub candidates: i64,
    /// Rows to return (for `Trust` and `Recent`).
    pub limit: i64,
}

/// One matching object with what ordering and ranking need; what a listing shows comes from [`listings`].
#[derive(Debug, Clone, PartialEq)]
pub struct SearchCandidate {
    /// The object's ID.
    pub object_id: String,
    /// Text relevance in (0, 1); 0 when browsing.
    pub relevance: f64,
    /// Trust value.
    pub value: f64,
    /// Trust lower bound.
    pub lower_bound: f64,
    /// Trust status.
    pub status: TrustStatus,
    /// Status rank (0 = high_confidence … 6 = incorrect), as ordered by `trust`.
    pub status_rank: i32,
    /// Independent confirmations.
    pub independent_confirmations: i32,
    /// Contradictions.
    pub contradictions: i32,
    /// Real-world confirmations.
    pub real_world_confirmations: i32,
}

/// A candidate as the database returns it: the status is column text until [`CandidateRow::into_candidate`] reads it.
#[derive(sqlx::FromRow)]
struct CandidateRow {
    object_id: String,
    relevance: f64,
    value: f64,
    lower_bound: f64,
    status: String,
    status_rank: i32,
    independent_confirmations: i32,
    contradictions: i32,
    real_world_confirmations: i32,
}

impl CandidateRow {
    fn into_candidate(self) -> Result<SearchCandidate, StoreError> {
        Ok(SearchCandidate {
            status: super::stored_status(&self.status, &self.object_id)?,
            object_id: self.object_id,
            relevance: self.relevance,
            value: self.value,
            lower_bound: self.lower_bound,
            status_rank: self.status_rank,
            independent_confirmations: self.independent_confirmations,
            contradictions: self.contradictions,
            real_world_confirmations: self.real_world_confirmations,
        })
    }
}

/// Reads the candidates of one query.
fn into_candidates(rows: Vec<CandidateRow>) -> Result<Vec<SearchCandidate>, StoreError> {
    rows.into_iter().map(CandidateRow::into_candidate).collect()
}

/// What a search result shows of its object besides trust.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct SearchListing {
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
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// A content item's space.
    pub space_id: Option<String>,
}

/// The rank of a trust status in the trust order, as an expression over the trust summaries aliased `t`. Migration
/// 0010 indexes exactly this expression; change both together.
const STATUS_RANK: &str = "(CASE t.status WHEN 'high_confidence' THEN 0 WHEN 'supported' THEN 1 WHEN 'unverified' THEN 2 \
    WHEN 'disputed' THEN 3 WHEN 'outdated' THEN 4 WHEN 'superseded' THEN 5 ELSE 6 END)";

/// The rank that [`STATUS_RANK`] gives a status (0 = high_confidence … 6 = incorrect), the order of `sort: trust`.
pub fn status_rank(status: TrustStatus) -> i32 {
    match status {
        TrustStatus::HighConfidence => 0,
        TrustStatus::Supported => 1,
        TrustStatus::Unverified => 2,
        TrustStatus::Disputed => 3,
        TrustStatus::Outdated => 4,
        TrustStatus::Superseded => 5,
        TrustStatus::Incorrect => 6,
    }
}

/// [`STATUS_RANK`] of the first-party status. Migration 0020 indexes exactly this expression; change both together.
const FIRST_PARTY_STATUS_RANK: &str = "(CASE t.first_party_status WHEN 'high_confidence' THEN 0 WHEN 'supported' THEN 1 \
    WHEN 'unverified' THEN 2 WHEN 'disputed' THEN 3 WHEN 'outdated' THEN 4 WHEN 'superseded' THEN 5 ELSE 6 END)";

/// The trust columns of a candidate, from the trust summaries aliased `t`; the object ID comes with them.
const TRUST_COLUMNS: &str =
    "t.value, t.lower_bound, t.status, t.independent_confirmations, t.contradictions, t.real_world_confirmations";

/// [`TRUST_COLUMNS`] of the first-party view, under the same names.
const FIRST_PARTY_TRUST_COLUMNS: &str = "t.first_party_value AS value, t.first_party_lower_bound AS lower_bound, \
    t.first_party_status AS status, t.first_party_independent_confirmations AS independent_confirmations, \
    t.first_party_contradictions AS contradictions, \
    t.first_party_real_world_confirmations AS real_world_confirmations";

/// The SQL of one trust view over the trust summaries aliased `t`: its status rank, its lower bound, and the
/// candidate's trust columns.
#[derive(Debug, Clone, Copy)]
struct ViewColumns {
    rank: &'static str,
    lower_bound: &'static str,
    trust_columns: &'static str,
    /// The trust columns read from `trust_summaries` itself, under the names of the `all` view, for a subquery
    /// that the statement then aliases `t` (so that the rest of it reads the `all` view's names).
    summary_columns: &'static str,
}

fn view_columns(view: TrustViewScope) -> ViewColumns {
    match view {
        TrustViewScope::All => ViewColumns {
            rank: STATUS_RANK,
            lower_bound: "t.lower_bound",
            trust_columns: TRUST_COLUMNS,
            summary_columns: "value, lower_bound, status, independent_confirmations, contradictions, \
                real_world_confirmations",
        },
        TrustViewScope::FirstParty => ViewColumns {
            rank: FIRST_PARTY_STATUS_RANK,
            lower_bound: "t.first_party_lower_bound",
            trust_columns: FIRST_PARTY_TRUST_COLUMNS,
            summary_columns: "first_party_value AS value, first_party_lower_bound AS lower_bound, \
                first_party_status AS status, first_party_independent_confirmations AS independent_confirmations, \
                first_party_contradictions AS contradictions, \
                first_party_real_world_confirmations AS real_world_confirmations",
        },
    }
}

/// Appends the filters shared by both backends to a query builder whose FROM clause aliases the documents `d` and
/// their trust summaries `t`. Every value is bound.
macro_rules! push_filters {
    ($builder:expr, $filter:expr) => {{
        let builder = $builder;
        let filter: &SearchFilter = $filter;
        if let Some(snapshot) = filter.created_at_or_before {
            builder.push(" AND d.created_at <= ").push_bind(snapshot);
        }
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
        if let Some(origin) = &filter.origin {
            builder.push(" AND d.origin = ").push_bind(origin.clone());
        }
        // Every document has one of the statuses, so allowing all of them is no condition at all (and one that
        // could lead SQLite's planner to start from the statuses). A status filter is a filter on the rank, which
        // the browsing index holds (migration 0010).
        if filter.statuses.len() < ALL_STATUSES.len() {
            builder.push(format_args!(" AND {} IN (", view_columns(filter.trust_view).rank));
            {
                let mut ranks = builder.separated(", ");
                for status in &filter.statuses {
                    ranks.push_bind(status_rank(*status));
                }
            }
            builder.push(")");
        }
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
        push_page(builder, &filter.order, filter.limit, "d", filter.trust_view);
    }};
}

/// Appends the page of an order: the condition that starts it after the cursor's position, `ORDER BY` and `LIMIT`.
/// The query aliases the trust summaries `t` (for the trust order, in `view`); `rows` names the rows whose
/// `object_id` breaks ties and whose `updated_at` the recency order reads.
fn push_page<DB: sqlx::Database>(
    builder: &mut QueryBuilder<DB>,
    order: &SearchOrder,
    limit: i64,
    rows: &str,
    view: TrustViewScope,
) where
    i32: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    f64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let ViewColumns {
        rank: status_rank,
        lower_bound: lower_bound_column,
        ..
    } = view_columns(view);
    match order {
        SearchOrder::Relevance { .. } => return,
        SearchOrder::Trust {
            after: Some((rank, lower_bound, id)),
        } => {
            builder
                .push(format_args!(" AND ({status_rank} > "))
                .push_bind(*rank)
                .push(format_args!(" OR ({status_rank} = "))
                .push_bind(*rank)
                .push(format_args!(" AND ({lower_bound_column} < "))
                .push_bind(*lower_bound)
                .push(format_args!(" OR ({lower_bound_column} = "))
                .push_bind(*lower_bound)
                .push(format_args!(" AND {rows}.object_id > "))
                .push_bind(id.clone())
                .push("))))");
        }
        SearchOrder::Recent {
            after: Some((changed_at, id)),
        } => {
            builder
                .push(format_args!(" AND ({rows}.updated_at < "))
                .push_bind(*changed_at)
                .push(format_args!(" OR ({rows}.updated_at = "))
                .push_bind(*changed_at)
                .push(format_args!(" AND {rows}.object_id < "))
                .push_bind(id.clone())
                .push("))");
        }
        SearchOrder::Trust { after: None } | SearchOrder::Recent { after: None } => {}
    }
    match order {
        SearchOrder::Trust { .. } => {
            builder.push(format_args!(
                " ORDER BY {status_rank}, {lower_bound_column} DESC, {rows}.object_id"
            ));
        }
        _ => {
            builder.push(format_args!(" ORDER BY {rows}.updated_at DESC, {rows}.object_id DESC"));
        }
    }
    builder.push(" LIMIT ").push_bind(limit);
}

/// The candidates matching a filter: for a text query its pool of candidates in the filter's order (the most
/// relevant, or a page by trust or recency), otherwise (browsing) the next page in the filter's order.
pub async fn search(conn: &mut Conn<'_>, filter: &SearchFilter) -> Result<Vec<SearchCandidate>, StoreError> {
    match &filter.text {
        Some(text) => match conn {
            postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
                let text = super::search_syntax::render_websearch(text);
                postgres_text_search(super::postgres_connection(postgres).await?, filter, &text).await
            }
            sqlite => sqlite_text_search(sqlite, filter, &super::search_syntax::render_fts5(text)).await,
        },
        None => browse(conn, filter).await,
    }
}

/// SQLite's bm25 with titles weighing 10, summaries 4 and bodies 1 (the facet columns count for nothing). It is
/// lower for better matches; each call computes it anew, so a statement calls it once per row and maps it later.
/// `interai_bm25` (the `fts5-rank` crate, registered on every connection) gives FTS5's `bm25` to the bit, but counts
/// a phrase's documents only when a row needs them and keeps the counts on the connection while the index's row and
/// token totals stay the same: `bm25` recounts every phrase's documents, filter terms and excluded words included,
/// at the start of every statement. That is exact here because a phrase's matches depend only on its tokens: there
/// are no prefix queries, and the column filters never change what a phrase matches (`FacetFilter::fts5_match`).
const SQLITE_BM25: &str = "interai_bm25(search_fts, 10.0, 4.0, 1.0, 0.0, 0.0)";

/// bm25 (the column `bm25_score` of the pool) mapped into (0, 1) by b/(1+b) of its negation, like PostgreSQL's
/// normalization 32 does for ts_rank_cd.
const SQLITE_RELEVANCE: &str = "(-pool.bm25_score) / (1.0 - pool.bm25_score)";

/// PostgreSQL's relevance: cover density with title (A) over summary (B) over body (C), mapped into (0, 1).
const POSTGRES_RELEVANCE: &str = "ts_rank_cd('{0, 0.2, 0.4, 1}'::float4[], v.document, \
    websearch_to_tsquery('english', $1), 32)::DOUBLE PRECISION";

/// A cheaper estimate of PostgreSQL's relevance that chooses which candidates get the real one: the same weights,
/// but each word counted on its own (`ts_rank` over the query's words joined by "or"), which costs a fraction of
/// cover density, whose cost grows with the product of the words' positions.
const POSTGRES_FIRST_RELEVANCE: &str = "ts_rank('{0, 0.2, 0.4, 1}'::float4[], v.document, \
    regexp_replace(websearch_to_tsquery('english', $1)::text, ' (&|<->|<[0-9]+>) ', ' | ', 'g')::tsquery, 32)";

/// A text query on PostgreSQL, in one statement that reads only the narrow vector table and the trust summaries.
/// The pool is the newest matches by change number, found through the GIN index on the vector table (whose rows
/// hold their vectors, their trust target and their change times, so no candidate visits its wide document row).
/// For the relevance order every pool candidate gets the cheap estimate and the `best` by the estimate are returned
/// with the real relevance; for the trust and recency orders only the page is returned, and only its rows are
/// ranked.
async fn postgres_text_search(
    connection: &mut sqlx::PgConnection,
    filter: &SearchFilter,
    text: &str,
) -> Result<Vec<SearchCandidate>, StoreError> {
    let facets = FacetFilter::of(filter, false);
    let ViewColumns {
        rank,
        trust_columns,
        summary_columns,
        ..
    } = view_columns(filter.trust_view);
    // `$1` is the text; every relevance expression above refers to it.
    let mut builder: QueryBuilder<Postgres> =
        QueryBuilder::new("WITH pool AS (SELECT v.change_number, v.object_id, v.trust_target_id");
    let relevance_order = match filter.order {
        SearchOrder::Relevance { best } => Some(best),
        _ => None,
    };
    if relevance_order.is_some() {
        builder.push(format_args!(", {POSTGRES_FIRST_RELEVANCE} AS first_relevance"));
    } else {
        builder.push(", v.updated_at");
    }
    push_postgres_matches(&mut builder, &facets, text);
    end_pool(&mut builder, filter, "v", "v.change_number");
    match relevance_order {
        Some(best) => {
            builder
                .push(
                    ", estimated AS (SELECT change_number FROM pool ORDER BY first_relevance DESC, change_number DESC \
                     LIMIT ",
                )
                .push_bind(i64::try_from(best).unwrap_or(i64::MAX))
                .push(format_args!(
                    ") SELECT v.object_id, {trust_columns}, {POSTGRES_RELEVANCE} AS relevance, \
                     {rank} AS status_rank FROM estimated \
                     JOIN search_vectors v ON v.change_number = estimated.change_number \
                     JOIN trust_summaries t ON t.target_id = v.trust_target_id"
                ));
        }
        None if matches!(filter.order, SearchOrder::Recent { .. }) => {
            // The pool rows carry their change times, so the page is cut before any trust summary is read or any
            // vector read again; only the page's rows are ranked.
            builder.push(
                ", page AS (SELECT pool.change_number, pool.object_id, pool.trust_target_id, pool.updated_at \
                 FROM pool WHERE 1 = 1",
            );
            push_page(&mut builder, &filter.order, filter.limit, "pool", filter.trust_view);
            builder.push(format_args!(
                ") SELECT page.object_id, {trust_columns}, {rank} AS status_rank, \
                 {POSTGRES_RELEVANCE} AS relevance FROM page \
                 JOIN trust_summaries t ON t.target_id = page.trust_target_id \
                 JOIN search_vectors v ON v.change_number = page.change_number \
                 ORDER BY page.updated_at DESC, page.object_id DESC"
            ));
        }
        None => {
            // The trust order needs every pool row's trust summary, reached through the trust target the pool
            // row carries; only the page's rows are ranked. Each summary is looked up by its key (the `LIMIT 1`
            // keeps the lateral subquery from being turned back into a join): for a pool of 2,000 the planner
            // would rather hash-join a scan of every summary, which took 65–110 ms against 27–33 ms for the
            // lookups (100,000 items). The subquery reads the view's columns under the `all` view's names, so the
            // page is ordered as the `all` view orders.
            builder.push(format_args!(
                ", page AS (SELECT pool.change_number, pool.object_id, {TRUST_COLUMNS}, \
                 {STATUS_RANK} AS status_rank FROM pool CROSS JOIN LATERAL (SELECT {summary_columns} \
                 FROM trust_summaries WHERE target_id = pool.trust_target_id LIMIT 1) t WHERE 1 = 1"
            ));
            push_page(&mut builder, &filter.order, filter.limit, "pool", TrustViewScope::All);
            builder.push(format_args!(
                ") SELECT page.object_id, page.value, page.lower_bound, page.status, \
                 page.independent_confirmations, page.contradictions, page.real_world_confirmations, \
                 page.status_rank, {POSTGRES_RELEVANCE} AS relevance FROM page \
                 JOIN search_vectors v ON v.change_number = page.change_number \
                 ORDER BY page.status_rank, page.lower_bound DESC, page.object_id"
            ));
        }
    }
    // Not a prepared statement kept for reuse: PostgreSQL would soon switch it to a generic plan, which cannot know
    // whether the words are rare (use the text index) or common (walk the change order).
    into_candidates(
        builder
            .build_query_as::<CandidateRow>()
            .persistent(false)
            .fetch_all(connection)
            .await?,
    )
}

/// ` FROM search_vectors v WHERE …`: the vector rows (aliased `v`) that match the words and the facet filter.
fn push_postgres_matches(builder: &mut QueryBuilder<Postgres>, facets: &FacetFilter, text: &str) {
    builder
        .push(" FROM search_vectors v WHERE v.document @@ (websearch_to_tsquery('english', ")
        .push_bind(text.to_owned())
        .push(")");
    if let Some(facets) = facets.tsquery() {
        builder.push(" && CAST(").push_bind(facets).push(" AS tsquery)");
    }
    builder.push(")");
}

/// ` FROM search_fts … WHERE …`: the full-text rows that match the words and the facet filter, joined to their
/// documents (aliased `d`) when `checks_documents`.
fn push_sqlite_matches(builder: &mut QueryBuilder<Sqlite>, facets: &FacetFilter, text: &str, checks_documents: bool) {
    builder.push("FROM search_fts ");
    if checks_documents {
        builder.push("JOIN search_documents d ON d.document_rowid = search_fts.rowid ");
    }
    builder
        .push("WHERE search_fts MATCH ")
        .push_bind(facets.fts5_match(text));
    if let Some(kinds) = &facets.rowid_kinds {
        builder.push(" AND (search_fts.rowid % 4) IN (");
        let mut codes = builder.separated(", ");
        for code in kinds {
            codes.push_bind(*code);
        }
        builder.push(")");
    }
}

/// Whether more than `count` objects match a text query's words and filters (the snapshot and the ID list
/// included): whether a pool of `count` candidates left matches out. It walks at most `count + 1` matches and
/// scores none of them.
pub async fn more_matches_than(conn: &mut Conn<'_>, filter: &SearchFilter, count: i64) -> Result<bool, StoreError> {
    let Some(text) = &filter.text else {
        return Ok(false);
    };
    let probe = SearchFilter {
        candidates: count.saturating_add(1),
        ..filter.clone()
    };
    let matched: i64 = match conn {
        postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
            let text = super::search_syntax::render_websearch(text);
            let mut builder: QueryBuilder<Postgres> = QueryBuilder::new("WITH pool AS (SELECT v.change_number");
            push_postgres_matches(&mut builder, &FacetFilter::of(&probe, false), &text);
            end_pool(&mut builder, &probe, "v", "v.change_number");
            builder.push(" SELECT count(*) FROM pool");
            builder
                .build_query_scalar()
                .persistent(false)
                .fetch_one(super::postgres_connection(postgres).await?)
                .await?
        }
        sqlite => {
            let text = super::search_syntax::render_fts5(text);
            let checks_documents =
                probe.created_at_or_before.is_some() || probe.restrict_to.is_some() || probe.origin.is_some();
            let mut builder: QueryBuilder<Sqlite> = QueryBuilder::new("WITH pool AS (SELECT search_fts.rowid ");
            push_sqlite_matches(&mut builder, &FacetFilter::of(&probe, true), &text, checks_documents);
            end_pool(&mut builder, &probe, "d", "search_fts.rowid");
            builder.push(" SELECT count(*) FROM pool");
            builder
                .build_query_scalar()
                .fetch_one(&mut *super::sqlite_connection(sqlite).await?)
                .await?
        }
    };
    Ok(matched > count)
}

/// A text query on SQLite, in one statement: the pool from the full-text index, newest rowid first (joined to the
/// documents only when a snapshot or an ID list must be checked before the pool is cut), each candidate with its
/// bm25; then the `best` most relevant, or a page of the pool by trust or recency. Candidates reach their trust
/// summaries through the narrow `search_documents_ranking` index, never through their wide document rows.
async fn sqlite_text_search(
    conn: &mut Conn<'_>,
    filter: &SearchFilter,
    text: &str,
) -> Result<Vec<SearchCandidate>, StoreError> {
    let connection = super::sqlite_connection(conn).await?;
    let facets = FacetFilter::of(filter, true);
    let ViewColumns {
        rank, trust_columns, ..
    } = view_columns(filter.trust_view);
    let checks_documents =
        filter.created_at_or_before.is_some() || filter.restrict_to.is_some() || filter.origin.is_some();
    let mut builder: QueryBuilder<Sqlite> = QueryBuilder::new(format!(
        "WITH pool AS (SELECT search_fts.rowid AS document_rowid, {SQLITE_BM25} AS bm25_score "
    ));
    push_sqlite_matches(&mut builder, &facets, text, checks_documents);
    end_pool(&mut builder, filter, "d", "search_fts.rowid");
    let ranked_rows = "JOIN search_documents d INDEXED BY search_documents_ranking \
                       ON d.document_rowid = pool.document_rowid \
                       JOIN trust_summaries t ON t.target_id = d.trust_target_id";
    match filter.order {
        SearchOrder::Relevance { best } => {
            builder
                .push(
                    ", chosen AS (SELECT document_rowid, bm25_score FROM pool \
                     ORDER BY bm25_score, document_rowid DESC LIMIT ",
                )
                .push_bind(i64::try_from(best).unwrap_or(i64::MAX))
                .push(format_args!(
                    ") SELECT d.object_id, {trust_columns}, {SQLITE_RELEVANCE} AS relevance, \
                     {rank} AS status_rank FROM chosen AS pool {ranked_rows}"
                ));
        }
        _ => {
            builder.push(format_args!(
                " SELECT d.object_id, {trust_columns}, {SQLITE_RELEVANCE} AS relevance, \
                 {rank} AS status_rank FROM pool {ranked_rows} WHERE 1 = 1"
            ));
            push_page(&mut builder, &filter.order, filter.limit, "d", filter.trust_view);
        }
    }
    into_candidates(
        builder
            .build_query_as::<CandidateRow>()
            .fetch_all(&mut *connection)
            .await?,
    )
}

/// What the results show of the objects `object_ids`, in no particular order (objects that no longer have a
/// search document are left out).
pub async fn listings(conn: &mut Conn<'_>, object_ids: &[String]) -> Result<Vec<SearchListing>, StoreError> {
    if object_ids.is_empty() {
        return Ok(Vec::new());
    }
    let head = "SELECT object_id, kind, object_type, title, summary, author_id, origin, updated_at, space_id \
                FROM search_documents WHERE object_id IN (";
    let listings = match conn {
        postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
            let connection = super::postgres_connection(postgres).await?;
            let mut builder: QueryBuilder<Postgres> = QueryBuilder::new(head);
            {
                let mut ids = builder.separated(", ");
                for id in object_ids {
                    ids.push_bind(id.clone());
                }
            }
            builder.push(")");
            builder
                .build_query_as::<SearchListing>()
                .fetch_all(&mut *connection)
                .await?
        }
        sqlite => {
            let connection = super::sqlite_connection(sqlite).await?;
            let mut builder: QueryBuilder<Sqlite> = QueryBuilder::new(head);
            {
                let mut ids = builder.separated(", ");
                for id in object_ids {
                    ids.push_bind(id.clone());
                }
            }
            builder.push(")");
            builder
                .build_query_as::<SearchListing>()
                .fetch_all(&mut *connection)
                .await?
        }
    };
    Ok(listings)
}

/// Ends the pool's statement: the snapshot and the ID list checked on the rows aliased `alias`, then the
/// `candidates` highest by `change_order`.
fn end_pool<DB: sqlx::Database>(builder: &mut QueryBuilder<DB>, filter: &SearchFilter, alias: &str, change_order: &str)
where
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    if let Some(snapshot) = filter.created_at_or_before {
        builder
            .push(format_args!(" AND {alias}.created_at <= "))
            .push_bind(snapshot);
    }
    if let Some(origin) = &filter.origin {
        // Checked on the row the match already is: PostgreSQL's vector rows carry their document's origin (migration
        // 0026), and SQLite's pool joins the document rows when an origin is asked for. The origin is no facet term
        // of the index: every match of the home realm would carry it.
        builder
            .push(format_args!(" AND {alias}.origin = "))
            .push_bind(origin.clone());
    }
    if let Some(ids) = &filter.restrict_to {
        if ids.is_empty() {
            builder.push(" AND 1 = 0");
        } else {
            builder.push(format_args!(" AND {alias}.object_id IN ("));
            let mut restricted = builder.separated(", ");
            for id in ids {
                restricted.push_bind(id.clone());
            }
            builder.push(")");
        }
    }
    builder
        .push(format_args!(" ORDER BY {change_order} DESC LIMIT "))
        .push_bind(filter.candidates)
        .push(")");
}

/// What a filter asks of the index besides the words: facet terms every result must carry, facet terms none may
/// carry, and (SQLite only) the kinds that rowids must name.
#[derive(Debug, Clone, PartialEq, Default)]
struct FacetFilter {
    required: Option<FacetExpression>,
    excluded: Option<FacetExpression>,
    rowid_kinds: Option<Vec<i64>>,
}

/// An expression over facet terms.
#[derive(Debug, Clone, PartialEq)]
enum FacetExpression {
    /// One term.
    Term(String),
    /// Every part.
    All(Vec<FacetExpression>),
    /// At least one part.
    Any(Vec<FacetExpression>),
    /// The first and not the second.
    Without(Box<FacetExpression>, Box<FacetExpression>),
}

impl FacetFilter {
    /// The facet filter of a search. Terms most documents carry are avoided where an equivalent cheaper test
    /// exists, because SQLite's bm25 weighs every term of the expression over every document carrying it: a kind
    /// on its own is tested on the rowid (`kinds_in_rowid`), a restriction to types, tags or a space already implies
    /// its kind, and statuses that include `unverified` (where most documents are) are expressed as the statuses
    /// left out.
    fn of(filter: &SearchFilter, kinds_in_rowid: bool) -> FacetFilter {
        let mut branches: Vec<(SearchKind, Vec<FacetExpression>)> = Vec::new();
        for kind in &filter.kinds {
            let types = match kind {
                SearchKind::Content => filter.content_types.as_slice(),
                SearchKind::Entity => filter.entity_types.as_slice(),
                SearchKind::Claim => &[],
            };
            let mut parts = Vec::new();
            if !types.is_empty() {
                parts.push(FacetExpression::Any(
                    types
                        .iter()
                        .map(|object_type| {
                            FacetExpression::Term(facet_term('t', &format!("{}/{object_type}", kind.as_str())))
                        })
                        .collect(),
                ));
            }
            if *kind == SearchKind::Content {
                parts.extend(
                    filter
                        .tags
                        .iter()
                        .map(|tag| FacetExpression::Term(facet_term('g', tag))),
                );
                if let Some(space_id) = &filter.space_id {
                    parts.push(FacetExpression::Term(facet_term('p', space_id)));
                }
            }
            branches.push((*kind, parts));
        }
        let mut facets = FacetFilter::default();
        let mut required = Vec::new();
        let restricted = branches.iter().any(|(_, parts)| !parts.is_empty());
        if restricted {
            required.push(FacetExpression::Any(
                branches
                    .into_iter()
                    .map(|(kind, parts)| {
                        if parts.is_empty() {
                            FacetExpression::Term(facet_term('k', kind.as_str()))
                        } else {
                            FacetExpression::All(parts)
                        }
                    })
                    .collect(),
            ));
        } else if branches.len() < 3 {
            if kinds_in_rowid {
                facets.rowid_kinds = Some(branches.iter().map(|(kind, _)| kind_code(*kind)).collect());
            } else {
                required.push(FacetExpression::Any(
                    branches
                        .iter()
                        .map(|(kind, _)| FacetExpression::Term(facet_term('k', kind.as_str())))
                        .collect(),
                ));
            }
        }
        if filter.statuses.len() < ALL_STATUSES.len() {
            if filter.statuses.contains(&TrustStatus::Unverified) {
                let left_out: Vec<TrustStatus> = ALL_STATUSES
                    .into_iter()
                    .filter(|status| !filter.statuses.contains(status))
                    .collect();
                facets.excluded = Some(statuses_expression(&left_out, filter.trust_view).simplified());
            } else {
                required.push(statuses_expression(&filter.statuses, filter.trust_view));
            }
        }
        if !required.is_empty() {
            facets.required = Some(FacetExpression::All(required).simplified());
        }
        facets
    }

    /// The FTS5 MATCH expression for the words `text` (already in FTS5 syntax) under this filter. The words are
    /// restricted to the text columns only when one of them contains a digit: every facet term does (see
    /// `facet_term`), and no word without one can match, or stem to, a facet term. The restriction costs FTS5 a
    /// look at every candidate's positions, about a sixth of a typical query. Either way a phrase's matches depend
    /// only on its tokens (a word matches the same documents with or without the restriction, and facet terms are
    /// only ever matched in the facet columns, where no weight counts them), which the ranking function's remembered
    /// document counts rely on (see `SQLITE_BM25`).
    fn fts5_match(&self, text: &str) -> String {
        let mut expression = if text.chars().any(|character| character.is_ascii_digit()) {
            format!("({{title summary body}} : ({text}))")
        } else {
            format!("({text})")
        };
        if let Some(required) = &self.required {
            expression = format!("({expression} AND ({{facets status_facet}} : {}))", required.fts5());
        }
        if let Some(excluded) = &self.excluded {
            expression = format!("({expression} NOT ({{facets status_facet}} : {}))", excluded.fts5());
        }
        expression
    }

    /// The PostgreSQL `tsquery` text of the facet part, when there is one.
    fn tsquery(&self) -> Option<String> {
        match (&self.required, &self.excluded) {
            (None, None) => None,
            (Some(required), None) => Some(required.tsquery()),
            (None, Some(excluded)) => Some(format!("!{}", excluded.tsquery())),
            (Some(required), Some(excluded)) => Some(format!("{} & !{}", required.tsquery(), excluded.tsquery())),
        }
    }
}

/// The documents whose status in `view` is one of `statuses`. A document's first-party status is its first-party
/// term when it carries one, and otherwise its status (see `status_facets`).
fn statuses_expression(statuses: &[TrustStatus], view: TrustViewScope) -> FacetExpression {
    let terms = |facet: fn(TrustStatus) -> String| {
        FacetExpression::Any(
            statuses
                .iter()
                .map(|status| FacetExpression::Term(facet(*status)))
                .collect(),
        )
    };
    match view {
        TrustViewScope::All => terms(status_facet),
        TrustViewScope::FirstParty => FacetExpression::Any(vec![
            terms(first_party_status_facet),
            FacetExpression::Without(
                Box::new(terms(status_facet)),
                Box::new(FacetExpression::Term(first_party_differs_facet())),
            ),
        ]),
    }
}

impl FacetExpression {
    /// The same expression without one-part groups.
    fn simplified(self) -> FacetExpression {
        match self {
            FacetExpression::All(mut parts) | FacetExpression::Any(mut parts) if parts.len() == 1 => {
                parts.remove(0).simplified()
            }
            FacetExpression::All(parts) => {
                FacetExpression::All(parts.into_iter().map(FacetExpression::simplified).collect())
            }
            FacetExpression::Any(parts) => {
                FacetExpression::Any(parts.into_iter().map(FacetExpression::simplified).collect())
            }
            FacetExpression::Without(kept, left_out) => {
                FacetExpression::Without(Box::new(kept.simplified()), Box::new(left_out.simplified()))
            }
            term => term,
        }
    }

    /// As an FTS5 expression (to be placed under a column filter on the facet columns).
    fn fts5(&self) -> String {
        match self {
            FacetExpression::Term(term) => format!("\"{term}\""),
            FacetExpression::All(parts) => format!(
                "({})",
                parts
                    .iter()
                    .map(FacetExpression::fts5)
                    .collect::<Vec<_>>()
                    .join(" AND ")
            ),
            FacetExpression::Any(parts) => format!(
                "({})",
                parts.iter().map(FacetExpression::fts5).collect::<Vec<_>>().join(" OR ")
            ),
            FacetExpression::Without(kept, left_out) => format!("({} NOT {})", kept.fts5(), left_out.fts5()),
        }
    }

    /// As PostgreSQL `tsquery` text. A document's facet lexemes are its facet terms, each after a space (see
    /// migration 0007), and are matched without a weight restriction, which would make PostgreSQL recheck every
    /// match against its stored vector.
    fn tsquery(&self) -> String {
        match self {
            // A facet lexeme starts with a space, which no word of a document's text can contain.
            FacetExpression::Term(term) => format!("' {term}'"),
            FacetExpression::All(parts) => format!(
                "({})",
                parts
                    .iter()
                    .map(FacetExpression::tsquery)
                    .collect::<Vec<_>>()
                    .join(" & ")
            ),
            FacetExpression::Any(parts) => format!(
                "({})",
                parts
                    .iter()
                    .map(FacetExpression::tsquery)
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
            FacetExpression::Without(kept, left_out) => format!("({} & !{})", kept.tsquery(), left_out.tsquery()),
        }
    }
}

/// Every trust status a document can have, in the order the status terms are written into SQL and index queries.
pub const ALL_STATUSES: [TrustStatus; 7] = [
    TrustStatus::Unverified,
    TrustStatus::Supported,
    TrustStatus::HighConfidence,
    TrustStatus::Disputed,
    TrustStatus::Outdated,
    TrustStatus::Incorrect,
    TrustStatus::Superseded,
];

/// A page of objects in the filter's order without a text query (browsing by trust or recency).
///
/// The page should come from walking an index in the requested order and stopping when it is full: the trust order
/// walks the trust summaries by rank and lower bound (migration 0010), sorting only rows that tie on both, and
/// the recency order walks the documents by change time. PostgreSQL's planner finds those plans from its
/// statistics; SQLite's, without statistics, would rather start from a status or sort every document, so on
/// SQLite `CROSS JOIN` (which keeps the tables in the order written) names the table to walk. It does so only where
/// the walk is right whatever the filter: not for an ID list, which is cheaper looked up, and for recency only
/// when `unverified` (most documents) is among the statuses; otherwise its planner chooses.
async fn browse(conn: &mut Conn<'_>, filter: &SearchFilter) -> Result<Vec<SearchCandidate>, StoreError> {
    let sqlite = !conn.is_postgres();
    let walk = filter.restrict_to.is_none();
    let from = match filter.order {
        SearchOrder::Trust { .. } if sqlite && walk => {
            "trust_summaries t CROSS JOIN search_documents d ON t.target_id = d.trust_target_id"
        }
        SearchOrder::Recent { .. } if sqlite && walk && filter.statuses.contains(&TrustStatus::Unverified) => {
            "search_documents d CROSS JOIN trust_summaries t ON t.target_id = d.trust_target_id"
        }
        _ => "search_documents d JOIN trust_summaries t ON t.target_id = d.trust_target_id",
    };
    let ViewColumns {
        rank, trust_columns, ..
    } = view_columns(filter.trust_view);
    let builder_start = format!(
        "SELECT d.object_id, {trust_columns}, CAST(0.0 AS DOUBLE PRECISION) AS relevance, {rank} AS status_rank \
         FROM {from} WHERE 1 = 1"
    );
    let candidates = match conn {
        postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
            let connection = super::postgres_connection(postgres).await?;
            let mut builder: QueryBuilder<Postgres> = QueryBuilder::new(builder_start);
            push_filters!(&mut builder, filter);
            builder
                .build_query_as::<CandidateRow>()
                .fetch_all(&mut *connection)
                .await?
        }
        sqlite => {
            let connection = super::sqlite_connection(sqlite).await?;
            let mut builder: QueryBuilder<Sqlite> = QueryBuilder::new(builder_start);
            push_filters!(&mut builder, filter);
            builder
                .build_query_as::<CandidateRow>()
                .fetch_all(&mut *connection)
                .await?
        }
    };
    into_candidates(candidates)
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
            postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
                let connection = super::postgres_connection(postgres).await?;
                let mut builder: QueryBuilder<Postgres> =
                    QueryBuilder::new(format!("SELECT DISTINCT {column} FROM {table} WHERE status = 'active'"));
                push_context_filter!(&mut builder, column, object_ids, facets);
                builder
                    .build_query_scalar::<String>()
                    .fetch_all(&mut *connection)
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
