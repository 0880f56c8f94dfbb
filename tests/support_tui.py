"""What the dashboard's tests share: where pictures are kept, scenes, and reading the screen.

- Snapshots are SVG files under `tests/snapshots/<test module>/`. A module that takes pictures
  imports the `snapshot` fixture from here (`snap_compare` asks for a fixture of that name).
- A `Scene` is an app in a fixed state: built by `app`, at `size`, after `run_before`. The
  snapshot tests and `scripts/screenshots.py` draw the same scenes, so the README's pictures are
  the tested ones.
- `park_pending` makes a recorded dashboard answerable: each pending request waits in the run's
  questions as the engine's would, so the approval modal has buttons and the composer shows.
- `detail_text` and `log_of` read what the user sees and what the engine stored.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from pytest_textual_snapshot import SVGImageExtension
from syrupy import SnapshotAssertion
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, Static, TextArea

from agent_tui.ports import PermissionAnswer, PermissionRequest
from agent_tui.reducer import DashboardState
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.live import LiveRun

# -- snapshots live in tests/snapshots/ -------------------------------------------------------


class SnapshotsDir(SVGImageExtension):
    """Pictures go to `tests/snapshots/<test module>/` rather than syrupy's `__snapshots__`."""

    @classmethod
    def dirname(cls, *, test_location):
        return str(Path(test_location.filepath).parent / "snapshots" / test_location.basename)


class SnapshotsDirAssertion(SnapshotAssertion):
    def use_extension(self, extension_class=None):
        if extension_class is SVGImageExtension:
            extension_class = SnapshotsDir
        return super().use_extension(extension_class)


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    snapshot.__class__ = SnapshotsDirAssertion
    return snapshot


# -- scenes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scene:
    """An app in a fixed state: built by `app`, at `size`, after `run_before`."""

    app: Callable[[], App[Any]]
    size: tuple[int, int]
    run_before: Callable[[Pilot], Awaitable[None]]


def snap(snap_compare: Callable[..., bool], scene: Scene) -> bool:
    """Whether `scene` looks as its stored picture does (its text cursors steady)."""

    async def run_before(pilot: Pilot) -> None:
        await scene.run_before(pilot)
        steady_cursors(pilot.app)

    return bool(snap_compare(scene.app(), terminal_size=scene.size, run_before=run_before))


def steady_cursors(app: App[Any]) -> None:
    """Stop the text cursors of the screen blinking, shown: a blink is not a look, and a picture
    taken more than half a second after the last key (a loaded machine) would catch it off."""
    for box in app.screen.query("Input, TextArea"):
        assert isinstance(box, Input | TextArea)
        box.cursor_blink = False


# -- a recorded dashboard that can be answered -------------------------------------------------


ASKED: dict[tuple[str, str], asyncio.Task[PermissionAnswer]] = {}
"""The `ask` of each request put to a `LiveRun`'s questions (kept, so a waiting ask lives on)."""


def ask(live: LiveRun, request: PermissionRequest) -> asyncio.Task[PermissionAnswer]:
    """Put `request` to `live`'s questions as the engine would (its events are in the state)."""
    task = asyncio.ensure_future(live.questions.ask(request))
    ASKED[(request.session_id, request.request_id)] = task
    return task


def park_pending(live: LiveRun, state: DashboardState) -> None:
    """Put every request pending in `state` to `live`'s questions, as the engine would."""
    for view in state.pending_permissions():
        ask(
            live,
            PermissionRequest(
                session_id=view.session_id,
                turn_id=view.turn_id,
                request_id=view.request_id,
                tool_call_id=view.tool_call_id,
                tool=view.tool,
                risk=view.risk or "execute",  # type: ignore[arg-type]
                args_preview=view.args_preview,
                args={},
                agent_path=state.agent_path(view.session_id),
                warning=view.reason,
            ),
        )


# -- reading the screen and the logs -----------------------------------------------------------


def detail_text(app: App[Any]) -> str:
    """The text of the detail panel of the app's main screen (the dashboard or the replay)."""
    screen = app.screen_stack[0]
    return "\n".join(str(widget.content) for widget in screen.query("#detail Static").results(Static))


def log_of(app: AgentTuiApp, session_id: str) -> list[dict[str, Any]]:
    """The lines of a live session's log, as the engine wrote them."""
    assert app.live is not None
    path = app.live.sessions_dir / f"{session_id}.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def pin_scene(
    module_globals: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """For a module's autouse fixture: local time is UTC (the pictures show clock times), HOME is
    restored after the test, and the module's `SCENE_BASE` is the test's own directory."""
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("HOME", os.environ.get("HOME", "/"))  # restored after the test
    time.tzset()
    module_globals["SCENE_BASE"] = tmp_path
    yield
    module_globals["SCENE_BASE"] = None
    time.tzset()
