"""The OpenAI Chat Completions adapter against a real loopback server speaking the wire format.

Each case checks what the adapter yields, what the server was sent, and (through the real engine
and `PromptRun`) what the log holds and how the turn ends. Retry waits are a millisecond.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from fake_model_server import FakeModelServer, Status, Stream, openai_error, openai_stream, sse
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

from agent_tui.engine.provider import ModelMessage, ProviderFailure, Retrying, StepDone, TextDelta, ToolCall
from agent_tui.events.chains import chain_violations
from agent_tui.providers.retry import Redactor, RetryPolicy, classify
from agent_tui.providers.tool_arguments import NOT_JSON

LIST_DIR = ("call_Lst8fJ2", "list_dir", ['{"pa', 'th": ', '"."}'])


class TestStreams:
    def test_plain_text_arrives_as_deltas_then_one_step_done_with_usage(
        self, server: FakeModelServer
    ) -> None:
        server.script(Stream(openai_stream(["Hel", "lo", " there"], usage=(42, 3, 0))))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert out[:3] == [TextDelta("Hel"), TextDelta("lo"), TextDelta(" there")]
        assert out[3] == StepDone(
            model="gpt-4.1-mini-2025-04-14", prompt_tokens=42, completion_tokens=3, cached_tokens=0
        )
        assert len(out) == 4

    def test_the_request_asks_for_a_stream_with_usage_and_carries_the_key(
        self, server: FakeModelServer
    ) -> None:
        server.script(Stream(openai_stream(["ok"])))
        tools = (
            {"name": "list_dir", "description": "List a directory.", "input_schema": {"type": "object"}},
        )
        anyio.run(
            chunks,
            provider_for("openai", server.openai_url),
            request(ModelMessage("user", "hi"), tools=tools),
        )
        sent = server.requests[0]
        assert sent.path == "/v1/chat/completions"
        assert sent.headers["authorization"] == f"Bearer {FAKE_KEY}"
        assert sent.body["stream"] is True
        assert sent.body["stream_options"] == {"include_usage": True}
        assert sent.body["model"] == "test-model"
        assert sent.body["max_tokens"] == 1024  # a custom endpoint: the widely known field
        assert sent.body["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "list_dir",
                    "description": "List a directory.",
                    "parameters": {"type": "object"},
                },
            }
        ]

    @pytest.mark.parametrize("interleave", [False, True], ids=["one-after-another", "interleaved"])
    def test_text_and_two_parallel_tool_calls_with_arguments_split_across_chunks(
        self, server: FakeModelServer, interleave: bool
    ) -> None:
        calls = [LIST_DIR, ("call_Rd4kQ", "read_file", ['{"path": "src/', 'app.py", "lim', 'it": 5}'])]
        server.script(
            Stream(openai_stream(["Let me look."], calls, usage=(900, 40, 768), interleave=interleave))
        )
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert out == [
            TextDelta("Let me look."),
            ToolCall("list_dir", {"path": "."}, "call_Lst8fJ2"),
            ToolCall("read_file", {"path": "src/app.py", "limit": 5}, "call_Rd4kQ"),
            StepDone(
                model="gpt-4.1-mini-2025-04-14", prompt_tokens=900, completion_tokens=40, cached_tokens=768
            ),
        ]

    def test_arguments_that_are_not_json_reach_the_engine_as_a_mapping_its_schema_refuses(
        self, server: FakeModelServer
    ) -> None:
        server.script(Stream(openai_stream([], [("call_x", "list_dir", ['{"path": '])])))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert out[0] == ToolCall("list_dir", {NOT_JSON: '{"path": '}, "call_x")

    @pytest.mark.parametrize(
        ("sent", "read"),
        [
            ('{"path": 1e400}', {NOT_JSON: '{"path": 1e400}'}),
            ('{"path": NaN}', {NOT_JSON: '{"path": NaN}'}),
            ('{"path": "\\ud800"}', {NOT_JSON: '{"path": "\\ud800"}'}),
            ('{"limit": 100000000000000000000000}', {"limit": 1e23}),
        ],
    )
    def test_arguments_a_log_line_could_not_hold_are_read_as_the_log_writes_them(
        self, server: FakeModelServer, sent: str, read: dict[str, object]
    ) -> None:
        """What the engine stores is written with orjson: a value it cannot write (an infinite
        or NaN number, half a surrogate pair) would fail the store and end the turn."""
        server.script(Stream(openai_stream([], [("call_x", "read_file", [sent])])))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert out[0] == ToolCall("read_file", read, "call_x")
        orjson.dumps(out[0].args)  # the log can hold it

    @pytest.mark.parametrize("depth", [100, 100_000])
    def test_arguments_nested_too_deep_reach_the_engine_as_not_json(
        self, server: FakeModelServer, depth: int
    ) -> None:
        """100,000 levels are past the parser's recursion; 100 are past `MAX_DEPTH` (kept well
        under the 255 levels orjson writes into a log): both are the model's mistake, said to it."""
        deep = '{"path": ' + "[" * depth + "]" * depth + "}"
        server.script(Stream(openai_stream([], [("call_x", "list_dir", [deep])])))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert out[0] == ToolCall("list_dir", {NOT_JSON: deep[:2_000]}, "call_x")

    def test_a_stream_that_ends_before_the_finish_reason_is_retried_when_nothing_was_yielded(
        self, server: FakeModelServer
    ) -> None:
        frames = openai_stream(["never"])
        unfinished = [frames[0], sse("[DONE]")]  # the role chunk, then the end: no finish_reason
        server.script(Stream(unfinished), Stream(openai_stream(["whole"])))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert isinstance(out[0], Retrying)
        assert (out[0].attempt, out[0].reason) == (1, "stream ended early")
        assert out[1] == TextDelta("whole")

    def test_a_server_that_refuses_stream_options_is_asked_again_without_it_and_never_again(
        self, server: FakeModelServer
    ) -> None:
        refused = openai_error(400, "Unrecognized request argument supplied: stream_options")
        server.script(
            Status(400, refused),
            Stream(openai_stream(["first"], usage=None)),
            Stream(openai_stream(["second"], usage=None)),
        )
        provider = provider_for("openai", server.openai_url)

        async def two_calls() -> list[tuple[list[Any], ProviderFailure | None]]:
            return [await chunks(provider), await chunks(provider)]

        (first, failure), (second, again) = anyio.run(two_calls)
        assert failure is None and again is None
        assert first[0] == TextDelta("first") and not any(isinstance(c, Retrying) for c in first)
        assert first[-1] == StepDone(model="gpt-4.1-mini-2025-04-14")  # no usage: none was asked for
        assert second[0] == TextDelta("second")
        assert ["stream_options" in sent.body for sent in server.requests] == [True, False, False]

    def test_another_bad_request_is_not_asked_again(self, server: FakeModelServer) -> None:
        server.script(Status(400, openai_error(400, "Invalid value for 'temperature'")))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert out == [] and failure is not None and failure.status_code == 400
        assert len(server.requests) == 1


class TestFailures:
    def test_401_fails_at_once_with_the_servers_message_and_never_the_key(
        self, server: FakeModelServer
    ) -> None:
        echoed = f"Incorrect API key provided: {FAKE_KEY}. You can find your API key in your account."
        server.script(Status(401, openai_error(401, echoed)))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert out == []
        assert failure is not None and failure.status_code == 401
        assert "401 Unauthorized: Incorrect API key provided" in str(failure)
        assert FAKE_KEY not in str(failure)
        assert len(server.requests) == 1

    def test_429_with_retry_after_is_retried_after_that_wait_then_succeeds(
        self, server: FakeModelServer
    ) -> None:
        server.script(
            Status(429, openai_error(429, "Rate limit reached", "requests"), {"Retry-After": "0"}),
            Stream(openai_stream(["fine now"])),
        )
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert out[0] == Retrying(attempt=1, delay_ms=0, reason="429 Too Many Requests: Rate limit reached")
        assert out[1] == TextDelta("fine now")
        assert len(server.requests) == 2

    def test_a_429_for_a_spent_quota_ends_the_call_at_once_with_the_servers_words(
        self, server: FakeModelServer
    ) -> None:
        spent = openai_error(
            429, "You exceeded your current quota, please check your plan.", "insufficient_quota"
        )
        spent["error"]["code"] = "insufficient_quota"
        server.script(Status(429, spent), Stream(openai_stream(["never sent"])))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert out == []  # no retry: waiting does not refill a quota
        assert failure is not None and failure.status_code == 429
        assert "429 Too Many Requests: You exceeded your current quota" in str(failure)
        assert len(server.requests) == 1

    def test_a_retry_after_longer_than_the_policy_allows_ends_the_call_instead_of_hanging(
        self, server: FakeModelServer
    ) -> None:
        server.script(Status(429, openai_error(429, "Rate limit reached"), {"Retry-After": "3600"}))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert out == []
        assert failure is not None and "asks to wait 3600 s" in str(failure)

    def test_500_is_retried_until_the_retries_run_out(self, server: FakeModelServer) -> None:
        server.script(*[Status(500, openai_error(500, "The server had an error", "server_error"))] * 3)
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert [type(c) for c in out] == [Retrying, Retrying]
        assert [c.attempt for c in out] == [1, 2]
        assert failure is not None and "gave up after 2 retries" in str(failure)
        assert "The server had an error" in str(failure)
        assert len(server.requests) == FAST.retries + 1

    def test_a_connection_dropped_mid_stream_fails_without_a_retry(self, server: FakeModelServer) -> None:
        server.script(Stream(openai_stream(["one ", "two ", "three"]), drop_after=3))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert out == [TextDelta("one "), TextDelta("two ")]
        assert failure is not None and "after the answer had begun" in str(failure)
        assert len(server.requests) == 1

    def test_a_connection_dropped_before_any_content_is_retried(self, server: FakeModelServer) -> None:
        server.script(Stream(openai_stream(["x"]), drop_after=1), Stream(openai_stream(["again"])))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert isinstance(out[0], Retrying) and out[0].reason == "connection failed"
        assert out[1] == TextDelta("again")

    def test_a_malformed_chunk_fails_the_call(self, server: FakeModelServer) -> None:
        frames = openai_stream(["fine"])
        server.script(Stream([frames[0], frames[1], b"data: {not json at all\n\n", *frames[2:]]))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert out == [TextDelta("fine")]
        assert failure is not None and "malformed stream chunk" in str(failure)
        assert len(server.requests) == 1

    def test_a_refused_connection_is_retried_then_reported(self, server: FakeModelServer) -> None:
        closed = FakeModelServer()  # bound, then closed: nothing listens on its port
        url = closed.openai_url
        closed._httpd.server_close()
        policy = RetryPolicy(retries=1, base_delay_s=0.001, connect_timeout_s=2)
        out, failure = anyio.run(chunks, provider_for("openai", url, policy=policy))
        assert [c.reason for c in out] == ["connection failed"]
        assert failure is not None and "connection failed" in str(failure)

    def test_an_error_object_in_the_stream_is_the_servers_word_and_a_server_error_is_retried(
        self, server: FakeModelServer
    ) -> None:
        role = openai_stream(["x"])[0]
        error = sse(
            {"error": {"message": "The server had an error while processing", "type": "server_error"}}
        )
        server.script(Stream([role, error]), Stream(openai_stream(["ok"])))
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert failure is None
        assert isinstance(out[0], Retrying) and out[0].reason == "server error"
        server.script(
            Stream([role, sse({"error": {"message": "Invalid prompt", "type": "invalid_request_error"}})])
        )
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url))
        assert out == [] and failure is not None
        assert str(failure) == "openai reported an error: Invalid prompt"

    def test_a_stream_that_goes_silent_times_out(self, server: FakeModelServer) -> None:
        server.script(Stream(openai_stream(["never"]), hold_after=1))  # the role chunk, then nothing
        policy = RetryPolicy(retries=0, read_timeout_s=0.3)
        out, failure = anyio.run(chunks, provider_for("openai", server.openai_url, policy=policy))
        assert out == []
        assert failure is not None and "timed out" in str(failure)

    def test_a_key_that_the_reasons_cut_would_split_is_redacted_whole(self) -> None:
        key = "gw0123456789abcdefSECRET"  # not shaped like a key: only the exact match finds it

        class Unavailable(Exception):
            status_code = 503
            response = object()
            body = {"error": {"message": "z" * 183 + " " + key + " tail", "type": "server_error"}}

        failure = classify(Unavailable(), "openai", Redactor([key]))
        assert failure.retryable
        assert "gw0123" not in failure.reason and "gw0123" not in failure.message
        assert "[redacted]" in failure.message


class TestThroughTheEngine:
    def test_a_tool_using_turn_sends_the_result_back_under_the_models_call_id(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(
            Stream(openai_stream(["Looking."], [LIST_DIR], usage=(5000, 20, 0))),
            Stream(openai_stream(["It has README.md and src/."], usage=(400, 12, 256))),
        )
        result, events = play(prompt_run(tmp_path, "openai", server.openai_url))
        assert result.stop_reason == "final"
        assert chain_violations(events) == []
        requested = next(e for e in events if e.type == "model.tool_call_requested")
        assert requested.payload["toolCallId"] == "call_Lst8fJ2"
        assert requested.payload["args"] == {"path": "."}
        completed = next(e for e in events if e.type == "tool.completed")
        assert completed.payload["toolCallId"] == "call_Lst8fJ2"
        # The second request holds the assistant's call, then its result under the same id.
        second = server.requests[1].body["messages"]
        assistant = next(m for m in second if m["role"] == "assistant")
        assert assistant["content"] == "Looking."
        assert assistant["tool_calls"][0]["id"] == "call_Lst8fJ2"
        assert assistant["tool_calls"][0]["function"]["name"] == "list_dir"
        tool = next(m for m in second if m["role"] == "tool")
        assert tool["tool_call_id"] == "call_Lst8fJ2"
        assert "README.md" in tool["content"] and "src" in tool["content"]
        assert second.index(assistant) + 1 == second.index(tool)
        # The system prompt names the real directory; usage is summed over both calls.
        assert str(tmp_path / "project") in second[0]["content"]
        ended = events[-1]
        assert ended.type == "turn.completed"
        # gpt-4.1-mini at $0.40 input, $0.10 cached input, $1.60 output per million tokens:
        # (5000·0.4 + 20·1.6) + (144·0.4 + 256·0.1 + 12·1.6) = 2032 + 102.4 millionths of a dollar
        assert ended.payload["usage"] == {
            "promptTokens": 5400,
            "completionTokens": 32,
            "cachedTokens": 256,
            "costUsd": pytest.approx(0.0021344),
        }
        # The log names the model; the second preflight starts from the 5,000 tokens the server
        # counted for the first call (our estimate of that prompt is far smaller).
        created = events[0]
        assert (created.payload["provider"], created.payload["model"]) == ("openai", "test-model")
        built = [e.payload["tokens"] for e in events if e.type == "context.built"]
        assert sum(built[0].values()) < 5000 <= sum(built[1].values())

    def test_retries_are_stored_as_model_retry_events_before_the_first_delta(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(
            Status(429, openai_error(429, "Rate limit reached"), {"Retry-After": "0"}),
            Status(503, openai_error(503, "overloaded", "server_error")),
            Stream(openai_stream(["Done."])),
        )
        result, events = play(prompt_run(tmp_path, "openai", server.openai_url))
        assert result.stop_reason == "final"
        kinds = [e.type for e in events]
        retries = [e for e in events if e.type == "model.retry"]
        assert [(e.payload["attempt"], e.payload["reason"]) for e in retries] == [
            (1, "429 Too Many Requests: Rate limit reached"),
            (2, "503 Service Unavailable: overloaded"),
        ]
        assert retries[0].payload["delayMs"] == 0
        built = kinds.index("context.built")
        assert kinds[built + 1 : built + 4] == ["model.retry", "model.retry", "model.delta"]
        assert chain_violations(events) == []

    def test_401_ends_the_turn_provider_failure_with_the_servers_message(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(Status(401, openai_error(401, f"Incorrect API key provided: {FAKE_KEY}")))
        result, events = play(prompt_run(tmp_path, "openai", server.openai_url))
        ended = events[-1].payload
        assert (ended["stopReason"], ended["errorCode"]) == ("error", "provider_failure")
        assert "401 Unauthorized: Incorrect API key provided" in ended["message"]
        assert FAKE_KEY not in ended["message"]
        assert result.message == ended["message"]

    @pytest.mark.parametrize("cut", ["dropped", "malformed"])
    def test_a_stream_cut_or_malformed_mid_way_ends_provider_failure(
        self, server: FakeModelServer, tmp_path: Path, cut: str
    ) -> None:
        frames = openai_stream(["half ", "an answer"])
        if cut == "dropped":
            server.script(Stream(frames, drop_after=2))
        else:
            server.script(Stream([frames[0], frames[1], b"data: {oops\n\n"]))
        result, events = play(prompt_run(tmp_path, "openai", server.openai_url))
        assert (result.stop_reason, result.error_code) == ("error", "provider_failure")
        assert chain_violations(events) == []
        assert len(server.requests) == 1

    def test_an_unknown_tool_fails_not_found_and_the_turn_goes_on(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(
            Stream(openai_stream([], [("call_nope", "launch_rocket", ['{"to": "moon"}'])])),
            Stream(openai_stream(["I have no such tool."])),
        )
        result, events = play(prompt_run(tmp_path, "openai", server.openai_url))
        failed = next(e for e in events if e.type == "tool.failed")
        assert (failed.payload["tool"], failed.payload["errorCode"]) == ("launch_rocket", "not_found")
        assert result.stop_reason == "final"
        tool = next(m for m in server.requests[1].body["messages"] if m["role"] == "tool")
        assert tool["tool_call_id"] == failed.payload["toolCallId"]

    def test_a_model_that_keeps_calling_tools_ends_max_steps(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(
            *[Stream(openai_stream([], [(f"call_{n}", "list_dir", ['{"path": "."}'])])) for n in range(3)]
        )
        result, events = play(prompt_run(tmp_path, "openai", server.openai_url, max_steps=2))
        assert result.stop_reason == "max_steps"
        assert len(server.requests) == 2
        assert chain_violations(events) == []

    def test_cancel_closes_the_http_stream_and_the_server_sees_it(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        # The stream sends one delta, then stays open and silent (a slow model).
        server.script(Stream(openai_stream(["first ", "second ", "third"]), hold_after=2))
        events, saw_close = anyio.run(cancel_on_first_delta, server, "openai", server.openai_url, tmp_path)
        # Waited for while the provider's client is still open: only closing the stream can
        # have made the server see the connection go.
        assert saw_close, "the server did not see the client close the stream within 1 s"
        assert events[-1].type == "turn.completed"
        assert events[-1].payload["stopReason"] == "cancelled"
        assert [e.payload["text"] for e in events if e.type == "model.delta"] == ["first "]
        assert chain_violations(events) == []
