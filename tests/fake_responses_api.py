"""OpenAI Responses API frames for `FakeModelServer` (`POST /v1/responses`), as Codex parses them.

One answer is one stream of named SSE events, each `data` an object whose `type` repeats the
event's name and whose `sequence_number` counts from 0:

- `response.created` (the response, `status: in_progress`, no output yet);
- per output item, in order: `response.output_item.added` (a `message` with empty content, or a
  `function_call` with empty `arguments`), its deltas (`response.content_part.added`,
  `response.output_text.delta`..., `response.output_text.done`, `response.content_part.done`;
  or `response.function_call_arguments.delta`..., `response.function_call_arguments.done`),
  then `response.output_item.done` with the whole item;
- `response.completed` with every item and the `usage` (`input_tokens` counts the cached
  ones, which `input_tokens_details.cached_tokens` repeats).

A request's own input is read back with `input_items` (what the client sent, in order) and
`function_outputs` (the results of earlier calls), so a script can route on them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_model_server import Recorded, sse

RESPONSES_MODEL = "gpt-5.3-codex"


class _Frames:
    """Numbers the events of one stream as the API does."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def add(self, kind: str, **data: Any) -> None:
        self.frames.append(sse({"type": kind, "sequence_number": len(self.frames), **data}, kind))


def responses_usage(prompt: int, output: int, cached: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + output,
    }


def _response(status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": "resp_fake0001",
        "object": "response",
        "created_at": 1_745_678_496,
        "status": status,
        "model": RESPONSES_MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "usage": usage,
    }


def responses_stream(
    texts: list[str] = (),  # type: ignore[assignment]
    calls: list[tuple[str, str, list[str]]] = (),  # type: ignore[assignment]
    *,
    usage: tuple[int, int, int] = (12, 5, 0),
) -> list[bytes]:
    """Frames of one answer: a message of `texts` (when any), then a `function_call` per call
    (call id, tool name, argument pieces that join to its JSON arguments).

    `usage` is (prompt tokens including the cached ones, output tokens, cached tokens)."""
    out = _Frames()
    out.add("response.created", response=_response("in_progress", [], None))
    items: list[dict[str, Any]] = []
    if texts:
        index, item_id, text = len(items), "msg_fake0001", "".join(texts)
        at = {"item_id": item_id, "output_index": index, "content_index": 0}
        part = {"type": "output_text", "text": "", "annotations": []}
        added = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress"}
        out.add("response.output_item.added", output_index=index, item={**added, "content": []})
        out.add("response.content_part.added", **at, part=part)
        for piece in texts:
            out.add("response.output_text.delta", **at, delta=piece)
        out.add("response.output_text.done", **at, text=text)
        whole = {**part, "text": text}
        out.add("response.content_part.done", **at, part=whole)
        item = {**added, "status": "completed", "content": [whole]}
        out.add("response.output_item.done", output_index=index, item=item)
        items.append(item)
    for call_id, name, pieces in calls:
        index, item_id = len(items), f"fc_{call_id}"
        added = {
            "type": "function_call",
            "id": item_id,
            "call_id": call_id,
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        out.add("response.output_item.added", output_index=index, item=added)
        at = {"item_id": item_id, "output_index": index}
        for piece in pieces:
            out.add("response.function_call_arguments.delta", **at, delta=piece)
        arguments = "".join(pieces)
        out.add("response.function_call_arguments.done", **at, arguments=arguments)
        item = {**added, "arguments": arguments, "status": "completed"}
        out.add("response.output_item.done", output_index=index, item=item)
        items.append(item)
    out.add("response.completed", response=_response("completed", items, responses_usage(*usage)))
    return out.frames


# -- reading a request back ------------------------------------------------------------------------


def input_items(recorded: Recorded) -> list[dict[str, Any]]:
    """The `input` items of a Responses request (empty for any other request)."""
    body = recorded.body if isinstance(recorded.body, dict) else {}
    return list(body.get("input") or [])


def function_outputs(recorded: Recorded) -> dict[str, str]:
    """call id → the output the client sent back for it (its text, whatever shape it came in)."""
    outputs: dict[str, str] = {}
    for item in input_items(recorded):
        if item.get("type") != "function_call_output":
            continue
        output = item.get("output")
        if isinstance(output, list):
            output = "".join(part.get("text", "") for part in output if isinstance(part, dict))
        elif not isinstance(output, str):
            output = json.dumps(output)
        outputs[item["call_id"]] = output
    return outputs


def user_texts(recorded: Recorded) -> list[str]:
    """The text of each user message of a request's input, in order (the client's own context
    messages included)."""
    texts = []
    for item in input_items(recorded):
        if item.get("type", "message") == "message" and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                texts.append(content)
            else:
                texts.append(
                    "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
                )
    return texts


def answers_call(call_id: str) -> Callable[[Recorded], bool]:
    """Picks the request that hands call `call_id`'s output back (for `server.route`): the output
    is in its input with no user or assistant message after it (later requests carry it too, in
    their history; the client may add its own developer notes after it)."""

    def when(recorded: Recorded) -> bool:
        items = input_items(recorded)
        outputs = [
            n
            for n, item in enumerate(items)
            if item.get("type") == "function_call_output" and item.get("call_id") == call_id
        ]
        if not outputs:
            return False
        later = items[outputs[-1] + 1 :]
        return not any(item.get("role") in ("user", "assistant") for item in later)

    return when
