//! The history the console plots, as an admin reads it: the calls, writes and errors of the last hour and day on the
//! overview (the same numbers the audit log holds, whether saved yet or not), a peer's replication lag over time on
//! its page, the admin API's answers of both, and what the activity-history loop keeps and forgets.

use chrono::TimeDelta;
use http::StatusCode;
use serde_json::Value;

use crate::console::{admin_get, assert_security_headers, get, post_signed, sign_in, signed_in_admin};
use crate::federation::peered;
use crate::fixtures::{agent, agent_of_with_scopes, controller, publish_procedure};
use crate::harness::{DirectConnection, TestInstance};
use crate::support::network::Network;

/// The audit log's own count of calls, successful writes and errors, which the history must agree with.
async fn audit_log_counts(url: &str) -> (i64, i64, i64) {
    let mut connection = DirectConnection::open(url).await;
    let calls = connection
        .count("SELECT COUNT(*) FROM mcp_calls WHERE id <> $1", "")
        .await;
    let writes = connection
        .count("SELECT COUNT(*) FROM mcp_calls WHERE is_write AND outcome = $1", "ok")
        .await;
    let errors = connection
        .count("SELECT COUNT(*) FROM mcp_calls WHERE outcome <> $1", "ok")
        .await;
    connection.close().await;
    (calls, writes, errors)
}

async fn table_rows(url: &str, table: &str) -> i64 {
    let mut connection = DirectConnection::open(url).await;
    let count = connection
        .count(&format!("SELECT COUNT(*) FROM {table} WHERE '' = $1"), "")
        .await;
    connection.close().await;
    count
}

/// The sentence that sums up a period on the overview.
fn totals(calls: i64, writes: i64, errors: i64) -> String {
    let plural = |count: i64, one: &str, many: &str| format!("{count} {}", if count == 1 { one } else { many });
    format!(
        "<p>{}, of which {} and {}.</p>",
        plural(calls, "audited call", "audited calls"),
        plural(writes, "successful write", "successful writes"),
        plural(errors, "error", "errors")
    )
}

/// The sums of an `/admin/activity` answer's buckets.
fn summed(answer: &Value) -> (i64, i64, i64) {
    let buckets = answer["buckets"].as_array().expect("buckets");
    let sum = |field: &str| {
        buckets
            .iter()
            .map(|bucket| bucket[field].as_i64().expect("a count"))
            .sum()
    };
    (sum("calls"), sum("writes"), sum("errors"))
}

#[tokio::test]
async fn the_overview_plots_the_calls_writes_and_errors_of_the_last_hour_and_day_as_the_audit_log_counts_them() {
    let instance = TestInstance::start("alpha.test").await;
    let url = instance.database.url.clone();
    let author = agent(instance.service(), "author").await;
    let owner = controller(instance.service(), "the realm's admin").await;
    let admin = agent_of_with_scopes(instance.service(), &owner, "the admin's key", "admin").await;
    let cookie = sign_in(&instance, &admin.key).await;

    // Two writes by an agent, and a console action refused (a space without a name), all in the first minute.
    publish_procedure(instance.service(), &author, "first procedure", &[]).await;
    publish_procedure(instance.service(), &author, "second procedure", &[]).await;
    let token = get(&instance, "/console/spaces", Some(&cookie)).await.form_token();
    let refused = post_signed(
        &instance,
        "/console/spaces",
        &cookie,
        &token,
        &[("name", ""), ("visibility", "local")],
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    let (calls, writes, errors) = audit_log_counts(&url).await;
    assert_eq!(
        (writes, errors),
        (2, 1),
        "the audit log holds the two writes and the refusal"
    );

    // Nothing is saved yet: the page counts what this process holds, the same as the audit log.
    assert_eq!(table_rows(&url, "call_minutes").await, 0);
    let page = get(&instance, "/console/", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_security_headers(&page);
    assert!(
        page.body.contains("Calls over the last hour, per minute"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Calls over the last 24 hours, per hour"),
        "{}",
        page.body
    );
    assert_eq!(
        page.body.matches(&totals(calls, writes, errors)).count(),
        2,
        "hour and day: {}",
        page.body
    );
    assert_eq!(
        page.body.matches("<svg class=\"plot\"").count(),
        4,
        "writes and errors, hour and day"
    );
    assert!(
        page.body
            .contains("aria-label=\"Successful writes per minute over the last hour, per minute: 2 in all\""),
        "{}",
        page.body
    );
    assert_eq!(page.body.matches("<tr class=\"activity-bucket\">").count(), 60 + 24);
    assert!(!page.body.contains("style="), "no inline style");

    // The loop's pass saves the minute; the page shows the same numbers from the database, counted once.
    let history = instance.instance.activity_history();
    let pass = history.run_once().await.expect("a pass");
    assert_eq!(pass.minutes_saved, 1);
    assert_eq!(table_rows(&url, "call_minutes").await, 1);
    let page = get(&instance, "/console/", Some(&cookie)).await;
    let (calls, writes, errors) = audit_log_counts(&url).await;
    assert_eq!(
        page.body.matches(&totals(calls, writes, errors)).count(),
        2,
        "{}",
        page.body
    );

    // An hour and a half later the first minute has left the hour but not the day.
    instance.clock.advance(TimeDelta::minutes(90));
    publish_procedure(instance.service(), &author, "third procedure", &[]).await;
    let cookie = sign_in(&instance, &admin.key).await;
    let page = get(&instance, "/console/", Some(&cookie)).await;
    let (calls, writes, errors) = audit_log_counts(&url).await;
    assert!(page.body.contains(&totals(1, 1, 0)), "the last hour: {}", page.body);
    assert!(
        page.body.contains(&totals(calls, writes, errors)),
        "the day: {}",
        page.body
    );

    // The admin API answers the same buckets.
    let (status, hour) = admin_get(&instance, &admin.key, "/admin/activity").await;
    assert_eq!(status, StatusCode::OK, "{hour}");
    assert_eq!(hour["period"], "hour");
    assert_eq!(hour["bucket_seconds"], 60);
    assert_eq!(hour["buckets"].as_array().map(Vec::len), Some(60));
    assert_eq!(summed(&hour), (1, 1, 0));
    let (status, day) = admin_get(&instance, &admin.key, "/admin/activity?period=day").await;
    assert_eq!(status, StatusCode::OK, "{day}");
    assert_eq!(day["buckets"].as_array().map(Vec::len), Some(24));
    let (calls, writes, errors) = audit_log_counts(&url).await;
    assert_eq!(summed(&day), (calls, writes, errors));
    let (status, refused) = admin_get(&instance, &admin.key, "/admin/activity?period=week").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"]["code"], "validation_failed");
    let (status, _) = admin_get(&instance, &author.key, "/admin/activity").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "an agent's key reads no history");

    // A week later the history is gone, the saved minutes and the unsaved alike.
    instance.clock.advance(TimeDelta::days(8));
    let pass = history.run_once().await.expect("a pass");
    assert!(pass.rows_deleted >= 2, "{pass:?}");
    assert_eq!(table_rows(&url, "call_minutes").await, 0);
    let (status, day) = admin_get(&instance, &admin.key, "/admin/activity?period=day").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(summed(&day), (0, 0, 0));
}

#[tokio::test]
async fn a_stopping_instance_saves_the_calls_it_counted() {
    let instance = TestInstance::start("alpha.test").await;
    let author = agent(instance.service(), "author").await;
    let history = instance.instance.activity_history();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(history.run(stopped));
    publish_procedure(instance.service(), &author, "written before the stop", &[]).await;
    stop.send(true).expect("the loop listens");
    running.await.expect("the loop stops");
    let (calls, writes, errors) = audit_log_counts(&instance.database.url).await;
    assert_eq!((calls, writes, errors), (1, 1, 0));
    assert_eq!(table_rows(&instance.database.url, "call_minutes").await, 1);
    let buckets = instance
        .service()
        .call_history(interai::service::activity_history::HistoryPeriod::LastHour)
        .await
        .expect("the history");
    assert_eq!(
        buckets.iter().map(|bucket| bucket.writes).sum::<i64>(),
        1,
        "counted once"
    );
}

#[tokio::test]
async fn a_peer_s_page_plots_how_long_what_waits_for_it_has_waited_minute_by_minute() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let (admin, cookie) = signed_in_admin(alpha).await;
    let author = agent(alpha.service(), "author").await;
    let history = alpha.instance.activity_history();

    // Before any sample, the page says so and draws nothing.
    let page = get(alpha, "/console/peers/beta.test", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains("Lag over the last hour, per minute"),
        "{}",
        page.body
    );
    assert_eq!(
        page.body.matches("No sample in this period.").count(),
        2,
        "{}",
        page.body
    );

    // Beta is caught up at the first sample; then it goes down while alpha publishes, and waits 20 minutes.
    assert_eq!(history.run_once().await.expect("a pass").peers_sampled, 1);
    network.switchboard.take_down("beta.test");
    publish_procedure(alpha.service(), &author, "procedure that waits for beta", &[]).await;
    network.settle().await;
    network.advance(TimeDelta::minutes(20));
    network.settle().await;
    assert_eq!(history.run_once().await.expect("a pass").peers_sampled, 1);

    let page = get(alpha, "/console/peers/beta.test", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(
        page.body.matches("<svg class=\"plot\"").count(),
        2,
        "hour and day: {}",
        page.body
    );
    assert!(
        page.body
            .contains("aria-label=\"How long the oldest event waiting for beta.test had waited")
    );
    let rows: Vec<&str> = page
        .body
        .split("<tr class=\"lag-bucket\">")
        .skip(1)
        .map(|row| row.split("</tr>").next().unwrap_or_default())
        .collect();
    assert_eq!(rows.len(), 60 + 24);
    let sampled: Vec<&&str> = rows.iter().filter(|row| !row.contains("not sampled")).collect();
    assert_eq!(
        sampled.len(),
        2 + 1,
        "two minutes in the hour, one hour of the day: {rows:?}"
    );
    assert!(
        sampled[0].contains("<td>0</td><td>0 s</td><td>0</td>"),
        "caught up: {}",
        sampled[0]
    );
    assert!(
        sampled[1].contains("<td>1</td><td>20 min</td><td>0</td>"),
        "behind: {}",
        sampled[1]
    );
    assert!(
        sampled[2].contains("<td>1</td><td>20 min</td>"),
        "the hour's worst: {}",
        sampled[2]
    );

    // The admin API answers the same samples.
    let (status, lag) = admin_get(alpha, &admin.key, "/admin/peers/beta.test/lag").await;
    assert_eq!(status, StatusCode::OK, "{lag}");
    assert_eq!(lag["peer"], "beta.test");
    let sampled: Vec<&Value> = lag["buckets"]
        .as_array()
        .expect("buckets")
        .iter()
        .filter(|bucket| bucket["sampled"] == true)
        .collect();
    assert_eq!(sampled.len(), 2, "{lag}");
    assert_eq!(sampled[1]["most_undelivered_events"], 1);
    assert_eq!(sampled[1]["longest_wait_seconds"], 20 * 60);
    let (status, day) = admin_get(alpha, &admin.key, "/admin/peers/beta.test/lag?period=day").await;
    assert_eq!(status, StatusCode::OK, "{day}");
    assert_eq!(day["bucket_seconds"], 3600);
    let (status, missing) = admin_get(alpha, &admin.key, "/admin/peers/nobody.test/lag").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    // Gamma never peered: not a peer of alpha at all.
    let (status, _) = admin_get(alpha, &admin.key, "/admin/peers/gamma.test/lag").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A removed peer's samples go with it.
    assert_eq!(table_rows(alpha.database_url(), "peer_lag_samples").await, 2);
    alpha.federation().remove_peer("beta.test").await.expect("removed");
    assert_eq!(table_rows(alpha.database_url(), "peer_lag_samples").await, 0);
}
