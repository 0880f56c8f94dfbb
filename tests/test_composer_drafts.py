"""The composer keeps a draft per session, and `A` reaches the next request from the composer.

- Text typed for one agent stays that agent's: selecting another session shows that one's draft
  (or an empty box and its own hint), and coming back shows the first text again; a reply that
  arrives after the user moved on clears the draft of the session it was sent to, not the one
  shown.
- Right after a follow-up is sent the focus is still in the (now empty) composer, exactly when a
  request tends to arrive: `A` opens it rather than typing. Once the user types (or comes to the
  composer with `i`), or while no request waits, `A` types: "Also…" never opens a dialog whose
  keys would answer the request.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_workbench import agent_script, type_text, wait_for
from test_workbench_tui import completed_after, make_app, named, status, tool

from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.approval import ApprovalScreen
from agent_tui.tui.widgets.composer import Composer

pytestmark = pytest.mark.anyio


def composer_of(app: AgentTuiApp) -> Composer:
    return app.dashboard.query_one("#composer", Composer)


def note(app: AgentTuiApp) -> str:
    return str(composer_of(app).query_one("#composer-note").render())


async def test_each_session_keeps_its_own_draft(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        agents={
            "lead": agent_script(Step(text=["Lead here."])),
            "docs": agent_script(Step(text=["Docs here."]), Step(text=["More docs."])),
        }
    )
    app = make_app(tmp_path, provider, prompt="Lead")
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: status(app, "lead") == "completed", "lead")
        from agent_tui.runtime.workbench import AgentSpec

        await wait_for(pilot, lambda: live.workbench is not None, "the engine")
        docs = await live.workbench.start_agent(AgentSpec("Docs", live.project, name="docs"))  # type: ignore[union-attr,arg-type]
        await wait_for(pilot, lambda: status(app, "docs") == "completed", "docs")
        lead = named(app, "lead")
        assert lead is not None
        app.dashboard.select_session(lead)
        await pilot.press("i")
        await type_text(pilot, "more")
        assert composer_of(app).text == "more"
        await pilot.press("escape")
        app.dashboard.select_session(docs)
        await wait_for(pilot, lambda: "of docs" in note(app), "the docs hint")
        assert composer_of(app).text == ""  # "more" was typed for lead, not for docs
        assert "enter starts turn 2 of docs" in note(app)
        await pilot.press("i")
        await type_text(pilot, "And the index")
        await pilot.press("escape")
        app.dashboard.select_session(lead)
        await wait_for(pilot, lambda: "of lead" in note(app), "the lead hint")
        assert composer_of(app).text == "more"
        app.dashboard.select_session(docs)
        await wait_for(pilot, lambda: "of docs" in note(app), "the docs hint")
        assert composer_of(app).text == "And the index"
        # Sent to docs; lead selected before the reply: docs' draft goes, lead's stays.
        await pilot.press("i", "enter")
        app.dashboard.select_session(lead)
        await wait_for(pilot, lambda: completed_after(app, "docs", 2), "docs' turn 2")
        await wait_for(pilot, lambda: "of lead" in note(app), "the lead hint")
        assert composer_of(app).text == "more"
        app.dashboard.select_session(docs)
        await wait_for(pilot, lambda: "of docs" in note(app), "the docs hint")
        assert composer_of(app).text == ""
        await pilot.press("q")


async def test_A_right_after_a_follow_up_opens_the_request_and_types_in_a_draft(tmp_path: Path) -> None:
    write = tool("write_file", path="note.txt", content="x\n")
    provider = ScriptedProvider(
        agents={
            "fix-it": agent_script(
                Step(text=["First answer."]), Step(text=["Writing."], toolCalls=[write]), Step(text=["Done."])
            )
        }
    )
    app = make_app(tmp_path, provider, prompt="Fix it")
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: status(app, "fix-it") == "completed", "turn 1")
        await pilot.press("i")
        composer = composer_of(app)
        # No request waits: `A` types.
        await type_text(pilot, "A note")
        assert composer.text == "A note"
        composer.input.clear()
        await type_text(pilot, "Write it")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(live.questions.waiting()) == 1, "the write request")
        assert composer.input.has_focus and composer.text == ""
        # Just sent, a request waits: `A` opens it.
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval")
        assert composer.text == ""
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), "the approval closed")
        # Back in the composer (`i`), the request still waiting: typing "Also…" types it all.
        await pilot.press("i")
        await type_text(pilot, "Also say so")
        assert composer.text == "Also say so" and not isinstance(app.screen, ApprovalScreen)
        composer.input.clear()
        await pilot.press("A")  # emptied by hand, not by a send: still a letter
        assert composer.text == "A" and len(live.questions.waiting()) == 1
        await pilot.press("escape", "A", "y")
        await wait_for(pilot, lambda: completed_after(app, "fix-it", 2), "turn 2")
        await pilot.press("q")
