//! The federation documents: the instance actor, local actors at `/o/{id}`, WebFinger, NodeInfo 2.1 and the
//! manifest's `federation` member, rendered from the service's facts into the `federation` crate's wire types.

use federation::protocol::actor::PublicKeyPem;
use federation::protocol::context::document_context;
use federation::protocol::discovery::{Jrd, JrdLink, NODEINFO_21_REL, NodeInfo, NodeInfoLinks, NodeInfoServices};
use federation::protocol::discovery::{NodeInfoSoftware, NodeInfoUsage, NodeInfoUsers};
use federation::protocol::{ACTIVITY_JSON, ManifestFederation, ManifestKey, Multikey, ServiceActor};
use serde_json::{Value, json};

use crate::domain::{Actor, ActorType};
use crate::service::federation::identity::PublishedKey;

/// The name of the federation protocol in the manifest.
pub const PROTOCOL_NAME: &str = "interai-federation-v1";

/// The URLs of one instance, all built from its public URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceUrls {
    /// The public URL without a trailing slash.
    pub base: String,
}

impl InstanceUrls {
    /// The instance actor.
    pub fn actor(&self) -> String {
        format!("{}/actor", self.base)
    }
    /// The inbox.
    pub fn inbox(&self) -> String {
        format!("{}/inbox", self.base)
    }
    /// The outbox.
    pub fn outbox(&self) -> String {
        format!("{}/outbox", self.base)
    }
    /// The manifest.
    pub fn manifest(&self) -> String {
        format!("{}/.well-known/inter-ai", self.base)
    }
    /// An object or actor by public ID.
    pub fn object(&self, public_id: &str) -> String {
        format!("{}/o/{public_id}", self.base)
    }
    /// NodeInfo 2.1.
    pub fn nodeinfo(&self) -> String {
        format!("{}/nodeinfo/2.1", self.base)
    }
}

/// The instance actor document (type `Service`): every published key as a Multikey under `assertionMethod`
/// (FEP-521a) with its validity and endorsement, and the key that signs now in the legacy `publicKey` block.
pub fn instance_actor(urls: &InstanceUrls, realm: &str, keys: &[PublishedKey], signing_key_id: &str) -> ServiceActor {
    let actor = urls.actor();
    let assertion_method = keys
        .iter()
        .map(|key| Multikey::from_description(&actor, &key.description, key.endorsement.as_ref()))
        .collect();
    let public_key = keys
        .iter()
        .find(|key| key.description.key_id == signing_key_id)
        .map(|key| PublicKeyPem {
            id: key.description.key_id.clone(),
            owner: actor.clone(),
            public_key_pem: key.description.public_key.to_spki_pem(),
        });
    ServiceActor {
        context: document_context(),
        id: actor,
        kind: "Service".to_owned(),
        preferred_username: realm.to_owned(),
        name: format!("interai instance {realm}"),
        realm: realm.to_owned(),
        inbox: urls.inbox(),
        outbox: urls.outbox(),
        manifest: Some(urls.manifest()),
        assertion_method,
        public_key,
    }
}

/// A local actor at `/o/{id}`: a person (`usr_`), an organization (`org_`) or an agent (`ai_`, an
/// `Application`), with its controller.
pub fn local_actor(urls: &InstanceUrls, actor: &Actor) -> Value {
    let kind = match actor.actor_type {
        ActorType::User => "Person",
        ActorType::Organization => "Organization",
        ActorType::Agent => "Application",
    };
    let mut document = json!({
        "@context": document_context(),
        "id": urls.object(actor.id.as_str()),
        "type": kind,
        "preferredUsername": actor.id.as_str(),
        "name": actor.display_name,
        "interai:realm": actor.origin,
        "published": actor.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    });
    if let Some(controller) = &actor.controller {
        document["attributedTo"] = json!(urls.object(controller.as_str()));
    }
    document
}

/// The WebFinger answer for an actor (`acct:{id}@{realm}`) or the instance (`acct:{realm}@{realm}`).
pub fn webfinger(subject: &str, actor_url: &str) -> Jrd {
    Jrd {
        subject: subject.to_owned(),
        aliases: vec![actor_url.to_owned()],
        links: vec![JrdLink {
            rel: "self".to_owned(),
            media_type: Some(ACTIVITY_JSON.to_owned()),
            href: actor_url.to_owned(),
        }],
    }
}

/// `/.well-known/nodeinfo`: where NodeInfo 2.1 is.
pub fn nodeinfo_links(urls: &InstanceUrls) -> NodeInfoLinks {
    NodeInfoLinks {
        links: vec![JrdLink {
            rel: NODEINFO_21_REL.to_owned(),
            media_type: None,
            href: urls.nodeinfo(),
        }],
    }
}

/// NodeInfo 2.1.
pub fn nodeinfo(software_version: &str, local_users: u64, realm: &str) -> NodeInfo {
    NodeInfo {
        version: "2.1".to_owned(),
        software: NodeInfoSoftware {
            name: "interai".to_owned(),
            version: software_version.to_owned(),
            repository: None,
        },
        protocols: vec!["activitypub".to_owned()],
        services: NodeInfoServices::default(),
        open_registrations: false,
        usage: NodeInfoUsage {
            users: NodeInfoUsers { total: local_users },
            local_posts: 0,
        },
        metadata: json!({ "realm": realm, "federation_protocol": PROTOCOL_NAME }),
    }
}

/// The manifest's `federation` member.
pub fn manifest_federation(urls: &InstanceUrls, keys: &[PublishedKey]) -> ManifestFederation {
    ManifestFederation {
        status: "available".to_owned(),
        protocol: PROTOCOL_NAME.to_owned(),
        actor: urls.actor(),
        inbox: urls.inbox(),
        outbox: urls.outbox(),
        keys: keys
            .iter()
            .map(|key| ManifestKey::from_description(&key.description, key.endorsement.as_ref()))
            .collect(),
        peering: "follow".to_owned(),
    }
}
