//! The console's people, keys and spaces: creating an actor, a key (whose secret is shown once, on the answer's page,
//! and stored nowhere in clear, not even in the audit log) and a space through its forms, revoking a key (one's own
//! ends one's session), each action audited with the signed-in key; refused input and forms without the session's
//! token change nothing.

use chrono::TimeDelta;
use http::{StatusCode, header};
use interai::domain::knowledge::SpaceVisibility;
use interai::domain::{ActorType, PublicId, ScopeSet};
use interai::service::audit::AuditQuery;
use interai::service::keys::secret_sha256;
use interai::service::{ErrorCode, Service};
use interai::store::audit::McpCallRecord;

use crate::console::{Answer, assert_security_headers, get, post_form, sign_in};
use crate::fixtures::{agent, agent_of_with_scopes, controller};
use crate::harness::{DirectConnection, TestInstance};

/// A form's fields, as `post_form` takes them.
type Fields<'a> = &'a [(&'a str, &'a str)];

/// The audit records of the console action `action` (`key.create`), newest first.
async fn audited(service: &Service, action: &str) -> Vec<McpCallRecord> {
    service
        .audit_log(AuditQuery {
            tool: Some(format!("admin/{action}")),
            ..AuditQuery::default()
        })
        .await
        .expect("the audit log")
        .records
}

/// The key the admin signed in with.
async fn key_of(service: &Service, secret: &str) -> PublicId {
    service.authenticate(secret).await.expect("a valid key").key_id
}

/// The secret a new key's page shows (the value of its read-only field).
fn shown_secret(answer: &Answer) -> String {
    let marker = "value=\"iak_";
    let start = answer.body.find(marker).expect("a secret on the page") + "value=\"".len();
    let end = answer.body[start..].find('"').expect("the value's end") + start;
    answer.body[start..end].to_owned()
}

/// Posts `fields` with the session's form token to `path`, as the console's own page does.
async fn submit(
    instance: &TestInstance,
    path: &str,
    cookie: &str,
    form_token: &str,
    fields: &[(&str, &str)],
) -> Answer {
    let mut all = vec![("form_token", form_token)];
    all.extend_from_slice(fields);
    post_form(instance, path, Some(cookie), &all, Some("same-origin")).await
}

/// How many rows `table` holds.
async fn rows(instance: &TestInstance, table: &str) -> i64 {
    let mut database = DirectConnection::open(&instance.database.url).await;
    let count = database
        .count(&format!("SELECT COUNT(*) FROM {table} WHERE id <> $1"), "")
        .await;
    database.close().await;
    count
}

#[tokio::test]
async fn an_admin_creates_an_actor_and_a_key_whose_secret_is_shown_once_and_authenticates_with_the_chosen_scopes() {
    let instance = TestInstance::start("alpha.test").await;
    let service = instance.service();
    let admin_key = key_of(service, &instance.admin_key).await;
    let cookie = sign_in(&instance, &instance.admin_key).await;

    let page = get(&instance, "/console/people", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_security_headers(&page);
    for control in [
        "actor_type",
        "display_name",
        "controller",
        "key_actor",
        "scope_read",
        "expires",
        "label",
    ] {
        assert!(
            page.body.contains(&format!("<label for=\"{control}\">")),
            "{control}: {}",
            page.body
        );
    }
    assert!(
        page.body.contains("aria-current=\"page\">People and keys</a>"),
        "{}",
        page.body
    );
    let token = page.form_token();

    // An organization, then an agent it controls, as `interai admin actor create` makes them.
    let created = submit(
        &instance,
        "/console/actors",
        &cookie,
        &token,
        &[
            ("actor_type", "org"),
            ("display_name", "Example Lab"),
            ("controller", ""),
        ],
    )
    .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.body);
    assert_eq!(created.location(), "/console/people?done=actor.create");
    let find = |name: &'static str| async move {
        service
            .list_actors()
            .await
            .expect("actors")
            .into_iter()
            .find(|actor| actor.display_name == name)
            .unwrap_or_else(|| panic!("{name} was created"))
    };
    let lab = find("Example Lab").await;
    assert_eq!(lab.actor_type, ActorType::Organization);
    let created = submit(
        &instance,
        "/console/actors",
        &cookie,
        &token,
        &[
            ("actor_type", "ai"),
            ("display_name", "Night crawler"),
            ("controller", lab.id.as_str()),
        ],
    )
    .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.body);
    let crawler = find("Night crawler").await;
    assert_eq!(crawler.actor_type, ActorType::Agent);
    assert_eq!(crawler.controller.as_ref(), Some(&lab.id));
    assert_eq!(crawler.root_controller, lab.id);

    let page = get(&instance, "/console/people?done=actor.create", Some(&cookie)).await;
    assert!(page.body.contains("The actor was created."), "{}", page.body);
    assert!(
        page.body.contains(&format!("<td>Example Lab ({})</td>", lab.id)),
        "the agent's controller, by name: {}",
        page.body
    );

    // A key with two scopes that expires in 90 days: the answer is the page with its secret, not a redirect.
    let issued = submit(
        &instance,
        "/console/keys",
        &cookie,
        &token,
        &[
            ("actor", crawler.id.as_str()),
            ("scopes", "read"),
            ("scopes", "review"),
            ("expires", "90d"),
            ("label", "nightly run"),
        ],
    )
    .await;
    assert_eq!(issued.status, StatusCode::OK, "{}", issued.body);
    assert_security_headers(&issued);
    assert_eq!(
        issued
            .headers
            .get(header::CACHE_CONTROL)
            .and_then(|value| value.to_str().ok()),
        Some("no-store")
    );
    assert!(issued.headers.get(header::LOCATION).is_none());
    assert!(issued.body.contains("shown only this once"), "{}", issued.body);
    let secret = shown_secret(&issued);
    assert!(secret.starts_with("iak_"), "{secret}");

    let caller = service.authenticate(&secret).await.expect("the new key authenticates");
    assert_eq!(caller.actor.id, crawler.id);
    assert_eq!(caller.scopes, ScopeSet::parse_list("read,review").expect("scopes"));
    let keys = service.list_api_keys(&crawler.id).await.expect("keys");
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].label.as_deref(), Some("nightly run"));
    assert_eq!(keys[0].expires_at, Some(service.now() + TimeDelta::days(90)));

    // The list shows the key, never its secret; nor does the audit page.
    let page = get(&instance, "/console/people", Some(&cookie)).await;
    assert!(page.body.contains(keys[0].id.as_str()), "{}", page.body);
    assert!(page.body.contains("<td>read, review</td>"), "{}", page.body);
    assert!(!page.body.contains(&secret));
    let audit_page = get(&instance, "/console/audit", Some(&cookie)).await;
    assert!(audit_page.body.contains("admin/key.create"), "{}", audit_page.body);
    assert!(!audit_page.body.contains(&secret));

    // Each action is audited with the key the admin signed in with; the key's record holds what was chosen, no
    // secret.
    assert_eq!(audited(service, "actor.create").await.len(), 2);
    let records = audited(service, "key.create").await;
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.key_id, admin_key);
    assert_eq!(record.outcome, "ok");
    assert_eq!(record.client_name.as_deref(), Some("interai console"));
    assert_eq!(record.request["scopes"], serde_json::json!(["read", "review"]));
    assert_eq!(record.request["expires"], "90d");
    assert!(
        record.result_summary.contains(keys[0].id.as_str()),
        "{}",
        record.result_summary
    );
    assert!(!record.request.to_string().contains(&secret));
    assert!(!record.result_summary.contains(&secret));

    // Nothing in the database holds the secret in clear: the key's row holds its hash.
    let mut database = DirectConnection::open(&instance.database.url).await;
    assert_eq!(
        database
            .count(
                "SELECT COUNT(*) FROM api_keys WHERE secret_sha256 = $1",
                &secret_sha256(&secret)
            )
            .await,
        1
    );
    for query in [
        "SELECT COUNT(*) FROM api_keys WHERE secret_sha256 = $1 OR scopes LIKE '%' || $1 || '%' \
         OR COALESCE(label, '') LIKE '%' || $1 || '%'",
        "SELECT COUNT(*) FROM mcp_calls WHERE CAST(request AS TEXT) LIKE '%' || $1 || '%' \
         OR result_summary LIKE '%' || $1 || '%'",
    ] {
        assert_eq!(database.count(query, &secret).await, 0, "{query}");
    }
    database.close().await;
}

#[tokio::test]
async fn revoking_a_key_through_the_console_ends_it_and_revoking_one_s_own_signs_one_out() {
    let instance = TestInstance::start("alpha.test").await;
    let service = instance.service();
    let worker = agent(service, "worker").await;
    let admin_key = key_of(service, &instance.admin_key).await;
    let cookie = sign_in(&instance, &instance.admin_key).await;
    let page = get(&instance, "/console/people", Some(&cookie)).await;
    let worker_key = worker.caller.key_id.as_str();
    let button = format!("Revoke {worker_key} now: it stops working at once</button>");
    assert!(page.body.contains(&button), "{}", page.body);
    let revoke_path = format!("/console/keys/{worker_key}/revoke");

    // A wrong form token revokes nothing.
    let refused = submit(&instance, &revoke_path, &cookie, "not-the-token", &[]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    service.authenticate(&worker.key).await.expect("still valid");
    assert!(audited(service, "key.revoke").await.is_empty());

    instance.clock.advance(TimeDelta::seconds(1));
    let revoked = submit(&instance, &revoke_path, &cookie, &page.form_token(), &[]).await;
    assert_eq!(revoked.status, StatusCode::SEE_OTHER, "{}", revoked.body);
    assert_eq!(revoked.location(), "/console/people?done=key.revoke");
    let error = service.authenticate(&worker.key).await.expect_err("revoked");
    assert_eq!(error.code, ErrorCode::Unauthenticated);
    let page = get(&instance, revoked.location(), Some(&cookie)).await;
    assert!(page.body.contains("The key was revoked"), "{}", page.body);
    assert!(!page.body.contains(&button), "no button for a revoked key");
    let records = audited(service, "key.revoke").await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].key_id, admin_key);
    assert_eq!(records[0].request, serde_json::json!({ "key": worker_key }));

    // An unknown key is 404, a text that is no key ID 400: the page again, with the error.
    let token = page.form_token();
    instance.clock.advance(TimeDelta::seconds(1));
    let unknown = submit(
        &instance,
        "/console/keys/key_00000000000000000000000000/revoke",
        &cookie,
        &token,
        &[],
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.body);
    assert!(unknown.body.contains("Nothing was done"), "{}", unknown.body);
    assert!(unknown.body.contains("<h1>People and keys</h1>"), "{}", unknown.body);
    instance.clock.advance(TimeDelta::seconds(1));
    let malformed = submit(&instance, "/console/keys/nope/revoke", &cookie, &token, &[]).await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST, "{}", malformed.body);
    let outcomes: Vec<String> = audited(service, "key.revoke")
        .await
        .into_iter()
        .map(|record| record.outcome)
        .collect();
    assert_eq!(
        outcomes,
        ["validation_failed", "not_found", "ok"],
        "refusals are audited too"
    );

    // A second admin revokes the key they signed in with: they are sent to sign in again, the session is over.
    let owner = controller(service, "second admin").await;
    let second = agent_of_with_scopes(service, &owner, "second admin's key", "admin").await;
    let second_cookie = sign_in(&instance, &second.key).await;
    let page = get(&instance, "/console/people", Some(&second_cookie)).await;
    let own_key = second.caller.key_id.as_str();
    assert!(
        page.body.contains(&format!(
            "Revoke {own_key} now: it stops working at once and signs you out"
        )),
        "{}",
        page.body
    );
    instance.clock.advance(TimeDelta::seconds(1));
    let out = submit(
        &instance,
        &format!("/console/keys/{own_key}/revoke"),
        &second_cookie,
        &page.form_token(),
        &[],
    )
    .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER, "{}", out.body);
    assert_eq!(out.location(), "/console/sign-in?ended=1");
    assert!(out.set_cookie().is_some_and(|value| value.contains("Max-Age=0")));
    let after = get(&instance, "/console/people", Some(&second_cookie)).await;
    assert_eq!(after.status, StatusCode::SEE_OTHER);
    assert!(after.location().starts_with("/console/sign-in"));
    assert!(service.authenticate(&second.key).await.is_err());
    let own = &audited(service, "key.revoke").await[0];
    assert_eq!(own.key_id, second.caller.key_id, "audited with the key it revoked");
    assert_eq!(own.outcome, "ok");
    // The first admin's session is untouched.
    assert_eq!(
        get(&instance, "/console/people", Some(&cookie)).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn bad_input_shows_the_page_again_with_the_error_and_changes_nothing() {
    let instance = TestInstance::start("alpha.test").await;
    let service = instance.service();
    let worker = agent(service, "worker").await;
    let cookie = sign_in(&instance, &instance.admin_key).await;
    let token = get(&instance, "/console/people", Some(&cookie)).await.form_token();
    let actors = rows(&instance, "actors").await;
    let keys = rows(&instance, "api_keys").await;
    let worker_id = worker.caller.actor.id.as_str();

    let key_refusals: [(Fields, StatusCode, &str); 6] = [
        (
            &[("actor", "ai_00000000000000000000000000"), ("scopes", "read")],
            StatusCode::NOT_FOUND,
            "no object with this ID exists",
        ),
        (
            &[("actor", worker_id), ("scopes", "root")],
            StatusCode::BAD_REQUEST,
            "unknown scope",
        ),
        (&[("actor", worker_id)], StatusCode::BAD_REQUEST, "at least one scope"),
        (
            &[("actor", worker_id), ("scopes", "read"), ("expires", "soon")],
            StatusCode::BAD_REQUEST,
            "expires must be a duration",
        ),
        (
            &[("actor", worker_id), ("scopes", "read"), ("expires", "2020-01-31")],
            StatusCode::BAD_REQUEST,
            "in the future",
        ),
        (&[("scopes", "read")], StatusCode::BAD_REQUEST, "Nothing was done"),
    ];
    for (fields, status, said) in key_refusals {
        let mut fields = fields.to_vec();
        fields.push(("label", "kept label"));
        let answer = submit(&instance, "/console/keys", &cookie, &token, &fields).await;
        assert_eq!(answer.status, status, "{fields:?}: {}", answer.body);
        assert_security_headers(&answer);
        assert!(answer.body.contains("Nothing was done"), "{fields:?}: {}", answer.body);
        assert!(answer.body.contains(said), "{fields:?}: {said} in {}", answer.body);
        assert!(
            answer.body.contains("value=\"kept label\""),
            "the form is shown as it was sent: {}",
            answer.body
        );
        assert!(!answer.body.contains("value=\"iak_"), "no secret");
    }
    let audited_refusals = audited(service, "key.create").await;
    assert_eq!(audited_refusals.len(), 6);
    assert!(audited_refusals.iter().all(|record| record.outcome != "ok"));

    let actor_refusals: [(Fields, &str); 4] = [
        (
            &[("actor_type", "ai"), ("display_name", "orphan")],
            "needs an accountable controller",
        ),
        (
            &[("actor_type", "bot"), ("display_name", "robot")],
            "type must be usr, org or ai",
        ),
        (&[("actor_type", "usr"), ("display_name", "  ")], "must not be empty"),
        (
            &[
                ("actor_type", "ai"),
                ("display_name", "under an agent"),
                ("controller", worker_id),
            ],
            "only a usr_ or org_ actor can be a controller",
        ),
    ];
    for (fields, said) in actor_refusals {
        let answer = submit(&instance, "/console/actors", &cookie, &token, fields).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{fields:?}: {}", answer.body);
        assert!(answer.body.contains(said), "{fields:?}: {said} in {}", answer.body);
    }

    // A form without the session's form token does nothing, whichever it is.
    let revoke_path = format!("/console/keys/{}/revoke", worker.caller.key_id);
    let forms: [(&str, Fields); 4] = [
        ("/console/actors", &[("actor_type", "usr"), ("display_name", "forged")]),
        ("/console/keys", &[("actor", worker_id), ("scopes", "admin")]),
        ("/console/spaces", &[("name", "forged"), ("visibility", "federated")]),
        (revoke_path.as_str(), &[]),
    ];
    let spaces = rows(&instance, "spaces").await;
    let audit_rows = rows(&instance, "mcp_calls").await;
    for (path, fields) in forms {
        let answer = submit(&instance, path, &cookie, "not-the-token", fields).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{path}: {}", answer.body);
        let none = post_form(&instance, path, None, fields, Some("same-origin")).await;
        assert_eq!(
            none.status,
            StatusCode::FORBIDDEN,
            "{path} without a session: {}",
            none.body
        );
    }
    assert_eq!(rows(&instance, "spaces").await, spaces);
    assert_eq!(
        rows(&instance, "mcp_calls").await,
        audit_rows,
        "a refused form is no action"
    );

    assert_eq!(rows(&instance, "actors").await, actors);
    assert_eq!(rows(&instance, "api_keys").await, keys);
    service.authenticate(&worker.key).await.expect("still valid");
}

#[tokio::test]
async fn the_spaces_page_lists_the_spaces_and_creates_one_with_its_visibility() {
    let instance = TestInstance::start("alpha.test").await;
    let service = instance.service();
    let admin = service.authenticate(&instance.admin_key).await.expect("the admin");
    let cookie = sign_in(&instance, &instance.admin_key).await;

    let page = get(&instance, "/console/spaces", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_security_headers(&page);
    for control in ["name", "visibility", "description"] {
        assert!(page.body.contains(&format!("<label for=\"{control}\">")), "{control}");
    }
    for space in service.list_spaces().await.expect("spaces") {
        assert!(page.body.contains(space.id.as_str()), "{}", space.id);
    }
    let token = page.form_token();

    let created = submit(
        &instance,
        "/console/spaces",
        &cookie,
        &token,
        &[
            ("name", "runbooks"),
            ("visibility", "local"),
            ("description", "What the on-call team follows"),
        ],
    )
    .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.body);
    assert_eq!(created.location(), "/console/spaces?done=space.create");
    let space = service
        .list_spaces()
        .await
        .expect("spaces")
        .into_iter()
        .find(|space| space.name == "runbooks")
        .expect("created");
    assert_eq!(space.visibility, SpaceVisibility::Local);
    assert_eq!(space.description, "What the on-call team follows");
    assert_eq!(space.created_by, admin.actor.id);
    let page = get(&instance, created.location(), Some(&cookie)).await;
    assert!(page.body.contains("The space was created."), "{}", page.body);
    assert!(page.body.contains(space.id.as_str()), "{}", page.body);
    assert!(page.body.contains("What the on-call team follows"), "{}", page.body);
    let records = audited(service, "space.create").await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].key_id, admin.key_id);
    assert_eq!(records[0].request["visibility"], "local");

    // The same name again, or a visibility that is neither, is refused with the page and the form as sent.
    let spaces = rows(&instance, "spaces").await;
    for (fields, said) in [
        ([("name", "runbooks"), ("visibility", "federated")], "exists already"),
        (
            [("name", "elsewhere"), ("visibility", "public")],
            "visibility must be federated or local",
        ),
    ] {
        let answer = submit(&instance, "/console/spaces", &cookie, &token, &fields).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{fields:?}: {}", answer.body);
        assert!(answer.body.contains(said), "{said}: {}", answer.body);
        assert!(
            answer.body.contains(&format!("value=\"{}\"", fields[0].1)),
            "{}",
            answer.body
        );
    }
    assert_eq!(rows(&instance, "spaces").await, spaces);
}

#[tokio::test]
async fn a_form_larger_than_the_instance_takes_gets_a_console_page_and_changes_nothing() {
    let instance = TestInstance::start_with("alpha.test", |config| config.max_request_bytes = 8192).await;
    let service = instance.service();
    let admin = service.authenticate(&instance.admin_key).await.expect("the admin");
    let cookie = sign_in(&instance, &instance.admin_key).await;
    let token = get(&instance, "/console/spaces", Some(&cookie)).await.form_token();
    let spaces = rows(&instance, "spaces").await;

    let description = "runbook ".repeat(2048);
    let answer = submit(
        &instance,
        "/console/spaces",
        &cookie,
        &token,
        &[
            ("name", "too-large"),
            ("visibility", "local"),
            ("description", &description),
        ],
    )
    .await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", answer.body);
    assert_eq!(
        answer
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok()),
        Some("text/html; charset=utf-8")
    );
    assert_security_headers(&answer);
    assert!(
        answer
            .body
            .contains("The form was larger than this instance takes (8192 bytes), so nothing was done."),
        "{}",
        answer.body
    );
    assert!(answer.body.contains("<h1>Payload Too Large</h1>"), "{}", answer.body);
    assert!(
        answer.body.contains(admin.actor.id.as_str()),
        "in the frame of the signed-in admin: {}",
        answer.body
    );
    assert_eq!(rows(&instance, "spaces").await, spaces, "no space was created");
    assert!(
        audited(service, "space.create").await.is_empty(),
        "and no action was taken"
    );

    // A form that says it is too large is refused before its body is read, signed in or not.
    let request = http::Request::builder()
        .method(http::Method::POST)
        .uri("/console/sign-in")
        .header(header::HOST, "alpha.test")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::CONTENT_LENGTH, "1000000")
        .header("sec-fetch-site", "same-origin")
        .body(axum::body::Body::from(format!("api_key={}", instance.admin_key)))
        .expect("a request");
    let answer = tower::ServiceExt::oneshot(instance.instance.router(), request)
        .await
        .expect("an answer");
    assert_eq!(answer.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        answer.headers().get(header::SET_COOKIE).is_none(),
        "no session was opened"
    );
    assert!(answer.headers().contains_key("content-security-policy"));
    let bytes = axum::body::to_bytes(answer.into_body(), usize::MAX)
        .await
        .expect("a body");
    assert!(String::from_utf8_lossy(&bytes).contains("so nothing was done"));

    // A form within the limit is taken as before.
    let created = submit(
        &instance,
        "/console/spaces",
        &cookie,
        &token,
        &[("name", "small-enough"), ("visibility", "local")],
    )
    .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.body);
    assert_eq!(rows(&instance, "spaces").await, spaces + 1);
}

#[tokio::test]
async fn without_a_session_the_pages_send_to_sign_in() {
    let instance = TestInstance::start("alpha.test").await;
    for path in ["/console/people", "/console/spaces"] {
        let away = get(&instance, path, None).await;
        assert_eq!(away.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(away.location(), "/console/sign-in", "{path}");
    }
    // A key without the admin scope opens no session to reach them either.
    let writer = agent(instance.service(), "writer").await;
    let refused = post_form(
        &instance,
        "/console/sign-in",
        None,
        &[("api_key", &writer.key)],
        Some("same-origin"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_people_page_shows_actors_a_hundred_at_a_time_finds_them_by_name_and_lists_the_keys_of_those_shown() {
    let instance = TestInstance::start("alpha.test").await;
    let service = instance.service();
    let cookie = sign_in(&instance, &instance.admin_key).await;
    // 148 agents and their controller, besides the two actors the instance starts with: 151 actors, two pages.
    let lab = controller(service, "Lab").await;
    let mut agents = Vec::new();
    for number in 0..148 {
        agents.push(agent_of_with_scopes(service, &lab, &format!("worker {number:03}"), "read").await);
    }
    let total = service.list_actors().await.expect("actors").len();
    assert_eq!(total, 151);
    let actor_rows = |page: &Answer| {
        ["usr_", "org_", "ai_"]
            .iter()
            .map(|prefix| page.body.matches(&format!("<th scope=\"row\"><code>{prefix}")).count())
            .sum::<usize>()
    };

    let first = get(&instance, "/console/people", Some(&cookie)).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert!(first.body.contains("Actors 1 to 100 of 151."), "{}", first.body);
    assert_eq!(actor_rows(&first), 100);
    assert!(
        first.body.contains("href=\"/console/people?page=2\" rel=\"next\""),
        "{}",
        first.body
    );
    assert!(!first.body.contains("rel=\"prev\""));
    // The key table holds the keys of the actors shown, and the forms suggest only them.
    let shown_keys = first.body.matches("<th scope=\"row\"><code>key_").count();
    let second = get(&instance, "/console/people?page=2", Some(&cookie)).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert!(second.body.contains("Actors 101 to 151 of 151."), "{}", second.body);
    assert_eq!(actor_rows(&second), 51);
    assert!(
        second.body.contains("href=\"/console/people?page=1\" rel=\"prev\""),
        "{}",
        second.body
    );
    assert!(!second.body.contains("rel=\"next\""));
    let all_keys = service
        .list_api_keys_of_actors(
            &service
                .list_actors()
                .await
                .expect("actors")
                .into_iter()
                .map(|actor| actor.id)
                .collect::<Vec<_>>(),
        )
        .await
        .expect("keys")
        .len();
    assert_eq!(
        shown_keys + second.body.matches("<th scope=\"row\"><code>key_").count(),
        all_keys,
        "each key on the page of its actor"
    );
    assert_eq!(
        first.body.matches("<datalist id=\"actor-choices\">").count(),
        1,
        "one list of suggestions"
    );
    assert_eq!(
        first.body.split("<datalist id=\"actor-choices\">").nth(1).map(|rest| {
            rest.split("</datalist>")
                .next()
                .unwrap_or_default()
                .matches("<option")
                .count()
        }),
        Some(100)
    );

    // Found by a part of the name, any case, or by the ID.
    let found = get(&instance, "/console/people?find=WORKER+01", Some(&cookie)).await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    assert!(
        found
            .body
            .contains("Actors 1 to 10 of 10 whose name or ID holds “WORKER 01”."),
        "worker 010 to 019: {}",
        found.body
    );
    assert_eq!(actor_rows(&found), 10);
    let by_id = get(
        &instance,
        &format!("/console/people?find={}", agents[42].caller.actor.id.as_str()),
        Some(&cookie),
    )
    .await;
    assert_eq!(actor_rows(&by_id), 1, "{}", by_id.body);
    assert!(by_id.body.contains("worker 042"));
    let none = get(&instance, "/console/people?find=nobody", Some(&cookie)).await;
    assert!(
        none.body.contains("No actor has a name or ID that holds “nobody”."),
        "{}",
        none.body
    );
    assert_eq!(actor_rows(&none), 0);
    // The text is matched as typed: `%` and `_` are no wildcards (as wildcards these would find workers).
    for wildcard in ["wor%25042", "wo_ker"] {
        let literal = get(&instance, &format!("/console/people?find={wildcard}"), Some(&cookie)).await;
        assert_eq!(actor_rows(&literal), 0, "{wildcard}: {}", literal.body);
    }

    // A page that is not a number is refused with the page's first actors; one past the end says so.
    let refused = get(&instance, "/console/people?page=0", Some(&cookie)).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(
        refused.body.contains("page must be a whole number from 1"),
        "{}",
        refused.body
    );
    assert_security_headers(&refused);
    let beyond = get(&instance, "/console/people?page=9", Some(&cookie)).await;
    assert_eq!(beyond.status, StatusCode::OK);
    assert!(
        beyond.body.contains("No actor on page 9: there are 151."),
        "{}",
        beyond.body
    );
}
