//! The data seeder behind `interai admin seed`: realistic synthetic knowledge and evidence, written only through
//! the service layer's public use cases, deterministic for a given seed number.
//!
//! What it writes: root controllers (humans and organizations) with one to five agents each; content items about
//! 80 technical and non-technical topics (titles, summaries, Markdown bodies of 0.5–5 KB, zero to five claims of
//! which many are shared between items so that claim matching happens, named subjects, tags, sources, relations
//! such as `alternative_to`, `corrects` and `supersedes`, and some second revisions); first-hand experiences; and
//! evidence from many controllers: usage reports with mixed results in the real world and in tests, reviews
//! (some grounded in the reviewer's own usage), and ratings of content and entities in contexts. A handful of
//! items collect eight or more real-world successes from different controllers and reach `high_confidence`; some
//! collect a real-world failure and become `disputed`.
//!
//! Determinism: every item's text and evidence plan comes from a SplitMix64 generator seeded with the seed number
//! and the item's index, and references to earlier items only point at items of completed batches, so the same
//! seed gives the same knowledge and the same evidence. Public IDs and timestamps come from the service and differ
//! between runs, as does which of two concurrent publishers of one shared claim creates it.
//!
//! The seeder does not raise any rate limit itself: the caller builds the service with a `writes_per_hour` large
//! enough for the volume (the CLI command does).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::domain::knowledge::ALTERNATIVE_REASONS;
use crate::domain::{ActorType, AuthenticatedActor, PublicId, ScopeSet};
use crate::service::actors::NewActor;
use crate::service::content::{ExperienceRequest, PublishRequest, RelationRequest, UsedRequest};
use crate::service::evidence::{RateRequest, ReviewRequest, UsageRequest};
use crate::service::keys::NewApiKey;
use crate::service::references::{SourceReference, SubjectReference};
use crate::service::writes::{CallMetadata, WriteOperation};
use crate::service::{ErrorCode, Service, ServiceError};

/// What to seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedOptions {
    /// Content items to publish (experiences included).
    pub items: u64,
    /// The generator's seed; the same seed gives the same data.
    pub seed: u64,
    /// Root controllers to create; `None` chooses one per 50 items, at least 20 and at most 2,000.
    pub controllers: Option<u64>,
    /// Items written at the same time (each item's writes run in order).
    pub concurrency: usize,
}

impl Default for SeedOptions {
    fn default() -> SeedOptions {
        SeedOptions {
            items: 1000,
            seed: 1,
            controllers: None,
            concurrency: 4,
        }
    }
}

impl SeedOptions {
    /// The number of root controllers this run creates.
    pub fn controller_count(&self) -> u64 {
        self.controllers.unwrap_or((self.items / 50).clamp(20, 2000)).max(2)
    }
}

/// What a seeding run wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeedReport {
    /// Root controllers created.
    pub controllers: u64,
    /// Agents created (each with one API key).
    pub agents: u64,
    /// Content items created, experiences included.
    pub items: u64,
    /// Of these, experiences.
    pub experiences: u64,
    /// Second revisions published.
    pub revisions: u64,
    /// Claims created (a claim matched to an existing one is not counted here).
    pub claims: u64,
    /// Claims linked to revisions, matched ones included.
    pub claim_links: u64,
    /// Distinct named entities used as subjects (created unless an earlier run created them).
    pub entities: u64,
    /// Relations declared.
    pub relations: u64,
    /// Usage events, those of experiences included.
    pub usage_events: u64,
    /// Reviews.
    pub reviews: u64,
    /// Ratings.
    pub ratings: u64,
    /// Items planned to reach `high_confidence`.
    pub planned_high_confidence: u64,
    /// Of these, the items whose current revision is `high_confidence` at the end.
    pub high_confidence: u64,
    /// Items planned to be `disputed` by one real-world failure.
    pub planned_disputed: u64,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

impl std::fmt::Display for SeedReport {
    /// One line saying what the run wrote and how long it took.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "{} items ({} experiences, {} revisions), {} claims ({} links), {} entities, {} evidence records \
             ({} usage, {} reviews, {} ratings), {} high_confidence of {} planned, from {} controllers and {} agents \
             in {:.1} s",
            self.items,
            self.experiences,
            self.revisions,
            self.claims,
            self.claim_links,
            self.entities,
            self.evidence_records(),
            self.usage_events,
            self.reviews,
            self.ratings,
            self.high_confidence,
            self.planned_high_confidence,
            self.controllers,
            self.agents,
            self.elapsed.as_secs_f64()
        )
    }
}

impl SeedReport {
    /// Usage events, reviews and ratings together.
    pub fn evidence_records(&self) -> u64 {
        self.usage_events + self.reviews + self.ratings
    }
}

// ---------------------------------------------------------------- deterministic randomness

/// SplitMix64: a tiny, fast, well-mixed generator with a 64-bit state; every value depends only on the seed.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// A generator for one purpose (`stream`) and one position (`index`) under a seed, independent of the others.
    pub fn derived(seed: u64, stream: u64, index: u64) -> SplitMix64 {
        let mut mixer = SplitMix64::new(seed ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        let first = mixer.next_u64();
        SplitMix64::new(first ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut mixed = self.state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        mixed ^ (mixed >> 31)
    }

    /// A number in `0..bound` (0 when `bound` is 0), without modulo bias worth mentioning.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high.saturating_sub(low) + 1)
    }

    /// An index into a slice of `length` elements (0 for an empty one).
    pub fn index(&mut self, length: usize) -> usize {
        usize::try_from(self.below(length as u64)).unwrap_or(0)
    }

    /// A uniform number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// True with probability `probability`.
    pub fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// One text of a non-empty slice of texts.
    pub fn text(&mut self, items: &[&'static str]) -> &'static str {
        items[self.index(items.len())]
    }

    /// An index chosen with the given relative weights.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|weight| u64::from(*weight)).sum();
        let mut draw = self.below(total.max(1));
        for (position, weight) in weights.iter().enumerate() {
            let weight = u64::from(*weight);
            if draw < weight {
                return position;
            }
            draw -= weight;
        }
        weights.len().saturating_sub(1)
    }
}

// ---------------------------------------------------------------- vocabulary

/// One domain the seeder writes about.
#[derive(Debug)]
pub struct Topic {
    /// The topic's tag, e.g. `webhooks`.
    pub tag: &'static str,
    /// Its name in running text, e.g. `webhook delivery`.
    pub name: &'static str,
    /// The broad area, also a tag: engineering, operations, data, security, ai, cooking, finance, people,
    /// workplace, home, legal.
    pub area: &'static str,
    /// Named entities of the domain: (name, entity type).
    pub entities: &'static [(&'static str, &'static str)],
    /// Things people in the domain talk about.
    pub terms: &'static [&'static str],
    /// Things people in the domain do, as verb phrases.
    pub tasks: &'static [&'static str],
    /// Checkable statements of the domain, shared by many items.
    pub claims: &'static [&'static str],
}

impl Topic {
    fn is_technical(&self) -> bool {
        matches!(self.area, "engineering" | "operations" | "data" | "security" | "ai")
    }
}

/// The seeder's topics.
pub fn topics() -> &'static [Topic] {
    TOPICS
}

/// A search query of `words` words (one to five) about a random topic, as an agent would type it, with the index
/// of the topic it came from. For benchmarks and tests of search over seeded data.
pub fn sample_query(random: &mut SplitMix64, words: usize) -> (usize, String) {
    let topic_index = random.index(TOPICS.len());
    let topic = &TOPICS[topic_index];
    let mut chosen: Vec<String> = Vec::new();
    let mut attempts = 0;
    while chosen.len() < words.max(1) && attempts < 12 {
        attempts += 1;
        let phrase = match random.weighted(&[4, 3, 2, 2]) {
            0 => random.text(topic.terms),
            1 => random.text(topic.tasks),
            2 => random.pick(topic.entities).0,
            _ => topic.name,
        };
        for word in phrase.split_whitespace() {
            let word = word.trim_matches(|character: char| !character.is_alphanumeric());
            let lower = word.to_lowercase();
            if word.is_empty() || QUERY_FILLER.contains(&lower.as_str()) || chosen.contains(&lower) {
                continue;
            }
            if chosen.len() < words.max(1) {
                chosen.push(lower);
            }
        }
    }
    (topic_index, chosen.join(" "))
}

/// Words a person would leave out of a search query.
const QUERY_FILLER: &[&str] = &[
    "a", "an", "the", "of", "to", "for", "in", "on", "with", "and", "or", "by", "at", "from", "before", "after",
    "without", "into", "it", "its",
];
// The topics the seeder writes about: technical and non-technical domains, each with its named entities, terms,
// tasks and a few checkable claims that several items share. Data, kept in `src/seed/topics.json`; the build script
// turns it into `static TOPICS: &[Topic]`.
include!(concat!(env!("OUT_DIR"), "/seed_topics.rs"));

// ---------------------------------------------------------------- text

/// What one item is about: the slots its templates are filled from.
struct Focus {
    topic: &'static Topic,
    task: &'static str,
    term: &'static str,
    term2: &'static str,
    entity: (&'static str, &'static str),
    entity2: (&'static str, &'static str),
}

impl Focus {
    fn choose(topic: &'static Topic, random: &mut SplitMix64) -> Focus {
        let term = random.text(topic.terms);
        let mut term2 = random.text(topic.terms);
        if term2 == term {
            term2 = topic.terms
                [(topic.terms.iter().position(|candidate| *candidate == term).unwrap_or(0) + 1) % topic.terms.len()];
        }
        let entity_index = random.index(topic.entities.len());
        let entity2_index =
            (entity_index + 1 + random.index(topic.entities.len().saturating_sub(1).max(1))) % topic.entities.len();
        Focus {
            topic,
            task: random.text(topic.tasks),
            term,
            term2,
            entity: topic.entities[entity_index],
            entity2: topic.entities[entity2_index],
        }
    }
}

/// Fills `{slot}` placeholders: `task`, `term`, `term2`, `entity`, `entity2`, `name` (this item's focus; a
/// capitalized slot name capitalizes the value), `any_term` and `any_task` (a fresh pick each time), `n`, `n2`
/// (small numbers) and `pct` (a percentage).
fn fill(template: &str, focus: &Focus, random: &mut SplitMix64) -> String {
    let mut output = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        output.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else {
            output.push_str(&rest[start..]);
            return output;
        };
        let slot = &after[..end];
        let lower = slot.to_ascii_lowercase();
        let value: String = match lower.as_str() {
            "task" => focus.task.to_owned(),
            "term" => focus.term.to_owned(),
            "term2" => focus.term2.to_owned(),
            "entity" => focus.entity.0.to_owned(),
            "entity2" => focus.entity2.0.to_owned(),
            "name" => focus.topic.name.to_owned(),
            "any_term" => (random.text(focus.topic.terms)).to_owned(),
            "any_task" => (random.text(focus.topic.tasks)).to_owned(),
            "n" => random.between(2, 30).to_string(),
            "n2" => random.between(31, 60).to_string(),
            "pct" => (5 * random.between(2, 18)).to_string(),
            _ => slot.to_owned(),
        };
        if slot.starts_with(|character: char| character.is_ascii_uppercase()) {
            output.push_str(&capitalize(&value));
        } else {
            output.push_str(&value);
        }
        rest = &after[end + 1..];
    }
    output.push_str(rest);
    output
}

fn capitalize(text: &str) -> String {
    let mut characters = text.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => String::new(),
    }
}

/// A tag or URL segment: lowercase letters and digits joined by dashes.
fn slug(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for character in text.to_lowercase().chars() {
        if character.is_ascii_alphanumeric() {
            slug.push(character);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

const SENTENCES: &[&str] = &[
    "Start by checking the {term} before you {task}.",
    "In our experience with {entity}, the {any_term} is where most problems begin.",
    "Teams that {any_task} regularly report fewer surprises with the {term}.",
    "Keep a written record of the {any_term}, so that the next person can {task} without guessing.",
    "If the {any_term} looks wrong, stop and compare it with the last known good state.",
    "{Entity} handles the {any_term} well, but its defaults are not always right for {name}.",
    "Allow about {n} minutes for this step the first time; it gets faster with practice.",
    "A common mistake is to {any_task} before the {term} is ready.",
    "Measure the {any_term} before and after the change and write both numbers down.",
    "We tried the same with {entity2}; the steps are the same, only the names differ.",
    "The {term} and the {term2} interact, so changing one usually means checking the other.",
    "Most of the time here goes into understanding the {any_term}, not into the change itself.",
    "When in doubt, {any_task} first and come back to this step afterwards.",
    "This worked in {n} of our last {n2} attempts once we paid attention to the {any_term}.",
    "Write down who owns the {term}, because questions about it come up again and again.",
    "Do not skip the check of the {any_term}; it is cheap and catches most mistakes.",
    "The documentation of {entity} covers the {term} only briefly, so the details below come from practice.",
    "If you only have a few minutes, focus on the {term}; everything else can wait.",
    "Roughly {pct} percent of the problems we saw came from the {any_term}.",
    "Ask a colleague to look at the {term} before you continue; a second pair of eyes helps.",
    "After the change, watch the {any_term} for a day before you call it done.",
    "Small, reversible steps make it easy to {task} again if something goes wrong.",
    "Put the {term} in the team's runbook so that it does not live only in one person's head.",
    "{Entity} and {entity2} both work for {name}; we chose {entity} because the team already knew it.",
    "The first time we tried to {task}, we underestimated the {any_term}.",
    "Plan the work for a quiet moment, not right before a deadline.",
    "Keep the old setup around until the new {term} has proven itself.",
    "Automate the check of the {term} once you have done it by hand a few times.",
    "People new to {name} often confuse the {term} with the {term2}.",
    "Expect the {any_term} to behave differently under load than in a quick test.",
    "A checklist for the {term} saved us more time than any tool did.",
    "Compare the result with what {entity} reports; the two should agree.",
];

const STEPS: &[&str] = &[
    "{Any_task}: check the {any_term} and confirm it matches what {entity} expects.",
    "Note the current state of the {any_term} so you can compare later.",
    "Change the {term} in one small step and nothing else at the same time.",
    "Confirm that the {any_term} looks as expected.",
    "Tell the people affected that you are about to {task}.",
    "Wait {n} minutes and check the {any_term} again.",
    "Record what you changed and why in the team notes.",
    "Repeat for the {term2} if the first change worked.",
    "Ask someone else to {any_task} using only your notes.",
    "Remove the temporary workaround once the {term} is stable.",
];

const PITFALLS: &[&str] = &[
    "Forgetting the {any_term} when you {any_task}.",
    "Changing the {term} and the {term2} at the same time.",
    "Trusting the defaults of {entity} for the {any_term}.",
    "Skipping the final check of the {any_term}.",
    "Doing this for the first time under time pressure.",
    "Assuming {entity2} behaves exactly like {entity}.",
];

const SUMMARIES: &[&str] = &[
    "{Task} with {entity}, including the checks that catch problems with the {term} early.",
    "What we learned when we had to {task}: the {term} matters more than the tooling.",
    "A short, tested procedure to {task} for {name}.",
    "How the {term} and the {term2} affect {name}, with examples from {entity}.",
    "Practical notes on the {term} for teams that {task}.",
    "The steps we follow to {task}, and the mistakes we made with the {term} along the way.",
];

/// Content types by weight, for technical and for other topics.
const TECHNICAL_TYPES: &[(&str, u32)] = &[
    ("procedure", 26),
    ("guide", 16),
    ("troubleshooting", 14),
    ("runbook", 10),
    ("note", 12),
    ("code", 10),
    ("decision", 6),
    ("checklist", 6),
];
const GENERAL_TYPES: &[(&str, u32)] = &[
    ("procedure", 30),
    ("guide", 20),
    ("checklist", 18),
    ("note", 16),
    ("template", 8),
    ("decision", 8),
];

fn title_templates(content_type: &str) -> &'static [&'static str] {
    match content_type {
        "procedure" => &[
            "How to {task}",
            "{Task} step by step",
            "{Task} with {entity}",
            "{Task} without surprises",
            "{Task}: the short version",
        ],
        "guide" => &[
            "A practical guide to {name}",
            "{Entity} for {name}: what we learned",
            "Getting the {term} right with {entity}",
            "Understanding the {term} in {name}",
        ],
        "troubleshooting" => &[
            "Troubleshooting {term} problems in {entity}",
            "Why the {term} breaks and how to fix it",
            "{Entity}: {term} errors explained",
        ],
        "runbook" => &[
            "Runbook: {task}",
            "On-call runbook for {term} incidents",
            "Runbook: when the {term} fails",
        ],
        "note" => &[
            "Notes on the {term} and the {term2}",
            "What {entity} does with the {term}",
            "A note on {name}",
        ],
        "code" => &["{Task}: an example", "Script to {task}", "Code to check the {term}"],
        "decision" => &[
            "Choosing between {entity} and {entity2} for {name}",
            "Why we moved from {entity2} to {entity}",
            "Decision: how we {task}",
        ],
        "checklist" => &[
            "Checklist: {task}",
            "{Name} checklist for {entity}",
            "Before you {task}: a checklist",
        ],
        "template" => &["Template: {task}", "A reusable template for the {term}"],
        _ => &["{Task}"],
    }
}

/// Unique-ish claims, parameterized so that some repeat across items and some do not.
const CLAIM_TEMPLATES: &[&str] = &[
    "{Entity} needs the {term} set explicitly before you {task}.",
    "Checking the {term} takes about {n} minutes with {entity}.",
    "The default {term} of {entity} is a poor fit for {name}.",
    "Changing the {term} without checking the {term2} caused {n} of our incidents.",
    "Teams that {task} weekly see fewer problems with the {term}.",
];

const LANGUAGES: &[&str] = &["python", "rust", "typescript", "go", "sql", "bash"];

/// A code sample in `language` for the focus.
fn code_sample(language: &str, focus: &Focus, random: &mut SplitMix64) -> String {
    let function = slug(focus.task).replace('-', "_");
    let field = slug(focus.term).replace('-', "_");
    let limit = random.between(10, 500);
    match language {
        "python" => format!(
            "```python\ndef {function}(records, limit={limit}):\n    \"\"\"{}.\"\"\"\n    done = []\n    for record in records[:limit]:\n        if record.get(\"{field}\") is None:\n            continue\n        done.append(record)\n    return done\n```\n",
            capitalize(focus.task)
        ),
        "rust" => format!(
            "```rust\n/// {}.\nfn {function}(records: &[Record]) -> Vec<&Record> {{\n    records.iter().filter(|record| record.{field}.is_some()).take({limit}).collect()\n}}\n```\n",
            capitalize(focus.task)
        ),
        "typescript" => format!(
            "```typescript\n// {}.\nexport function {function}(records: Item[]): Item[] {{\n  return records.filter((record) => record.{field} !== undefined).slice(0, {limit});\n}}\n```\n",
            capitalize(focus.task)
        ),
        "go" => format!(
            "```go\n// {function} keeps records that have a {}.\nfunc {function}(records []Record) []Record {{\n\tkept := make([]Record, 0, {limit})\n\tfor _, record := range records {{\n\t\tif record.{field} != \"\" {{\n\t\t\tkept = append(kept, record)\n\t\t}}\n\t}}\n\treturn kept\n}}\n```\n",
            focus.term
        ),
        "sql" => format!(
            "```sql\n-- {}.\nSELECT id, {field}, updated_at\nFROM records\nWHERE {field} IS NOT NULL\nORDER BY updated_at DESC\nLIMIT {limit};\n```\n",
            capitalize(focus.task)
        ),
        _ => format!(
            "```bash\n# {}.\nset -euo pipefail\n{} check --{} --limit {limit}\n```\n",
            capitalize(focus.task),
            slug(focus.entity.0),
            slug(focus.term)
        ),
    }
}

/// `count` different templates of `templates` (fewer when there are not that many), in random order.
fn distinct(templates: &[&'static str], random: &mut SplitMix64, count: u64) -> Vec<&'static str> {
    let count = usize::try_from(count).unwrap_or(0).min(templates.len());
    let mut chosen: Vec<&'static str> = Vec::with_capacity(count);
    while chosen.len() < count {
        let candidate = random.text(templates);
        if !chosen.contains(&candidate) {
            chosen.push(candidate);
        }
    }
    chosen
}

/// A paragraph of `low` to `high` different sentences.
fn paragraph(focus: &Focus, random: &mut SplitMix64, low: u64, high: u64) -> String {
    let count = random.between(low, high);
    let sentences: Vec<String> = distinct(SENTENCES, random, count)
        .into_iter()
        .map(|template| fill(template, focus, random))
        .collect();
    sentences.join(" ")
}

/// A Markdown list of `low` to `high` different items.
fn list(
    templates: &[&'static str],
    focus: &Focus,
    random: &mut SplitMix64,
    low: u64,
    high: u64,
    numbered: bool,
) -> String {
    let count = random.between(low, high);
    let mut text = String::new();
    for (position, template) in distinct(templates, random, count).into_iter().enumerate() {
        let line = fill(template, focus, random);
        if numbered {
            text.push_str(&format!("{}. {line}\n", position + 1));
        } else {
            text.push_str(&format!("- {line}\n"));
        }
    }
    text
}

/// A Markdown body of roughly `target` bytes (at least one section, then whole sections until it is reached).
fn body(
    focus: &Focus,
    summary: &str,
    content_type: &str,
    language: Option<&str>,
    target: usize,
    random: &mut SplitMix64,
) -> String {
    let mut body = format!("{summary}\n\n## Context\n\n{}\n", paragraph(focus, random, 2, 4));
    if let Some(language) = language {
        body.push_str(&format!("\n## Code\n\n{}", code_sample(language, focus, random)));
    }
    let mut section = 0_u32;
    while body.len() < target && section < 12 {
        section += 1;
        match (section, content_type) {
            (1, "checklist" | "template") => {
                body.push_str(&format!(
                    "\n## Checklist\n\n{}",
                    list(STEPS, focus, random, 4, 8, false)
                ));
            }
            (1, _) => {
                body.push_str(&format!("\n## Steps\n\n{}", list(STEPS, focus, random, 3, 7, true)));
            }
            (2, _) => {
                body.push_str(&format!(
                    "\n## Pitfalls\n\n{}",
                    list(PITFALLS, focus, random, 2, 4, false)
                ));
            }
            (3, _) if focus.topic.is_technical() && language.is_none() && random.chance(0.5) => {
                body.push_str(&format!(
                    "\n## Verification\n\n```sh\n{} status --{}\n```\n\n{}\n",
                    slug(focus.entity.0),
                    slug(focus.term),
                    paragraph(focus, random, 2, 2)
                ));
            }
            (_, _) => {
                let heading = random.text(&["Notes", "What we learned", "Background", "Results", "Details"]);
                body.push_str(&format!("\n## {heading}\n\n{}\n", paragraph(focus, random, 3, 6)));
            }
        }
    }
    body
}

/// A body length in bytes between 0.5 and 5 KB, most between 1 and 2.5 KB.
fn body_target(random: &mut SplitMix64) -> usize {
    let bytes = match random.weighted(&[15, 45, 28, 12]) {
        0 => random.between(500, 1000),
        1 => random.between(1000, 2000),
        2 => random.between(2000, 3500),
        _ => random.between(3500, 4800),
    };
    usize::try_from(bytes).unwrap_or(1000)
}

// ---------------------------------------------------------------- execution

/// How often a write is tried when it fails in a way a new attempt can fix.
const ATTEMPTS: u32 = 4;

/// Whether a failed write may succeed when tried again: a database conflict, or (on PostgreSQL) a concurrent
/// publish that created the same shared claim or entity first.
fn is_transient(error: &ServiceError) -> bool {
    error.retryable || error.code == ErrorCode::InternalError
}

/// Awaits a service call, calling it again (with a short pause) while it fails transiently.
macro_rules! retrying {
    ($call:expr) => {{
        let mut attempt = 1_u32;
        loop {
            match $call.await {
                Err(error) if attempt < ATTEMPTS && is_transient(&error) => {
                    tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt))).await;
                    attempt += 1;
                }
                result => break result,
            }
        }
    }};
}

fn metadata(operation: WriteOperation) -> CallMetadata {
    CallMetadata::internal(operation, json!({ "seeded": true }))
}

/// The IDs evidence of one item points at.
struct Targets {
    content_id: String,
    claims: Vec<String>,
    subjects: Vec<(String, String)>,
    entities: Vec<Option<String>>,
}

impl Targets {
    async fn resolve(&mut self, service: &Service, on: On) -> Result<Option<String>, ServiceError> {
        Ok(match on {
            On::Content => Some(self.content_id.clone()),
            On::Claim(position) => self.claims.get(position).cloned(),
            On::Entity(position) => {
                if let Some(Some(id)) = self.entities.get(position) {
                    return Ok(Some(id.clone()));
                }
                let Some((entity_type, name)) = self.subjects.get(position) else {
                    return Ok(None);
                };
                let id = service.find_entity_by_name(entity_type, name).await?.id.into_string();
                if let Some(slot) = self.entities.get_mut(position) {
                    *slot = Some(id.clone());
                }
                Some(id)
            }
        })
    }
}

async fn run_action(
    service: &Service,
    targets: &mut Targets,
    action: Action,
    outcome: &mut ItemOutcome,
) -> Result<(), ServiceError> {
    match action {
        Action::Usage {
            caller,
            on,
            mut request,
            then_review,
        } => {
            let Some(target) = targets.resolve(service, on).await? else {
                return Ok(());
            };
            request.target = target;
            let usage =
                retrying!(service.report_usage(&caller, &metadata(WriteOperation::ReportUsage), request.clone()))?;
            outcome.usage_events += 1;
            if let Some(mut review) = then_review {
                review.target = targets.content_id.clone();
                review.based_on_usage = Some(usage.id);
                retrying!(service.review(&caller, &metadata(WriteOperation::Review), review.clone()))?;
                outcome.reviews += 1;
            }
        }
        Action::Review { caller, mut request } => {
            request.target = targets.content_id.clone();
            retrying!(service.review(&caller, &metadata(WriteOperation::Review), request.clone()))?;
            outcome.reviews += 1;
        }
        Action::Rate {
            caller,
            on,
            mut request,
        } => {
            let Some(target) = targets.resolve(service, on).await? else {
                return Ok(());
            };
            request.target = target;
            retrying!(service.rate(&caller, &metadata(WriteOperation::Rate), request.clone()))?;
            outcome.ratings += 1;
        }
    }
    Ok(())
}

/// Writes one item and its evidence, in order.
async fn run_item(service: Service, plan: ItemPlan) -> Result<ItemOutcome, ServiceError> {
    let mut outcome = ItemOutcome {
        index: plan.index,
        topic: plan.topic,
        relations: plan.relations,
        proven: plan.proven,
        disputed: plan.disputed,
        ..ItemOutcome::default()
    };
    let author = &plan.author;
    let mut targets = match &plan.publication {
        Publication::Content(request) => {
            let published =
                retrying!(service.publish(author, &metadata(WriteOperation::Publish), request.as_ref().clone()))?;
            outcome.claim_links = published.claims.len() as u64;
            outcome.claims = published.claims.iter().filter(|claim| !claim.matched_existing).count() as u64;
            outcome.revision_id = published.revision_id;
            Targets {
                content_id: published.id,
                claims: published.claims.into_iter().map(|claim| claim.id).collect(),
                subjects: plan.subjects.clone(),
                entities: vec![None; plan.subjects.len()],
            }
        }
        Publication::Experience(request) => {
            let recorded = retrying!(service.submit_experience(
                author,
                &metadata(WriteOperation::SubmitExperience),
                request.as_ref().clone()
            ))?;
            outcome.experience = true;
            outcome.usage_events = recorded.usage_ids.len() as u64;
            outcome.revision_id = recorded.revision_id;
            Targets {
                content_id: recorded.id,
                claims: Vec::new(),
                subjects: plan.subjects.clone(),
                entities: vec![None; plan.subjects.len()],
            }
        }
    };
    outcome.content_id = targets.content_id.clone();
    for action in plan.before_revision {
        run_action(&service, &mut targets, action, &mut outcome).await?;
    }
    if let Some(mut revision) = plan.revision {
        revision.revision_of = Some(targets.content_id.clone());
        let published =
            retrying!(service.publish(author, &metadata(WriteOperation::Publish), revision.as_ref().clone()))?;
        outcome.revisions += 1;
        outcome.claim_links += published.claims.len() as u64;
        outcome.claims += published.claims.iter().filter(|claim| !claim.matched_existing).count() as u64;
        outcome.revision_id = published.revision_id;
        targets.claims = published.claims.into_iter().map(|claim| claim.id).collect();
    }
    for action in plan.after_revision {
        run_action(&service, &mut targets, action, &mut outcome).await?;
    }
    Ok(outcome)
}

/// Items planned and written between two points where earlier items become referable: a twentieth of the run, at
/// least 16 and at most 256, so that small runs have relations and experiences too.
fn batch_size(items: u64) -> u64 {
    (items / 20).clamp(16, 256)
}

/// Seeds `service` with `options.items` items of realistic synthetic knowledge and evidence, calling
/// `progress(done, total)` as items complete. Writes go only through the service's public use cases.
pub async fn seed(
    service: &Service,
    options: SeedOptions,
    progress: impl Fn(u64, u64),
) -> Result<SeedReport, ServiceError> {
    let started = Instant::now();
    let concurrency = options.concurrency.max(1);
    let total = options.items;
    progress(0, total);
    let population = create_population(service, options.seed, options.controller_count(), concurrency).await?;
    let weights = topic_weights(options.seed);
    let proven = ProvenSchedule::new(total);
    let mut report = SeedReport {
        controllers: population.len() as u64,
        agents: population.iter().map(|controller| controller.agents.len() as u64).sum(),
        ..SeedReport::default()
    };
    let mut by_topic: Vec<Vec<String>> = vec![Vec::new(); TOPICS.len()];
    let mut entities: BTreeSet<(String, String)> = BTreeSet::new();
    let mut proven_revisions: Vec<String> = Vec::new();
    let mut done = 0_u64;
    let mut next = 0_u64;
    while next < total {
        let end = (next + batch_size(total)).min(total);
        let mut running = JoinSet::new();
        let mut finished: Vec<ItemOutcome> = Vec::with_capacity(usize::try_from(end - next).unwrap_or(0));
        for index in next..end {
            let plan = plan_item(
                options.seed,
                index,
                &population,
                &weights,
                &by_topic,
                proven.includes(index),
            );
            entities.extend(plan.subjects.iter().cloned());
            while running.len() >= concurrency {
                finished.push(joined(running.join_next().await)?);
                done += 1;
                progress(done, total);
            }
            running.spawn(run_item(service.clone(), plan));
        }
        while !running.is_empty() {
            finished.push(joined(running.join_next().await)?);
            done += 1;
            progress(done, total);
        }
        // Later items may refer to these, in index order so that the references do not depend on timing.
        finished.sort_by_key(|outcome| outcome.index);
        for outcome in finished {
            by_topic[outcome.topic].push(outcome.content_id.clone());
            report.items += 1;
            report.experiences += u64::from(outcome.experience);
            report.revisions += outcome.revisions;
            report.claims += outcome.claims;
            report.claim_links += outcome.claim_links;
            report.relations += outcome.relations;
            report.usage_events += outcome.usage_events;
            report.reviews += outcome.reviews;
            report.ratings += outcome.ratings;
            report.planned_disputed += u64::from(outcome.disputed);
            if outcome.proven {
                report.planned_high_confidence += 1;
                proven_revisions.push(outcome.revision_id);
            }
        }
        next = end;
    }
    for revision in proven_revisions {
        let revision = PublicId::parse(&revision)
            .map_err(|error| ServiceError::internal(format!("a published revision ID is malformed: {error}")))?;
        if service.trust_summary(&revision).await?.status == crate::domain::TrustStatus::HighConfidence {
            report.high_confidence += 1;
        }
    }
    report.entities = entities.len() as u64;
    report.elapsed = started.elapsed();
    Ok(report)
}

// ---------------------------------------------------------------- population

const ORGANIZATION_PREFIXES: &[&str] = &[
    "Northwind",
    "Bluebird",
    "Granite",
    "Harbor",
    "Juniper",
    "Lumen",
    "Maple",
    "Orbit",
    "Pioneer",
    "Quartz",
    "Redwood",
    "Summit",
    "Tidal",
    "Vertex",
    "Willow",
    "Aurora",
    "Cedar",
    "Delta",
    "Ember",
    "Falcon",
    "Beacon",
    "Copper",
    "Meridian",
    "Saffron",
];
const ORGANIZATION_SUFFIXES: &[&str] = &[
    "Logistics",
    "Health",
    "Labs",
    "Foods",
    "Bank",
    "Studios",
    "Analytics",
    "Retail",
    "Energy",
    "Travel",
    "Robotics",
    "Insurance",
    "Media",
    "Bakery",
    "Consulting",
    "Software",
    "Clinics",
    "Freight",
];
const FIRST_NAMES: &[&str] = &[
    "Ada", "Bruno", "Chen", "Dara", "Elif", "Femi", "Greta", "Hiro", "Ines", "Jonas", "Kavya", "Luis", "Maya", "Nils",
    "Olu", "Priya", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Viktor", "Wen", "Yara", "Zoe",
];
const LAST_NAMES: &[&str] = &[
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Novak",
    "Haddad",
    "Kowalski",
    "Fernandes",
    "Mensah",
    "Schmidt",
    "Rossi",
    "Nakamura",
    "Olsen",
    "Petrov",
    "Quispe",
    "Reyes",
    "Singh",
    "Takahashi",
    "Varga",
    "Weber",
];
const AGENT_ROLES: &[&str] = &[
    "research",
    "support",
    "coding",
    "operations",
    "finance",
    "kitchen",
    "review",
    "data",
    "planning",
    "writing",
];

/// A root controller's agents, authenticated as the MCP layer would hand them to the service.
#[derive(Debug, Clone)]
struct Controller {
    agents: Vec<AuthenticatedActor>,
}

async fn create_controller(service: Service, seed: u64, index: u64) -> Result<Controller, ServiceError> {
    let mut random = SplitMix64::derived(seed, 1, index);
    let (actor_type, name) = if random.chance(0.6) {
        (
            ActorType::Organization,
            format!(
                "{} {} (team {index})",
                random.pick(ORGANIZATION_PREFIXES),
                random.pick(ORGANIZATION_SUFFIXES)
            ),
        )
    } else {
        (
            ActorType::User,
            format!("{} {}", random.pick(FIRST_NAMES), random.pick(LAST_NAMES)),
        )
    };
    let controller = retrying!(service.create_actor(NewActor {
        actor_type,
        display_name: name.clone(),
        controller: None,
    }))?;
    let agent_count = 1 + random.weighted(&[35, 30, 18, 10, 7]);
    let mut agents = Vec::with_capacity(agent_count);
    for number in 1..=agent_count {
        let agent = retrying!(service.create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: format!("{name} {} agent {number}", random.pick(AGENT_ROLES)),
            controller: Some(controller.id.clone()),
        }))?;
        let scopes = ScopeSet::parse_list("read,publish,usage,review,rate")
            .map_err(|unknown| ServiceError::internal(format!("unknown scope {unknown}")))?;
        let issued = retrying!(service.create_api_key(NewApiKey {
            actor_id: agent.id.clone(),
            scopes: scopes.clone(),
            expires_at: None,
            label: Some("seeded".to_owned()),
        }))?;
        agents.push(service.authenticate(&issued.secret).await?);
    }
    Ok(Controller { agents })
}

async fn create_population(
    service: &Service,
    seed: u64,
    count: u64,
    concurrency: usize,
) -> Result<Vec<Controller>, ServiceError> {
    let mut created: Vec<(u64, Controller)> = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut running = JoinSet::new();
    for index in 0..count {
        while running.len() >= concurrency {
            created.push(joined(running.join_next().await)?);
        }
        let service = service.clone();
        running.spawn(async move {
            create_controller(service, seed, index)
                .await
                .map(|controller| (index, controller))
        });
    }
    while !running.is_empty() {
        created.push(joined(running.join_next().await)?);
    }
    created.sort_by_key(|(index, _)| *index);
    Ok(created.into_iter().map(|(_, controller)| controller).collect())
}

/// The result of a finished task, with a panic or cancellation turned into an internal error.
fn joined<T>(result: Option<Result<Result<T, ServiceError>, tokio::task::JoinError>>) -> Result<T, ServiceError> {
    match result {
        Some(Ok(outcome)) => outcome,
        Some(Err(error)) => Err(ServiceError::internal(format!("a seeding task failed: {error}"))),
        None => Err(ServiceError::internal("no seeding task was running")),
    }
}

// ---------------------------------------------------------------- plans

/// What an evidence record is about: the item, one of its claims, or one of its subjects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    Content,
    Claim(usize),
    Entity(usize),
}

/// One evidence write; the target is filled in when the item's IDs are known.
#[derive(Debug, Clone)]
enum Action {
    Usage {
        caller: AuthenticatedActor,
        on: On,
        request: UsageRequest,
        /// A review by the same agent, grounded in this usage.
        then_review: Option<ReviewRequest>,
    },
    Review {
        caller: AuthenticatedActor,
        request: ReviewRequest,
    },
    Rate {
        caller: AuthenticatedActor,
        on: On,
        request: RateRequest,
    },
}

#[derive(Debug, Clone)]
enum Publication {
    Content(Box<PublishRequest>),
    Experience(Box<ExperienceRequest>),
}

/// Everything one item's task writes, in order.
#[derive(Debug, Clone)]
struct ItemPlan {
    index: u64,
    topic: usize,
    author: AuthenticatedActor,
    publication: Publication,
    /// Subjects as (entity type, name), for evidence on entities.
    subjects: Vec<(String, String)>,
    /// A second revision by the author (its `revision_of` is filled in once the item exists).
    revision: Option<Box<PublishRequest>>,
    before_revision: Vec<Action>,
    after_revision: Vec<Action>,
    proven: bool,
    disputed: bool,
    relations: u64,
}

/// What one item's task wrote.
#[derive(Debug, Clone, Default)]
struct ItemOutcome {
    index: u64,
    topic: usize,
    content_id: String,
    revision_id: String,
    experience: bool,
    revisions: u64,
    claims: u64,
    claim_links: u64,
    relations: u64,
    usage_events: u64,
    reviews: u64,
    ratings: u64,
    proven: bool,
    disputed: bool,
}

/// Which items get enough independent real-world successes to reach `high_confidence`: a handful, evenly spread.
#[derive(Debug, Clone, Copy)]
struct ProvenSchedule {
    stride: u64,
    count: u64,
}

impl ProvenSchedule {
    fn new(items: u64) -> ProvenSchedule {
        let count = (items / 2000).clamp(5, 50).min(items);
        ProvenSchedule {
            stride: (items / count.max(1)).max(1),
            count,
        }
    }

    fn includes(&self, index: u64) -> bool {
        index % self.stride == self.stride / 2 && index / self.stride < self.count
    }
}

/// Per-topic popularity weights (1–4), fixed by the seed, so that some topics are much more common than others.
fn topic_weights(seed: u64) -> Vec<u32> {
    (0..TOPICS.len() as u64)
        .map(|index| 1 + u32::try_from(SplitMix64::derived(seed, 2, index).below(4)).unwrap_or(0))
        .collect()
}

/// `count` distinct controller indices other than `except`, uniformly chosen.
fn other_controllers(random: &mut SplitMix64, total: usize, except: usize, count: usize) -> Vec<usize> {
    let count = count.min(total.saturating_sub(1));
    let mut chosen: Vec<usize> = Vec::with_capacity(count);
    while chosen.len() < count {
        let candidate = random.index(total);
        if candidate != except && !chosen.contains(&candidate) {
            chosen.push(candidate);
        }
    }
    chosen
}

fn agent_of(population: &[Controller], controller: usize, random: &mut SplitMix64) -> AuthenticatedActor {
    let agents = &population[controller].agents;
    agents[random.index(agents.len())].clone()
}

/// A usage context: where the knowledge was used.
fn context_for(topic: &Topic, random: &mut SplitMix64) -> Value {
    if topic.is_technical() {
        json!({
            "environment": random.pick(&["production", "staging", "development", "ci"]),
            "scale": random.pick(&["small", "medium", "large"]),
        })
    } else {
        json!({
            "setting": random.pick(&["office", "home", "remote", "on_site"]),
            "team_size": random.pick(&["solo", "small", "large"]),
        })
    }
}

fn usage_note(result: &str, focus: &Focus, random: &mut SplitMix64) -> String {
    let template = match result {
        "success" => random.text(&[
            "Worked as described; the check of the {term} caught one problem early.",
            "Followed the steps to {task}; no surprises.",
            "Worked with {entity} on the first try.",
        ]),
        "partial" => random.text(&[
            "Worked after adjusting the {term}.",
            "Most steps worked; the part about the {term2} did not apply to our setup.",
        ]),
        "failure" => random.text(&[
            "Did not work for us: the {term} behaved differently with {entity2}.",
            "Failed at the step about the {term}; we had to roll back.",
        ]),
        _ => "Applied it; too early to tell whether the {term} is fixed.",
    };
    fill(template, focus, random)
}

fn usage_result(random: &mut SplitMix64) -> &'static str {
    ["success", "partial", "failure", "unknown"][random.weighted(&[66, 12, 12, 10])]
}

fn usage_request(result: &str, real_world: bool, focus: &Focus, random: &mut SplitMix64) -> UsageRequest {
    let usage_type = if real_world {
        random.text(&["implementation", "execution", "configuration", "operation"])
    } else {
        "test"
    };
    UsageRequest {
        target: String::new(),
        usage_type: usage_type.to_owned(),
        result: result.to_owned(),
        real_world_use: real_world,
        context: Some(context_for(focus.topic, random)),
        metrics: random
            .chance(0.4)
            .then(|| json!({ "duration_minutes": random.between(1, 240) })),
        note: random.chance(0.35).then(|| usage_note(result, focus, random)),
        idempotency_key: None,
    }
}

fn review_request(verdict: &str, focus: &Focus, random: &mut SplitMix64) -> ReviewRequest {
    let rationale = match verdict {
        "confirmed" | "mostly_correct" => "Matches what we see with {entity}; the part about the {term} is accurate.",
        "outdated" => "This was right for older versions of {entity}; the {term} works differently now.",
        "cannot_verify" => "We could not reproduce the setup needed to check the {term}.",
        _ => "The advice on the {term} does not hold for {entity2} and may mislead readers.",
    };
    ReviewRequest {
        target: String::new(),
        verdict: verdict.to_owned(),
        confidence: 0.5 + 0.05 * random.between(0, 9) as f64,
        rationale_markdown: Some(fill(rationale, focus, random)),
        sources: Vec::new(),
        based_on_usage: None,
        idempotency_key: None,
    }
}

fn rate_request(dimension: &str, quality: f64, focus: &Focus, random: &mut SplitMix64) -> RateRequest {
    let noise = random.unit() * 30.0 - 15.0;
    RateRequest {
        target: String::new(),
        context: Some(context_for(focus.topic, random)),
        dimension: dimension.to_owned(),
        score: (quality + noise).clamp(0.0, 100.0).round(),
        confidence: 0.4 + 0.1 * random.between(0, 6) as f64,
        based_on_usage: None,
        rationale_markdown: random
            .chance(0.3)
            .then(|| fill("Rated after using it for {name} with {entity}.", focus, random)),
        idempotency_key: None,
    }
}

/// A stable quality (20–95) of a named thing, so that ratings of one entity agree roughly across raters.
fn quality_of(seed: u64, name: &str) -> f64 {
    let hash = name.bytes().fold(0xCBF2_9CE4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3)
    });
    20.0 + SplitMix64::derived(seed, 3, hash).below(76) as f64
}

/// Plans item `index`: its text, its references to earlier items (`earlier`, by topic) and its evidence.
fn plan_item(
    seed: u64,
    index: u64,
    population: &[Controller],
    weights: &[u32],
    earlier: &[Vec<String>],
    proven: bool,
) -> ItemPlan {
    let mut random = SplitMix64::derived(seed, 4, index);
    let topic_index = random.weighted(weights);
    let topic: &'static Topic = &TOPICS[topic_index];
    let focus = Focus::choose(topic, &mut random);
    let author_controller = {
        // Skewed: a few controllers publish much more than the rest.
        let draw = random.unit();
        ((draw * draw * population.len() as f64) as usize).min(population.len() - 1)
    };
    let author = agent_of(population, author_controller, &mut random);
    let same_topic = &earlier[topic_index];
    let mut subjects = vec![(focus.entity.1.to_owned(), focus.entity.0.to_owned())];
    if random.chance(0.35) {
        subjects.push((focus.entity2.1.to_owned(), focus.entity2.0.to_owned()));
    }
    let subject_references: Vec<SubjectReference> = subjects
        .iter()
        .map(|(entity_type, name)| SubjectReference::Named {
            name: name.clone(),
            entity_type: entity_type.clone(),
            aliases: Vec::new(),
            description: Some(format!(
                "{name}, a {} used for {}.",
                entity_type.replace('_', " "),
                topic.name
            )),
        })
        .collect();
    let mut tags = vec![topic.tag.to_owned(), topic.area.to_owned()];
    if random.chance(0.3) {
        tags.push(slug(focus.term));
    }
    if random.chance(0.15) {
        tags.push(slug(focus.entity.0));
    }

    let experience = !proven && !same_topic.is_empty() && random.chance(0.04);
    let publication = if experience {
        let result = ["success", "partial", "failure"][random.weighted(&[70, 20, 10])];
        let used = (0..random.between(1, 3))
            .map(|_| UsedRequest {
                id: same_topic[random.index(same_topic.len())].clone(),
                result: if random.chance(0.8) {
                    result.to_owned()
                } else {
                    usage_result(&mut random).to_owned()
                },
                note: random.chance(0.3).then(|| usage_note(result, &focus, &mut random)),
            })
            .collect();
        let title = fill(
            random.text(&[
                "Experience: {task} with {entity}",
                "What happened when we tried to {task}",
                "Field report: the {term} in {entity}",
            ]),
            &focus,
            &mut random,
        );
        let summary = fill(
            random.text(&[
                "We tried to {task} with {entity}; this is what worked and what did not.",
                "A first-hand account of the {term} in a real setup.",
            ]),
            &focus,
            &mut random,
        );
        let target = body_target(&mut random);
        let mut text = body(&focus, &summary, "note", None, target, &mut random);
        text.push_str(&format!(
            "\n## Outcome\n\n{}\n",
            usage_note(result, &focus, &mut random)
        ));
        Publication::Experience(Box::new(ExperienceRequest {
            title,
            summary,
            body_markdown: text,
            subjects: subject_references.clone(),
            result: result.to_owned(),
            real_world_use: random.chance(0.7),
            context: Some(context_for(topic, &mut random)),
            configuration: None,
            observations: random.chance(0.5).then(
                || json!({ "surprises": fill("The {term} needed more attention than expected.", &focus, &mut random) }),
            ),
            metrics: random
                .chance(0.5)
                .then(|| json!({ "hours_spent": random.between(1, 40) })),
            used,
            tags: tags.clone(),
            space: None,
            language: Some("en".to_owned()),
            idempotency_key: None,
        }))
    } else {
        let types = if topic.is_technical() {
            TECHNICAL_TYPES
        } else {
            GENERAL_TYPES
        };
        let weights: Vec<u32> = types.iter().map(|(_, weight)| *weight).collect();
        let mut content_type = types[random.weighted(&weights)].0;
        if topic.tag == "llm-prompting" && random.chance(0.4) {
            content_type = "prompt";
        }
        let language = match content_type {
            "code" => Some(random.text(LANGUAGES)),
            _ => None,
        };
        let structured_data = match content_type {
            "code" => Some(json!({ "language": language.unwrap_or("python"), "license": "MIT" })),
            "prompt" => Some(json!({ "target_model": focus.entity.0 })),
            _ => None,
        };
        let title = fill(random.text(title_templates(content_type)), &focus, &mut random);
        let summary = fill(random.text(SUMMARIES), &focus, &mut random);
        let target = body_target(&mut random);
        let body_markdown = body(&focus, &summary, content_type, language, target, &mut random);
        let claim_count = random.weighted(&[15, 20, 25, 20, 12, 8]);
        let mut claims: Vec<String> = Vec::new();
        for _ in 0..claim_count {
            let claim = if random.chance(0.55) {
                (random.text(topic.claims)).to_owned()
            } else {
                fill(random.text(CLAIM_TEMPLATES), &focus, &mut random)
            };
            if !claims.contains(&claim) {
                claims.push(claim);
            }
        }
        let sources = if random.chance(0.25) {
            vec![SourceReference::Url {
                url: format!("https://docs.example.org/{}/{}", topic.tag, slug(focus.term)),
                title: Some(format!("{} notes on the {}", focus.entity.0, focus.term)),
            }]
        } else {
            Vec::new()
        };
        let mut relations = Vec::new();
        if !same_topic.is_empty() && !proven {
            match random.weighted(&[900, 50, 15, 10, 20, 5]) {
                1 => relations.push(RelationRequest {
                    relation_type: "alternative_to".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: Some((random.text(&ALTERNATIVE_REASONS)).to_owned()),
                }),
                2 => relations.push(RelationRequest {
                    relation_type: "corrects".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: None,
                }),
                3 => relations.push(RelationRequest {
                    relation_type: "supersedes".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: None,
                }),
                4 => relations.push(RelationRequest {
                    relation_type: "derived_from".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: None,
                }),
                5 => relations.push(RelationRequest {
                    relation_type: "known_issue_of".to_owned(),
                    target: same_topic[random.index(same_topic.len())].clone(),
                    reason: None,
                }),
                _ => {}
            }
        }
        Publication::Content(Box::new(PublishRequest {
            content_type: content_type.to_owned(),
            title,
            summary,
            body_markdown,
            structured_data,
            revision_of: None,
            change_note: None,
            subjects: subject_references.clone(),
            claims,
            sources,
            relations,
            tags: tags.clone(),
            space: None,
            language: Some("en".to_owned()),
            idempotency_key: None,
        }))
    };
    let relations = match &publication {
        Publication::Content(request) => request.relations.len() as u64,
        Publication::Experience(_) => 0,
    };
    let claim_count = match &publication {
        Publication::Content(request) => request.claims.len(),
        Publication::Experience(_) => 0,
    };

    // Evidence.
    let mut actions: Vec<Action> = Vec::new();
    let disputed = !proven && random.chance(0.015);
    let controllers = population.len();
    if proven {
        let count = 8 + random.index(4);
        let parties = other_controllers(&mut random, controllers, author_controller, count);
        for controller in parties {
            let caller = agent_of(population, controller, &mut random);
            actions.push(Action::Usage {
                caller,
                on: On::Content,
                request: usage_request("success", true, &focus, &mut random),
                then_review: None,
            });
        }
        if random.chance(0.5) {
            let reviewer = other_controllers(&mut random, controllers, author_controller, 1);
            if let Some(controller) = reviewer.first() {
                actions.push(Action::Review {
                    caller: agent_of(population, *controller, &mut random),
                    request: review_request("confirmed", &focus, &mut random),
                });
            }
        }
    } else if disputed {
        let parties = other_controllers(&mut random, controllers, author_controller, 2);
        if let Some(controller) = parties.first() {
            actions.push(Action::Usage {
                caller: agent_of(population, *controller, &mut random),
                on: On::Content,
                request: usage_request("failure", true, &focus, &mut random),
                then_review: None,
            });
        }
        if random.chance(0.4)
            && let Some(controller) = parties.get(1)
        {
            actions.push(Action::Usage {
                caller: agent_of(population, *controller, &mut random),
                on: On::Content,
                request: usage_request("success", true, &focus, &mut random),
                then_review: None,
            });
        }
    } else {
        if random.chance(0.5) {
            let count = 1 + random.weighted(&[40, 30, 18, 12]);
            for controller in other_controllers(&mut random, controllers, author_controller, count) {
                let result = usage_result(&mut random);
                let real_world = random.chance(0.55);
                actions.push(Action::Usage {
                    caller: agent_of(population, controller, &mut random),
                    on: On::Content,
                    request: usage_request(result, real_world, &focus, &mut random),
                    then_review: None,
                });
            }
        }
        if random.chance(0.12) {
            let verdict = [
                "confirmed",
                "mostly_correct",
                "questionable",
                "misleading",
                "contradicted",
                "outdated",
                "cannot_verify",
            ][random.weighted(&[45, 25, 8, 3, 5, 6, 8])];
            for controller in other_controllers(&mut random, controllers, author_controller, 1) {
                let caller = agent_of(population, controller, &mut random);
                let review = review_request(verdict, &focus, &mut random);
                if random.chance(0.5) {
                    // Grounded: the reviewer used it first.
                    let result = if matches!(verdict, "confirmed" | "mostly_correct") {
                        "success"
                    } else {
                        "partial"
                    };
                    let real_world = random.chance(0.5);
                    actions.push(Action::Usage {
                        caller,
                        on: On::Content,
                        request: usage_request(result, real_world, &focus, &mut random),
                        then_review: Some(review),
                    });
                } else {
                    actions.push(Action::Review {
                        caller,
                        request: review,
                    });
                }
            }
        }
        if random.chance(0.08) {
            let quality = quality_of(seed, &format!("content {index}"));
            let count = 1 + random.index(3);
            for controller in other_controllers(&mut random, controllers, author_controller, count) {
                let dimension = random.text(&["reliability", "clarity", "completeness", "time_saved"]);
                actions.push(Action::Rate {
                    caller: agent_of(population, controller, &mut random),
                    on: On::Content,
                    request: rate_request(dimension, quality, &focus, &mut random),
                });
            }
        }
    }
    if claim_count > 0 && random.chance(0.08) {
        let claim = random.index(claim_count);
        for controller in other_controllers(&mut random, controllers, author_controller, 1) {
            let result = usage_result(&mut random);
            let real_world = random.chance(0.5);
            actions.push(Action::Usage {
                caller: agent_of(population, controller, &mut random),
                on: On::Claim(claim),
                request: usage_request(result, real_world, &focus, &mut random),
                then_review: None,
            });
        }
    }
    if random.chance(0.06) {
        let subject = random.index(subjects.len());
        let quality = quality_of(seed, &subjects[subject].1);
        let count = 1 + random.index(2);
        for controller in other_controllers(&mut random, controllers, author_controller, count) {
            let dimension = random.text(&[
                "reliability",
                "ease_of_use",
                "cost_efficiency",
                "performance",
                "documentation_quality",
            ]);
            actions.push(Action::Rate {
                caller: agent_of(population, controller, &mut random),
                on: On::Entity(subject),
                request: rate_request(dimension, quality, &focus, &mut random),
            });
        }
    }
    if random.chance(0.03) {
        let subject = random.index(subjects.len());
        for controller in other_controllers(&mut random, controllers, author_controller, 1) {
            let result = usage_result(&mut random);
            actions.push(Action::Usage {
                caller: agent_of(population, controller, &mut random),
                on: On::Entity(subject),
                request: usage_request(result, true, &focus, &mut random),
                then_review: None,
            });
        }
    }

    // Some items get a second revision, part of the way through their evidence.
    let revision = match &publication {
        Publication::Content(request) if !proven && !disputed && random.chance(0.05) => {
            let mut revised = request.as_ref().clone();
            revised.summary = format!("{} Updated with what we learned since.", revised.summary);
            revised
                .body_markdown
                .push_str(&format!("\n## Update\n\n{}\n", paragraph(&focus, &mut random, 2, 4)));
            revised.change_note = Some(fill(
                "Added what we learned about the {term} since.",
                &focus,
                &mut random,
            ));
            revised.relations = Vec::new();
            if random.chance(0.5) {
                revised
                    .claims
                    .push(fill(random.text(CLAIM_TEMPLATES), &focus, &mut random));
            }
            Some(Box::new(revised))
        }
        _ => None,
    };
    let split = if revision.is_some() {
        random.index(actions.len() + 1)
    } else {
        actions.len()
    };
    let after_revision = actions.split_off(split);
    ItemPlan {
        index,
        topic: topic_index,
        author,
        publication,
        subjects,
        revision,
        before_revision: actions,
        after_revision,
        proven,
        disputed,
        relations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::text::{is_lower_snake_case, normalize_tag};
    use crate::service::scan::ContentScanner;

    #[test]
    fn the_generator_depends_only_on_its_seed() {
        let draw = |seed| {
            let mut random = SplitMix64::derived(seed, 4, 17);
            (0..8).map(|_| random.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        let mut random = SplitMix64::new(5);
        assert!((0..1000).all(|_| random.below(7) < 7));
        assert!((0..1000).all(|_| (3..=9).contains(&random.between(3, 9))));
        assert_eq!(
            sample_query(&mut SplitMix64::new(9), 3),
            sample_query(&mut SplitMix64::new(9), 3)
        );
    }

    #[test]
    fn templates_fill_every_slot_and_keep_capitals() {
        let topic = &TOPICS[0];
        let mut random = SplitMix64::new(3);
        let focus = Focus::choose(topic, &mut random);
        let filled = fill(
            "{Task} with {entity}: the {term} and the {term2} ({n} min)",
            &focus,
            &mut random,
        );
        assert!(!filled.contains('{') && !filled.contains('}'), "{filled}");
        assert!(
            filled.starts_with(|character: char| character.is_uppercase()),
            "{filled}"
        );
        assert!(filled.contains(focus.entity.0));
        assert_eq!(slug("Let's Encrypt: ACME challenge"), "let-s-encrypt-acme-challenge");
    }

    #[test]
    fn the_vocabulary_is_valid_input_for_publish() {
        assert!((60..=100).contains(&TOPICS.len()));
        for topic in TOPICS {
            assert_eq!(normalize_tag(topic.tag).as_deref(), Ok(topic.tag), "tag {}", topic.tag);
            assert_eq!(
                normalize_tag(topic.area).as_deref(),
                Ok(topic.area),
                "area {}",
                topic.area
            );
            assert!(topic.entities.len() >= 2 && topic.terms.len() >= 2 && !topic.tasks.is_empty());
            assert!(!topic.claims.is_empty());
            for (name, entity_type) in topic.entities {
                assert!(is_lower_snake_case(entity_type), "entity type {entity_type} of {name}");
                assert!(normalize_tag(&slug(name)).is_ok(), "entity tag {name}");
            }
            for term in topic.terms {
                assert_eq!(normalize_tag(&slug(term)), Ok(slug(term)), "term tag {term}");
            }
        }
    }

    #[test]
    fn generated_text_passes_the_content_scan_and_stays_within_size() {
        let scanner = ContentScanner::new();
        let mut random = SplitMix64::new(11);
        for round in 0..400 {
            let topic = &TOPICS[round % TOPICS.len()];
            let focus = Focus::choose(topic, &mut random);
            let language = (round % 5 == 0).then(|| random.text(LANGUAGES));
            let summary = fill(random.text(SUMMARIES), &focus, &mut random);
            let target = body_target(&mut random);
            let text = body(&focus, &summary, "procedure", language, target, &mut random);
            assert!((450..=7000).contains(&text.len()), "body of {} bytes", text.len());
            let claim = fill(random.text(CLAIM_TEMPLATES), &focus, &mut random);
            for (field, text) in [("body", text.as_str()), ("summary", &summary), ("claim", &claim)] {
                assert_eq!(scanner.scan_text(field, text), None, "{field}: {text}");
            }
        }
        for topic in TOPICS {
            for claim in topic.claims {
                assert_eq!(scanner.scan_text("claim", claim), None, "{claim}");
            }
        }
    }

    #[test]
    fn a_handful_of_items_is_planned_to_be_proven() {
        let schedule = ProvenSchedule::new(100_000);
        assert_eq!((0..100_000).filter(|index| schedule.includes(*index)).count(), 50);
        let small = ProvenSchedule::new(120);
        assert_eq!((0..120).filter(|index| small.includes(*index)).count(), 5);
        let tiny = ProvenSchedule::new(3);
        assert_eq!((0..3).filter(|index| tiny.includes(*index)).count(), 3);
    }
}
