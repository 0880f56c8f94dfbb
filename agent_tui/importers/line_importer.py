"""What both importers share: a `LineImporter` turns a source file's lines into our log lines.

Each importer (`claude_code`, `codex`) defines `read_line` (one source line: what it means,
said to the `SessionBuilder` of its session) and `finish_lines` (the end of the source); this
base gives the lines and events they make (`feed_lines`/`feed`, `finish`), says a line too long
to hold (`feed_overlong`) and words a line that is no JSON object (`unreadable`), with its
warnings as `FILE:LINE: reason`. Nothing is dropped: a line it cannot read becomes a
`source.record` of what it was.
"""

from __future__ import annotations

from typing import Any

from agent_tui.costs.prices import PriceTable
from agent_tui.events import Event
from agent_tui.importers.builder import ImportCounts, LogLine, SessionBuilder, WriteTo, as_event
from agent_tui.importers.source_lines import OVERLONG

RawLine = bytes | memoryview | str
"""One source line as an importer takes it (a memoryview when the import reads blocks of the file)."""


UNREADABLE = object()
"""What an importer decodes a line that is not JSON to (see `LineImporter.unreadable`)."""
_NOTHING: list[LogLine] = []  # what a line that makes no event returns (never written to)


class LineImporter:
    """What both importers share: `feed`/`finish` give `Event`s of the log lines that
    `feed_lines` (`read_line`, which each importer defines, then what it wrote to `out`) and
    `finish_lines` (each importer's) make; `feed_overlong` stands for
    a line too long to hold; `unreadable` words a line that is no JSON object."""

    overlong = 0
    """The length of the line past the cap being fed (bytes), read by `unreadable`."""
    format: str
    """The source format's name (`claude-code`, `codex`)."""

    def __init__(self, label: str, prices: PriceTable | None) -> None:
        self.label = label
        self.prices = prices
        self.sessions: dict[str, SessionBuilder] = {}
        """Our sessions the file's lines made, by session id."""
        self.out: list[LogLine] = []
        self.write_to: WriteTo | None = None
        """Set (before the first line), the sessions' lines go serialized to their files, not to
        `out`: the import's path (`convert_source`), which needs no `LogLine` of its own."""
        self.warnings: list[str] = []
        self.counts = ImportCounts()
        self._warned: set[str] = set()  # what `_warn_once` said

    def _warn(self, line_number: int, message: str) -> None:
        self.warnings.append(f"{self.label}:{line_number}: {message}")

    def _nothing_imported(self, missing: str, record_types: list[str]) -> None:
        """The warning for a log of records that make no session (it has no `missing`)."""
        types = ", ".join(sorted({repr(record_type) for record_type in record_types}))
        self.warnings.append(
            f"{self.label}: no {missing} in this log (only {types} records); nothing imported"
        )

    def _warn_once(self, line_number: int, message: str) -> None:
        """`_warn`, once per log (an unknown record type a new CLI writes on many lines)."""
        if message not in self._warned:
            self._warned.add(message)
            self._warn(line_number, message)

    def _take(self) -> list[LogLine]:
        """The log lines written since the last take."""
        out = self.out
        if not out:
            return _NOTHING
        lines = out[:]
        out.clear()
        return lines

    def unreadable(self, line_number: int, raw: RawLine, data: Any) -> tuple[str, dict[str, Any]]:
        """The record type and data kept of a line that is no JSON object (`data` is what it
        decoded to, `UNREADABLE` when it is not JSON), warned about."""
        if data is not UNREADABLE:
            self._warn(line_number, "not a JSON object (kept as source-specific)")
            return "not-an-object", {"value": data}
        if raw is OVERLONG:  # said by `feed_overlong`
            return "line-too-long", {"bytes": self.overlong, "where": f"{self.label}:{line_number}"}
        self._warn(line_number, "not valid JSON (kept as source-specific)")
        text = raw if isinstance(raw, str) else bytes(raw).decode(errors="replace")  # not UTF-8: replaced
        return "invalid-json", {"line": text.rstrip("\n")}

    def feed_overlong(self, line_number: int, length: int, cap: int) -> list[LogLine]:
        """The log lines for a source line of `length` bytes, past the `cap` of what is held:
        a warning and a `source.record` (`line-too-long`) of its length and where it was."""
        self.overlong = length
        self.warnings.append(
            f"{self.label}:{line_number}: a line of {length:,} bytes, longer than the {cap:,} bytes "
            "read of a line (kept as source-specific: its length only)"
        )
        return self.feed_lines(line_number, OVERLONG)

    def read_line(self, line_number: int, raw: RawLine) -> None:
        """Convert one source line, its log lines appended to `out` (the import's loop reads
        them there, no list of its own made per line)."""
        raise NotImplementedError

    def feed_lines(self, line_number: int, raw: RawLine) -> list[LogLine]:
        """The log lines one source line makes (of any session of the file)."""
        self.read_line(line_number, raw)
        return self._take()

    def finish_lines(self) -> list[LogLine]:
        raise NotImplementedError

    def feed(self, line_number: int, raw: RawLine) -> list[Event]:
        """The events one source line makes (of any session of the file)."""
        return [as_event(line) for line in self.feed_lines(line_number, raw)]

    def finish(self) -> list[Event]:
        """The events the end of the source makes (open turns closed, held records written)."""
        return [as_event(line) for line in self.finish_lines()]
