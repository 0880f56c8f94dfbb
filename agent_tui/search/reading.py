"""Reading one log's lines for the search index: the rows they give, what they spent, their
session's names, and where an answer still open starts.

Invariants:
- a line that is not JSON or not an event is counted corrupt (`first_corrupt` is the first
  one's 1-based number) and gives nothing else;
- a line is folded into `spend` only from `spend_from` on: a log read again from where an open
  answer started was folded to its end before, and no line is folded twice;
- the names are read from line 0 alone, when it is the `session.created`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

import orjson

from agent_tui.reducer.earlier_spend import EARLIER_TYPES
from agent_tui.search.extract import NotAnEvent, Row, RowBuilder
from agent_tui.search.spend import LogSpend

READ_CHUNK = 8 << 20


@dataclass
class LogReading:
    """Where the reading of one log is (the line `line` starts at byte `offset`), and what its
    lines said so far."""

    file_id: int
    offset: int
    line: int
    corrupt: int
    first_corrupt: int | None = None
    names: tuple[object, object, object] = (None, None, None)
    """The session id, agent name and title its first line gave."""
    spend: LogSpend = field(default_factory=LogSpend)
    spend_from: int = 0
    """Lines from here on are not in `spend` yet (a log read again from where an open answer
    started was folded up to its end before)."""
    pending: tuple[int, int, int] = (0, 0, 0)
    """Where the answer still open starts: (byte offset, line, corrupt lines before it)."""

    def __post_init__(self) -> None:
        self.pending = (self.offset, self.line, self.corrupt)

    def read(
        self, handle: BinaryIO, size: int, builder: RowBuilder, insert: Callable[[list[Row]], None]
    ) -> tuple[int, int]:
        """Read the log open as `handle` from `offset` to its last complete line before `size`,
        handing its rows to `insert` a chunk at a time; how many rows, and bytes read."""
        handle.seek(self.offset)
        remaining = read = size - self.offset
        carry = b""
        count = 0
        while remaining > 0:
            chunk = handle.read(min(READ_CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            parts = (carry + chunk if carry else chunk).split(b"\n")
            carry = parts.pop()
            rows = self.lines(parts, builder)
            insert(rows)
            count += len(rows)
        if builder.pending_line is None:
            self.pending = (self.offset, self.line, self.corrupt)
        else:
            self.pending = (self.pending[0], builder.pending_line, self.pending[2])
        rows = builder.flush()
        insert(rows)
        return count + len(rows), read - remaining

    def lines(self, parts: list[bytes], builder: RowBuilder) -> list[Row]:
        """Read whole lines (without their newlines); the rows they give."""
        rows: list[Row] = []
        add, loads = builder.add, orjson.loads
        spend, spend_from = self.spend, self.spend_from
        line, offset = self.line, self.offset  # (kept here, written back at the end: the loop is hot)
        try:
            for raw in parts:
                try:
                    event = loads(raw)
                    found = add(line, event)
                    if found:
                        rows += found
                    kind = event["type"]  # (hashable: `add` looked it up)
                    if kind in EARLIER_TYPES and offset >= spend_from:
                        spend.add(event)
                    if line == 0 and kind == "session.created":
                        created = event.get("payload") or {}
                        self.names = (event.get("sessionId"), created.get("agentName"), created.get("title"))
                except (orjson.JSONDecodeError, NotAnEvent, AttributeError, TypeError):
                    self.corrupt += 1
                    if self.first_corrupt is None:
                        self.first_corrupt = line + 1
                if builder.pending_line == line:
                    self.pending = (offset, line, self.corrupt)
                offset += len(raw) + 1
                line += 1
        finally:
            self.line, self.offset = line, offset
        return rows
