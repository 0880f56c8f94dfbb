"""Finishing an agent's work from an attached dashboard: a real `agent-tui serve` on a real
nats-server, its agents on a loopback model writing into real git worktrees, and the attached
side's commands (what the review screen and the reopen list give). Each action is done by the
host's workbench; the safety rules hold over the bus (a dirty checkout refused, a conflict found
before anything is written); a retried request id is done once; a stopped host is refused with a
sentence; a big review is cut and says so; and the review screen on an attached dashboard."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_model_server import FakeModelServer, Stream, openai_stream
from support_bus_host import RENAMING, Heard, control, host_env, reader, start_agent_tui, wait_for_line
from support_nats import NatsServer, nats_server
from support_providers import fake_model_server  # noqa: F401 - the `server` fixture
from support_workbench import git, wait_for

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import resolve_target
from agent_tui.bus.protocol import Caller, host_events
from agent_tui.bus.remote import BusCommands
from agent_tui.replay.sources import replay_all
from agent_tui.runtime.agent_requests import AgentSpec
from agent_tui.runtime.command_executor import Adapters, read_result
from agent_tui.runtime.commands import (
    Answer,
    Close,
    Closed,
    Command,
    Commit,
    Discard,
    Merge,
    NewAgent,
    PlanRewind,
    ReadReview,
    Reopen,
    Rewind,
    Turns,
)
from agent_tui.runtime.finishing import FinishRefused
from agent_tui.runtime.review import Review
from agent_tui.tui.attached import AttachedRun

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio

GREET = "def greet():\n    return 'hi'\n"
HOST = "box"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "tester@example.com")


@dataclass
class Served:
    """`agent-tui serve` on a project, and the bus as a dashboard reaches it."""

    project: Path
    sessions: Path
    process: subprocess.Popen[str]
    control: BusCommands
    heard: Heard
    model: FakeModelServer

    async def agent(self, prompt: str) -> str:
        """An agent in its own worktree that writes greet.py (its write answered from here)."""
        arguments = json.dumps({"path": "greet.py", "content": GREET})
        self.model.script(
            Stream(openai_stream(calls=[("w1", "write_file", [arguments])])), Stream(openai_stream(["Done."]))
        )
        started = await self.control.send(
            HOST, NewAgent.of(AgentSpec(prompt, self.project, own_worktree=True))
        )
        assert started.ok, started.message
        sid = str(started.detail["sessionId"])

        def asks(event: dict[str, Any]) -> bool:
            payload = event["payload"]
            return (
                event["sessionId"] == sid
                and event["type"] == "permission.resolved"
                and payload["decision"] == "ask"
            )

        ask = await self.heard.first(asks)
        answered = await self.control.send(
            HOST, Answer(sessionId=sid, requestId=ask["payload"]["requestId"], decision="allow")
        )
        assert answered.ok, answered.message
        await self.heard.first(lambda e: e["sessionId"] == sid and e["type"] == "turn.completed")
        return sid


def shop(tmp_path: Path) -> Path:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "README.md").write_text("# shop\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    return project


@asynccontextmanager
async def serving(url: str, tmp_path: Path, model: FakeModelServer) -> AsyncIterator[Served]:
    project = shop(tmp_path)
    sessions = tmp_path / "served"
    flags = ["--provider", "openai", "--model", "test-model", "--base-url", model.openai_url]
    args = ["serve", "--bus", url, "--sessions-dir", str(sessions), "--cwd", str(project), "--host", HOST]
    process = start_agent_tui([*args, *flags], host_env(tmp_path))
    client, _ = await reader(url)
    heard = Heard()
    try:
        await asyncio.to_thread(wait_for_line, process, f"host {HOST} serves")
        await client.subscribe(host_events(HOST), cb=heard.hear)
        await client.flush()
        caller = Caller(dashboard="laptop", user="ana", host="laptop-machine")
        yield Served(project, sessions, process, BusCommands(client, caller, timeout=60), heard, model)
    finally:
        await client.close()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)


@asynccontextmanager
async def attached(url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[AttachedRun]:
    """An attached dashboard's run (the screens' side of it), its bus open."""
    monkeypatch.setenv("AGENT_TUI_CONFIG", host_env(tmp_path)["AGENT_TUI_CONFIG"])
    bus = AttachedBus(resolve_target(url))
    run = AttachedRun(bus, post=lambda _message: None)
    await bus.open()
    try:
        yield run
    finally:
        await bus.close()


async def until(run: AttachedRun, condition: Callable[[], bool]) -> None:
    """Wait for the bus to tell a change after which `condition()` holds."""
    changed = asyncio.Event()
    undo = run.bus.listen(lambda _event: changed.set())
    try:
        async with asyncio.timeout(60):
            while not condition():
                await changed.wait()
                changed.clear()
    finally:
        undo()


@dataclass
class Finished:
    """A host whose agent wrote greet.py in its worktree, and an attached dashboard's side."""

    host: Served
    run: AttachedRun
    sid: str

    async def ask(self, command: Command, key: str) -> Any:
        """What the host gives back for `command` (as the screens read it), or `FinishRefused`."""
        return read_result(await self.run.commands.send(command), getattr(Adapters, key), key)

    async def review(self) -> Review:
        return await self.ask(ReadReview(sessionId=self.sid), "review")


@asynccontextmanager
async def an_agents_work(
    url: str, tmp_path: Path, model: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Finished]:
    async with serving(url, tmp_path, model) as host, attached(url, monkeypatch, tmp_path) as run:
        sid = await host.agent("Add a greeting")
        await until(run, lambda: run.bus.host_of(sid) == HOST and run.bus.host(HOST).reachable)
        yield Finished(host, run, sid)


def branches(project: Path) -> list[str]:
    return git(project, "branch", "--format=%(refname:short)").split()


async def test_each_finishing_action_from_an_attached_dashboard_is_done_by_the_hosts_workbench(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with an_agents_work(nats_server.url, tmp_path, server, monkeypatch) as work:
        host, sid = work.host, work.sid

        review = await work.review()
        assert (review.kind, review.base_label[:8], review.message) == (
            "worktree",
            "main at ",
            "Add a greeting",
        )
        assert [(f.path, f.status, f.new_text) for f in review.files] == [("greet.py", "added", GREET)]
        assert review.cut is None and review.uncommitted == 1
        worktree = review.root
        (turn,) = await work.ask(Turns(sessionId=sid), "turns")

        plan = await work.ask(PlanRewind(sessionId=sid, turnId=turn.turn_id), "plan")
        assert [(f.shown, f.action, f.before) for f in plan.files] == [("greet.py", "removed", None)]
        rewound = await work.ask(Rewind(sessionId=sid, turnId=turn.turn_id), "rewind")
        assert [(f.path, f.action) for f in rewound.files] == [("greet.py", "removed")]
        assert not (worktree / "greet.py").exists()

        (worktree / "greet.py").write_text(GREET)  # the work again, by hand in its worktree
        committed = await work.ask(Commit(sessionId=sid, message="Add greet.py"), "commit")
        assert committed.files == 1
        assert git(worktree, "log", "-1", "--format=%s %H").split() == ["Add", "greet.py", committed.commit]

        (host.project / "README.md").write_text("# my own edit\n")
        with pytest.raises(
            FinishRefused, match=r"your checkout of main \(.*\) has uncommitted changes \(README.md\)"
        ):
            await work.ask(Merge(sessionId=sid), "merge")
        assert (host.project / "README.md").read_text() == "# my own edit\n"  # never stashed, never touched
        git(host.project, "checkout", "--", "README.md")
        merged = await work.ask(Merge(sessionId=sid), "merge")
        assert (merged.into, merged.fast_forward, merged.commit) == ("main", True, committed.commit)
        assert (host.project / "greet.py").read_text() == GREET

        branch = review.branch
        assert branch in branches(host.project)
        assert (await work.run.commands.send(Discard(sessionId=sid))).ok
        assert not worktree.exists() and branch not in branches(host.project)

        assert [s.session_id for s in await work.ask(Closed(), "closed")] == [sid]
        assert await work.ask(Reopen(sessionId=sid), "problems") == []
        assert await work.ask(Closed(), "closed") == []
    (rewind_event,) = [e for e in replay_all(host.sessions) if e.type == "turn.rewound"]
    assert rewind_event.payload["files"] == [{"path": "greet.py", "action": "removed"}]


async def test_a_conflict_over_the_bus_is_found_before_anything_is_written(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with an_agents_work(nats_server.url, tmp_path, server, monkeypatch) as work:
        host, sid = work.host, work.sid
        await work.ask(Commit(sessionId=sid, message="Agent work"), "commit")
        (host.project / "greet.py").write_text("def greet():\n    return 'hello'\n")
        git(host.project, "add", "greet.py")
        git(host.project, "commit", "-q", "-m", "mine")
        main_before = git(host.project, "rev-parse", "main")
        with pytest.raises(FinishRefused, match=r"conflicts in greet\.py: nothing was merged"):
            await work.ask(Merge(sessionId=sid), "merge")
        assert git(host.project, "rev-parse", "main") == main_before
        assert not (host.project / ".git" / "MERGE_HEAD").exists()
        assert git(host.project, "status", "--porcelain", "--untracked-files=no") == ""


async def test_a_retried_commit_is_done_once_and_a_retried_merge_too_while_a_review_is_read_again(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer
) -> None:
    async with serving(nats_server.url, tmp_path, server) as host:
        sid = await host.agent("Add a greeting")
        client, _ = await reader(nats_server.url)
        try:
            read = await control(client, HOST, "review", request_id="r1", session_id=sid)
            (Path(read.detail["review"]["root"]) / "notes.txt").write_text("more\n")
            reread = await control(client, HOST, "review", request_id="r1", session_id=sid)
            assert [f["path"] for f in read.detail["review"]["files"]] == ["greet.py"]
            assert [f["path"] for f in reread.detail["review"]["files"]] == ["greet.py", "notes.txt"]
            first = await control(client, HOST, "commit", request_id="c1", session_id=sid, message="Work")
            again = await control(client, HOST, "commit", request_id="c1", session_id=sid, message="Work")
            assert first.ok and again == first  # the first reply, not a second commit
            other = await control(client, HOST, "commit", request_id="c2", session_id=sid, message="Work")
            assert not other.ok and other.message == (
                "there is nothing to commit: the worktree has no uncommitted change"
            )
            merged = await control(client, HOST, "merge", request_id="m1", session_id=sid)
            assert await control(client, HOST, "merge", request_id="m1", session_id=sid) == merged
            assert merged.ok and merged.detail["merge"]["into"] == "main"
        finally:
            await client.close()
        assert git(host.project, "log", "--format=%s", "main").split() == ["Work", "first"]


async def test_an_action_on_a_stopped_host_is_refused_with_a_sentence(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with an_agents_work(nats_server.url, tmp_path, server, monkeypatch) as work:
        host, run, sid = work.host, work.run, work.sid
        host.process.send_signal(signal.SIGTERM)
        await asyncio.to_thread(host.process.communicate, timeout=60)
        await until(run, lambda: run.bus.host(HOST).left_at is not None)
        with pytest.raises(FinishRefused, match=r"^Host box has stopped \(it left at \d\d:\d\d:\d\d\)\.$"):
            await work.ask(Merge(sessionId=sid), "merge")
        with pytest.raises(FinishRefused, match=r"^Host box has stopped"):
            await work.review()
        assert await work.ask(Closed(), "closed") == []  # no host to ask
    assert git(host.project, "log", "--format=%s", "main").split() == ["first"]


async def test_a_big_review_is_cut_to_its_bound_and_says_so(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with an_agents_work(nats_server.url, tmp_path, server, monkeypatch) as work:
        worktree = (await work.review()).root
        line = "x" * 79 + "\n"
        (worktree / "big1.txt").write_text(line * 5000)  # 400 KB each: more than one reply holds
        (worktree / "big2.txt").write_text(line * 5000)
        review = await work.review()
    marker = "[diff not sent: the review reached its 512 KB bound for the bus]"
    first, second, third = review.files
    assert [f.path for f in review.files] == ["big1.txt", "big2.txt", "greet.py"]
    assert (first.added, first.new_text, marker in first.diff) == (5000, None, False)  # whole, plain
    assert (
        second.added == 5000 and second.diff.endswith(marker + "\n") and 0 < second.diff.count("\n+x") < 5000
    )
    kept = second.diff[: -len(marker) - 2].splitlines()
    assert kept[2] == "@@ -0,0 +1,5000 @@" and set(kept[3:]) == {"+" + "x" * 79}  # cut at a line's end
    assert (third.new_text, third.added) == (GREET, 2)  # what still fits after the cut is whole
    assert review.cut == (
        "1 file's diff was cut to keep the reply under 512 KB; the whole change is on the host, in its worktree"
    )


async def test_the_review_screen_and_the_reopen_list_on_an_attached_dashboard(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_tui.tui.attached_app import AttachedApp
    from agent_tui.tui.screens.close_session import CloseSessionScreen
    from agent_tui.tui.screens.confirm import ConfirmScreen
    from agent_tui.tui.screens.reopen import ReopenScreen
    from agent_tui.tui.screens.review import ReviewScreen
    from agent_tui.tui.screens.review_dialogs import CommitMessageScreen

    async with serving(nats_server.url, tmp_path, server) as host:
        sid = await host.agent("Add a greeting\n\nIn greet.py.")
        monkeypatch.setenv("AGENT_TUI_CONFIG", host_env(tmp_path)["AGENT_TUI_CONFIG"])
        app = AttachedApp(AttachedBus(resolve_target(nats_server.url)))
        async with app.run_test(size=(120, 40)) as pilot:
            tree = app.dashboard.session_tree
            await wait_for(pilot, lambda: sid in tree.visible_ids, "the host's session", 60)
            app.dashboard.select_session(sid)
            tree.focus()
            await pilot.press("D")
            await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review", 60)
            screen = app.screen
            assert isinstance(screen, ReviewScreen)
            assert [(f.path, f.status) for f in screen.review.files] == [("greet.py", "added")]
            await pilot.press("c")
            await wait_for(pilot, lambda: isinstance(app.screen, CommitMessageScreen), "the message")
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: "committed" in screen.finished, "the commit", 60)
            await pilot.press("m")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge question")
            await pilot.press("y")
            await wait_for(pilot, lambda: "merged" in screen.finished, "the merge", 60)
            assert (host.project / "greet.py").read_text() == GREET
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen), "the dashboard")
            await pilot.press("delete")
            await wait_for(pilot, lambda: isinstance(app.screen, CloseSessionScreen), "the close question")
            await pilot.press("k")
            await wait_for(pilot, lambda: sid not in tree.visible_ids, "the session to leave the tree", 60)
            await pilot.press("O")
            await wait_for(pilot, lambda: isinstance(app.screen, ReopenScreen), "the closed sessions", 60)
            await pilot.press("enter")
            await wait_for(pilot, lambda: sid in tree.visible_ids, "the session back in the tree", 60)
    assert git(host.project, "log", "--format=%s", "main").split()[0] == "Add"
    assert (
        not (host.sessions / "closed.txt").exists() or sid not in (host.sessions / "closed.txt").read_text()
    )


async def test_a_scenario_host_refuses_finishing_and_is_passed_over_by_the_closed_list(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "foo.py").write_text("x = 1\n")
    scenario = tmp_path / "scenario.json"
    scenario.write_bytes(orjson.dumps(RENAMING))
    async with an_agents_work(nats_server.url, tmp_path, server, monkeypatch) as work:
        worktree = (await work.review()).root
        closed = await work.host.control.send(HOST, Close(sessionId=work.sid, worktree="remove"))
        assert (closed.ok, closed.detail) == (True, {"problem": None}), closed.message
        assert not worktree.exists()  # the host honours the choice; the branch stays
        run_args = ["run", str(scenario), "--sessions-dir", str(tmp_path / "run-logs"), "--approve", "ask"]
        run = start_agent_tui([*run_args, "--bus", nats_server.url, "--host", "ci"], host_env(tmp_path))
        await until(work.run, lambda: work.run.bus.host("ci").reachable)
        assert [s.session_id for s in await work.ask(Closed(), "closed")] == [work.sid]
        # (as long as a dashboard waits for a finishing verb: a host just started may be slow to answer)
        refused = await work.host.control.send("ci", ReadReview(sessionId="sess_any"), timeout=60)
        assert (refused.ok, refused.message) == (
            False,
            "this host runs a scenario: review is for `agent-tui serve`'s sessions",
        )
        pending = work.run.state.pending_permissions
        await until(work.run, lambda: bool(pending()))
        view = pending()[0]
        denied = await work.host.control.send(
            "ci", Answer(sessionId=view.session_id, requestId=view.request_id, decision="deny")
        )
        assert denied.ok, denied.message
        await asyncio.to_thread(run.communicate, timeout=60)
    assert run.returncode == 0


async def test_a_commit_the_host_did_not_answer_in_time_is_done_once_when_asked_again(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with an_agents_work(nats_server.url, tmp_path, server, monkeypatch) as work:
        work.run.finish_timeout = 2.0
        worktree = (await work.review()).root
        work.host.process.send_signal(signal.SIGSTOP)  # the host hears the request, answers nothing
        try:
            with pytest.raises(FinishRefused) as silence:
                await work.ask(Commit(sessionId=work.sid, message="Add greet.py"), "commit")
        finally:
            work.host.process.send_signal(signal.SIGCONT)
        assert (
            str(silence.value)
            == "Host box did not answer (commit); try again: the retry is the same request."
        )
        work.run.finish_timeout = 60.0
        again = await work.ask(Commit(sessionId=work.sid, message="Add greet.py"), "commit")  # the same id
        assert again.files == 1
        assert git(worktree, "log", "--format=%s").split() == ["Add", "greet.py", "first"]


async def test_a_new_agent_in_an_empty_or_relative_directory_works_in_the_hosts_own(
    nats_server: NatsServer, tmp_path: Path, server: FakeModelServer
) -> None:
    """What the attached new-agent form sends when its directory is left empty (`.`), or is
    typed relative: the host's `--cwd`, never the directory the host process happens to run in."""
    async with serving(nats_server.url, tmp_path, server) as host:
        (host.project / "docs").mkdir()
        cwds = []
        for typed in (".", "docs"):
            server.script(Stream(openai_stream(["Hi."])))
            started = await host.control.send(HOST, NewAgent.of(AgentSpec("say hi", Path(typed))))
            assert started.ok, started.message
            sid = started.detail["sessionId"]
            created = await host.heard.first(partial(creation_of, sid))
            cwds.append(Path(created["payload"]["cwd"]).resolve())
        assert cwds == [host.project.resolve(), (host.project / "docs").resolve()]


def creation_of(session_id: object, event: dict[str, Any]) -> bool:
    return bool(event["sessionId"] == session_id and event["type"] == "session.created")
