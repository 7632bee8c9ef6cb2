//! Instance trust (§2.10 table, agreement validity) and actor reputation (§2.11 bounds and validity).

use super::*;
use crate::trust::agreement_tally::FirstPartyDecision;
use crate::trust::evidence::Stance;
use crate::trust::instance_trust::{AdminTrustLevel, AgreementObservation, InstanceTrustSetting, instance_trust};
use crate::trust::reputation::{ReputationObservation, controller_reputation};

fn standard() -> InstanceTrustSetting {
    InstanceTrustSetting {
        level: AdminTrustLevel::Standard,
        pinned: None,
    }
}

/// `agree` agreeing and `disagree` disagreeing observations, all decided at day 100 and received before.
fn observations(agree: usize, disagree: usize) -> Vec<AgreementObservation> {
    (0..agree + disagree)
        .map(|index| AgreementObservation {
            target_id: format!("clm_{index}"),
            decision: FirstPartyDecision::Positive,
            decided_at: day(100.0),
            instance_stance: if index < agree {
                Stance::Positive
            } else {
                Stance::Negative
            },
            stance_received_at: day(99.0),
        })
        .collect()
}

#[test]
fn the_instance_trust_table_of_section_2_10() {
    let params = TrustParameters::default();
    let table = [
        (0, 0, 0.500, 0.500),
        (10, 0, 0.750, 0.600),
        (40, 0, 0.900, 0.660),
        (100, 0, 0.955, 0.682),
        (10, 5, 0.500, 0.500),
        (0, 5, 0.250, 0.250),
        (0, 20, 0.100, 0.100),
    ];
    for (agree, disagree, agreement, trust) in table {
        let result = instance_trust(&standard(), &observations(agree, disagree), day(100.0), &params);
        let label = format!("{agree}/{disagree}");
        assert_eq!(
            (result.agreements, result.disagreements),
            (agree as u32, disagree as u32)
        );
        assert_printed(result.agreement, agreement, 3, &format!("{label} A"));
        assert_printed(result.unquantised, trust, 3, &format!("{label} t"));
        assert_printed(
            result.trust,
            (trust * 100.0).round() / 100.0,
            9,
            &format!("{label} quantised t"),
        );
    }
    // "0/20 → discount bound then 0.22 units".
    let distrusted = instance_trust(&standard(), &observations(0, 20), day(100.0), &params);
    assert_printed(
        params.prior_weight * distrusted.trust / (1.0 - distrusted.trust),
        0.22,
        2,
        "bound",
    );
    assert_eq!(
        instance_trust(&standard(), &observations(100, 0), day(100.0), &params).trust,
        0.68
    );
}

#[test]
fn only_stances_received_before_the_decision_count() {
    let params = TrustParameters::default();
    let mut late = observations(10, 0);
    for observation in &mut late {
        observation.stance_received_at = day(101.0);
    }
    let result = instance_trust(&standard(), &late, day(100.0), &params);
    assert_eq!((result.agreements, result.disagreements), (0, 0));
    assert_eq!(result.trust, 0.5);
    // One event per (instance, target): repeated observations of one target count once.
    let mut repeated = observations(1, 0);
    for _ in 0..20 {
        repeated.push(repeated[0].clone());
    }
    assert_eq!(
        instance_trust(&standard(), &repeated, day(100.0), &params).agreements,
        1
    );
    // Neutral stances give no event.
    let mut neutral = observations(5, 0);
    for observation in &mut neutral {
        observation.instance_stance = Stance::Neutral;
    }
    assert_eq!(instance_trust(&standard(), &neutral, day(100.0), &params).agreements, 0);
}

#[test]
fn agreement_decays_back_toward_neutral_and_admin_settings_bound_it() {
    let params = TrustParameters::default();
    // Ten agreements 90 days old count as five: A = 10/15, t = 0.5 + 0.2·(1/3).
    let aged = instance_trust(&standard(), &observations(10, 0), day(190.0), &params);
    assert_printed(aged.agreement, 10.0 / 15.0, 12, "decayed A");
    assert_eq!(aged.trust, 0.57);
    let blocked = InstanceTrustSetting {
        level: AdminTrustLevel::Blocked,
        pinned: None,
    };
    assert_eq!(
        instance_trust(&blocked, &observations(100, 0), day(100.0), &params).trust,
        0.0
    );
    let quarantined = InstanceTrustSetting {
        level: AdminTrustLevel::Quarantine,
        pinned: None,
    };
    assert_eq!(
        instance_trust(&quarantined, &observations(100, 0), day(100.0), &params).trust,
        0.0
    );
    let high = InstanceTrustSetting {
        level: AdminTrustLevel::High,
        pinned: None,
    };
    let high_trust = instance_trust(&high, &observations(10_000, 0), day(100.0), &params);
    assert_printed(high_trust.ceiling, 0.9, 12, "ceiling of a high peer");
    assert!(high_trust.trust <= 0.9);
    let pinned = InstanceTrustSetting {
        level: AdminTrustLevel::Low,
        pinned: Some(0.42),
    };
    let pinned_trust = instance_trust(&pinned, &observations(0, 50), day(100.0), &params);
    assert!(pinned_trust.pinned);
    assert_eq!(pinned_trust.trust, 0.42);
    // §2.15: a pin is used as given (not quantised), clamped to [0, 0.9].
    for (pin, used) in [(0.425, 0.425), (1.5, 0.9), (-0.2, 0.0)] {
        let setting = InstanceTrustSetting {
            level: AdminTrustLevel::Standard,
            pinned: Some(pin),
        };
        assert_eq!(
            instance_trust(&setting, &[], day(100.0), &params).trust,
            used,
            "pin {pin}"
        );
    }
    // §2.15: a block and quarantine win over a pin.
    for level in [AdminTrustLevel::Blocked, AdminTrustLevel::Quarantine] {
        let pinned_but_blocked = InstanceTrustSetting {
            level,
            pinned: Some(0.8),
        };
        let computed = instance_trust(&pinned_but_blocked, &observations(100, 0), day(100.0), &params);
        assert_eq!(computed.trust, 0.0, "{level:?} with a pin");
        assert!(!computed.pinned, "{level:?}: the pin did not decide");
    }
    // The order of observations does not matter (unlike the seed's additive rule).
    let mut mixed = observations(12, 5);
    let forward = instance_trust(&standard(), &mixed, day(100.0), &params);
    mixed.reverse();
    assert_eq!(instance_trust(&standard(), &mixed, day(100.0), &params), forward);
}

fn reputation_observations(agree: usize, disagree: usize) -> Vec<ReputationObservation> {
    (0..agree + disagree)
        .map(|index| ReputationObservation {
            target_id: format!("clm_{index}"),
            stance: if index < agree {
                Stance::Positive
            } else {
                Stance::Negative
            },
            recorded_at: day(10.0),
            decision: FirstPartyDecision::Positive,
            decided_at: day(20.0),
            target_authored_by_controller: false,
        })
        .collect()
}

#[test]
fn reputation_is_bounded_and_new_controllers_start_at_one() {
    let params = TrustParameters::default();
    assert_eq!(controller_reputation(&[], day(20.0), &params).reputation, 1.0);
    let trusted = controller_reputation(&reputation_observations(1_000, 0), day(20.0), &params);
    assert_eq!(trusted.reputation, 1.25);
    let distrusted = controller_reputation(&reputation_observations(0, 1_000), day(20.0), &params);
    assert_eq!(distrusted.reputation, 0.5);
    for (agree, disagree) in [(0, 0), (3, 1), (10, 10), (50, 3), (2, 40)] {
        let result = controller_reputation(&reputation_observations(agree, disagree), day(20.0), &params);
        assert!((0.5..=1.25).contains(&result.reputation));
        assert_printed(
            result.reputation / 0.05,
            (result.reputation / 0.05).round(),
            9,
            "quantised to 0.05",
        );
    }
    // A = (10 + 5)/(10 + 0 + 10) = 0.75 → ρ = 1.25.
    assert_printed(
        controller_reputation(&reputation_observations(10, 0), day(20.0), &params).unquantised,
        1.25,
        12,
        "ρ",
    );
    // A = (5 + 5)/(5 + 5 + 10) = 0.5 → ρ = 1.0.
    assert_printed(
        controller_reputation(&reputation_observations(5, 5), day(20.0), &params).unquantised,
        1.0,
        12,
        "ρ",
    );
}

#[test]
fn only_valid_observations_shape_reputation() {
    let params = TrustParameters::default();
    let mut after_decision = reputation_observations(0, 10);
    for observation in &mut after_decision {
        observation.recorded_at = day(25.0);
    }
    assert_eq!(
        controller_reputation(&after_decision, day(30.0), &params).reputation,
        1.0
    );
    let mut own_targets = reputation_observations(10, 0);
    for observation in &mut own_targets {
        observation.target_authored_by_controller = true;
    }
    assert_eq!(controller_reputation(&own_targets, day(30.0), &params).reputation, 1.0);
    // Observations decay with a 180-day half-life: ten disagreements 180 days old count as five.
    let aged = controller_reputation(&reputation_observations(0, 10), day(200.0), &params);
    assert_printed(aged.disagreement_mass, 5.0, 12, "decayed disagreements");
    assert_printed(aged.agreement, 5.0 / 15.0, 12, "A");
}
