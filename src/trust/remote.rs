//! Remote evidence (§2.5): the instance-trust table read at evaluation time and the subjective-logic discount λ_I with
//! the per-instance cap.
//!
//! Nothing stored in a target state depends on instance trust; it is applied at read time, so a trust change is
//! correct on the next read without touching any state.

use std::collections::BTreeMap;

use super::params::TrustParameters;

/// The trust this instance assigns directly to each origin instance, t ∈ [0, t_max]. Unknown origins have t = 0,
/// which quarantines their evidence. The epoch names the batch that produced the table and is reported in
/// explanations.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InstanceTrustTable {
    trust_by_origin: BTreeMap<String, f64>,
    epoch: String,
}

impl InstanceTrustTable {
    /// An empty table (every origin unknown, so all remote evidence is quarantined).
    pub fn new(epoch: impl Into<String>) -> Self {
        InstanceTrustTable {
            trust_by_origin: BTreeMap::new(),
            epoch: epoch.into(),
        }
    }

    /// The table with `origin` set to `trust`.
    pub fn with(mut self, origin: impl Into<String>, trust: f64) -> Self {
        self.set(origin, trust);
        self
    }

    /// Sets the trust of `origin`. Non-finite values are stored as 0 so that a bad input quarantines rather than
    /// poisons.
    pub fn set(&mut self, origin: impl Into<String>, trust: f64) {
        let trust = if trust.is_finite() { trust } else { 0.0 };
        self.trust_by_origin.insert(origin.into(), trust);
    }

    /// Every origin the table names, with its trust as stored (unclamped), by realm.
    pub fn origins(&self) -> impl Iterator<Item = (&str, f64)> {
        self.trust_by_origin
            .iter()
            .map(|(origin, trust)| (origin.as_str(), *trust))
    }

    /// The epoch label of this table.
    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// t for `origin`, clamped to [0, t_max]; 0 for unknown origins.
    pub fn trust_of(&self, origin: &str, params: &TrustParameters) -> f64 {
        self.trust_by_origin
            .get(origin)
            .copied()
            .unwrap_or(0.0)
            .clamp(0.0, params.max_instance_trust)
    }
}

/// Which bound limits an instance's discounted evidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InstanceBound {
    /// t = 0: the instance's evidence is stored and counted but weighs nothing.
    Quarantined,
    /// The subjective-logic discount λ_I binds; the instance's discounted mass can approach, but never exceed,
    /// `saturation = W·t/(1 − t)`.
    TrustDiscount { saturation: f64 },
    /// The hard per-instance cap C_INST binds.
    InstanceCap { cap: f64 },
}

/// The discount applied to one instance's collapsed evidence (r_I, s_I).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RemoteDiscount {
    /// t_I as used (clamped).
    pub instance_trust: f64,
    /// f_I = min(λ_I, C_INST / m_I): multiply r_I and s_I by this.
    pub discount_factor: f64,
    /// Which bound produced `discount_factor`.
    pub bound: InstanceBound,
}

/// f_I for an instance with trust `instance_trust` and collapsed mass `raw_mass = r_I + s_I` (§2.5):
/// λ_I = W·t/(W + (1 − t)·m_I), f_I = min(λ_I, C_INST/m_I).
pub fn remote_discount(instance_trust: f64, raw_mass: f64, params: &TrustParameters) -> RemoteDiscount {
    let trust = instance_trust.clamp(0.0, params.max_instance_trust);
    if trust <= 0.0 {
        return RemoteDiscount {
            instance_trust: 0.0,
            discount_factor: 0.0,
            bound: InstanceBound::Quarantined,
        };
    }
    let weight = params.prior_weight;
    let lambda = weight * trust / (weight + (1.0 - trust) * raw_mass);
    let saturation = weight * trust / (1.0 - trust);
    if raw_mass > 0.0 && params.instance_cap / raw_mass < lambda {
        RemoteDiscount {
            instance_trust: trust,
            discount_factor: params.instance_cap / raw_mass,
            bound: InstanceBound::InstanceCap {
                cap: params.instance_cap,
            },
        }
    } else {
        RemoteDiscount {
            instance_trust: trust,
            discount_factor: lambda,
            bound: InstanceBound::TrustDiscount { saturation },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jøsang's probability-sensitive trust discount done in opinion space: evidence → opinion (W = 2),
    /// b' = t·b, d' = t·d, u' = 1 − t(b + d), and back to evidence with r' = W·b'/u'.
    fn discount_in_opinion_space(belief: f64, disbelief: f64, trust: f64) -> (f64, f64) {
        let weight = 2.0;
        let total = belief + disbelief + weight;
        let (b, d) = (belief / total, disbelief / total);
        let (discounted_b, discounted_d) = (trust * b, trust * d);
        let discounted_u = 1.0 - trust * (b + d);
        (
            weight * discounted_b / discounted_u,
            weight * discounted_d / discounted_u,
        )
    }

    #[test]
    fn p19_the_evidence_space_discount_equals_the_opinion_space_discount() {
        let params = TrustParameters {
            max_instance_trust: 1.0,
            instance_cap: f64::INFINITY,
            ..Default::default()
        };
        let cases = [
            ((3.0, 1.0, 0.5), (0.75, 0.25)),
            ((10.0, 0.0, 0.8), (4.0, 0.0)),
            ((0.5, 2.0, 0.3), (0.08, 0.32)),
        ];
        for ((belief, disbelief, trust), (expected_belief, expected_disbelief)) in cases {
            let discount = remote_discount(trust, belief + disbelief, &params);
            let evidence_space = (discount.discount_factor * belief, discount.discount_factor * disbelief);
            let opinion_space = discount_in_opinion_space(belief, disbelief, trust);
            assert!((evidence_space.0 - opinion_space.0).abs() < 1e-12);
            assert!((evidence_space.1 - opinion_space.1).abs() < 1e-12);
            assert!((evidence_space.0 - expected_belief).abs() < 1e-12);
            assert!((evidence_space.1 - expected_disbelief).abs() < 1e-12);
        }
    }

    #[test]
    fn the_discount_saturates_at_w_t_over_one_minus_t_and_the_cap_binds_above_0_6() {
        let params = TrustParameters::default();
        let half = remote_discount(0.5, 1e9, &params);
        assert!((half.discount_factor * 1e9 - 2.0).abs() < 1e-6);
        assert_eq!(half.bound, InstanceBound::TrustDiscount { saturation: 2.0 });
        let low = remote_discount(0.3, 1e9, &params);
        assert!((low.discount_factor * 1e9 - 0.857_142_857).abs() < 1e-6);
        let high = remote_discount(0.9, 1e9, &params);
        assert_eq!(high.bound, InstanceBound::InstanceCap { cap: 3.0 });
        assert!((high.discount_factor * 1e9 - 3.0).abs() < 1e-9);
        assert_eq!(remote_discount(0.0, 10.0, &params).discount_factor, 0.0);
        assert_eq!(remote_discount(0.95, 1e9, &params).instance_trust, 0.9);
    }

    #[test]
    fn unknown_origins_have_zero_trust() {
        let params = TrustParameters::default();
        let table = InstanceTrustTable::new("e1")
            .with("beta.test", 0.5)
            .with("gamma.test", 2.0);
        assert_eq!(table.trust_of("beta.test", &params), 0.5);
        assert_eq!(table.trust_of("gamma.test", &params), 0.9);
        assert_eq!(table.trust_of("delta.test", &params), 0.0);
    }
}
