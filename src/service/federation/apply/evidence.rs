//! Applying a replicated evidence record (a usage event, a review or a rating) and its origin's retraction, under
//! trust model §2.15: the record is stored in the receiver's evidence tables under its origin (so the trust engine
//! discounts it by the receiver's own trust in that origin, never by the sender's), with its provenance; its time is
//! the earlier of its origin's date and its first receipt; a review is grounded only in a usage held here from the
//! same origin, actor and target; the remote controller's standing is neutral (ρ = 1, never eligible to refute
//! strongly). Only a record's origin retracts it. A record about a target not held yet is kept and counts once the
//! target arrives; a record about content in a local space, or whose origin is this realm, counts nothing.

use super::Applied;
use crate::domain::evidence::{Grounding, Rating, RecordAuthor, RecordStatus, Review, StandingSnapshot, UsageEvent};
use crate::domain::knowledge::SpaceVisibility;
use crate::domain::replication::{
    EvidenceFacts, EvidencePassport, EvidenceProvenance, EvidenceRetraction, OriginProof, ReceivedRetraction,
};
use crate::domain::{IdKind, PublicId};
use crate::service::ServiceError;
use crate::service::federation::Federation;
use crate::service::known_rows::KnownRows;
use crate::service::trust::{EvidenceChange, TrustTarget};
use crate::service::unit_of_work::UnitOfWork;
use crate::store::{self, Conn};

/// A stored evidence record's author, status and target, whatever its kind.
struct HeldRecord {
    author: RecordAuthor,
    status: RecordStatus,
    target_id: PublicId,
}

/// The stored record with this ID, of the kind its prefix names.
async fn held_record(conn: &mut Conn<'_>, record_id: &PublicId) -> Result<Option<HeldRecord>, ServiceError> {
    Ok(match record_id.kind() {
        IdKind::Usage => store::evidence::find_usage(conn, record_id)
            .await?
            .map(|usage| HeldRecord {
                author: usage.author,
                status: usage.status,
                target_id: usage.target_id,
            }),
        IdKind::Review => store::evidence::find_review(conn, record_id)
            .await?
            .map(|review| HeldRecord {
                author: review.author,
                status: review.status,
                target_id: review.target_id,
            }),
        IdKind::Rating => store::evidence::find_rating(conn, record_id)
            .await?
            .map(|rating| HeldRecord {
                author: rating.author,
                status: rating.status,
                target_id: rating.target_id,
            }),
        _ => None,
    })
}

/// The record kind's ID prefix and the kinds of target it may be about.
fn expected_kinds(facts: &EvidenceFacts) -> (IdKind, &'static [IdKind]) {
    match facts {
        EvidenceFacts::Usage { .. } => (IdKind::Usage, &[IdKind::Revision, IdKind::Claim, IdKind::Entity]),
        EvidenceFacts::Review { .. } => (IdKind::Review, &[IdKind::Revision, IdKind::Claim]),
        EvidenceFacts::Rating { .. } => (IdKind::Rating, &[IdKind::Entity, IdKind::Content]),
    }
}

/// Every check of a passport that needs no database: ID kinds, and the evidence fields as local input is checked.
fn check_passport(passport: &EvidencePassport) -> Result<(), String> {
    let (record_kind, target_kinds) = expected_kinds(&passport.facts);
    if passport.record_id.kind() != record_kind {
        return Err(format!("{} is not an ID of this kind of record", passport.record_id));
    }
    if !target_kinds.contains(&passport.target_id.kind()) {
        return Err(format!(
            "{} cannot be the target of this kind of record",
            passport.target_id
        ));
    }
    match (passport.target_id.kind(), &passport.target_content_id) {
        (IdKind::Revision, Some(content)) if content.kind() == IdKind::Content => {}
        (IdKind::Revision, _) => return Err("a revision target needs its content item".to_owned()),
        (_, Some(_)) => return Err("only a revision target names a content item".to_owned()),
        (_, None) => {}
    }
    if !matches!(
        passport.actor_id.kind(),
        IdKind::Agent | IdKind::User | IdKind::Organization
    ) {
        return Err(format!("{} is not an actor", passport.actor_id));
    }
    if !matches!(passport.root_controller_id.kind(), IdKind::User | IdKind::Organization) {
        return Err(format!("{} is not a root controller", passport.root_controller_id));
    }
    let invalid = |error: ServiceError| error.to_string();
    match &passport.facts {
        EvidenceFacts::Usage { usage_type, .. } => {
            crate::service::validation::type_name("usageType", usage_type).map_err(invalid)?;
        }
        EvidenceFacts::Review {
            confidence,
            based_on_usage,
            ..
        } => {
            crate::service::validation::confidence("confidence", *confidence).map_err(invalid)?;
            if based_on_usage
                .as_ref()
                .is_some_and(|usage| usage.kind() != IdKind::Usage)
            {
                return Err("basedOnUsage must be a usage event".to_owned());
            }
        }
        EvidenceFacts::Rating {
            dimension,
            score,
            confidence,
            based_on_usage,
            ..
        } => {
            crate::service::validation::confidence("confidence", *confidence).map_err(invalid)?;
            if !crate::domain::text::is_lower_snake_case(dimension)
                || dimension.chars().count() > crate::service::limits::MAX_DIMENSION_CHARACTERS
            {
                return Err(format!("dimension {dimension:?} is not a lower_snake_case name"));
            }
            if !(score.is_finite()
                && (crate::service::limits::MIN_RATING_SCORE..=crate::service::limits::MAX_RATING_SCORE)
                    .contains(score))
            {
                return Err("score must be a number from 0 to 100".to_owned());
            }
            if based_on_usage
                .as_ref()
                .is_some_and(|usage| usage.kind() != IdKind::Usage)
            {
                return Err("basedOnUsage must be a usage event".to_owned());
            }
        }
    }
    Ok(())
}

impl Federation {
    /// Applies a replicated evidence record from `sender` (its origin's proof verified).
    pub(super) async fn apply_evidence_in(
        &self,
        unit: &mut UnitOfWork,
        sender: &str,
        passport: &EvidencePassport,
        proof: &OriginProof,
        known: &mut KnownRows,
    ) -> Result<Applied, ServiceError> {
        let record_id = &passport.record_id;
        if let Err(why) = check_passport(passport) {
            return Ok(Applied::Refused(format!("{record_id}: {why}")));
        }
        if let Some(held) = held_record(&mut unit.conn(), record_id).await? {
            return Ok(if held.author.origin == passport.origin {
                // A second copy (pushed and pulled, or relayed) changes nothing, its time included.
                Applied::Ignored(format!("{record_id} is held already"))
            } else {
                Applied::Refused(format!(
                    "{record_id} already exists here under the origin {}",
                    held.author.origin
                ))
            });
        }
        let service = self.service();
        let now = self.now();
        // §2.15: decay runs from the earlier of the origin's date and the first valid receipt, so a record dated in
        // the future gains nothing.
        let recorded_at = passport.created_at.min(now);

        // The target, when it is held here: content in a local space never takes remote evidence, and evidence about
        // deleted content is not taken (as locally). Locked first, as a target's writer locks it before it reads the
        // evidence waiting for it: the two may be applied at the same time.
        known.lock_evidence_target(unit, &passport.target_id).await?;
        let target = match &passport.facts {
            EvidenceFacts::Rating { .. } => None,
            _ => service.find_trust_target(&mut unit.conn(), &passport.target_id).await?,
        };
        // A claim's alias resolves to the canonical claim here: the record is kept on it (§2.15).
        let target_id = target
            .as_ref()
            .map_or_else(|| passport.target_id.clone(), |target| target.id.clone());
        if let Some((_, visibility)) =
            store::remote_evidence::target_space(&mut unit.conn(), &target_id, passport.target_content_id.as_ref())
                .await?
            && visibility == SpaceVisibility::Local
        {
            return Ok(Applied::Refused(format!(
                "{record_id}: its target {} is in a local space of this instance",
                passport.target_id
            )));
        }
        if let Some(target) = &target
            && target.content_id != passport.target_content_id
        {
            return Ok(Applied::Refused(format!(
                "{record_id}: {} is not a revision of {}",
                passport.target_id,
                passport
                    .target_content_id
                    .as_ref()
                    .map_or("no content item", PublicId::as_str)
            )));
        }
        let content_of_target = passport
            .target_content_id
            .clone()
            .or_else(|| (passport.target_id.kind() == IdKind::Content).then(|| passport.target_id.clone()));
        if let Some(content_id) = &content_of_target
            && store::knowledge::find_content(&mut unit.conn(), content_id)
                .await?
                .is_some_and(|content| content.deleted_at.is_some())
        {
            return Ok(Applied::Ignored(format!(
                "{record_id}: {content_id} was deleted; evidence about it is not taken"
            )));
        }

        // A retraction that came before the record: the record is stored already retracted.
        let retraction = store::remote_evidence::find_retraction(&mut unit.conn(), record_id)
            .await?
            .filter(|received| received.retraction.origin == passport.origin);
        let (status, retracted_at) = match &retraction {
            Some(received) => (RecordStatus::Retracted, Some(received.received_at)),
            None => (RecordStatus::Active, None),
        };
        let author = RecordAuthor {
            actor_id: passport.actor_id.clone(),
            root_controller_id: passport.root_controller_id.clone(),
            origin: passport.origin.clone(),
            origin_proof_verified: true,
        };
        // §2.15: a remote controller has ρ = 1 whatever its origin says, and no history that could make it a strong
        // refuter (remote evidence never refutes strongly).
        let standing = StandingSnapshot {
            reputation: 1.0,
            prior_records: 0,
            account_created_at: recorded_at,
        };
        let provenance = EvidenceProvenance {
            record_id: record_id.clone(),
            target_id: target_id.clone(),
            origin: passport.origin.clone(),
            sender: sender.to_ascii_lowercase(),
            proof: proof.clone(),
            origin_created_at: passport.created_at,
            received_at: now,
        };
        match &passport.facts {
            EvidenceFacts::Usage {
                usage_type,
                result,
                real_world_use,
                context_key,
            } => {
                let usage = UsageEvent {
                    id: record_id.clone(),
                    target_id: target_id.clone(),
                    target_content_id: passport.target_content_id.clone(),
                    author,
                    usage_type: usage_type.clone(),
                    result: *result,
                    real_world_use: *real_world_use,
                    context: context_key.facets_object(),
                    context_key: context_key.clone(),
                    metrics: serde_json::json!({}),
                    note: None,
                    experience_id: None,
                    standing,
                    status,
                    retracted_at,
                    created_at: recorded_at,
                };
                let record = service.usage_record(&usage);
                self.count_record(unit, target.as_ref(), record).await?;
                store::evidence::insert_usage(&mut unit.conn(), &usage).await?;
            }
            EvidenceFacts::Review {
                verdict,
                confidence,
                based_on_usage,
            } => {
                let grounding = match (based_on_usage, &target) {
                    (Some(usage_id), Some(target)) => remote_grounding(unit, passport, usage_id, target).await?,
                    _ => Grounding::Ungrounded,
                };
                let review = Review {
                    id: record_id.clone(),
                    target_id: target_id.clone(),
                    target_content_id: passport.target_content_id.clone(),
                    author,
                    verdict: *verdict,
                    confidence: *confidence,
                    rationale_markdown: String::new(),
                    sources: Vec::new(),
                    based_on_usage_id: based_on_usage.clone(),
                    grounding,
                    standing,
                    status,
                    retracted_at,
                    created_at: recorded_at,
                };
                let record = service.review_record(&review);
                self.count_record(unit, target.as_ref(), record).await?;
                store::evidence::insert_review(&mut unit.conn(), &review).await?;
            }
            EvidenceFacts::Rating {
                dimension,
                score,
                confidence,
                context_key,
                based_on_usage,
            } => {
                let rating = Rating {
                    id: record_id.clone(),
                    target_id: passport.target_id.clone(),
                    author,
                    dimension: dimension.clone(),
                    score: *score,
                    confidence: *confidence,
                    context: context_key.facets_object(),
                    context_key: context_key.clone(),
                    based_on_usage_id: based_on_usage.clone(),
                    rationale_markdown: String::new(),
                    status,
                    retracted_at,
                    created_at: recorded_at,
                };
                store::evidence::insert_rating(&mut unit.conn(), &rating).await?;
                service.note_rating_change(unit, &rating.target_id, dimension);
            }
        }
        store::remote_evidence::insert_provenance(&mut unit.conn(), &provenance).await?;
        let held = if target.is_some() || matches!(passport.facts, EvidenceFacts::Rating { .. }) {
            "counted"
        } else {
            "kept until its target arrives"
        };
        Ok(Applied::Stored(format!(
            "{record_id} from {} about {}: {held}",
            passport.origin, passport.target_id
        )))
    }

    /// Adds a new remote record to its target's trust state, when the target is held here.
    async fn count_record(
        &self,
        unit: &mut UnitOfWork,
        target: Option<&TrustTarget>,
        record: crate::trust::EvidenceRecord,
    ) -> Result<(), ServiceError> {
        let Some(target) = target else {
            return Ok(());
        };
        let service = self.service();
        let change = service
            .apply_evidence_change(unit, target, EvidenceChange::Add(Box::new(record)))
            .await?;
        service.after_evidence_change(unit, target, &change).await
    }

    /// Applies a record's retraction by its origin (its proof verified for `retraction.origin`).
    pub(super) async fn apply_retraction_in(
        &self,
        unit: &mut UnitOfWork,
        retraction: &EvidenceRetraction,
        proof: &OriginProof,
    ) -> Result<Applied, ServiceError> {
        let record_id = &retraction.record_id;
        if !matches!(record_id.kind(), IdKind::Usage | IdKind::Review | IdKind::Rating) {
            return Ok(Applied::Refused(format!("{record_id} is not an evidence record")));
        }
        let now = self.now();
        let received = ReceivedRetraction {
            retraction: retraction.clone(),
            proof: proof.clone(),
            received_at: now,
        };
        let Some(held) = held_record(&mut unit.conn(), record_id).await? else {
            // Before its record (a relay or a pull can reorder): kept, so the record arrives retracted.
            store::remote_evidence::insert_retraction(&mut unit.conn(), &received).await?;
            return Ok(Applied::Stored(format!(
                "the retraction of {record_id} by {} is kept until the record arrives",
                retraction.origin
            )));
        };
        if held.author.origin != retraction.origin {
            return Ok(Applied::Refused(format!(
                "{record_id} belongs to {}: only its origin retracts it",
                held.author.origin
            )));
        }
        store::remote_evidence::insert_retraction(&mut unit.conn(), &received).await?;
        if held.status == RecordStatus::Retracted {
            return Ok(Applied::Ignored(format!("{record_id} is retracted already")));
        }
        let service = self.service();
        if record_id.kind() == IdKind::Rating {
            store::evidence::retract(&mut unit.conn(), record_id, now).await?;
            if let Some(rating) = store::evidence::find_rating(&mut unit.conn(), record_id).await? {
                service.note_rating_change(unit, &rating.target_id, &rating.dimension);
            }
        } else {
            let target = service.find_trust_target(&mut unit.conn(), &held.target_id).await?;
            if let Some(target) = &target {
                let change = service
                    .apply_evidence_change(unit, target, EvidenceChange::Retract(record_id.as_str().to_owned()))
                    .await?;
                store::evidence::retract(&mut unit.conn(), record_id, now).await?;
                service.after_evidence_change(unit, target, &change).await?;
            } else {
                store::evidence::retract(&mut unit.conn(), record_id, now).await?;
            }
        }
        Ok(Applied::Stored(format!(
            "{record_id} retracted by {}",
            retraction.origin
        )))
    }
}

/// §2.15: a remote review is grounded only in a usage held here from the same origin, the same remote actor and the
/// same target (as locally: the same revision or content item, or a revision making the reviewed claim), not
/// retracted; otherwise it counts as ungrounded.
async fn remote_grounding(
    unit: &mut UnitOfWork,
    passport: &EvidencePassport,
    usage_id: &PublicId,
    target: &TrustTarget,
) -> Result<Grounding, ServiceError> {
    let Some(usage) = store::evidence::find_usage(&mut unit.conn(), usage_id).await? else {
        return Ok(Grounding::Ungrounded);
    };
    if usage.author.origin != passport.origin
        || usage.author.actor_id != passport.actor_id
        || usage.status == RecordStatus::Retracted
    {
        return Ok(Grounding::Ungrounded);
    }
    let same_target = crate::service::evidence::usage_is_of_target(&mut unit.conn(), &usage, target).await?;
    Ok(match (same_target, usage.real_world_use) {
        (false, _) => Grounding::Ungrounded,
        (true, true) => Grounding::OwnRealWorldUsage,
        (true, false) => Grounding::OwnTestUsage,
    })
}
