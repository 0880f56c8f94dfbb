"""Keys that arrive in one burst (a fast typist, a paste, a terminal sending several at once).

A key that opens a text box moves the focus before the next key is handled, so the rest of the
burst is typed there instead of running as commands (`q` quitting, `x` stopping an agent); the
new-agent form is mounted, its prompt focused, before the keys typed after `n` are read. `escape`
leaves a text box before the next key too, and nothing read after `q` runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support_workbench import armed, recorded_app, settle, wait_for
from textual import events
from textual.app import App
from textual.widgets import Input, TextArea

from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.screens.help import HelpScreen
from agent_tui.tui.screens.new_agent import NewAgentScreen
from agent_tui.tui.widgets.composer import Composer
from agent_tui.tui.widgets.replay_prompt import ReplayPrompt

NARROW = (80, 24)
SAMPLES = Path(__file__).parent / "sample-logs"
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("home_in_tmp")]


def burst(app: App[Any], text: str, first: str | None = None) -> None:
    """Queue `first` (a key name) and then `text`, character by character, all before any is handled."""
    keys = ([(first, None)] if first else []) + [("space" if c == " " else c, c) for c in text]
    for key, character in keys:
        app.post_message(events.Key(key, character))


class TestABurstAfterAKeyThatOpensATextBox:
    async def test_i_then_text_types_it_all_into_the_composer(self, tmp_path: Path) -> None:
        app = recorded_app(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            burst(app, "quick question, next", first="i")
            await settle(pilot)
            assert app.is_running
            assert app.screen is app.screen_stack[0]  # no dialog opened by the `n`s
            assert app.screen.query_one(Composer).text == "quick question, next"

    async def test_n_then_text_types_it_all_into_the_new_agents_prompt(self, tmp_path: Path) -> None:
        app = recorded_app(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            burst(app, "fix the quick bug", first="n")
            await settle(pilot)
            assert app.is_running
            assert isinstance(app.screen, NewAgentScreen)
            assert app.screen.query_one("#new-agent-prompt", TextArea).text == "fix the quick bug"

    async def test_slash_then_text_types_it_all_into_the_tree_filter(self, tmp_path: Path) -> None:
        app = recorded_app(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await settle(pilot)
            burst(app, "quiet fix", first="slash")
            await settle(pilot)
            assert app.is_running and app.screen is app.screen_stack[0]
            assert app.screen.query_one("#tree-filter", Input).value == "quiet fix"

    async def test_in_the_replay_g_and_slash_then_text_type_into_the_prompt(self) -> None:
        app = ReplayApp(sorted((SAMPLES / "complete").glob("*.jsonl")))
        async with app.run_test(size=NARROW) as pilot:
            await wait_for(pilot, lambda: app.replay.loaded, "the replay")
            burst(app, "12", first="g")
            await settle(pilot)
            prompt = app.screen.query_one(ReplayPrompt)
            assert (prompt.kind, prompt.value) == ("goto", "12")
            await pilot.press("escape")
            await settle(pilot)
            burst(app, "quit", first="slash")
            await settle(pilot)
            assert app.is_running
            assert (prompt.kind, prompt.value) == ("filter", "quit")

    async def test_in_the_composer_the_opening_keys_are_typed_not_run(self, tmp_path: Path) -> None:
        app = recorded_app(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            await pilot.press("i")
            await settle(pilot)
            burst(app, "i/g i")
            await settle(pilot)
            assert app.screen.query_one(Composer).text == "i/g i"
            assert not app.screen.query_one("#tree-filter", Input).has_focus


class TestABurstAfterEscape:
    """`escape` leaves a text box for the tree before the next key: the rest are commands again."""

    async def test_escape_then_a_leaves_the_composer_and_opens_the_queue(self, tmp_path: Path) -> None:
        app = recorded_app(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            burst(app, "draft", first="i")
            await settle(pilot)
            burst(app, "a", first="escape")
            await settle(pilot)
            assert app.screen.query_one(Composer).text == "draft"  # kept, and no `a` typed in it
            assert app.dashboard.queue.has_focus

    async def test_escape_then_a_clears_the_tree_filter_and_opens_the_queue(self, tmp_path: Path) -> None:
        app = recorded_app(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await settle(pilot)
            burst(app, "fix", first="slash")
            await settle(pilot)
            burst(app, "a", first="escape")
            await settle(pilot)
            assert app.screen.query_one("#tree-filter", Input).value == ""
            assert app.dashboard.queue.has_focus


class TestABurstAfterQuit:
    async def test_keys_after_q_open_nothing_while_the_app_closes(self, tmp_path: Path) -> None:
        app = recorded_app(tmp_path)
        opened: list[str] = []
        push = app.push_screen

        def recording_push(screen: Any, *args: Any, **kwargs: Any) -> Any:
            opened.append(type(screen).__name__)
            return push(screen, *args, **kwargs)

        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)  # a live run: quitting waits for it to shut down
            app.push_screen = recording_push  # type: ignore[method-assign]
            burst(app, "yn?", first="q")  # agents run: q asks, y answers, then two stray keys
            await settle(pilot)
        assert app.return_code == 0
        assert opened == ["ConfirmScreen"]  # the question, and nothing the stray keys would open


class TestQInADialog:
    """`q` quits from the screens; in a dialog it is the dialog's (the help closes) or nothing."""

    async def test_q_closes_the_help_and_does_nothing_in_a_request(self, tmp_path: Path) -> None:
        app = recorded_app(tmp_path)
        async with app.run_test(size=NARROW) as pilot:
            await armed(pilot)
            await pilot.press("question_mark")
            await settle(pilot)
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("q")
            await settle(pilot)
            assert app.is_running and app.screen is app.screen_stack[0]
            await pilot.press("A")
            await settle(pilot)
            request = app.screen
            assert request.is_modal
            await pilot.press("q")
            await settle(pilot)
            assert app.is_running and app.screen is request
