"""A session tree as JSON: the export's document, field for field, for other tools to read.

Invariants:
- the same fields the Markdown and HTML show, named as the log names its keys (`startedTs`), in a stable order (sessions, then their turns, then
  each turn's blocks in log order, every block tagged with its `kind`), children nested under
  their parent; a file tool's call carries its `diff` lines;
- the bytes hold no character a terminal obeys (`visible_json`), though they decode to exactly
  the log's text.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import orjson

from agent_tui.events import visible_json
from agent_tui.export.document import (
    Block,
    Compaction,
    Delivery,
    ExportedSession,
    ModelText,
    Retry,
    ToolCall,
    UserText,
)

__all__ = ["to_json"]

_KINDS: dict[type, str] = {
    UserText: "user",
    ModelText: "model",
    ToolCall: "tool",
    Delivery: "subagent",
    Compaction: "compaction",
    Retry: "retry",
}


def _camel(name: str) -> str:
    """`started_ts` → `startedTs`: the log's own key style."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _fields(record: dict[str, Any], leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    return {_camel(key): value for key, value in record.items() if key not in leave_out}


def _block(block: Block) -> dict[str, Any]:
    record = {"kind": _KINDS[type(block)], **_fields(asdict(block))}
    if isinstance(block, ToolCall):
        record["decisions"] = [_fields(decision) for decision in record["decisions"]]
        record["diff"] = block.diff
    return record


def _session(session: ExportedSession) -> dict[str, Any]:
    record = _fields(asdict(session), ("turns", "children"))
    record["turns"] = [
        {**_fields(asdict(turn), ("blocks",)), "blocks": [_block(block) for block in turn.blocks]}
        for turn in session.turns
    ]
    record["children"] = [_session(child) for child in session.children]
    return record


def to_json(roots: list[ExportedSession]) -> bytes:
    """The JSON document of these session trees: `{"sessions": [...]}`, indented."""
    data = orjson.dumps({"sessions": [_session(root) for root in roots]}, option=orjson.OPT_INDENT_2)
    return visible_json(data) + b"\n"
