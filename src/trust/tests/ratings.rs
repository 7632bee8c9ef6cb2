//! Rating aggregation (§2.9, P13): the spec's measured numbers, the fallback below 3 raters and the hierarchical
//! context fallback.

use super::*;
use crate::domain::ContextKey;
use crate::trust::evidence::RatingRecord;
use crate::trust::rating::{RatingQuery, aggregate_ratings};

fn rating(
    list: &mut Vec<RatingRecord>,
    origin: Option<&str>,
    controller: &str,
    actor: &str,
    context: &str,
    score: f64,
) {
    list.push(RatingRecord {
        record_id: format!("rat_{:06}", list.len()),
        actor: actor.to_string(),
        root_controller: controller.to_string(),
        origin: origin.map(str::to_string),
        origin_signature_valid: true,
        recorded_at: day(0.0),
        retracted: false,
        dimension: "usefulness".to_string(),
        context: ContextKey::parse(context).expect("well-formed context"),
        score,
        confidence: 1.0,
    });
}

/// opA's 100 agents at 100 and h1 at 60 in python; three raters elsewhere whose scores sum to 200.
fn section_2_9_ratings() -> Vec<RatingRecord> {
    let mut list = Vec::new();
    for agent in 0..100 {
        rating(
            &mut list,
            None,
            "org_opa",
            &format!("ai_opa_{agent}"),
            "lang=python",
            100.0,
        );
    }
    rating(&mut list, None, "usr_h1", "usr_h1", "lang=python", 60.0);
    rating(&mut list, None, "usr_x1", "ai_x1", "lang=rust", 80.0);
    rating(&mut list, None, "usr_x2", "ai_x2", "lang=go", 60.0);
    rating(&mut list, None, "usr_x3", "ai_x3", "*", 60.0);
    list
}

fn query_for<'a>(author: &'a ControllerRef, context: &'a ContextKey) -> RatingQuery<'a> {
    RatingQuery {
        author,
        dimension: "usefulness",
        context,
        dimension_mean_score: None,
    }
}

#[test]
fn p13_fewer_than_three_context_raters_fall_back_to_the_all_context_aggregate() {
    let params = TrustParameters::default();
    let table = InstanceTrustTable::new("e");
    let author = ControllerRef::first_party(AUTHOR);
    let python = ContextKey::parse("lang=python").expect("well-formed");
    let mut list = section_2_9_ratings();
    let fallback =
        aggregate_ratings(&list, &query_for(&author, &python), &at(0.0, &table), &params).expect("valid ratings");
    assert!(fallback.fallback);
    assert_eq!(fallback.context_raters, 2);
    assert_eq!(fallback.independent_raters, 5);
    assert!(fallback.context.is_all());
    assert_printed(fallback.value, 65.7, 1, "all-context value");
    assert_printed(fallback.lower_bound, 35.6, 1, "all-context lower");
    assert_printed(fallback.upper_bound, 90.5, 1, "all-context upper");

    rating(&mut list, None, "usr_h2", "usr_h2", "lang=python", 60.0);
    rating(&mut list, None, "usr_h3", "usr_h3", "lang=python", 60.0);
    let own = aggregate_ratings(&list, &query_for(&author, &python), &at(0.0, &table), &params).expect("valid ratings");
    assert!(!own.fallback);
    assert_eq!(own.context, python);
    assert_eq!((own.independent_raters, own.context_raters), (4, 4));
    // The spec prints 68.2 here and 68.15 for the same aggregate further down. The value is 68.148 (α = 2·0.6444 +
    // 2.8 = 4.0889 of α + β = 6): 68.15 at two digits; "68.2" is 68.15 rounded a second time.
    assert_printed(own.value, 68.15, 2, "python value");
    assert_printed(own.lower_bound, 35.8, 1, "python lower");
    assert_printed(own.upper_bound, 93.2, 1, "python upper");

    let mut flooded = list.clone();
    for index in 0..5_000 {
        rating(
            &mut flooded,
            Some("peer.test"),
            &format!("usr_p{index}"),
            &format!("ai_p{index}"),
            "lang=python",
            0.0,
        );
    }
    let half = InstanceTrustTable::new("e").with("peer.test", 0.5);
    let at_half =
        aggregate_ratings(&flooded, &query_for(&author, &python), &at(0.0, &half), &params).expect("valid ratings");
    assert_printed(at_half.value, 48.2, 1, "flooded at t = 0.5");
    assert_eq!(at_half.independent_raters, 5);
    assert!(at_half.effective_n - 4.0 < 2.0, "the peer is worth at most 2 raters");
    let zero = InstanceTrustTable::new("e").with("peer.test", 0.0);
    let at_zero =
        aggregate_ratings(&flooded, &query_for(&author, &python), &at(0.0, &zero), &params).expect("valid ratings");
    assert_eq!(at_zero.value.to_bits(), own.value.to_bits());
}

#[test]
fn structured_contexts_fall_back_hierarchically() {
    let params = TrustParameters::default();
    let table = InstanceTrustTable::new("e");
    let author = ControllerRef::first_party(AUTHOR);
    let mut list = section_2_9_ratings();
    rating(&mut list, None, "usr_h2", "usr_h2", "lang=python;ver=3.11", 60.0);
    rating(&mut list, None, "usr_h3", "usr_h3", "lang=python;ver=3.12", 60.0);
    let precise = ContextKey::parse("lang=python;ver=3.12").expect("well-formed");
    let result =
        aggregate_ratings(&list, &query_for(&author, &precise), &at(0.0, &table), &params).expect("valid ratings");
    // One rater in ver=3.12, four under lang=python (opA, h1, h2, h3): the lang=python aggregate is reported.
    assert!(result.fallback);
    assert_eq!(result.context.to_string(), "lang=python");
    assert_eq!(result.context_raters, 1);
    assert_eq!(result.independent_raters, 4);
    assert_printed(result.value, 68.15, 2, "lang=python value");

    // With two more ver=3.12 raters the precise context stands on its own.
    rating(&mut list, None, "usr_h4", "usr_h4", "lang=python;ver=3.12", 40.0);
    rating(&mut list, None, "usr_h5", "usr_h5", "lang=python;ver=3.12", 40.0);
    let own =
        aggregate_ratings(&list, &query_for(&author, &precise), &at(0.0, &table), &params).expect("valid ratings");
    assert!(!own.fallback);
    assert_eq!(own.context, precise);
    assert_eq!(own.independent_raters, 3);

    // An unrelated context with no raters falls all the way back to `*`.
    let elsewhere = ContextKey::parse("lang=cobol").expect("well-formed");
    let all =
        aggregate_ratings(&list, &query_for(&author, &elsewhere), &at(0.0, &table), &params).expect("valid ratings");
    assert!(all.fallback && all.context.is_all());
    assert_eq!(all.context_raters, 0);
}

#[test]
fn latest_rating_per_actor_and_context_counts_and_self_ratings_weigh_nothing() {
    let params = TrustParameters::default();
    let table = InstanceTrustTable::new("e");
    let author = ControllerRef::first_party(AUTHOR);
    let all = ContextKey::all();
    let mut list = Vec::new();
    rating(&mut list, None, "usr_a", "ai_a", "*", 10.0);
    rating(&mut list, None, "usr_a", "ai_a", "*", 90.0);
    list[1].recorded_at = day(1.0);
    let latest = aggregate_ratings(&list, &query_for(&author, &all), &at(1.0, &table), &params).expect("valid");
    // Only the 90 counts: α = 1 + 0.9, β = 1 + 0.1.
    assert_printed(latest.value, 100.0 * 1.9 / 3.0, 9, "latest rating");
    rating(&mut list, None, AUTHOR, "ai_author", "*", 0.0);
    let with_self = aggregate_ratings(&list, &query_for(&author, &all), &at(1.0, &table), &params).expect("valid");
    assert_eq!(with_self, latest);
    let mut bad = list.clone();
    bad[0].score = 101.0;
    assert!(aggregate_ratings(&bad, &query_for(&author, &all), &at(1.0, &table), &params).is_err());
}
