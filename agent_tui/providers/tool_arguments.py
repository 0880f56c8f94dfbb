"""A model's tool-call arguments, from the JSON text it streamed to the mapping the engine stores.

Arguments that are not a JSON object are not a provider failure but a mistake of the model: they
reach the engine as `{"arguments_not_json": text}`, which every tool's schema refuses, so the
model reads why its call failed and can try again while the turn goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

NOT_JSON = "arguments_not_json"
_KEPT = 2_000


def parse_arguments(text: str) -> Mapping[str, Any]:
    """The JSON object the model sent; `{}` for nothing at all."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    return {NOT_JSON: text[:_KEPT]}
