//! The condition of a newest-first keyset page, shared by the admin listings (the audit log, content): rows strictly
//! after a given row in the order `created_at DESC, id DESC`, so that rows written meanwhile never shift a page.

use chrono::{DateTime, Utc};

/// Appends ` AND` the rows after `after` (its `created_at` and `id`) in newest-first order, on the columns
/// `{table_prefix}created_at` and `{table_prefix}id` (`table_prefix` is `""` or an alias with its dot, such as
/// `"ci."`), both values bound.
pub(crate) fn push_newest_first_after<DB: sqlx::Database>(
    builder: &mut sqlx::QueryBuilder<DB>,
    table_prefix: &'static str,
    after: &(DateTime<Utc>, String),
) where
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let (created_at, id) = after;
    builder
        .push(format_args!(" AND ({table_prefix}created_at < "))
        .push_bind(*created_at)
        .push(format_args!(" OR ({table_prefix}created_at = "))
        .push_bind(*created_at)
        .push(format_args!(" AND {table_prefix}id < "))
        .push_bind(id.clone())
        .push("))");
}
