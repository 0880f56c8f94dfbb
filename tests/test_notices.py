"""Notices as a user reads them: the top line shows the newest for a moment, cut to the width;
`N` (or the palette) lists every one of this run whole, newest first, from the live dashboard and
the replay alike. What opening the logs found is one of them, not a line on stderr after quitting."""

from __future__ import annotations

import pytest
from test_tui import COMPLETE_LOGS, dashboard_app, settle, wait_for
from textual.widgets import Static

from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.screens.notices import NoticesScreen

LONG = (
    "sess_7f3a9c2e.jsonl:18: a torn final line (4,212 bytes without a newline) was left out; "
    "the session's last turn never completed, so it shows as running until its writer comes back"
)


def lines_of(screen: NoticesScreen) -> list[str]:
    return [str(static.render()) for static in screen.query(".notice-line").results(Static)]


@pytest.mark.anyio
class TestNotices:
    async def test_n_lists_every_notice_whole_newest_first(self) -> None:
        app = dashboard_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            app.notify("first", title="Stop")
            app.notify(LONG, severity="warning")
            await pilot.press("N")
            screen = app.screen
            assert isinstance(screen, NoticesScreen)
            lines = lines_of(screen)
            assert lines[0] == "▲ " + LONG  # whole, though far wider than the screen
            assert lines[1] == "● Stop: first"
            await pilot.press("escape")
            assert not isinstance(app.screen, NoticesScreen)

    async def test_with_no_notice_the_screen_says_so(self) -> None:
        app = dashboard_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            app.notices.clear()
            await pilot.press("N")
            assert isinstance(app.screen, NoticesScreen)
            assert lines_of(app.screen) == ["No notices yet."]
            await pilot.press("N")  # N closes it again
            assert not isinstance(app.screen, NoticesScreen)

    async def test_what_opening_the_logs_found_is_a_notice_of_the_replay(self) -> None:
        files = sorted(COMPLETE_LOGS.glob("*.jsonl"))
        app = ReplayApp(files, warnings=["old.jsonl: not a session log, skipped"])
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            await wait_for(pilot, lambda: any("skipped" in n.message for n in app.notices), "the warning")
            await pilot.press("N")
            assert isinstance(app.screen, NoticesScreen)
            assert any("old.jsonl: not a session log, skipped" in line for line in lines_of(app.screen))
