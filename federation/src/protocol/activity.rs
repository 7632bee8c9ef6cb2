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
///
/// Read as an untagged enum would read it (the first variant that fits, in this order), but by hand
/// ([`ActivityObject::from_json`]): serde's untagged enums copy the whole embedded document into a buffer and then
/// try each variant on it, and a replicated object is most of an activity's bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

impl<'de> Deserialize<'de> for ActivityObject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ActivityObject, D::Error> {
        ActivityObject::from_json(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// Members without which a document cannot be read as an [`Activity`] or a [`ServiceActor`]: checked before trying,
/// so that an embedded object of another kind (a replicated `Article`, say) is not walked in vain.
const ACTIVITY_MEMBERS: [&str; 4] = ["id", "type", "actor", "object"];
const ACTOR_MEMBERS: [&str; 3] = ["preferredUsername", "assertionMethod", "inbox"];

impl ActivityObject {
    /// Reads an activity's object from its JSON, which it keeps as it is when the object is of no kind this crate
    /// reads: a string is a reference; a document that reads as an activity is one, else one that reads as an
    /// instance actor is one; anything else is [`ActivityObject::Other`].
    pub fn from_json(value: Value) -> Result<ActivityObject, serde_json::Error> {
        let members = match &value {
            Value::String(_) => {
                let Value::String(reference) = value else {
                    unreachable!("matched as a string")
                };
                return Ok(ActivityObject::Reference(reference));
            }
            Value::Object(members) => members,
            _ => return Ok(ActivityObject::Other(value)),
        };
        if ACTIVITY_MEMBERS.iter().all(|name| members.contains_key(*name))
            && let Ok(activity) = Activity::deserialize(&value)
        {
            return Ok(ActivityObject::Activity(Box::new(activity)));
        }
        if ACTOR_MEMBERS.iter().all(|name| members.contains_key(*name))
            && let Ok(actor) = ServiceActor::deserialize(&value)
        {
            return Ok(ActivityObject::Actor(Box::new(actor)));
        }
        Ok(ActivityObject::Other(value))
    }

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
    /// Reads an activity from parsed JSON, taking its object's JSON as it is (see [`ActivityObject::from_json`]):
    /// the same as `serde_json::from_value`, without rebuilding the embedded document member by member.
    pub fn from_json(value: Value) -> Result<Activity, serde_json::Error> {
        let Value::Object(mut members) = value else {
            return Activity::deserialize(value);
        };
        let Some(object) = members.remove("object") else {
            return Err(serde::de::Error::missing_field("object"));
        };
        // The envelope without its object, which is read on its own: a placeholder takes its place meanwhile.
        members.insert("object".to_owned(), Value::Null);
        let mut activity = Activity::deserialize(Value::Object(members))?;
        activity.object = ActivityObject::from_json(object)?;
        Ok(activity)
    }

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

    /// Alpha's `Follow` of beta and beta's `Accept` of it.
    fn follow_and_accept() -> (Activity, Activity) {
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
        (follow, accept)
    }

    #[test]
    fn a_follow_and_its_accept_round_trip_with_the_follow_embedded() {
        let (follow, accept) = follow_and_accept();
        let json = serde_json::to_string(&accept).expect("serializes");
        let read: Activity = serde_json::from_str(&json).expect("parses");
        assert_eq!(read.kind, ActivityKind::Accept);
        assert_eq!(read.to, ["https://alpha.test/actor"]);
        let embedded = read.embedded_activity().expect("the follow is embedded");
        assert_eq!(embedded.kind, ActivityKind::Follow);
        assert_eq!(embedded.id, follow.id);
        assert_eq!(embedded.object.id(), Some("https://beta.test/actor"));
    }

    /// Every kind of object reads as the untagged enum read it, from text and from parsed JSON alike.
    #[test]
    fn objects_read_as_references_activities_actors_or_documents_kept_as_they_are() {
        let (follow, accept) = follow_and_accept();
        let article = serde_json::json!({
            "@context": "https://www.w3.org/ns/activitystreams",
            "id": "https://alpha.test/o/cnt_1",
            "type": "Article",
            "name": "A procedure",
            "object": "looks like an activity member, but there is no actor"
        });
        let create = serde_json::json!({
            "id": "https://alpha.test/activities/3",
            "type": "Create",
            "actor": "https://alpha.test/actor",
            "object": article,
            "published": "2027-01-15T08:00:02Z"
        });
        for value in [
            serde_json::to_value(&follow).expect("json"),
            serde_json::to_value(&accept).expect("json"),
            create,
        ] {
            let text = value.to_string();
            let from_text: Activity = serde_json::from_str(&text).expect("parses from text");
            let from_value = Activity::from_json(value.clone()).expect("reads from JSON");
            assert_eq!(from_text, from_value);
            assert_eq!(serde_json::to_value(&from_value).expect("json"), value);
        }
        let read = Activity::from_json(serde_json::to_value(&accept).expect("json")).expect("reads");
        assert_eq!(
            read.embedded_activity().map(|follow| follow.kind.clone()),
            Some(ActivityKind::Follow)
        );
        let created = Activity::from_json(serde_json::json!({
            "id": "https://alpha.test/activities/3", "type": "Create", "actor": "https://alpha.test/actor",
            "object": article
        }))
        .expect("reads");
        assert_eq!(created.object, ActivityObject::Other(article));
        assert_eq!(
            ActivityObject::from_json(serde_json::json!(7)).expect("reads"),
            ActivityObject::Other(serde_json::json!(7))
        );
        let without_object = serde_json::json!({"id": "x", "type": "Create", "actor": "y"});
        let error = Activity::from_json(without_object.clone()).expect_err("no object");
        assert_eq!(
            error.to_string(),
            serde_json::from_value::<Activity>(without_object)
                .expect_err("no object")
                .to_string()
        );
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
