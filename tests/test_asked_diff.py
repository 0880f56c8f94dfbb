"""A dashboard that cannot read the file (attached, browser: the file is on the host) shows a
`write_file` or `edit_file` request as the diff it asks for, made of its arguments, not as JSON.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from support_tui import Scene, pin_scene, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import recorded_app
from test_workbench_looks import armed
from textual.pilot import Pilot

from agent_tui.ports import preview_asked
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.approval import ApprovalScreen
from agent_tui.tui.widgets.diff_view import DiffView, diff_content

pytestmark = pytest.mark.anyio

SCENE_BASE: Path | None = None


@pytest.fixture(autouse=True)
def _pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from pin_scene(globals(), tmp_path, monkeypatch)


def test_a_write_is_every_line_added_and_an_edit_its_text_against_the_new() -> None:
    write = preview_asked("write_file", {"path": "src/a.py", "content": "x = 1\ny = 2\n"})
    assert write is not None and write.kind == "write" and write.asked
    assert write.unified_text() == "@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    edit = preview_asked("edit_file", {"path": "src/a.py", "old": "x = 1\n", "new": "x = 2\n"})
    assert edit is not None and edit.kind == "edit" and edit.counts() == (1, 1)
    same = preview_asked("edit_file", {"path": "src/a.py", "old": "x", "new": "x"})
    assert same is not None and same.kind == "unchanged"
    assert preview_asked("shell", {"cmd": "ls"}) is None
    shown = diff_content(edit).plain
    assert [line.rstrip() for line in shown.splitlines()] == ["- x = 1", "+ x = 2"]  # no numbers, no hunk


def remote_app() -> AgentTuiApp:
    base = SCENE_BASE if SCENE_BASE is not None else Path("/nonexistent")
    return recorded_app(base)


def remote_diff_approval() -> Callable[[Pilot], Awaitable[None]]:
    """fix-login's edit of src/auth.py opened on a dashboard whose run is a host's (`remote`)."""
    opened = armed("fix-login")

    async def run_before(pilot: Pilot) -> None:
        await opened(pilot)
        app = pilot.app
        assert isinstance(app, AgentTuiApp) and app.dashboard.live is not None
        app.dashboard.live.remote = True
        await pilot.press("A", "A")
        await pilot.pause()

    return run_before


async def test_an_attached_dashboard_shows_the_edit_as_a_diff(tmp_path: Path) -> None:
    app = remote_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await remote_diff_approval()(pilot)
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert screen.preview is not None and screen.preview.asked
        assert screen.query(DiffView)
        assert "as asked: the file is on its host" in str(screen.query_one("#approval-title").render())


def test_the_attached_diff_approval_at_80x24(snap_compare) -> None:
    assert snap(snap_compare, Scene(remote_app, (80, 24), remote_diff_approval()))
