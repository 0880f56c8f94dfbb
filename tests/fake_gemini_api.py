"""The Gemini API's wire format, for a `FakeModelServer` that stands in for Google's model.

Gemini CLI (and the `@google/genai` SDK under it) calls
`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse` for every step of its chat
(its side questions, `:generateContent` and `:countTokens`, are turned off by the tests'
settings). The builders here give the frames of those answers as the SDK parses them:

- a stream is `data: {GenerateContentResponse}` frames without event names and without a
  `[DONE]` marker: each has `candidates[0].content` (`role: model`, `parts`), the text in
  `{text}` parts, a function call whole in one `{functionCall: {name, args}}` part (the API
  does not split a call's arguments across frames unless asked to), and the last frame carries the candidate's
  `finishReason` and the `usageMetadata` (`promptTokenCount` counts cached tokens too, as the
  API does; `cachedContentTokenCount` says how many of them were);
- a request's conversation is its `contents` (`role` `user` or `model`, `parts`); a tool's
  result comes back as a `functionResponse` part of a `user` content.

Nothing here reaches beyond the fake server: it only builds data and reads recorded requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_model_server import Recorded, sse

GEMINI_MODEL = "gemini-2.5-flash"
"""The model the tests configure; a concrete one, so Gemini CLI asks no router which to use."""

_RESPONSE_ID = "fake-gemini-0001"


def _frame(parts: list[dict[str, Any]], *, finish: str | None = None, usage: Any = None) -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    response: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": GEMINI_MODEL,
        "responseId": _RESPONSE_ID,
    }
    if usage is not None:
        response["usageMetadata"] = usage
    return sse(response)


def gemini_usage(prompt: int, output: int, cached: int = 0) -> dict[str, Any]:
    """`usageMetadata` of `prompt` input tokens (of which `cached` were cached) and `output` ones."""
    usage: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
    }
    if cached:
        usage["cachedContentTokenCount"] = cached
    return usage


def gemini_stream(
    texts: Sequence[str] = (),
    calls: Sequence[tuple[str, dict[str, Any]]] = (),
    *,
    usage: tuple[int, int, int] = (12, 5, 0),
) -> list[bytes]:
    """Frames of one answer: `texts` as text parts (one frame each), then `calls` (name, args),
    each a whole `functionCall` part of its own frame; the last frame ends the candidate `STOP`
    with the `usage` (prompt tokens including cached ones, output tokens, cached tokens)."""
    frames = [_frame([{"text": text}]) for text in texts]
    frames += [_frame([{"functionCall": {"name": name, "args": args}}]) for name, args in calls]
    frames.append(_frame([{"text": ""}], finish="STOP", usage=gemini_usage(*usage)))
    return frames


# -- reading recorded requests ---------------------------------------------------------------------


def method_of(recorded: Recorded) -> str:
    """The API method a request called: `streamGenerateContent`, `generateContent`,
    `countTokens`, … (the part of the path after the model's `:`), or "" for another path."""
    path = recorded.path.split("?", 1)[0]
    head, _, method = path.rpartition(":")
    return method if "/models/" in head else ""


def contents(recorded: Recorded) -> list[dict[str, Any]]:
    body = recorded.body if isinstance(recorded.body, dict) else {}
    return list(body.get("contents", []))


def user_texts(recorded: Recorded) -> list[str]:
    """The text parts of the request's `user` contents, in order (the prompts and context)."""
    return [
        part["text"]
        for content in contents(recorded)
        if content.get("role") == "user"
        for part in content.get("parts", [])
        if "text" in part
    ]


def function_responses(recorded: Recorded) -> list[dict[str, Any]]:
    """Every `functionResponse` the request carries (the tools' results, oldest first)."""
    return [
        part["functionResponse"]
        for content in contents(recorded)
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]


def answers_a_tool(recorded: Recorded) -> bool:
    """Whether the request's last content hands the model a tool's result (for `server.route`)."""
    history = contents(recorded)
    return (
        method_of(recorded) == "streamGenerateContent"
        and bool(history)
        and any("functionResponse" in part for part in history[-1].get("parts", []))
    )
