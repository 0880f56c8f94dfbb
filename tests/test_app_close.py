"""What the app's own timers fire while it closes does nothing.

The app's timers (the clock tick that redraws live durations, the live redraw) stop only after
its screens are taken down, and a screen's widgets go before the screen itself. A tick that fell
in between looked for the session tree that was already gone and ended the run with a traceback
(`NoMatches: '#tree'`). The test makes that moment happen every time: when the tree's pane
unmounts (its tree already removed), it fires the tick and the live redraw itself. The app runs
a real (short) scenario, and the live run is marked as wanting a redraw right then: a recorded
app, or a live one with nothing to redraw, would not look for the tree at all.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from textual.containers import Vertical
from textual.widget import Widget

from agent_tui.tui.app import AgentTuiApp

SCENARIO = {
    "sessions": [
        {
            "title": "alpha",
            "agentName": "alpha",
            "cwd": "ws",
            "prompt": "Say hi.",
            "steps": [{"text": ["Hi."]}],
        }
    ]
}

pytestmark = pytest.mark.anyio


async def test_a_tick_while_the_screens_are_taken_down_does_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ws").mkdir()
    scenario = tmp_path / "scenario.json"
    scenario.write_bytes(orjson.dumps(SCENARIO))
    app = AgentTuiApp(
        scenario_path=scenario, sessions_dir=tmp_path / "sessions", workspace_root=tmp_path / "scratch"
    )
    live = app.live
    assert live is not None
    fired: list[str] = []
    failed: list[BaseException] = []

    def on_unmount(widget: Widget) -> None:
        if widget.id != "tree-pane":
            return
        live.redraws.dirty = True  # the live redraw has something to show, so it reaches for the tree
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
