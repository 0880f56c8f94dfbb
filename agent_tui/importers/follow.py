"""Following foreign logs while their tool still writes them: appended lines → our logs.

A `ForeignTail` remembers how far one source file was read (the byte after its last complete
line) and keeps that file's importer alive, so each `poll()` feeds only the lines appended since
and appends the events they make to our logs in `out_dir`, which the replay scrubber follows like
any of our logs. A line still being written (no newline yet) waits for the next poll. Lines are
read as the import reads them (`SourceLines`): one past the cap is only measured, and becomes a
`line-too-long` record.

A poll never ends a turn: a turn whose lines are still to come (a tool call waiting for its
result or for the user's answer, a model still writing) stays open, so its session reads as
running, however long the wait and however many polls find nothing new; it ends when its source
says so (the next prompt, Codex's `task_complete`, an interruption). Only `ForeignTail.finish()`,
for a log known to be finished (its CLI exited), closes what is still open, as the import of a
finished file does (`convert_source`).

A `ForeignFollower` runs the polls in a thread, on file-system changes (and once a second in any
case), and picks up new foreign logs that appear in the directories it was given. `stop()` ends
it; our logs are left as written so far (the last turn of a running session stays open).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from agent_tui.importers.builder import LogLine
from agent_tui.importers.convert import ImportLineError, SessionLogWriter, SourceFile, discover
from agent_tui.importers.line_importer import LineImporter
from agent_tui.importers.source_lines import OVERLONG, SourceLines


class SourceTail:
    """How far one source file was read (the byte after its last complete line, and its lines so
    far) and its importer, kept alive between reads: what `ForeignTail` and the terminal agents'
    transcripts (`terminal.logs`) share.

    Args:
        source: the log.
    """

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.importer: LineImporter = source.importer()
        self.offset = 0
        self.lines = 0
        self.failed = False  # the importer failed on a line: this log is no longer followed
        self._overlong = (0, 0)  # the last overlong line's length, and the cap

    def grown(self) -> bool:
        """Whether the file holds bytes past `offset` (never once `failed`)."""
        if self.failed:
            return False
        try:
            return self.source.path.stat().st_size > self.offset
        except OSError:
            return False

    def appended(self) -> Iterator[tuple[int, memoryview]]:
        """Each complete line appended since the last read that is not blank, with its number;
        `feed` makes its events. When the iteration ends or stops, `offset` is past the last
        complete line read: a line still being written (however long) waits for the next read."""
        with self.source.path.open("rb", buffering=0) as handle:
            handle.seek(self.offset)
            lines = SourceLines(handle, first_number=self.lines + 1)
            try:
                for number, line in lines:
                    self.lines = number
                    if line is OVERLONG:
                        self._overlong = (lines.overlong, lines.max_line)
                        yield number, line
                    elif not (line[0] <= 32 and line.tobytes().isspace()):
                        yield number, line
            finally:
                self.offset = handle.tell() - (len(lines.tail) or lines.tail_overlong)

    def feed(self, number: int, line: memoryview) -> list[LogLine]:
        """The importer's events for line `number`, as `appended` gave it."""
        if line is OVERLONG:
            return self.importer.feed_overlong(number, *self._overlong)
        return self.importer.feed_lines(number, line)

    def fail(self, error: Exception) -> str:
        """The importer failed on the current line: stop following; returns the warning."""
        self.failed = True
        return f"{ImportLineError(self.source.path, self.lines, error)} (no longer followed)"


class ForeignTail(SourceTail):
    """One foreign log being followed.

    Args:
        source: the log.
        writer: where its events go (shared by the tails of one replay).
    """

    def __init__(self, source: SourceFile, writer: SessionLogWriter) -> None:
        super().__init__(source)
        self.writer = writer
        self.finished = False  # `finish()` ended it: nothing more is read

    def poll(self) -> int:
        """Feed the complete lines appended since the last poll; returns how many events it wrote.

        An importer that fails on a line (a bug) stops the following of this log, with a warning
        naming the line (`ImportLineError`'s words); what was written before stays."""
        if self.finished or not self.grown():
            return 0
        events: list[LogLine] = []
        try:
            for number, line in self.appended():
                events += self.feed(number, line)
        except Exception as error:
            self.importer.warnings.append(self.fail(error))
        self.writer.write(events, str(self.source.path))
        self.writer.flush()
        return len(events)

    def finish(self) -> int:
        """The log is finished (its CLI exited): poll what is left, then close what is still open
        as the import of a finished file does (an unfinished last turn ends, its open calls
        answered); returns how many events that wrote. Nothing is read after it."""
        written = self.poll()
        if self.failed or self.finished:
            return written
        self.finished = True
        try:
            events = self.importer.finish_lines()
        except Exception as error:
            self.failed = True
            self.importer.warnings.append(str(ImportLineError(self.source.path, None, error)))
            return written
        self.writer.write(events, str(self.source.path))
        self.writer.flush()
        return written + len(events)


class ForeignFollower:
    """Polls foreign logs into `out_dir` from a thread.

    Args:
        sources: the logs to follow (each is read to its end by the first `catch_up`).
        out_dir: where our logs are written.
        roots: where new foreign logs may appear, and join when they do: directories, and
            Claude Code session logs (whose sub-agents' logs appear beside them).
        on_update: called (from the thread) after a poll that wrote events.
    """

    def __init__(
        self,
        sources: list[SourceFile],
        out_dir: Path,
        roots: list[Path] | None = None,
        on_update: Callable[[], None] | None = None,
    ) -> None:
        self.out_dir = out_dir
        self.writer = SessionLogWriter(out_dir, truncate=False)
        self.tails = {source.path: ForeignTail(source, self.writer) for source in sources}
        self.roots = list(roots or [])
        self.on_update = on_update
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def warnings(self) -> list[str]:
        """What the imports said, in the order of the logs; a record type one log reported as
        unsupported is said once for the whole follow, at the first log that had it (a new CLI
        release writes it into every session followed)."""
        found: list[str] = []
        said: set[str] = set()
        for tail in self.tails.values():
            for warning in tail.importer.warnings:
                what = warning.partition(": ")[2]  # the words after `FILE:LINE`
                if what.startswith("unsupported "):
                    if what in said:
                        continue
                    said.add(what)
                found.append(warning)
        return found + self.writer.conflicts

    def catch_up(self) -> int:
        """One pass: new logs in the roots join, then every log is polled. Returns events written."""
        with self._lock:
            if self.roots:
                try:
                    found = discover(self.roots, known=set(self.tails))
                except Exception:  # a root that went away: keep following what we have
                    found = None
                for source in found.sources if found is not None else ():
                    if source.path not in self.tails:
                        self.tails[source.path] = ForeignTail(source, self.writer)
            written = sum(tail.poll() for tail in list(self.tails.values()))
        if written and self.on_update is not None:
            self.on_update()
        return written

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="agent-tui-import-follow", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        from watchfiles import watch  # here: the terminal agents share `SourceTail`, not the watcher

        watched = sorted(
            {tail.source.path.parent for tail in self.tails.values()}
            | {root if root.is_dir() else root.parent for root in self.roots}
        )
        watched = [path for path in watched if path.is_dir()]
        try:
            if watched:
                for _changes in watch(
                    *watched,
                    stop_event=self._stop,
                    rust_timeout=1000,
                    yield_on_timeout=True,
                    debounce=50,
                    step=25,
                ):
                    self.catch_up()
                return
        except Exception:  # the watcher failed (a folder removed): fall back to polling
            pass
        while not self._stop.wait(1.0):  # (nothing to watch: polling)
            self.catch_up()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self._lock:
            self.writer.close()
