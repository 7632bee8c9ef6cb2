//! The worked example of docs/trust-model.md, step by step, with the numbers the document prints.

use super::*;
use crate::domain::TrustStatus;
use crate::domain::evidence::{Grounding, UsageOutcome, Verdict};
use crate::trust::explanation::PartyExplanation;
use crate::trust::remote::InstanceBound;
use crate::trust::status::StatusRule;

#[test]
fn worked_example_of_the_trust_model_document() {
    // Default parameters: the gate is closed, but every test controller's account is 1,000 days old, so dave and
    // erin below are eligible to refute strongly.
    let params = TrustParameters::default();
    let table = InstanceTrustTable::new("trust-1").with("beta.test", 0.5);
    let mut evidence = Evidence::default();
    // Day 0: three agents of alice and one of bob report real-world successes.
    for agent in 0..3 {
        evidence.usage_by(
            None,
            "usr_alice",
            &format!("ai_alice_{agent}"),
            0.0,
            true,
            UsageOutcome::Success,
        );
    }
    evidence.success("usr_bob", 0.0);
    // Day 10: carol reviews `mostly_correct` at confidence 0.8, grounded in her own test usage.
    evidence.review(
        None,
        "usr_carol",
        10.0,
        Verdict::MostlyCorrect,
        0.8,
        Grounding::OwnTestUsage,
    );
    // Day 12: the author reports a success on their own content: listed as self, weight 0.
    evidence.success(AUTHOR, 12.0);
    // Day 20: four controllers of the peer beta.test (t = 0.5) report real-world successes.
    for index in 0..4 {
        evidence.remote_usage("beta.test", &format!("usr_b{index}"), 20.0, UsageOutcome::Success);
    }
    let mut state =
        TargetState::from_records(target(), params.clone(), day_zero(), &evidence.records).expect("valid records");
    let explanation = state.explain(&at(30.0, &table), "rep-1");
    let assessment = &explanation.assessment;

    let rows: Vec<(String, f64, f64, bool)> = explanation
        .parties
        .iter()
        .filter_map(|party| match party {
            PartyExplanation::Controller(row) => Some((row.controller.clone(), row.belief, row.disbelief, row.capped)),
            PartyExplanation::Instance(_) => None,
        })
        .collect();
    assert_eq!(rows[0].0, "usr_alice");
    assert_printed(rows[0].1, 1.0, 4, "alice, capped at one unit");
    assert!(rows[0].3);
    assert_printed(rows[1].1, 0.9446, 4, "bob, 30 days old");
    assert_printed(rows[2].1, 0.4043, 4, "carol r");
    assert_printed(rows[2].2, 0.1348, 4, "carol s");
    assert_eq!((rows[3].0.as_str(), rows[3].1), (AUTHOR, 0.0));
    assert_eq!(explanation.excluded.self_evidence, 1);

    let Some(PartyExplanation::Instance(beta)) = explanation.parties.last() else {
        panic!("beta.test is listed")
    };
    assert_printed(beta.raw_belief, 3.9248, 4, "beta raw r");
    assert_printed(beta.discount_factor, 0.2524, 4, "beta discount λ");
    assert_printed(beta.belief, 0.9905, 4, "beta r");
    assert_eq!(beta.bound, InstanceBound::TrustDiscount { saturation: 2.0 });

    assert_printed(assessment.evidence_units.first_party.belief, 2.3490, 4, "first-party R");
    assert_printed(
        assessment.evidence_units.first_party.disbelief,
        0.1348,
        4,
        "first-party S",
    );
    assert_printed(assessment.value, 0.7927, 4, "value");
    assert_printed(assessment.lower_bound, 0.4776, 4, "lower");
    assert_printed(assessment.upper_bound, 0.9824, 4, "upper");
    assert_eq!(assessment.counts.independent_confirmations.total(), 4);
    assert_eq!(assessment.counts.independent_confirmations.remote, 1);
    assert_eq!(assessment.counts.real_world_confirmations.total(), 3);
    assert_eq!(
        (assessment.status, assessment.rule),
        (TrustStatus::Supported, StatusRule::R10)
    );

    // Day 30: dave and erin each report a real-world failure: two independent first-party strong refutations.
    state.add(&evidence.failure("usr_dave", 30.0)).expect("valid record");
    state.add(&evidence.failure("usr_erin", 30.0)).expect("valid record");
    let refuted = state.assess(&at(30.0, &table));
    assert_printed(refuted.value, 0.5806, 4, "value after the proof");
    assert_eq!((refuted.status, refuted.rule), (TrustStatus::Incorrect, StatusRule::R4));
    assert_eq!(refuted.reason, "2 independent first-party strong refutations");
}
