"""Drives a running interai instance with the official MCP Python SDK, the way a Python agent would.

Started by tests/interop/run.sh, which serves the instance and passes, in the environment:
INTEROP_MCP_URL, INTEROP_AUTHOR_KEY (the admin key: publishes), INTEROP_REVIEWER_KEY (another root
controller: uses, reviews, rates) and INTEROP_READER_KEY (an agent with the `read` scope only).
`--mode auto` negotiates protocol 2026-07-28 through server/discover; `--mode legacy` uses the
initialize handshake. Prints one line per check ("ok   …" or "FAIL …") and exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import Any, Awaitable, Callable

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

TOOL_NAMES = sorted(
    ["search", "get", "compare", "publish", "submit_experience", "report_usage", "review", "rate", "whoami"]
)
# Well-formed, and the ID of nothing.
UNKNOWN_CONTENT_ID = "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y"


class Checks:
    """Runs named checks, prints one line for each, and counts the failures."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.failed = 0

    async def run(self, name: str, check: Callable[[], Awaitable[Any]]) -> Any:
        try:
            value = await check()
        except Exception as error:  # a check fails on anything, including the client raising
            self.failed += 1
            print(f"FAIL {self.label}: {name}: {describe_exception(error)}", flush=True)
            return None
        print(f"ok   {self.label}: {name}", flush=True)
        return value


def describe_exception(error: BaseException) -> str:
    if isinstance(error, AssertionError):
        return str(error)
    leaves = "; ".join(f"{type(leaf).__name__}: {leaf_text(leaf)}" for leaf in exception_leaves(error))
    return f"the client raised {leaves}"


def exception_leaves(error: BaseException) -> list[BaseException]:
    """The SDK runs the transport in task groups, so its errors arrive wrapped in exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in exception_leaves(inner)]
    return [error]


def leaf_text(error: BaseException) -> str:
    if isinstance(error, MCPError):
        data = "" if error.data is None else f" data={json.dumps(error.data)}"
        return f"[{error.code}] {error.message}{data}"
    return str(error)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


def expect_success(result: Any) -> dict[str, Any]:
    assert not result.is_error, f"expected success, got isError with {text_of(result)!r}"
    assert isinstance(result.structured_content, dict), "no structuredContent"
    return result.structured_content


def expect_error(result: Any, code: str) -> dict[str, Any]:
    """The spec's error as this client surfaces it: isError, structuredContent.error, and the text a model reads."""
    assert result.is_error, f"expected error {code}, got success {json.dumps(result.structured_content)[:300]}"
    error = (result.structured_content or {}).get("error")
    assert isinstance(error, dict), f"expected structuredContent.error, got {result.structured_content!r}"
    assert error.get("code") == code, f"expected code {code}, got {json.dumps(error)}"
    message = error.get("message")
    assert isinstance(message, str) and message, f"no message in {json.dumps(error)}"
    text = text_of(result)
    assert code in text and message in text, f"the text content {text!r} lacks the code or the message"
    return error


def require(value: Any, what: str) -> Any:
    assert value is not None, f"needs {what}, which failed above"
    return value


async def connect(stack: AsyncExitStack, url: str, key: str | None, mode: str) -> Client:
    """Connects and lists the tools, as agents do; from then on the SDK checks results against the output schemas."""
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers))
    client = await stack.enter_async_context(Client(streamable_http_client(url, http_client=http), mode=mode))
    await client.list_tools()
    return client


async def check_unauthenticated(url: str, mode: str) -> None:
    try:
        async with AsyncExitStack() as stack:
            await connect(stack, url, None, mode)
    except Exception as error:
        leaves = exception_leaves(error)
        seen = " ".join(leaf_text(leaf) for leaf in leaves)
        assert "unauthenticated" in seen, f"the client shows only: {seen}"
        return
    raise AssertionError("connected and listed tools without a key")


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    arguments = parser.parse_args()
    mode = arguments.mode
    url = os.environ["INTEROP_MCP_URL"]
    era = "2026-07-28" if mode == "auto" else "initialize"
    slug = "python" + ("modern" if mode == "auto" else "legacy")
    checks = Checks(f"python mcp {version('mcp')} ({era})")

    await checks.run("no key: the client sees unauthenticated", lambda: check_unauthenticated(url, mode))

    async with AsyncExitStack() as stack:

        async def connect_all() -> tuple[Client, Client, Client]:
            return (
                await connect(stack, url, os.environ["INTEROP_AUTHOR_KEY"], mode),
                await connect(stack, url, os.environ["INTEROP_REVIEWER_KEY"], mode),
                await connect(stack, url, os.environ["INTEROP_READER_KEY"], mode),
            )

        clients = await checks.run("connect: an author's, a reviewer's and a read-only key, each listing the tools", connect_all)
        if clients is None:
            return 1
        author, reviewer, reader = clients
        if mode == "auto":
            await checks.run(
                "connect: protocol 2026-07-28 negotiated", lambda: assert_equal(author.protocol_version, "2026-07-28")
            )
        else:
            await checks.run(
                "connect: an initialize-era protocol negotiated",
                lambda: assert_in(author.protocol_version, HANDSHAKE_PROTOCOL_VERSIONS),
            )

        async def list_tools() -> None:
            tools = (await author.list_tools()).tools
            names = sorted(tool.name for tool in tools)
            assert names == TOOL_NAMES, f"tools {names}"
            for tool in tools:
                schema = tool.output_schema
                assert isinstance(schema, dict) and schema.get("type") == "object", f"{tool.name}: output schema {schema}"

        await checks.run("tools/list: the nine tools, each with an output schema", list_tools)

        # whoami
        async def whoami() -> dict[str, Any]:
            me = expect_success(await author.call_tool("whoami", {}))
            assert str(me.get("actor_id", "")).startswith("usr_"), f"actor_id {me.get('actor_id')}"
            assert "publish" in me.get("scopes", []), f"scopes {me.get('scopes')}"
            return me

        await checks.run("whoami: the caller's identity and scopes", whoami)
        await checks.run(
            "whoami: an unknown field is validation_failed",
            lambda: call_expecting(author, "whoami", {"verbose": True}, "validation_failed"),
        )

        # publish
        async def publish() -> dict[str, Any]:
            published = expect_success(
                await author.call_tool(
                    "publish",
                    {
                        "content_type": "procedure",
                        "title": f"Deduplicate webhook deliveries {slug}",
                        "summary": "Store each delivery id and skip the ones already seen.",
                        "body_markdown": "1. Read the delivery id.\n2. Skip it when stored.\n3. Store it after processing.",
                        "claims": [{"text": f"Deduplicating by delivery id prevents double processing ({slug})."}],
                        "subjects": [{"name": f"Webhooks {slug}", "type": "concept"}],
                        "tags": ["interop"],
                        "idempotency_key": f"interop-{slug}-publish",
                    },
                )
            )
            assert str(published.get("id", "")).startswith("cnt_"), f"id {published.get('id')}"
            assert str(published.get("revision_id", "")).startswith("rev_"), f"revision_id {published.get('revision_id')}"
            assert str(published["claims"][0]["id"]).startswith("clm_"), f"claims {published.get('claims')}"
            return published

        published = await checks.run("publish: a procedure with a claim", publish)

        async def publish_alternative() -> dict[str, Any]:
            alternative = expect_success(
                await author.call_tool(
                    "publish",
                    {
                        "content_type": "procedure",
                        "title": f"Make webhook handlers idempotent {slug}",
                        "summary": "Design each handler so that running it twice changes nothing.",
                        "idempotency_key": f"interop-{slug}-publish-alternative",
                    },
                )
            )
            assert str(alternative.get("id", "")).startswith("cnt_"), f"id {alternative.get('id')}"
            return alternative

        alternative = await checks.run("publish: a second procedure to compare with", publish_alternative)
        await checks.run(
            "publish: a title that is not a string is validation_failed",
            lambda: call_expecting(author, "publish", {"content_type": "note", "title": 42}, "validation_failed", "title"),
        )

        async def publish_without_scope() -> None:
            error = await call_expecting(
                reader, "publish", {"content_type": "note", "title": "not allowed"}, "forbidden_scope"
            )
            assert error.get("details", {}).get("required_scope") == "publish", f"details {error.get('details')}"

        await checks.run("publish: a read-only key is forbidden_scope", publish_without_scope)

        # search
        async def search() -> None:
            content_id = require(published, "the published procedure")["id"]
            found = expect_success(await reader.call_tool("search", {"query": slug, "kinds": ["content"]}))
            ids = [result.get("id") for result in found.get("results", [])]
            assert content_id in ids, f"{content_id} not among {ids}"

        await checks.run("search: finds the published procedure", search)
        await checks.run(
            "search: an unknown sort is validation_failed",
            lambda: call_expecting(reader, "search", {"query": "webhook", "sort": "best"}, "validation_failed", "sort"),
        )

        # get
        async def get() -> dict[str, Any]:
            content_id = require(published, "the published procedure")["id"]
            item = expect_success(await reader.call_tool("get", {"id": content_id}))
            assert item.get("title") == f"Deduplicate webhook deliveries {slug}", f"title {item.get('title')}"
            assert item.get("untrusted_content") is True, "untrusted_content is not true"
            claim_ids = [claim.get("id") for claim in item.get("claims", [])]
            assert published["claims"][0]["id"] in claim_ids, f"claims {claim_ids}"
            return item

        await checks.run("get: the published procedure with its claim", get)

        async def get_unknown() -> None:
            error = await call_expecting(reader, "get", {"id": UNKNOWN_CONTENT_ID}, "not_found")
            assert error.get("details", {}).get("id") == UNKNOWN_CONTENT_ID, f"details {error.get('details')}"

        await checks.run("get: an unknown ID is not_found", get_unknown)

        # compare
        async def compare() -> None:
            first = require(published, "the published procedure")["id"]
            second = require(alternative, "the second procedure")["id"]
            comparison = expect_success(
                await reader.call_tool("compare", {"ids": [first, second], "context": {"language": "python"}})
            )
            ids = [item.get("id") for item in comparison.get("items", [])]
            assert ids == [first, second], f"items {ids}"

        await checks.run("compare: two procedures in a context", compare)

        async def compare_claim() -> None:
            content_id = require(published, "the published procedure")["id"]
            claim_id = published["claims"][0]["id"]
            await call_expecting(reader, "compare", {"ids": [content_id, claim_id]}, "invalid_target")

        await checks.run("compare: a claim is invalid_target", compare_claim)

        # report_usage
        async def report_usage() -> dict[str, Any]:
            content = require(published, "the published procedure")
            usage = expect_success(
                await reviewer.call_tool(
                    "report_usage",
                    {
                        "target": content["id"],
                        "usage_type": "implementation",
                        "result": "success",
                        "real_world_use": True,
                        "context": {"language": "python"},
                        "note": "Worked without modification.",
                        "idempotency_key": f"interop-{slug}-usage",
                    },
                )
            )
            assert str(usage.get("id", "")).startswith("use_"), f"id {usage.get('id')}"
            assert usage.get("target_revision") == content["revision_id"], f"target_revision {usage.get('target_revision')}"
            return usage

        usage = await checks.run("report_usage: a successful real-world use", report_usage)
        await checks.run(
            "report_usage: an unknown target is not_found",
            lambda: call_expecting(
                reviewer,
                "report_usage",
                {"target": UNKNOWN_CONTENT_ID, "usage_type": "test", "result": "success"},
                "not_found",
            ),
        )

        # review
        async def review() -> None:
            claim_id = require(published, "the published procedure")["claims"][0]["id"]
            usage_id = require(usage, "the reported use")["id"]
            reviewed = expect_success(
                await reviewer.call_tool(
                    "review",
                    {
                        "target": claim_id,
                        "verdict": "confirmed",
                        "confidence": 0.9,
                        "rationale_markdown": "Matches what we saw in production.",
                        "based_on_usage": usage_id,
                        "idempotency_key": f"interop-{slug}-review",
                    },
                )
            )
            assert str(reviewed.get("id", "")).startswith("rvw_"), f"id {reviewed.get('id')}"

        await checks.run("review: another controller confirms the claim", review)

        async def self_review() -> None:
            content_id = require(published, "the published procedure")["id"]
            await call_expecting(
                author, "review", {"target": content_id, "verdict": "confirmed", "confidence": 1}, "self_review"
            )

        await checks.run("review: the author's own content is self_review", self_review)

        # rate
        async def rate() -> None:
            content_id = require(published, "the published procedure")["id"]
            rated = expect_success(
                await reviewer.call_tool(
                    "rate",
                    {
                        "target": content_id,
                        "context": {"language": "python"},
                        "dimension": "usefulness",
                        "score": 80,
                        "confidence": 0.8,
                        "idempotency_key": f"interop-{slug}-rate",
                    },
                )
            )
            assert str(rated.get("id", "")).startswith("rat_"), f"id {rated.get('id')}"

        await checks.run("rate: the procedure's usefulness in a context", rate)

        async def rate_revision() -> None:
            revision_id = require(published, "the published procedure")["revision_id"]
            await call_expecting(
                reviewer, "rate", {"target": revision_id, "dimension": "usefulness", "score": 80}, "invalid_target"
            )

        await checks.run("rate: a revision is invalid_target", rate_revision)

        # submit_experience
        async def submit_experience() -> None:
            content_id = require(published, "the published procedure")["id"]
            experience = expect_success(
                await reviewer.call_tool(
                    "submit_experience",
                    {
                        "title": f"Deduplication held under load {slug}",
                        "summary": "No delivery was processed twice in a month.",
                        "body_markdown": "We stored delivery ids for 30 days.",
                        "result": "success",
                        "real_world_use": True,
                        "context": {"environment": "production"},
                        "used": [{"id": content_id, "result": "success"}],
                        "idempotency_key": f"interop-{slug}-experience",
                    },
                )
            )
            assert str(experience.get("id", "")).startswith("cnt_"), f"id {experience.get('id')}"
            assert len(experience.get("usage_ids", [])) == 1, f"usage_ids {experience.get('usage_ids')}"

        await checks.run("submit_experience: a success with the use it was based on", submit_experience)
        await checks.run(
            "submit_experience: an unknown result is validation_failed",
            lambda: call_expecting(
                reviewer,
                "submit_experience",
                {"title": "t", "summary": "s", "result": "great"},
                "validation_failed",
                "result",
            ),
        )

    return 1 if checks.failed else 0


async def assert_equal(actual: Any, expected: Any) -> None:
    assert actual == expected, f"expected {expected!r}, got {actual!r}"


async def assert_in(actual: Any, expected: Any) -> None:
    assert actual in expected, f"expected one of {list(expected)}, got {actual!r}"


async def call_expecting(
    client: Client, tool: str, arguments: dict[str, Any], code: str, field: str | None = None
) -> dict[str, Any]:
    """Calls a tool with an input that must fail, and checks the spec's error (and the offending field, if named)."""
    error = expect_error(await client.call_tool(tool, arguments), code)
    if field is not None:
        assert error.get("details", {}).get("field") == field, f"expected details.field {field}, got {json.dumps(error)}"
    return error


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
