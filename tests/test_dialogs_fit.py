"""Every dialog is whole on a phone-sized window and at 80x24: no button, title or hint is cut.

A phone is the web dashboard in a 360 to 390 pixels wide browser window: 59 to 65 columns (the
page's smallest font, 11 px, never smaller) by 64 rows (844 pixels). The check is geometric, so it cannot pass by accident: each
button and each line of text of the dialog lies inside the dialog's frame and inside the screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.text import Text
from support_tui import Scene, pin_scene, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import arm_project, recorded_app
from test_tui import arm, armed_then, dashboard_app, settle
from test_workbench_looks import session_id
from textual.containers import ScrollableContainer
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Button, Static

from agent_tui.tui.app import AgentTuiApp

pytestmark = pytest.mark.anyio

SIZES = [(59, 64), (65, 64), (80, 24)]


def fixture_app(base: Path) -> AgentTuiApp:
    return dashboard_app()


def project_app(base: Path) -> AgentTuiApp:
    return recorded_app(base)


DIALOGS: dict[str, tuple[Callable[[Path], AgentTuiApp], str | None, tuple[str, ...]]] = {
    # name: (the app, the session selected first, the keys that open it)
    "approval": (fixture_app, None, ("a", "enter")),
    "stop all": (fixture_app, None, ("X",)),
    "quit": (fixture_app, None, ("q",)),
    "help": (fixture_app, None, ("question_mark",)),
    "notices": (fixture_app, None, ("N",)),
    "diff approval": (project_app, "fix-login", ("A", "A")),
    "new agent": (project_app, None, ("n",)),
    "budget": (project_app, "fix-login", ("B",)),
    "close": (project_app, "lint", ("delete",)),
}


@pytest.fixture(autouse=True)
def _pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from pin_scene(globals(), tmp_path, monkeypatch)


def cut(widget: Widget, frame: Region) -> str | None:
    """How `widget` is cut by `frame` (None: it is whole inside it, or it scrolls into view)."""
    if frame.contains_region(widget.region) or any(
        isinstance(a, ScrollableContainer) for a in widget.ancestors
    ):
        return None
    return f"{type(widget).__name__}#{widget.id} at {widget.region} outside {frame}"


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("dialog", list(DIALOGS))
async def test_every_dialog_is_whole(dialog: str, size: tuple[int, int], tmp_path: Path) -> None:
    build, select, keys = DIALOGS[dialog]
    app = build(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        if build is fixture_app:
            arm(pilot)
        else:
            arm_project(pilot)
            if select is not None:
                app.dashboard.select_session(session_id(app, select))
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot)
        await settle(pilot)
        screen = app.screen
        assert screen.is_modal, f"{dialog}: no dialog opened ({type(screen).__name__})"
        (frame,) = screen.children  # the dialog's box
        inside = frame.content_region
        assert screen.region.contains_region(frame.region), f"{dialog}: its box is cut by the screen"
        buttons = list(screen.query(Button))
        cuts = [c for b in buttons if (c := cut(b, inside)) is not None]
        cuts += [c for s in screen.query(Static) if s.display and (c := cut(s, screen.region)) is not None]
        for label in (frame.border_title, frame.border_subtitle):  # Textual cuts them with "…"
            if label:
                width = Text.from_markup(label).cell_len if isinstance(label, str) else len(label)
                if width > frame.region.width - 4:
                    cuts.append(f"its border's {label!r} is wider than the box ({frame.region.width})")
        assert cuts == [], f"{dialog} at {size[0]}x{size[1]}: " + "; ".join(cuts)


def test_our_approval_on_a_phone(snap_compare) -> None:
    """The answers two by two, under the request (the page on a 390-pixel phone: 65 columns)."""
    assert snap(snap_compare, Scene(dashboard_app, (65, 40), armed_then("a", "enter")))
