""" "Allow for this session" survives reopening the session: a new engine (a new process) that
reopens the log gives the user's session answers back, so the next turn is not asked again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support_engine import collect, make_engine, steps

from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest, PolicyConfig
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.store import JsonlEventLog, JsonlFileEventStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Answering:
    """A person at the dialog: answers each question with `answer`, and counts them."""

    def __init__(self, answer: PermissionAnswer) -> None:
        self.answer = answer
        self.asked: list[PermissionRequest] = []

    async def ask(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request)
        return self.answer


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"text": ["on it"], "toolCalls": [{"tool": tool, "args": args}]}


async def turn(tmp_path: Path, prompter: Answering, sid: str | None, *spec: dict[str, Any]) -> str:
    """One turn in a fresh engine (a new process): it reopens `sid`, or creates the session."""
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, policy=PolicyConfig(default="ask"), approve=None)
    engine.questions.answerer = prompter.ask
    async with engine:
        if sid is None:
            sid = await engine.create_session(tmp_path / "work")
        else:
            await engine.open_session(sid)
        provider.assign(sid, steps(*spec, {"text": ["done"]}))
        await collect(engine.run_turn(sid, "go"))
    engine.store.close()  # the process ends: its logs' locks go
    return sid


def resolutions(tmp_path: Path, sid: str) -> list[tuple[str, str, str | None]]:
    events = JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay("strict")
    return [
        (e.payload["decision"], e.payload["actor"], e.payload.get("policy"))
        for e in events
        if e.type == "permission.resolved"
    ]


async def test_allow_for_this_session_is_not_asked_again_after_reopening(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    first = Answering(PermissionAnswer("allow", remember="session"))
    sid = await turn(tmp_path, first, None, call("write_file", path="a.txt", content="a\n"))
    assert len(first.asked) == 1

    later = Answering(PermissionAnswer("deny"))
    await turn(tmp_path, later, sid, call("write_file", path="b.txt", content="b\n"))
    assert later.asked == []  # the session's answer decided it
    assert (tmp_path / "work" / "b.txt").read_text() == "b\n"
    assert resolutions(tmp_path, sid)[-1] == ("allow", "policy", "session:write_file")

    # and a third process still knows it (the restored answer is in memory, not re-logged)
    third = Answering(PermissionAnswer("deny"))
    await turn(tmp_path, third, sid, call("write_file", path="c.txt", content="c\n"))
    assert third.asked == []


async def test_a_restored_answer_covers_only_its_own_key_and_once_is_not_kept(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "x").write_text("x\n")
    first = Answering(PermissionAnswer("allow", remember="session"))
    sid = await turn(tmp_path, first, None, call("shell", cmd="touch made"))
    assert len(first.asked) == 1

    later = Answering(PermissionAnswer("deny"))
    await turn(tmp_path, later, sid, call("shell", cmd="rm x"))
    assert [r.tool for r in later.asked] == ["shell"]  # `rm` is not `touch`: asked
    assert (tmp_path / "work" / "x").exists()

    once = Answering(PermissionAnswer("allow"))  # "allow once" in another session
    other = await turn(tmp_path, once, None, call("write_file", path="d.txt", content="d\n"))
    again = Answering(PermissionAnswer("deny"))
    await turn(tmp_path, again, other, call("write_file", path="e.txt", content="e\n"))
    assert len(again.asked) == 1


async def test_deny_for_this_session_is_restored_too(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    first = Answering(PermissionAnswer("deny", remember="session"))
    sid = await turn(tmp_path, first, None, call("write_file", path="a.txt", content="a\n"))
    later = Answering(PermissionAnswer("allow"))
    await turn(tmp_path, later, sid, call("write_file", path="b.txt", content="b\n"))
    assert later.asked == []
    assert not (tmp_path / "work" / "b.txt").exists()
    assert resolutions(tmp_path, sid)[-1] == ("deny", "policy", "session:write_file")


async def test_the_dialog_says_that_always_for_spawn_agent_allows_every_later_spawn() -> None:
    from support_events import build_event
    from textual.app import App
    from textual.widgets import Static

    from agent_tui.reducer import project_state
    from agent_tui.tui.screens.approval import ApprovalScreen

    def asked(tool: str, sid: str) -> list[Any]:
        args = {"agentName": "helper", "prompt": "look"} if tool == "spawn_agent" else {"path": "a"}
        return [
            build_event(1, "session.created", session_id=sid, parentSessionId=None),
            build_event(2, "turn.started", session_id=sid),
            build_event(3, "model.tool_call_requested", session_id=sid, tool=tool, args=args),
            build_event(4, "permission.requested", session_id=sid, tool=tool, risk="write"),
            build_event(
                5, "permission.resolved", session_id=sid, decision="ask", actor="policy", remember=None
            ),
        ]

    app: App[None] = App()
    async with app.run_test(size=(110, 36)) as pilot:
        state = project_state(asked("spawn_agent", "s1") + asked("write_file", "s2"))
        spawn, write = sorted(state.pending_permissions(), key=lambda v: v.session_id)
        app.push_screen(ApprovalScreen(state, spawn, answerable=True))
        await pilot.pause()
        reach = str(app.screen.query_one("#approval-reach", Static).render())
        assert "! every future spawn_agent in this project" in reach and "any agent, any prompt" in reach
        assert "s allows every spawn_agent in this session" in reach
        app.pop_screen()
        app.push_screen(ApprovalScreen(state, write, answerable=True))
        await pilot.pause()
        assert not app.screen.query("#approval-reach")


async def test_answers_in_a_log_inside_the_project_are_not_restored(tmp_path: Path) -> None:
    """A sessions directory inside the project may hold logs that came with the repository (or
    that an agent wrote): their "for this session" answers are not the user's word."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    sessions = project / ".logs"

    def engine_with(prompter: Answering, provider: ScriptedProvider) -> Any:
        engine = make_engine(
            tmp_path,
            provider,
            policy=PolicyConfig(default="ask"),
            approve=None,
            store=JsonlFileEventStore(sessions),
        )
        engine.questions.answerer = prompter.ask
        return engine

    provider = ScriptedProvider()
    first = Answering(PermissionAnswer("allow", remember="session"))
    async with engine_with(first, provider) as engine:
        sid = await engine.create_session(project / "src")
        provider.assign(sid, steps(call("write_file", path="a.txt", content="a\n"), {"text": ["done"]}))
        await collect(engine.run_turn(sid, "go"))
    engine.store.close()
    assert len(first.asked) == 1

    provider = ScriptedProvider()
    later = Answering(PermissionAnswer("deny"))
    async with engine_with(later, provider) as engine:
        hydration = await engine.open_session(sid)
        provider.assign(sid, steps(call("write_file", path="b.txt", content="b\n"), {"text": ["done"]}))
        await collect(engine.run_turn(sid, "go"))
    engine.store.close()
    assert [request.tool for request in later.asked] == ["write_file"]  # asked again
    assert not (project / "src" / "b.txt").exists()
    assert hydration.answers_note is not None
    assert "1 answer" in hydration.answers_note and "inside the project" in hydration.answers_note
    assert "inside the project" in hydration.describe()
