"""The workbench's floors below the UI: sessions directories, worktrees, change previews, the
model router and the workbench itself, each on real files, real git and a real engine.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import orjson
import pytest
from support_engine import HeldPrompter
from support_workbench import agent_script, git, make_project, scripted_models

from agent_tui.engine.provider import ModelRequest, StepDone, TextDelta
from agent_tui.engine.questions import Questions
from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.replay.catalog import created_event
from agent_tui.runtime.change_preview import MAX_PREVIEW_BYTES, preview_change
from agent_tui.runtime.model_router import ModelChoice, ProviderRouter
from agent_tui.runtime.session_dirs import (
    SessionsDirError,
    closed_sessions,
    default_sessions_dir,
    ensure_writable,
    format_listing,
    group_by_day,
    list_stored_sessions,
    read_stored_session,
)
from agent_tui.runtime.workbench import (
    AgentSpec,
    AgentStartError,
    SendRefused,
    Sent,
    Workbench,
    name_from_prompt,
)
from agent_tui.runtime.worktrees import (
    WorktreeError,
    create_worktree,
    remove_worktree,
    repo_root,
    uncommitted_changes,
)


def line(session: str, sequence: int, ts: str, kind: str, payload: dict, turn: str | None = "t1") -> bytes:
    event = {
        "v": 1,
        "id": f"evt_{session}_{sequence}",
        "sessionId": session,
        "turnId": None if kind == "session.created" else turn,
        "sequence": sequence,
        "ts": ts,
        "type": kind,
        "payload": payload,
    }
    return orjson.dumps(event) + b"\n"


def write_log(
    directory: Path, session: str, day: int, *, stop: str | None, name: str, torn: bool = False
) -> Path:
    ts = f"2026-11-{day:02d}T10:00:0{{}}.000Z"
    data = line(
        session, 1, ts.format(1), "session.created", {"cwd": "/p", "client": "agent-tui", "agentName": name}
    )
    data += line(session, 2, ts.format(2), "turn.started", {"promptPreview": f"prompt of {name}"})
    data += line(session, 3, ts.format(3), "user.message", {"content": f"prompt of {name}"})
    if stop is not None:
        data += line(session, 4, ts.format(4), "turn.completed", {"stopReason": stop})
    if torn:
        data += b'{"v":1,"id":"evt_half'
    path = directory / f"{session}.jsonl"
    path.write_bytes(data)
    return path


class TestSessionsDirectory:
    def test_a_projects_directory_is_keyed_by_its_path(self, tmp_path: Path) -> None:
        data = tmp_path / "data"
        first = default_sessions_dir(tmp_path / "a" / "shop", data)
        again = default_sessions_dir(tmp_path / "a" / "shop" / ".", data)
        other = default_sessions_dir(tmp_path / "b" / "shop", data)
        assert first == again and first != other
        assert first.parent == data / "projects" and first.name.startswith("shop-")

    def test_the_default_is_under_the_platforms_data_dir(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        assert default_sessions_dir(tmp_path).is_relative_to(tmp_path / "xdg" / "agent-tui" / "projects")

    def test_an_unwritable_directory_is_an_error_naming_it(self, tmp_path: Path) -> None:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            if os.access(locked, os.W_OK):  # root ignores permissions: a file in the way then
                target = tmp_path / "file"
                target.write_text("x")
                with pytest.raises(SessionsDirError, match=f"^{target}/sessions: Not a directory$"):
                    ensure_writable(target / "sessions")
                return
            with pytest.raises(SessionsDirError, match=f"^{locked / 'sessions'}: Permission denied$"):
                ensure_writable(locked / "sessions")
        finally:
            locked.chmod(0o700)

    def test_listing_reads_first_and_last_lines_newest_first_grouped_by_day(self, tmp_path: Path) -> None:
        write_log(tmp_path, "sess_old", 28, stop="final", name="old")
        write_log(tmp_path, "sess_new", 30, stop="cancelled", name="new", torn=True)
        write_log(tmp_path, "sess_mid", 29, stop=None, name="mid")
        (tmp_path / "sess_bad.jsonl").write_bytes(b"not json\n")
        sessions = list_stored_sessions(tmp_path)
        assert [s.session_id for s in sessions] == ["sess_new", "sess_mid", "sess_old", "sess_bad"]
        new = sessions[0]
        assert (new.name, new.status, new.first_prompt) == ("new", "cancelled", "prompt of new")
        assert sessions[1].status == "interrupted"
        assert sessions[3].status == "unreadable" and "not a session log" in (sessions[3].problem or "")
        days = [day for day, _ in group_by_day(sessions)]
        assert days[:3] == ["2026-11-30", "2026-11-29", "2026-11-28"]
        text = format_listing(tmp_path, sessions)
        assert text.startswith(f"4 sessions in {tmp_path}\n")
        assert "sess_bad  unreadable: not a session log" in text

    def test_a_last_line_longer_than_the_tail_window_is_found(self, tmp_path: Path) -> None:
        path = write_log(tmp_path, "sess_long", 30, stop=None, name="long")
        big = line("sess_long", 4, "2026-11-30T11:00:00.000Z", "model.delta", {"text": "x" * 200_000})
        with path.open("ab") as handle:
            handle.write(big)
        stored = read_stored_session(path)
        assert stored.last_ts == "2026-11-30T11:00:00.000Z" and stored.status == "interrupted"

    def test_listed_without_the_ends_a_log_keeps_its_whole_first_line(self, tmp_path: Path) -> None:
        path = write_log(tmp_path, "sess_done", 30, stop="final", name="done")
        ended = read_stored_session(path)
        head = read_stored_session(path, ends=False)
        assert ended.head == b"" and ended.status == "completed"
        assert head.head == path.read_bytes().split(b"\n")[0]
        assert (head.name, head.status, head.last_ts) == ("done", "idle", head.created_ts)
        created = created_event(head.head, "sess_done")
        assert created is not None and created.payload["agentName"] == "done"
        assert created_event(head.head, "sess_other") is None  # another session's line
        torn = tmp_path / "sess_torn.jsonl"
        torn.write_bytes(path.read_bytes().split(b"\n")[0])  # its first line not ended yet
        assert read_stored_session(torn, ends=False).head == b""


class TestWorktrees:
    def test_a_worktree_is_a_new_branch_under_the_project(self, tmp_path: Path) -> None:
        project = make_project(tmp_path)
        worktree = create_worktree(project / "src", "Fix Login!")
        assert worktree.path.parent == project / ".agent-tui" / "worktrees"
        assert worktree.branch.startswith("agent-tui/fix-login-")
        assert worktree.cwd == worktree.path / "src" and (worktree.cwd / "auth.py").is_file()
        assert git(project, "status", "--porcelain") == ""
        (worktree.cwd / "new.py").write_text("x = 1\n")
        assert uncommitted_changes(worktree.path) == 1
        remove_worktree(worktree.path)
        assert not worktree.path.exists()
        assert worktree.branch in git(project, "branch", "--list", worktree.branch)

    def test_outside_a_repository_it_says_so(self, tmp_path: Path) -> None:
        assert repo_root(tmp_path) is None
        with pytest.raises(WorktreeError, match="not inside a git repository"):
            create_worktree(tmp_path, "x")


class TestChangePreview:
    def test_edit_overwrite_create_and_the_ones_that_will_fail(self, tmp_path: Path) -> None:
        (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
        edit = preview_change(tmp_path, "edit_file", {"path": "a.txt", "old": "two\n", "new": "2\n"})
        assert edit is not None and edit.kind == "edit" and edit.counts() == (1, 1)
        assert edit.unified_text() == "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        over = preview_change(tmp_path, "write_file", {"path": "a.txt", "content": "new\n"})
        assert over is not None and over.kind == "overwrite"
        new = preview_change(tmp_path, "write_file", {"path": "b/c.txt", "content": "x\ny\n"})
        assert new is not None and new.kind == "create" and new.counts() == (2, 0)
        same = preview_change(tmp_path, "write_file", {"path": "a.txt", "content": "one\ntwo\nthree\n"})
        assert same is not None and same.kind == "unchanged"
        twice = preview_change(tmp_path, "edit_file", {"path": "a.txt", "old": "o", "new": "0"})
        assert twice is not None and twice.kind == "fails" and "occurs 2 times" in (twice.problem or "")
        missing = preview_change(tmp_path, "edit_file", {"path": "nope.txt", "old": "a", "new": "b"})
        assert missing is not None and missing.kind == "fails" and "no such file" in (missing.problem or "")
        assert preview_change(tmp_path, "shell", {"cmd": "ls"}) is None

    def test_a_path_outside_the_cwd_is_never_read(self, tmp_path: Path) -> None:
        secret = tmp_path / "secret.txt"
        secret.write_text("password\n")
        cwd = tmp_path / "cwd"
        cwd.mkdir()
        (cwd / "link.txt").symlink_to(secret)
        for path in ("../secret.txt", str(secret), "link.txt"):
            preview = preview_change(cwd, "write_file", {"path": path, "content": "x"})
            assert preview is not None and preview.kind == "fails"
            assert preview.problem is not None and preview.problem.startswith("path_unsafe")
            assert "password" not in preview.old_text

    def test_a_huge_file_is_not_read(self, tmp_path: Path) -> None:
        (tmp_path / "big.bin").write_bytes(b"x" * (MAX_PREVIEW_BYTES + 1))
        preview = preview_change(tmp_path, "edit_file", {"path": "big.bin", "old": "x", "new": "y"})
        assert preview is not None and preview.kind == "fails" and "too large" in (preview.problem or "")


class _Named:
    def __init__(self, name: str, window: int) -> None:
        self.name = name
        self.max_context_tokens = window
        self.seen: list[str] = []

    async def stream(self, request: ModelRequest):
        self.seen.append(request.session_id)
        yield TextDelta(self.name)
        yield StepDone()


class TestModelRouter:
    def test_each_session_goes_to_its_choice_and_sub_agents_to_their_roots(self) -> None:
        fast, smart = _Named("fast", 8000), _Named("smart", 200_000)
        built: list[str] = []

        def build(provider: _Named) -> Callable[[], _Named]:
            def built_once() -> _Named:
                built.append(provider.name)
                return provider

            return built_once

        choices = [ModelChoice("fast", "f", build(fast)), ModelChoice("smart", "s", build(smart))]
        parents = {"child": "root", "grandchild": "child"}
        router = ProviderRouter(choices, parents.get)
        router.assign("root", choices[1])
        assert router.choice_for("grandchild").name == "smart"
        assert router.choice_for("other").name == "fast"
        assert built == []  # nothing is built before it is used
        assert router.max_context_tokens == 8000

        async def run() -> None:
            for session in ("grandchild", "other"):
                request = ModelRequest(session_id=session, turn_id="t", step=1, messages=())
                async for _chunk in router.stream(request):
                    pass

        anyio.run(run)
        assert (smart.seen, fast.seen) == (["grandchild"], ["other"])
        assert sorted(built) == ["fast", "smart"]


@pytest.mark.anyio
class TestWorkbench:
    async def test_send_starts_the_next_turn_or_steers_or_says_why_not(self, tmp_path: Path) -> None:
        write = ScriptedToolCall(tool="write_file", args={"path": "n.txt", "content": "x"})
        provider = ScriptedProvider(
            agents={
                "first": agent_script(Step(text=["One."]), Step(text=["Two."])),
                "waiter": agent_script(Step(text=["W."], toolCalls=[write]), Step(text=["Done."])),
            }
        )
        workbench = Workbench.for_project(
            project=tmp_path, sessions_dir=tmp_path / "s", models=scripted_models(provider), questions=None
        )
        async with workbench.engine:
            sid = await workbench.start_agent(AgentSpec("Go", tmp_path, name="first"))
            await _idle(workbench, sid)
            assert workbench.send(sid, "  ") == SendRefused("There is nothing to send.")
            assert workbench.send(sid, "Again") == Sent("started")
            await _idle(workbench, sid)
            assert isinstance(workbench.send("sess_unknown", "hi"), SendRefused)
            with pytest.raises(AgentStartError, match="no such directory"):
                await workbench.start_agent(AgentSpec("Go", tmp_path / "missing"))
            with pytest.raises(AgentStartError, match=r"no worktree: .*not inside a git repository"):
                await workbench.start_agent(AgentSpec("Go", tmp_path, own_worktree=True))
            assert await workbench.close()
        workbench.close_store()
        stops = [
            orjson.loads(raw)["payload"]["stopReason"]
            for raw in (tmp_path / "s" / f"{sid}.jsonl").read_bytes().splitlines()
            if b"turn.completed" in raw
        ]
        assert stops == ["final", "final"]

    async def test_dispose_and_close_stop_turns_held_at_an_ask_and_return_once_their_ends_are_stored(
        self, tmp_path: Path
    ) -> None:
        write = ScriptedToolCall(tool="write_file", args={"path": "n.txt", "content": "x"})
        provider = ScriptedProvider(
            agents={"writer": agent_script(Step(text=["W."], toolCalls=[write]), Step(text=["Done."]))}
        )
        prompter = HeldPrompter()
        workbench = Workbench.for_project(
            project=tmp_path,
            sessions_dir=tmp_path / "s",
            models=scripted_models(provider),
            questions=Questions(prompter.ask),
            data_dir=tmp_path / "data",
        )
        async with workbench.engine:
            sid = await workbench.start_agent(AgentSpec("Go", tmp_path, name="writer"))
            other = await workbench.start_agent(AgentSpec("Go", tmp_path, name="writer"))
            with anyio.fail_after(10):
                while len(prompter.requests) < 2:  # both turns hold at their asks
                    prompter.asked = anyio.Event()
                    await prompter.asked.wait()
            assert workbench.running_turns() == 2
            # Disposing one waits for its end and leaves the other held.
            assert await workbench.dispose(other) is None
            assert workbench.running_turns() == 1 and not workbench.is_running(other)
            assert await workbench.close()
            assert workbench.running_turns() == 0
            assert sorted(prompter.withdrawn) == sorted(r.request_id for r in prompter.requests)
        workbench.close_store()
        for session in (sid, other):
            last = orjson.loads((tmp_path / "s" / f"{session}.jsonl").read_bytes().splitlines()[-1])
            assert (last["type"], last["payload"]["stopReason"]) == ("turn.completed", "cancelled")
        assert not (tmp_path / "n.txt").exists()

    async def test_hydrate_reopens_what_it_can_and_names_what_it_cannot(self, tmp_path: Path) -> None:
        sessions = tmp_path / "s"
        sessions.mkdir()
        good = write_log(sessions, "sess_good", 30, stop=None, name="good")  # a process died mid-turn
        broken = write_log(sessions, "sess_broken", 30, stop="final", name="broken")
        broken.write_bytes(broken.read_bytes().replace(b'"sequence":3', b'"sequence":9'))
        (sessions / "closed.txt").write_text("sess_gone\n")
        write_log(sessions, "sess_gone", 29, stop="final", name="gone")
        workbench = Workbench.for_project(
            project=tmp_path,
            sessions_dir=sessions,
            models=scripted_models(ScriptedProvider()),
            questions=None,
        )
        folded: list[str] = []
        async with workbench.engine:
            problems = await workbench.hydrate(lambda event: folded.append(event.session_id))
            assert [info.id for info in workbench.engine.sessions()] == ["sess_good"]
            await workbench.close()
        workbench.close_store()
        assert len(problems) == 1 and problems[0].startswith(f"{broken}:3:")
        # Listed from its head and tail before it is read whole; not reopened (its line 3 is corrupt).
        assert set(folded) == {"sess_good", "sess_broken"}
        ends = [orjson.loads(raw) for raw in good.read_bytes().splitlines()][-1]
        assert (ends["type"], ends["payload"]["stopReason"]) == ("turn.completed", "error")
        assert closed_sessions(sessions) == {"sess_gone"}

    async def test_hydrate_lists_every_session_from_its_head_then_its_last_turn_before_reopening_any(
        self, tmp_path: Path
    ) -> None:
        sessions = tmp_path / "s"
        sessions.mkdir()
        count = 150
        for k in range(count):
            session = f"sess_{k:03d}"
            ts = f"2026-11-02T10:{k // 60:02d}:{k % 60:02d}.{{:03d}}Z"
            data = line(session, 1, ts.format(0), "session.created", {"cwd": "/p", "client": "agent-tui"})
            sequence = 1
            for turn in range(1, 4):
                for kind, payload in (
                    ("turn.started", {"promptPreview": f"prompt {turn}"}),
                    ("user.message", {"content": f"prompt {turn}"}),
                    ("turn.completed", {"stopReason": "final"}),
                ):
                    sequence += 1
                    data += line(session, sequence, ts.format(sequence), kind, payload)
            (sessions / f"{session}.jsonl").write_bytes(data)
        workbench = Workbench.for_project(
            project=tmp_path,
            sessions_dir=sessions,
            models=scripted_models(ScriptedProvider()),
            questions=None,
        )
        folded: list[tuple[str, int, int]] = []  # (session, sequence, sessions open in the engine then)
        refused: list[str] = []
        async with workbench.engine:

            def fold(event: Event) -> None:
                folded.append((event.session_id, event.sequence, len(workbench.engine.sessions())))

            def reopening() -> list[str]:
                return [sid for sid, record in workbench.records.items() if record.reopening]

            async def send_while_reopening() -> None:
                while not reopening():
                    await anyio.sleep(0)
                last = max(reopening())  # reopened last: not yet, whoever runs first
                answer = workbench.send(last, "go on")
                assert isinstance(answer, SendRefused)
                refused.append(answer.reason)

            async with anyio.create_task_group() as group:
                group.start_soon(send_while_reopening)
                problems = await workbench.hydrate(fold)
            assert len(workbench.engine.sessions()) == count and not reopening()
            await workbench.close()
        workbench.close_store()
        assert problems == []
        # Every session's first line and last turn, and nothing else, folded before any reopening.
        assert {opened for _sid, _seq, opened in folded} == {0}
        by_session: dict[str, list[int]] = {}
        for session, sequence, _opened in folded:
            by_session.setdefault(session, []).append(sequence)
        assert by_session == {f"sess_{k:03d}": [1, 8, 9, 10] for k in range(count)}
        # The whole list first (every head), then the last turns: the tree shows every session
        # before any tail is read.
        assert [sequence for _sid, sequence, _opened in folded[:count]] == [1] * count
        assert refused == ["This session is still being reopened from its log; send again in a moment."]


async def _idle(workbench: Workbench, session_id: str) -> None:
    with anyio.fail_after(10):
        while workbench.is_running(session_id):
            await anyio.sleep(0.01)


def test_an_agents_name_comes_from_its_prompt() -> None:
    assert name_from_prompt("Fix the login bug in auth.py") == "fix-the-login"
    assert name_from_prompt("!!!") == "agent"
