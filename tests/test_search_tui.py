"""The dashboard's search screen: `F` (or the palette), type, results appear, `enter` opens the
scrubber at that event; and its pictures at 80x24 and 120x40.

Real logs (the fixture run copied to `tmp_path`, or a scratch directory for the pictures, with
fixed modification times so the newest-first order is fixed), a real index file.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from support_tui import Scene, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import type_text, wait_for
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.search import SearchScreen
from agent_tui.tui.screens.search_replay import SearchReplayScreen
from agent_tui.tui.widgets.summary_bar import SummaryBar

COMPLETE_LOGS = Path(__file__).parent / "sample-logs" / "complete"


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def copy_logs(directory: Path) -> Path:
    """The fixture run in `directory/sessions`, each log a minute newer than the one before."""
    sessions = directory / "sessions"
    sessions.mkdir(parents=True)
    for number, path in enumerate(sorted(COMPLETE_LOGS.glob("*.jsonl"))):
        shutil.copy(path, sessions / path.name)
        moment = 1_790_000_000 + 60 * number
        os.utime(sessions / path.name, (moment, moment))
    return sessions


def search_app(directory: Path) -> AgentTuiApp:
    sessions = copy_logs(directory)
    return AgentTuiApp(events=[], live=False, search_dir=sessions, search_index=directory / "index.sqlite3")


def scratch_search_app() -> AgentTuiApp:
    directory = Path(tempfile.mkdtemp(prefix="agent-tui-search-"))
    atexit.register(shutil.rmtree, directory, True)
    return search_app(directory)


def search_screen(pilot: Pilot) -> SearchScreen:
    screen = pilot.app.screen
    assert isinstance(screen, SearchScreen), screen
    return screen


async def searched(pilot: Pilot, query: str) -> SearchScreen:
    """`F`, the index caught up, `query` typed and answered."""
    await pilot.press("F")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SearchScreen), "the search screen")
    screen = search_screen(pilot)
    await wait_for(pilot, lambda: screen.synced, "the index")
    await type_text(pilot, query)
    await wait_for(
        pilot,
        lambda: screen.results is not None and screen.results.query.text == query,
        f"the answer to {query!r}",
    )
    await pilot.pause()
    return screen


def typed(query: str):
    async def run_before(pilot: Pilot) -> None:
        await searched(pilot, query)

    return run_before


SCENES: dict[str, Scene] = {
    "search_80x24": Scene(scratch_search_app, (80, 24), typed("foo*")),
    "search_120x40": Scene(scratch_search_app, (120, 40), typed("foo*")),
}


class TestLooks:
    def test_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["search_80x24"])

    def test_120x40(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["search_120x40"])


@pytest.mark.anyio
async def test_type_see_results_and_open_the_scrubber_at_that_event(tmp_path: Path) -> None:
    app = search_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await searched(pilot, '"every import"')
        assert [(hit.session_name, hit.kind) for hit in screen.hits] == [
            ("lead", "prompt"),
            ("lead", "answer"),
        ]
        assert screen.hits[0].sequence < screen.hits[1].sequence  # in log order within a session
        options = screen.query_one("#search-results", OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert any("every import" in line and "prompt" in line for line in shown)
        await pilot.press("enter")  # from the box to the first result
        assert app.focused is options
        await pilot.press("down", "enter")  # the second result
        hit = screen.hits[1]
        await wait_for(pilot, lambda: isinstance(app.screen, SearchReplayScreen), "the scrubber")
        replay = app.screen
        assert isinstance(replay, SearchReplayScreen)
        await wait_for(pilot, lambda: replay.arrived, "the hit's event")
        timeline = replay.timeline
        assert timeline is not None
        event = timeline.event_at(replay.position - 1)
        assert event is not None
        assert (event.session_id, event.sequence) == (hit.session_id, hit.sequence)
        assert replay.session_tree.selected_id == hit.session_id
        # Its notices show in its own summary bar (the dashboard's is under it).
        await pilot.press("g", *"999999", "enter")
        await wait_for(
            pilot, lambda: "no sequence 999999" in replay.query_one("#summary", SummaryBar).notice, "a notice"
        )
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("escape", "escape")  # the results, the box, then the dashboard
        assert app.screen is app.dashboard


@pytest.mark.anyio
async def test_the_palette_and_no_matches(tmp_path: Path) -> None:
    app = search_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        names = [command.name for command in app.dashboard.palette_commands()]
        assert "Search sessions…" in names
        next(
            command for command in app.dashboard.palette_commands() if command.name == "Search sessions…"
        ).run()
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen), "the search screen")
        screen = search_screen(pilot)
        await wait_for(pilot, lambda: screen.synced, "the index")
        await type_text(pilot, "zebracorn")
        await wait_for(pilot, lambda: screen.answered > 0, "an answer")
        status = screen.query_one("#search-status")
        assert "No matches for 'zebracorn'." in str(status.render())
        screen.query_one("#search-input", Input).value = '"open'
        await wait_for(pilot, lambda: "never closed" in str(status.render()), "the quote's error")


@pytest.mark.anyio
async def test_a_log_growing_while_the_screen_is_open_is_found(tmp_path: Path) -> None:
    app = search_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await searched(pilot, "platypus")
        assert screen.hits == []
        log = sorted((tmp_path / "sessions").glob("*.jsonl"))[0]
        last = orjson.loads(log.read_bytes().splitlines()[-1])
        line = {**last, "id": "evt_new", "sequence": last["sequence"] + 1, "type": "user.message"}
        line["payload"] = {"content": "a platypus \x1b]0;owned\x07 \x1b[2J here"}
        with log.open("ab") as handle:
            handle.write(orjson.dumps(line) + b"\n")
        await wait_for(pilot, lambda: bool(screen.hits), "the appended line", seconds=20)
        assert screen.hits[0].sequence == line["sequence"]
        options = screen.query_one("#search-results", OptionList)
        text = "".join(str(options.get_option_at_index(i).prompt) for i in range(options.option_count))
        assert "\x1b" not in text and "\x07" not in text
        assert "␛]0;owned␇" in text


@pytest.mark.anyio
async def test_keys_typed_in_one_burst_after_F_are_typed_in_the_search_box(tmp_path: Path) -> None:
    app = search_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        for key, character in [
            ("F", "F"),
            *((c, c) for c in "quick"),
            ("space", " "),
            *((c, c) for c in "fix"),
        ]:
            app.post_message(events.Key(key, character))  # `q` would quit, `x` stop, were they commands
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen), "the search screen")
        box = app.screen.query_one("#search-input", Input)
        await wait_for(pilot, lambda: box.value == "quick fix", "the typed words")
        assert app.is_running


@pytest.mark.anyio
async def test_without_a_directory_of_logs_F_says_so() -> None:
    app = AgentTuiApp(events=[], live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("F")
        await pilot.pause()
        assert app.screen is app.dashboard
        assert app.notices[-1].message == "These sessions have no directory of logs to search."
