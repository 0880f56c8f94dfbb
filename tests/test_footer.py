"""The footer at 80 columns: every screen says how to quit and how to get help, with its most
used keys; the keys left out of it are still in the help and the command palette.

The footer is read as it is painted: each key's text at its place, clipped to the footer, the
command-palette key (docked right) over whatever runs under it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support_workbench import armed, recorded_app, settle, wait_for
from textual.app import App
from textual.widgets import Footer, Static

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.help import HelpScreen
from agent_tui.tui.widgets.composer import Composer

SAMPLES = Path(__file__).parent / "sample-logs"
NARROW = (80, 24)

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("home_in_tmp")]
QUIT_AND_HELP = ("q Quit", "? Help")
QUIT_AND_HELP_IN_TEXT = ("^q Quit", "f1 Help")  # where q and ? type


def footer_text(app: App[Any]) -> str:
    """The footer row as the user sees it (of the top screen that has a footer)."""
    screen = next(s for s in reversed(app.screen_stack) if s.query(Footer))
    footer = screen.query_one(Footer)
    area = footer.region
    row = [" "] * area.width
    keys = list(footer.query("FooterKey"))  # by its name: Textual does not export the class
    keys.sort(key=lambda key: key.has_class("-command-palette"))  # painted last, over the rest
    for key in keys:
        shown = key.content_region.intersection(area)
        if not shown.width:
            continue
        text = str(key.render())[shown.x - key.content_region.x :][: shown.width]
        start = shown.x - area.x
        row[start : start + len(text)] = text
    return "".join(row)


def assert_shows(app: App[Any], *wanted: str) -> None:
    text = footer_text(app)
    missing = [key for key in wanted if key not in text]
    assert not missing, f"{missing} not in the footer: {text!r}"


def workbench(tmp_path: Path) -> AgentTuiApp:
    return recorded_app(tmp_path)


class TestEveryScreenSaysHowToQuitAndGetHelp:
    async def test_the_dashboard(self) -> None:
        app = AgentTuiApp(events=[], live=False)
        async with app.run_test(size=NARROW) as pilot:
            await settle(pilot)
            assert_shows(app, *QUIT_AND_HELP, "n New agent", "i Talk", "a Approvals", "x Stop")

    async def test_the_workbench(self, tmp_path: Path) -> None:
        app = workbench(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            assert_shows(app, *QUIT_AND_HELP, "n New agent", "i Talk", "a Approvals", "x Stop")

    async def test_the_replay(self) -> None:
        app = ReplayApp(sorted((SAMPLES / "complete").glob("*.jsonl")))
        async with app.run_test(size=NARROW) as pilot:
            await wait_for(pilot, lambda: app.replay.loaded, "the replay")
            assert_shows(app, *QUIT_AND_HELP, "space Play/pause", "f Follow", "g Go to")

    async def test_dialogs_have_no_footer_of_their_own_so_the_screens_shows(self, tmp_path: Path) -> None:
        app = workbench(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            for open_it in ("question_mark", "A", "n"):
                await pilot.press(open_it)
                await settle(pilot)
                assert app.screen.is_modal and not app.screen.query(Footer)
                assert_shows(app, *QUIT_AND_HELP)
                await pilot.press("escape")
                await settle(pilot)


class TestInATextBox:
    """There q and ? type; ctrl+q and f1 work everywhere, and the footer says so."""

    async def test_the_composer(self, tmp_path: Path) -> None:
        app = workbench(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            await pilot.press("i")
            await settle(pilot)
            assert_shows(app, *QUIT_AND_HELP_IN_TEXT)
            assert "q Quit" not in footer_text(app).replace("^q Quit", "")
            await pilot.press("f1")
            await settle(pilot)
            assert isinstance(app.screen, HelpScreen)

    async def test_the_tree_filter(self, tmp_path: Path) -> None:
        app = workbench(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await settle(pilot)
            assert_shows(app, *QUIT_AND_HELP_IN_TEXT)

    async def test_the_replay_prompt(self) -> None:
        app = ReplayApp(sorted((SAMPLES / "complete").glob("*.jsonl")))
        async with app.run_test(size=NARROW) as pilot:
            await wait_for(pilot, lambda: app.replay.loaded, "the replay")
            await pilot.press("g")
            await settle(pilot)
            assert_shows(app, *QUIT_AND_HELP_IN_TEXT)

    async def test_ctrl_q_quits_from_the_composer(self, tmp_path: Path) -> None:
        app = workbench(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            await pilot.press("i")
            await settle(pilot)
            await pilot.press("ctrl+q")  # agents run there: it asks first, as q does
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
            await pilot.press("y")
            await wait_for(pilot, lambda: app.return_code == 0, "quit")


class TestKeysLeftOutOfTheFooter:
    """`X`, `f` and `S` are not in the dashboard's footer; the help and the palette have them."""

    async def test_are_in_the_help_and_the_palette(self, tmp_path: Path) -> None:
        app = workbench(tmp_path)
        async with app.run_test(size=(200, 50)) as pilot:
            await armed(pilot)
            footer = footer_text(app)
            for key in ("X Stop all", "f Follow", "S State"):
                assert key not in footer
            commands = [command.name for command in app.dashboard.palette_commands()]
            for name in ("Stop all sessions", "Toggle follow", "Cycle state filter", "Filter sessions"):
                assert name in commands
            await pilot.press("question_mark")
            await settle(pilot)
            help_text = "\n".join(str(s.content) for s in app.screen.query(Static))
            for words in ("stop every session", "follow: keep the newest line", "state filter"):
                assert words in help_text


async def test_the_footer_reads_as_painted() -> None:
    app = AgentTuiApp(events=[], live=False)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        text = footer_text(app)
        assert text.rstrip().endswith("^p palette") and len(text) == 80


class TestSlashInATextBox:
    """`/` types in a text box, so the footer does not offer it as the filter there."""

    async def test_the_composer_types_it_and_the_footer_leaves_it_out(self, tmp_path: Path) -> None:
        app = workbench(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            assert_shows(app, "/ Filter")
            await pilot.press("i")
            await settle(pilot)
            assert "/ Filter" not in footer_text(app)
            await pilot.press("slash")
            await settle(pilot)
            assert app.query_one(Composer).text == "/"
            await pilot.press("escape")
            await settle(pilot)
            assert_shows(app, "/ Filter")

    async def test_the_replay_prompt_leaves_out_filter_and_go_to(self) -> None:
        app = ReplayApp(sorted((SAMPLES / "complete").glob("*.jsonl")))
        async with app.run_test(size=NARROW) as pilot:
            await wait_for(pilot, lambda: app.replay.loaded, "the replay")
            assert_shows(app, "/ Filter", "g Go to")
            await pilot.press("slash")
            await settle(pilot)
            text = footer_text(app)
            assert "/ Filter" not in text and "g Go to" not in text
