"""Following logs that other processes (or machines) are still writing: a polling loop.

`Follower.run()` (in a thread of its own) polls the timeline, which stats each log, reads what
was appended in one read per grown file, checks for truncated or replaced files and picks up new
logs in the watched directory; it reports every change through `on_change`.

Why polling and not file-system events: the logs of agents that run elsewhere arrive through
shared directories (NFS, SMB, sshfs, synced folders), where inotify-style events do not see
writes made by other machines. A stat per file per tick costs about a microsecond, so 200 logs
cost about a millisecond a tick. The loop ticks every `ACTIVE_SECONDS` while logs grow, and
slows down to `IDLE_SECONDS` when nothing changed for a while.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agent_tui.replay.timeline import PollResult, Timeline

ACTIVE_SECONDS = 0.025
IDLE_SECONDS = 0.25


class Follower:
    """Polls `timeline` until `stop()`.

    Args:
        timeline: what to keep up to date.
        on_change: called (from the polling thread) with each non-empty `PollResult`.
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

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        """Poll until stopped."""
        interval = ACTIVE_SECONDS
        while not self._stop.is_set():
            result = self.timeline.poll(self.on_progress)
            if result:
                self.on_change(result)
                interval = ACTIVE_SECONDS
            else:
                interval = min(IDLE_SECONDS, interval * 1.5)
            self._stop.wait(interval)
