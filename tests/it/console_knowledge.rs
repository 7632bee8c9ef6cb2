//! The console's knowledge pages: search over this realm's and a peer's content and claims with each filter (words,
//! kind, space, origin, status, trust view), a page at a time, and an item's page whose trust explanation shows the
//! numbers `Service::explain_trust` gives, with a plot of its value and interval over time drawn as inline SVG and
//! the same numbers in a table. No page carries an inline style or script; without a session a page is the sign-in.

use chrono::TimeDelta;
use http::StatusCode;
use interai::domain::knowledge::SpaceVisibility;
use interai::domain::{IdKind, PublicId};
use interai::service::content::PublishRequest;
use interai::service::lookup::{GetRequest, ObjectView};
use interai::service::spaces::NewSpace;
use interai::service::trust::TrustViewScope;

use crate::console::{Answer, admin_get, assert_security_headers, get, post_form, sign_in};
use crate::federation::peered;
use crate::fixtures::{agent, agent_of_with_scopes, controller, metadata, publish_procedure, use_it};
use crate::harness::TestInstance;
use crate::support::network::Network;

/// Whether the search page lists a result titled `title`.
fn lists(page: &Answer, title: &str) -> bool {
    page.body.contains(&format!("\">{title}</a></th>"))
}

/// The text of the element with `id` on the page.
fn cell(page: &Answer, id: &str) -> String {
    let marker = format!("id=\"{id}\"");
    let start = page
        .body
        .find(&marker)
        .unwrap_or_else(|| panic!("#{id} on the page: {}", page.body));
    let open_end = page.body[start..].find('>').expect("the tag's end") + start + 1;
    let close = page.body[open_end..].find('<').expect("the element's end") + open_end;
    page.body[open_end..close].to_owned()
}

#[track_caller]
fn assert_no_inline_style_or_script(page: &Answer) {
    assert!(!page.body.contains("style="), "no inline style: {}", page.body);
    assert_eq!(
        page.body.matches("<script").count(),
        page.body.matches("<script src=\"/console/assets/console-").count(),
        "no script but the console's own file: {}",
        page.body
    );
}

#[tokio::test]
async fn the_knowledge_search_finds_this_realm_s_and_a_peer_s_content_and_claims_by_each_filter() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let owner = controller(alpha.service(), "alpha's admin").await;
    let admin = agent_of_with_scopes(alpha.service(), &owner, "alpha's admin key", "admin").await;
    let author = agent(alpha.service(), "author").await;
    publish_procedure(
        alpha.service(),
        &author,
        "rotate the signing key",
        &["Rotating the signing key monthly limits exposure"],
    )
    .await;
    let runbooks = alpha
        .service()
        .create_space(
            &owner,
            NewSpace {
                name: "runbooks".to_owned(),
                description: None,
                visibility: SpaceVisibility::Federated,
            },
        )
        .await
        .expect("space created");
    alpha
        .service()
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "restart the queue workers".to_owned(),
                summary: "How to restart the queue workers.".to_owned(),
                body_markdown: "# Restart\n\n1. Drain.\n2. Restart.\n".to_owned(),
                space: Some("runbooks".to_owned()),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("published");
    let beta_author = agent(beta.service(), "beta author").await;
    publish_procedure(beta.service(), &beta_author, "prune the old backups", &[]).await;
    network.settle().await;

    // Without a session the page is the sign-in.
    let away = get(alpha, "/console/knowledge", None).await;
    assert_eq!(away.status, StatusCode::SEE_OTHER);
    assert_eq!(away.location(), "/console/sign-in");

    let cookie = sign_in(alpha, &admin.key).await;
    let search = |query: &str| {
        let path = format!("/console/knowledge{query}");
        let cookie = cookie.clone();
        async move {
            let page = get(alpha, &path, Some(&cookie)).await;
            assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.body);
            page
        }
    };
    let everything = search("").await;
    assert_security_headers(&everything);
    assert_no_inline_style_or_script(&everything);
    assert!(
        everything
            .body
            .contains("<a href=\"/console/knowledge\" aria-current=\"page\">Knowledge</a>"),
        "the nav links the page: {}",
        everything.body
    );
    for title in [
        "rotate the signing key",
        "restart the queue workers",
        "prune the old backups",
        "Rotating the signing key monthly limits exposure",
    ] {
        assert!(lists(&everything, title), "{title} in {}", everything.body);
    }
    assert!(everything.body.contains("<td>beta.test</td>"), "a peer's origin shown");
    assert!(
        everything.body.contains("<td>runbooks</td>"),
        "a space shown by its name"
    );
    assert!(
        everything.body.contains("<td>default (beta.test)</td>"),
        "a peer's space shown with its realm: {}",
        everything.body
    );
    assert!(everything.body.contains("<td>unverified</td>"));
    assert!(
        everything.body.contains("0.500 (at least "),
        "the trust value with its lower bound"
    );

    let words = search("?q=rotate").await;
    assert!(lists(&words, "rotate the signing key"));
    assert!(!lists(&words, "prune the old backups"));
    assert!(words.body.contains("value=\"rotate\""), "the form keeps its words");

    let from_beta = search("?origin=beta.test").await;
    assert!(lists(&from_beta, "prune the old backups"), "{}", from_beta.body);
    assert!(!lists(&from_beta, "rotate the signing key"));
    assert!(
        from_beta.body.contains("<option value=\"beta.test\" selected>"),
        "the form keeps its origin"
    );
    let from_alpha = search("?origin=alpha.test&q=the").await;
    assert!(lists(&from_alpha, "rotate the signing key"), "{}", from_alpha.body);
    assert!(lists(&from_alpha, "restart the queue workers"));
    assert!(
        !lists(&from_alpha, "prune the old backups"),
        "the origin filter holds with words too"
    );
    // A replicated item's index rows carry its realm too (on PostgreSQL its vector row, which the words search).
    let words_from_beta = search("?origin=beta.test&q=backups").await;
    assert!(
        lists(&words_from_beta, "prune the old backups"),
        "{}",
        words_from_beta.body
    );
    let words_from_alpha = search("?origin=alpha.test&q=backups").await;
    assert!(
        !lists(&words_from_alpha, "prune the old backups"),
        "{}",
        words_from_alpha.body
    );

    let in_space = search(&format!("?space={}", runbooks.id)).await;
    assert!(lists(&in_space, "restart the queue workers"), "{}", in_space.body);
    assert!(!lists(&in_space, "rotate the signing key"));
    assert!(
        in_space
            .body
            .contains(&format!("<option value=\"{}\" selected>runbooks</option>", runbooks.id))
    );

    let claims = search("?kind=claim").await;
    assert!(lists(&claims, "Rotating the signing key monthly limits exposure"));
    assert!(!lists(&claims, "rotate the signing key"));

    let supported = search("?min_status=supported").await;
    assert!(supported.body.contains("Nothing matches."), "nothing is supported yet");
    assert!(supported.body.contains("<option value=\"supported\" selected>"));

    let first_party = search("?trust_view=first_party&disputed=leave_out&sort=recent").await;
    assert!(lists(&first_party, "prune the old backups"));
    assert!(first_party.body.contains("<option value=\"first_party\" selected>"));
    assert!(first_party.body.contains("<option value=\"leave_out\" selected>"));

    // A filter the search refuses is said above the form, not an error page.
    let refused = search("?trust_view=everyone").await;
    assert!(
        refused.body.contains("trust_view must be all or first_party"),
        "{}",
        refused.body
    );

    // The same search through the service, for the admin's key, which lacks `read`.
    let request = interai::service::search::SearchRequest {
        origin: Some("beta.test".to_owned()),
        ..Default::default()
    };
    let found = alpha
        .service()
        .admin_search(&admin.caller, &request)
        .await
        .expect("an admin searches");
    assert_eq!(found.results.len(), 1);
    assert!(
        alpha.service().search(&admin.caller, &request).await.is_err(),
        "search itself needs read"
    );
    assert!(
        alpha.service().admin_search(&author.caller, &request).await.is_err(),
        "an agent's key is no admin's"
    );
}

#[tokio::test]
async fn the_knowledge_search_pages_through_its_results_with_the_same_filters() {
    let instance = TestInstance::start("alpha.test").await;
    let author = agent(instance.service(), "author").await;
    for number in 0..27 {
        publish_procedure(instance.service(), &author, &format!("procedure number {number}"), &[]).await;
    }
    let cookie = sign_in(&instance, &instance.admin_key).await;
    let first = get(&instance, "/console/knowledge?kind=content&sort=recent", Some(&cookie)).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.body.matches("<a href=\"/console/knowledge/cnt_").count(), 25);
    let marker = "<a href=\"/console/knowledge?";
    let start = first.body.find(marker).expect("a link to the next results") + "<a href=\"".len();
    let end = first.body[start..].find('"').expect("the link's end") + start;
    let next = first.body[start..end].replace("&#38;", "&");
    assert!(
        next.contains("kind=content") && next.contains("sort=recent") && next.contains("cursor="),
        "{next}"
    );
    let second = get(&instance, &next, Some(&cookie)).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(second.body.matches("<a href=\"/console/knowledge/cnt_").count(), 2);
    assert!(!second.body.contains("rel=\"next\""), "the last page");
}

#[tokio::test]
async fn an_item_s_page_lays_out_its_trust_explanation_and_plots_its_value_over_time() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let owner = controller(alpha.service(), "alpha's admin").await;
    let admin = agent_of_with_scopes(alpha.service(), &owner, "alpha's admin key", "admin").await;
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(
        alpha.service(),
        &author,
        "rotate the signing key",
        &["Rotating the signing key monthly limits exposure"],
    )
    .await;
    network.settle().await;
    // A day later someone here uses it in production; two days later so does one of beta's agents.
    network.advance(TimeDelta::days(1));
    let user = agent(alpha.service(), "alpha user").await;
    use_it(alpha.service(), &user, &item.id, "success", true).await;
    network.advance(TimeDelta::days(1));
    let beta_user = agent(beta.service(), "beta user").await;
    use_it(beta.service(), &beta_user, &item.id, "success", true).await;
    network.settle().await;
    network.advance(TimeDelta::days(1));

    let path = format!("/console/knowledge/{}", item.id);
    let away = get(alpha, &path, None).await;
    assert_eq!(away.status, StatusCode::SEE_OTHER);
    assert_eq!(away.location(), "/console/sign-in");

    let cookie = sign_in(alpha, &admin.key).await;
    let page = get(alpha, &path, Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_security_headers(&page);
    assert_no_inline_style_or_script(&page);
    assert!(page.body.contains("<h1>rotate the signing key</h1>"), "{}", page.body);

    // The explanation's numbers are the service's.
    let revision = PublicId::parse(&item.revision_id).expect("an ID");
    let explanation = alpha.service().explain_trust(&revision).await.expect("explained");
    let assessment = &explanation.assessment;
    assert_eq!(cell(&page, "value-all"), format!("{:.3}", assessment.value));
    assert_eq!(
        cell(&page, "interval-all"),
        format!("{:.3} – {:.3}", assessment.lower_bound, assessment.upper_bound)
    );
    assert_eq!(cell(&page, "status-all"), assessment.status.as_str());
    assert_eq!(cell(&page, "rule-all"), assessment.rule.as_str());
    assert!(page.body.contains(&assessment.reason), "the rule's reason");
    let read = alpha
        .service()
        .admin_get(
            &admin.caller,
            &GetRequest {
                id: item.id.clone(),
                revision: None,
                include: Some(vec!["explanation".to_owned()]),
                evidence_cursor: None,
                trust_view: TrustViewScope::All,
            },
        )
        .await
        .expect("an admin reads");
    let ObjectView::Content(content) = read else {
        panic!("content expected");
    };
    let explained = content.explanation.expect("an explanation");
    assert_eq!(
        explained.explanation, explanation,
        "the page and explain_trust evaluate the same moment"
    );
    let alone = &explained.first_party_only;
    assert_ne!(alone.value, assessment.value, "beta's record counts in all evidence");
    assert_eq!(cell(&page, "value-first-party"), format!("{:.3}", alone.value));
    assert_eq!(cell(&page, "status-first-party"), alone.status.as_str());
    // The first-party part and beta's part, with why beta has its trust.
    assert!(
        page.body.contains(user.controller().as_str()),
        "the first-party controller's row"
    );
    assert!(
        page.body
            .contains("<th scope=\"row\">beta.test</th><td>0.50</td><td>level:standard; agreement 0/0</td>"),
        "{}",
        page.body
    );

    // The plot: an SVG that says what it shows, one point per moment, and the same numbers in a table.
    let start = page.body.find("<svg").expect("an inline SVG");
    let end = page.body.find("</svg>").expect("the SVG's end");
    let svg = &page.body[start..end];
    assert!(
        svg.starts_with("<svg class=\"plot\" role=\"img\" aria-label=\"Trust value of rotate the signing key"),
        "{svg}"
    );
    assert!(svg.contains("<title>Trust value of rotate the signing key"));
    let points = usize::try_from(interai::console::TRUST_PLOT_POINTS).expect("a count");
    assert_eq!(svg.matches("<circle").count(), points);
    assert_eq!(page.body.matches("<tr class=\"history-point\">").count(), points);
    let history = alpha
        .service()
        .trust_history(
            &revision,
            TrustViewScope::All,
            chrono::DateTime::<chrono::Utc>::MIN_UTC,
            explanation.computed_at,
            interai::console::TRUST_PLOT_POINTS,
        )
        .await
        .expect("a history");
    let first = history.points.first().expect("a first moment");
    let last = history.points.last().expect("a last moment");
    assert_eq!(
        first.at, content.revision.created_at,
        "the plot starts when the revision was made"
    );
    assert_eq!(first.value, 0.5, "no evidence yet then");
    assert_eq!(last.value, assessment.value, "and ends at the explanation's moment");
    for point in [first, last] {
        let row = format!(
            "<td>{:.3}</td><td>{:.3} – {:.3}</td><td>{}</td>",
            point.value,
            point.lower_bound,
            point.upper_bound,
            point.status.as_str()
        );
        assert!(page.body.contains(&row), "{row} in {}", page.body);
    }
    // The admin API gives the same moments.
    let (status, answer) = admin_get(
        alpha,
        &admin.key,
        &format!(
            "/admin/trust/{}/history?until={}&points={}",
            item.id,
            explanation
                .computed_at
                .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true),
            interai::console::TRUST_PLOT_POINTS
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["target"], item.revision_id.as_str());
    let moments = answer["points"].as_array().expect("points");
    assert_eq!(moments.len(), points);
    assert_eq!(moments[points - 1]["value"].as_f64(), Some(last.value));
    assert_eq!(moments[0]["status"], first.status.as_str());

    let values: Vec<f64> = history.points.iter().map(|point| point.value).collect();
    assert!(values.iter().any(|value| *value != 0.5), "the uses move it: {values:?}");

    // The plot's own form (a plain GET) chooses the trust view and the range: first-party evidence alone over the
    // last day is the service's history in that view, at as many moments, ending where the explanation's
    // first-party column does.
    assert!(
        page.body.contains(&format!(
            "<form class=\"filters\" method=\"get\" action=\"/console/knowledge/{}#history\">",
            item.id
        )),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("<option value=\"all\" selected>All evidence</option>")
    );
    assert!(
        page.body
            .contains("<option value=\"since_created\" selected>Since it was made</option>")
    );
    let chosen = get(
        alpha,
        &format!("{path}?trust_view=first_party&range=last_day"),
        Some(&cookie),
    )
    .await;
    assert_eq!(chosen.status, StatusCode::OK, "{}", chosen.body);
    assert_no_inline_style_or_script(&chosen);
    assert!(
        chosen
            .body
            .contains("<option value=\"first_party\" selected>First-party evidence alone</option>")
    );
    assert!(
        chosen
            .body
            .contains("<option value=\"last_day\" selected>Last day</option>")
    );
    assert!(
        chosen
            .body
            .contains("(0–1) on first-party evidence alone at each moment"),
        "the table says which evidence: {}",
        chosen.body
    );
    let first_party_day = alpha
        .service()
        .trust_history(
            &revision,
            TrustViewScope::FirstParty,
            explanation.computed_at - TimeDelta::days(1),
            explanation.computed_at,
            interai::console::TRUST_PLOT_POINTS,
        )
        .await
        .expect("a first-party history");
    assert_eq!(first_party_day.points.len(), points);
    assert_eq!(chosen.body.matches("<tr class=\"history-point\">").count(), points);
    let chosen_svg = &chosen.body[chosen.body.find("<svg").expect("a plot")..];
    assert_eq!(
        chosen_svg[..chosen_svg.find("</svg>").expect("its end")]
            .matches("<circle")
            .count(),
        points
    );
    let day_first = first_party_day.points.first().expect("a first moment");
    let day_last = first_party_day.points.last().expect("a last moment");
    assert_eq!(day_first.at, explanation.computed_at - TimeDelta::days(1));
    assert_eq!(day_last.value, alone.value, "the first-party column's value, now");
    assert_ne!(day_last.value, last.value, "beta's use does not count in this view");
    for point in [day_first, day_last] {
        let row = format!(
            "<time datetime=\"{}\"",
            point.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
        assert!(chosen.body.contains(&row), "{row} in {}", chosen.body);
        let numbers = format!(
            "<td>{:.3}</td><td>{:.3} – {:.3}</td><td>{}</td>",
            point.value,
            point.lower_bound,
            point.upper_bound,
            point.status.as_str()
        );
        assert!(chosen.body.contains(&numbers), "{numbers} in {}", chosen.body);
    }
    // The admin API gives the same view.
    let (status, answer) = admin_get(
        alpha,
        &admin.key,
        &format!(
            "/admin/trust/{}/history?trust_view=first_party&until={}&points=1",
            item.id,
            explanation
                .computed_at
                .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["points"][0]["value"].as_f64(), Some(alone.value));

    // A view or a range the form does not offer is a 400 page that says what it takes, as is a query that names
    // one twice.
    for (query, said) in [
        (
            "range=last_year",
            "range must be since_created, last_day, last_week or last_30_days",
        ),
        ("trust_view=peers", "trust_view must be all or first_party"),
        ("range=last_day&range=last_week", "range"),
    ] {
        let refused = get(alpha, &format!("{path}?{query}"), Some(&cookie)).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{query}: {}", refused.body);
        assert_security_headers(&refused);
        assert_eq!(
            refused
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok()),
            Some("text/html; charset=utf-8"),
            "{query}"
        );
        assert!(refused.body.contains(said), "{query}: {}", refused.body);
        assert!(
            refused.body.contains("<h1>Bad Request</h1>"),
            "{query}: {}",
            refused.body
        );
    }

    // Its claim has a page of its own; an ID nothing holds is a 404 page, as is an ID of what is no item.
    let claim = &item.claims[0];
    let claim_page = get(alpha, &format!("/console/knowledge/{}", claim.id), Some(&cookie)).await;
    assert_eq!(claim_page.status, StatusCode::OK, "{}", claim_page.body);
    assert!(
        claim_page
            .body
            .contains("<h1>Rotating the signing key monthly limits exposure</h1>")
    );
    assert!(
        page.body
            .contains(&format!("<a href=\"/console/knowledge/{}\">", claim.id)),
        "the item links its claim"
    );
    let unknown = get(
        alpha,
        &format!(
            "/console/knowledge/{}",
            PublicId::from_ulid(IdKind::Content, ulid::Ulid::generate())
        ),
        Some(&cookie),
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.body);
    assert_security_headers(&unknown);
    let not_an_item = get(alpha, &format!("/console/knowledge/{}", owner), Some(&cookie)).await;
    assert_eq!(not_an_item.status, StatusCode::NOT_FOUND, "{}", not_an_item.body);
}

#[tokio::test]
async fn a_past_moment_counts_the_evidence_recorded_by_then_and_a_retraction_or_a_new_revision_from_its_time_on() {
    use interai::clock::Clock;
    use interai::domain::TrustStatus;

    let instance = TestInstance::start("alpha.test").await;
    let service = instance.service();
    let author = agent(service, "author").await;
    let item = publish_procedure(service, &author, "rotate the signing key", &[]).await;
    let made = instance.clock.now();
    let user = agent(service, "user").await;
    instance.clock.advance(TimeDelta::hours(12));
    let usage = use_it(service, &user, &item.id, "success", true).await;
    instance.clock.advance(TimeDelta::days(1));
    service
        .retract(&user.caller, &metadata("report_usage"), &usage, None)
        .await
        .expect("retracted");
    instance.clock.advance(TimeDelta::days(1));
    service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "rotate the signing key".to_owned(),
                summary: "How to rotate the signing key, again.".to_owned(),
                body_markdown: "# Rotate\n\n1. Make a new key.\n2. Switch.\n".to_owned(),
                revision_of: Some(item.id.clone()),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("revised");
    instance.clock.advance(TimeDelta::days(1));

    // Used at 12 h, the use retracted at 36 h, a new revision at 60 h; moments at 0, 1, 2 and 3 days.
    let revision = PublicId::parse(&item.revision_id).expect("an ID");
    let history = service
        .trust_history(&revision, TrustViewScope::All, made, made + TimeDelta::days(3), 4)
        .await
        .expect("a history");
    let statuses: Vec<TrustStatus> = history.points.iter().map(|point| point.status).collect();
    let values: Vec<f64> = history.points.iter().map(|point| point.value).collect();
    assert_eq!(values[0], 0.5, "no evidence yet: {values:?}");
    assert!(values[1] > 0.5, "the success counts once recorded: {values:?}");
    assert_eq!(values[2], 0.5, "and not after its retraction: {values:?}");
    assert_eq!(
        statuses,
        [
            TrustStatus::Unverified,
            TrustStatus::Supported,
            TrustStatus::Unverified,
            TrustStatus::Superseded
        ],
        "the old revision is superseded from the new one on"
    );
    assert_eq!(
        history.points[1].value,
        service
            .trust_history(
                &revision,
                TrustViewScope::All,
                made + TimeDelta::days(1),
                made + TimeDelta::days(1),
                1,
            )
            .await
            .expect("one moment")
            .points[0]
            .value,
        "a moment is the same whatever history it is part of"
    );

    // Bounded: at most 100 moments, and never backwards.
    assert!(
        service
            .trust_history(&revision, TrustViewScope::All, made, made, 101)
            .await
            .is_err()
    );
    assert!(
        service
            .trust_history(&revision, TrustViewScope::All, made + TimeDelta::days(1), made, 4)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn an_admin_deletes_a_content_item_from_its_page_with_a_reason_and_the_deletion_is_audited() {
    let instance = TestInstance::start("alpha.test").await;
    let owner = controller(instance.service(), "alpha's admin").await;
    let admin = agent_of_with_scopes(instance.service(), &owner, "alpha's admin key", "admin").await;
    let author = agent(instance.service(), "author").await;
    let published = publish_procedure(instance.service(), &author, "restart the queue workers", &[]).await;
    let cookie = sign_in(&instance, &admin.key).await;
    let path = format!("/console/knowledge/{}", published.id);
    let page = get(&instance, &path, Some(&cookie)).await;
    assert!(
        page.body.contains(&format!("action=\"{path}/delete\"")),
        "{}",
        page.body
    );
    let token = page.form_token();

    // Without a reason nothing is deleted: the item's page again, with the error.
    let refused = post_form(
        &instance,
        &format!("{path}/delete"),
        Some(&cookie),
        &[("form_token", &token), ("reason", " ")],
        Some("same-origin"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("class=\"notice failed\""), "{}", refused.body);
    assert!(refused.body.contains("restart the queue workers"), "{}", refused.body);

    let deleted = post_form(
        &instance,
        &format!("{path}/delete"),
        Some(&cookie),
        &[("form_token", &token), ("reason", "superseded by the runbook")],
        Some("same-origin"),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER, "{}", deleted.body);
    assert_eq!(deleted.location(), "/console/knowledge?done=content.delete");
    let after = get(&instance, deleted.location(), Some(&cookie)).await;
    assert!(after.body.contains("class=\"notice done\""), "{}", after.body);
    assert!(!lists(&after, "restart the queue workers"), "{}", after.body);
    let gone = get(&instance, &path, Some(&cookie)).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
    let records = instance
        .service()
        .audit_log(interai::service::audit::AuditQuery {
            tool: Some("admin/content.delete".to_owned()),
            ..Default::default()
        })
        .await
        .expect("the audit log")
        .records;
    assert_eq!(
        records.iter().map(|record| record.outcome.as_str()).collect::<Vec<_>>(),
        ["ok", "validation_failed"]
    );
    assert!(records.iter().all(|record| record.key_id == admin.caller.key_id));
}
