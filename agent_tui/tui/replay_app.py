"""The replay scrubber's app (`agent-tui replay`): recorded session logs, opened at their last event
(or first), followed as they grow, listed first when there are many.

It loads the replay, the reducer and the screens a replay shows, never the engine, the runtime or
the bus: a replay starts in the time its screen needs (`tests/test_replay_imports.py`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from textual.screen import Screen

from agent_tui.replay import CatalogChild
from agent_tui.tui.app_base import AgentTuiBase
from agent_tui.tui.screens.replay import ReplayScreen


class ReplayApp(AgentTuiBase):
    """The replay scrubber over recorded session logs.

    Args:
        files: the logs.
        follow: tail them (and new logs in `watch_dir`).
        watch_dir: the sessions directory to pick new logs up from in follow mode.
        start_at_end: open at the last event (True) or the first.
        theme: a Textual theme name.
        pause_indexing_after: hold indexing after this many events (tests and screenshots of
            the indexing state; `replay.resume_indexing()` lets it go on).
        warnings: what opening the logs found (a file skipped, a duplicate log), shown as
            notices once the scrubber is up, so they are read while it runs, not after it.
        listing: many logs: a child reading their list already (see `ReplayFeed`).
    """

    def __init__(
        self,
        files: list[Path],
        *,
        follow: bool = False,
        watch_dir: Path | None = None,
        start_at_end: bool = True,
        theme: str | None = None,
        pause_indexing_after: int | None = None,
        warnings: list[str] | None = None,
        listing: CatalogChild | None = None,
    ) -> None:
        super().__init__(theme=theme)
        self._warnings = list(warnings or [])
        self._screen = partial(
            ReplayScreen,
            list(files),
            follow=follow,
            watch_dir=watch_dir,
            start_at_end=start_at_end,
            pause_indexing_after=pause_indexing_after,
            listing=listing,
        )

    def get_default_screen(self) -> Screen[None]:
        return self._screen()

    def on_mount(self) -> None:
        super().on_mount()
        for warning in self._warnings:
            self.call_after_refresh(self.notify, warning, severity="warning", timeout=10)

    @property
    def replay(self) -> ReplayScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, ReplayScreen)
        return screen


def run_replay(
    files: list[Path],
    follow: bool,
    *,
    sessions_dir: Path | None = None,
    from_start: bool = False,
    warnings: list[str] | None = None,
    listing: CatalogChild | None = None,
) -> int:
    """`agent-tui replay PATH [--follow] [--from-start]`: the scrubber over `files`.

    `sessions_dir` (PATH when it is a directory, even one that does not exist yet) is where
    follow mode picks up new logs; without it, it is guessed from `files`. `listing`: a child
    reading the list of many `files` already (started before this module was imported).
    """
    watch_dir = sessions_dir if sessions_dir is not None else _sessions_dir_of(files)
    app = ReplayApp(
        files,
        follow=follow,
        watch_dir=watch_dir,
        start_at_end=not from_start,
        warnings=warnings,
        listing=listing,
    )
    app.run()
    return app.return_code or 0


def _sessions_dir_of(files: list[Path]) -> Path | None:
    """The directory to watch for new logs in follow mode, guessed from what the CLI passed.

    `agent-tui replay DIR` passes every log of DIR (several files, one parent: watch DIR, even if
    more logs appeared since); `agent-tui replay FILE` passes one file, and then only that file is
    followed, unless it is its directory's only log (then a sessions dir that has just begun).
    """
    parents = {path.parent for path in files}
    if len(parents) != 1:
        return None
    directory = parents.pop()
    if len(files) > 1:
        return directory
    return directory if sorted(directory.glob("*.jsonl")) == sorted(files) else None
