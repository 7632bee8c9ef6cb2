//! Beta quantiles for the reported intervals (§2.6): statrs' regularized incomplete beta and its inverse.
//!
//! statrs' `inv_beta_reg` (AS 109: a closed-form start refined by Newton steps) is checked in the tests below against
//! a plain bisection of `beta_reg`, to 1e-10, over the parameter range the engine produces.

use statrs::function::beta::inv_beta_reg;

/// The `probability` quantile of Beta(alpha, beta). Both shapes must be positive; the engine's shapes are always at
/// least the prior's W·a and W·(1 − a).
pub fn beta_quantile(alpha: f64, beta: f64, probability: f64) -> f64 {
    inv_beta_reg(alpha, beta, probability)
}

/// The (lower, upper) quantiles of Beta(alpha, beta).
pub fn beta_interval(alpha: f64, beta: f64, lower_probability: f64, upper_probability: f64) -> (f64, f64) {
    (
        beta_quantile(alpha, beta, lower_probability),
        beta_quantile(alpha, beta, upper_probability),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::function::beta::beta_reg;

    /// The quantile by 200 bisection steps of the regularized incomplete beta: slow, obviously correct.
    fn bisection_quantile(alpha: f64, beta: f64, probability: f64) -> f64 {
        let (mut low, mut high) = (0.0f64, 1.0f64);
        for _ in 0..200 {
            let middle = 0.5 * (low + high);
            if beta_reg(alpha, beta, middle) < probability {
                low = middle;
            } else {
                high = middle;
            }
        }
        0.5 * (low + high)
    }

    #[test]
    fn statrs_inverse_agrees_with_bisection() {
        let shapes = [
            1.0, 1.2, 1.5, 2.0, 3.3, 5.0, 7.9, 12.7, 20.0, 45.5, 100.0, 1000.0, 25000.0,
        ];
        for &alpha in &shapes {
            for &beta in &shapes {
                for probability in [0.05, 0.95] {
                    let fast = beta_quantile(alpha, beta, probability);
                    let slow = bisection_quantile(alpha, beta, probability);
                    assert!(
                        (fast - slow).abs() < 1e-10,
                        "Beta({alpha}, {beta}) q{probability}: {fast} vs {slow}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_spec_table_of_section_2_6_holds() {
        // Evidence 1/1, 8/8, 9/10 and 0.5/0.5 with the Beta(1, 1) prior.
        let cases = [
            (1.0, 0.0, 0.224, 0.975),
            (8.0, 0.0, 0.717, 0.994),
            (9.0, 1.0, 0.636, 0.967),
            (0.5, 0.0, 0.136, 0.966),
        ];
        for (successes, failures, lower, upper) in cases {
            let (low, high) = beta_interval(1.0 + successes, 1.0 + failures, 0.05, 0.95);
            assert!((low - lower).abs() < 5e-4, "{successes}/{failures}: lower {low}");
            assert!((high - upper).abs() < 5e-4, "{successes}/{failures}: upper {high}");
        }
    }
}
