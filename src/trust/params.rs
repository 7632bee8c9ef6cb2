//! The parameters of trust-v1 (§2.14 of the spec), their canonical text rendering and a stable parameter hash.

use chrono::{DateTime, Utc};

use super::evidence::ControllerStanding;

/// The model version reported with every assessment and explanation.
pub const MODEL_VERSION: &str = "trust-v1";

/// Who may cast a strong refutation (§2.2): a first-party controller with reputation at least `min_reputation` and
/// either at least `min_prior_valid_records` earlier valid evidence records or an account at least
/// `min_account_age_days` old when the record was made. The reference numbers of the spec set every threshold to zero.
#[derive(Debug, Clone, PartialEq)]
pub struct StrongRefutationGate {
    pub min_reputation: f64,
    pub min_prior_valid_records: u32,
    pub min_account_age_days: f64,
}

impl Default for StrongRefutationGate {
    fn default() -> Self {
        StrongRefutationGate {
            min_reputation: 0.75,
            min_prior_valid_records: 5,
            min_account_age_days: 14.0,
        }
    }
}

impl StrongRefutationGate {
    /// The gate with every threshold at zero: every first-party controller is eligible. The spec's reference
    /// numbers (§2.8 timeline, §3 properties) are computed with this gate.
    pub fn open() -> Self {
        StrongRefutationGate {
            min_reputation: 0.0,
            min_prior_valid_records: 0,
            min_account_age_days: 0.0,
        }
    }

    /// Whether a record made at `recorded_at` by a controller with this standing may count as a strong
    /// refutation. Eligibility is a pure function of the record, so adding records in any order gives the same result.
    pub fn is_eligible(&self, standing: &ControllerStanding, recorded_at: DateTime<Utc>) -> bool {
        let account_age_days = (recorded_at - standing.account_created_at).num_milliseconds() as f64 / 86_400_000.0;
        standing.reputation >= self.min_reputation
            && (standing.prior_valid_records >= self.min_prior_valid_records
                || account_age_days >= self.min_account_age_days)
    }
}

/// Every number the trust engine uses. `Default` gives the §2.14 values; the names follow the spec's symbols in
/// their doc comments.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustParameters {
    /// W: the prior weight (pseudo-count) of the Beta prior and of subjective-logic discounting.
    pub prior_weight: f64,
    /// a: the base rate of the prior.
    pub base_rate: f64,
    /// C_CTRL: the most current (decayed) evidence one root controller contributes.
    pub controller_cap: f64,
    /// C_INST: the most discounted evidence one remote instance contributes.
    pub instance_cap: f64,
    /// h: the half-life of evidence mass in days; `f64::INFINITY` disables decay.
    pub half_life_days: f64,
    /// Weight of a usage report with `real_world_use = true`.
    pub real_world_usage_weight: f64,
    /// Weight of a usage report made in a test.
    pub test_usage_weight: f64,
    /// Base weight of a review before confidence, grounding and reputation.
    pub review_base_weight: f64,
    /// Grounding multiplier for a review grounded in the reviewer's own test usage.
    pub grounding_own_test_usage: f64,
    /// Grounding multiplier for a review grounded in the reviewer's own real-world usage.
    pub grounding_own_real_world_usage: f64,
    /// Lower clamp of the reputation multiplier ρ.
    pub reputation_min: f64,
    /// Upper clamp of the reputation multiplier ρ.
    pub reputation_max: f64,
    /// t_max: the highest trust any remote instance can have.
    pub max_instance_trust: f64,
    /// Lower quantile of the reported interval.
    pub lower_quantile: f64,
    /// Upper quantile of the reported interval.
    pub upper_quantile: f64,
    /// A `contradicted` or `false` review is a strong refutation from this confidence on (when grounded).
    pub strong_refutation_min_confidence: f64,
    /// An `outdated` review emits an outdated signal from this confidence on.
    pub outdated_signal_min_confidence: f64,
    /// Who may refute strongly.
    pub strong_refutation_gate: StrongRefutationGate,
    /// K_REF: independent strong refuters that prove a target incorrect.
    pub refuters_for_proof: u32,
    /// Later real-world successes (distinct controllers) that contest a proof (R2).
    pub successes_to_contest_proof: u32,
    /// Later real-world successes (distinct controllers) that answer a single refutation (R7) or an outdated signal.
    pub successes_to_answer_refutation: u32,
    /// Parties with an outdated signal needed for the outdated rule.
    pub outdated_min_parties: u32,
    /// R10: minimum value for `supported`.
    pub supported_min_value: f64,
    /// R10: minimum evidence mass R + S for `supported`.
    pub supported_min_mass: f64,
    /// R10: minimum independent confirmations for `supported`.
    pub supported_min_confirmations: u32,
    /// R9: minimum lower bound for `high_confidence`.
    pub high_confidence_min_lower_bound: f64,
    /// R9: minimum independent confirmations for `high_confidence`.
    pub high_confidence_min_confirmations: u32,
    /// R9: minimum real-world confirmations for `high_confidence`.
    pub high_confidence_min_real_world: u32,
    /// R8: minimum disbelief mass S.
    pub disputed_min_disbelief_mass: f64,
    /// R8: minimum share S / (R + S).
    pub disputed_min_disbelief_share: f64,
    /// R8: contradicting remote instances that can dispute without a first-party contradiction.
    pub disputed_min_remote_instances: u32,
    /// R5: the upper bound below which enough first-party contradictions make a target incorrect.
    pub statistical_incorrect_max_upper_bound: f64,
    /// R5: first-party contradictions needed.
    pub statistical_incorrect_min_contradictions: u32,
    /// C0: pseudo-raters of the rating prior.
    pub rating_prior_raters: f64,
    /// k_min: independent raters a context needs before it is reported on its own.
    pub rating_min_context_raters: u32,
    /// K: pseudo-count of instance agreement.
    pub agreement_pseudo_count: f64,
    /// Half-life of agreement events in days.
    pub agreement_half_life_days: f64,
    /// How much more a disagreement counts than an agreement.
    pub disagreement_weight: f64,
    /// How far observed agreement can lift an instance above its admin base.
    pub instance_trust_ceiling_bonus: f64,
    /// Instance trust is quantised to this step.
    pub instance_trust_quantum: f64,
    /// Base trust of the admin levels `low`, `standard` and `high`.
    pub admin_level_low: f64,
    pub admin_level_standard: f64,
    pub admin_level_high: f64,
    /// Pseudo-agreements of actor reputation (the 5 of (g + 5) / (g + b + 10)).
    pub reputation_prior_agreements: f64,
    /// Pseudo-observations of actor reputation (the 10 of (g + 5) / (g + b + 10)).
    pub reputation_prior_observations: f64,
    /// Half-life of reputation observations in days.
    pub reputation_half_life_days: f64,
    /// Reputation snapshots are quantised to this step.
    pub reputation_quantum: f64,
}

impl Default for TrustParameters {
    fn default() -> Self {
        TrustParameters {
            prior_weight: 2.0,
            base_rate: 0.5,
            controller_cap: 1.0,
            instance_cap: 3.0,
            half_life_days: 365.0,
            real_world_usage_weight: 1.0,
            test_usage_weight: 0.3,
            review_base_weight: 0.5,
            grounding_own_test_usage: 1.4,
            grounding_own_real_world_usage: 1.8,
            reputation_min: 0.5,
            reputation_max: 1.25,
            max_instance_trust: 0.9,
            lower_quantile: 0.05,
            upper_quantile: 0.95,
            strong_refutation_min_confidence: 0.7,
            outdated_signal_min_confidence: 0.5,
            strong_refutation_gate: StrongRefutationGate::default(),
            refuters_for_proof: 2,
            successes_to_contest_proof: 4,
            successes_to_answer_refutation: 2,
            outdated_min_parties: 2,
            supported_min_value: 0.60,
            supported_min_mass: 0.8,
            supported_min_confirmations: 1,
            high_confidence_min_lower_bound: 0.70,
            high_confidence_min_confirmations: 3,
            high_confidence_min_real_world: 1,
            disputed_min_disbelief_mass: 0.5,
            disputed_min_disbelief_share: 0.25,
            disputed_min_remote_instances: 2,
            statistical_incorrect_max_upper_bound: 0.35,
            statistical_incorrect_min_contradictions: 2,
            rating_prior_raters: 2.0,
            rating_min_context_raters: 3,
            agreement_pseudo_count: 10.0,
            agreement_half_life_days: 90.0,
            disagreement_weight: 2.0,
            instance_trust_ceiling_bonus: 0.2,
            instance_trust_quantum: 0.01,
            admin_level_low: 0.3,
            admin_level_standard: 0.5,
            admin_level_high: 0.7,
            reputation_prior_agreements: 5.0,
            reputation_prior_observations: 10.0,
            reputation_half_life_days: 180.0,
            reputation_quantum: 0.05,
        }
    }
}

impl TrustParameters {
    /// The default parameters with the strong-refutation gate open, as the spec's reference numbers assume.
    pub fn with_open_gate() -> Self {
        TrustParameters {
            strong_refutation_gate: StrongRefutationGate::open(),
            ..TrustParameters::default()
        }
    }

    /// The short human summary shown in explanations, e.g. `W=2,a=0.5,C_CTRL=1,C_INST=3,h=365d,interval=beta-90%`.
    pub fn summary(&self) -> String {
        let coverage = ((self.upper_quantile - self.lower_quantile) * 100.0).round();
        format!(
            "W={},a={},C_CTRL={},C_INST={},h={}d,interval=beta-{}%",
            self.prior_weight, self.base_rate, self.controller_cap, self.instance_cap, self.half_life_days, coverage
        )
    }

    /// Every parameter as `name=value`, in a fixed order, joined by `,`. Floats use Rust's shortest round-trip
    /// rendering, so equal parameters always give the same text and any change gives a different one.
    pub fn canonical_text(&self) -> String {
        let gate = &self.strong_refutation_gate;
        let fields: [(&str, String); 50] = [
            ("model", MODEL_VERSION.to_string()),
            ("prior_weight", self.prior_weight.to_string()),
            ("base_rate", self.base_rate.to_string()),
            ("controller_cap", self.controller_cap.to_string()),
            ("instance_cap", self.instance_cap.to_string()),
            ("half_life_days", self.half_life_days.to_string()),
            ("real_world_usage_weight", self.real_world_usage_weight.to_string()),
            ("test_usage_weight", self.test_usage_weight.to_string()),
            ("review_base_weight", self.review_base_weight.to_string()),
            ("grounding_own_test_usage", self.grounding_own_test_usage.to_string()),
            (
                "grounding_own_real_world_usage",
                self.grounding_own_real_world_usage.to_string(),
            ),
            ("reputation_min", self.reputation_min.to_string()),
            ("reputation_max", self.reputation_max.to_string()),
            ("max_instance_trust", self.max_instance_trust.to_string()),
            ("lower_quantile", self.lower_quantile.to_string()),
            ("upper_quantile", self.upper_quantile.to_string()),
            (
                "strong_refutation_min_confidence",
                self.strong_refutation_min_confidence.to_string(),
            ),
            (
                "outdated_signal_min_confidence",
                self.outdated_signal_min_confidence.to_string(),
            ),
            ("gate_min_reputation", gate.min_reputation.to_string()),
            ("gate_min_prior_valid_records", gate.min_prior_valid_records.to_string()),
            ("gate_min_account_age_days", gate.min_account_age_days.to_string()),
            ("refuters_for_proof", self.refuters_for_proof.to_string()),
            (
                "successes_to_contest_proof",
                self.successes_to_contest_proof.to_string(),
            ),
            (
                "successes_to_answer_refutation",
                self.successes_to_answer_refutation.to_string(),
            ),
            ("outdated_min_parties", self.outdated_min_parties.to_string()),
            ("supported_min_value", self.supported_min_value.to_string()),
            ("supported_min_mass", self.supported_min_mass.to_string()),
            (
                "supported_min_confirmations",
                self.supported_min_confirmations.to_string(),
            ),
            (
                "high_confidence_min_lower_bound",
                self.high_confidence_min_lower_bound.to_string(),
            ),
            (
                "high_confidence_min_confirmations",
                self.high_confidence_min_confirmations.to_string(),
            ),
            (
                "high_confidence_min_real_world",
                self.high_confidence_min_real_world.to_string(),
            ),
            (
                "disputed_min_disbelief_mass",
                self.disputed_min_disbelief_mass.to_string(),
            ),
            (
                "disputed_min_disbelief_share",
                self.disputed_min_disbelief_share.to_string(),
            ),
            (
                "disputed_min_remote_instances",
                self.disputed_min_remote_instances.to_string(),
            ),
            (
                "statistical_incorrect_max_upper_bound",
                self.statistical_incorrect_max_upper_bound.to_string(),
            ),
            (
                "statistical_incorrect_min_contradictions",
                self.statistical_incorrect_min_contradictions.to_string(),
            ),
            ("rating_prior_raters", self.rating_prior_raters.to_string()),
            ("rating_min_context_raters", self.rating_min_context_raters.to_string()),
            ("agreement_pseudo_count", self.agreement_pseudo_count.to_string()),
            ("agreement_half_life_days", self.agreement_half_life_days.to_string()),
            ("disagreement_weight", self.disagreement_weight.to_string()),
            (
                "instance_trust_ceiling_bonus",
                self.instance_trust_ceiling_bonus.to_string(),
            ),
            ("instance_trust_quantum", self.instance_trust_quantum.to_string()),
            ("admin_level_low", self.admin_level_low.to_string()),
            ("admin_level_standard", self.admin_level_standard.to_string()),
            ("admin_level_high", self.admin_level_high.to_string()),
            (
                "reputation_prior_agreements",
                self.reputation_prior_agreements.to_string(),
            ),
            (
                "reputation_prior_observations",
                self.reputation_prior_observations.to_string(),
            ),
            ("reputation_half_life_days", self.reputation_half_life_days.to_string()),
            ("reputation_quantum", self.reputation_quantum.to_string()),
        ];
        let rendered: Vec<String> = fields.iter().map(|(name, value)| format!("{name}={value}")).collect();
        rendered.join(",")
    }

    /// A stable identifier of the parameters: FNV-1a 64 of [`TrustParameters::canonical_text`], as 16 hex digits.
    /// It identifies a parameter set in explanations and caches; it is not a security property.
    pub fn parameter_hash(&self) -> String {
        format!("{:016x}", fnv1a_64(self.canonical_text().as_bytes()))
    }
}

/// FNV-1a, 64-bit: a tiny, well-known, stable hash, written out so that the parameter hash needs no dependency.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET_BASIS, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn summary_matches_the_example_explanation() {
        assert_eq!(
            TrustParameters::default().summary(),
            "W=2,a=0.5,C_CTRL=1,C_INST=3,h=365d,interval=beta-90%"
        );
    }

    #[test]
    fn parameter_hash_is_stable_and_sensitive_to_every_change() {
        let defaults = TrustParameters::default();
        assert_eq!(defaults.parameter_hash(), TrustParameters::default().parameter_hash());
        assert_eq!(defaults.parameter_hash().len(), 16);
        let changed = TrustParameters {
            half_life_days: 90.0,
            ..TrustParameters::default()
        };
        assert_ne!(defaults.parameter_hash(), changed.parameter_hash());
        assert_ne!(
            defaults.parameter_hash(),
            TrustParameters::with_open_gate().parameter_hash()
        );
    }
}
