//! Rating aggregation per (target, dimension, context) with the per-controller cap, remote discounting, a Beta
//! interval on the 0–100 scale and the hierarchical context fallback (§2.9).
//!
//! Ratings never feed the truth value in trust-v1; they only produce these aggregates.

use std::collections::BTreeMap;

use super::error::TrustError;
use super::evidence::{ControllerRef, RatingRecord};
use super::fixed_point::{days_between, decay_factor};
use super::interval::beta_interval;
use super::params::TrustParameters;
use super::remote::remote_discount;
use super::summary::Evaluation;
use crate::domain::ContextKey;

/// What to aggregate.
#[derive(Debug, Clone, Copy)]
pub struct RatingQuery<'a> {
    /// The target's author, whose own ratings weigh nothing.
    pub author: &'a ControllerRef,
    /// The rated dimension.
    pub dimension: &'a str,
    /// The requested context; `*` asks for the all-context aggregate.
    pub context: &'a ContextKey,
    /// The dimension-wide mean score across targets (0–100), the prior mean of the all-context aggregate;
    /// `None` means 50. It is clamped to [1, 99] so that the prior never degenerates.
    pub dimension_mean_score: Option<f64>,
}

/// One aggregate, on the 0–100 scale.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingAggregate {
    pub value: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    /// Parties (first-party controllers and trusted instances) with positive weight in this aggregate.
    pub independent_raters: u32,
    /// Σ of the party weights.
    pub effective_n: f64,
    /// The context the aggregate was computed for (after any fallback).
    pub context: ContextKey,
    /// The context the query asked for.
    pub requested_context: ContextKey,
    /// True when the requested context had too few raters and a coarser context was reported.
    pub fallback: bool,
    /// Independent raters in the requested context.
    pub context_raters: u32,
    /// The prior mean m0 used (0–100).
    pub prior_mean: f64,
}

/// One party's collapsed rating: weight and mean score (0–1).
#[derive(Debug, Clone, Copy)]
struct PartyRating {
    weight: f64,
    mean_score: f64,
}

/// Aggregates the ratings of one target (all dimensions and contexts may be passed; the query selects).
/// Retracted, unsigned-remote and self ratings weigh nothing; the latest rating per (actor, dimension, context)
/// counts. Refuses scores outside [0, 100] and confidences outside [0, 1].
pub fn aggregate_ratings(
    ratings: &[RatingRecord],
    query: &RatingQuery<'_>,
    evaluation: &Evaluation<'_>,
    params: &TrustParameters,
) -> Result<RatingAggregate, TrustError> {
    for rating in ratings {
        if !(0.0..=100.0).contains(&rating.score) {
            return Err(TrustError::ScoreOutOfRange {
                record_id: rating.record_id.clone(),
                score: rating.score,
            });
        }
        if !(0.0..=1.0).contains(&rating.confidence) {
            return Err(TrustError::ConfidenceOutOfRange {
                record_id: rating.record_id.clone(),
                confidence: rating.confidence,
            });
        }
    }
    // The latest rating per (origin, actor, context) of the dimension, keyed so that iteration order is fixed.
    let mut latest: BTreeMap<(Option<&str>, &str, &ContextKey), &RatingRecord> = BTreeMap::new();
    for rating in ratings {
        let counts = !rating.retracted
            && rating.dimension == query.dimension
            && (rating.origin.is_none() || rating.origin_signature_valid)
            && !(rating.origin == query.author.origin && rating.root_controller == query.author.controller);
        if !counts {
            continue;
        }
        let key = (rating.origin.as_deref(), rating.actor.as_str(), &rating.context);
        let entry = latest.entry(key).or_insert(rating);
        if (rating.recorded_at, rating.record_id.as_str()) > (entry.recorded_at, entry.record_id.as_str()) {
            *entry = rating;
        }
    }
    let mut selected: Vec<&RatingRecord> = latest.into_values().collect();
    selected.sort_by(|left, right| left.record_id.cmp(&right.record_id));

    let all_contexts = ContextKey::all();
    let dimension_mean = query
        .dimension_mean_score
        .map_or(0.5, |score| (score / 100.0).clamp(0.01, 0.99));
    let all_context_parties = collapse(&selected, &all_contexts, evaluation, params);
    let all_context = finish(&all_context_parties, dimension_mean, params);
    let requested = query.context.clone();
    if requested.is_all() {
        return Ok(RatingAggregate {
            context: all_contexts,
            requested_context: requested,
            fallback: false,
            context_raters: all_context.independent_raters,
            prior_mean: dimension_mean * 100.0,
            ..all_context
        });
    }
    let context_prior_mean = all_context.value / 100.0;
    let mut context_raters = None;
    for level in requested.fallback_chain() {
        if level.is_all() {
            break;
        }
        let parties = collapse(&selected, &level, evaluation, params);
        let raters = parties.len() as u32;
        context_raters.get_or_insert(raters);
        if raters >= params.rating_min_context_raters {
            let aggregate = finish(&parties, context_prior_mean, params);
            return Ok(RatingAggregate {
                fallback: level != requested,
                context: level,
                requested_context: requested,
                context_raters: context_raters.unwrap_or(raters),
                prior_mean: context_prior_mean * 100.0,
                ..aggregate
            });
        }
    }
    Ok(RatingAggregate {
        context: all_contexts,
        requested_context: requested,
        fallback: true,
        context_raters: context_raters.unwrap_or(0),
        prior_mean: dimension_mean * 100.0,
        ..all_context
    })
}

/// Collapses the ratings within `context` into parties: per controller w_c = min(C_CTRL, Σ c·d) with the
/// (c·d)-weighted mean score; per remote instance the controllers' weights are summed, discounted with λ_I and
/// capped at C_INST, and their scores averaged by weight. Parties with zero weight are left out.
fn collapse(
    ratings: &[&RatingRecord],
    context: &ContextKey,
    evaluation: &Evaluation<'_>,
    params: &TrustParameters,
) -> Vec<PartyRating> {
    // (weight sum Σ c·d, weighted score sum Σ c·d·s) per (origin, controller).
    let mut controllers: BTreeMap<(Option<&str>, &str), (f64, f64)> = BTreeMap::new();
    for rating in ratings.iter().filter(|rating| context.contains(&rating.context)) {
        let age_days = days_between(rating.recorded_at, evaluation.now);
        let weight = rating.confidence * decay_factor(age_days, params.half_life_days);
        let entry = controllers
            .entry((rating.origin.as_deref(), rating.root_controller.as_str()))
            .or_insert((0.0, 0.0));
        entry.0 += weight;
        entry.1 += weight * rating.score / 100.0;
    }
    let mut parties = Vec::new();
    // (Σ w_c, Σ w_c·s̄_c) per instance.
    let mut instances: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for ((origin, _), (weight_sum, score_sum)) in controllers {
        if weight_sum <= 0.0 {
            continue;
        }
        let controller_weight = weight_sum.min(params.controller_cap);
        let mean_score = score_sum / weight_sum;
        match origin {
            None => parties.push(PartyRating {
                weight: controller_weight,
                mean_score,
            }),
            Some(origin) => {
                let entry = instances.entry(origin).or_insert((0.0, 0.0));
                entry.0 += controller_weight;
                entry.1 += controller_weight * mean_score;
            }
        }
    }
    for (origin, (mass, score_sum)) in instances {
        let trust = evaluation.instance_trust.trust_of(origin, params);
        let discount = remote_discount(trust, mass, params);
        let weight = discount.discount_factor * mass;
        if weight > 0.0 {
            parties.push(PartyRating {
                weight,
                mean_score: score_sum / mass,
            });
        }
    }
    parties
}

/// The Beta aggregate of collapsed parties around prior mean `prior_mean` (0–1).
fn finish(parties: &[PartyRating], prior_mean: f64, params: &TrustParameters) -> RatingAggregate {
    let mut alpha = params.rating_prior_raters * prior_mean;
    let mut beta = params.rating_prior_raters * (1.0 - prior_mean);
    let mut effective_n = 0.0;
    for party in parties {
        alpha += party.weight * party.mean_score;
        beta += party.weight * (1.0 - party.mean_score);
        effective_n += party.weight;
    }
    let (lower, upper) = beta_interval(alpha, beta, params.lower_quantile, params.upper_quantile);
    RatingAggregate {
        value: 100.0 * alpha / (alpha + beta),
        lower_bound: 100.0 * lower,
        upper_bound: 100.0 * upper,
        independent_raters: parties.len() as u32,
        effective_n,
        context: ContextKey::all(),
        requested_context: ContextKey::all(),
        fallback: false,
        context_raters: parties.len() as u32,
        prior_mean: prior_mean * 100.0,
    }
}
