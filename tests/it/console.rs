//! The web console as an admin's browser meets it: sign-in with an admin key, the session cookie and its ends (idle,
//! expiry, sign-out, a revoked key), forms that another site sends or that lack the session's form token refused with
//! nothing done, the security headers of every answer, hashed assets, and the overview's numbers.

use axum::body::Body;
use chrono::TimeDelta;
use http::{Method, Request, StatusCode, header};
use interai::clock::Clock;
use tower::ServiceExt;

use crate::federation::peered;
use crate::fixtures::publish_procedure;
use crate::fixtures::{agent, agent_of_with_scopes, controller};
use crate::harness::{DirectConnection, TestInstance};
use crate::support::network::{Network, Node};

/// An answer as a browser sees it.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn location(&self) -> &str {
        self.headers
            .get(header::LOCATION)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
    }

    pub(crate) fn set_cookie(&self) -> Option<&str> {
        self.headers
            .get(header::SET_COOKIE)
            .and_then(|value| value.to_str().ok())
    }

    /// The session cookie's `name=value` pair from `Set-Cookie`.
    pub(crate) fn session_cookie(&self) -> String {
        let set_cookie = self.set_cookie().expect("a Set-Cookie header");
        set_cookie.split(';').next().expect("a pair").trim().to_owned()
    }

    /// The value of the hidden `form_token` field of the page.
    pub(crate) fn form_token(&self) -> String {
        let marker = "name=\"form_token\" value=\"";
        let start = self.body.find(marker).expect("a form token on the page") + marker.len();
        let end = self.body[start..].find('"').expect("the field's end") + start;
        self.body[start..end].to_owned()
    }
}

/// What serves the console in a test: a lone instance, or a node of a network.
pub(crate) trait Console {
    fn console_router(&self) -> axum::Router;
}

impl Console for TestInstance {
    fn console_router(&self) -> axum::Router {
        self.instance.router()
    }
}

impl Console for Node {
    fn console_router(&self) -> axum::Router {
        self.router.clone()
    }
}

async fn send(instance: &impl Console, request: Request<Body>) -> Answer {
    let response = instance
        .console_router()
        .oneshot(request)
        .await
        .expect("the router answers");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

pub(crate) async fn get(instance: &impl Console, path: &str, cookie: Option<&str>) -> Answer {
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::HOST, "alpha.test");
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    send(instance, request.body(Body::empty()).expect("a request")).await
}

/// `GET path` on the admin API with the admin key `key`, on the instance that serves the console: the status and the
/// JSON answer (`null` when the answer is not JSON).
pub(crate) async fn admin_get(instance: &impl Console, key: &str, path: &str) -> (StatusCode, serde_json::Value) {
    let request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::HOST, "alpha.test")
        .header(header::AUTHORIZATION, format!("Bearer {key}"))
        .body(Body::empty())
        .expect("a request");
    let answer = send(instance, request).await;
    (
        answer.status,
        serde_json::from_str(&answer.body).unwrap_or(serde_json::Value::Null),
    )
}

/// A form posted as a browser on a console page posts it (`Sec-Fetch-Site: same-origin`), or as `site` says.
pub(crate) async fn post_form(
    instance: &impl Console,
    path: &str,
    cookie: Option<&str>,
    fields: &[(&str, &str)],
    site: Option<&str>,
) -> Answer {
    let body = fields
        .iter()
        .map(|(name, value)| format!("{name}={}", urlencoding(value)))
        .collect::<Vec<_>>()
        .join("&");
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::HOST, "alpha.test")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    if let Some(site) = site {
        request = request.header("sec-fetch-site", site);
    }
    send(instance, request.body(Body::from(body)).expect("a request")).await
}

fn urlencoding(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (byte as char).to_string(),
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// A console form posted as a browser posts it from a page of the signed-in session `cookie`: its `token`, then
/// `fields`.
pub(crate) async fn post_signed(
    instance: &impl Console,
    path: &str,
    cookie: &str,
    token: &str,
    fields: &[(&str, &str)],
) -> Answer {
    let mut all = vec![("form_token", token)];
    all.extend_from_slice(fields);
    post_form(instance, path, Some(cookie), &all, Some("same-origin")).await
}

/// An admin of `node` (an `admin`-scope key of a new controller) signed in to its console: the admin and the
/// session cookie.
pub(crate) async fn signed_in_admin(node: &Node) -> (crate::fixtures::Agent, String) {
    let owner = controller(node.service(), "the realm's admin").await;
    let admin = agent_of_with_scopes(node.service(), &owner, "the admin's key", "admin").await;
    let cookie = sign_in(node, &admin.key).await;
    (admin, cookie)
}

/// The sign-in form posted with `key`, from a page of the console or as `site` says.
async fn post_sign_in(instance: &impl Console, key: &str, site: &str) -> Answer {
    post_form(instance, "/console/sign-in", None, &[("api_key", key)], Some(site)).await
}

/// Signs in with `key` and returns the session cookie to send back.
pub(crate) async fn sign_in(instance: &impl Console, key: &str) -> String {
    let answer = post_sign_in(instance, key, "same-origin").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert_eq!(answer.location(), "/console/");
    answer.session_cookie()
}

#[track_caller]
pub(crate) fn assert_security_headers(answer: &Answer) {
    let header = |name: &str| {
        answer
            .headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let policy = header("content-security-policy");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{policy}");
    }
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert_eq!(header("x-frame-options"), "DENY");
    assert_eq!(header("referrer-policy"), "no-referrer");
    assert_eq!(header("x-content-type-options"), "nosniff");
}

#[tokio::test]
async fn an_admin_signs_in_with_an_admin_key_and_reads_the_overview_in_a_page_that_loads_nothing_from_elsewhere() {
    let instance = TestInstance::start("alpha.test").await;
    agent(instance.service(), "writer").await;

    // Without a session, a page sends the browser to the sign-in form.
    let away = get(&instance, "/console/", None).await;
    assert_eq!(away.status, StatusCode::SEE_OTHER);
    assert_eq!(away.location(), "/console/sign-in");
    assert_eq!(get(&instance, "/console", None).await.location(), "/console/");

    let form = get(&instance, "/console/sign-in", None).await;
    assert_eq!(form.status, StatusCode::OK);
    assert_security_headers(&form);
    assert_eq!(
        form.headers
            .get(header::CACHE_CONTROL)
            .and_then(|value| value.to_str().ok()),
        Some("no-store")
    );
    assert!(form.body.contains("<label for=\"api_key\">"), "{}", form.body);
    assert!(!form.body.contains("<script>"), "no inline script");
    assert!(!form.body.contains("style="), "no inline style");
    assert!(!form.body.contains("https://"), "nothing from another site");

    // The stylesheet and the script are served under their hashed names, cached for good; another name is 404.
    for (extension, content_type) in [("css", "text/css"), ("js", "text/javascript")] {
        let marker = "/console/assets/console-";
        let start = form
            .body
            .match_indices(marker)
            .map(|(index, _)| index)
            .find(|index| {
                form.body[*index..]
                    .split('"')
                    .next()
                    .is_some_and(|path| path.ends_with(extension))
            })
            .unwrap_or_else(|| panic!("the page names a .{extension} asset"));
        let path = form.body[start..].split('"').next().expect("a path").to_owned();
        let asset = get(&instance, &path, None).await;
        assert_eq!(asset.status, StatusCode::OK, "{path}");
        assert!(
            asset.headers[header::CONTENT_TYPE]
                .to_str()
                .is_ok_and(|value| value.starts_with(content_type)),
            "{path}"
        );
        assert_eq!(
            asset.headers[header::CACHE_CONTROL].to_str().ok(),
            Some("public, max-age=31536000, immutable")
        );
        let stale = path.replace("console-", "console-0");
        assert_eq!(get(&instance, &stale, None).await.status, StatusCode::NOT_FOUND);
    }

    // The bootstrap admin's key opens a session: a cookie only the console's paths get, that no script reads and that
    // no other site's request carries; it is not the key, and the database keeps only its hash.
    let signed_in = post_sign_in(&instance, &instance.admin_key, "same-origin").await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    let set_cookie = signed_in.set_cookie().expect("a cookie").to_owned();
    for attribute in ["Path=/console", "HttpOnly", "SameSite=Strict"] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    assert!(
        !set_cookie.contains("Secure"),
        "an http:// realm gets no Secure cookie: {set_cookie}"
    );
    assert!(!set_cookie.contains(&instance.admin_key), "{set_cookie}");
    let cookie = signed_in.session_cookie();
    let token = cookie.split_once('=').expect("name=value").1.to_owned();
    let mut database = DirectConnection::open(&instance.database.url).await;
    assert_eq!(
        database
            .count("SELECT COUNT(*) FROM console_sessions WHERE token_sha256 = $1", &token)
            .await,
        0,
        "the token itself is not stored"
    );
    assert_eq!(
        database
            .count(
                "SELECT COUNT(*) FROM console_sessions WHERE ended_at IS NULL AND id <> $1",
                ""
            )
            .await,
        1
    );
    database.close().await;

    // The overview shows what `GET /admin/instance` does.
    let overview = instance.service().instance_overview().await.expect("overview");
    let page = get(&instance, "/console/", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_security_headers(&page);
    assert!(page.body.contains("alpha.test"), "{}", page.body);
    for (label, count) in [
        ("Actors", overview.counts.actors),
        ("Active API keys", overview.counts.active_api_keys),
        ("Content items", overview.counts.content),
        ("Peers", overview.counts.peers),
    ] {
        let row = format!("<tr><th scope=\"row\">{label}</th><td>{count}</td></tr>");
        assert!(page.body.contains(&row), "{row} in {}", page.body);
    }
    for health in &overview.loops {
        assert!(page.body.contains(health.name), "{}", health.name);
    }
    assert!(page.body.contains("No backup has been made"), "{}", page.body);
    // How long the process has been up, from the moment its service was made.
    let up_for = instance.clock.now() - overview.started_at;
    assert!(up_for >= TimeDelta::zero());
    instance.clock.advance(TimeDelta::minutes(7));
    let page = get(&instance, "/console/", Some(&cookie)).await;
    let shown = format!(
        "<dt>Up for</dt><dd>{} min",
        (up_for + TimeDelta::minutes(7)).num_minutes()
    );
    assert!(page.body.contains(&shown), "{shown} in {}", page.body);
    let now = instance.clock.now().format("%Y-%m-%d %H:%M:%S UTC").to_string();
    assert!(
        page.body.contains(&now),
        "times in UTC until the script shows them in the reader's zone"
    );
}

#[tokio::test]
async fn a_key_that_is_not_valid_or_has_no_admin_scope_opens_no_session() {
    let instance = TestInstance::start("alpha.test").await;
    let writer = agent(instance.service(), "writer").await;

    let not_admin = post_sign_in(&instance, &writer.key, "same-origin").await;
    assert_eq!(not_admin.status, StatusCode::FORBIDDEN);
    assert!(not_admin.body.contains("admin scope"), "{}", not_admin.body);
    assert!(not_admin.set_cookie().is_none());

    let unknown = post_sign_in(&instance, "iak_not-a-key", "same-origin").await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert!(unknown.body.contains("not valid"), "{}", unknown.body);
    assert!(unknown.set_cookie().is_none());

    // A sign-in form that another site sent is refused before the key is even read.
    let cross_site = post_sign_in(&instance, &instance.admin_key, "cross-site").await;
    assert_eq!(cross_site.status, StatusCode::FORBIDDEN);
    assert!(cross_site.set_cookie().is_none());

    // A form without the key field, or with an empty key, gets the sign-in page's answer.
    for fields in [vec![], vec![("api_key", "")]] {
        let empty = post_form(&instance, "/console/sign-in", None, &fields, Some("same-origin")).await;
        assert_eq!(empty.status, StatusCode::UNAUTHORIZED, "{fields:?}: {}", empty.body);
        assert!(empty.body.contains("an API key is required"), "{}", empty.body);
        assert_security_headers(&empty);
        assert!(empty.set_cookie().is_none());
    }

    // A cookie that names no session is no session.
    let forged = get(&instance, "/console/", Some("interai_console=ics_forged")).await;
    assert_eq!(forged.status, StatusCode::SEE_OTHER);
    assert!(forged.location().starts_with("/console/sign-in"));
}

#[tokio::test]
async fn a_session_ends_when_unused_for_the_idle_time_at_its_expiry_at_sign_out_and_when_its_key_is_revoked() {
    let instance = TestInstance::start_with("alpha.test", |config| {
        config.console_idle_minutes = 30;
        config.console_session_hours = 1;
    })
    .await;

    // Used every 20 minutes it stays open, until its hour is over.
    let cookie = sign_in(&instance, &instance.admin_key).await;
    for _ in 0..2 {
        instance.clock.advance(TimeDelta::minutes(20));
        assert_eq!(get(&instance, "/console/", Some(&cookie)).await.status, StatusCode::OK);
    }
    instance.clock.advance(TimeDelta::minutes(20));
    let expired = get(&instance, "/console/", Some(&cookie)).await;
    assert_eq!(expired.status, StatusCode::SEE_OTHER);
    assert_eq!(expired.location(), "/console/sign-in?ended=1");
    assert!(
        expired.set_cookie().is_some_and(|value| value.contains("Max-Age=0")),
        "the browser forgets the cookie"
    );
    let asked_again = get(&instance, "/console/sign-in?ended=1", None).await;
    assert!(asked_again.body.contains("Your session ended"), "{}", asked_again.body);

    // Unused for the idle time, it ends.
    let cookie = sign_in(&instance, &instance.admin_key).await;
    instance.clock.advance(TimeDelta::minutes(29));
    assert_eq!(get(&instance, "/console/", Some(&cookie)).await.status, StatusCode::OK);
    instance.clock.advance(TimeDelta::minutes(31));
    assert_eq!(
        get(&instance, "/console/", Some(&cookie)).await.status,
        StatusCode::SEE_OTHER
    );

    // Signing out ends it at once.
    let cookie = sign_in(&instance, &instance.admin_key).await;
    let page = get(&instance, "/console/", Some(&cookie)).await;
    let out = post_form(
        &instance,
        "/console/sign-out",
        Some(&cookie),
        &[("form_token", &page.form_token())],
        Some("same-origin"),
    )
    .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER, "{}", out.body);
    assert_eq!(out.location(), "/console/sign-in?signed_out=1");
    assert_eq!(
        get(&instance, "/console/", Some(&cookie)).await.status,
        StatusCode::SEE_OTHER
    );

    // A second admin's key: its session ends when the key is revoked.
    let owner = controller(instance.service(), "second admin").await;
    let second = agent_of_with_scopes(instance.service(), &owner, "second admin's key", "admin").await;
    let cookie = sign_in(&instance, &second.key).await;
    assert_eq!(get(&instance, "/console/", Some(&cookie)).await.status, StatusCode::OK);
    instance
        .service()
        .revoke_api_key(&second.caller.key_id)
        .await
        .expect("revoked");
    let revoked = get(&instance, "/console/", Some(&cookie)).await;
    assert_eq!(revoked.status, StatusCode::SEE_OTHER);
    assert_eq!(revoked.location(), "/console/sign-in?ended=1");
    let again = post_sign_in(&instance, &second.key, "same-origin").await;
    assert_eq!(again.status, StatusCode::UNAUTHORIZED, "{}", again.body);

    // Signing in removes the sessions that ended (the revoked key's too), so the table holds only live ones.
    sign_in(&instance, &instance.admin_key).await;
    let mut database = DirectConnection::open(&instance.database.url).await;
    assert_eq!(
        database
            .count("SELECT COUNT(*) FROM console_sessions WHERE id <> $1", "")
            .await,
        1,
        "the session just opened is the only one left"
    );
    database.close().await;
}

#[tokio::test]
async fn a_form_without_the_session_s_form_token_or_sent_by_another_site_is_refused_and_changes_nothing() {
    let instance = TestInstance::start("alpha.test").await;
    let cookie = sign_in(&instance, &instance.admin_key).await;
    let page = get(&instance, "/console/", Some(&cookie)).await;
    let form_token = page.form_token();

    let refusals = [
        (
            "a wrong form token",
            Some(cookie.as_str()),
            "not-the-token",
            Some("same-origin"),
        ),
        ("no form token", Some(cookie.as_str()), "", Some("same-origin")),
        (
            "another site's page",
            Some(cookie.as_str()),
            form_token.as_str(),
            Some("cross-site"),
        ),
        (
            "a sibling site's page",
            Some(cookie.as_str()),
            form_token.as_str(),
            Some("same-site"),
        ),
        ("no session", None, form_token.as_str(), Some("same-origin")),
    ];
    for (what, cookie_sent, token, site) in refusals {
        let answer = post_form(
            &instance,
            "/console/sign-out",
            cookie_sent,
            &[("form_token", token)],
            site,
        )
        .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{what}: {}", answer.body);
        assert_security_headers(&answer);
        assert_eq!(
            get(&instance, "/console/", Some(&cookie)).await.status,
            StatusCode::OK,
            "{what}: the session is still open"
        );
    }
    // Nor does a form without the field at all.
    let without_field = post_form(&instance, "/console/sign-out", Some(&cookie), &[], Some("same-origin")).await;
    assert_eq!(without_field.status, StatusCode::FORBIDDEN, "{}", without_field.body);
    assert_eq!(get(&instance, "/console/", Some(&cookie)).await.status, StatusCode::OK);

    // Another session's form token does not do either.
    let other = sign_in(&instance, &instance.admin_key).await;
    let other_token = get(&instance, "/console/", Some(&other)).await.form_token();
    assert_ne!(other_token, form_token);
    let crossed = post_form(
        &instance,
        "/console/sign-out",
        Some(&cookie),
        &[("form_token", &other_token)],
        Some("same-origin"),
    )
    .await;
    assert_eq!(crossed.status, StatusCode::FORBIDDEN);

    // A client that sends no `Sec-Fetch-Site` (not a browser) is judged by the form token alone.
    let out = post_form(
        &instance,
        "/console/sign-out",
        Some(&cookie),
        &[("form_token", &form_token)],
        None,
    )
    .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER, "{}", out.body);
}

#[tokio::test]
async fn an_instance_served_over_https_marks_its_session_cookie_secure() {
    let instance = TestInstance::start_with("alpha.test", |config| {
        config.public_url = url::Url::parse("https://alpha.test/").expect("a URL");
    })
    .await;
    let answer = post_sign_in(&instance, &instance.admin_key, "same-origin").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert!(
        answer.set_cookie().is_some_and(|value| value.contains("; Secure")),
        "{:?}",
        answer.set_cookie()
    );
}

#[tokio::test]
async fn the_peers_page_shows_each_peer_s_state_trust_lag_backlog_and_last_failure() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    peered(&network, "alpha.test", "gamma.test").await;
    let alpha = network.node("alpha.test");
    let owner = controller(alpha.service(), "alpha's admin").await;
    let admin = agent_of_with_scopes(alpha.service(), &owner, "alpha's admin key", "admin").await;
    let author = agent(alpha.service(), "author").await;

    // Beta goes down while alpha publishes: the change waits for it, and the rounds fail.
    network.switchboard.take_down("beta.test");
    publish_procedure(alpha.service(), &author, "procedure that waits for beta", &[]).await;
    network.settle().await;
    network.advance(TimeDelta::minutes(20));
    network.settle().await;
    // Gamma is blocked by alpha's admin, with a reason.
    alpha
        .federation()
        .block_peer("gamma.test", "sent spam", None)
        .await
        .expect("blocked");

    let cookie = sign_in(alpha, &admin.key).await;
    let page = get(alpha, "/console/peers", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_security_headers(&page);
    let row = |realm: &str| -> String {
        let start = page
            .body
            .find(&format!("<a href=\"/console/peers/{realm}\">{realm}</a></th>"))
            .unwrap_or_else(|| panic!("a row for {realm}: {}", page.body));
        let end = page.body[start..].find("</tr>").expect("the row's end") + start;
        page.body[start..end].to_owned()
    };
    let beta = row("beta.test");
    let view = alpha.federation().peer_view("beta.test").await.expect("beta");
    assert_eq!(view.undelivered_events, 1);
    assert!(beta.contains("<td>active</td>"), "{beta}");
    assert!(beta.contains("<td>standard</td>"), "{beta}");
    assert!(
        beta.contains("<td>20 min</td>"),
        "the oldest undelivered change waited 20 minutes: {beta}"
    );
    assert!(beta.contains("<td>1</td>"), "one undelivered event: {beta}");
    assert!(beta.contains("connect_failed"), "the last failure: {beta}");
    let gamma = row("gamma.test");
    assert!(gamma.contains("blocked"), "{gamma}");
    assert!(gamma.contains("sent spam, until unblocked"), "{gamma}");
    assert!(
        page.body
            .contains("<tr class=\"alarm\">\n      <th scope=\"row\"><a href=\"/console/peers/gamma.test\">"),
        "a blocked peer is marked: {}",
        page.body
    );
    let trust = match &view.trust {
        Some(trust) => format!("{:.2} ({})", trust.trust, trust.reason.to_text()),
        None => "not computed yet".to_owned(),
    };
    assert!(beta.contains(&trust), "{trust} in {beta}");

    // Beta's page: its pinned keys with their fingerprints, its replication, no dead letters.
    let page = get(alpha, "/console/peers/beta.test", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(!view.keys.is_empty());
    for key in &view.keys {
        assert!(page.body.contains(&key.fingerprint), "{}", key.fingerprint);
        assert!(page.body.contains(&key.key_id), "{}", key.key_id);
    }
    assert!(page.body.contains("rounds in a row"), "{}", page.body);
    assert!(page.body.contains("connect_failed"), "{}", page.body);
    assert!(
        page.body.contains("<dt>Outbox lag</dt><dd>20 min</dd>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("None: every message to this peer"), "{}", page.body);
    let unknown = get(alpha, "/console/peers/nobody.test", Some(&cookie)).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.body);
    assert_security_headers(&unknown);

    // An admin of beta has no session on alpha.
    let elsewhere = get(network.node("beta.test"), "/console/peers", Some(&cookie)).await;
    assert_eq!(elsewhere.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn the_audit_page_filters_the_log_pages_through_it_and_says_why_a_filter_is_refused() {
    use interai::service::audit::CallAudit;
    use interai::service::{ErrorCode, ServiceError};

    let instance = TestInstance::start("alpha.test").await;
    let writer = agent(instance.service(), "writer").await;
    let reader = agent(instance.service(), "reader").await;
    let refused = ServiceError::new(ErrorCode::NotFound, "no such item");
    // 55 searches by the reader (a page holds 50), then 3 publishes by the writer, one refused.
    let calls = (0..55).map(|_| (&reader, "search", None)).chain([
        (&writer, "publish", None),
        (&writer, "publish", Some(&refused)),
        (&writer, "publish", None),
    ]);
    for (caller, tool, failure) in calls {
        instance.clock.advance(TimeDelta::seconds(1));
        instance
            .service()
            .record_call(CallAudit {
                caller: &caller.caller,
                tool,
                is_write: tool == "publish",
                request: &serde_json::json!({}),
                outcome: match failure {
                    None => Ok("done".to_owned()),
                    Some(error) => Err(error),
                },
                duration: std::time::Duration::from_micros(2_500),
                client_name: None,
                client_version: None,
            })
            .await
            .expect("recorded");
    }
    let cookie = sign_in(&instance, &instance.admin_key).await;

    // The writer's calls, newest first, the refused one marked.
    let writer_id = writer.caller.actor.id.to_string();
    let page = get(&instance, &format!("/console/audit?actor={writer_id}"), Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_security_headers(&page);
    assert_eq!(page.body.matches("<td>publish</td>").count(), 3, "{}", page.body);
    assert_eq!(page.body.matches("<td>search</td>").count(), 0);
    assert_eq!(page.body.matches("<tr class=\"alarm\">").count(), 1, "{}", page.body);
    assert!(page.body.contains("<td>not_found</td>"), "{}", page.body);
    assert!(page.body.contains("<td>2.5 ms</td>"), "{}", page.body);
    assert!(
        page.body.contains(&format!("value=\"{writer_id}\"")),
        "the form keeps the filter"
    );
    assert!(!page.body.contains("rel=\"next\""), "one page");

    // The reader's 55 searches: 50, then the 5 older ones through the link, none twice.
    let first = get(&instance, "/console/audit?tool=search", Some(&cookie)).await;
    assert_eq!(first.body.matches("<td>search</td>").count(), 50);
    let marker = "<a href=\"";
    let next = first
        .body
        .split(marker)
        .find_map(|part| {
            part.split_once("\" rel=\"next\"")
                .map(|(link, _)| link.replace("&#38;", "&").replace("&amp;", "&"))
        })
        .expect("a link to the next page");
    assert!(next.starts_with("/console/audit?tool=search&cursor="), "{next}");
    let second = get(&instance, &next, Some(&cookie)).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(second.body.matches("<td>search</td>").count(), 5, "{}", second.body);
    assert!(!second.body.contains("rel=\"next\""));

    // A filter that does not parse is said above the form, with nothing listed.
    let refused_filter = get(&instance, "/console/audit?from=yesterday", Some(&cookie)).await;
    assert_eq!(refused_filter.status, StatusCode::OK);
    assert!(
        refused_filter.body.contains("role=\"alert\""),
        "{}",
        refused_filter.body
    );
    let alert = refused_filter
        .body
        .split("role=\"alert\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_default();
    assert!(alert.contains("from"), "the reason names the filter: {alert}");
    assert_eq!(refused_filter.body.matches("<td>search</td>").count(), 0);

    // Without a session, the sign-in page.
    assert_eq!(
        get(&instance, "/console/audit", None).await.status,
        StatusCode::SEE_OTHER
    );
}

/// The audit records of `tool` (every record for `""`) on `service`, newest first.
async fn audited(service: &interai::service::Service, tool: &str) -> Vec<interai::store::audit::McpCallRecord> {
    service
        .audit_log(interai::service::audit::AuditQuery {
            tool: (!tool.is_empty()).then(|| tool.to_owned()),
            ..Default::default()
        })
        .await
        .expect("the audit log")
        .records
}

#[tokio::test]
async fn two_admins_peer_their_instances_through_the_console_comparing_fingerprints_and_each_step_is_audited() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let alpha_owner = controller(alpha.service(), "alpha's admin").await;
    let alpha_admin = agent_of_with_scopes(alpha.service(), &alpha_owner, "alpha's admin key", "admin").await;
    let beta_owner = controller(beta.service(), "beta's admin").await;
    let beta_admin = agent_of_with_scopes(beta.service(), &beta_owner, "beta's admin key", "admin").await;
    let alpha_cookie = sign_in(alpha, &alpha_admin.key).await;
    let beta_cookie = sign_in(beta, &beta_admin.key).await;

    // Each admin reads their own fingerprint on the peers page, to read it out to the other.
    let fingerprint_of = |page: &Answer| -> String {
        let marker = "<code class=\"fingerprint\">";
        let start = page.body.find(marker).expect("a fingerprint") + marker.len();
        let end = page.body[start..].find('<').expect("its end") + start;
        page.body[start..end].to_owned()
    };
    let beta_peers = get(beta, "/console/peers", Some(&beta_cookie)).await;
    let beta_fingerprint = fingerprint_of(&beta_peers);
    let beta_keys = beta.federation().published_instance_keys().await.expect("beta's keys");
    assert_eq!(beta_fingerprint, beta_keys[0].description.public_key.fingerprint());
    let alpha_fingerprint = fingerprint_of(&get(alpha, "/console/peers", Some(&alpha_cookie)).await);

    // Alpha's admin looks beta up: the page shows beta's fingerprint and asks for the one beta's admin reads out.
    let peers_page = get(alpha, "/console/peers", Some(&alpha_cookie)).await;
    let token = peers_page.form_token();
    let looked_up = post_form(
        alpha,
        "/console/peers/look-up",
        Some(&alpha_cookie),
        &[("form_token", &token), ("url", &beta.url())],
        Some("same-origin"),
    )
    .await;
    assert_eq!(looked_up.status, StatusCode::OK, "{}", looked_up.body);
    assert!(looked_up.body.contains(&beta_fingerprint), "{}", looked_up.body);
    assert!(
        looked_up.body.contains("action=\"/console/peers/add\""),
        "{}",
        looked_up.body
    );
    // A URL that does not answer is said on the peers page, nothing added.
    let nowhere = post_form(
        alpha,
        "/console/peers/look-up",
        Some(&alpha_cookie),
        &[("form_token", &token), ("url", "http://nowhere.test")],
        Some("same-origin"),
    )
    .await;
    assert_eq!(nowhere.status, StatusCode::BAD_REQUEST, "{}", nowhere.body);
    assert!(nowhere.body.contains("class=\"notice failed\""), "{}", nowhere.body);

    // A fingerprint that is not beta's pins nothing: the add page again, with the error and beta's fingerprints.
    let beta_url = beta.url();
    let add = |fingerprint: String| {
        let token = token.clone();
        let beta_url = beta_url.clone();
        let cookie = alpha_cookie.clone();
        async move {
            post_form(
                alpha,
                "/console/peers/add",
                Some(&cookie),
                &[
                    ("form_token", &token),
                    ("url", &beta_url),
                    ("level", "high"),
                    ("fingerprint", &fingerprint),
                ],
                Some("same-origin"),
            )
            .await
        }
    };
    let refused = add(alpha_fingerprint.clone()).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("class=\"notice failed\""), "{}", refused.body);
    assert!(refused.body.contains("nothing was pinned"), "{}", refused.body);
    assert!(refused.body.contains(&beta_fingerprint), "{}", refused.body);
    assert!(
        alpha.federation().peer_view("beta.test").await.is_err(),
        "nothing added"
    );

    // The fingerprint beta's admin read out pins beta's key and asks beta to peer.
    let added = add(beta_fingerprint.clone()).await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    assert_eq!(added.location(), "/console/peers/beta.test?done=peer.add");
    let page = get(alpha, added.location(), Some(&alpha_cookie)).await;
    assert!(page.body.contains("class=\"notice done\""), "{}", page.body);
    let view = alpha.federation().peer_view("beta.test").await.expect("beta");
    assert_eq!(
        (view.peer.state.as_str(), view.peer.level.as_str()),
        ("pending_out", "high")
    );
    assert_eq!(view.keys[0].fingerprint, beta_fingerprint);

    // Beta's admin sees alpha waiting, and approves it only with alpha's fingerprint.
    network.settle().await;
    let alpha_page = get(beta, "/console/peers/alpha.test", Some(&beta_cookie)).await;
    assert!(alpha_page.body.contains("<dd>pending_in</dd>"), "{}", alpha_page.body);
    assert!(
        alpha_page.body.contains("action=\"/console/peers/alpha.test/approve\""),
        "{}",
        alpha_page.body
    );
    let approve = |fingerprint: String| {
        let token = alpha_page.form_token();
        let cookie = beta_cookie.clone();
        async move {
            post_form(
                beta,
                "/console/peers/alpha.test/approve",
                Some(&cookie),
                &[
                    ("form_token", &token),
                    ("fingerprint", &fingerprint),
                    ("level", "standard"),
                ],
                Some("same-origin"),
            )
            .await
        }
    };
    let refused = approve(beta_fingerprint.clone()).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("do not approve"), "{}", refused.body);
    assert_eq!(
        beta.federation()
            .peer_view("alpha.test")
            .await
            .expect("alpha")
            .peer
            .state
            .as_str(),
        "pending_in"
    );
    let approved = approve(alpha_fingerprint).await;
    assert_eq!(approved.status, StatusCode::SEE_OTHER, "{}", approved.body);
    assert_eq!(approved.location(), "/console/peers/alpha.test?done=peer.approve");
    network.settle().await;
    assert_eq!(
        alpha
            .federation()
            .peer_view("beta.test")
            .await
            .expect("beta")
            .peer
            .state
            .as_str(),
        "active"
    );
    assert_eq!(
        beta.federation()
            .peer_view("alpha.test")
            .await
            .expect("alpha")
            .peer
            .state
            .as_str(),
        "active"
    );

    // Each attempt is in the audit log under the signed-in key: the refused one with its code, the one that pinned.
    let adds = audited(alpha.service(), "admin/peer.add").await;
    assert_eq!(adds.len(), 2, "{adds:?}");
    assert_eq!(adds[0].outcome, "ok");
    assert_eq!(adds[1].outcome, "validation_failed");
    assert!(adds.iter().all(|record| record.key_id == alpha_admin.caller.key_id));
    assert!(
        adds.iter()
            .all(|record| record.client_name.as_deref() == Some("interai console"))
    );
    let approvals = audited(beta.service(), "admin/peer.approve").await;
    assert_eq!(
        approvals
            .iter()
            .map(|record| record.outcome.as_str())
            .collect::<Vec<_>>(),
        ["ok", "validation_failed"]
    );
}

#[tokio::test]
async fn an_admin_blocks_unblocks_sets_the_level_pins_the_trust_and_removes_a_peer_from_its_page() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let (_, cookie) = signed_in_admin(alpha).await;
    let token = get(alpha, "/console/peers/beta.test", Some(&cookie)).await.form_token();
    let beta = || async { alpha.federation().peer_view("beta.test").await.expect("beta") };

    // A block with an end that does not parse is refused, and beta stays active.
    let refused = post_signed(
        alpha,
        "/console/peers/beta.test/block",
        &cookie,
        &token,
        &[("reason", "spam"), ("until", "next week")],
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("RFC 3339"), "{}", refused.body);
    assert_eq!(beta().await.peer.state.as_str(), "active");

    let blocked = post_signed(
        alpha,
        "/console/peers/beta.test/block",
        &cookie,
        &token,
        &[("reason", "sent spam"), ("until", "7d")],
    )
    .await;
    assert_eq!(blocked.status, StatusCode::SEE_OTHER, "{}", blocked.body);
    assert_eq!(blocked.location(), "/console/peers/beta.test?done=peer.block");
    let view = beta().await;
    assert_eq!(view.peer.state.as_str(), "blocked");
    assert_eq!(view.peer.blocked_reason.as_deref(), Some("sent spam"));
    assert_eq!(
        view.peer.blocked_until,
        Some(alpha.service().now() + TimeDelta::days(7))
    );
    let page = get(alpha, blocked.location(), Some(&cookie)).await;
    assert!(page.body.contains("The peer is blocked"), "{}", page.body);
    assert!(page.body.contains("/console/peers/beta.test/unblock"), "{}", page.body);
    assert!(!page.body.contains("/console/peers/beta.test/block\""), "{}", page.body);

    let unblocked = post_signed(alpha, "/console/peers/beta.test/unblock", &cookie, &token, &[]).await;
    assert_eq!(unblocked.status, StatusCode::SEE_OTHER, "{}", unblocked.body);
    assert_eq!(beta().await.peer.state.as_str(), "active");

    let refused = post_signed(
        alpha,
        "/console/peers/beta.test/level",
        &cookie,
        &token,
        &[("level", "sky-high")],
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert_eq!(beta().await.peer.level.as_str(), "standard");
    let leveled = post_signed(
        alpha,
        "/console/peers/beta.test/level",
        &cookie,
        &token,
        &[("level", "low")],
    )
    .await;
    assert_eq!(leveled.status, StatusCode::SEE_OTHER, "{}", leveled.body);
    assert_eq!(beta().await.peer.level.as_str(), "low");

    let pinned = post_signed(
        alpha,
        "/console/peers/beta.test/pin",
        &cookie,
        &token,
        &[("trust", "0.3")],
    )
    .await;
    assert_eq!(pinned.status, StatusCode::SEE_OTHER, "{}", pinned.body);
    assert_eq!(beta().await.trust_pin, Some(0.3));
    let unpinned = post_signed(alpha, "/console/peers/beta.test/unpin", &cookie, &token, &[]).await;
    assert_eq!(unpinned.status, StatusCode::SEE_OTHER, "{}", unpinned.body);
    assert_eq!(beta().await.trust_pin, None);

    let unknown = post_signed(alpha, "/console/peers/beta.test/promote", &cookie, &token, &[]).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.body);

    let removed = post_signed(alpha, "/console/peers/beta.test/remove", &cookie, &token, &[]).await;
    assert_eq!(removed.status, StatusCode::SEE_OTHER, "{}", removed.body);
    assert_eq!(removed.location(), "/console/peers?done=peer.remove");
    assert!(alpha.federation().peer_view("beta.test").await.is_err());

    let audited_tools: Vec<String> = audited(alpha.service(), "")
        .await
        .into_iter()
        .map(|record| format!("{} {}", record.tool, record.outcome))
        .collect();
    for expected in [
        "admin/peer.block validation_failed",
        "admin/peer.block ok",
        "admin/peer.unblock ok",
        "admin/peer.level validation_failed",
        "admin/peer.level ok",
        "admin/peer.trust_pin ok",
        "admin/peer.trust_unpin ok",
        "admin/peer.remove ok",
    ] {
        assert!(
            audited_tools.iter().any(|tool| tool == expected),
            "{expected} in {audited_tools:?}"
        );
    }
}

#[tokio::test]
async fn an_admin_replays_and_drops_a_peer_s_dead_letters_from_its_page() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let owner = controller(alpha.service(), "alpha's admin").await;
    let admin = agent_of_with_scopes(alpha.service(), &owner, "alpha's admin key", "admin").await;
    let author = agent(alpha.service(), "author").await;
    network
        .switchboard
        .refuse("beta.test", 400, r#"{"reason":"malformed_object"}"#);
    publish_procedure(alpha.service(), &author, "refused procedure", &[]).await;
    publish_procedure(alpha.service(), &author, "another refused procedure", &[]).await;
    network.settle().await;
    network.switchboard.stop_refusing("beta.test");
    let letters = alpha
        .federation()
        .dead_letters(Some("beta.test"), 10)
        .await
        .expect("dead letters");
    assert_eq!(letters.len(), 2);

    let cookie = sign_in(alpha, &admin.key).await;
    let page = get(alpha, "/console/peers/beta.test", Some(&cookie)).await;
    let token = page.form_token();
    for letter in &letters {
        assert!(
            page.body
                .contains(&format!("action=\"/console/dead-letters/{}/replay\"", letter.id)),
            "{}",
            page.body
        );
    }
    let replayed = post_signed(
        alpha,
        &format!("/console/dead-letters/{}/replay", letters[0].id),
        &cookie,
        &token,
        &[("peer", "beta.test")],
    )
    .await;
    assert_eq!(replayed.status, StatusCode::SEE_OTHER, "{}", replayed.body);
    assert_eq!(replayed.location(), "/console/peers/beta.test?done=dead_letter.replay");
    let dropped = post_signed(
        alpha,
        &format!("/console/dead-letters/{}/drop", letters[1].id),
        &cookie,
        &token,
        &[("peer", "beta.test")],
    )
    .await;
    assert_eq!(dropped.status, StatusCode::SEE_OTHER, "{}", dropped.body);
    network.settle().await;
    assert!(
        alpha
            .federation()
            .dead_letters(Some("beta.test"), 10)
            .await
            .expect("dead letters")
            .is_empty(),
        "one was delivered when replayed, the other dropped"
    );
    // A letter that is gone is a 404 on the peer's page; a peer the form names that is not one is a 404 too.
    let again = post_signed(
        alpha,
        &format!("/console/dead-letters/{}/drop", letters[1].id),
        &cookie,
        &token,
        &[("peer", "beta.test")],
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "{}", again.body);
    assert!(again.body.contains("class=\"notice failed\""), "{}", again.body);
    let elsewhere = post_signed(
        alpha,
        &format!("/console/dead-letters/{}/drop", letters[1].id),
        &cookie,
        &token,
        &[("peer", "../audit")],
    )
    .await;
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND, "{}", elsewhere.body);
}

#[tokio::test]
async fn an_admin_rotates_the_signing_key_recomputes_trust_purges_a_peer_s_evidence_and_prunes_the_audit_log() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let (admin, cookie) = signed_in_admin(alpha).await;
    let token = get(alpha, "/console/peers", Some(&cookie)).await.form_token();
    // A new key: the peers page shows its fingerprint, and beta pins it from the announcement.
    let before = alpha.federation().signing_key().await.expect("key").key_id;
    let rotated = post_signed(alpha, "/console/identity/rotate-key", &cookie, &token, &[]).await;
    assert_eq!(rotated.status, StatusCode::SEE_OTHER, "{}", rotated.body);
    assert_eq!(rotated.location(), "/console/peers?done=identity.rotate_key");
    let after = alpha.federation().signing_key().await.expect("key");
    assert_ne!(after.key_id, before);
    let page = get(alpha, rotated.location(), Some(&cookie)).await;
    assert!(page.body.contains(&after.key_id), "{}", page.body);
    network.settle().await;
    let pinned = beta.federation().peer_view("alpha.test").await.expect("alpha");
    assert!(
        pinned.keys.iter().any(|key| key.key_id == after.key_id),
        "{:?}",
        pinned.keys
    );

    let recomputed = post_signed(alpha, "/console/trust/recompute", &cookie, &token, &[]).await;
    assert_eq!(recomputed.status, StatusCode::SEE_OTHER, "{}", recomputed.body);
    let purged = post_signed(alpha, "/console/peers/beta.test/purge", &cookie, &token, &[]).await;
    assert_eq!(purged.status, StatusCode::SEE_OTHER, "{}", purged.body);
    assert_eq!(purged.location(), "/console/peers/beta.test?done=peer.purge");

    // The audit log keeps the last hour whatever is asked; an age that does not parse is refused.
    let refused = post_signed(
        alpha,
        "/console/audit/prune",
        &cookie,
        &token,
        &[("older_than", "soon")],
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("positive duration"), "{}", refused.body);
    let refused = post_signed(alpha, "/console/audit/prune", &cookie, &token, &[("older_than", "5m")]).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert_eq!(audited(alpha.service(), "admin/identity.rotate_key").await.len(), 1);
    network.advance(TimeDelta::days(3));
    // The session ended meanwhile: a new one.
    let cookie = sign_in(alpha, &admin.key).await;
    let token = get(alpha, "/console/audit", Some(&cookie)).await.form_token();
    let pruned = post_form(
        alpha,
        "/console/audit/prune",
        Some(&cookie),
        &[("form_token", &token), ("older_than", "2d")],
        Some("same-origin"),
    )
    .await;
    assert_eq!(pruned.status, StatusCode::SEE_OTHER, "{}", pruned.body);
    assert_eq!(pruned.location(), "/console/audit?done=audit.prune");
    assert!(
        audited(alpha.service(), "admin/identity.rotate_key").await.is_empty(),
        "pruned"
    );
    let prunes = audited(alpha.service(), "admin/audit.prune").await;
    assert_eq!(
        prunes.iter().map(|record| record.outcome.as_str()).collect::<Vec<_>>(),
        ["ok"],
        "the refusals of three days ago went with the rest; the prune itself is recorded"
    );
}

#[tokio::test]
async fn an_admin_asks_for_a_backup_from_the_overview_and_a_second_request_joins_the_first() {
    // This instance does not serve, so no backup loop takes the request: it stays asked for.
    let instance = TestInstance::start("alpha.test").await;
    let cookie = sign_in(&instance, &instance.admin_key).await;
    let overview = get(&instance, "/console/", Some(&cookie)).await;
    assert!(
        overview
            .body
            .contains("<form class=\"action\" method=\"post\" action=\"/console/backup\">"),
        "{}",
        overview.body
    );
    let token = overview.form_token();
    let refused = post_form(
        &instance,
        "/console/backup",
        Some(&cookie),
        &[("form_token", "forged")],
        Some("same-origin"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(
        audited(instance.service(), "admin/backup.start").await.is_empty(),
        "a refused form asks nothing"
    );

    let asked = post_signed(&instance, "/console/backup", &cookie, &token, &[]).await;
    assert_eq!(asked.status, StatusCode::SEE_OTHER, "{}", asked.body);
    assert_eq!(asked.location(), "/console/?done=backup.start");
    let page = get(&instance, asked.location(), Some(&cookie)).await;
    assert!(
        page.body.contains("A backup has started in the background"),
        "{}",
        page.body
    );

    let again = post_signed(&instance, "/console/backup", &cookie, &token, &[]).await;
    assert_eq!(again.location(), "/console/?done=backup.under_way");
    assert_eq!(
        instance.service().ask_for_backup(),
        interai::service::backups::BackupAsked::AlreadyUnderWay
    );
    let records = audited(instance.service(), "admin/backup.start").await;
    assert_eq!(records.len(), 2, "each request is audited");
    assert!(records.iter().all(|record| record.outcome == "ok"), "{records:?}");
}
