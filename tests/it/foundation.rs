//! Bootstrap, actors, keys and authentication through the service layer.

use chrono::TimeDelta;
use interai::config::Config;
use interai::domain::{ActorType, PublicId, ScopeSet};
use interai::instance::Instance;
use interai::service::ErrorCode;
use interai::service::actors::NewActor;
use interai::service::audit::CallAudit;
use interai::service::bootstrap::BootstrapOutcome;
use interai::service::keys::NewApiKey;

use crate::harness::{TestInstance, read_admin_key};

#[tokio::test]
async fn first_start_creates_the_realm_identities_and_a_private_admin_key() {
    let alpha = TestInstance::start("alpha.test").await;
    let actors = alpha.service().list_actors().await.expect("list");
    assert_eq!(actors.len(), 2, "an organization and an admin human");
    let organization = actors
        .iter()
        .find(|actor| actor.actor_type == ActorType::Organization)
        .expect("org");
    let admin = actors
        .iter()
        .find(|actor| actor.actor_type == ActorType::User)
        .expect("usr");
    assert_eq!(admin.controller.as_ref(), Some(&organization.id));
    assert_eq!(admin.root_controller, organization.id);
    assert!(actors.iter().all(|actor| actor.origin == "alpha.test"));

    let caller = alpha
        .service()
        .authenticate(&alpha.admin_key)
        .await
        .expect("admin key works");
    assert_eq!(caller.actor.id, admin.id);
    assert_eq!(caller.scopes, ScopeSet::all());

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(alpha.data_dir().join("admin.key"))
            .expect("key file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test]
async fn a_second_start_creates_nothing_new() {
    let alpha = TestInstance::start("alpha.test").await;
    let first_key = alpha.admin_key.clone();
    let config = alpha.instance.config().clone();
    let again = Instance::open(config, std::sync::Arc::new(alpha.clock.clone()))
        .await
        .expect("reopen");
    let outcome = again.bootstrap().await.expect("second bootstrap");
    assert!(matches!(outcome, BootstrapOutcome::AlreadyBootstrapped { .. }));
    assert_eq!(again.service().list_actors().await.expect("list").len(), 2);
    assert_eq!(read_admin_key(&again.admin_key_path()), first_key);
    again.close().await;
}

#[tokio::test]
async fn every_read_is_in_the_audit_log_after_a_restart() {
    let alpha = TestInstance::start("alpha.test").await;
    let caller = alpha
        .service()
        .authenticate(&alpha.admin_key)
        .await
        .expect("admin key works");
    let queries = ["retry budget", "connection pool", "rate limit"];
    for query in queries {
        alpha
            .service()
            .record_call(CallAudit {
                caller: &caller,
                tool: "search",
                is_write: false,
                request: &serde_json::json!({ "query": query }),
                outcome: Ok("0 results".to_owned()),
                duration: std::time::Duration::from_millis(3),
                client_name: Some("audit-test".to_owned()),
                client_version: None,
            })
            .await
            .expect("recorded");
    }
    // Closing is the whole shutdown: the records must be on disk without waiting for anything else.
    let config = alpha.instance.config().clone();
    alpha.instance.close().await;
    let again = Instance::open(config, std::sync::Arc::new(alpha.clock.clone()))
        .await
        .expect("reopen");
    let calls = again
        .service()
        .recent_calls(&caller.actor.id, 10)
        .await
        .expect("audit log");
    let searches: Vec<_> = calls.iter().filter(|call| call.tool == "search").collect();
    let mut audited: Vec<&str> = searches
        .iter()
        .map(|call| call.request["query"].as_str().unwrap_or_default())
        .collect();
    audited.sort_unstable();
    let mut expected = queries.to_vec();
    expected.sort_unstable();
    assert_eq!(audited, expected);
    assert!(
        searches
            .iter()
            .all(|call| call.client_name.as_deref() == Some("audit-test"))
    );
    again.close().await;
}

#[tokio::test]
async fn a_database_refuses_to_serve_a_different_realm() {
    let alpha = TestInstance::start("alpha.test").await;
    let mut config: Config = alpha.instance.config().clone();
    config.realm = "renamed.test".to_owned();
    let renamed = Instance::open(config, std::sync::Arc::new(alpha.clock.clone()))
        .await
        .expect("open");
    let error = renamed.bootstrap().await.expect_err("realm mismatch");
    assert!(error.to_string().contains("alpha.test"), "{error}");
    renamed.close().await;
}

#[tokio::test]
async fn agents_need_an_existing_human_or_organization_controller() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let without = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: "Research Agent".to_owned(),
            controller: None,
        })
        .await
        .expect_err("agent without controller");
    assert_eq!(without.code, ErrorCode::ValidationFailed);

    let unknown = PublicId::parse("usr_01j9zq3k5m8n2p4r6t8v0w2x4y").expect("well-formed");
    let missing = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: "Research Agent".to_owned(),
            controller: Some(unknown),
        })
        .await
        .expect_err("unknown controller");
    assert_eq!(missing.code, ErrorCode::NotFound);

    let alice = service
        .create_actor(NewActor {
            actor_type: ActorType::User,
            display_name: "Alice".to_owned(),
            controller: None,
        })
        .await
        .expect("alice");
    assert_eq!(alice.root_controller, alice.id);
    let agent = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: "Alice's agent".to_owned(),
            controller: Some(alice.id.clone()),
        })
        .await
        .expect("agent");
    assert_eq!(agent.root_controller, alice.id);

    let agent_as_controller = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: "Sub-agent".to_owned(),
            controller: Some(agent.id.clone()),
        })
        .await
        .expect_err("an agent cannot control");
    assert_eq!(agent_as_controller.code, ErrorCode::ValidationFailed);

    let blank = service
        .create_actor(NewActor {
            actor_type: ActorType::User,
            display_name: "   ".to_owned(),
            controller: None,
        })
        .await
        .expect_err("blank name");
    assert_eq!(blank.code, ErrorCode::ValidationFailed);
}

#[tokio::test]
async fn expired_and_revoked_keys_stop_authenticating() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let bob = service
        .create_actor(NewActor {
            actor_type: ActorType::User,
            display_name: "Bob".to_owned(),
            controller: None,
        })
        .await
        .expect("bob");
    let expiring = service
        .create_api_key(NewApiKey {
            actor_id: bob.id.clone(),
            scopes: ScopeSet::agent_default(),
            expires_at: Some(alpha.clock_now() + TimeDelta::hours(1)),
            label: None,
        })
        .await
        .expect("key");
    assert_eq!(
        service
            .authenticate(&expiring.secret)
            .await
            .expect("valid now")
            .actor
            .id,
        bob.id
    );
    alpha.clock.advance(TimeDelta::hours(1));
    let expired = service.authenticate(&expiring.secret).await.expect_err("expired");
    assert_eq!(expired.code, ErrorCode::Unauthenticated);
    assert!(expired.message.contains("expired"));

    let revocable = service
        .create_api_key(NewApiKey {
            actor_id: bob.id.clone(),
            scopes: ScopeSet::agent_default(),
            expires_at: None,
            label: Some("laptop".to_owned()),
        })
        .await
        .expect("key");
    service.revoke_api_key(&revocable.key.id).await.expect("revoke");
    let revoked = service.authenticate(&revocable.secret).await.expect_err("revoked");
    assert!(revoked.message.contains("revoked"));
    // Revoking twice is harmless.
    assert!(
        service
            .revoke_api_key(&revocable.key.id)
            .await
            .expect("revoke again")
            .revoked_at
            .is_some()
    );

    let unknown = service.authenticate("iak_not-a-real-key").await.expect_err("unknown");
    assert_eq!(unknown.code, ErrorCode::Unauthenticated);

    let keys = service.list_api_keys(&bob.id).await.expect("list");
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[1].label.as_deref(), Some("laptop"));

    let no_scopes = service
        .create_api_key(NewApiKey {
            actor_id: bob.id.clone(),
            scopes: ScopeSet::default(),
            expires_at: None,
            label: None,
        })
        .await
        .expect_err("no scopes");
    assert_eq!(no_scopes.code, ErrorCode::ValidationFailed);
}

impl TestInstance {
    fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        use interai::clock::Clock;
        self.clock.now()
    }
}
