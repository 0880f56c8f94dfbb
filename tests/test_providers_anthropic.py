"""The Anthropic Messages adapter against a real loopback server speaking the wire format.

Each case checks what the adapter yields, what the server was sent, and (through the real engine
and `PromptRun`) what the log holds and how the turn ends. Retry waits are a millisecond.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from fake_model_server import (
    ANTHROPIC_MODEL,
    FakeModelServer,
    Status,
    Stream,
    anthropic_error,
    anthropic_stream,
    sse,
)
from support_providers import (  # noqa: F401 - fake_model_server: the `server` fixture
    FAKE_KEY,
    FAST,
    cancel_on_first_delta,
    chunks,
    fake_model_server,
    play,
    prompt_run,
    provider_for,
    request,
)

from agent_tui.engine.provider import ModelMessage, Retrying, StepDone, TextDelta, ToolCall
from agent_tui.events.chains import chain_violations
from agent_tui.providers.anthropic_messages import anthropic_messages
from agent_tui.providers.tool_arguments import NOT_JSON

LIST_DIR = ("toolu_01LstD1r", "list_dir", ['{"path"', ': "."}'])


def overloaded() -> bytes:
    return sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error")


class TestStreams:
    def test_plain_text_arrives_as_deltas_then_one_step_done_with_usage(
        self, server: FakeModelServer
    ) -> None:
        server.script(Stream(anthropic_stream(["Hel", "lo"], usage=(25, 9, 0))))
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert failure is None
        assert out == [
            TextDelta("Hel"),
            TextDelta("lo"),
            StepDone(
                model=ANTHROPIC_MODEL,
                prompt_tokens=25,
                completion_tokens=9,
                cached_tokens=0,
                cache_write_tokens=0,
            ),
        ]

    def test_the_request_has_the_system_prompt_apart_max_tokens_and_the_key(
        self, server: FakeModelServer
    ) -> None:
        server.script(Stream(anthropic_stream(["ok"])))
        tools = (
            {"name": "list_dir", "description": "List a directory.", "input_schema": {"type": "object"}},
        )
        anyio.run(
            chunks,
            provider_for("anthropic", server.anthropic_url),
            request(ModelMessage("system", "be brief"), ModelMessage("user", "hi"), tools=tools),
        )
        sent = server.requests[0]
        assert sent.path == "/v1/messages"
        assert FAKE_KEY in (sent.headers.get("x-api-key", "") + sent.headers.get("authorization", ""))
        body = sent.body
        assert body["stream"] is True and body["max_tokens"] == 1024 and body["model"] == "test-model"
        assert body["system"] == [
            {"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}
        ]
        assert body["messages"] == [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            }
        ]
        assert body["tools"] == [
            {"name": "list_dir", "description": "List a directory.", "input_schema": {"type": "object"}}
        ]

    def test_text_and_two_parallel_tool_uses_with_input_split_across_deltas(
        self, server: FakeModelServer
    ) -> None:
        calls = [LIST_DIR, ("toolu_02Rd", "read_file", ['{"path": "src/', 'app.py", "li', 'mit": 5}'])]
        server.script(Stream(anthropic_stream(["Let me look."], calls, usage=(40, 30, 2000))))
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert failure is None
        assert out == [
            TextDelta("Let me look."),
            ToolCall("list_dir", {"path": "."}, "toolu_01LstD1r"),
            ToolCall("read_file", {"path": "src/app.py", "limit": 5}, "toolu_02Rd"),
            # The whole prompt: uncached input plus what was read from the cache.
            StepDone(
                model=ANTHROPIC_MODEL,
                prompt_tokens=2040,
                completion_tokens=30,
                cached_tokens=2000,
                cache_write_tokens=0,
            ),
        ]

    def test_input_that_is_not_json_reaches_the_engine_as_a_mapping_its_schema_refuses(
        self, server: FakeModelServer
    ) -> None:
        server.script(Stream(anthropic_stream([], [("toolu_x", "list_dir", ['{"path": '])])))
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert failure is None
        assert out[0] == ToolCall("list_dir", {NOT_JSON: '{"path": '}, "toolu_x")

    def test_a_stream_without_message_stop_is_incomplete(self, server: FakeModelServer) -> None:
        frames = anthropic_stream(["cut"])
        server.script(Stream(frames[:-1]))  # everything but message_stop, then a clean end
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert out == [TextDelta("cut")]
        assert failure is not None and "ended before the model finished" in str(failure)


class TestTranscript:
    def test_tool_results_open_the_next_user_turn_and_empty_text_is_left_out(self) -> None:
        call = ToolCall("list_dir", {"path": "."}, "toolu_1")
        turns = anthropic_messages(
            [
                ModelMessage("system", "sys"),
                ModelMessage("user", "look"),
                ModelMessage("assistant", "", tool_calls=(call,)),
                ModelMessage("tool", "a\nb", "toolu_1", "list_dir"),
                ModelMessage("user", "and hurry"),
            ]
        )
        assert [t["role"] for t in turns] == ["user", "assistant", "user"]
        assert turns[1]["content"] == [
            {"type": "tool_use", "id": "toolu_1", "name": "list_dir", "input": {"path": "."}}
        ]
        assert [b["type"] for b in turns[2]["content"]] == ["tool_result", "text"]
        assert turns[2]["content"][0]["tool_use_id"] == "toolu_1"


class TestFailures:
    def test_401_fails_at_once_with_the_servers_message_and_never_the_key(
        self, server: FakeModelServer
    ) -> None:
        server.script(Status(401, anthropic_error(f"invalid x-api-key {FAKE_KEY}")))
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert out == []
        assert failure is not None and failure.status_code == 401
        assert "401 Unauthorized: invalid x-api-key" in str(failure)
        assert FAKE_KEY not in str(failure)
        assert len(server.requests) == 1

    def test_a_429_for_a_billing_limit_ends_the_call_at_once(self, server: FakeModelServer) -> None:
        spent = anthropic_error("Your credit balance is too low to access the API.", "billing_error")
        server.script(Status(429, spent), Stream(anthropic_stream(["never sent"])))
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert out == [] and failure is not None and failure.status_code == 429
        assert "Your credit balance is too low" in str(failure)
        assert len(server.requests) == 1

    def test_429_with_retry_after_is_retried_then_succeeds(self, server: FakeModelServer) -> None:
        server.script(
            Status(
                429,
                anthropic_error("Number of requests has exceeded your rate limit", "rate_limit_error"),
                {"retry-after": "0"},
            ),
            Stream(anthropic_stream(["fine now"])),
        )
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert failure is None
        reason = "429 Too Many Requests: Number of requests has exceeded your rate limit"
        assert out[0] == Retrying(attempt=1, delay_ms=0, reason=reason)
        assert out[1] == TextDelta("fine now")

    def test_an_overloaded_error_event_before_any_content_is_retried(self, server: FakeModelServer) -> None:
        start = anthropic_stream(["x"])[0]
        server.script(Stream([start, overloaded()]), Stream(anthropic_stream(["recovered"])))
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert failure is None
        assert isinstance(out[0], Retrying) and out[0].reason == "overloaded error"
        assert out[1] == TextDelta("recovered")

    def test_529_overloaded_until_the_retries_run_out(self, server: FakeModelServer) -> None:
        server.script(*[Status(529, anthropic_error("Overloaded", "overloaded_error"))] * 3)
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert [(c.attempt, c.reason) for c in out] == [(1, "529 Overloaded"), (2, "529 Overloaded")]
        assert failure is not None and "gave up after 2 retries" in str(failure)
        assert len(server.requests) == FAST.retries + 1

    def test_500_until_the_retries_run_out(self, server: FakeModelServer) -> None:
        server.script(*[Status(500, anthropic_error("Internal server error", "api_error"))] * 3)
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert len(out) == FAST.retries
        assert failure is not None and "500 Internal Server Error: Internal server error" in str(failure)

    def test_a_connection_dropped_mid_stream_fails_without_a_retry(self, server: FakeModelServer) -> None:
        frames = anthropic_stream(["one ", "two ", "three"])
        server.script(Stream(frames, drop_after=5))  # start, block start, ping, two deltas
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert out == [TextDelta("one "), TextDelta("two ")]
        assert failure is not None and "after the answer had begun" in str(failure)
        assert len(server.requests) == 1

    def test_a_malformed_event_fails_the_call(self, server: FakeModelServer) -> None:
        frames = anthropic_stream(["fine", "more"])
        bad = b"event: content_block_delta\ndata: {broken\n\n"
        server.script(Stream([*frames[:4], bad, *frames[4:]]))
        out, failure = anyio.run(chunks, provider_for("anthropic", server.anthropic_url))
        assert out == [TextDelta("fine")]
        assert failure is not None and "malformed stream chunk" in str(failure)
        assert len(server.requests) == 1


class TestThroughTheEngine:
    def test_a_tool_using_turn_sends_the_result_back_under_the_tool_use_id(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(
            Stream(anthropic_stream(["Looking."], [LIST_DIR], usage=(300, 20, 0))),
            Stream(anthropic_stream(["It has README.md and src/."], usage=(50, 12, 400))),
        )
        result, events = play(prompt_run(tmp_path, "anthropic", server.anthropic_url))
        assert result.stop_reason == "final"
        assert chain_violations(events) == []
        requested = next(e for e in events if e.type == "model.tool_call_requested")
        assert requested.payload["toolCallId"] == "toolu_01LstD1r"
        second = server.requests[1].body
        assert str(tmp_path / "project") in second["system"][0]["text"]
        assistant, results = second["messages"][1], second["messages"][2]
        assert assistant["role"] == "assistant"
        assert assistant["content"][0] == {"type": "text", "text": "Looking."}
        assert assistant["content"][1]["id"] == "toolu_01LstD1r"
        assert results["role"] == "user"
        assert results["content"][0]["type"] == "tool_result"
        assert results["content"][0]["tool_use_id"] == "toolu_01LstD1r"
        assert "README.md" in results["content"][0]["content"]
        ended = events[-1]
        # claude-sonnet-4-5 at $3 input, $0.30 cache read, $15 output per million tokens:
        # (300·3 + 20·15) + (50·3 + 400·0.3 + 12·15) = 1200 + 450 millionths of a dollar
        assert ended.payload["usage"] == {
            "promptTokens": 750,
            "completionTokens": 32,
            "cachedTokens": 400,
            "cacheWriteTokens": 0,
            "costUsd": pytest.approx(0.00165),
        }

    def test_retries_are_stored_as_model_retry_events(self, server: FakeModelServer, tmp_path: Path) -> None:
        server.script(
            Status(529, anthropic_error("Overloaded", "overloaded_error"), {"retry-after": "0"}),
            Stream(anthropic_stream(["Done."])),
        )
        result, events = play(prompt_run(tmp_path, "anthropic", server.anthropic_url))
        assert result.stop_reason == "final"
        retries = [e.payload for e in events if e.type == "model.retry"]
        assert retries == [{"attempt": 1, "delayMs": 0, "reason": "529 Overloaded"}]
        assert chain_violations(events) == []

    def test_401_ends_the_turn_provider_failure_with_the_servers_message(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(Status(401, anthropic_error("invalid x-api-key")))
        _, events = play(prompt_run(tmp_path, "anthropic", server.anthropic_url))
        ended = events[-1].payload
        assert (ended["stopReason"], ended["errorCode"]) == ("error", "provider_failure")
        assert "invalid x-api-key" in ended["message"]

    def test_an_unknown_tool_fails_not_found_and_the_turn_goes_on(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(
            Stream(anthropic_stream([], [("toolu_nope", "launch_rocket", ['{"to": "moon"}'])])),
            Stream(anthropic_stream(["No such tool, sorry."])),
        )
        result, events = play(prompt_run(tmp_path, "anthropic", server.anthropic_url))
        failed = next(e for e in events if e.type == "tool.failed")
        assert failed.payload["errorCode"] == "not_found"
        assert result.stop_reason == "final"

    def test_cancel_closes_the_http_stream_and_the_server_sees_it(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        # message_start, block start, ping, one delta; then open and silent.
        server.script(Stream(anthropic_stream(["first ", "second "]), hold_after=4))
        events, saw_close = anyio.run(
            cancel_on_first_delta, server, "anthropic", server.anthropic_url, tmp_path
        )
        assert saw_close, "the server did not see the client close the stream within 1 s"
        assert events[-1].payload["stopReason"] == "cancelled"
        assert [e.payload["text"] for e in events if e.type == "model.delta"] == ["first "]
        assert chain_violations(events) == []
