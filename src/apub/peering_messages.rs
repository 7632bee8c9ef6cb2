//! Conversion between ActivityStreams activities (the `federation` crate's wire types) and the service's
//! transport-neutral peering messages.

use federation::protocol::{Activity, ActivityKind, ActivityObject};

use crate::service::federation::peering::{AnnouncedKey, InboundPeering, PeeringMessage};

/// Reads a peer's activity as a peering message. `peer_actor` is the peer's instance actor and `our_actor` this
/// instance's: a peering activity names both, and anything else is refused with the reason.
pub fn inbound_peering(activity: &Activity, peer_actor: &str, our_actor: &str) -> Result<InboundPeering, String> {
    if activity.actor != peer_actor {
        return Err(format!(
            "the activity's actor {} is not the sending instance's actor {peer_actor}",
            activity.actor
        ));
    }
    let answered_follow = || -> Result<String, String> {
        match &activity.object {
            ActivityObject::Reference(id) => Ok(id.clone()),
            ActivityObject::Activity(embedded) if embedded.kind == ActivityKind::Follow => Ok(embedded.id.clone()),
            _ => Err(format!("a {} must answer a Follow", activity.kind.as_str())),
        }
    };
    match &activity.kind {
        ActivityKind::Follow => match activity.object.id() {
            Some(object) if object == our_actor => Ok(InboundPeering::Follow {
                follow_id: activity.id.clone(),
            }),
            _ => Err(format!(
                "a Follow between instances must name this instance's actor {our_actor}"
            )),
        },
        ActivityKind::Accept => Ok(InboundPeering::Accept {
            follow_id: answered_follow()?,
        }),
        ActivityKind::Reject => Ok(InboundPeering::Reject {
            follow_id: answered_follow()?,
        }),
        ActivityKind::Undo => Ok(InboundPeering::Undo {
            follow_id: answered_follow()?,
        }),
        ActivityKind::Update => match &activity.object {
            ActivityObject::Actor(actor) if actor.id == peer_actor => {
                let mut keys = Vec::with_capacity(actor.assertion_method.len());
                for multikey in &actor.assertion_method {
                    let description = multikey
                        .description()
                        .map_err(|error| format!("key {}: {error}", multikey.id))?;
                    keys.push(AnnouncedKey {
                        description,
                        endorsement: multikey.key_endorsement(),
                    });
                }
                Ok(InboundPeering::UpdateKeys { keys })
            }
            _ => Err("an Update between instances must carry the sender's own instance actor".to_owned()),
        },
        other => Err(format!("{} is not a peering activity", other.as_str())),
    }
}

/// Renders a queued peering message as the activity to send. `activity_id` is the delivery's activity ID;
/// `actor_document` is this instance's actor, for an `Update`.
pub fn outbound_activity(
    message: &PeeringMessage,
    activity_id: &str,
    our_actor: &str,
    peer_actor: &str,
    published: &str,
    actor_document: impl FnOnce() -> federation::protocol::ServiceActor,
) -> Result<Activity, String> {
    let follow = |follow_id: &str, follower: &str, followed: &str| {
        let mut follow = Activity::follow(
            follow_id.to_owned(),
            follower.to_owned(),
            followed.to_owned(),
            String::new(),
        );
        follow.published = None;
        follow
    };
    Ok(match message {
        PeeringMessage::Follow { follow_id } => Activity::follow(
            follow_id.clone(),
            our_actor.to_owned(),
            peer_actor.to_owned(),
            published.to_owned(),
        ),
        PeeringMessage::Accept { follow_id } => Activity::answering(
            ActivityKind::Accept,
            activity_id.to_owned(),
            our_actor.to_owned(),
            follow(follow_id, peer_actor, our_actor),
            published.to_owned(),
        ),
        PeeringMessage::Reject { follow_id } => Activity::answering(
            ActivityKind::Reject,
            activity_id.to_owned(),
            our_actor.to_owned(),
            follow(follow_id, peer_actor, our_actor),
            published.to_owned(),
        ),
        PeeringMessage::Undo { follow_id } => Activity::answering(
            ActivityKind::Undo,
            activity_id.to_owned(),
            our_actor.to_owned(),
            follow(follow_id, our_actor, peer_actor),
            published.to_owned(),
        ),
        PeeringMessage::UpdateActor { .. } => {
            Activity::update_actor(activity_id.to_owned(), actor_document(), published.to_owned())
        }
        // Sent as it was when first delivered: its object and the origin's proof unchanged.
        PeeringMessage::Replicated { activity } => {
            return serde_json::from_str(activity)
                .map_err(|error| format!("a stored activity does not parse: {error}"));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALPHA: &str = "https://alpha.test/actor";
    const BETA: &str = "https://beta.test/actor";

    fn no_actor() -> federation::protocol::ServiceActor {
        unreachable!("only an Update renders the actor")
    }

    #[test]
    fn every_peering_message_reads_back_as_what_was_sent() {
        let cases = [
            (
                PeeringMessage::Follow {
                    follow_id: "https://alpha.test/activities/1".to_owned(),
                },
                InboundPeering::Follow {
                    follow_id: "https://alpha.test/activities/1".to_owned(),
                },
            ),
            (
                PeeringMessage::Accept {
                    follow_id: "https://beta.test/activities/9".to_owned(),
                },
                InboundPeering::Accept {
                    follow_id: "https://beta.test/activities/9".to_owned(),
                },
            ),
            (
                PeeringMessage::Reject {
                    follow_id: "https://beta.test/activities/9".to_owned(),
                },
                InboundPeering::Reject {
                    follow_id: "https://beta.test/activities/9".to_owned(),
                },
            ),
            (
                PeeringMessage::Undo {
                    follow_id: "https://alpha.test/activities/1".to_owned(),
                },
                InboundPeering::Undo {
                    follow_id: "https://alpha.test/activities/1".to_owned(),
                },
            ),
        ];
        for (message, expected) in cases {
            let activity = outbound_activity(
                &message,
                "https://alpha.test/activities/2",
                ALPHA,
                BETA,
                "2027-01-01T00:00:00Z",
                no_actor,
            )
            .expect("renders");
            let bytes = serde_json::to_vec(&activity).expect("serializes");
            let parsed: Activity = serde_json::from_slice(&bytes).expect("parses");
            assert_eq!(inbound_peering(&parsed, ALPHA, BETA), Ok(expected), "{message:?}");
        }
    }

    #[test]
    fn an_activity_that_speaks_for_another_actor_or_follows_someone_else_is_refused() {
        let follow = Activity::follow(
            "https://alpha.test/activities/1".to_owned(),
            "https://gamma.test/actor".to_owned(),
            BETA.to_owned(),
            String::new(),
        );
        assert!(inbound_peering(&follow, ALPHA, BETA).is_err());
        let follow = Activity::follow(
            "https://alpha.test/activities/1".to_owned(),
            ALPHA.to_owned(),
            "https://gamma.test/actor".to_owned(),
            String::new(),
        );
        assert!(inbound_peering(&follow, ALPHA, BETA).is_err());
    }
}
