//! The decayed agreement tally that instance trust (§2.10) and actor reputation (§2.11) both keep: how often a
//! party's stance agreed or disagreed with a first-party-only decision, each event weighed by the decision's age.
//!
//! The two callers choose which observations are valid (their rules differ) and their priors; the tally only counts,
//! in the order it is given events, so that the sums and therefore the trust values stay the same bytes.

use chrono::{DateTime, Utc};

use super::evidence::Stance;
use super::fixed_point::{days_between, decay_factor};
use crate::domain::TrustStatus;

/// A decided first-party-only status: positive for supported/high_confidence, negative for incorrect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FirstPartyDecision {
    Positive,
    Negative,
}

impl FirstPartyDecision {
    /// The decision a status stands for, if any (other statuses give no event).
    pub fn from_status(status: TrustStatus) -> Option<FirstPartyDecision> {
        match status {
            TrustStatus::Supported | TrustStatus::HighConfidence => Some(FirstPartyDecision::Positive),
            TrustStatus::Incorrect => Some(FirstPartyDecision::Negative),
            _ => None,
        }
    }

    /// Whether a stance agrees with this decision (`None` for a neutral stance).
    pub fn agrees_with(self, stance: Stance) -> Option<bool> {
        match stance {
            Stance::Positive => Some(self == FirstPartyDecision::Positive),
            Stance::Negative => Some(self == FirstPartyDecision::Negative),
            Stance::Neutral => None,
        }
    }
}

/// Agreement and disagreement events counted at `now`: their numbers, and their masses g and b, where each event
/// weighs 2^(−age/h) with its decision's age and the half-life h.
#[derive(Debug, Clone, PartialEq)]
pub struct AgreementTally {
    now: DateTime<Utc>,
    half_life_days: f64,
    agreements: u32,
    disagreements: u32,
    agreement_mass: f64,
    disagreement_mass: f64,
}

impl AgreementTally {
    /// An empty tally read at `now`, whose events lose half their weight every `half_life_days` (infinite: never).
    pub fn new(now: DateTime<Utc>, half_life_days: f64) -> AgreementTally {
        AgreementTally {
            now,
            half_life_days,
            agreements: 0,
            disagreements: 0,
            agreement_mass: 0.0,
            disagreement_mass: 0.0,
        }
    }

    /// Counts one event: `stance` against `decision`, decided at `decided_at`. A neutral stance neither agrees nor
    /// disagrees and counts nothing; the answer says whether the event counted.
    pub fn record(&mut self, decision: FirstPartyDecision, stance: Stance, decided_at: DateTime<Utc>) -> bool {
        let Some(agrees) = decision.agrees_with(stance) else {
            return false;
        };
        let weight = decay_factor(days_between(decided_at, self.now), self.half_life_days);
        if agrees {
            self.agreements += 1;
            self.agreement_mass += weight;
        } else {
            self.disagreements += 1;
            self.disagreement_mass += weight;
        }
        true
    }

    /// Events that agreed.
    pub fn agreements(&self) -> u32 {
        self.agreements
    }

    /// Events that disagreed.
    pub fn disagreements(&self) -> u32 {
        self.disagreements
    }

    /// g: the decayed count of agreements.
    pub fn agreement_mass(&self) -> f64 {
        self.agreement_mass
    }

    /// b: the decayed count of disagreements.
    pub fn disagreement_mass(&self) -> f64 {
        self.disagreement_mass
    }

    /// The smoothed share of agreement, (g + prior_agreements) / (g + disagreement_weight·b + prior_observations):
    /// an empty tally gives the prior's share, and a disagreement weighs `disagreement_weight` agreements.
    pub fn agreement(&self, prior_agreements: f64, prior_observations: f64, disagreement_weight: f64) -> f64 {
        (self.agreement_mass + prior_agreements)
            / (self.agreement_mass + disagreement_weight * self.disagreement_mass + prior_observations)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;

    fn day(days: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).single().expect("valid date") + Duration::days(days)
    }

    #[test]
    fn statuses_map_to_decisions_and_stances_agree_or_not() {
        assert_eq!(
            FirstPartyDecision::from_status(TrustStatus::HighConfidence),
            Some(FirstPartyDecision::Positive)
        );
        assert_eq!(
            FirstPartyDecision::from_status(TrustStatus::Incorrect),
            Some(FirstPartyDecision::Negative)
        );
        assert_eq!(FirstPartyDecision::from_status(TrustStatus::Unverified), None);
        assert_eq!(FirstPartyDecision::Negative.agrees_with(Stance::Negative), Some(true));
        assert_eq!(FirstPartyDecision::Negative.agrees_with(Stance::Positive), Some(false));
        assert_eq!(FirstPartyDecision::Positive.agrees_with(Stance::Neutral), None);
    }

    #[test]
    fn an_empty_tally_gives_the_priors_share() {
        let tally = AgreementTally::new(day(0), 90.0);
        assert_eq!((tally.agreements(), tally.disagreements()), (0, 0));
        assert_eq!(tally.agreement(5.0, 10.0, 1.0), 0.5);
        assert_eq!(tally.agreement(1.0, 4.0, 2.0), 0.25);
    }

    #[test]
    fn a_neutral_stance_counts_nothing() {
        let mut tally = AgreementTally::new(day(10), 90.0);
        assert!(!tally.record(FirstPartyDecision::Positive, Stance::Neutral, day(0)));
        assert_eq!(tally, AgreementTally::new(day(10), 90.0));
    }

    #[test]
    fn events_weigh_half_per_half_life_of_their_decisions_age() {
        let mut tally = AgreementTally::new(day(180), 90.0);
        assert!(tally.record(FirstPartyDecision::Positive, Stance::Positive, day(180)));
        assert!(tally.record(FirstPartyDecision::Positive, Stance::Positive, day(90)));
        assert!(tally.record(FirstPartyDecision::Negative, Stance::Positive, day(0)));
        assert_eq!((tally.agreements(), tally.disagreements()), (2, 1));
        assert_eq!(tally.agreement_mass(), 1.5);
        assert_eq!(tally.disagreement_mass(), 0.25);
        // (1.5 + 1) / (1.5 + 2·0.25 + 2) = 2.5 / 4.
        assert_eq!(tally.agreement(1.0, 2.0, 2.0), 0.625);
    }

    #[test]
    fn an_infinite_half_life_never_decays() {
        let mut tally = AgreementTally::new(day(3650), f64::INFINITY);
        tally.record(FirstPartyDecision::Negative, Stance::Negative, day(0));
        tally.record(FirstPartyDecision::Positive, Stance::Negative, day(0));
        assert_eq!((tally.agreement_mass(), tally.disagreement_mass()), (1.0, 1.0));
        assert_eq!(tally.agreement(0.0, 0.0, 1.0), 0.5);
    }
}
