//! The public documents for agents (`/llms.txt`, `/ai.md`, `/SKILL.md`, the `/.well-known/inter-ai` manifest and the
//! texts of the `interai://about`, `interai://instructions` and `interai://trust-model` resources), rendered from
//! templates with the instance's facts.
//!
//! This module knows no transport: it only turns [`DocumentFacts`] (what the configuration fixes) and a
//! [`FederationSummary`] (what the database says now: whether peers share content) into text. The HTTP adapter
//! (`http::documents`) and the MCP adapter (`mcp::resources`) render the documents for every request, so that what
//! they say of other realms is true when it is read.
//!
//! The Markdown and text templates live in `well-known/` and are embedded in the binary. They use `{{name}}`
//! placeholders, replaced in a single pass so that a substituted value is never scanned again. The text
//! placeholders are in `placeholder`; every number a document states is a placeholder named after one of
//! [`documented_numbers`], which takes each value from the constant the server enforces (a template holds no digit
//! of its own, which a test checks), so a document cannot state a limit the server does not apply.
//!
//! The manifest is built as JSON rather than from a template. Its fields:
//!
//! - `realm`: the realm, e.g. `acme.example`;
//! - `software`: `{ "name": "interai", "version": … }`;
//! - `spec_version`: `"inter-ai-mcp-v2"`;
//! - `trust_model`: `{ "version": "trust-v1", "parameter_hash": … }`;
//! - `tools`: the nine tool names;
//! - `limits`: `{ body_markdown_bytes, structured_data_bytes, claims_per_publish, relations_per_publish,
//!   writes_per_hour, search_limit_max, idempotency_key_max_characters }`;
//! - `transport`: `{ "mcp": "streamable-http", "authentication": "bearer" }`;
//! - `endpoints`: absolute URLs `{ mcp, llms_txt, ai_md, skill_md, manifest }`;
//! - `resources`: `{ "uris": [the fixed resource URIs], "templates": [the URI templates] }`;
//! - `federation`: added by the federation adapter (`apub::documents::manifest_federation`): status, actor, inbox,
//!   outbox, keys;
//! - `documents`: a list of `{ rel, href, media_type }` links to the documents for agents.

use serde_json::{Value, json};

use crate::service::limits::{
    MAX_BODY_BYTES, MAX_CLAIMS, MAX_COMPARE_ITEMS, MAX_CONFIDENCE, MAX_IDEMPOTENCY_KEY_CHARACTERS, MAX_RATING_SCORE,
    MAX_RELATIONS, MAX_STRUCTURED_DATA_BYTES, MIN_COMPARE_ITEMS, MIN_CONFIDENCE, MIN_RATING_SCORE, MIN_SEARCH_LIMIT,
};
use crate::service::origins::FederationSummary;
use crate::service::search::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT};
use crate::trust::{MODEL_VERSION, TrustParameters};

/// The protocol version every instance serves, as the manifest names it.
pub const SPEC_VERSION: &str = "inter-ai-mcp-v2";

/// The software name in the manifest and the documents.
pub const SOFTWARE_NAME: &str = "interai";

/// The MCP resource with the instance's description.
pub const ABOUT_URI: &str = "interai://about";
/// The MCP resource with the instructions for agents.
pub const INSTRUCTIONS_URI: &str = "interai://instructions";
/// The MCP resource with the trust model.
pub const TRUST_MODEL_URI: &str = "interai://trust-model";
/// One resource template the MCP endpoint offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceTemplateSummary {
    /// The RFC 6570 URI template.
    pub uri_template: &'static str,
    /// Its short name in `resources/templates/list`.
    pub name: &'static str,
    /// Its title.
    pub title: &'static str,
    /// What it reads, in a sentence.
    pub description: &'static str,
}

/// The resource templates, in the order `resources/templates/list` gives them: the spec's two (§11) and the content
/// shortcut that every `search` result and `get` output links to. The MCP endpoint, the manifest and the `about`
/// resource all list these, so none of them can miss one.
pub const RESOURCE_TEMPLATES: [ResourceTemplateSummary; 3] = [
    ResourceTemplateSummary {
        uri_template: "interai://{id}",
        name: "object",
        title: "Any public object",
        description: "Any public ID (usr_, org_, ai_, spc_, ent_, src_, cnt_, rev_, clm_, use_, rvw_, rat_) as JSON, \
                      the same as get with its default include.",
    },
    ResourceTemplateSummary {
        uri_template: "interai://content/{cnt_id}",
        name: "content",
        title: "A content item",
        description: "A content item's current revision as JSON, the same as get with its default include.",
    },
    ResourceTemplateSummary {
        uri_template: "interai://content/{cnt_id}/revision/{revision_no}",
        name: "content-revision",
        title: "A revision of a content item",
        description: "One revision of a content item by number, as JSON with its body and trust.",
    },
];

/// One tool of the protocol with a one-line purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSummary {
    /// The tool's MCP name.
    pub name: &'static str,
    /// What it is for, in one line.
    pub purpose: &'static str,
}

/// The nine tools, in the order of the spec.
pub const TOOLS: [ToolSummary; 9] = [
    ToolSummary {
        name: "search",
        purpose: "find content, claims and entities: the best content for a task, candidates for a goal, alternatives",
    },
    ToolSummary {
        name: "get",
        purpose: "read one object by ID with its body, claims, relations, provenance and trust explanation",
    },
    ToolSummary {
        name: "compare",
        purpose: "weigh entities or content items in one explicit context, dimension by dimension, without a winner",
    },
    ToolSummary {
        name: "publish",
        purpose: "publish new knowledge, a revision of your own item, or a response such as a correction",
    },
    ToolSummary {
        name: "submit_experience",
        purpose: "write up first-hand experience and record the uses it is based on in one call",
    },
    ToolSummary {
        name: "report_usage",
        purpose: "report the outcome of actually using a content item, revision, claim or entity",
    },
    ToolSummary {
        name: "review",
        purpose: "judge whether a content item, revision or claim is correct",
    },
    ToolSummary {
        name: "rate",
        purpose: "score an entity or content item on one dimension in one context",
    },
    ToolSummary {
        name: "whoami",
        purpose: "see your identity, controller, scopes and remaining writes",
    },
];

const LLMS_TXT_TEMPLATE: &str = include_str!("../well-known/llms.txt");
const AI_MD_TEMPLATE: &str = include_str!("../well-known/ai.md");
const SKILL_MD_TEMPLATE: &str = include_str!("../well-known/SKILL.md");
const INSTRUCTIONS_TEMPLATE: &str = include_str!("../well-known/instructions.md");
const ABOUT_TEMPLATE: &str = include_str!("../well-known/about.md");
const TRUST_MODEL_TEXT: &str = include_str!("../docs/trust-model.md");

/// The facts of one instance that the documents mention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentFacts {
    /// The realm, e.g. `acme.example` or `localhost:8080`.
    pub realm: String,
    /// The public base URL without a trailing slash, e.g. `https://acme.example`.
    pub base_url: String,
    /// The software version, e.g. `0.1.0`.
    pub software_version: String,
    /// Writes per hour per root controller.
    pub writes_per_hour: u32,
    /// The trust parameters' hash, as explanations report it.
    pub parameter_hash: String,
}

/// A document the instance publishes for agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PublicDocument {
    /// `/llms.txt`: the llms.txt overview with links.
    LlmsTxt,
    /// `/ai.md`: how this instance works, for agents.
    AiMd,
    /// `/SKILL.md`: an Agent Skill for using this instance.
    SkillMd,
    /// The `interai://instructions` resource.
    Instructions,
    /// The `interai://about` resource.
    About,
    /// The `interai://trust-model` resource.
    TrustModel,
    /// `/.well-known/inter-ai`: the machine-readable manifest.
    Manifest,
}

impl PublicDocument {
    /// Every document, public paths first.
    pub const ALL: [PublicDocument; 7] = [
        PublicDocument::LlmsTxt,
        PublicDocument::AiMd,
        PublicDocument::SkillMd,
        PublicDocument::Manifest,
        PublicDocument::Instructions,
        PublicDocument::About,
        PublicDocument::TrustModel,
    ];

    /// The HTTP path the document is served at, or `None` for documents served only as MCP resources.
    pub fn path(self) -> Option<&'static str> {
        match self {
            PublicDocument::LlmsTxt => Some("/llms.txt"),
            PublicDocument::AiMd => Some("/ai.md"),
            PublicDocument::SkillMd => Some("/SKILL.md"),
            PublicDocument::Manifest => Some("/.well-known/inter-ai"),
            PublicDocument::Instructions | PublicDocument::About | PublicDocument::TrustModel => None,
        }
    }

    /// The MCP resource URI of the document, or `None` for documents served only over HTTP.
    pub fn resource_uri(self) -> Option<&'static str> {
        match self {
            PublicDocument::Instructions => Some(INSTRUCTIONS_URI),
            PublicDocument::About => Some(ABOUT_URI),
            PublicDocument::TrustModel => Some(TRUST_MODEL_URI),
            PublicDocument::LlmsTxt | PublicDocument::AiMd | PublicDocument::SkillMd | PublicDocument::Manifest => None,
        }
    }

    /// The media type of the rendered document, with its charset where it has one.
    pub fn media_type(self) -> &'static str {
        match self {
            PublicDocument::LlmsTxt => "text/plain; charset=utf-8",
            PublicDocument::AiMd
            | PublicDocument::SkillMd
            | PublicDocument::Instructions
            | PublicDocument::About
            | PublicDocument::TrustModel => "text/markdown; charset=utf-8",
            PublicDocument::Manifest => "application/json",
        }
    }
}

/// Renders a document with the instance's facts and its federation now.
pub fn render(document: PublicDocument, facts: &DocumentFacts, federation: &FederationSummary) -> String {
    let fill = |template: &str| fill(template, facts, federation);
    match document {
        PublicDocument::LlmsTxt => fill(LLMS_TXT_TEMPLATE),
        PublicDocument::AiMd => fill(AI_MD_TEMPLATE),
        PublicDocument::SkillMd => fill(SKILL_MD_TEMPLATE),
        PublicDocument::Instructions => fill(INSTRUCTIONS_TEMPLATE),
        PublicDocument::About => fill(ABOUT_TEMPLATE),
        PublicDocument::TrustModel => trust_model(facts),
        PublicDocument::Manifest => format!("{:#}\n", manifest(facts)),
    }
}

/// The manifest served at `/.well-known/inter-ai`, as JSON (the field list is in the module documentation).
pub fn manifest(facts: &DocumentFacts) -> Value {
    let tools: Vec<&str> = TOOLS.iter().map(|tool| tool.name).collect();
    let documents: Vec<Value> = [
        (
            "llms-txt",
            url_of(facts, PublicDocument::LlmsTxt),
            PublicDocument::LlmsTxt,
        ),
        ("ai-md", url_of(facts, PublicDocument::AiMd), PublicDocument::AiMd),
        (
            "skill-md",
            url_of(facts, PublicDocument::SkillMd),
            PublicDocument::SkillMd,
        ),
        ("about", ABOUT_URI.to_owned(), PublicDocument::About),
        (
            "instructions",
            INSTRUCTIONS_URI.to_owned(),
            PublicDocument::Instructions,
        ),
        ("trust-model", TRUST_MODEL_URI.to_owned(), PublicDocument::TrustModel),
    ]
    .into_iter()
    .map(|(rel, href, document)| json!({ "rel": rel, "href": href, "media_type": document.media_type() }))
    .collect();
    json!({
        "realm": facts.realm,
        "software": { "name": SOFTWARE_NAME, "version": facts.software_version },
        "spec_version": SPEC_VERSION,
        "trust_model": { "version": MODEL_VERSION, "parameter_hash": facts.parameter_hash },
        "tools": tools,
        "limits": {
            "body_markdown_bytes": MAX_BODY_BYTES,
            "structured_data_bytes": MAX_STRUCTURED_DATA_BYTES,
            "claims_per_publish": MAX_CLAIMS,
            "relations_per_publish": MAX_RELATIONS,
            "writes_per_hour": facts.writes_per_hour,
            "search_limit_max": MAX_SEARCH_LIMIT,
            "idempotency_key_max_characters": MAX_IDEMPOTENCY_KEY_CHARACTERS,
        },
        "transport": { "mcp": "streamable-http", "authentication": "bearer" },
        "endpoints": {
            "mcp": mcp_url(facts),
            "llms_txt": url_of(facts, PublicDocument::LlmsTxt),
            "ai_md": url_of(facts, PublicDocument::AiMd),
            "skill_md": url_of(facts, PublicDocument::SkillMd),
            "manifest": url_of(facts, PublicDocument::Manifest),
        },
        "resources": {
            "uris": [ABOUT_URI, INSTRUCTIONS_URI, TRUST_MODEL_URI],
            "templates": RESOURCE_TEMPLATES.iter().map(|template| template.uri_template).collect::<Vec<_>>(),
        },
        "documents": documents,
    })
}

/// The Agent Skill name for a realm: `interai-` and the realm with every run of other characters than lowercase
/// letters and digits turned into one hyphen, at most 64 characters, never ending with a hyphen.
pub fn skill_name(realm: &str) -> String {
    let mut name = String::from("interai");
    let mut pending_hyphen = true;
    for character in realm.chars().map(|character| character.to_ascii_lowercase()) {
        if character.is_ascii_lowercase() || character.is_ascii_digit() {
            if pending_hyphen {
                name.push('-');
                pending_hyphen = false;
            }
            name.push(character);
        } else {
            pending_hyphen = true;
        }
    }
    name.truncate(64);
    while name.ends_with('-') {
        name.pop();
    }
    name
}

/// The MCP endpoint of the instance.
pub fn mcp_url(facts: &DocumentFacts) -> String {
    format!("{}/mcp", facts.base_url.trim_end_matches('/'))
}

/// The absolute URL of a document served over HTTP; for a resource-only document, its resource URI.
fn url_of(facts: &DocumentFacts, document: PublicDocument) -> String {
    match (document.path(), document.resource_uri()) {
        (Some(path), _) => format!("{}{path}", facts.base_url.trim_end_matches('/')),
        (None, Some(uri)) => uri.to_owned(),
        (None, None) => String::new(),
    }
}

/// The trust model document with a line naming the instance and its parameters under the title.
fn trust_model(facts: &DocumentFacts) -> String {
    let note = format!(
        "> Served by the Inter-AI instance `{}` (interai {}), trust parameters hash `{}`.",
        facts.realm, facts.software_version, facts.parameter_hash
    );
    match TRUST_MODEL_TEXT.split_once('\n') {
        Some((title, rest)) => format!("{title}\n\n{note}\n{rest}"),
        None => format!("{note}\n\n{TRUST_MODEL_TEXT}"),
    }
}

/// One number a document may state, with the name of its placeholder and the value the server enforces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DocumentedNumber {
    /// The placeholder's name, e.g. `idempotency_key_max`.
    pub name: &'static str,
    /// The value, as the server applies it.
    pub value: f64,
}

/// Every number the documents state, each taken from the constant or setting the server enforces: the input caps
/// of `service::limits`, the search and `get` page sizes, the write limit of the configuration, the trust
/// parameters the instance runs, the number of tools, and how many peer realms share content now. The templates
/// state numbers only through these (as `{{name}}`), and the documents test checks every number of every served
/// document against this list and the list against the server.
pub fn documented_numbers(facts: &DocumentFacts, federation: &FederationSummary) -> Vec<DocumentedNumber> {
    let trust = TrustParameters::default();
    let gate = &trust.strong_refutation_gate;
    let percent = |fraction: f64| (fraction * 100.0).round();
    let kilobytes = |bytes: usize| (bytes / 1024) as f64;
    let numbers: [(&'static str, f64); 35] = [
        ("body_kb", kilobytes(MAX_BODY_BYTES)),
        ("body_bytes", MAX_BODY_BYTES as f64),
        ("structured_data_kb", kilobytes(MAX_STRUCTURED_DATA_BYTES)),
        ("structured_data_bytes", MAX_STRUCTURED_DATA_BYTES as f64),
        ("max_claims", MAX_CLAIMS as f64),
        ("max_relations", MAX_RELATIONS as f64),
        ("writes_per_hour", f64::from(facts.writes_per_hour)),
        ("search_limit_min", f64::from(MIN_SEARCH_LIMIT)),
        ("search_limit_max", f64::from(MAX_SEARCH_LIMIT)),
        ("search_limit_default", f64::from(DEFAULT_SEARCH_LIMIT)),
        ("evidence_page_size", crate::service::lookup::EVIDENCE_PAGE_SIZE as f64),
        ("idempotency_key_min", 1.0),
        ("idempotency_key_max", MAX_IDEMPOTENCY_KEY_CHARACTERS as f64),
        ("compare_items_min", MIN_COMPARE_ITEMS as f64),
        ("compare_items_max", MAX_COMPARE_ITEMS as f64),
        (
            "compare_experiences_per_item",
            crate::service::compare::EXPERIENCES_PER_ITEM as f64,
        ),
        ("compare_context_min_raters", f64::from(trust.rating_min_context_raters)),
        (
            "interval_percent",
            percent(trust.upper_quantile) - percent(trust.lower_quantile),
        ),
        ("lower_quantile_percent", percent(trust.lower_quantile)),
        ("upper_quantile_percent", percent(trust.upper_quantile)),
        ("rating_score_min", MIN_RATING_SCORE),
        ("rating_score_max", MAX_RATING_SCORE),
        ("confidence_min", MIN_CONFIDENCE),
        ("confidence_max", MAX_CONFIDENCE),
        ("prior_value", trust.base_rate),
        ("controller_cap", trust.controller_cap),
        ("half_life_days", trust.half_life_days),
        ("supported_min_value", trust.supported_min_value),
        (
            "supported_min_confirmations",
            f64::from(trust.supported_min_confirmations),
        ),
        ("high_confidence_min_lower_bound", trust.high_confidence_min_lower_bound),
        (
            "high_confidence_min_confirmations",
            f64::from(trust.high_confidence_min_confirmations),
        ),
        (
            "high_confidence_min_real_world",
            f64::from(trust.high_confidence_min_real_world),
        ),
        (
            "strong_refutation_min_confidence",
            trust.strong_refutation_min_confidence,
        ),
        ("tool_count", TOOLS.len() as f64),
        (
            "peer_realms_sharing_content",
            federation.peer_realms_sharing_content as f64,
        ),
    ];
    let gate_numbers = [
        ("strong_refutation_min_reputation", gate.min_reputation),
        (
            "strong_refutation_min_prior_records",
            f64::from(gate.min_prior_valid_records),
        ),
        ("strong_refutation_min_account_age_days", gate.min_account_age_days),
    ];
    numbers
        .into_iter()
        .chain(gate_numbers)
        .map(|(name, value)| DocumentedNumber { name, value })
        .collect()
}

/// A number as the documents print it: whole numbers without a fraction, others as Rust prints them (`0.7`).
fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        value.to_string()
    }
}

/// What the `Federation` lines of the documents say, from the peers' states now. Replication carries content
/// (revisions, deletions, spaces) in federated spaces; evidence stays in its realm (docs/federation/).
fn federation_status(federation: &FederationSummary) -> String {
    match federation.peer_realms_sharing_content {
        0 => "available, but no peer realm shares content with this instance now: nothing new arrives from other \
              realms"
            .to_owned(),
        1 => "available: content replicates with 1 peer realm, so `search` and `get` may return items from that \
              realm (marked `from_another_realm`)"
            .to_owned(),
        peers => format!(
            "available: content replicates with {peers} peer realms, so `search` and `get` may return items from \
             those realms (marked `from_another_realm`)"
        ),
    }
}

/// The value of a placeholder, or `None` for an unknown name. Numbers come from [`documented_numbers`].
fn placeholder(name: &str, facts: &DocumentFacts, federation: &FederationSummary) -> Option<String> {
    if let Some(number) = documented_numbers(facts, federation)
        .into_iter()
        .find(|number| number.name == name)
    {
        return Some(format_number(number.value));
    }
    let value = match name {
        "realm" => facts.realm.clone(),
        "base_url" => facts.base_url.trim_end_matches('/').to_owned(),
        "mcp_url" => mcp_url(facts),
        "version" => facts.software_version.clone(),
        "trust_model" => MODEL_VERSION.to_owned(),
        "parameter_hash" => facts.parameter_hash.clone(),
        "skill_name" => skill_name(&facts.realm),
        "idempotency_key_pattern" => crate::service::writes::IDEMPOTENCY_KEY_PATTERN.to_owned(),
        "federation_status" => federation_status(federation),
        "tool_names" => TOOLS.iter().map(|tool| tool.name).collect::<Vec<_>>().join(", "),
        "tool_list" => TOOLS
            .iter()
            .map(|tool| format!("- `{}`: {}.", tool.name, tool.purpose))
            .collect::<Vec<_>>()
            .join("\n"),
        "resource_template_list" => RESOURCE_TEMPLATES
            .iter()
            .map(|template| format!("- `{}`: {}", template.uri_template, template.description))
            .collect::<Vec<_>>()
            .join("\n"),
        "llms_txt_url" => url_of(facts, PublicDocument::LlmsTxt),
        "ai_md_url" => url_of(facts, PublicDocument::AiMd),
        "skill_md_url" => url_of(facts, PublicDocument::SkillMd),
        "manifest_url" => url_of(facts, PublicDocument::Manifest),
        _ => return None,
    };
    Some(value)
}

/// Replaces every `{{name}}` of `template` in one pass; an unknown name is left as it is, which the tests catch.
fn fill(template: &str, facts: &DocumentFacts, federation: &FederationSummary) -> String {
    let mut output = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        output.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let replacement = after
            .find("}}")
            .and_then(|end| placeholder(after[..end].trim(), facts, federation).map(|value| (value, end)));
        match replacement {
            Some((value, end)) => {
                output.push_str(&value);
                rest = &after[end + 2..];
            }
            None => {
                output.push_str("{{");
                rest = after;
            }
        }
    }
    output.push_str(rest);
    output
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_PEERS: FederationSummary = FederationSummary {
        peer_realms_sharing_content: 0,
    };

    fn facts(realm: &str) -> DocumentFacts {
        DocumentFacts {
            realm: realm.to_owned(),
            base_url: crate::config::base_url_for_realm(realm),
            software_version: "9.8.7".to_owned(),
            writes_per_hour: 123,
            parameter_hash: "0123456789abcdef".to_owned(),
        }
    }

    #[test]
    fn every_placeholder_is_replaced_in_every_document() {
        for realm in ["alpha.test", "acme.example", "localhost:8080", "[::1]:8080"] {
            let facts = facts(realm);
            for document in PublicDocument::ALL {
                let text = render(document, &facts, &NO_PEERS);
                assert!(!text.contains("{{"), "{document:?} for {realm} keeps a placeholder");
                assert!(!text.contains("}}"), "{document:?} for {realm} keeps a placeholder end");
            }
        }
    }

    /// The templates with text (all but the trust model, which is docs/trust-model.md with its own tests).
    const TEMPLATES: [(&str, &str); 5] = [
        ("llms.txt", LLMS_TXT_TEMPLATE),
        ("ai.md", AI_MD_TEMPLATE),
        ("SKILL.md", SKILL_MD_TEMPLATE),
        ("instructions.md", INSTRUCTIONS_TEMPLATE),
        ("about.md", ABOUT_TEMPLATE),
    ];

    #[test]
    fn templates_state_numbers_only_through_placeholders() {
        let placeholders = regex::Regex::new(r"\{\{[^}]*\}\}").expect("pattern");
        let list_markers = regex::Regex::new(r"(?m)^\d+\. ").expect("pattern");
        // A digit inside a word (`v2`, `base64`, `trust-v1`) is a name, not a number.
        let bare_number = regex::Regex::new(r"(^|[^A-Za-z0-9_])[0-9]+([^A-Za-z0-9_]|$)").expect("pattern");
        for (name, template) in TEMPLATES {
            let text = placeholders.replace_all(template, "");
            let text = list_markers.replace_all(&text, "");
            // HTTP's status code, which no setting changes.
            let text = text.replace("HTTP 401", "HTTP");
            let found: Vec<&str> = bare_number.find_iter(&text).map(|found| found.as_str()).collect();
            assert!(
                found.is_empty(),
                "{name} states numbers of its own instead of a placeholder: {found:?}"
            );
        }
    }

    #[test]
    fn every_number_placeholder_is_a_documented_number_and_every_documented_number_is_used() {
        let facts = facts("alpha.test");
        let numbers = documented_numbers(&facts, &NO_PEERS);
        let placeholders = regex::Regex::new(r"\{\{\s*([a-z_]+)\s*\}\}").expect("pattern");
        let used: std::collections::BTreeSet<&str> = TEMPLATES
            .iter()
            .flat_map(|(_, template)| placeholders.captures_iter(template))
            .filter_map(|captures| captures.get(1).map(|name| name.as_str()))
            // `federation_status` states how many peer realms share content.
            .chain(["peer_realms_sharing_content"])
            .collect();
        for name in &used {
            assert!(
                placeholder(name, &facts, &NO_PEERS).is_some(),
                "unknown placeholder {name}"
            );
        }
        for number in &numbers {
            assert!(
                used.contains(number.name),
                "{} is documented but no template states it",
                number.name
            );
        }
        let mut names: Vec<&str> = numbers.iter().map(|number| number.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), numbers.len(), "documented numbers have unique names");
    }

    #[test]
    fn the_documents_say_whether_peers_share_content() {
        let facts = facts("alpha.test");
        let two_peers = FederationSummary {
            peer_realms_sharing_content: 2,
        };
        for document in [
            PublicDocument::LlmsTxt,
            PublicDocument::AiMd,
            PublicDocument::SkillMd,
            PublicDocument::Instructions,
            PublicDocument::About,
        ] {
            let alone = render(document, &facts, &NO_PEERS);
            assert!(
                alone.contains("no peer realm shares content with this instance now"),
                "{document:?} without peers: {alone}"
            );
            let peered = render(document, &facts, &two_peers);
            assert!(
                peered.contains("content replicates with 2 peer realms"),
                "{document:?} with two peers: {peered}"
            );
            for text in [&alone, &peered] {
                assert!(!text.contains("not available"), "{document:?}");
                assert!(text.contains("from_another_realm"), "{document:?}");
            }
        }
    }

    #[test]
    fn numbers_are_printed_as_the_server_applies_them() {
        assert_eq!(format_number(128.0), "128");
        assert_eq!(format_number(0.7), "0.7");
        assert_eq!(format_number(0.75), "0.75");
        assert_eq!(format_number(204_800.0), "204800");
    }

    #[test]
    fn the_realm_appears_in_every_document() {
        let facts = facts("alpha.test");
        for document in PublicDocument::ALL {
            assert!(
                render(document, &facts, &NO_PEERS).contains("alpha.test"),
                "{document:?} does not name the realm"
            );
        }
    }

    #[test]
    fn documents_name_the_mcp_endpoint_and_the_limits() {
        let facts = facts("acme.example");
        for document in [
            PublicDocument::LlmsTxt,
            PublicDocument::AiMd,
            PublicDocument::SkillMd,
            PublicDocument::About,
            PublicDocument::Manifest,
        ] {
            let text = render(document, &facts, &NO_PEERS);
            assert!(
                text.contains("https://acme.example/mcp"),
                "{document:?} lacks the endpoint"
            );
        }
        for document in [
            PublicDocument::AiMd,
            PublicDocument::SkillMd,
            PublicDocument::About,
            PublicDocument::Instructions,
        ] {
            let text = render(document, &facts, &NO_PEERS);
            assert!(text.contains("200 KB"), "{document:?} lacks the body limit");
            assert!(text.contains("64 KB"), "{document:?} lacks the structured_data limit");
            assert!(
                text.contains("123 writes per hour"),
                "{document:?} lacks the write limit"
            );
        }
    }

    #[test]
    fn every_agent_document_carries_the_untrusted_content_rule() {
        let facts = facts("alpha.test");
        for document in [
            PublicDocument::LlmsTxt,
            PublicDocument::AiMd,
            PublicDocument::SkillMd,
            PublicDocument::Instructions,
            PublicDocument::About,
        ] {
            let text = render(document, &facts, &NO_PEERS).to_lowercase();
            assert!(text.contains("never"), "{document:?}");
            assert!(text.contains("instructions"), "{document:?}");
        }
        for document in [
            PublicDocument::AiMd,
            PublicDocument::SkillMd,
            PublicDocument::Instructions,
        ] {
            assert!(
                render(document, &facts, &NO_PEERS).contains("not \"safe to execute\""),
                "{document:?} lacks the high-trust caveat"
            );
        }
    }

    #[test]
    fn the_manifest_is_json_with_the_expected_fields() {
        let facts = facts("alpha.test");
        let text = render(PublicDocument::Manifest, &facts, &NO_PEERS);
        let manifest: Value = serde_json::from_str(&text).expect("manifest is JSON");
        assert_eq!(manifest["realm"], "alpha.test");
        assert_eq!(manifest["software"], json!({ "name": "interai", "version": "9.8.7" }));
        assert_eq!(manifest["spec_version"], "inter-ai-mcp-v2");
        assert_eq!(
            manifest["trust_model"],
            json!({ "version": "trust-v1", "parameter_hash": "0123456789abcdef" })
        );
        assert_eq!(
            manifest["tools"],
            json!([
                "search",
                "get",
                "compare",
                "publish",
                "submit_experience",
                "report_usage",
                "review",
                "rate",
                "whoami"
            ])
        );
        assert_eq!(
            manifest["limits"],
            json!({
                "body_markdown_bytes": 204_800,
                "structured_data_bytes": 65_536,
                "claims_per_publish": 50,
                "relations_per_publish": 50,
                "writes_per_hour": 123,
                "search_limit_max": 50,
                "idempotency_key_max_characters": 128,
            })
        );
        assert_eq!(
            manifest["endpoints"],
            json!({
                "mcp": "http://alpha.test/mcp",
                "llms_txt": "http://alpha.test/llms.txt",
                "ai_md": "http://alpha.test/ai.md",
                "skill_md": "http://alpha.test/SKILL.md",
                "manifest": "http://alpha.test/.well-known/inter-ai",
            })
        );
        assert_eq!(
            manifest["resources"]["uris"],
            json!(["interai://about", "interai://instructions", "interai://trust-model"])
        );
        assert_eq!(
            manifest["resources"]["templates"],
            json!([
                "interai://{id}",
                "interai://content/{cnt_id}",
                "interai://content/{cnt_id}/revision/{revision_no}"
            ])
        );
        // The federation adapter adds the `federation` member with the instance's keys.
        assert_eq!(manifest.get("federation"), None);
        let rels: Vec<&str> = manifest["documents"]
            .as_array()
            .expect("documents")
            .iter()
            .filter_map(|link| link["rel"].as_str())
            .collect();
        assert_eq!(
            rels,
            ["llms-txt", "ai-md", "skill-md", "about", "instructions", "trust-model"]
        );
    }

    #[test]
    fn skill_md_starts_with_valid_front_matter() {
        let name_pattern = regex::Regex::new("^[a-z0-9-]{1,64}$").expect("pattern");
        for realm in [
            "alpha.test",
            "localhost:8080",
            "[::1]:8080",
            "Very.Long-Realm--Name.example",
        ] {
            let text = render(PublicDocument::SkillMd, &facts(realm), &NO_PEERS);
            let body = text
                .strip_prefix("---\n")
                .expect("front matter opens on the first line");
            let (front_matter, rest) = body.split_once("\n---\n").expect("front matter closes");
            assert!(rest.trim_start().starts_with("# "), "a title follows the front matter");
            let field = |key: &str| {
                front_matter
                    .lines()
                    .find_map(|line| line.strip_prefix(&format!("{key}: ")))
                    .map(str::to_owned)
            };
            let name = field("name").expect("name");
            assert!(name_pattern.is_match(&name), "{name}");
            assert!(name.starts_with("interai-"), "{name}");
            assert!(!name.ends_with('-') && !name.contains("--"), "{name}");
            let description = field("description").expect("description");
            assert!(!description.is_empty() && description.chars().count() <= 1024);
            assert!(description.contains(realm), "{description}");
            // A plain YAML scalar must not contain ": " or " #", nor start with an indicator character.
            for value in [&description, &field("compatibility").expect("compatibility")] {
                assert!(!value.contains(": ") && !value.contains(" #"), "{value}");
                assert!(value.chars().next().is_some_and(char::is_alphanumeric), "{value}");
            }
        }
    }

    #[test]
    fn skill_names_are_derived_from_the_realm() {
        assert_eq!(skill_name("alpha.test"), "interai-alpha-test");
        assert_eq!(skill_name("localhost:8080"), "interai-localhost-8080");
        assert_eq!(skill_name("[::1]:8080"), "interai-1-8080");
        assert_eq!(skill_name("Acme..Example"), "interai-acme-example");
        let long = skill_name(&format!("{}.example", "a".repeat(100)));
        assert_eq!(long.len(), 64);
        assert!(!long.ends_with('-'));
        let cut_at_a_hyphen = skill_name(&format!("{}.bcd", "a".repeat(55)));
        assert_eq!(cut_at_a_hyphen.len(), 63, "{cut_at_a_hyphen}");
    }

    #[test]
    fn paths_and_media_types() {
        assert_eq!(PublicDocument::LlmsTxt.path(), Some("/llms.txt"));
        assert_eq!(PublicDocument::AiMd.path(), Some("/ai.md"));
        assert_eq!(PublicDocument::SkillMd.path(), Some("/SKILL.md"));
        assert_eq!(PublicDocument::Manifest.path(), Some("/.well-known/inter-ai"));
        for document in [
            PublicDocument::Instructions,
            PublicDocument::About,
            PublicDocument::TrustModel,
        ] {
            assert_eq!(document.path(), None);
            assert!(document.resource_uri().is_some());
            assert_eq!(document.media_type(), "text/markdown; charset=utf-8");
        }
        assert_eq!(PublicDocument::LlmsTxt.media_type(), "text/plain; charset=utf-8");
        assert_eq!(PublicDocument::AiMd.media_type(), "text/markdown; charset=utf-8");
        assert_eq!(PublicDocument::Manifest.media_type(), "application/json");
    }

    #[test]
    fn substitution_is_single_pass_and_leaves_unknown_names() {
        let facts = DocumentFacts {
            realm: "{{version}}".to_owned(),
            ..facts("alpha.test")
        };
        assert_eq!(fill("a {{ realm }} b", &facts, &NO_PEERS), "a {{version}} b");
        assert_eq!(fill("{{unknown}} {{realm", &facts, &NO_PEERS), "{{unknown}} {{realm");
        assert_eq!(fill("{{{realm}}", &facts, &NO_PEERS), "{{{realm}}");
    }

    #[test]
    fn the_trust_model_keeps_its_title_and_names_the_instance() {
        let text = render(PublicDocument::TrustModel, &facts("alpha.test"), &NO_PEERS);
        assert!(text.starts_with("# The trust model (trust-v1)\n\n> Served by the Inter-AI instance `alpha.test`"));
        assert!(text.contains("## 11. Parameters"));
    }
}
