//! Neutralizing Markdown bodies before they are stored, and plain-text excerpts of them for search.
//!
//! Bodies stay Markdown (spec §9: "bodies as plain Markdown without active content"). What could become
//! active when someone renders them is defused at write time:
//!
//! - every `<` that could open raw HTML (a tag, comment, processing instruction, CDATA section or
//!   declaration: `<` followed by a letter, `/`, `!` or `?`) becomes `&lt;`, except inside code spans,
//!   fenced and indented code blocks, and autolinks to `http`, `https` or `mailto` URLs;
//! - link and image destinations with the schemes `javascript:` or `vbscript:`, and `data:` URLs
//!   (except `data:image/png|jpeg|gif|webp;base64,…` as an image), become `#`, in inline links and in
//!   reference definitions alike.
//!
//! Code regions are found with a CommonMark parser (pulldown-cmark, with the GitHub table,
//! strikethrough, task list and footnote extensions) rather than by matching fences line by line:
//! Markdown decides what is code by context (list items, block quotes, HTML blocks, table cells), and a
//! guess that takes text for code where a renderer does not would leave live HTML behind. Where the
//! parse is unsure, escaping happens anyway; `&lt;` renders as `<`, so text outside code loses nothing.
//!
//! Invariant: `neutralize_markdown` is idempotent. Escaping can change how the rest of a document parses
//! (text that was inside an HTML block may now hold a code span), so one pass is repeated until it
//! changes nothing, which also proves the result is a fixed point.

use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};

/// More passes than any real document needs; reaching it means the input was built to fight the
/// neutralizer, and it then gets the blunt treatment of [`escape_everything`].
const MAXIMUM_PASSES: usize = 16;

/// Defuses raw HTML and dangerous link targets in a Markdown body; see the module documentation.
pub fn neutralize_markdown(body: &str) -> String {
    let mut current = body.to_owned();
    for _ in 0..MAXIMUM_PASSES {
        match neutralize_once(&current) {
            Some(changed) => current = changed,
            None => return current,
        }
    }
    escape_everything(&current)
}

/// A short plain-text rendering of a Markdown body for search snippets: heading marks, emphasis, link
/// syntax and URLs, code fences and raw HTML are dropped; text, link text, image descriptions and code
/// are kept; whitespace is collapsed. At most `max_chars` characters; a cut happens at a word boundary
/// when one is near and is marked with `…` (counted in `max_chars`).
///
/// The result is plain text, not HTML: entities are decoded (`&lt;` becomes `<`), so whoever embeds it in
/// HTML must escape it.
pub fn plain_text_excerpt(markdown: &str, max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    // Collecting one character past the limit is enough to know whether a cut is needed and where.
    let mut excerpt = ExcerptBuilder {
        text: String::new(),
        characters: 0,
        limit: max_chars.saturating_add(1),
    };
    for event in Parser::new_ext(markdown, markdown_options()) {
        if excerpt.is_full() {
            break;
        }
        match event {
            Event::Text(text) | Event::Code(text) => excerpt.push(&text),
            Event::SoftBreak | Event::HardBreak | Event::Rule => excerpt.push(" "),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::BlockQuote(_)
                | TagEnd::TableCell
                | TagEnd::TableRow
                | TagEnd::TableHead
                | TagEnd::FootnoteDefinition,
            ) => excerpt.push(" "),
            _ => {}
        }
    }
    let collected = excerpt.text;
    let collected = collected.trim_end();
    if collected.chars().count() <= max_chars {
        return collected.to_owned();
    }
    let kept: String = collected.chars().take(max_chars.saturating_sub(1)).collect();
    // Prefer cutting at the last space, unless that would throw away more than a fifth of the excerpt.
    let cut = match kept.rfind(' ') {
        Some(space) if kept[..space].chars().count() * 5 >= max_chars.saturating_sub(1) * 4 => &kept[..space],
        _ => kept.as_str(),
    };
    format!("{}…", cut.trim_end())
}

/// Plain text gathered for an excerpt, with whitespace collapsed as it arrives.
struct ExcerptBuilder {
    /// The text so far; never starts with or holds two consecutive spaces.
    text: String,
    /// Characters in `text`.
    characters: usize,
    /// Characters after which nothing more is taken.
    limit: usize,
}

impl ExcerptBuilder {
    fn is_full(&self) -> bool {
        self.characters >= self.limit
    }

    fn push(&mut self, text: &str) {
        for character in text.chars() {
            if self.is_full() {
                return;
            }
            let character = if character.is_whitespace() { ' ' } else { character };
            if character == ' ' && (self.text.is_empty() || self.text.ends_with(' ')) {
                continue;
            }
            self.text.push(character);
            self.characters += 1;
        }
    }
}

/// The extensions that decide what is code the way GitHub-flavoured renderers do. Tables matter most:
/// a `|` inside a code span splits a table cell, so the same text is code without the extension and
/// not code with it; parsing with it errs on the side of escaping.
fn markdown_options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_FOOTNOTES
}

/// An open link or image while its events stream by.
struct OpenLink {
    /// The source range of the whole link, from `[` or `![` to the end.
    range: Range<usize>,
    /// Whether its destination must be replaced.
    dangerous: bool,
    /// How the destination was written.
    link_type: LinkType,
    /// The reference label, for reference-style links.
    label: String,
    /// Where the link text ends so far: the largest end of any event inside the link.
    text_end: usize,
}

/// One change to the source: the bytes in `range` are replaced by `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edit {
    range: Range<usize>,
    replacement: &'static str,
}

/// One neutralizing pass, or `None` when the text is already neutral.
fn neutralize_once(markdown: &str) -> Option<String> {
    let mut kept_verbatim: Vec<Range<usize>> = Vec::new();
    let mut edits: Vec<Edit> = Vec::new();
    let mut open_links: Vec<OpenLink> = Vec::new();
    let mut parser = Parser::new_ext(markdown, markdown_options()).into_offset_iter();
    let mut dangerous_labels: Vec<String> = Vec::new();

    for (event, range) in parser.by_ref() {
        if let Event::End(TagEnd::Link | TagEnd::Image) = event {
            if let Some(link) = open_links.pop()
                && link.dangerous
            {
                if matches!(link.link_type, LinkType::Inline) {
                    edits.push(inline_destination_edit(markdown, &link));
                } else {
                    dangerous_labels.push(link.label);
                }
            }
            for outer in &mut open_links {
                outer.text_end = outer.text_end.max(range.end);
            }
            continue;
        }
        for link in &mut open_links {
            link.text_end = link.text_end.max(range.end);
        }
        match event {
            Event::Code(_) | Event::Start(Tag::CodeBlock(_)) => kept_verbatim.push(range),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                id,
                ..
            }) => match link_type {
                LinkType::Autolink | LinkType::Email => {
                    if is_safe_autolink(link_type, &dest_url) {
                        kept_verbatim.push(range.clone());
                    }
                    // An autolink has no events inside that matter; track it anyway so the stack stays
                    // balanced with its `End`.
                    open_links.push(OpenLink {
                        text_end: range.start,
                        range,
                        dangerous: false,
                        link_type,
                        label: String::new(),
                    });
                }
                _ => open_links.push(OpenLink {
                    dangerous: is_dangerous_destination(&dest_url, false),
                    text_end: range.start + 1,
                    range,
                    link_type,
                    label: id.into_string(),
                }),
            },
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                id,
                ..
            }) => open_links.push(OpenLink {
                dangerous: is_dangerous_destination(&dest_url, true),
                text_end: range.start + 2,
                range,
                link_type,
                label: id.into_string(),
            }),
            _ => {}
        }
    }

    // Reference definitions: those a link uses dangerously, and every one that is dangerous however it
    // is used (only a `data:image/…` target can be fine, and only for images).
    let definitions = parser.reference_definitions();
    let mut definition_spans: Vec<Range<usize>> = dangerous_labels
        .iter()
        .filter_map(|label| definitions.get(label))
        .map(|definition| definition.span.clone())
        .collect();
    definition_spans.extend(
        definitions
            .iter()
            .filter(|(_, definition)| is_dangerous_destination(&definition.dest, true))
            .map(|(_, definition)| definition.span.clone()),
    );
    definition_spans.sort_by_key(|span| span.start);
    definition_spans.dedup();
    edits.extend(
        definition_spans
            .iter()
            .map(|span| definition_destination_edit(markdown, span.clone())),
    );

    edits.sort_by_key(|edit| (edit.range.start, edit.range.end));
    edits.dedup();
    // Nested or repeated discoveries of one place must not produce overlapping edits.
    let mut non_overlapping: Vec<Edit> = Vec::with_capacity(edits.len());
    for edit in edits {
        if non_overlapping
            .last()
            .is_none_or(|previous| previous.range.end <= edit.range.start)
        {
            non_overlapping.push(edit);
        }
    }
    escape_html_openers(markdown, &kept_verbatim, non_overlapping)
}

/// Applies `edits` and escapes every `<` that opens raw HTML outside `kept_verbatim` and outside the
/// edited ranges. Returns `None` when nothing changes.
fn escape_html_openers(markdown: &str, kept_verbatim: &[Range<usize>], edits: Vec<Edit>) -> Option<String> {
    let bytes = markdown.as_bytes();
    let mut all_edits: Vec<Edit> = Vec::new();
    let mut verbatim = kept_verbatim.iter().peekable();
    let mut pending_edits = edits.iter().peekable();
    for position in byte_positions(bytes, b'<') {
        while verbatim.peek().is_some_and(|range| range.end <= position) {
            verbatim.next();
        }
        while pending_edits.peek().is_some_and(|edit| edit.range.end <= position) {
            pending_edits.next();
        }
        let inside = |range: &Range<usize>| range.start <= position && position < range.end;
        if verbatim.peek().is_some_and(|range| inside(range))
            || pending_edits.peek().is_some_and(|edit| inside(&edit.range))
        {
            continue;
        }
        if opens_raw_html(bytes.get(position + 1).copied()) {
            all_edits.push(Edit {
                range: position..position + 1,
                replacement: "&lt;",
            });
        }
    }
    if all_edits.is_empty() && edits.is_empty() {
        return None;
    }
    all_edits.extend(edits);
    all_edits.sort_by_key(|edit| edit.range.start);
    let mut output = String::with_capacity(markdown.len() + all_edits.len() * 3);
    let mut copied_up_to = 0;
    for edit in &all_edits {
        output.push_str(&markdown[copied_up_to..edit.range.start]);
        output.push_str(edit.replacement);
        copied_up_to = edit.range.end;
    }
    output.push_str(&markdown[copied_up_to..]);
    (output != markdown).then_some(output)
}

/// Byte positions of `needle`, in order.
fn byte_positions(bytes: &[u8], needle: u8) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(move |(_, byte)| **byte == needle)
        .map(|(position, _)| position)
}

/// Whether the byte after a `<` makes it the start of a tag, comment, processing instruction, CDATA
/// section or declaration.
fn opens_raw_html(next: Option<u8>) -> bool {
    next.is_some_and(|byte| byte.is_ascii_alphabetic() || matches!(byte, b'/' | b'!' | b'?'))
}

/// `<https://…>`, `<http://…>`, `<mailto:…>` and `<someone@host>` stay links; any other scheme in an
/// autolink is escaped into text.
fn is_safe_autolink(link_type: LinkType, destination: &str) -> bool {
    if matches!(link_type, LinkType::Email) {
        return true;
    }
    let scheme = url_scheme(destination);
    matches!(scheme.as_deref(), Some("http" | "https" | "mailto"))
}

/// The lowercase scheme of a URL as a browser would see it: browsers drop ASCII control characters and
/// spaces around a URL and tabs and newlines inside it, so `java\tscript:` is `javascript:`.
fn url_scheme(destination: &str) -> Option<String> {
    let cleaned: String = destination
        .chars()
        .filter(|character| !character.is_ascii_control() && *character != ' ')
        .collect();
    let (scheme, _) = cleaned.split_once(':')?;
    let mut characters = scheme.chars();
    let well_formed = characters.next().is_some_and(|first| first.is_ascii_alphabetic())
        && characters.all(|character| character.is_ascii_alphanumeric() || matches!(character, '+' | '-' | '.'));
    well_formed.then(|| scheme.to_ascii_lowercase())
}

/// Whether a link or image destination could run code when followed or loaded.
fn is_dangerous_destination(destination: &str, is_image: bool) -> bool {
    match url_scheme(destination).as_deref() {
        Some("javascript" | "vbscript") => true,
        Some("data") => !(is_image && is_safe_image_data_url(destination)),
        _ => false,
    }
}

/// Base64 raster images are inert; SVG is not in the list because it can carry script.
fn is_safe_image_data_url(destination: &str) -> bool {
    let cleaned: String = destination
        .chars()
        .filter(|character| !character.is_ascii_whitespace() && !character.is_ascii_control())
        .collect::<String>()
        .to_ascii_lowercase();
    ["png", "jpeg", "gif", "webp"]
        .iter()
        .any(|format| cleaned.starts_with(&format!("data:image/{format};base64,")))
}

/// The edit that replaces an inline link's destination with `#`. When the destination cannot be found
/// in the source (it always can for well-formed input), the link's `[` is turned into an entity
/// instead, so that the text no longer forms a link at all.
fn inline_destination_edit(markdown: &str, link: &OpenLink) -> Edit {
    let fallback = bracket_entity_edit(markdown, link.range.clone());
    let Some(source) = markdown.get(link.text_end..link.range.end) else {
        return fallback;
    };
    let Some(separator) = source.find("](") else {
        return fallback;
    };
    let destination_start = link.text_end + separator + 2;
    match destination_range(markdown, destination_start, link.range.end) {
        Some(range) => Edit {
            range,
            replacement: "#",
        },
        None => fallback,
    }
}

/// The edit that replaces a reference definition's destination (`[label]: destination "title"`) with
/// `#`, or turns its `[` into an entity when the destination cannot be found.
fn definition_destination_edit(markdown: &str, span: Range<usize>) -> Edit {
    let fallback = bracket_entity_edit(markdown, span.clone());
    let Some(source) = markdown.get(span.clone()) else {
        return fallback;
    };
    let bytes = source.as_bytes();
    let mut label_end = None;
    let mut index = 0;
    while index + 1 < bytes.len() {
        match bytes[index] {
            b'\\' => index += 1,
            b']' if bytes[index + 1] == b':' => {
                label_end = Some(index);
                break;
            }
            _ => {}
        }
        index += 1;
    }
    let Some(label_end) = label_end else {
        return fallback;
    };
    match destination_range(markdown, span.start + label_end + 2, span.end) {
        Some(range) => Edit {
            range,
            replacement: "#",
        },
        None => fallback,
    }
}

/// Finds a link destination starting at `start` (after optional whitespace with at most one line break)
/// and ending before `limit`: either `<…>` or a run without spaces or unbalanced parentheses.
fn destination_range(markdown: &str, start: usize, limit: usize) -> Option<Range<usize>> {
    let bytes = markdown.as_bytes();
    let limit = limit.min(bytes.len());
    let mut position = start;
    while position < limit && matches!(bytes[position], b' ' | b'\t' | b'\n' | b'\r') {
        position += 1;
    }
    let destination_start = position;
    if bytes.get(position) == Some(&b'<') {
        while position < limit {
            match bytes[position] {
                b'\\' => position += 2,
                b'>' => return Some(destination_start..position + 1),
                b'\n' => return None,
                _ => position += 1,
            }
        }
        return None;
    }
    let mut depth = 0_usize;
    while position < limit {
        match bytes[position] {
            b'\\' => position += 1,
            b'(' => depth += 1,
            b')' if depth == 0 => break,
            b')' => depth -= 1,
            byte if byte.is_ascii_whitespace() || byte.is_ascii_control() => break,
            _ => {}
        }
        position += 1;
    }
    let position = position.min(limit);
    (position > destination_start).then_some(destination_start..position)
}

/// Replaces the first `[` in `range` by `&#91;`, which renders as `[` but never opens a link.
fn bracket_entity_edit(markdown: &str, range: Range<usize>) -> Edit {
    let bracket = markdown
        .get(range.clone())
        .and_then(|source| source.find('['))
        .map_or(range.start, |offset| range.start + offset);
    let bracket_range = if markdown.as_bytes().get(bracket) == Some(&b'[') {
        bracket..bracket + 1
    } else {
        bracket..bracket
    };
    Edit {
        range: bracket_range,
        replacement: "&#91;",
    }
}

/// The last resort for input that keeps changing under neutralization: no `<` and no `[` survive, so
/// nothing can be HTML or a link. A fixed point of [`neutralize_once`].
fn escape_everything(markdown: &str) -> String {
    markdown.replace('<', "&lt;").replace('[', "&#91;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{Strategy, prop};

    fn assert_neutralizes(input: &str, expected: &str) {
        let output = neutralize_markdown(input);
        assert_eq!(output, expected, "input: {input:?}");
        assert_eq!(neutralize_markdown(&output), output, "not idempotent for {input:?}");
    }

    #[test]
    fn script_and_event_handler_tags_are_escaped() {
        assert_neutralizes("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>");
        assert_neutralizes(
            "Look: <img src=x onerror=alert(1)> here",
            "Look: &lt;img src=x onerror=alert(1)> here",
        );
        assert_neutralizes(
            "<iframe src=\"https://evil.test\"></iframe>",
            "&lt;iframe src=\"https://evil.test\">&lt;/iframe>",
        );
        assert_neutralizes("<ScRiPt>x</sCrIpT>", "&lt;ScRiPt>x&lt;/sCrIpT>");
        assert_neutralizes("<svg/onload=alert(1)>", "&lt;svg/onload=alert(1)>");
    }

    #[test]
    fn comments_processing_instructions_cdata_and_declarations_are_escaped() {
        assert_neutralizes("a <!-- hidden --> b", "a &lt;!-- hidden --> b");
        assert_neutralizes("<?php system($x); ?>", "&lt;?php system($x); ?>");
        assert_neutralizes("<![CDATA[x]]>", "&lt;![CDATA[x]]>");
        assert_neutralizes("<!DOCTYPE html>", "&lt;!DOCTYPE html>");
    }

    #[test]
    fn html_blocks_are_escaped_line_by_line() {
        let input = "<div>\n<p onclick=\"steal()\">hi</p>\n</div>\n\ntext";
        let expected = "&lt;div>\n&lt;p onclick=\"steal()\">hi&lt;/p>\n&lt;/div>\n\ntext";
        assert_neutralizes(input, expected);
    }

    #[test]
    fn comparisons_and_arrows_are_left_alone() {
        assert_neutralizes(
            "if a < b and c <= d then x <- y; 3<4",
            "if a < b and c <= d then x <- y; 3<4",
        );
        assert_neutralizes("a <b", "a &lt;b");
    }

    #[test]
    fn html_inside_code_survives_unchanged() {
        let fenced = "Example:\n\n```html\n<script src=\"app.js\"></script>\n<!-- note -->\n```\n\nafter";
        assert_neutralizes(fenced, fenced);
        let tilde = "~~~\n<iframe></iframe>\n~~~";
        assert_neutralizes(tilde, tilde);
        let long_fence = "````\n```\n<b>still code</b>\n```\n````";
        assert_neutralizes(long_fence, long_fence);
        let indented = "Paragraph.\n\n    <div>indented code</div>\n";
        assert_neutralizes(indented, indented);
        let span = "Use `<br>` or ``a `<b>` b`` inline.";
        assert_neutralizes(span, span);
        let in_list = "- step:\n\n  ```\n  <tag>\n  ```\n";
        assert_neutralizes(in_list, in_list);
        let in_quote = "> ```\n> <tag>\n> ```\n";
        assert_neutralizes(in_quote, in_quote);
    }

    #[test]
    fn code_outside_and_html_inside_in_one_document() {
        assert_neutralizes(
            "<b>bold</b> and `<b>code</b>`\n\n```\n<i>x</i>\n```\n<i>y</i>",
            "&lt;b>bold&lt;/b> and `<b>code</b>`\n\n```\n<i>x</i>\n```\n&lt;i>y&lt;/i>",
        );
    }

    #[test]
    fn a_fence_that_a_list_item_closes_does_not_protect_what_follows() {
        // The fence belongs to the list item; the unindented line ends the item and therefore the code
        // block, so the script is raw HTML for a CommonMark renderer and must be escaped.
        assert_neutralizes(
            "- a\n  ```\n<script>x</script>\n  ```",
            "- a\n  ```\n&lt;script>x&lt;/script>\n  ```",
        );
    }

    #[test]
    fn an_unclosed_fence_is_code_to_the_end() {
        let input = "text\n```\n<script>x</script>\n";
        assert_neutralizes(input, input);
    }

    #[test]
    fn fences_inside_html_blocks_are_not_code() {
        // In the input, the fence lines are part of an HTML block, so nothing is code. Once the `<div>` is
        // escaped, the fence becomes a real code block; the fixed point keeps the result stable.
        let input = "<div>\n```\n<b>x</b>\n```\n</div>";
        let output = neutralize_markdown(input);
        assert!(!output.contains("<div"), "{output}");
        assert_eq!(neutralize_markdown(&output), output);
    }

    #[test]
    fn autolinks_stay_only_for_web_and_mail() {
        let safe = "See <https://example.com/a?b=c>, <http://example.org> and <mailto:alice@example.com> or <bob@example.com>.";
        assert_neutralizes(safe, safe);
        assert_neutralizes("<javascript:alert(1)>", "&lt;javascript:alert(1)>");
        assert_neutralizes("<ftp://files.example.com>", "&lt;ftp://files.example.com>");
    }

    #[test]
    fn dangerous_link_targets_become_hash() {
        assert_neutralizes("[click](javascript:alert(1))", "[click](#)");
        assert_neutralizes("[click](JaVaScRiPt:alert(1))", "[click](#)");
        assert_neutralizes("[x](vbscript:msgbox(1) \"title\")", "[x](# \"title\")");
        assert_neutralizes("[x](data:text/html;base64,PHNjcmlwdD4=)", "[x](#)");
        assert_neutralizes("[x](<javascript:alert(1)>)", "[x](#)");
        assert_neutralizes("[x]( javascript:alert(1) )", "[x]( # )");
        assert_neutralizes("[**bold** `code`](javascript:void(0))", "[**bold** `code`](#)");
        assert_neutralizes("[a \\] b](javascript:x)", "[a \\] b](#)");
    }

    #[test]
    fn entity_and_escape_obfuscated_schemes_are_caught() {
        assert_neutralizes("[x](&#106;avascript:alert(1))", "[x](#)");
        assert_neutralizes("[x](javascript&colon;alert(1))", "[x](#)");
        assert_neutralizes("[x](java&#x09;script:alert(1))", "[x](#)");
        assert_neutralizes("[x](java\\script:alert(1))", "[x](java\\script:alert(1))");
    }

    #[test]
    fn images_may_use_raster_data_urls_only() {
        let png = "![dot](data:image/png;base64,iVBORw0KGgo=)";
        assert_neutralizes(png, png);
        let webp = "![dot](DATA:image/WebP;base64,UklGRhoAAABXRUJQ)";
        assert_neutralizes(webp, webp);
        assert_neutralizes("![x](data:image/svg+xml;base64,PHN2Zz4=)", "![x](#)");
        assert_neutralizes("![x](javascript:alert(1))", "![x](#)");
        assert_neutralizes(
            "[not an image](data:image/png;base64,iVBORw0KGgo=)",
            "[not an image](#)",
        );
        assert_neutralizes(
            "[![badge](https://img.test/b.svg)](javascript:alert(1))",
            "[![badge](https://img.test/b.svg)](#)",
        );
    }

    #[test]
    fn reference_definitions_are_neutralized() {
        assert_neutralizes(
            "[click][evil]\n\n[evil]: javascript:alert(1) \"t\"",
            "[click][evil]\n\n[evil]: # \"t\"",
        );
        assert_neutralizes("[evil]\n\n[evil]:\n  <vbscript:x>", "[evil]\n\n[evil]:\n  #");
        let image_only = "![dot][d]\n\n[d]: data:image/gif;base64,R0lGODlh";
        assert_neutralizes(image_only, image_only);
        assert_neutralizes(
            "[link][d]\n\n[d]: data:image/gif;base64,R0lGODlh",
            "[link][d]\n\n[d]: #",
        );
        assert_neutralizes("[unused]: javascript:x", "[unused]: #");
    }

    #[test]
    fn safe_links_are_untouched() {
        let text =
            "[docs](https://docs.python.org/3/) [rel](../guide.md#retry) [anchor](#top) [mail](mailto:a@example.com)";
        assert_neutralizes(text, text);
    }

    #[test]
    fn already_escaped_entities_stay_as_they_are() {
        let text = "&lt;script&gt; and &#60;b&#62; are text";
        assert_neutralizes(text, text);
    }

    #[test]
    fn non_ascii_text_is_preserved() {
        let text = "Grüße, 日本語 <ä> <b>fett</b> ✓";
        assert_neutralizes(text, "Grüße, 日本語 <ä> &lt;b>fett&lt;/b> ✓");
    }

    #[test]
    fn the_last_resort_is_a_fixed_point() {
        let blunt = escape_everything("<b>[x](javascript:y)</b> `<i>`");
        assert_eq!(neutralize_once(&blunt), None);
    }

    /// What a CommonMark renderer would make active in `markdown`: raw HTML events, dangerous link or
    /// image targets, and autolinks with other schemes than http, https and mailto.
    fn active_content(markdown: &str) -> Vec<String> {
        Parser::new_ext(markdown, markdown_options())
            .filter_map(|event| match event {
                Event::Html(html) | Event::InlineHtml(html) if html.contains('<') => Some(format!("html {html:?}")),
                Event::Start(Tag::Link {
                    link_type, dest_url, ..
                }) => {
                    let dangerous = match link_type {
                        LinkType::Autolink | LinkType::Email => !is_safe_autolink(link_type, &dest_url),
                        _ => is_dangerous_destination(&dest_url, false),
                    };
                    dangerous.then(|| format!("link {dest_url:?}"))
                }
                Event::Start(Tag::Image { dest_url, .. }) => {
                    is_dangerous_destination(&dest_url, true).then(|| format!("image {dest_url:?}"))
                }
                _ => None,
            })
            .collect()
    }

    /// Markdown built from the pieces that matter to neutralization, so random inputs hit the tricky
    /// interactions (fences in lists and quotes, HTML blocks around fences, links in code) often.
    fn markdown_fragments() -> impl Strategy<Value = String> {
        let fragment = prop::sample::select(vec![
            "<script>",
            "</script>",
            "<b>",
            "<!--",
            "-->",
            "<?x",
            "<![CDATA[",
            "<div>",
            "</div>",
            "<a href=\"",
            "`",
            "``",
            "```",
            "~~~",
            "\n",
            "\n\n",
            "    ",
            "  ",
            "> ",
            "- ",
            "1. ",
            "| ",
            " |",
            "|---|",
            "[",
            "]",
            "(",
            ")",
            "![",
            "](",
            "]: ",
            "javascript:",
            "JaVaScRiPt:",
            "data:text/html,",
            "data:image/png;base64,",
            "vbscript:",
            "&#106;",
            "&lt;",
            "\\",
            "\"",
            "x",
            " ",
            "<https://a.test>",
            "<javascript:x>",
            "<",
            ">",
            "*",
            "_",
            "#",
            "[^1]",
            "[^1]: ",
        ]);
        prop::collection::vec(fragment, 0..40).prop_map(|pieces| pieces.concat())
    }

    #[test]
    fn the_active_content_detector_sees_what_it_must() {
        for active in [
            "<script>x</script>",
            "a <b>c</b>",
            "[x](javascript:y)",
            "![x](data:image/svg+xml,y)",
            "<javascript:x>",
            "[x][y]\n\n[y]: vbscript:z",
        ] {
            assert!(!active_content(active).is_empty(), "{active:?}");
        }
        assert!(active_content("`<b>` <https://a.test> ![p](data:image/png;base64,AA==)").is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

        #[test]
        fn neutralized_markdown_has_no_active_content_and_is_stable(markdown in markdown_fragments()) {
            let neutralized = neutralize_markdown(&markdown);
            proptest::prop_assert_eq!(active_content(&neutralized), Vec::<String>::new(), "input {:?} output {:?}", markdown, neutralized);
            proptest::prop_assert_eq!(neutralize_markdown(&neutralized), neutralized);
        }

        #[test]
        fn arbitrary_text_is_neutralized_without_panicking(markdown in "\\PC{0,200}") {
            let neutralized = neutralize_markdown(&markdown);
            proptest::prop_assert_eq!(active_content(&neutralized), Vec::<String>::new());
            proptest::prop_assert_eq!(neutralize_markdown(&neutralized), neutralized);
            let _excerpt = plain_text_excerpt(&markdown, 40);
        }
    }

    #[test]
    fn excerpts_strip_markdown_syntax() {
        let markdown = "# Retry *webhooks*\n\nUse [exponential backoff](https://example.com/b) with `jitter`.\n\n```python\nsleep(2 ** n)\n```\n\n<b>raw</b> ![diagram](d.png)";
        assert_eq!(
            plain_text_excerpt(markdown, 500),
            "Retry webhooks Use exponential backoff with jitter. sleep(2 ** n) raw diagram"
        );
    }

    #[test]
    fn excerpts_cut_at_a_word_boundary() {
        let markdown = "Deduplicate deliveries by their delivery identifier before processing";
        let excerpt = plain_text_excerpt(markdown, 30);
        assert_eq!(excerpt, "Deduplicate deliveries by…");
        assert!(excerpt.chars().count() <= 30);
        assert_eq!(plain_text_excerpt("short", 30), "short");
        assert_eq!(plain_text_excerpt("anything", 0), "");
        assert_eq!(plain_text_excerpt("Supercalifragilistic", 6), "Super…");
    }

    #[test]
    fn excerpts_decode_entities_into_plain_text() {
        assert_eq!(plain_text_excerpt("a &lt;b> c", 50), "a <b> c");
    }
}
