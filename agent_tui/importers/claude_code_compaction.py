"""Claude Code's compactions: a `system` `compact_boundary` line and the summary line after it
become one `context.compacted`.

Used by the Claude Code importer (`claude_code.py`), which hands it those two kinds of line and
tells it when any other line comes. Invariants:
- a boundary waits for the next line of the file: when that is the summary line (a user line
  with `isCompactSummary`) of the same session, the pair is one `context.compacted` carrying the
  summary's text; when anything else comes first, or the file ends, the boundary is
  `context.compacted` alone, with an empty summary;
- a summary line with no boundary of its session waiting is kept as a `source.record`
  (`user.compact_summary`);
- outside any turn nothing is compacted: the boundary and its summary line are kept as they came
  (`system.compact_boundary`, `user.compact_summary`);
- `beforeTokens` / `afterTokens` are the boundary's `compactMetadata.preTokens` / `postTokens`,
  0 when missing or not an integer.
"""

from __future__ import annotations

from typing import Any

from agent_tui.importers.builder import SessionBuilder


class Compactions:
    """Joins each compaction boundary of one log to the summary line that follows it."""

    def __init__(self) -> None:
        self.waiting: tuple[SessionBuilder, str, dict[str, Any]] | None = None
        """The boundary seen last (its session, time and line), until its summary or another line."""

    def boundary(self, builder: SessionBuilder, ts: str, data: dict[str, Any]) -> None:
        """A `compact_boundary` line: it waits for its summary (one waiting before it is written)."""
        self.flush()
        self.waiting = (builder, ts, data)

    def summary(self, builder: SessionBuilder, ts: str, data: dict[str, Any], text: str) -> None:
        """A summary line (`isCompactSummary`) whose text is `text`."""
        waiting = self.waiting
        if waiting is None or waiting[0] is not builder:  # (a boundary of another session: alone)
            self.flush()
            builder.record(ts, "user.compact_summary", data)
            return
        self.waiting = None
        _compacted(builder, waiting[1], waiting[2], text, data)

    def flush(self) -> None:
        """Another line came, or the file ended: the waiting boundary is written alone."""
        waiting, self.waiting = self.waiting, None
        if waiting is not None:
            _compacted(waiting[0], waiting[1], waiting[2], "", None)


def _compacted(
    builder: SessionBuilder,
    ts: str,
    boundary: dict[str, Any],
    summary: str,
    summary_line: dict[str, Any] | None,
) -> None:
    meta = boundary.get("compactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    before = meta.get("preTokens")
    after = meta.get("postTokens")
    if builder.turn is None:  # compaction outside any turn: kept as it came
        builder.record(ts, "system.compact_boundary", boundary)
        if summary_line is not None:
            builder.record(ts, "user.compact_summary", summary_line)
        return
    builder.compacted(ts, before if type(before) is int else 0, after if type(after) is int else 0, summary)
