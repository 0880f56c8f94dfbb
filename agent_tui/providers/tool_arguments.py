"""A model's tool-call arguments, from the JSON text it streamed to the mapping the engine stores.

Arguments that are not a JSON object are not a provider failure but a mistake of the model: they
reach the engine as `{"arguments_not_json": text}`, which every tool's schema refuses, so the
model reads why its call failed and can try again while the turn goes on. So do arguments
nested deeper than `MAX_DEPTH`, and anything a log line could not hold: they are read as the log
writes them (orjson), so `NaN`, `1e400` and a lone surrogate escape are not JSON, and an integer
past 64 bits is read as a float (which a tool's integer field refuses).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from agent_tui.events.json_depth import nested_deeper

NOT_JSON = "arguments_not_json"
_KEPT = 2_000


def parse_arguments(text: str) -> Mapping[str, Any]:
    """The JSON object the model sent; `{}` for nothing at all."""
    if not text.strip():
        return {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, dict) and not nested_deeper(value):
        return value
    return {NOT_JSON: text[:_KEPT]}
