//! Trust glue: turns stored evidence into the trust engine's records, keeps each target's incremental state,
//! persists assessments in the same transaction as the evidence change, and records reputation observations.
//!
//! The rows are the source of truth. An in-memory state per target is an accelerator: it is used only when its
//! version equals the persisted summary's version (which every evidence change increments under a row lock), and
//! is rebuilt from the rows otherwise, so several processes sharing one database stay exact.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::unit_of_work::UnitOfWork;
use super::{Service, ServiceError};
use crate::domain::evidence::{RecordStatus, Review, UsageEvent};
use crate::domain::{IdKind, PublicId, TrustStatus, TrustStatuses};
use crate::store::trust::{ReputationObservationRecord, TrustSummaryRecord, TrustTargetKind};
use crate::store::{self, Conn};
use crate::trust::{
    Assessment, ControllerRef, ControllerStanding, Evaluation, EvidenceKind, EvidenceRecord, Explanation,
    FirstPartyDecision, InstanceTrustTable, ReputationObservation, RetractionAuthority, Stance, TargetDescriptor,
    TargetState, TrustParameters, assess_records, controller_reputation, record_effect,
};

/// How many targets' incremental states one process keeps in memory.
const TRUST_CACHE_CAPACITY: usize = 4096;

/// Above this many first-party controllers, a decision's leave-one-out recomputation per controller is replaced by
/// the decision itself: one controller's single unit cannot tip a decision made by that many parties.
const LEAVE_ONE_OUT_CONTROLLER_LIMIT: usize = 200;

/// How many controllers' daily reputation snapshots one process keeps.
const REPUTATION_CACHE_CAPACITY: usize = 100_000;

/// The epoch label of the instance-trust table before its first batch (an instance without peers).
const NO_PEERS_EPOCH: &str = "no-peers";

/// The table before the first batch: every remote origin counts 0.
pub(super) fn empty_instance_trust_table() -> InstanceTrustTable {
    InstanceTrustTable::new(NO_PEERS_EPOCH)
}

pub use crate::domain::trust_status::TrustViewScope;

impl TrustViewScope {
    /// The `trust_view` argument of a tool: absent means `all`; anything but the two names is a validation error.
    pub fn from_input(text: Option<&str>) -> Result<TrustViewScope, ServiceError> {
        match text.map(str::trim) {
            None => Ok(TrustViewScope::All),
            Some(name) => TrustViewScope::parse(name)
                .ok_or_else(|| ServiceError::validation("trust_view", "trust_view must be all or first_party")),
        }
    }
}

/// A full explanation with what the engine's explanation does not know: why each origin has its trust, and the
/// assessment this instance would give on first-party evidence alone (§2.15).
#[derive(Debug, Clone, PartialEq)]
pub struct ExplainedTrust {
    /// The engine's explanation.
    pub explanation: Explanation,
    /// Whose evidence it weighs.
    pub scope: TrustViewScope,
    /// Per origin with evidence here: why it has its trust (`level:standard; agreement 10/0`, `blocked; …`, or
    /// `not a peer`).
    pub origin_reasons: BTreeMap<String, String>,
    /// The assessment on first-party evidence alone.
    pub first_party_only: Assessment,
}

/// A target of the trust engine: a content revision, a claim or an entity.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustTarget {
    /// The target's ID.
    pub id: PublicId,
    /// Its kind.
    pub kind: TrustTargetKind,
    /// The content item of a revision.
    pub content_id: Option<PublicId>,
    /// The author's root controller, whose evidence is self-evidence.
    pub author_root_controller: PublicId,
    /// The author's realm.
    pub author_origin: String,
    /// When the target was created (the anchor of its fixed-point sums).
    pub created_at: DateTime<Utc>,
}

/// Rule R1 for a revision, given its content item's supersession: superseded when it is no longer the current
/// revision, or when an effective `supersedes` relation replaces the whole item.
fn revision_is_superseded(supersession: &store::knowledge::Supersession, revision_id: &PublicId) -> bool {
    supersession.current_revision_id != *revision_id || supersession.has_effective_superseder
}

/// The trust target of a revision whose content item is already loaded.
pub(super) fn revision_trust_target(
    revision_id: PublicId,
    revision_created_at: DateTime<Utc>,
    content: crate::domain::knowledge::ContentItem,
) -> TrustTarget {
    TrustTarget {
        id: revision_id,
        kind: TrustTargetKind::Revision,
        content_id: Some(content.id),
        author_root_controller: content.author_root_controller,
        author_origin: content.origin,
        created_at: revision_created_at,
    }
}

/// A change to one target's evidence.
#[derive(Debug, Clone)]
pub enum EvidenceChange {
    /// A new record.
    Add(Box<EvidenceRecord>),
    /// A record retracted by its author.
    Retract(String),
    /// No evidence change; the structure changed (a newer revision, a superseding relation).
    Reassess,
}

/// What one evidence change did to a target's assessment.
#[derive(Debug, Clone)]
pub struct TrustChange {
    /// The assessment after the change.
    pub assessment: Assessment,
    /// The persisted status before the change (`None` for a target without a summary yet).
    pub previous_status: Option<TrustStatus>,
}

impl TrustChange {
    /// Whether the target entered or left `high_confidence`, which decides whether `supersedes` relations declared
    /// by its content (towards other authors' content) are effective.
    pub fn high_confidence_changed(&self) -> bool {
        (self.previous_status == Some(TrustStatus::HighConfidence))
            != (self.assessment.status == TrustStatus::HighConfidence)
    }
}

/// Target states changed by a transaction, cached as it commits (see `cache_trust_states`).
#[derive(Default)]
pub struct PendingTrustStates {
    states: Vec<(String, i64, TargetState)>,
    /// Targets whose first-party status became decided in this transaction; their earlier records are judged
    /// once the evidence rows of the transaction are written.
    decided: Vec<(TrustTarget, DateTime<Utc>)>,
    /// Targets whose first-party-only status is decided after a first-party change in this transaction, with the
    /// decision: their first decision is recorded, with the agreement events of the peers that had a stance on them
    /// (§2.10, §2.15), once the transaction's evidence rows are written.
    first_party_decided: Vec<(TrustTarget, FirstPartyDecision, DateTime<Utc>)>,
    /// Rating aggregates (target, dimension) that remote ratings applied in this transaction changed: refreshed
    /// once, when the batch's objects are all applied, rather than once per rating (a flood of a peer's ratings
    /// would otherwise read every rating of the target again for each one).
    rating_refreshes: BTreeSet<(PublicId, String)>,
}

/// The per-process cache of incremental target states.
#[derive(Default)]
pub struct TrustStateCache {
    entries: HashMap<String, (i64, TargetState)>,
}

impl Service {
    /// The trust parameters in force.
    pub fn trust_parameters(&self) -> &TrustParameters {
        &self.inner.settings.trust_parameters
    }

    /// The instance-trust table in force: every origin this instance trusts and how much, as the last batch
    /// computed it (`federation/instance_trust.rs`). Before the first batch it is empty, so every remote origin
    /// counts 0.
    pub(super) fn instance_trust_table(&self) -> Arc<InstanceTrustTable> {
        self.inner
            .instance_trust
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Puts a batch's table in force, with why each peer has its trust: every trust read from now on uses it.
    pub(crate) fn install_instance_trust_table(&self, table: InstanceTrustTable, reasons: BTreeMap<String, String>) {
        *self
            .inner
            .instance_trust_reasons
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(reasons);
        *self
            .inner
            .instance_trust
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(table);
    }

    /// Why each origin has its trust in the table in force; an origin that is no peer has none.
    fn instance_trust_reasons(&self) -> Arc<BTreeMap<String, String>> {
        self.inner
            .instance_trust_reasons
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Resolves the trust target behind a revision, claim or entity ID; `not_found` when it does not exist.
    pub(super) async fn trust_target(&self, conn: &mut Conn<'_>, id: &PublicId) -> Result<TrustTarget, ServiceError> {
        self.find_trust_target(conn, id)
            .await?
            .ok_or_else(|| ServiceError::not_found(id.as_str()))
    }

    /// The trust target behind a revision, claim or entity ID, in one statement; `None` when it does not exist.
    pub(super) async fn find_trust_target(
        &self,
        conn: &mut Conn<'_>,
        id: &PublicId,
    ) -> Result<Option<TrustTarget>, ServiceError> {
        Ok(match id.kind() {
            IdKind::Revision => store::knowledge::revision_target(conn, store::knowledge::RevisionOf::Revision(id))
                .await?
                .map(|(content, revision_id, revision_created_at)| {
                    revision_trust_target(revision_id, revision_created_at, content)
                }),
            IdKind::Claim => self.find_canonical_claim(conn, id).await?.map(|claim| TrustTarget {
                id: claim.id,
                kind: TrustTargetKind::Claim,
                content_id: None,
                author_root_controller: claim.author_root_controller,
                author_origin: claim.origin,
                created_at: claim.created_at,
            }),
            IdKind::Entity => store::knowledge::find_entity(conn, id)
                .await?
                .map(|entity| TrustTarget {
                    id: entity.id,
                    kind: TrustTargetKind::Entity,
                    content_id: None,
                    author_root_controller: entity.created_by_root_controller,
                    author_origin: entity.origin,
                    created_at: entity.created_at,
                }),
            _ => return Err(ServiceError::internal(format!("{id} is not a trust target"))),
        })
    }

    /// The claim with this ID, or the canonical claim when it is another realm's alias of one (trust model §2.15:
    /// evidence on any alias is evidence on the canonical claim).
    pub(super) async fn find_canonical_claim(
        &self,
        conn: &mut Conn<'_>,
        id: &PublicId,
    ) -> Result<Option<crate::domain::knowledge::Claim>, ServiceError> {
        if let Some(claim) = store::knowledge::find_claim(conn, id).await? {
            return Ok(Some(claim));
        }
        match store::knowledge::canonical_claim_of(conn, id).await? {
            Some(canonical) => Ok(store::knowledge::find_claim(conn, &canonical).await?),
            None => Ok(None),
        }
    }

    pub(super) fn descriptor(&self, target: &TrustTarget) -> TargetDescriptor {
        TargetDescriptor {
            target_id: target.id.as_str().to_owned(),
            author: self.controller_ref(&target.author_origin, target.author_root_controller.as_str()),
        }
    }

    fn controller_ref(&self, origin: &str, controller: &str) -> ControllerRef {
        if self.realm().is(origin) {
            ControllerRef::first_party(controller)
        } else {
            ControllerRef::remote(origin, controller)
        }
    }

    /// Writes the prior assessment of targets created in this transaction, in one statement, so that listings can
    /// join every target to a summary. A new target has no summary yet, and no evidence but what other realms sent
    /// before it arrived (`evidence_waiting` names the targets that have any when the caller knows; otherwise one
    /// statement finds them; only those are read): `superseded` says whether its content item is already replaced
    /// (only a new revision of an existing item can be).
    pub(super) async fn initialize_trust_summaries(
        &self,
        unit: &mut UnitOfWork,
        targets: &[(TrustTarget, bool)],
        evidence_waiting: Option<&[PublicId]>,
    ) -> Result<Vec<TrustStatuses>, ServiceError> {
        let now = self.now();
        let table = self.instance_trust_table();
        // Evidence from other realms can arrive before its target (trust model §2.15): a replicated target starts
        // from the records already waiting for it. Only another realm's target can have any; which ones do, a batch
        // of replicated objects read ahead (`evidence_waiting`), so that this read does not cost a statement per
        // revision.
        let replicated: Vec<PublicId> = targets
            .iter()
            .filter(|(target, _)| !self.realm().is(&target.author_origin))
            .map(|(target, _)| target.id.clone())
            .collect();
        let waiting = match evidence_waiting {
            _ if replicated.is_empty() => Vec::new(),
            Some(known) => known.to_vec(),
            None => {
                let locked: Vec<&PublicId> = replicated.iter().collect();
                store::remote_evidence::lock_evidence_targets(&mut unit.conn(), &locked).await?;
                store::remote_evidence::targets_with_evidence(&mut unit.conn(), &replicated).await?
            }
        };
        let mut summaries = Vec::with_capacity(targets.len());
        let mut statuses = Vec::with_capacity(targets.len());
        for (target, superseded) in targets {
            let records = if waiting.contains(&target.id) {
                self.evidence_records_of(&mut unit.conn(), &target.id).await?
            } else {
                Vec::new()
            };
            let mut state = TargetState::from_records(
                self.descriptor(target),
                self.trust_parameters().clone(),
                target.created_at,
                &records,
            )
            .map_err(|error| ServiceError::internal(format!("trust engine refused a new target: {error}")))?;
            let assessment = state.assess(&Evaluation {
                now,
                instance_trust: &table,
                superseded: *superseded,
            });
            let first_party_only = first_party_assessment(&mut state, now, *superseded);
            let summary = summary_record(
                target,
                1,
                &assessment,
                first_party_only.as_ref(),
                state.held_records(),
                now,
            );
            statuses.push(summary.statuses());
            summaries.push(summary);
            let pending = unit.trust_states();
            pending.states.retain(|(id, _, _)| id != target.id.as_str());
            pending.states.push((target.id.as_str().to_owned(), 1, state));
        }
        store::trust::upsert_summaries(&mut unit.conn(), &summaries).await?;
        Ok(statuses)
    }

    /// Applies one evidence change to a target inside the write's transaction and persists the new assessment.
    /// Call it before changing the evidence rows themselves: the state is rebuilt from the rows when needed.
    pub(super) async fn apply_evidence_change(
        &self,
        unit: &mut UnitOfWork,
        target: &TrustTarget,
        change: EvidenceChange,
    ) -> Result<TrustChange, ServiceError> {
        let locked = store::trust::lock_summary(&mut unit.conn(), &target.id, target.content_id.as_ref()).await?;
        let version = locked.as_ref().map_or(0, |locked| locked.summary.version);
        let (transaction, pending) = unit.parts();
        let mut state = self
            .target_state(&mut transaction.conn(), target, version, pending)
            .await?;
        // §2.15: first-party status is evaluated at each first-party write and retraction (no time sweep).
        let first_party_change = match &change {
            EvidenceChange::Add(record) => record.origin.is_none(),
            EvidenceChange::Retract(record_id) => state.holds_first_party_record(record_id),
            EvidenceChange::Reassess => false,
        };
        match &change {
            EvidenceChange::Add(record) => state
                .add(record)
                .map_err(|error| ServiceError::internal(format!("trust engine refused a record: {error}")))?,
            EvidenceChange::Retract(record_id) => state
                .retract(record_id, &RetractionAuthority::Local)
                .map_err(|error| ServiceError::internal(format!("trust engine refused a retraction: {error}")))?,
            EvidenceChange::Reassess => {}
        }
        let now = self.now();
        let superseded = match locked.as_ref().and_then(|locked| locked.supersession.as_ref()) {
            Some(supersession) => revision_is_superseded(supersession, &target.id),
            None => self.is_superseded(&mut unit.conn(), target).await?,
        };
        let table = self.instance_trust_table();
        let assessment = state.assess(&Evaluation {
            now,
            instance_trust: &table,
            superseded,
        });
        // Search's first-party view, and ground truth for agreement: the status this instance would give with no
        // peer counted (computed apart only when another realm's evidence is held).
        let first_party_only = first_party_assessment(&mut state, now, superseded);
        let summary = summary_record(
            target,
            version + 1,
            &assessment,
            first_party_only.as_ref(),
            state.held_records(),
            now,
        );
        store::trust::upsert_summaries(&mut unit.conn(), std::slice::from_ref(&summary)).await?;
        let statuses = summary.statuses();
        let previous_statuses = locked.as_ref().map(|locked| locked.summary.statuses());
        if previous_statuses != Some(statuses) {
            // Status filters are terms of the search index; the documents whose trust lives here follow.
            store::search::set_document_status(&mut unit.conn(), target.id.as_str(), statuses).await?;
        }
        let previous_status = previous_statuses.map(|previous| previous.all);
        let previous_decision = previous_status.and_then(FirstPartyDecision::from_status);
        let new_decision = FirstPartyDecision::from_status(assessment.status);
        let first_party_decision = if !first_party_change {
            None
        } else if let Some(first_party_only) = &first_party_only {
            FirstPartyDecision::from_status(first_party_only.status)
        } else if new_decision != previous_decision {
            // No peer's evidence here: first-party status is the status, and only a change of decision can be the
            // first one (a later one finds the first recorded and changes nothing).
            new_decision
        } else {
            None
        };
        let pending = unit.trust_states();
        if let Some(decision) = first_party_decision {
            pending
                .first_party_decided
                .retain(|(decided, _, _)| decided.id != target.id);
            pending.first_party_decided.push((target.clone(), decision, now));
        }
        if new_decision.is_some() && new_decision != previous_decision {
            pending.decided.retain(|(decided, _)| decided.id != target.id);
            pending.decided.push((target.clone(), now));
        }
        pending.states.retain(|(id, _, _)| id != target.id.as_str());
        pending.states.push((target.id.as_str().to_owned(), version + 1, state));
        Ok(TrustChange {
            assessment,
            previous_status,
        })
    }

    /// The target's incremental state at `version`: from this transaction's pending states, from the cache, or
    /// rebuilt from the rows.
    async fn target_state(
        &self,
        conn: &mut Conn<'_>,
        target: &TrustTarget,
        version: i64,
        pending: &mut PendingTrustStates,
    ) -> Result<TargetState, ServiceError> {
        if let Some(position) = pending.states.iter().position(|(id, _, _)| id == target.id.as_str()) {
            let (_, _, state) = pending.states.remove(position);
            return Ok(state);
        }
        let cached = {
            let mut cache = self
                .inner
                .trust_cache
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            match cache.entries.remove(target.id.as_str()) {
                Some((cached_version, state)) if cached_version == version => Some(state),
                _ => None,
            }
        };
        match cached {
            Some(state) => Ok(state),
            None => {
                let records = self.evidence_records_of(conn, &target.id).await?;
                TargetState::from_records(
                    self.descriptor(target),
                    self.trust_parameters().clone(),
                    target.created_at,
                    &records,
                )
                .map_err(|error| ServiceError::internal(format!("stored evidence is invalid: {error}")))
            }
        }
    }

    /// Keeps the states of a transaction about to commit for the next change, and returns the target and version
    /// of each state kept.
    pub(super) fn cache_trust_states(&self, pending: PendingTrustStates) -> Vec<(String, i64)> {
        let mut cache = self
            .inner
            .trust_cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache.entries.len() + pending.states.len() > TRUST_CACHE_CAPACITY {
            cache.entries.clear();
        }
        let mut kept = Vec::with_capacity(pending.states.len());
        for (id, version, state) in pending.states {
            let newer_cached = cache.entries.get(&id).is_some_and(|(cached, _)| *cached > version);
            if !newer_cached {
                kept.push((id.clone(), version));
                cache.entries.insert(id, (version, state));
            }
        }
        kept
    }

    /// Drops this process's state of a target, so that the next change or read builds it from the rows (after rows
    /// were deleted rather than retracted).
    pub(super) fn forget_trust_state(&self, target_id: &PublicId) {
        self.inner
            .trust_cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entries
            .remove(target_id.as_str());
    }

    /// Takes the states of a transaction that failed to commit out of the cache again (those that no later write
    /// has replaced).
    pub(super) fn forget_trust_states(&self, kept: &[(String, i64)]) {
        let mut cache = self
            .inner
            .trust_cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for (id, version) in kept {
            if cache.entries.get(id).is_some_and(|(cached, _)| cached == version) {
                cache.entries.remove(id);
            }
        }
    }

    /// Every evidence record held for a target (active and retracted), as the trust engine reads them.
    pub(super) async fn evidence_records_of(
        &self,
        conn: &mut Conn<'_>,
        target_id: &PublicId,
    ) -> Result<Vec<EvidenceRecord>, ServiceError> {
        let usage = store::evidence::usage_on_target(conn, target_id).await?;
        let reviews = store::evidence::reviews_of_target(conn, target_id).await?;
        let mut records: Vec<EvidenceRecord> = usage.iter().map(|event| self.usage_record(event)).collect();
        records.extend(reviews.iter().map(|review| self.review_record(review)));
        Ok(records)
    }

    /// The trust engine's view of a usage event.
    pub(super) fn usage_record(&self, usage: &UsageEvent) -> EvidenceRecord {
        EvidenceRecord {
            record_id: usage.id.as_str().to_owned(),
            actor: usage.author.actor_id.as_str().to_owned(),
            root_controller: usage.author.root_controller_id.as_str().to_owned(),
            origin: (!self.realm().is(&usage.author.origin)).then(|| usage.author.origin.clone()),
            origin_signature_valid: usage.author.origin_proof_verified,
            recorded_at: usage.created_at,
            retracted: usage.status == RecordStatus::Retracted,
            standing: ControllerStanding {
                reputation: usage.standing.reputation,
                prior_valid_records: u32::try_from(usage.standing.prior_records).unwrap_or(0),
                account_created_at: usage.standing.account_created_at,
            },
            kind: EvidenceKind::Usage {
                real_world_use: usage.real_world_use,
                result: usage.result,
            },
        }
    }

    /// The trust engine's view of a review.
    pub(super) fn review_record(&self, review: &Review) -> EvidenceRecord {
        EvidenceRecord {
            record_id: review.id.as_str().to_owned(),
            actor: review.author.actor_id.as_str().to_owned(),
            root_controller: review.author.root_controller_id.as_str().to_owned(),
            origin: (!self.realm().is(&review.author.origin)).then(|| review.author.origin.clone()),
            origin_signature_valid: review.author.origin_proof_verified,
            recorded_at: review.created_at,
            retracted: review.status == RecordStatus::Retracted,
            standing: ControllerStanding {
                reputation: review.standing.reputation,
                prior_valid_records: u32::try_from(review.standing.prior_records).unwrap_or(0),
                account_created_at: review.standing.account_created_at,
            },
            kind: EvidenceKind::Review {
                verdict: review.verdict,
                confidence: review.confidence,
                grounding: review.grounding,
            },
        }
    }

    /// Whether a target is structurally superseded (rule R1): an older revision, or content replaced by an
    /// effective `supersedes` relation (declared by the same author, or by content that reached high confidence).
    pub(super) async fn is_superseded(&self, conn: &mut Conn<'_>, target: &TrustTarget) -> Result<bool, ServiceError> {
        if target.kind != TrustTargetKind::Revision {
            return Ok(false);
        }
        let Some(content_id) = &target.content_id else {
            return Ok(false);
        };
        let supersession = store::knowledge::supersession_of(conn, content_id)
            .await?
            .ok_or_else(|| ServiceError::internal(format!("content {content_id} vanished")))?;
        Ok(revision_is_superseded(&supersession, &target.id))
    }

    /// The target's assessment evaluated now: from the cached incremental state when it is current, otherwise by
    /// a full recomputation from the rows. Reads never fill the cache, so a read racing a write cannot leave a
    /// state behind that misses the write.
    pub(super) async fn live_assessment(
        &self,
        conn: &mut Conn<'_>,
        target: &TrustTarget,
        scope: TrustViewScope,
    ) -> Result<Assessment, ServiceError> {
        Ok(self.live_trust(conn, target, false, scope).await?.0)
    }

    /// The target's full explanation evaluated now (cached state when current, rows otherwise).
    pub(super) async fn live_explanation(
        &self,
        conn: &mut Conn<'_>,
        target: &TrustTarget,
    ) -> Result<Explanation, ServiceError> {
        self.live_trust(conn, target, true, TrustViewScope::All)
            .await?
            .1
            .map(|explained| explained.explanation)
            .ok_or_else(|| ServiceError::internal("an explanation was asked for and not made"))
    }

    /// The target's assessment evaluated now and, when `explain` is set, its full explanation from the same
    /// evaluation (whose assessment it is). The summary's version and the supersession are read in one statement
    /// and the evidence at most once, from the cached incremental state when it is current and from the rows
    /// otherwise; reads never fill the cache (see [`Service::live_assessment`]). `FirstParty` reads the first-party
    /// rows alone.
    pub(super) async fn live_trust(
        &self,
        conn: &mut Conn<'_>,
        target: &TrustTarget,
        explain: bool,
        scope: TrustViewScope,
    ) -> Result<(Assessment, Option<ExplainedTrust>), ServiceError> {
        let stored = store::trust::summary_with_supersession(conn, &target.id, target.content_id.as_ref()).await?;
        let version = stored.as_ref().map(|stored| stored.summary.version);
        let superseded = match stored.as_ref().and_then(|stored| stored.supersession.as_ref()) {
            Some(supersession) => revision_is_superseded(supersession, &target.id),
            None => self.is_superseded(conn, target).await?,
        };
        let table = self.instance_trust_table();
        let no_peers = empty_instance_trust_table();
        let now = self.now();
        let evaluation = Evaluation {
            now,
            instance_trust: &table,
            superseded,
        };
        // With no peer counted, the engine gives exactly the status first-party evidence alone gives (§2.15).
        let first_party_evaluation = Evaluation {
            now,
            instance_trust: &no_peers,
            superseded,
        };
        let explained = |explanation: Explanation, first_party_only: Assessment| {
            let reasons = self.instance_trust_reasons();
            let origin_reasons = explanation
                .parties
                .iter()
                .filter_map(|party| match party {
                    crate::trust::PartyExplanation::Instance(row) => Some((
                        row.origin.clone(),
                        reasons
                            .get(&row.origin)
                            .cloned()
                            .unwrap_or_else(|| "not a peer".to_owned()),
                    )),
                    crate::trust::PartyExplanation::Controller(_) => None,
                })
                .collect();
            (
                explanation.assessment.clone(),
                Some(ExplainedTrust {
                    explanation,
                    scope,
                    origin_reasons,
                    first_party_only,
                }),
            )
        };
        if scope == TrustViewScope::All {
            let mut cache = self
                .inner
                .trust_cache
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some((cached_version, state)) = cache.entries.get_mut(target.id.as_str())
                && Some(*cached_version) == version
            {
                return Ok(if explain {
                    let first_party_only = state.assess(&first_party_evaluation);
                    explained(state.explain(&evaluation, &reputation_epoch(now)), first_party_only)
                } else {
                    (state.assess(&evaluation), None)
                });
            }
        }
        let mut records = self.evidence_records_of(conn, &target.id).await?;
        if scope == TrustViewScope::FirstParty {
            records.retain(|record| record.origin.is_none());
        }
        let evaluation = match scope {
            TrustViewScope::All => evaluation,
            TrustViewScope::FirstParty => first_party_evaluation,
        };
        let invalid = |error| ServiceError::internal(format!("stored evidence is invalid: {error}"));
        let descriptor = self.descriptor(target);
        let assess = |evaluation: &Evaluation<'_>| {
            assess_records(
                &descriptor,
                &records,
                self.trust_parameters(),
                target.created_at,
                evaluation,
            )
            .map_err(invalid)
        };
        Ok(if explain {
            let explanation = crate::trust::explain_records(
                &descriptor,
                &records,
                self.trust_parameters(),
                target.created_at,
                &evaluation,
                &reputation_epoch(now),
            )
            .map_err(invalid)?;
            let first_party_only = match scope {
                TrustViewScope::FirstParty => explanation.assessment.clone(),
                TrustViewScope::All => assess(&first_party_evaluation)?,
            };
            explained(explanation, first_party_only)
        } else {
            (assess(&evaluation)?, None)
        })
    }

    /// A full recomputation of a target from its rows, independent of any cached state (for verification and repair).
    pub async fn recompute_trust(&self, target_id: &PublicId) -> Result<Assessment, ServiceError> {
        self.recompute_trust_at(target_id, self.now()).await
    }

    /// [`Service::recompute_trust`] as of `at` (evidence decays with time: a stored summary equals the recomputation
    /// at its `computed_at`, with the instance-trust table in force).
    pub async fn recompute_trust_at(
        &self,
        target_id: &PublicId,
        at: DateTime<Utc>,
    ) -> Result<Assessment, ServiceError> {
        let mut reader = self.store().reader().await?;
        let target = self.trust_target(&mut reader.conn(), target_id).await?;
        let records = self.evidence_records_of(&mut reader.conn(), target_id).await?;
        let superseded = self.is_superseded(&mut reader.conn(), &target).await?;
        let table = self.instance_trust_table();
        assess_records(
            &self.descriptor(&target),
            &records,
            self.trust_parameters(),
            target.created_at,
            &Evaluation {
                now: at,
                instance_trust: &table,
                superseded,
            },
        )
        .map_err(|error| ServiceError::internal(format!("stored evidence is invalid: {error}")))
    }

    /// The persisted assessment of a target as of its last evidence change.
    pub async fn trust_summary(&self, target_id: &PublicId) -> Result<TrustSummaryRecord, ServiceError> {
        let mut reader = self.store().reader().await?;
        store::trust::find_summary(&mut reader.conn(), target_id)
            .await?
            .ok_or_else(|| ServiceError::not_found(target_id.as_str()))
    }

    /// The full explanation of a target's trust, evaluated now.
    pub async fn explain_trust(&self, target_id: &PublicId) -> Result<Explanation, ServiceError> {
        let mut reader = self.store().reader().await?;
        let target = self.trust_target(&mut reader.conn(), target_id).await?;
        self.live_explanation(&mut reader.conn(), &target).await
    }

    /// The reputation of a root controller in today's snapshot (§2.11: reputation is versioned daily).
    ///
    /// The snapshot is evaluated at the start of the UTC day from the observations decided before it, so every
    /// process sharing the database computes the same ρ all day, and it is cached per controller until the day ends.
    pub(super) async fn reputation_multiplier(
        &self,
        conn: &mut Conn<'_>,
        root_controller: &PublicId,
    ) -> Result<crate::trust::ControllerReputation, ServiceError> {
        let snapshot_at = self
            .now()
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .map_or_else(|| self.now(), |midnight| midnight.and_utc());
        {
            let cache = self
                .inner
                .reputation_cache
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some((cached_at, reputation)) = cache.get(root_controller.as_str())
                && *cached_at == snapshot_at
            {
                return Ok(reputation.clone());
            }
        }
        let stored = store::trust::reputation_observations_of(conn, root_controller).await?;
        let observations: Vec<ReputationObservation> = stored
            .iter()
            .filter(|observation| observation.decided_at < snapshot_at)
            .map(|observation| ReputationObservation {
                target_id: observation.target_id.as_str().to_owned(),
                stance: if observation.positive_stance {
                    Stance::Positive
                } else {
                    Stance::Negative
                },
                recorded_at: observation.recorded_at,
                decision: if observation.positive_decision {
                    FirstPartyDecision::Positive
                } else {
                    FirstPartyDecision::Negative
                },
                decided_at: observation.decided_at,
                target_authored_by_controller: false,
            })
            .collect();
        let reputation = controller_reputation(&observations, snapshot_at, self.trust_parameters());
        let mut cache = self
            .inner
            .reputation_cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache.len() >= REPUTATION_CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(root_controller.as_str().to_owned(), (snapshot_at, reputation.clone()));
        Ok(reputation)
    }

    /// Notes that a remote rating changed the aggregates of (target, dimension) in this transaction; see
    /// [`Service::refresh_noted_rating_aggregates`].
    pub(super) fn note_rating_change(&self, unit: &mut UnitOfWork, target: &PublicId, dimension: &str) {
        unit.trust_states()
            .rating_refreshes
            .insert((target.clone(), dimension.to_owned()));
    }

    /// Refreshes, once each, the rating aggregates noted in this transaction (call it when its objects are applied).
    pub(super) async fn refresh_noted_rating_aggregates(&self, unit: &mut UnitOfWork) -> Result<(), ServiceError> {
        for (target, dimension) in std::mem::take(&mut unit.trust_states().rating_refreshes) {
            self.refresh_rating_aggregates_if_held(&mut unit.conn(), &target, &dimension)
                .await?;
        }
        Ok(())
    }

    /// Judges the records of every target whose status became decided in this transaction. Call it after the
    /// transaction's evidence rows are written, so the judgement sees them.
    pub(super) async fn settle_decisions(&self, unit: &mut UnitOfWork) -> Result<(), ServiceError> {
        for (target, decided_at) in std::mem::take(&mut unit.trust_states().decided) {
            self.record_reputation_observations(unit, &target, decided_at).await?;
        }
        for (target, decision, decided_at) in std::mem::take(&mut unit.trust_states().first_party_decided) {
            self.record_agreement_events(unit, &target, decision, decided_at)
                .await?;
        }
        Ok(())
    }

    /// §2.10, §2.15: at the first time a target's first-party-only status is decided, records the decision (frozen
    /// from then on) and one agreement event per peer whose records on the target, received strictly before, give
    /// its bucket a stance (the sign of r_I − s_I; a neutral stance gives none).
    async fn record_agreement_events(
        &self,
        unit: &mut UnitOfWork,
        target: &TrustTarget,
        decision: FirstPartyDecision,
        decided_at: DateTime<Utc>,
    ) -> Result<(), ServiceError> {
        if store::instance_trust::first_party_decision(&mut unit.conn(), target.id.as_str())
            .await?
            .is_some()
        {
            return Ok(());
        }
        let positive_decision = decision == FirstPartyDecision::Positive;
        store::instance_trust::save_first_party_decision(
            &mut unit.conn(),
            target.id.as_str(),
            positive_decision,
            decided_at,
        )
        .await?;
        let received: HashMap<String, DateTime<Utc>> =
            store::remote_evidence::received_times_of_target(&mut unit.conn(), &target.id)
                .await?
                .into_iter()
                .filter(|(_, received_at)| *received_at < decided_at)
                .collect();
        if received.is_empty() {
            return Ok(());
        }
        let records: Vec<EvidenceRecord> = self
            .evidence_records_of(&mut unit.conn(), &target.id)
            .await?
            .into_iter()
            .filter(|record| record.origin.is_some() && received.contains_key(&record.record_id))
            .collect();
        let no_peers = empty_instance_trust_table();
        let explanation = crate::trust::explain_records(
            &self.descriptor(target),
            &records,
            self.trust_parameters(),
            target.created_at,
            &Evaluation {
                now: decided_at,
                instance_trust: &no_peers,
                superseded: false,
            },
            &reputation_epoch(decided_at),
        )
        .map_err(|error| ServiceError::internal(format!("stored evidence is invalid: {error}")))?;
        for party in &explanation.parties {
            let crate::trust::PartyExplanation::Instance(row) = party else {
                continue;
            };
            let stance = Stance::of_difference(row.raw_belief - row.raw_disbelief);
            if stance == Stance::Neutral {
                continue;
            }
            let stance_received_at = records
                .iter()
                .filter(|record| record.origin.as_deref() == Some(row.origin.as_str()))
                .filter_map(|record| received.get(&record.record_id).copied())
                .max()
                .unwrap_or(decided_at);
            let event = store::instance_trust::AgreementEvent {
                peer_realm: row.origin.clone(),
                target_id: target.id.as_str().to_owned(),
                positive_decision,
                decided_at,
                positive_stance: stance == Stance::Positive,
                stance_received_at,
            };
            store::instance_trust::save_agreement_event(&mut unit.conn(), &event).await?;
        }
        Ok(())
    }

    /// When a target's first-party status becomes decided, judges every earlier first-party record on it against
    /// the decision reached without that record's controller (leave-one-out), once per record.
    async fn record_reputation_observations(
        &self,
        unit: &mut UnitOfWork,
        target: &TrustTarget,
        decided_at: DateTime<Utc>,
    ) -> Result<(), ServiceError> {
        let records = self.evidence_records_of(&mut unit.conn(), &target.id).await?;
        let first_party: Vec<&EvidenceRecord> = records
            .iter()
            .filter(|record| record.origin.is_none() && !record.retracted)
            .filter(|record| record.root_controller != target.author_root_controller.as_str())
            .collect();
        let mut by_controller: BTreeMap<&str, Vec<&EvidenceRecord>> = BTreeMap::new();
        for record in &first_party {
            by_controller
                .entry(record.root_controller.as_str())
                .or_default()
                .push(record);
        }
        let descriptor = self.descriptor(target);
        let table = self.instance_trust_table();
        let evaluation = Evaluation {
            now: decided_at,
            instance_trust: &table,
            superseded: false,
        };
        let first_party_only: Vec<EvidenceRecord> = records
            .iter()
            .filter(|record| record.origin.is_none())
            .cloned()
            .collect();
        let overall = assess_records(
            &descriptor,
            &first_party_only,
            self.trust_parameters(),
            target.created_at,
            &evaluation,
        )
        .map_err(|error| ServiceError::internal(error.to_string()))?;
        for (controller, controller_records) in by_controller.iter() {
            let decision = if by_controller.len() > LEAVE_ONE_OUT_CONTROLLER_LIMIT {
                FirstPartyDecision::from_status(overall.status)
            } else {
                let without: Vec<EvidenceRecord> = first_party_only
                    .iter()
                    .filter(|record| record.root_controller != *controller)
                    .cloned()
                    .collect();
                let assessment = assess_records(
                    &descriptor,
                    &without,
                    self.trust_parameters(),
                    target.created_at,
                    &evaluation,
                )
                .map_err(|error| ServiceError::internal(error.to_string()))?;
                FirstPartyDecision::from_status(assessment.status)
            };
            let Some(decision) = decision else {
                continue;
            };
            for record in controller_records {
                let effect = record_effect(record, self.trust_parameters())
                    .map_err(|error| ServiceError::internal(error.to_string()))?;
                let stance = Stance::of_difference(effect.belief_units - effect.disbelief_units);
                if stance == Stance::Neutral {
                    continue;
                }
                let observation = ReputationObservationRecord {
                    record_id: store::stored_id(&record.record_id, "record id")?,
                    root_controller_id: store::stored_id(&record.root_controller, "controller id")?,
                    target_id: target.id.clone(),
                    positive_stance: stance == Stance::Positive,
                    positive_decision: decision == FirstPartyDecision::Positive,
                    recorded_at: record.recorded_at,
                    decided_at,
                };
                store::trust::insert_reputation_observation(&mut unit.conn(), &observation).await?;
            }
        }
        Ok(())
    }
}

/// Each controller's reputation snapshot of the current day, with the instant it was evaluated at.
pub type ReputationCache = HashMap<String, (DateTime<Utc>, crate::trust::ControllerReputation)>;

/// The reputation snapshot label: one per day, as §2.11 versions reputation.
pub fn reputation_epoch(now: DateTime<Utc>) -> String {
    now.format("reputation-%Y-%m-%d").to_string()
}

/// A target's assessment on first-party evidence alone, when it differs from `state`'s full one only through other
/// realms' evidence (`None` when the target holds none, so both agree).
fn first_party_assessment(state: &mut TargetState, now: DateTime<Utc>, superseded: bool) -> Option<Assessment> {
    state.holds_remote_records().then(|| {
        state.assess(&Evaluation {
            now,
            instance_trust: &empty_instance_trust_table(),
            superseded,
        })
    })
}

/// The stored summary of an assessment, with its first-party part (`first_party_only`, or the assessment itself when
/// it weighs first-party evidence alone).
fn summary_record(
    target: &TrustTarget,
    version: i64,
    assessment: &Assessment,
    first_party_only: Option<&Assessment>,
    held_records: usize,
    computed_at: DateTime<Utc>,
) -> TrustSummaryRecord {
    let count = |value: u32| i32::try_from(value).unwrap_or(i32::MAX);
    let first_party = first_party_only.unwrap_or(assessment);
    TrustSummaryRecord {
        target_id: target.id.clone(),
        target_kind: target.kind,
        content_id: target.content_id.clone(),
        version,
        value: assessment.value,
        lower_bound: assessment.lower_bound,
        upper_bound: assessment.upper_bound,
        status: assessment.status,
        rule: assessment.rule.as_str().to_owned(),
        reason: assessment.reason.clone(),
        independent_confirmations: count(assessment.counts.independent_confirmations.total()),
        contradictions: count(assessment.counts.contradictions.total()),
        real_world_confirmations: count(assessment.counts.real_world_confirmations.total()),
        strong_refutations: count(assessment.counts.strong_refutations_first_party),
        evidence_records: i32::try_from(held_records).unwrap_or(i32::MAX),
        computed_at,
        first_party: store::trust::FirstPartySummary {
            value: first_party.value,
            lower_bound: first_party.lower_bound,
            status: first_party.status,
            independent_confirmations: count(first_party.counts.independent_confirmations.first_party),
            contradictions: count(first_party.counts.contradictions.first_party),
            real_world_confirmations: count(first_party.counts.real_world_confirmations.first_party),
        },
    }
}
