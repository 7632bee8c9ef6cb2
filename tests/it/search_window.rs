//! Relevance search with selective filters over many matches: the candidates a filtered query ranks must not depend
//! on how many more relevant matches the filters exclude (the filters are part of the index lookup, so the pool of
//! candidates holds only matches that pass them).

use interai::service::content::PublishRequest;
use interai::service::search::{RELEVANCE_CANDIDATES, SearchRequest};

use crate::fixtures::{agent, metadata};
use crate::harness::TestInstance;

#[tokio::test]
async fn a_selective_filter_finds_matches_ranked_below_many_excluded_ones() {
    let instance = TestInstance::start_with("alpha.test", |config| config.writes_per_hour = 10_000).await;
    let service = instance.service();
    let author = agent(service, "prolific author").await;
    // More strongly matching notes than two windows of candidates hold: the word is in every title.
    let strong_matches = RELEVANCE_CANDIDATES * 2 + 10;
    for number in 0..strong_matches {
        service
            .publish(
                &author.caller,
                &metadata("publish"),
                PublishRequest {
                    content_type: "note".to_owned(),
                    title: format!("Quokka habitat note {number}"),
                    summary: "Quokka sightings and quokka feeding rules.".to_owned(),
                    ..PublishRequest::default()
                },
            )
            .await
            .expect("note published");
    }
    // Three checklists that mention the word once, deep in a long body: the least relevant matches of all.
    let mut checklist_ids = Vec::new();
    for number in 0..3 {
        let outcome = service
            .publish(
                &author.caller,
                &metadata("publish"),
                PublishRequest {
                    content_type: "checklist".to_owned(),
                    title: format!("Island field survey checklist {number}"),
                    body_markdown: format!(
                        "{}\n\nAlso note any quokka seen on the way.",
                        "Walk the transect slowly and record every animal. ".repeat(40)
                    ),
                    ..PublishRequest::default()
                },
            )
            .await
            .expect("checklist published");
        checklist_ids.push(outcome.id);
    }

    let results = service
        .search(
            &author.caller,
            &SearchRequest {
                query: Some("quokka".to_owned()),
                kinds: vec!["content".to_owned()],
                content_types: vec!["checklist".to_owned()],
                limit: Some(10),
                ..SearchRequest::default()
            },
        )
        .await
        .expect("search");
    let mut found: Vec<String> = results.results.iter().map(|hit| hit.id.clone()).collect();
    found.sort();
    checklist_ids.sort();
    assert_eq!(
        found, checklist_ids,
        "every checklist that mentions the word, and nothing else"
    );
    assert!(!results.relaxed);

    let unfiltered = service
        .search(
            &author.caller,
            &SearchRequest {
                query: Some("quokka".to_owned()),
                kinds: vec!["content".to_owned()],
                limit: Some(50),
                ..SearchRequest::default()
            },
        )
        .await
        .expect("unfiltered search");
    assert_eq!(unfiltered.results.len(), 50);
    assert!(
        unfiltered.results.iter().all(|hit| hit.object_type == "note"),
        "without the filter the notes, which match more strongly, come first"
    );
}
