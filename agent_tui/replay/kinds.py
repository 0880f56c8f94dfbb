"""What the timeline remembers about each event without keeping it: one byte, its kind.

A kind is the event type, refined where the scrubber marks or jumps differ within one type (an
`ask`, a turn that ended in an error, a denied call), plus one kind for a line that is not a
usable event. Marks group kinds into what the scrubber bar shows and the jump keys reach:
turn starts, compressions, approvals, and failures (an error turn, a failed tool, a corrupt
line).

Invariants:
- every kind fits in one byte and maps back to exactly one event type (or `CORRUPT`);
- `kind_of(event)` depends on the event alone, so the same log always gives the same kinds.
"""

from __future__ import annotations

from typing import Literal

from agent_tui.events import EVENT_TYPES, Event
from agent_tui.events.turn_vocabulary import ending_for

Mark = Literal["turn", "compress", "approval", "failure"]
MARKS: tuple[Mark, ...] = ("turn", "compress", "approval", "failure")

CORRUPT_TYPE = "corrupt"
"""The type name of a line that is not a usable event (shown as `FILE:LINE: reason`)."""

_REFINED = ("permission.resolved:ask", "turn.completed:error", "tool.failed:denied")
KIND_NAMES: tuple[str, ...] = (CORRUPT_TYPE, *EVENT_TYPES, *_REFINED)
"""Kind code → name; a refined kind is `type:refinement`."""

CORRUPT = 0
_CODE = {name: code for code, name in enumerate(KIND_NAMES)}
_ASK = _CODE["permission.resolved:ask"]
_ERROR_END = _CODE["turn.completed:error"]
_DENIED = _CODE["tool.failed:denied"]
_RESOLVED = _CODE["permission.resolved"]
_COMPLETED = _CODE["turn.completed"]
_FAILED = _CODE["tool.failed"]
UNKNOWN = len(KIND_NAMES)
"""The kind of an event whose type this version does not know (never a mark)."""

TYPE_OF_KIND: tuple[str, ...] = (*(name.split(":")[0] for name in KIND_NAMES), "unknown")
"""Kind code → event type (`corrupt` for a corrupt line)."""

MARK_OF_KIND: dict[int, Mark] = {
    _CODE["turn.started"]: "turn",
    _CODE["context.compacted"]: "compress",
    _ASK: "approval",
    _ERROR_END: "failure",
    _FAILED: "failure",
    CORRUPT: "failure",
}
"""Kinds that the scrubber marks; a denied call is not a failure (the user said no)."""


def kind_of(event: Event) -> int:
    """The kind code of a decoded event."""
    code = _CODE.get(event.type, UNKNOWN)
    if code == _RESOLVED:
        return _ASK if event.payload["decision"] == "ask" else code
    if code == _COMPLETED:
        return _ERROR_END if ending_for(event.payload["stopReason"]).failed else code
    if code == _FAILED:
        return _DENIED if event.payload["errorCode"] == "permission_denied" else code
    return code


def kinds_of_type(prefix: str) -> frozenset[int]:
    """Kind codes whose event type is `prefix` or starts with `prefix.` (`tool` → every `tool.*`)."""
    prefix = prefix.strip().lower()
    return frozenset(
        code
        for code, name in enumerate(TYPE_OF_KIND)
        if name == prefix
        or name.startswith(prefix + ".")
        or (prefix.endswith(".") and name.startswith(prefix))
    )
