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

A `paced` follower reports no faster than its consumer takes the reports: after each report it
waits for `ready()` before the next, and folds on meanwhile; what it found in between (events,
notices, new logs, a rewind) comes in that next report, made as soon as `ready()` is called. A
report is what the screen turns into a copy of the state at the end, so the copies follow what
the screen can show instead of every poll.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from agent_tui.replay.timeline import PollResult, Timeline

ACTIVE_SECONDS = 0.025
IDLE_SECONDS = 0.25
REPORT_SECONDS = 0.1
"""During a long poll, what is folded so far is reported at most this often."""


class Follower:
    """Polls `timeline` until `stop()`.

    Args:
        timeline: what to keep up to date.
        on_change: called (from the polling thread) with each non-empty `PollResult`, and
            during a long poll with what it folded so far (see the module docstring).
        on_progress: called while a long catch-up is folded (a rewound timeline).
        paced: report again only once `ready()` was called after a report.
    """

    def __init__(
        self,
        timeline: Timeline,
        on_change: Callable[[PollResult], None],
        on_progress: Callable[[], None] | None = None,
        *,
        paced: bool = False,
    ) -> None:
        self.timeline = timeline
        self.on_change = on_change
        self.on_progress = on_progress
        self._paced = paced
        self._stop = threading.Event()
        self._wake = threading.Event()  # `stop()` or `ready()`: stop waiting for the next poll
        self._wanted = True  # the consumer takes a report now
        self._owed = PollResult()  # found and not reported yet (its `added` is counted at report)
        self._reported = 0  # the timeline's total at the last report
        self._reported_at = 0.0

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def ready(self) -> None:
        """The consumer took the last report: the next may come (at once, if one is owed)."""
        self._wanted = True
        self._wake.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        """Poll until stopped."""
        interval = ACTIVE_SECONDS
        self._reported = self.timeline.total
        self._reported_at = time.monotonic()
        while not self._stop.is_set():
            self._report()  # what was owed when the consumer became ready
            result = self.timeline.poll(self._folding)
            owed = self._owed
            owed.notices += result.notices
            owed.new_files += result.new_files
            if result.rewound_to is not None:
                before = owed.rewound_to
                owed.rewound_to = result.rewound_to if before is None else min(before, result.rewound_to)
            self._report()
            interval = ACTIVE_SECONDS if result else min(IDLE_SECONDS, interval * 1.5)
            self._wake.wait(interval)
            self._wake.clear()

    def _report(self) -> None:
        """Report what is owed, if anything is and the consumer takes it."""
        owed = self._owed
        owed.added = max(0, self.timeline.total - self._reported)
        if not owed or not (self._wanted or not self._paced):
            return
        self._owed = PollResult()
        self._reported, self._reported_at = self.timeline.total, time.monotonic()
        self._wanted = False
        self.on_change(owed)

    def _folding(self) -> None:
        """Between batches of a poll: report what is folded so far, at most every
        `REPORT_SECONDS`."""
        if self.on_progress is not None:
            self.on_progress()
        if (
            time.monotonic() - self._reported_at >= REPORT_SECONDS
            and self.timeline.total > self._reported
            and (self._wanted or not self._paced)
        ):
            self._report()
