"""Which text of a log is searchable, and as what: one row per prompt, answer, call, output.

A log line is read as a plain dict (no schema validation: the index must keep pace with
`orjson.loads`); what it says becomes at most one row:

| kind | from |
|---|---|
| `prompt` | `user.message` content |
| `answer` | a run of consecutive `model.delta` texts (one model reply), at the run's first line |
| `command` | `model.tool_call_requested`: the tool and its arguments (a shell command, file paths) |
| `output` | `tool.completed` result, `tool.failed` message |
| `agent` | `subagent.delivered`: what a sub-agent reported |
| `summary` | `context.compacted` summary |
| `error` | `turn.completed` message (a turn that failed) |

Invariants:
- a row names the line its text starts on (0-based, in the file) and the event's sequence and
  turn, so a hit can be opened at that event;
- an answer is one row however many deltas it streamed in, so a word split between two deltas
  is found; while the log may still grow, the open answer is kept `pending`, and the caller
  indexes it again from its first line when more lines come;
- a line that is JSON but not an event's shape (not an object; no `type`, `payload` object or
  integer `sequence`; a `turnId` that is not a string) raises `NotAnEvent`, which the caller
  counts as corrupt; an event type that holds no searchable text yields nothing;
- every value in a row is a `str` or an `int` that fits SQLite, whatever the line held.
"""

from __future__ import annotations

from typing import Any

Row = tuple[int, int, str, str, str]
"""One searchable text of a log: (rowid, sequence, turn id, kind, text); the rowid is the
builder's `base` plus the line the text starts on."""

_TEXT_OF: dict[str, tuple[str, str]] = {
    "user.message": ("prompt", "content"),
    "tool.completed": ("output", "result"),
    "tool.failed": ("output", "message"),
    "subagent.delivered": ("agent", "text"),
    "context.compacted": ("summary", "summary"),
    "turn.completed": ("error", "message"),
}
"""The event types whose payload holds one searchable text: (row kind, payload field)."""
_NOTHING: list[Row] = []
MAX_SEQUENCE = 1 << 62
"""A sequence beyond this is no event's (and would not fit SQLite's integers)."""


class NotAnEvent(ValueError):
    """A JSON line without an event's shape (`type`, `sequence`, `payload`)."""


def _args_text(tool: str, args: Any) -> str:
    if not isinstance(args, dict):
        return tool
    parts = [tool]
    for value in args.values():
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            parts.append(str(value))
    return " ".join(parts)


class RowBuilder:
    """Turns one log's events, in order, into rows (`add`); `flush` ends the open answer.

    Args:
        base: added to a row's line to make its rowid.
    """

    def __init__(self, base: int = 0) -> None:
        self.base = base
        self.pending_line: int | None = None
        """The first line of the open answer (None: no answer is open)."""
        self._pending_sequence = 0
        self._pending_turn = ""
        self._pending_parts: list[str] = []

    def add(self, line: int, event: Any) -> list[Row]:
        """The rows that `event` (line `line`) completes (do not keep the list: it may be shared).

        Raises:
            NotAnEvent: the line is not an event's shape.
        """
        try:
            kind = event["type"]
            payload = event["payload"]
            sequence = event["sequence"]
            turn = event.get("turnId") or ""
        except (TypeError, KeyError, IndexError, AttributeError):
            raise NotAnEvent("not an event (type, sequence and payload are needed)") from None
        if (
            not isinstance(payload, dict)
            or not isinstance(sequence, int)
            or not 0 <= sequence < MAX_SEQUENCE
            or not isinstance(turn, str)
        ):
            raise NotAnEvent("not an event (type, sequence and payload are needed)")
        if kind == "model.delta":
            text = payload.get("text")
            if isinstance(text, str):
                if self.pending_line is None or turn != self._pending_turn:
                    rows = self.flush()
                    self.pending_line, self._pending_sequence, self._pending_turn = line, sequence, turn
                    self._pending_parts.append(text)
                    return rows
                self._pending_parts.append(text)
            return _NOTHING
        field = _TEXT_OF.get(kind)
        if field is not None:
            row_kind, text = field[0], payload.get(field[1])
        elif kind == "model.tool_call_requested":
            tool = payload.get("tool")
            row_kind = "command"
            text = _args_text(tool, payload.get("args")) if isinstance(tool, str) else None
        else:
            return self.flush() if self.pending_line is not None else _NOTHING
        rows = self.flush() if self.pending_line is not None else []
        if isinstance(text, str) and text:
            rows.append((self.base + line, sequence, turn, row_kind, text))
        return rows

    def flush(self) -> list[Row]:
        """The open answer as a row (if one is open), which closes it."""
        if self.pending_line is None:
            return []
        text = "".join(self._pending_parts)
        row = (self.base + self.pending_line, self._pending_sequence, self._pending_turn, "answer", text)
        self.pending_line = None
        self._pending_parts = []
        return [row] if text else []
