"""A real HTTP server on 127.0.0.1 that answers like OpenAI's and Anthropic's streaming APIs.

Tests script its replies in order (`server.script(...)`), or for the requests a test picks
(`server.route(when, ...)`: replies for one agent of many that run at once): a stream of SSE frames (optionally
dropped mid-way, or held open until the client goes away), or an error status with a JSON body
and headers. Every request is recorded (path, headers, JSON body), so a test can check what the
adapter sent. The frames follow the vendors' wire formats as their SDKs parse them:

- OpenAI Chat Completions: `data: {chat.completion.chunk}` frames, the first delta carrying the
  role, a tool call's first piece carrying its `index`, `id`, `type` and `function.name` and
  later pieces only `index` and `function.arguments`; the finish chunk with `finish_reason`;
  with `stream_options.include_usage` a last chunk with empty `choices` and the `usage`
  (`prompt_tokens_details.cached_tokens`); then `data: [DONE]`;
- Anthropic Messages: named events `message_start` (with the input usage), per block
  `content_block_start` / `content_block_delta` (`text_delta` or `input_json_delta`, the first
  one empty as the API sends it) / `content_block_stop`, `ping`s, `message_delta` (stop reason
  and output usage), `message_stop`.

Responses are sent with chunked transfer encoding, so a dropped stream is a real protocol error
for the client, and a held stream notices the client closing its connection (`disconnected`).
"""

from __future__ import annotations

import json
import select
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# -- replies ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """An HTTP error (or any non-stream answer) with a JSON body."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Stream:
    """An SSE stream. `drop_after`: close the connection after that many frames, unfinished.
    `hold_after`: after that many frames, keep the stream open until the client disconnects.
    `gate`: answer only once the test sets it (the request waits, as on a slow model)."""

    frames: list[bytes]
    drop_after: int | None = None
    hold_after: int | None = None
    gate: threading.Event | None = None


@dataclass(frozen=True)
class Body:
    """A plain (not streamed) 200 answer: JSON, or `text` with its content type (a GET of a
    model list, a non-streaming completion)."""

    body: Any
    content_type: str = "application/json"


Reply = Status | Stream | Body


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any
    method: str = "POST"


def sse(data: Any, event: str | None = None) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


# -- the server ------------------------------------------------------------------------------------


class FakeModelServer:
    """Use as a context manager; `openai_url` / `anthropic_url` are the base URLs to give an SDK."""

    def __init__(self) -> None:
        self._replies: list[Reply] = []
        self._routes: list[tuple[Callable[[Recorded], bool], list[Reply]]] = []
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self.disconnected = threading.Event()
        self.holding = threading.Event()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def route(self, when: Callable[[Recorded], bool], *replies: Reply) -> None:
        """Answer the requests `when` picks with `replies`, in order (before the script's)."""
        with self._lock:
            self._routes.append((when, list(replies)))

    def next_reply(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            for when, replies in self._routes:
                if replies and when(recorded):
                    return replies.pop(0)
            if not self._replies:
                return Status(500, {"error": {"message": "the test scripted no reply for this request"}})
            return self._replies.pop(0)

    def __enter__(self) -> FakeModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_POST(self) -> None:
            self._answer("POST")

        def do_GET(self) -> None:
            self._answer("GET")

        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = server.next_reply(Recorded(self.path, headers, body, method))
            try:
                if isinstance(reply, Body):
                    self._status(Status(200, reply.body, {}), reply.content_type)
                elif isinstance(reply, Status):
                    self._status(reply)
                else:
                    self._stream(reply)
            except OSError:  # the client went away first (it gave up on a bad stream): fine
                self.close_connection = True

        def _status(self, reply: Status, content_type: str = "application/json") -> None:
            body = reply.body
            data = (
                body.encode()
                if isinstance(body, str) and content_type != "application/json"
                else json.dumps(body).encode()
            )
            self.send_response(reply.status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, reply: Stream) -> None:
            while reply.gate is not None and not reply.gate.wait(0.02):
                if server._stopping.is_set():
                    return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for index, frame in enumerate(reply.frames):
                if reply.drop_after is not None and index == reply.drop_after:
                    self._drop()
                    return
                if reply.hold_after is not None and index == reply.hold_after:
                    self._hold()
                    return
                self._chunk(frame)
            if reply.hold_after is not None and reply.hold_after >= len(reply.frames):
                self._hold()
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _drop(self) -> None:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def _hold(self) -> None:
            """Keep the stream open; the client closing its end makes the socket readable (EOF)."""
            self.close_connection = True
            server.holding.set()
            sock = self.connection
            while not server._stopping.is_set():
                readable, _, _ = select.select([sock], [], [], 0.02)
                if not readable:
                    continue
                try:
                    data = sock.recv(1024, socket.MSG_PEEK)
                except OSError:
                    data = b""
                if not data:
                    server.disconnected.set()
                    return
                sock.recv(len(data))  # something the client sent (nothing expected): drop it

        def finish(self) -> None:
            try:
                super().finish()
            except OSError:
                pass

    return Handler


# -- OpenAI Chat Completions frames ----------------------------------------------------------------

OPENAI_MODEL = "gpt-4.1-mini-2025-04-14"


def _openai_chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> bytes:
    choices = (
        [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    )
    return sse(
        {
            "id": "chatcmpl-fake0001",
            "object": "chat.completion.chunk",
            "created": 1_745_678_496,
            "model": OPENAI_MODEL,
            "service_tier": "default",
            "system_fingerprint": "fp_fake",
            "choices": choices,
            "usage": usage,
        }
    )


def openai_usage(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def openai_stream(
    texts: list[str] = (),  # type: ignore[assignment]
    calls: list[tuple[str, str, list[str]]] = (),  # type: ignore[assignment]
    *,
    usage: tuple[int, int, int] | None = (12, 5, 0),
    interleave: bool = False,
) -> list[bytes]:
    """Frames of one answer: `texts` as content deltas, then `calls` (id, name, argument pieces).

    `interleave`: the calls' argument pieces alternate between calls (some servers do this);
    otherwise each call streams whole before the next, as OpenAI does.
    """
    frames = [_openai_chunk({"role": "assistant", "content": "" if texts else None, "refusal": None})]
    frames += [_openai_chunk({"content": text}) for text in texts]
    headers = [
        _openai_chunk(
            {
                "tool_calls": [
                    {"index": i, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
                ]
            }
        )
        for i, (cid, name, _) in enumerate(calls)
    ]
    pieces = [
        [_openai_chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}) for piece in args]
        for i, (_, _, args) in enumerate(calls)
    ]
    if interleave:
        frames += headers
        longest = max((len(p) for p in pieces), default=0)
        frames += [p[n] for n in range(longest) for p in pieces if n < len(p)]
    else:
        for header, own in zip(headers, pieces, strict=True):
            frames += [header, *own]
    frames.append(_openai_chunk({}, finish="tool_calls" if calls else "stop"))
    if usage is not None:
        frames.append(_openai_chunk(None, usage=openai_usage(*usage)))
    frames.append(sse("[DONE]"))
    return frames


def openai_error(status: int, message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


# -- Anthropic Messages frames ---------------------------------------------------------------------

ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"


def anthropic_stream(
    texts: list[str] = (),  # type: ignore[assignment]
    calls: list[tuple[str, str, list[str]]] = (),  # type: ignore[assignment]
    *,
    usage: tuple[int, ...] = (20, 7, 0),
) -> list[bytes]:
    """Frames of one message: a text block of `texts`, then a `tool_use` block per call.

    `usage` is (uncached input, output, cache reads[, cache writes]) tokens."""
    prompt, completion, cached = usage[:3]
    written = usage[3] if len(usage) > 3 else 0
    frames = [
        sse(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake0001",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": ANTHROPIC_MODEL,
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": prompt,
                        "cache_creation_input_tokens": written,
                        "cache_read_input_tokens": cached,
                        "output_tokens": 1,
                    },
                },
            },
            "message_start",
        )
    ]
    index = 0
    if texts:
        frames.append(
            sse(
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                "content_block_start",
            )
        )
        frames.append(sse({"type": "ping"}, "ping"))
        for text in texts:
            frames.append(
                sse(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": text},
                    },
                    "content_block_delta",
                )
            )
        frames.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        index = 1
    for offset, (cid, name, pieces) in enumerate(calls):
        block = index + offset
        frames.append(
            sse(
                {
                    "type": "content_block_start",
                    "index": block,
                    "content_block": {"type": "tool_use", "id": cid, "name": name, "input": {}},
                },
                "content_block_start",
            )
        )
        for piece in ["", *pieces]:
            frames.append(
                sse(
                    {
                        "type": "content_block_delta",
                        "index": block,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                    "content_block_delta",
                )
            )
        frames.append(sse({"type": "content_block_stop", "index": block}, "content_block_stop"))
    frames.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": completion},
            },
            "message_delta",
        )
    )
    frames.append(sse({"type": "message_stop"}, "message_stop"))
    return frames


def anthropic_error(message: str, kind: str = "authentication_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


# -- either vendor -----------------------------------------------------------------------------------

VENDORS = ("openai", "anthropic")


def vendor_stream(
    vendor: str,
    texts: list[str] = (),  # type: ignore[assignment]
    calls: list[tuple[str, str, list[str]]] = (),  # type: ignore[assignment]
    *,
    usage: tuple[int, int, int] = (12, 5, 0),
) -> list[bytes]:
    """Frames of one answer in `vendor`'s wire format, its usage given the same way for both:
    (uncached prompt, output, cache reads) tokens, which each vendor reports its own way
    (OpenAI counts the cached prompt tokens inside `prompt_tokens`, Anthropic apart)."""
    fresh, output, cached = usage
    if vendor == "openai":
        return openai_stream(texts, calls, usage=(fresh + cached, output, cached))
    if vendor == "anthropic":
        return anthropic_stream(texts, calls, usage=(fresh, output, cached))
    raise ValueError(f"unknown vendor {vendor!r}")


def first_user_text(recorded: Recorded) -> str:
    """The text of a request's first user message, in either vendor's format (an agent's task)."""
    users = [m for m in recorded.body.get("messages", []) if m.get("role") == "user"]
    if not users:
        return ""
    content = users[0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


def asked(prompt: str) -> Callable[[Recorded], bool]:
    """Picks the requests of the agent whose first prompt was `prompt` (for `server.route`)."""
    return lambda recorded: first_user_text(recorded) == prompt
