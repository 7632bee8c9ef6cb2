//! The web console in a real headless Chromium, driven over WebDriver, against real `interai serve` processes: sign in, each page, peering two instances with the fingerprint check, block and unblock. On every page
//! nothing is said to be wrong (no console error, no uncaught exception, no Content-Security-Policy violation), and a
//! screenshot of each page is saved under `target/console-screenshots/`.
//!
//! `cargo test` needs no browser: these tests are ignored there, and `.ci/run` installs Chromium and runs them with
//! `cargo test --test browser -- --ignored`. Each step is a function of its own, one a page or an action, so a new
//! page gets a step beside the others.

mod chromium;
mod instance;

use std::time::Duration;

use chromium::{Chromium, Problem, Tab};
use instance::ServedInstance;

/// How long a peer's state may take to change on the other instance (a message between two served instances, sent
/// and retried by their background loops in real time).
const PEERING_PATIENCE: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: .ci/run installs it and runs them"]
async fn an_admin_signs_in_reads_every_page_and_signs_out_and_no_page_says_anything_is_wrong() {
    let instance = ServedInstance::start("Browser Admin").await;
    let chromium = Chromium::launch().await;
    let mut tab = chromium.tab().await;

    the_tab_hears_console_errors_exceptions_and_policy_violations(&mut tab, &instance).await;
    a_wrong_key_gets_the_sign_in_page_with_its_error(&mut tab, &instance).await;
    // Knowledge with evidence to explain, as the seeder makes it.
    instance.admin(&["seed", "--items", "12"]).await;
    sign_in(&mut tab, &instance, "").await;
    overview(&mut tab, &instance, "").await;
    back_up_now(&mut tab, &instance).await;
    peers(&mut tab, &instance, "").await;
    knowledge_and_an_item_s_trust(&mut tab, &instance).await;
    create_and_revoke_a_key(&mut tab, &instance).await;
    visit(&mut tab, &instance, "/console/spaces", "Spaces", "spaces").await;
    audit(&mut tab, &instance, "").await;
    sign_out(&mut tab, &instance).await;

    tab.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: .ci/run installs it and runs them"]
async fn two_admins_peer_their_instances_through_the_console_comparing_fingerprints_then_block_and_unblock() {
    let alpha = ServedInstance::start("Alpha Admin").await;
    let beta = ServedInstance::start("Beta Admin").await;
    let chromium = Chromium::launch().await;
    // Two admins, each in a browser of their own.
    let mut on_alpha = chromium.tab().await;
    let mut on_beta = chromium.tab().await;
    sign_in(&mut on_alpha, &alpha, "alpha-").await;
    sign_in(&mut on_beta, &beta, "beta-").await;
    let alpha_fingerprints = peers(&mut on_alpha, &alpha, "alpha-").await;
    let beta_fingerprints = peers(&mut on_beta, &beta, "beta-").await;

    add_a_peer_refusing_a_wrong_fingerprint(&mut on_alpha, &beta, &beta_fingerprints).await;
    approve_a_peer(&mut on_beta, &beta, &alpha, &alpha_fingerprints).await;
    wait_for_state(&mut on_alpha, &alpha, &beta, "active", "alpha-peer-active").await;
    block_and_unblock(&mut on_alpha, &alpha, &beta).await;
    // The peers page with a peer on it (the README shows it).
    peers(&mut on_alpha, &alpha, "alpha-peered-").await;

    on_alpha.close().await;
    on_beta.close().await;
}

/// The tab's ears work: a `console.error`, an uncaught exception and an inline script the page's
/// Content-Security-Policy refuses are each heard (else "no page says anything is wrong" would prove nothing).
async fn the_tab_hears_console_errors_exceptions_and_policy_violations(tab: &mut Tab, instance: &ServedInstance) {
    tab.open(&instance.url("/console/sign-in")).await;
    tab.assert_no_problem("the sign-in page").await;
    tab.evaluate(
        "console.error('said on purpose'); \
         setTimeout(() => { throw new Error('thrown on purpose'); }, 0); \
         const script = document.createElement('script'); script.textContent = 'void 0'; \
         document.head.appendChild(script); \
         return null;",
    )
    .await;
    let sources = ["console-api", "javascript", "security"];
    let mut heard: Vec<Problem> = Vec::new();
    // The exception comes from a timer: listen until each is in (or the guard of the wait gives up).
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while !sources
            .iter()
            .all(|source| heard.iter().any(|problem| problem.source == *source))
        {
            heard.extend(tab.problems().await);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    for source in sources {
        assert!(
            heard.iter().any(|problem| problem.source == source),
            "the tab heard no {source} problem: {heard:#?}"
        );
    }
}

/// A key that is not valid: the sign-in page again, with its error and no session.
async fn a_wrong_key_gets_the_sign_in_page_with_its_error(tab: &mut Tab, instance: &ServedInstance) {
    tab.open(&instance.url("/console/sign-in")).await;
    tab.submit("form.sign-in", &[("api_key", "iak_not-a-key")]).await;
    assert_eq!(tab.path().await, "/console/sign-in");
    let error = tab.text("main .notice").await.unwrap_or_default();
    assert!(error.contains("not valid"), "the sign-in page says why: {error:?}");
    assert_only_the_refusal(tab, "a refused sign-in").await;
    tab.screenshot("sign-in-refused").await;
    tab.open(&instance.url("/console/")).await;
    assert!(
        tab.path().await.starts_with("/console/sign-in"),
        "a refused sign-in opened no session"
    );
    tab.assert_no_problem("the sign-in page").await;
}

/// Signs in with the instance's admin key and lands on the overview.
async fn sign_in(tab: &mut Tab, instance: &ServedInstance, prefix: &str) {
    tab.open(&instance.url("/console/sign-in")).await;
    assert_eq!(tab.text("h1").await.as_deref(), Some("Sign in"));
    tab.assert_no_problem("the sign-in page").await;
    tab.screenshot(&format!("{prefix}sign-in")).await;
    tab.submit("form.sign-in", &[("api_key", &instance.admin_key)]).await;
    assert_eq!(tab.path().await, "/console/", "signing in leads to the overview");
    tab.assert_no_problem("the overview after signing in").await;
}

/// The overview.
async fn overview(tab: &mut Tab, instance: &ServedInstance, prefix: &str) {
    visit(tab, instance, "/console/", "Overview", &format!("{prefix}overview")).await;
    let text = tab.text("main").await.unwrap_or_default();
    assert!(text.contains(&instance.realm), "the overview names the realm: {text}");
}

/// "Back up now" on the overview: the page says a backup started, and the overview shows it as the last backup once
/// the instance's backup loop has made it.
async fn back_up_now(tab: &mut Tab, instance: &ServedInstance) {
    tab.open(&instance.url("/console/")).await;
    assert_eq!(fact(tab, "File").await, "", "no backup before");
    tab.submit("form[action=\"/console/backup\"]", &[]).await;
    let notice = tab.text("main .notice").await.unwrap_or_default();
    assert!(notice.contains("A backup has started"), "the page says so: {notice:?}");
    tab.assert_no_problem("the overview after asking for a backup").await;
    let started = tokio::time::Instant::now();
    while !fact(tab, "File").await.contains("interai-backup-") {
        assert!(
            started.elapsed() < PEERING_PATIENCE,
            "the overview shows no backup after {PEERING_PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
        tab.open(&instance.url("/console/")).await;
    }
    assert_eq!(fact(tab, "Error").await, "none", "the backup worked");
    tab.assert_no_problem("the overview with the backup made").await;
    tab.screenshot("overview-backed-up").await;
}

/// The peers page; returns this instance's own key fingerprints, as its identity section shows them.
async fn peers(tab: &mut Tab, instance: &ServedInstance, prefix: &str) -> Vec<String> {
    visit(tab, instance, "/console/peers", "Peers", &format!("{prefix}peers")).await;
    tab.texts("#identity code.fingerprint").await
}

/// The audit log.
async fn audit(tab: &mut Tab, instance: &ServedInstance, prefix: &str) {
    visit(tab, instance, "/console/audit", "Audit log", &format!("{prefix}audit")).await;
}

/// The knowledge search, then the first result's page: its trust explanation and its trust plot (an inline SVG with
/// its points, and the same numbers in a table).
async fn knowledge_and_an_item_s_trust(tab: &mut Tab, instance: &ServedInstance) {
    visit(tab, instance, "/console/knowledge", "Knowledge", "knowledge").await;
    let first = tab
        .evaluate("const link = document.querySelector('main table a[href^=\"/console/knowledge/\"]'); return link ? link.getAttribute('href') : null;")
        .await;
    let path = first.as_str().expect("the search lists the seeded items").to_owned();
    tab.open(&instance.url(&path)).await;
    assert_eq!(tab.path().await, path);
    tab.assert_no_problem("an item's page").await;
    let trust = tab.text("section[aria-labelledby=\"trust\"]").await.unwrap_or_default();
    assert!(trust.contains("Status"), "the explanation says the status: {trust}");
    let points = tab
        .evaluate("return document.querySelectorAll('figure.plot svg circle').length;")
        .await;
    assert!(points.as_u64().unwrap_or(0) > 0, "the plot has points: {points}");
    tab.screenshot("item").await;
}

/// On the people page: a key made with the form (its secret shown once), then revoked with its row's button.
async fn create_and_revoke_a_key(tab: &mut Tab, instance: &ServedInstance) {
    visit(tab, instance, "/console/people", "People and keys", "people").await;
    // For the signed-in admin (the one person the realm has besides its bootstrap admin); the usual scopes are ticked.
    let actor = tab
        .evaluate("const option = document.querySelector('#actor-choices option[value^=\"usr_\"]'); return option ? option.value : null;")
        .await;
    let actor = actor.as_str().expect("a person to make a key for").to_owned();
    tab.submit(
        "form[action=\"/console/keys\"]",
        &[("actor", &actor), ("label", "made in the browser")],
    )
    .await;
    let heading = tab.text("h1").await.unwrap_or_default();
    assert!(heading.starts_with("New key "), "the secret's page: {heading}");
    tab.assert_no_problem("the new key's page").await;
    tab.screenshot("key-created").await;
    let key_id = heading.trim_start_matches("New key ").trim().to_owned();
    tab.open(&instance.url("/console/people")).await;
    tab.submit(&format!("form[action=\"/console/keys/{key_id}/revoke\"]"), &[])
        .await;
    let notice = tab.text("main .notice").await.unwrap_or_default();
    assert!(notice.contains("revoked"), "the page says so: {notice:?}");
    tab.assert_no_problem("the people page after a revocation").await;
    tab.screenshot("key-revoked").await;
}

/// Signs out: the sign-in page says so, and the console asks for a key again.
async fn sign_out(tab: &mut Tab, instance: &ServedInstance) {
    tab.open(&instance.url("/console/")).await;
    tab.submit("form.sign-out", &[]).await;
    assert!(tab.path().await.starts_with("/console/sign-in"));
    let notice = tab.text("main .notice").await.unwrap_or_default();
    assert!(notice.contains("signed out"), "the sign-in page says so: {notice:?}");
    tab.assert_no_problem("the sign-in page after signing out").await;
    tab.screenshot("signed-out").await;
    tab.open(&instance.url("/console/peers")).await;
    assert!(tab.path().await.starts_with("/console/sign-in"), "the session ended");
    tab.assert_no_problem("the sign-in page").await;
}

/// On the adding side: looks the peer up by URL, sees its fingerprints, types a wrong one (refused, nothing added),
/// then the one its admin read out (added, waiting for the peer's approval).
async fn add_a_peer_refusing_a_wrong_fingerprint(tab: &mut Tab, peer: &ServedInstance, read_out: &[String]) {
    let fingerprint = read_out.first().expect("the peer's page shows its fingerprint");
    assert!(fingerprint.starts_with("SHA256:"), "a fingerprint: {fingerprint}");

    tab.submit("form[action=\"/console/peers/look-up\"]", &[("url", &peer.base_url)])
        .await;
    tab.assert_no_problem("the page of a looked-up peer").await;
    let listed = tab.texts("code.fingerprint").await;
    assert!(
        listed.contains(fingerprint),
        "the look-up shows the fingerprint the peer's own page shows ({fingerprint}): {listed:?}"
    );
    assert!(
        tab.text("form[action=\"/console/peers/add\"] select[name=\"level\"]")
            .await
            .is_some()
    );
    tab.screenshot("alpha-peer-add").await;

    let wrong = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    tab.submit("form[action=\"/console/peers/add\"]", &[("fingerprint", wrong)])
        .await;
    let refusal = tab.text("p.notice.failed").await;
    assert!(
        refusal.is_some(),
        "a wrong fingerprint is refused: {:?}",
        tab.text("main").await
    );
    assert!(tab.text("p.notice.done").await.is_none());
    assert_only_the_refusal(tab, "the refused add").await;
    tab.screenshot("alpha-peer-add-refused").await;

    tab.submit(
        "form[action=\"/console/peers/add\"]",
        &[("fingerprint", fingerprint), ("level", "high")],
    )
    .await;
    assert!(
        tab.text("p.notice.done").await.is_some(),
        "the right fingerprint adds the peer: {:?}",
        tab.text("main").await
    );
    tab.assert_no_problem("the page after adding a peer").await;
}

/// On the approving side: the peer asks to peer (`pending_in`); approving with the fingerprint its admin read out
/// makes it active.
async fn approve_a_peer(tab: &mut Tab, instance: &ServedInstance, peer: &ServedInstance, read_out: &[String]) {
    wait_for_state(tab, instance, peer, "pending_in", "beta-peer-pending").await;
    let approve = "form[action$=\"/approve\"]";
    let mut approved = false;
    // The peer's admin reads out each of its instance's fingerprints; the one that is pinned is accepted.
    for fingerprint in read_out {
        tab.submit(approve, &[("fingerprint", fingerprint), ("level", "standard")])
            .await;
        if tab.text("p.notice.done").await.is_some() {
            approved = true;
            break;
        }
        assert_only_the_refusal(tab, "a refused approval").await;
    }
    assert!(
        approved,
        "no fingerprint of {read_out:?} approved: {:?}",
        tab.text("main").await
    );
    tab.assert_no_problem("the page after approving a peer").await;
    wait_for_state(tab, instance, peer, "active", "beta-peer-active").await;
}

/// Blocks the peer with a reason (the page says blocked), then unblocks it (active again).
async fn block_and_unblock(tab: &mut Tab, instance: &ServedInstance, peer: &ServedInstance) {
    open_peer(tab, instance, peer).await;
    assert_eq!(
        fact(tab, "Level").await,
        "high",
        "the level chosen when adding the peer"
    );
    tab.submit("form[action$=\"/block\"]", &[("reason", "the browser test blocks it")])
        .await;
    assert!(
        tab.text("p.notice.done").await.is_some(),
        "the block is done: {:?}",
        tab.text("main").await
    );
    let state = peer_state(tab).await;
    assert!(state.starts_with("blocked"), "the peer is blocked: {state}");
    assert!(
        state.contains("the browser test blocks it"),
        "the page says why: {state}"
    );
    tab.assert_no_problem("the page of a blocked peer").await;
    tab.screenshot("alpha-peer-blocked").await;

    tab.submit("form[action$=\"/unblock\"]", &[]).await;
    assert!(
        tab.text("p.notice.done").await.is_some(),
        "the unblock is done: {:?}",
        tab.text("main").await
    );
    assert_eq!(peer_state(tab).await, "active");
    tab.assert_no_problem("the page of an unblocked peer").await;
    tab.screenshot("alpha-peer-unblocked").await;
}

/// Opens the page of `peer` on `instance`.
async fn open_peer(tab: &mut Tab, instance: &ServedInstance, peer: &ServedInstance) {
    tab.open(&instance.url(&format!("/console/peers/{}", peer.realm))).await;
    assert_eq!(tab.text("h1").await.as_deref(), Some(peer.realm.as_str()));
}

/// The state a peer's page shows.
async fn peer_state(tab: &Tab) -> String {
    fact(tab, "State").await
}

/// What a page's list of facts (`<dl class="facts">`) says under `term`.
async fn fact(tab: &Tab, term: &str) -> String {
    tab.evaluate_with(
        "const fact = Array.from(document.querySelectorAll('dl.facts > div')) \
           .find(fact => fact.querySelector('dt') && fact.querySelector('dt').innerText.trim() === arguments[0]); \
           return fact ? fact.querySelector('dd').innerText : '';",
        term,
    )
    .await
    .as_str()
    .unwrap_or_default()
    .trim()
    .to_owned()
}

/// Reloads the page of `peer` on `instance` until it shows `state` (a message between the two instances has to
/// arrive first), then checks the page and saves its screenshot as `screenshot`.
async fn wait_for_state(
    tab: &mut Tab,
    instance: &ServedInstance,
    peer: &ServedInstance,
    state: &str,
    screenshot: &str,
) {
    let started = tokio::time::Instant::now();
    loop {
        open_peer(tab, instance, peer).await;
        let shown = peer_state(tab).await;
        if shown == state {
            break;
        }
        assert!(
            started.elapsed() < PEERING_PATIENCE,
            "{} still shows {} as {shown:?}, not {state:?}, after {PEERING_PATIENCE:?}",
            instance.realm,
            peer.realm
        );
        tab.assert_no_problem(&format!("the page of a peer that is {shown}"))
            .await;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    tab.assert_no_problem(&format!("the page of a peer that is {state}"))
        .await;
    tab.screenshot(screenshot).await;
}

/// Opens `path` signed in, checks its heading and that it says nothing is wrong, and saves its screenshot.
async fn visit(tab: &mut Tab, instance: &ServedInstance, path: &str, heading: &str, screenshot: &str) {
    tab.open(&instance.url(path)).await;
    assert_eq!(tab.path().await, path, "{path} opens (no redirect to the sign-in page)");
    assert_eq!(tab.text("h1").await.as_deref(), Some(heading), "the heading of {path}");
    tab.assert_no_problem(path).await;
    tab.screenshot(screenshot).await;
}

/// What a page answered with a refusal may say: that the page itself came with a 4xx status (the browser logs
/// that), nothing else.
async fn assert_only_the_refusal(tab: &mut Tab, page: &str) {
    let problems = tab.problems().await;
    let other: Vec<&Problem> = problems
        .iter()
        .filter(|problem| !(problem.source == "network" && problem.message.contains("status of 4")))
        .collect();
    assert!(other.is_empty(), "{page} said something is wrong: {other:#?}");
}
