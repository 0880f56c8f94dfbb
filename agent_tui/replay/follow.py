"""Following logs that other processes (or machines) are still writing: a polling loop.

`Follower.run()` (in a thread of its own) polls the timeline, which stats each log, reads what
was appended in one read per grown file, checks for truncated or replaced files and picks up new
logs in the watched directory; it reports every change through `on_change`.

Why polling and not file-system events: the logs of agents that run elsewhere arrive through
shared directories (NFS, SMB, sshfs, synced folders), where inotify-style events do not see
writes made by other machines. A stat per file per tick costs about a microsecond, so 200 logs
cost about a millisecond a tick. The loop ticks every `ACTIVE_SECONDS` while logs grow, and
slows down to `IDLE_SECONDS` when nothing changed for a while.

A poll folds everything the logs held when it looked; when writers outpace the fold (many busy
logs, a loaded machine) one poll can take seconds. Rather than show nothing until it ends, the
follower reports what is folded so far every `REPORT_SECONDS` during a poll (a `PollResult` with
only `added`), and the poll's own result then counts only what came after the last such report:
the events reported add up to those folded, each once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from agent_tui.replay.timeline import PollResult, Timeline

ACTIVE_SECONDS = 0.025
IDLE_SECONDS = 0.25
REPORT_SECONDS = 0.1
"""During a long poll, what is folded so far is reported this often (the screen redraws about as
often)."""


class Follower:
    """Polls `timeline` until `stop()`.

    Args:
        timeline: what to keep up to date.
        on_change: called (from the polling thread) with each non-empty `PollResult`, and
            during a long poll with what it folded so far (see the module docstring).
        on_progress: called while a long catch-up is folded (a rewound timeline).
    """

    def __init__(
        self,
        timeline: Timeline,
        on_change: Callable[[PollResult], None],
        on_progress: Callable[[], None] | None = None,
    ) -> None:
        self.timeline = timeline
        self.on_change = on_change
        self.on_progress = on_progress
        self._stop = threading.Event()
        self._reported = 0  # the timeline's total at the last report
        self._reported_at = 0.0

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        """Poll until stopped."""
        interval = ACTIVE_SECONDS
        while not self._stop.is_set():
            self._reported = self.timeline.total
            self._reported_at = time.monotonic()
            result = self.timeline.poll(self._folding)
            busy = bool(result)
            result.added = max(0, self.timeline.total - self._reported)  # not reported yet
            if result:
                self.on_change(result)
            interval = ACTIVE_SECONDS if busy else min(IDLE_SECONDS, interval * 1.5)
            self._stop.wait(interval)

    def _folding(self) -> None:
        """Between batches of a poll: report what is folded so far, at most every
        `REPORT_SECONDS`."""
        if self.on_progress is not None:
            self.on_progress()
        now = time.monotonic()
        total = self.timeline.total
        if now - self._reported_at >= REPORT_SECONDS and total > self._reported:
            self.on_change(PollResult(added=total - self._reported))
            self._reported, self._reported_at = total, now
