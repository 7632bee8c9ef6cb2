//! Operations: audit retention (one pass run directly and the loop moved on by the clock) with the write limit left
//! intact, and the HTTP server's header read timeout and connection cap on real sockets.

use std::time::Duration;

use chrono::TimeDelta;
use interai::service::ErrorCode;
use interai::service::audit::CallAudit;
use interai::service::audit_retention::minimum_audit_age;
use interai::service::content::PublishRequest;
use interai::workers::audit_retention::{AuditRetention, PASS_INTERVAL};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::fixtures::{Agent, agent, metadata, publish_procedure};
use crate::harness::{ServedInstance, TestInstance};

/// The upper bound for anything the tests below wait for; reaching it means the behaviour is missing.
const GENEROUS: Duration = Duration::from_secs(60);

async fn record_read(service: &interai::service::Service, reader: &Agent) {
    service
        .record_call(CallAudit {
            caller: &reader.caller,
            tool: "search",
            is_write: false,
            request: &json!({ "query": "anything" }),
            outcome: Ok("0 results".to_owned()),
            duration: Duration::ZERO,
            client_name: None,
            client_version: None,
        })
        .await
        .expect("read audited");
}

async fn publish_note(service: &interai::service::Service, author: &Agent, title: &str) -> Result<(), ErrorCode> {
    service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "note".to_owned(),
                title: title.to_owned(),
                ..PublishRequest::default()
            },
        )
        .await
        .map(|_| ())
        .map_err(|error| error.code)
}

#[tokio::test]
async fn audit_retention_deletes_old_records_and_the_write_limit_still_counts_recent_writes() {
    let alpha = TestInstance::start_with("alpha.test", |config| {
        config.writes_per_hour = 4;
        config.audit_retention_days = 30;
    })
    .await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    publish_procedure(service, &author, "old one", &[]).await;
    publish_procedure(service, &author, "old two", &[]).await;
    record_read(service, &author).await;

    alpha.clock.advance(TimeDelta::days(31));
    publish_procedure(service, &author, "recent", &[]).await;
    record_read(service, &author).await;
    assert_eq!(
        service
            .write_allowance(author.controller())
            .await
            .expect("allowance")
            .remaining,
        3
    );

    let retention = AuditRetention::new(service.clone(), 30).expect("a retention of 30 days prunes");
    let pass = retention.run_once().await.expect("pass runs");
    assert_eq!(pass.deleted, 3, "the month-old writes and read");
    assert!(pass.complete);
    assert_eq!(
        service
            .audit_records_before(service.now() - TimeDelta::days(30))
            .await
            .expect("count"),
        0
    );
    let kept = service
        .recent_calls(&author.caller.actor.id, 10)
        .await
        .expect("audit readable");
    assert_eq!(kept.len(), 2, "this month's write and read stay: {kept:?}");
    assert!(kept.iter().all(|call| call.created_at == service.now()));

    // The limit still counts the recent write, and still stops the fifth write of the hour.
    assert_eq!(
        service
            .write_allowance(author.controller())
            .await
            .expect("allowance")
            .remaining,
        3
    );
    for title in ["a", "b", "c"] {
        publish_note(service, &author, title).await.expect("within the limit");
    }
    assert_eq!(publish_note(service, &author, "d").await, Err(ErrorCode::RateLimited));

    // The shortest prune allowed keeps every record of the write-limit window, and the limit holds.
    alpha.clock.advance(TimeDelta::minutes(30));
    let shortest = service.prune_audit(minimum_audit_age()).await.expect("prune");
    assert_eq!(shortest.deleted, 0);
    assert_eq!(publish_note(service, &author, "e").await, Err(ErrorCode::RateLimited));
    let too_short = service
        .prune_audit(TimeDelta::minutes(60))
        .await
        .expect_err("younger than the window");
    assert_eq!(too_short.code, ErrorCode::ValidationFailed);
    assert_eq!(
        service
            .recent_calls(&author.caller.actor.id, 10)
            .await
            .expect("audit readable")
            .len(),
        5
    );
}

#[tokio::test]
async fn a_large_audit_backlog_is_pruned_in_batches_to_the_last_record() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let reader = agent(service, "reader").await;
    // One full batch and a part of the next: the prune goes on after a full batch and stops after a short one.
    let backlog = usize::try_from(interai::service::audit_retention::PRUNE_BATCH_ROWS).expect("small") + 7;
    for _ in 0..backlog {
        record_read(service, &reader).await;
    }
    alpha.clock.advance(TimeDelta::days(2));
    record_read(service, &reader).await;
    let pass = service.prune_audit(TimeDelta::days(1)).await.expect("prune");
    assert_eq!(pass.deleted, u64::try_from(backlog).expect("small"));
    assert_eq!(
        service
            .recent_calls(&reader.caller.actor.id, 10)
            .await
            .expect("audit readable")
            .len(),
        1
    );
}

#[tokio::test]
async fn the_retention_loop_prunes_again_when_the_clock_passes_its_interval() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let reader = agent(service, "reader").await;
    assert!(
        AuditRetention::new(service.clone(), 0).is_none(),
        "0 keeps every record"
    );
    let retention = AuditRetention::new(service.clone(), 1).expect("one day");
    let mut passes = retention.passes();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(retention.run(stopped));
    tokio::time::timeout(GENEROUS, passes.wait_for(|count| *count >= 1))
        .await
        .expect("the first pass runs at start")
        .expect("loop alive");

    record_read(service, &reader).await;
    alpha.clock.advance(TimeDelta::days(1) + TimeDelta::minutes(1));
    record_read(service, &reader).await;
    assert!(
        TimeDelta::days(1) + TimeDelta::minutes(1) > PASS_INTERVAL,
        "the move passes the next deadline"
    );
    tokio::time::timeout(GENEROUS, passes.wait_for(|count| *count >= 2))
        .await
        .expect("moving the clock past the interval runs the next pass")
        .expect("loop alive");
    let kept = service
        .recent_calls(&reader.caller.actor.id, 10)
        .await
        .expect("audit readable");
    assert_eq!(kept.len(), 1, "the day-old read went, the new one stayed");
    assert_eq!(kept[0].created_at, service.now());

    stop.send(true).expect("loop listening");
    tokio::time::timeout(GENEROUS, task)
        .await
        .expect("the loop stops when asked")
        .expect("loop ended cleanly");
}

/// Reads until the server closes the connection (a reset counts as closed), or gives up at [`GENEROUS`].
async fn closed_by_the_server(stream: &mut tokio::net::TcpStream) -> bool {
    let mut received = Vec::new();
    match tokio::time::timeout(GENEROUS, stream.read_to_end(&mut received)).await {
        Ok(Ok(_)) => true,
        Ok(Err(error)) => error.kind() == std::io::ErrorKind::ConnectionReset,
        Err(_) => false,
    }
}

#[tokio::test]
async fn a_client_that_never_finishes_its_request_header_is_disconnected() {
    let served = ServedInstance::start_with("alpha.test", |config| config.header_read_timeout_seconds = 1).await;
    let address = served.base_url.trim_start_matches("http://").to_owned();
    let mut slow = tokio::net::TcpStream::connect(&address).await.expect("connect");
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        .await
        .expect("partial header sent");
    assert!(
        closed_by_the_server(&mut slow).await,
        "the server closes a connection whose header does not arrive in time"
    );
    // The server still answers everyone else.
    let health = reqwest::get(format!("{}/healthz", served.base_url))
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200);
    served.stop().await;
}

#[tokio::test]
async fn a_connection_beyond_the_cap_waits_until_one_closes() {
    let served = ServedInstance::start_with("alpha.test", |config| {
        config.max_connections = 1;
        config.header_read_timeout_seconds = 1;
    })
    .await;
    let address = served.base_url.trim_start_matches("http://").to_owned();
    // The first connection takes the only place and holds it with a header that never ends.
    let mut holder = tokio::net::TcpStream::connect(&address).await.expect("connect");
    holder
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .expect("partial header sent");
    // Connections are accepted in the order they arrive, so this one queues behind the holder.
    let mut waiting = tokio::net::TcpStream::connect(&address)
        .await
        .expect("the kernel queues it");
    waiting
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .expect("request sent");
    let mut response = Vec::new();
    tokio::time::timeout(GENEROUS, waiting.read_to_end(&mut response))
        .await
        .expect("the waiting connection is served once the place frees up")
        .expect("response read");
    assert!(
        String::from_utf8_lossy(&response).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&response)
    );
    // It was served only after the holder had been closed: the holder's end already reads as closed, without waiting.
    let holder = holder.into_std().expect("std stream");
    let mut byte = [0_u8; 1];
    let state = std::io::Read::read(&mut &holder, &mut byte);
    assert!(
        matches!(&state, Ok(0)) || matches!(&state, Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset),
        "the holder was still open while the waiting connection was served: {state:?}"
    );
    served.stop().await;
}
