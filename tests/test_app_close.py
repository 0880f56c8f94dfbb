"""What the app's own timers fire while it closes does nothing.

The app's timers (the clock tick that redraws live durations, the live redraw) stop only after
its screens are taken down, and a screen's widgets go before the screen itself. A tick that fell
in between looked for the session tree that was already gone and ended the run with a traceback
(`NoMatches: '#tree'`). The test makes that moment happen every time: when the tree's pane
unmounts (its tree already removed), it fires the tick and the live redraw itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import Vertical
from textual.widget import Widget

from agent_tui.replay.sources import replay_all
from agent_tui.tui.app import AgentTuiApp

LIVE_LOGS = Path(__file__).parent / "sample-logs" / "live"

pytestmark = pytest.mark.anyio


async def test_a_tick_while_the_screens_are_taken_down_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    app = AgentTuiApp(events=list(replay_all(LIVE_LOGS)), live=False)
    fired: list[str] = []
    failed: list[BaseException] = []

    def on_unmount(widget: Widget) -> None:
        if widget.id != "tree-pane":
            return
        try:
            app._tick()
            app._refresh_live()
        except Exception as error:
            failed.append(error)
        fired.append("tick")

    monkeypatch.setattr(Vertical, "on_unmount", on_unmount, raising=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.dashboard.query("#tree")  # shown while the app runs
    assert fired == ["tick"]  # the moment happened...
    assert failed == []  # ...and the tick let it be
