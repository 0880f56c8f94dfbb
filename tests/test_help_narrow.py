"""The help screen at 80x24: a description too long for the line wraps under itself, in the
description column, never back under the keys (where it read as another key).

The real app on the fixture logs, driven by Textual's pilot.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from agent_tui.replay.sources import replay_all
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.help import HelpScreen

LIVE_LOGS = Path(__file__).parent / "sample-logs" / "live"

pytestmark = pytest.mark.anyio


async def test_wrapped_descriptions_keep_their_column_at_80_columns() -> None:
    app = AgentTuiApp(events=list(replay_all(LIVE_LOGS)), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = list(app.screen.query(".help-key").results(Static))
        whats = [key.parent.query_one(".help-what", Static) for key in keys if key.parent is not None]
        assert len(whats) == len(keys) > 20
        columns = {what.region.x for what in whats}
        assert len(columns) == 1  # every description starts in one column...
        (column,) = columns
        assert column >= max(key.region.x + len(str(key.content)) for key in keys) + 2  # ...right of the keys
        wrapped = [str(what.content) for what in whats if what.region.height > 1]
        assert "filter the tree by name, prompt or directory (esc clears)" in wrapped
        await pilot.press("escape")
