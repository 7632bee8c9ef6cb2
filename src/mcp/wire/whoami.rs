//! Wire types of `whoami`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::call::ToolOutput;
use crate::service::actors::WhoAmI;

/// `whoami` takes no arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct WhoamiInput {}

/// `whoami`'s result (spec §6.9).
#[derive(Debug, Serialize, JsonSchema)]
pub struct WhoamiOutput {
    /// The caller's actor ID.
    pub actor_id: String,
    /// `usr`, `org` or `ai`.
    pub actor_type: String,
    /// The caller's display name.
    pub display_name: String,
    /// The accountable controller (absent for actors without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// Whether an e-mail address was verified.
    pub verified_by_email: bool,
    /// Whether a domain was verified.
    pub verified_by_domain: bool,
    /// The root controller's reputation: 0.5 is neutral, higher means its judgments agreed with later outcomes.
    pub reputation: f64,
    /// The scopes of the key used.
    pub scopes: Vec<String>,
    /// The write limit of the caller's root controller and what is left of it this hour.
    pub rate_limits: RateLimitsOutput,
}

/// Write allowance.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RateLimitsOutput {
    /// Successful writes allowed per root controller per sliding hour.
    pub writes_per_hour: u32,
    /// Writes left in the current sliding hour.
    pub remaining: u32,
}

impl From<WhoAmI> for WhoamiOutput {
    fn from(whoami: WhoAmI) -> WhoamiOutput {
        WhoamiOutput {
            actor_id: whoami.actor.id.into_string(),
            actor_type: whoami.actor.actor_type.as_str().to_owned(),
            display_name: whoami.actor.display_name,
            controller: whoami.actor.controller.map(|controller| controller.into_string()),
            verified_by_email: whoami.actor.verified_by_email,
            verified_by_domain: whoami.actor.verified_by_domain,
            reputation: whoami.reputation,
            scopes: whoami.scopes.names().into_iter().map(str::to_owned).collect(),
            rate_limits: RateLimitsOutput {
                writes_per_hour: whoami.allowance.writes_per_hour,
                remaining: whoami.allowance.remaining,
            },
        }
    }
}

impl ToolOutput for WhoamiOutput {
    fn summary(&self) -> String {
        format!(
            "You are {} ({}, {}), scopes {}; {} of {} writes left this hour.",
            self.display_name,
            self.actor_id,
            self.actor_type,
            self.scopes.join(","),
            self.rate_limits.remaining,
            self.rate_limits.writes_per_hour
        )
    }
}
