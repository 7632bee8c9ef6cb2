//! The fast path of the inbound queue: the replicated objects the inbox has already read and verified but whose
//! activities were queued instead of applied, held for this process's intake so that it applies them without reading
//! their bodies again.
//!
//! The queued row stays the record: its body is what a restarted process, another process on the same PostgreSQL
//! database, or an intake that finds no object here reads and applies, with the same reading the inbox did. Most
//! objects never come here: the inbox applies them in the transaction that stores them (`inbox_groups.rs`). An
//! object is held when its activity was queued instead, from just after that commit until the intake takes it; an
//! intake that reads the row first reads its body, and the object held a moment later goes with the next expiry.
//! The hold is bounded in count and in age, so objects whose rows were applied without them cannot accumulate. An
//! object is kept with a keyed hash of the body it was read from, and the intake takes it only for a row with that
//! body: two requests with one activity ID and different bodies can never lend one's object to the other's row.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;

use chrono::{DateTime, TimeDelta, Utc};

use crate::domain::replication::ReplicatedObject;

/// Objects held at most; beyond it the inbox holds nothing more and the intake reads those bodies itself. About
/// two full intake passes, each object the size of its body or so.
pub const MAX_HELD_OBJECTS: usize = 512;

/// How long an object is held at most: an intake that applies a row promptly finds its object well inside this.
pub const MAX_HOLD: TimeDelta = TimeDelta::seconds(60);

/// The held objects of one instance (never shared between instances).
#[derive(Debug, Default)]
pub struct HeldObjects {
    held: Mutex<HashMap<String, HeldObject>>,
    /// Keyed per hand-off at random, so no sender can make two bodies hash alike.
    body_hasher: std::collections::hash_map::RandomState,
}

#[derive(Debug)]
struct HeldObject {
    since: DateTime<Utc>,
    body_hash: u64,
    object: Box<ReplicatedObject>,
}

impl HeldObjects {
    /// Holds the object read from `body`, the activity `activity_id`, for the intake. `false` (and nothing held)
    /// when an object is held for that ID already (another request with the same ID: its row, if any, is the
    /// other's) or the hold is full.
    pub fn hold(&self, activity_id: &str, body: &str, object: Box<ReplicatedObject>, now: DateTime<Utc>) -> bool {
        let body_hash = self.body_hasher.hash_one(body);
        let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.len() >= MAX_HELD_OBJECTS || held.contains_key(activity_id) {
            return false;
        }
        held.insert(
            activity_id.to_owned(),
            HeldObject {
                since: now,
                body_hash,
                object,
            },
        );
        true
    }

    /// The object held for `activity_id`, taken out of the hold, if it was read from `body` (the queued row's).
    pub fn take(&self, activity_id: &str, body: &str) -> Option<Box<ReplicatedObject>> {
        let held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(activity_id)?;
        (held.body_hash == self.body_hasher.hash_one(body)).then_some(held.object)
    }

    /// Lets go of objects held longer than [`MAX_HOLD`] (their rows were applied elsewhere, or are read from the
    /// database when their turn comes).
    pub fn expire(&self, now: DateTime<Utc>) {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|_, held| now - held.since < MAX_HOLD);
    }

    /// How many objects are held.
    pub fn held(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::PublicId;
    use crate::domain::replication::{FederatedObject, OriginProof, SpaceRecord};

    fn object(name: &str) -> Box<ReplicatedObject> {
        Box::new(ReplicatedObject {
            object: FederatedObject::Space(SpaceRecord {
                id: PublicId::parse("spc_01JD0000000000000000000000").expect("a space ID"),
                origin: "alpha.test".to_owned(),
                name: name.to_owned(),
                description: String::new(),
                created_by: PublicId::parse("usr_01JD0000000000000000000000").expect("a user ID"),
                created_at: DateTime::<Utc>::UNIX_EPOCH,
            }),
            proof: OriginProof {
                signed_object: "{}".to_owned(),
                key_id: "https://alpha.test/actor#key-1".to_owned(),
            },
        })
    }

    #[test]
    fn an_object_is_taken_once_never_replaced_and_let_go_when_full_or_old() {
        let held_objects = HeldObjects::default();
        let start = DateTime::<Utc>::UNIX_EPOCH + TimeDelta::days(20_000);
        assert!(held_objects.hold("https://alpha.test/activities/1", "body 1", object("first"), start));
        assert!(
            !held_objects.hold("https://alpha.test/activities/1", "body 2", object("second"), start),
            "a second request with the same ID holds nothing"
        );
        let taken = held_objects
            .take("https://alpha.test/activities/1", "body 1")
            .expect("held");
        assert!(matches!(&taken.object, FederatedObject::Space(space) if space.name == "first"));
        assert!(
            held_objects.take("https://alpha.test/activities/1", "body 1").is_none(),
            "taken once"
        );
        assert!(held_objects.hold("https://alpha.test/activities/2", "body 2", object("second"), start));
        assert!(
            held_objects
                .take("https://alpha.test/activities/2", "another body")
                .is_none(),
            "a row whose body is not the one the object was read from gets nothing"
        );
        assert_eq!(held_objects.held(), 0);

        for number in 0..MAX_HELD_OBJECTS {
            assert!(held_objects.hold(
                &format!("https://alpha.test/activities/n{number}"),
                "n",
                object("n"),
                start
            ));
        }
        assert!(
            !held_objects.hold("https://alpha.test/activities/over", "over", object("over"), start),
            "full"
        );
        assert!(held_objects.take("https://alpha.test/activities/n0", "n").is_some());
        assert_eq!(held_objects.held(), MAX_HELD_OBJECTS - 1);
        held_objects.expire(start + MAX_HOLD - TimeDelta::seconds(1));
        assert_eq!(held_objects.held(), MAX_HELD_OBJECTS - 1, "not old yet");
        held_objects.expire(start + MAX_HOLD);
        assert_eq!(held_objects.held(), 0, "all old");
    }
}
