"""Filtering the timeline: which events match `session:…`, `type:…`, `tool:…` and free text.

A query is words separated by spaces; every criterion must hold:
- `session:X`: the session's id starts with X, or its agent name or title contains X;
- `type:X`: the event type is X or starts with `X.` (`type:tool` is every `tool.*`; the
  scrubber's own kinds work too: `type:corrupt`);
- `tool:X`: the event names tool X (a call, its approval, its start, its end);
- any other words: the text (case-insensitive) appears in one of the payload's string values.

Session and type are answered from the timeline's per-event bytes without reading anything; tool
and text read the logs once, in order, test each line's bytes before decoding it, and decode only
the lines that might match. Matching never changes the timeline.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from agent_tui.replay.kinds import TYPE_OF_KIND, kinds_of_type
from agent_tui.replay.logfile import decode_trusted
from agent_tui.replay.timeline import Timeline

_TOOL_TYPES = (
    "model.tool_call_requested",
    "permission.requested",
    "tool.started",
    "tool.completed",
    "tool.failed",
)
_TOOL_CODES = frozenset().union(*(kinds_of_type(name) for name in _TOOL_TYPES))


@dataclass(frozen=True)
class Filter:
    """A parsed query (see the module docstring); `text` is lower-case."""

    query: str
    session: str | None = None
    type: str | None = None
    tool: str | None = None
    text: str | None = None

    @classmethod
    def parse(cls, query: str) -> Filter:
        fields: dict[str, str] = {}
        words = []
        for word in query.split():
            name, colon, value = word.partition(":")
            if colon and name.lower() in ("session", "type", "tool") and value:
                fields[name.lower()] = value
            else:
                words.append(word)
        text = " ".join(words).lower() or None
        return cls(query.strip(), fields.get("session"), fields.get("type"), fields.get("tool"), text)


def matching(
    timeline: Timeline,
    flt: Filter,
    start: int = 0,
    end: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> array[int]:
    """The indices of the events in `[start, end)` that match `flt`, in order."""
    with timeline.lock:
        end = timeline.total if end is None else min(end, timeline.total)
        kinds = bytes(timeline.kinds[:end])
        files = [file for file in timeline.files if _session_matches(file, flt.session)]
        file_ids = {file.file_id for file in files}
        codes = kinds_of_type(flt.type) if flt.type else None
        if flt.tool:
            codes = _TOOL_CODES if codes is None else codes & _TOOL_CODES
        if not flt.tool and not flt.text:
            file_of = timeline.file_of
            found = array("I")
            for index in range(start, end):
                if (codes is None or kinds[index] in codes) and file_of[index] in file_ids:
                    found.append(index)
            return found
        plan = [(file, array("I", timeline.positions_of(file.file_id, end))) for file in files]
    return _scan(plan, kinds, codes, flt, start, progress)


def _scan(
    plan: list[tuple[Any, array[int]]],
    kinds: bytes,
    codes: frozenset[int] | None,
    flt: Filter,
    start: int,
    progress: Callable[[int, int], None] | None,
) -> array[int]:
    """The events of `plan` (files, with the event index of each of their lines) whose lines
    match `flt`'s tool or text, read from disk."""
    hits: list[int] = []
    done = 0
    total = sum(len(positions) for _file, positions in plan)
    for file, positions in plan:
        for line_number, line in enumerate(file.iter_lines_at(0, len(positions))):
            index = positions[line_number]
            done += 1
            if progress is not None and done % 50_000 == 0:
                progress(done, total)
            if index < start or (codes is not None and kinds[index] not in codes):
                continue
            if TYPE_OF_KIND[kinds[index]] == "corrupt":
                if flt.text and flt.text in line.decode("utf-8", "replace").lower():
                    hits.append(index)
                continue
            if _line_matches(line, flt):
                hits.append(index)
    hits.sort()
    return array("I", hits)


def _session_matches(file: Any, wanted: str | None) -> bool:
    if wanted is None:
        return True
    wanted = wanted.lower()
    names = [file.agent_name, file.title]
    return (file.session_id or "").lower().startswith(wanted) or any(
        name is not None and wanted in name.lower() for name in names
    )


def _line_matches(line: bytes, flt: Filter) -> bool:
    lowered = line.lower()
    if flt.tool is not None and orjson.dumps(flt.tool.lower())[1:-1] not in lowered:
        return False
    if flt.text is not None and orjson.dumps(flt.text)[1:-1] not in lowered:
        return False
    event = decode_trusted(line)
    if event is None:
        return False
    payload = event.payload
    if flt.tool is not None and str(payload.get("tool", "")).lower() != flt.tool.lower():
        return False
    return flt.text is None or any(flt.text in value.lower() for value in _strings(payload))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
