"""The dashboard and a session another process writes: the follow-up is refused in the composer
with who holds the session (the text kept, nothing written), and goes through once that process
is gone; a session another process wrote after this dashboard read it is refused, not forked;
one being written elsewhere when the dashboard opened is shown and left alone."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from store_writer import Writer
from support_tui import log_of
from support_workbench import agent_script, scripted_models, type_text, wait_for
from textual.widgets import Static

from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.runtime.workbench import SendRefused, Workbench
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.widgets.composer import Composer

pytestmark = pytest.mark.anyio


def make_app(tmp_path: Path, provider: ScriptedProvider, *, prompt: str | None = None) -> AgentTuiApp:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return AgentTuiApp(
        sessions_dir=tmp_path / "sessions", project=project, models=scripted_models(provider), prompt=prompt
    )


def turns_of(app: AgentTuiApp, session_id: str) -> int:
    return sum(1 for event in log_of(app, session_id) if event["type"] == "turn.completed")


async def one_session(tmp_path: Path) -> str:
    """A stored session `fix-it` with one finished turn (its dashboard closed again)."""
    provider = ScriptedProvider(agents={"fix-it": agent_script(Step(text=["First answer."]))})
    app = make_app(tmp_path, provider, prompt="Fix it")
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.live is not None
        live = app.live
        await wait_for(
            pilot, lambda: any(s.status == "completed" for s in live.state.sessions.values()), "turn 1"
        )
        sid = next(iter(live.state.sessions))
        await pilot.press("q")
    return sid


async def test_a_follow_up_on_a_session_another_process_holds_is_refused_with_the_text_kept(
    tmp_path: Path,
) -> None:
    sid = await one_session(tmp_path)
    holder = Writer(tmp_path / "sessions", sid)
    try:
        assert holder.ask("claim") == "claimed"
        app = make_app(tmp_path, ScriptedProvider())
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(
                pilot, lambda: app.dashboard.session_tree.visible_ids == [sid], "the stored session"
            )
            app.dashboard.select_session(sid)
            await pilot.pause()
            before = log_of(app, sid)
            await pilot.press("i")
            await type_text(pilot, "And the docs?")
            await pilot.press("enter")
            composer = app.dashboard.query_one("#composer", Composer)
            await wait_for(pilot, lambda: composer.reason is not None, "the refusal")
            assert composer.text == "And the docs?"
            assert composer.reason is not None
            assert composer.reason.startswith(f"This session is open in agent-tui pid {holder.pid} since ")
            assert "one process writes a session at a time" in composer.reason
            note = str(composer.query_one("#composer-note", Static).content)
            assert "not sent" in note and f"pid {holder.pid}" in note
            assert log_of(app, sid) == before  # nothing was written

            os.kill(holder.pid, signal.SIGKILL)  # the other process is gone: its lock with it
            holder.process.wait(timeout=30)
            await pilot.press("enter")
            await wait_for(pilot, lambda: turns_of(app, sid) == 2, "turn 2 once the holder is gone")
            assert composer.text == ""
            events = log_of(app, sid)
            assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
            await pilot.press("q")
    finally:
        holder.close()


async def test_a_session_written_elsewhere_after_it_was_read_is_refused_not_forked(tmp_path: Path) -> None:
    sid = await one_session(tmp_path)
    provider = ScriptedProvider(agents={"fix-it": agent_script(Step(text=["Second answer."]))})
    workbench = Workbench.for_project(
        project=tmp_path / "project",
        sessions_dir=tmp_path / "sessions",
        models=scripted_models(provider),
        questions=None,
    )
    async with workbench.serving():
        assert await workbench.hydrate(lambda event: None) == []
        other = Writer(tmp_path / "sessions", sid)
        try:
            last = int(other.ask("read").split()[1])
            assert other.ask("append 1") == f"wrote {last + 1} {last + 1}"
            refused = workbench.send(sid, "Again")
            assert isinstance(refused, SendRefused), refused
            assert refused.reason.startswith(f"This session is open in agent-tui pid {other.pid} since ")
            assert other.ask("release") == "released"
            refused = workbench.send(sid, "Again")
            assert isinstance(refused, SendRefused), refused
            assert "wrote to this session after this dashboard opened it" in refused.reason
            assert other.ask("claim") == "claimed"  # it let go again: the other process may go on
        finally:
            other.close()
    workbench.close_store()


async def test_a_session_being_written_elsewhere_at_start_is_shown_and_left_alone(tmp_path: Path) -> None:
    sid = await one_session(tmp_path)
    path = tmp_path / "sessions" / f"{sid}.jsonl"
    holder = Writer(tmp_path / "sessions", sid)
    try:
        last = int(holder.ask("read").split()[1])
        assert holder.ask("hold") == f"wrote {last + 1} {last + 1}"
        with open(path, "ab") as handle:  # its turn is open, and a line is half-way written
            handle.write(b'{"v":1,"id":"evt_x","sessionId"')
        before = path.read_bytes()
        provider = ScriptedProvider()
        workbench = Workbench.for_project(
            project=tmp_path / "project",
            sessions_dir=tmp_path / "sessions",
            models=scripted_models(provider),
            questions=None,
        )
        folded: list[str] = []
        async with workbench.serving():
            assert await workbench.hydrate(lambda event: folded.append(event.session_id)) == []
            assert folded and set(folded) == {sid}  # shown
            assert workbench.records[sid].held_elsewhere is not None
            refused = workbench.send(sid, "Again")
            assert isinstance(refused, SendRefused)
            assert refused.reason.startswith(f"This session is open in agent-tui pid {holder.pid} since ")
        workbench.close_store()
        assert path.read_bytes() == before  # its torn line was not cut, nothing was added
    finally:
        holder.close()


async def test_a_session_left_alone_at_start_says_so_once_its_writer_is_gone(tmp_path: Path) -> None:
    sid = await one_session(tmp_path)
    path = tmp_path / "sessions" / f"{sid}.jsonl"
    holder = Writer(tmp_path / "sessions", sid)
    try:
        assert holder.ask("claim") == "claimed"
        with open(path, "ab") as handle:
            handle.write(b'{"v":1,"id":"evt_x"')  # a line half-way written by the holder
        workbench = Workbench.for_project(
            project=tmp_path / "project",
            sessions_dir=tmp_path / "sessions",
            models=scripted_models(ScriptedProvider()),
            questions=None,
        )
        async with workbench.serving():
            assert await workbench.hydrate(lambda event: None) == []
            assert workbench.records[sid].held_elsewhere is not None
            assert holder.ask("release") == "released"
            refused = workbench.send(sid, "Again")
            assert isinstance(refused, SendRefused)
            assert refused.reason.startswith(f"This session was open in agent-tui pid {holder.pid} since ")
            assert "open the dashboard again" in refused.reason
            assert holder.ask("claim") == "claimed"  # the look let go at once
        workbench.close_store()
    finally:
        holder.close()
