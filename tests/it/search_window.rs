//! Relevance search with selective filters over many matches: the candidates a filtered query ranks must not depend
//! on how many more relevant matches the filters exclude (the filters are part of the index lookup, so the pool of
//! candidates holds only matches that pass them).

use interai::service::content::PublishRequest;
use interai::service::search::{CutReason, RELEVANCE_CANDIDATES, SearchCut, SearchRequest, SearchResults, status_rank};

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

/// Publishes a note one second after the previous change.
async fn note(instance: &TestInstance, author: &crate::fixtures::Agent, title: &str, tags: &[&str]) -> String {
    instance.clock.advance(chrono::TimeDelta::seconds(1));
    instance
        .service()
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "note".to_owned(),
                title: title.to_owned(),
                summary: "Field notes.".to_owned(),
                tags: tags.iter().map(|tag| (*tag).to_owned()).collect(),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("note published")
        .id
}

/// The IDs of a search's first page, sorted.
async fn sorted_results(
    instance: &TestInstance,
    searcher: &crate::fixtures::Agent,
    request: SearchRequest,
) -> Vec<String> {
    let results = instance
        .service()
        .search(&searcher.caller, &request)
        .await
        .expect("search");
    let mut found: Vec<String> = results.results.iter().map(|hit| hit.id.clone()).collect();
    found.sort();
    found
}

/// Every result of a search, page by page.
async fn every_page(
    instance: &TestInstance,
    caller: &interai::domain::AuthenticatedActor,
    request: SearchRequest,
) -> Vec<String> {
    let mut found = Vec::new();
    let mut cursor = None;
    loop {
        let page = instance
            .service()
            .search(
                caller,
                &SearchRequest {
                    cursor: cursor.clone(),
                    ..request.clone()
                },
            )
            .await
            .expect("search page");
        found.extend(page.results.iter().map(|hit| hit.id.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return found,
        }
    }
}

#[tokio::test]
async fn a_text_search_considers_its_most_recently_changed_candidates_and_a_revision_brings_an_old_one_back() {
    let instance = TestInstance::start_with("alpha.test", |config| {
        config.writes_per_hour = 10_000;
        config.search_candidates = 51;
    })
    .await;
    let author = agent(instance.service(), "wombat watcher").await;
    let mut notes = Vec::new();
    for number in 0..60 {
        notes.push(note(&instance, &author, &format!("Wombat burrow note {number}"), &[]).await);
    }

    let recent = SearchRequest {
        query: Some("wombat".to_owned()),
        sort: Some("recent".to_owned()),
        limit: Some(50),
        ..SearchRequest::default()
    };
    let found = every_page(&instance, &author.caller, recent.clone()).await;
    let newest: Vec<String> = notes.iter().rev().take(51).cloned().collect();
    assert_eq!(
        found, newest,
        "the 51 most recently changed matches, newest first, each once"
    );

    let ranked = every_page(
        &instance,
        &author.caller,
        SearchRequest {
            sort: None,
            ..recent.clone()
        },
    )
    .await;
    assert_eq!(ranked.len(), 51);
    assert!(
        !ranked.contains(&notes[0]),
        "the oldest note is beyond the candidates considered"
    );

    // A new revision is a change: the oldest note becomes the most recently changed match.
    instance.clock.advance(chrono::TimeDelta::seconds(1));
    instance
        .service()
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "note".to_owned(),
                title: "Wombat burrow note 0, revisited".to_owned(),
                summary: "Field notes.".to_owned(),
                revision_of: Some(notes[0].clone()),
                change_note: Some("Revisited the burrow.".to_owned()),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("revision published");
    let found = every_page(&instance, &author.caller, recent).await;
    assert_eq!(found.len(), 51);
    assert_eq!(found[0], notes[0], "the revised note comes first");
    assert!(
        !found.contains(&notes[9]),
        "the note that was 51st is now beyond the candidates"
    );
}

#[tokio::test]
async fn filters_of_a_text_search_follow_tags_types_kinds_and_trust_changes() {
    let instance = TestInstance::start("alpha.test").await;
    let service = instance.service();
    let author = agent(service, "author").await;
    let tagged = note(&instance, &author, "Platypus feeding schedule", &["zoo", "feeding"]).await;
    let untagged = note(&instance, &author, "Platypus feeding log", &[]).await;
    let search = |request: SearchRequest| sorted_results(&instance, &author, request);
    let platypus = SearchRequest {
        query: Some("platypus feeding".to_owned()),
        ..SearchRequest::default()
    };
    let mut both = vec![tagged.clone(), untagged.clone()];
    both.sort();
    assert_eq!(search(platypus.clone()).await, both);
    assert_eq!(
        search(SearchRequest {
            tags: vec!["Zoo".to_owned()],
            ..platypus.clone()
        })
        .await,
        vec![tagged.clone()],
        "tags are matched after normalization"
    );
    assert_eq!(
        search(SearchRequest {
            tags: vec!["zoo".to_owned(), "night".to_owned()],
            ..platypus.clone()
        })
        .await,
        Vec::<String>::new(),
        "every tag must be carried"
    );
    assert_eq!(
        search(SearchRequest {
            content_types: vec!["procedure".to_owned()],
            ..platypus.clone()
        })
        .await,
        Vec::<String>::new()
    );
    assert_eq!(
        search(SearchRequest {
            kinds: vec!["claim".to_owned(), "entity".to_owned()],
            ..platypus.clone()
        })
        .await,
        Vec::<String>::new()
    );

    // A failure report disputes the tagged note; retracting it makes the note unverified again.
    let critic = agent(service, "critic").await;
    let failure = crate::fixtures::use_it(service, &critic, &tagged, "failure", true).await;
    let without_disputed = SearchRequest {
        include_disputed: Some(false),
        ..platypus.clone()
    };
    assert_eq!(search(without_disputed.clone()).await, vec![untagged.clone()]);
    service
        .retract(&critic.caller, &metadata("report_usage"), &failure, None)
        .await
        .expect("retract");
    assert_eq!(search(without_disputed).await, both);
}

#[tokio::test]
async fn a_text_search_sorted_by_trust_pages_through_its_matches_in_trust_order_with_their_relevance() {
    let instance = TestInstance::start_with("alpha.test", |config| config.writes_per_hour = 10_000).await;
    let service = instance.service();
    let author = agent(service, "echidna keeper").await;
    let mut notes = Vec::new();
    for number in 0..7 {
        notes.push(note(&instance, &author, &format!("Echidna enclosure note {number}"), &[]).await);
    }
    let other = note(&instance, &author, "Wallaby enclosure note", &[]).await;
    // Two notes confirmed by several independent agents, one disputed by a failure.
    for (index, confirmed) in [&notes[2], &notes[5]].into_iter().enumerate() {
        for reporter in 0..3 + index {
            let user = agent(service, &format!("keeper {index} {reporter}")).await;
            crate::fixtures::use_it(service, &user, confirmed, "success", true).await;
        }
    }
    let critic = agent(service, "critic").await;
    crate::fixtures::use_it(service, &critic, &notes[4], "failure", true).await;

    let mut hits = Vec::new();
    let mut cursor = None;
    loop {
        let page = service
            .search(
                &author.caller,
                &SearchRequest {
                    query: Some("echidna enclosure".to_owned()),
                    sort: Some("trust".to_owned()),
                    limit: Some(2),
                    cursor: cursor.clone(),
                    ..SearchRequest::default()
                },
            )
            .await
            .expect("search page");
        assert!(page.results.len() <= 2);
        hits.extend(page.results);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let mut found: Vec<String> = hits.iter().map(|hit| hit.id.clone()).collect();
    assert!(!found.contains(&other), "only matches of the query");
    found.sort();
    let mut expected = notes.clone();
    expected.sort();
    assert_eq!(found, expected, "every match once");
    assert_eq!(
        hits.last().map(|hit| hit.id.as_str()),
        Some(notes[4].as_str()),
        "the disputed note comes last"
    );
    assert_eq!(
        hits[0].id, notes[5],
        "the note with the most independent confirmations comes first"
    );
    for pair in hits.windows(2) {
        let (left, right) = (&pair[0], &pair[1]);
        let key = |hit: &interai::service::search::SearchHit| (status_rank(hit.status), -hit.trust.lower_bound);
        assert!(
            key(left) < key(right) || (key(left) == key(right) && left.id < right.id),
            "trust order: {left:?} before {right:?}"
        );
    }
    assert!(
        hits.iter().all(|hit| hit.score > 0.0 && hit.score < 1.0),
        "each result carries its text relevance: {hits:?}"
    );
}

#[tokio::test]
async fn a_query_for_a_filter_term_finds_only_text_that_contains_it() {
    let instance = TestInstance::start("alpha.test").await;
    let service = instance.service();
    let author = agent(service, "tag author").await;
    let caller = &author.caller;
    let publish = |title: &str, body: &str, tags: Vec<String>| {
        let request = PublishRequest {
            content_type: "note".to_owned(),
            title: title.to_owned(),
            body_markdown: body.to_owned(),
            tags,
            ..PublishRequest::default()
        };
        async move {
            service
                .publish(caller, &metadata("publish"), request)
                .await
                .expect("note published")
                .id
        }
    };
    // The index term that carries the tag filter of the first note: a letter, hex digits and a closing zero.
    let tag_term = interai::store::search::facet_term('g', "webhooks");
    let tagged = publish(
        "Retry schedule for deliveries",
        "Back off between attempts.",
        vec!["webhooks".to_owned()],
    )
    .await;
    let quoting = publish(
        "Index terms explained",
        &format!("A tag is indexed as {tag_term} next to the text."),
        Vec::new(),
    )
    .await;

    let search = |query: String, tags: Vec<String>| {
        let request = SearchRequest {
            query: Some(query),
            tags,
            ..SearchRequest::default()
        };
        async move { service.search(caller, &request).await.expect("search") }
    };
    let found = search(tag_term.clone(), Vec::new()).await;
    let ids: Vec<&str> = found.results.iter().map(|hit| hit.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![quoting.as_str()],
        "the term matches the text that contains it, not the tagged note"
    );
    let filtered = search("retry".to_owned(), vec!["webhooks".to_owned()]).await;
    let ids: Vec<&str> = filtered.results.iter().map(|hit| hit.id.as_str()).collect();
    assert_eq!(ids, vec![tagged.as_str()], "the tag still filters");
}

/// Every page of a search, in order.
async fn pages(
    instance: &TestInstance,
    caller: &interai::domain::AuthenticatedActor,
    request: SearchRequest,
) -> Vec<SearchResults> {
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = instance
            .service()
            .search(
                caller,
                &SearchRequest {
                    cursor: cursor.clone(),
                    ..request.clone()
                },
            )
            .await
            .expect("search page");
        cursor = page.next_cursor.clone();
        pages.push(page);
        if cursor.is_none() {
            return pages;
        }
    }
}

#[tokio::test]
async fn a_search_with_more_matches_than_it_ranks_says_on_every_page_where_its_results_end() {
    let instance = TestInstance::start_with("alpha.test", |config| config.writes_per_hour = 10_000).await;
    let author = agent(instance.service(), "numbat counter").await;
    let matches = RELEVANCE_CANDIDATES + 5;
    for number in 0..matches {
        note(&instance, &author, &format!("Numbat colony note {number}"), &[]).await;
    }
    let ranked = SearchRequest {
        query: Some("numbat".to_owned()),
        limit: Some(50),
        ..SearchRequest::default()
    };
    let ranked_pages = pages(&instance, &author.caller, ranked.clone()).await;
    let listed: usize = ranked_pages.iter().map(|page| page.results.len()).sum();
    assert_eq!(
        listed, RELEVANCE_CANDIDATES,
        "the ranked results end at the ranking's bound"
    );
    let cut = SearchCut {
        after: RELEVANCE_CANDIDATES,
        reason: CutReason::Ranking,
    };
    for (number, page) in ranked_pages.iter().enumerate() {
        assert_eq!(page.cut, Some(cut), "page {number} says where the results end");
    }
    let last = ranked_pages.last().expect("a last page");
    assert!(last.next_cursor.is_none());
    let wire = serde_json::to_value(interai::mcp::wire::search_output(last.clone())).expect("serializes");
    assert_eq!(wire["truncated"]["after"], RELEVANCE_CANDIDATES, "{wire}");
    assert_eq!(wire["truncated"]["reason"], "ranking", "{wire}");
    assert!(
        wire["truncated"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("sort recent"))
    );

    // Sorted by recency the same query pages through every match, and nothing was cut.
    let recent_pages = pages(
        &instance,
        &author.caller,
        SearchRequest {
            sort: Some("recent".to_owned()),
            ..ranked.clone()
        },
    )
    .await;
    let mut every: Vec<String> = recent_pages
        .iter()
        .flat_map(|page| page.results.iter().map(|hit| hit.id.clone()))
        .collect();
    assert_eq!(every.len(), matches);
    every.dedup();
    assert_eq!(every.len(), matches, "each match once");
    assert!(recent_pages.iter().all(|page| page.cut.is_none()));

    // A query with fewer matches than the bound is not cut.
    let few = instance
        .service()
        .search(
            &author.caller,
            &SearchRequest {
                query: Some("\"numbat colony note 7\"".to_owned()),
                ..SearchRequest::default()
            },
        )
        .await
        .expect("search");
    assert!(!few.results.is_empty());
    assert_eq!(few.cut, None);
}

#[tokio::test]
async fn a_search_with_more_matches_than_its_candidates_says_on_every_page_where_its_results_end() {
    let instance = TestInstance::start_with("alpha.test", |config| {
        config.writes_per_hour = 10_000;
        config.search_candidates = 51;
    })
    .await;
    let author = agent(instance.service(), "bilby tracker").await;
    for number in 0..60 {
        note(&instance, &author, &format!("Bilby burrow note {number}"), &[]).await;
    }
    let cut = SearchCut {
        after: 51,
        reason: CutReason::Candidates,
    };
    for sort in [None, Some("recent"), Some("trust")] {
        let all = pages(
            &instance,
            &author.caller,
            SearchRequest {
                query: Some("bilby".to_owned()),
                sort: sort.map(str::to_owned),
                limit: Some(20),
                ..SearchRequest::default()
            },
        )
        .await;
        assert_eq!(all.len(), 3, "{sort:?}");
        assert_eq!(all.iter().map(|page| page.results.len()).sum::<usize>(), 51, "{sort:?}");
        for (number, page) in all.iter().enumerate() {
            assert_eq!(page.cut, Some(cut), "{sort:?}: page {number}");
        }
    }
    // Filters that leave fewer matches than the candidates: nothing is cut.
    let narrow = instance
        .service()
        .search(
            &author.caller,
            &SearchRequest {
                query: Some("bilby \"note 5\"".to_owned()),
                sort: Some("recent".to_owned()),
                ..SearchRequest::default()
            },
        )
        .await
        .expect("search");
    assert!(!narrow.results.is_empty());
    assert_eq!(narrow.cut, None);
}

/// The numbers written in `line`, with thousands separators read as such ("2,000" is 2000).
fn numbers_in(line: &str) -> Vec<usize> {
    let mut numbers = Vec::new();
    let mut current = String::new();
    let characters: Vec<char> = line.chars().collect();
    for (position, character) in characters.iter().enumerate() {
        let separator =
            *character == ',' && !current.is_empty() && characters.get(position + 1).is_some_and(char::is_ascii_digit);
        if character.is_ascii_digit() {
            current.push(*character);
        } else if !separator && !current.is_empty() {
            numbers.extend(current.parse::<usize>().ok());
            current.clear();
        }
    }
    numbers.extend(current.parse::<usize>().ok());
    numbers
}

#[test]
fn the_documents_state_the_search_bounds_the_code_applies() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let configuration = std::fs::read_to_string(root.join("docs/configuration.md")).expect("docs/configuration.md");
    let row = configuration
        .lines()
        .find(|line| line.starts_with("| `INTERAI_SEARCH_CANDIDATES`"))
        .expect("the INTERAI_SEARCH_CANDIDATES row");
    let numbers = numbers_in(row);
    let default = interai::config::DEFAULT_SEARCH_CANDIDATES as usize;
    assert!(numbers.contains(&default), "the default {default} in: {row}");
    assert!(
        numbers.contains(&RELEVANCE_CANDIDATES),
        "{RELEVANCE_CANDIDATES} ranked in: {row}"
    );
    assert!(row.contains("truncated"), "what a cut search says, in: {row}");
    let notes = std::fs::read_to_string(root.join("docs/spec-notes.md")).expect("docs/spec-notes.md");
    let bounds: Vec<&str> = notes
        .lines()
        .skip_while(|line| !line.contains("A text query considers at most"))
        .take_while(|line| !line.contains("alternatives_to { id, reason? }"))
        .collect();
    let numbers = numbers_in(&bounds.join(" "));
    assert!(numbers.contains(&default), "{default} in: {bounds:?}");
    assert!(
        numbers.contains(&RELEVANCE_CANDIDATES),
        "{RELEVANCE_CANDIDATES} in: {bounds:?}"
    );
    let stray: Vec<usize> = numbers
        .iter()
        .copied()
        .filter(|number| ![default, RELEVANCE_CANDIDATES].contains(number))
        .collect();
    assert!(
        stray.is_empty(),
        "numbers the code does not apply: {stray:?} in {bounds:?}"
    );
}
