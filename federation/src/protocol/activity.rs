//! Activities: the envelope every inbox delivery carries, and the peering activities between instance actors
//! (`Follow`, `Accept`, `Reject`, `Undo` of a `Follow`, `Update` of the instance actor).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::actor::ServiceActor;

/// The activity types interai understands. Anything else parses as [`ActivityKind::Other`], so that an inbox
/// can refuse it by name instead of failing to parse.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ActivityKind {
    /// A request to peer.
    Follow,
    /// The peer agreed.
    Accept,
    /// The peer declined.
    Reject,
    /// Withdraws an earlier activity (here: a `Follow`).
    Undo,
    /// A changed object (here: the instance actor, for key rotation).
    Update,
    /// A new object.
    Create,
    /// A removed object.
    Delete,
    /// A type interai does not handle.
    Other(String),
}

impl ActivityKind {
    /// The ActivityStreams type name.
    pub fn as_str(&self) -> &str {
        match self {
            ActivityKind::Follow => "Follow",
            ActivityKind::Accept => "Accept",
            ActivityKind::Reject => "Reject",
            ActivityKind::Undo => "Undo",
            ActivityKind::Update => "Update",
            ActivityKind::Create => "Create",
            ActivityKind::Delete => "Delete",
            ActivityKind::Other(name) => name,
        }
    }

    fn from_name(name: &str) -> ActivityKind {
        match name {
            "Follow" => ActivityKind::Follow,
            "Accept" => ActivityKind::Accept,
            "Reject" => ActivityKind::Reject,
            "Undo" => ActivityKind::Undo,
            "Update" => ActivityKind::Update,
            "Create" => ActivityKind::Create,
            "Delete" => ActivityKind::Delete,
            other => ActivityKind::Other(other.to_owned()),
        }
    }

    /// Whether this activity belongs to the peering handshake, which a peer may send before it is active.
    pub fn is_peering(&self) -> bool {
        matches!(
            self,
            ActivityKind::Follow | ActivityKind::Accept | ActivityKind::Reject | ActivityKind::Undo
        )
    }
}

impl Serialize for ActivityKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ActivityKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ActivityKind, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(ActivityKind::from_name(&name))
    }
}

/// An activity as delivered to an inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    /// The JSON-LD context.
    #[serde(rename = "@context", default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// A URL under the sender's realm, unique per activity (`https://{realm}/activities/{id}`).
    pub id: String,
    /// The type.
    #[serde(rename = "type")]
    pub kind: ActivityKind,
    /// The sending instance actor.
    pub actor: String,
    /// The object: a URL, or an embedded object or activity.
    pub object: ActivityObject,
    /// Addressees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<String>,
    /// When it was published (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
}

/// The `object` of an activity: a reference or an embedded document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ActivityObject {
    /// A URL.
    Reference(String),
    /// An embedded activity (the `Follow` an `Accept`, `Reject` or `Undo` answers).
    Activity(Box<Activity>),
    /// An embedded instance actor (the object of an `Update`).
    Actor(Box<ServiceActor>),
    /// Any other embedded object, kept as JSON for the layer that understands it.
    Other(Value),
}

impl ActivityObject {
    /// The object's ID: the reference itself, or the embedded object's `id`.
    pub fn id(&self) -> Option<&str> {
        match self {
            ActivityObject::Reference(id) => Some(id),
            ActivityObject::Activity(activity) => Some(&activity.id),
            ActivityObject::Actor(actor) => Some(&actor.id),
            ActivityObject::Other(value) => value.get("id").and_then(Value::as_str),
        }
    }
}

impl Activity {
    /// A `Follow` of `followed` by `actor`.
    pub fn follow(id: String, actor: String, followed: String, published: String) -> Activity {
        Activity {
            context: super::context::document_context(),
            id,
            kind: ActivityKind::Follow,
            actor,
            to: vec![followed.clone()],
            object: ActivityObject::Reference(followed),
            published: Some(published),
        }
    }

    /// An answer (`Accept`, `Reject` or `Undo`) about `follow`, embedded so the receiver need not look it up.
    pub fn answering(kind: ActivityKind, id: String, actor: String, follow: Activity, published: String) -> Activity {
        let to = if follow.actor == actor {
            follow.to.clone()
        } else {
            vec![follow.actor.clone()]
        };
        let mut embedded = follow;
        embedded.context = Value::Null;
        Activity {
            context: super::context::document_context(),
            id,
            kind,
            actor,
            object: ActivityObject::Activity(Box::new(embedded)),
            to,
            published: Some(published),
        }
    }

    /// An `Update` of the sender's own instance actor (announcing its keys).
    pub fn update_actor(id: String, actor_document: ServiceActor, published: String) -> Activity {
        let mut embedded = actor_document;
        embedded.context = Value::Null;
        Activity {
            context: super::context::document_context(),
            id,
            kind: ActivityKind::Update,
            actor: embedded.id.clone(),
            object: ActivityObject::Actor(Box::new(embedded)),
            to: vec!["https://www.w3.org/ns/activitystreams#Public".to_owned()],
            published: Some(published),
        }
    }

    /// The embedded activity, when the object is one.
    pub fn embedded_activity(&self) -> Option<&Activity> {
        match &self.object {
            ActivityObject::Activity(activity) => Some(activity),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_follow_and_its_accept_round_trip_with_the_follow_embedded() {
        let follow = Activity::follow(
            "https://alpha.test/activities/1".to_owned(),
            "https://alpha.test/actor".to_owned(),
            "https://beta.test/actor".to_owned(),
            "2027-01-15T08:00:00Z".to_owned(),
        );
        let accept = Activity::answering(
            ActivityKind::Accept,
            "https://beta.test/activities/9".to_owned(),
            "https://beta.test/actor".to_owned(),
            follow.clone(),
            "2027-01-15T08:00:01Z".to_owned(),
        );
        let json = serde_json::to_string(&accept).expect("serializes");
        let read: Activity = serde_json::from_str(&json).expect("parses");
        assert_eq!(read.kind, ActivityKind::Accept);
        assert_eq!(read.to, ["https://alpha.test/actor"]);
        let embedded = read.embedded_activity().expect("the follow is embedded");
        assert_eq!(embedded.kind, ActivityKind::Follow);
        assert_eq!(embedded.id, follow.id);
        assert_eq!(embedded.object.id(), Some("https://beta.test/actor"));
    }

    #[test]
    fn an_unknown_type_parses_so_that_it_can_be_refused_by_name() {
        let json = r#"{"id":"https://alpha.test/activities/2","type":"Like","actor":"https://alpha.test/actor","object":"https://beta.test/o/cnt_1"}"#;
        let activity: Activity = serde_json::from_str(json).expect("parses");
        assert_eq!(activity.kind, ActivityKind::Other("Like".to_owned()));
        assert!(!activity.kind.is_peering());
        assert!(ActivityKind::Undo.is_peering());
        assert!(!ActivityKind::Update.is_peering());
    }
}
