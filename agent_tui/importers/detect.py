"""Which tool wrote a JSONL file: ours, Claude Code or Codex, told by content, not by name.

`detect_format(path)` reads lines from the start (at most `SNIFF_LINES` lines, `SNIFF_BYTES`
bytes) and decides on the first line that is telling: an event of our schema; a Codex rollout line (`session_meta`,
`response_item`, … with a `payload`, or the first releases' header and bare items); a Claude
Code record (`user`, `assistant`, `summary`, … with Claude Code's envelope fields). It never
raises for content: an unreadable, empty or unknown file gives None.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import orjson

from agent_tui.events.model import EVENT_TYPES
from agent_tui.importers.claude_code_words import KNOWN_RECORDS
from agent_tui.importers.codex_words import KEPT_LINES

Format = Literal["agent-tui", "claude-code", "codex"]
SNIFF_BYTES = 256 * 1024
SNIFF_LINES = 50

_OURS = frozenset(EVENT_TYPES)
_CODEX_ENVELOPE = (
    frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"}) | KEPT_LINES
)
_CODEX_ITEMS = frozenset(
    {"message", "reasoning", "function_call", "function_call_output", "local_shell_call"}
)
_CLAUDE_TYPES = frozenset({"user", "assistant", "system"}) | KNOWN_RECORDS
_CLAUDE_KEYS = ("sessionId", "uuid", "leafUuid", "messageId", "parentUuid")


def format_of_record(data: Any, first: bool) -> Format | None:
    """The format one decoded line shows (None when it does not tell)."""
    if type(data) is not dict:
        return None
    kind = data.get("type")
    if kind is not None and type(kind) is not str:  # a type that is not a name tells nothing
        return None
    if kind in _OURS and "sequence" in data and "payload" in data and "sessionId" in data:
        return "agent-tui"
    if kind in _CODEX_ENVELOPE and "payload" in data:
        return "codex"
    if first and kind is None and "id" in data and "timestamp" in data:
        return "codex"  # the first releases' header line
    if (kind in _CODEX_ITEMS and "role" in data) or "record_type" in data:
        return "codex"
    if kind in _CLAUDE_TYPES and any(key in data for key in _CLAUDE_KEYS):
        return "claude-code"
    return None


def detect_format(path: Path) -> Format | None:
    """The format of the log at `path`, or None (not a log we know, empty, or unreadable)."""
    try:
        with path.open("rb") as handle:
            budget = SNIFF_BYTES
            for number in range(SNIFF_LINES):  # most logs tell on their first line: read no more
                line = handle.readline(budget)
                budget -= len(line)
                if not line or (budget <= 0 and not line.endswith(b"\n")):
                    return None
                if not line.strip():
                    continue
                try:
                    data = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if (found := format_of_record(data, first=number == 0)) is not None:
                    return found
    except OSError:
        return None
    return None
