//! Writing one content revision with everything it links to (claims, subjects, sources, relations, tags), its first
//! trust assessments, its search documents and what it supersedes. Shared by local publishing (`content.rs`) and
//! replication (`federation/replication.rs`), which differ only in where the item, the revision and the IDs of new
//! claims come from.

use chrono::{DateTime, Utc};

use super::trust::TrustTarget;
use super::unit_of_work::UnitOfWork;
use super::{Service, ServiceError};
use crate::domain::knowledge::{Claim, ClaimAlias, ContentItem, Relation, RelationType, Revision};
use crate::domain::replication::OriginProof;
use crate::domain::{PublicId, TrustStatus, TrustStatuses};
use crate::store::trust::TrustTargetKind;
use crate::store::{self};

/// A claim a revision makes: linked to the stored claim with the same fingerprint when there is one (so evidence
/// accumulates on one claim), created as `new` otherwise.
#[derive(Debug, Clone)]
pub(super) struct ClaimToLink {
    /// The claim as it is created when no claim has its fingerprint yet.
    pub new: Claim,
}

/// One revision to write, with what it links, resolved to stored IDs.
#[derive(Debug)]
pub(super) struct RevisionWrite<'a> {
    /// The content item (new or existing, with its current revision as it will be after this write).
    pub item: &'a ContentItem,
    /// Whether the item itself is new (inserted here).
    pub new_item: bool,
    /// Whether the revision becomes the item's current one (a replicated revision older than the current one does
    /// not).
    pub becomes_current: bool,
    /// The revision that was current before, which this one supersedes.
    pub previous_revision: Option<PublicId>,
    /// The revision.
    pub revision: &'a Revision,
    /// Its claims in order.
    pub claims: &'a [ClaimToLink],
    /// Its subjects (entities that exist).
    pub subject_ids: &'a [PublicId],
    /// Its sources (that exist) with the title of this citation.
    pub sources: &'a [(PublicId, Option<String>)],
    /// Its relations (targets checked by the caller).
    pub relations: &'a [(RelationType, PublicId, Option<String>)],
    /// Its tags, normalized.
    pub tags: &'a [String],
    /// When the search documents of this write say the objects arrived (snapshots of search pages compare it).
    pub indexed_at: DateTime<Utc>,
    /// The stored claims with the fingerprints of `claims`, when the caller read them already (read here when
    /// `None`).
    pub existing_claims: Option<Vec<Claim>>,
    /// A replicated revision's origin proof, stored with it (`None` for this realm's own revisions).
    pub proof: Option<&'a OriginProof>,
    /// Of its targets (the revision, its claims), those that evidence from other realms already names, when the
    /// caller read them ahead (read here when `None` and a target is another realm's).
    pub evidence_waiting: Option<Vec<PublicId>>,
}

/// A claim as linked by a written revision.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LinkedClaim {
    /// The claim's ID.
    pub id: PublicId,
    /// Whether an equivalent claim existed and was linked instead of created.
    pub matched_existing: bool,
}

impl Service {
    /// Writes `write` inside `unit`; returns its claims in order.
    pub(super) async fn write_revision(
        &self,
        unit: &mut UnitOfWork,
        write: RevisionWrite<'_>,
    ) -> Result<Vec<LinkedClaim>, ServiceError> {
        let item = write.item;
        let revision = write.revision;
        if write.new_item {
            store::knowledge::insert_content(&mut unit.conn(), item).await?;
        }
        store::knowledge::insert_revision(&mut unit.conn(), revision, write.proof).await?;
        if !write.new_item && write.becomes_current {
            store::knowledge::set_current_revision(
                &mut unit.conn(),
                &item.id,
                &revision.id,
                revision.revision_no,
                revision.created_at,
            )
            .await?;
        }

        // Claims: one lookup for every fingerprint, one insert for the new ones, one statement linking them all.
        let fingerprints: Vec<&str> = write
            .claims
            .iter()
            .map(|claim| claim.new.fingerprint.as_str())
            .collect();
        let existing_claims = match write.existing_claims {
            Some(claims) => claims,
            None => store::knowledge::find_claims_by_fingerprints(&mut unit.conn(), &fingerprints).await?,
        };
        let mut new_claims: Vec<Claim> = Vec::new();
        let mut aliases: Vec<ClaimAlias> = Vec::new();
        let mut claim_links = Vec::with_capacity(write.claims.len());
        let mut linked = Vec::with_capacity(write.claims.len());
        for (position, claim) in write.claims.iter().enumerate() {
            let (claim_id, matched_existing) = match existing_claims
                .iter()
                .chain(new_claims.iter())
                .find(|existing| existing.fingerprint == claim.new.fingerprint)
            {
                Some(existing) => {
                    // Another realm's claim with a text held here already: its ID becomes an alias of ours, so
                    // that its realm's evidence about it lands on the canonical claim (trust model §2.15).
                    if existing.id != claim.new.id && !self.realm().is(&claim.new.origin) {
                        aliases.push(ClaimAlias {
                            alias_id: claim.new.id.clone(),
                            origin: claim.new.origin.clone(),
                            canonical_claim_id: existing.id.clone(),
                            created_at: write.indexed_at,
                        });
                    }
                    (existing.id.clone(), true)
                }
                None => {
                    new_claims.push(claim.new.clone());
                    (claim.new.id.clone(), false)
                }
            };
            claim_links.push(store::knowledge::RevisionClaimLink {
                claim_id: claim_id.clone(),
                position: i32::try_from(position).unwrap_or(i32::MAX),
                matched_existing,
            });
            linked.push(LinkedClaim {
                id: claim_id,
                matched_existing,
            });
        }
        store::knowledge::insert_claims(&mut unit.conn(), &new_claims).await?;
        store::knowledge::insert_claim_aliases(&mut unit.conn(), &aliases).await?;
        store::knowledge::link_revision_claims(&mut unit.conn(), &revision.id, &claim_links).await?;
        store::knowledge::link_revision_subjects(&mut unit.conn(), &revision.id, write.subject_ids).await?;
        store::knowledge::add_revision_tags(&mut unit.conn(), &revision.id, write.tags).await?;
        let mut linked_sources: Vec<&PublicId> = Vec::new();
        for (position, (source_id, title)) in write.sources.iter().enumerate() {
            if linked_sources.contains(&source_id) {
                continue;
            }
            store::knowledge::link_revision_source(
                &mut unit.conn(),
                &revision.id,
                source_id,
                title.as_deref(),
                i32::try_from(position).unwrap_or(i32::MAX),
            )
            .await?;
            linked_sources.push(source_id);
        }
        for (relation_type, target, reason) in write.relations {
            let relation = Relation {
                id: self.new_internal_id(),
                source_content_id: item.id.clone(),
                source_revision_id: revision.id.clone(),
                relation_type: *relation_type,
                target_id: target.clone(),
                reason: reason.clone(),
                origin: revision.origin.clone(),
                created_at: revision.created_at,
            };
            store::knowledge::insert_relation(&mut unit.conn(), &relation).await?;
        }

        // Trust: the new revision and the new claims start from the prior, in one statement. A new item cannot be
        // superseded yet (a relation's target must exist before it is declared); a new revision of an existing
        // item is, when an effective `supersedes` relation already replaces the item, and a revision that does not
        // become current is from the start.
        let revision_target = TrustTarget {
            id: revision.id.clone(),
            kind: TrustTargetKind::Revision,
            content_id: Some(item.id.clone()),
            author_root_controller: item.author_root_controller.clone(),
            author_origin: item.origin.clone(),
            created_at: revision.created_at,
        };
        let revision_superseded = if !write.becomes_current {
            true
        } else if write.new_item {
            false
        } else {
            self.is_superseded(&mut unit.conn(), &revision_target).await?
        };
        let mut new_targets = vec![(revision_target, revision_superseded)];
        new_targets.extend(new_claims.iter().map(|claim| {
            let target = TrustTarget {
                id: claim.id.clone(),
                kind: TrustTargetKind::Claim,
                content_id: None,
                author_root_controller: claim.author_root_controller.clone(),
                author_origin: claim.origin.clone(),
                created_at: claim.created_at,
            };
            (target, false)
        }));
        let statuses = self
            .initialize_trust_summaries(unit, &new_targets, write.evidence_waiting.as_deref())
            .await?;
        // Search: the item's document (when this revision is what the item shows) and those of its new claims, with
        // their first statuses, in one statement.
        let mut statuses = statuses.into_iter();
        let revision_status = statuses.next().unwrap_or(TrustStatuses::same(TrustStatus::Unverified));
        let mut documents = Vec::with_capacity(1 + new_claims.len());
        if write.becomes_current {
            let claim_texts: Vec<String> = write.claims.iter().map(|claim| claim.new.text.clone()).collect();
            documents.push(super::search::content_document(
                item,
                revision,
                &claim_texts,
                write.tags,
                revision_status,
            ));
        }
        for claim in &new_claims {
            let mut document = super::search::claim_document(
                claim,
                statuses.next().unwrap_or(TrustStatuses::same(TrustStatus::Unverified)),
            );
            document.created_at = write.indexed_at;
            documents.push(document);
        }
        // New claims are new, and so is the item's document when the item is (or when it has none here).
        let documents_are = if write.new_item || !write.becomes_current {
            store::search::DocumentsAre::New
        } else {
            store::search::DocumentsAre::MaybeIndexed
        };
        self.index_documents(&mut unit.conn(), &documents, documents_are)
            .await?;
        if !write.becomes_current {
            return Ok(linked);
        }
        // The revision it replaces is now superseded.
        if let Some(previous) = &write.previous_revision {
            let previous_target = self.trust_target(&mut unit.conn(), previous).await?;
            self.apply_evidence_change(unit, &previous_target, super::trust::EvidenceChange::Reassess)
                .await?;
        }
        // Content that this revision declares it supersedes may now be replaced (and content the previous revision
        // superseded may no longer be).
        let declares_supersedes = write
            .relations
            .iter()
            .any(|(relation_type, _, _)| *relation_type == RelationType::Supersedes);
        if declares_supersedes || write.previous_revision.is_some() {
            self.reassess_superseded_targets(unit, &item.id, write.previous_revision.as_ref())
                .await?;
        }
        Ok(linked)
    }
}
