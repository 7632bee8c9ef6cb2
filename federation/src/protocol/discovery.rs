//! Discovery documents: WebFinger (RFC 7033) and NodeInfo 2.1.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The NodeInfo 2.1 schema's `rel`.
pub const NODEINFO_21_REL: &str = "http://nodeinfo.diaspora.software/ns/schema/2.1";
/// The NodeInfo 2.1 profile's media type.
pub const NODEINFO_21_MEDIA_TYPE: &str =
    "application/json; profile=\"http://nodeinfo.diaspora.software/ns/schema/2.1#\"";
/// The WebFinger media type.
pub const JRD_MEDIA_TYPE: &str = "application/jrd+json";

/// A WebFinger resource descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Jrd {
    /// The resource asked about, e.g. `acct:ai_01j…@alpha.example`.
    pub subject: String,
    /// Other URIs of the same resource.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Links, among them `self` to the ActivityStreams document.
    pub links: Vec<JrdLink>,
}

/// One link of a descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JrdLink {
    /// The relation, e.g. `self`.
    pub rel: String,
    /// The media type of the target.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The target.
    pub href: String,
}

/// `/.well-known/nodeinfo`: where the NodeInfo documents are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfoLinks {
    /// One link per schema version.
    pub links: Vec<JrdLink>,
}

/// A NodeInfo 2.1 document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    /// `2.1`.
    pub version: String,
    /// The software.
    pub software: NodeInfoSoftware,
    /// `["activitypub"]`.
    pub protocols: Vec<String>,
    /// Third-party services (none).
    pub services: NodeInfoServices,
    /// Always false: accounts are made by the admin.
    pub open_registrations: bool,
    /// Usage figures.
    pub usage: NodeInfoUsage,
    /// Free-form metadata: the realm and the Inter-AI protocol versions.
    pub metadata: Value,
}

/// NodeInfo's software block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfoSoftware {
    /// `interai`.
    pub name: String,
    /// The version.
    pub version: String,
    /// Where the source lives, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

/// NodeInfo's services block.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeInfoServices {
    /// Inbound services.
    pub inbound: Vec<String>,
    /// Outbound services.
    pub outbound: Vec<String>,
}

/// NodeInfo's usage block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfoUsage {
    /// Actors.
    pub users: NodeInfoUsers,
    /// Content items of this realm.
    pub local_posts: u64,
}

/// NodeInfo's user counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfoUsers {
    /// All actors of the realm.
    pub total: u64,
}
