"""Rewinding a turn through the workbench, on real scripted runs: file-tool writes without git,
shell changes with git, what outside git cannot be undone, protected paths, and the
`turn.rewound` event in a log the chain checker accepts.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from fake_model_server import FakeModelServer, Stream, openai_stream
from support_providers import fake_model_server, play, prompt_run  # noqa: F401 - the `server` fixture
from support_workbench import agent_script, git, scripted_models

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event, event_from_json
from agent_tui.events.chains import chain_violations
from agent_tui.reducer import project_state
from agent_tui.replay.dump import transcript_lines
from agent_tui.runtime.finishing import FinishRefused
from agent_tui.runtime.session_dirs import read_stored_session
from agent_tui.runtime.turn_records import undo_dir
from agent_tui.runtime.workbench import AgentSpec, Workbench

pytestmark = pytest.mark.anyio


def call(tool: str, **args: str) -> ScriptedToolCall:
    return ScriptedToolCall(tool=tool, args=args)


def turns(*tool_calls: list[ScriptedToolCall]) -> ScriptedProvider:
    steps: list[Step] = []
    for calls in tool_calls:
        steps += [Step(text=["Working."], toolCalls=calls), Step(text=["Done."])]
    return ScriptedProvider(agents={"agent": agent_script(*steps)})


def workbench_for(tmp_path: Path, project: Path, provider: ScriptedProvider) -> Workbench:
    return Workbench.for_project(
        project=project,
        sessions_dir=tmp_path / "sessions",
        models=scripted_models(provider),
        questions=Questions(fixed_answer("allow")),
        data_dir=tmp_path / "data",
    )


async def idle(workbench: Workbench, session_id: str) -> None:
    with anyio.fail_after(20):
        while workbench.is_running(session_id):
            await anyio.sleep(0.01)


def log_of(tmp_path: Path, session_id: str) -> list[Event]:
    raw = (tmp_path / "sessions" / f"{session_id}.jsonl").read_bytes()
    return [event_from_json(line) for line in raw.splitlines()]


async def test_a_file_tool_write_is_rewound_without_git_and_the_shell_change_is_named(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    (project / "keep.txt").write_bytes(b"original\r\nbytes \xff\n")
    (project / "edit.txt").write_text("alpha beta\n")
    provider = turns(
        [
            call("write_file", path="keep.txt", content="overwritten\n"),
            call("write_file", path="sub/new.txt", content="new\n"),
            call("edit_file", path="edit.txt", old="beta", new="gamma"),
            call("shell", cmd="echo shell > by-shell.txt"),
        ]
    )
    workbench = workbench_for(tmp_path, project, provider)
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Change things", project, name="agent"))
        await idle(workbench, sid)
        assert (project / "keep.txt").read_text() == "overwritten\n"
        assert (project / "edit.txt").read_text() == "alpha gamma\n"
        # Outside git the review shows what the file tools wrote, against what was there before.
        review = await workbench.review(sid)
        assert [(f.path, f.status, f.binary) for f in review.files] == [
            ("edit.txt", "modified", False),
            ("keep.txt", "modified", True),  # it held bytes that are not UTF-8
            ("sub/new.txt", "added", False),
        ]
        assert "shell changes are not seen" in review.base_label and not review.can_finish
        assert "-alpha beta" in review.files[0].diff and "+alpha gamma" in review.files[0].diff
        turn = workbench.facts(sid).turns[0]
        plan = await workbench.rewind_plan(sid, turn.turn_id)
        assert [(f.shown, f.action) for f in plan.files] == [
            ("edit.txt", "restored"),
            ("keep.txt", "restored"),
            ("sub/new.txt", "removed"),
        ]
        assert any("echo shell > by-shell.txt" in note and "outside git" in note for note in plan.notes)
        result = await workbench.rewind(sid, turn.turn_id)
        assert (project / "keep.txt").read_bytes() == b"original\r\nbytes \xff\n"
        assert (project / "edit.txt").read_text() == "alpha beta\n"
        assert not (project / "sub" / "new.txt").exists()
        assert (project / "by-shell.txt").exists()  # what the shell did stays, and is said
        assert result.incomplete is not None and "1 shell command ran" in result.incomplete
        assert (await workbench.review(sid)).files == ()
        await workbench.close()
    workbench.close_store()
    events = log_of(tmp_path, sid)
    assert chain_violations(events) == []
    rewound = [e for e in events if e.type == "turn.rewound"]
    assert len(rewound) == 1 and rewound[0].turn_id is None
    assert rewound[0].payload["rewoundTurnId"] == turn.turn_id
    assert rewound[0].payload["files"] == [
        {"path": "edit.txt", "action": "restored"},
        {"path": "keep.txt", "action": "restored"},
        {"path": "sub/new.txt", "action": "removed"},
    ]
    assert "shell command" in rewound[0].payload["incomplete"]
    # The contents were kept beside the log, not in it.
    assert b"original" not in (tmp_path / "sessions" / f"{sid}.jsonl").read_bytes()
    assert any(undo_dir(tmp_path / "sessions", sid).joinpath("blobs").iterdir())
    # The dashboard shows the rewind as a note at the end of the session.
    session = project_state(events).sessions[sid]
    notes = [entry.text for entry in session.turns[-1].transcript if entry.role == "note"]
    assert notes and notes[-1].startswith(
        "rewound turn 1: restored edit.txt, restored keep.txt, removed sub/new.txt"
    )
    # `replay --dump transcript` reads it as the model does.
    last = list(transcript_lines(events))[-1]
    assert (last["role"], last["turnId"]) == ("user", None)
    assert last["text"].startswith(f"[the user rewound turn {turn.turn_id}: ")
    # A rewind between turns does not make the session look interrupted in the listing.
    assert read_stored_session(tmp_path / "sessions" / f"{sid}.jsonl").status == "completed"


async def test_a_shell_change_is_rewound_in_git_from_the_turns_snapshot(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    (project / "data.txt").write_text("v1\n")
    (project / "run.sh").write_text("#!/bin/sh\n")
    (project / "run.sh").chmod(0o755)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    (project / "wip.txt").write_text("the user's uncommitted file\n")  # not the agent's: untouched
    index_before = (project / ".git" / "index").read_bytes()
    provider = turns(
        [
            call("shell", cmd="echo v2 > data.txt && rm run.sh && echo made > made.txt"),
            call("write_file", path="tool.txt", content="by the tool\n"),
        ],
        [call("shell", cmd="echo v3 > data.txt")],
    )
    workbench = workbench_for(tmp_path, project, provider)
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Change things", project, name="agent"))
        await idle(workbench, sid)
        assert workbench.send(sid, "Again").how == "started"  # type: ignore[union-attr]
        await idle(workbench, sid)
        first, second = workbench.facts(sid).turns
        plan = await workbench.rewind_plan(sid, first.turn_id)
        assert [(f.shown, f.action, f.changed_since) for f in plan.files] == [
            ("data.txt", "restored", True),  # the second turn changed it again
            ("made.txt", "removed", False),
            ("run.sh", "restored", False),
            ("tool.txt", "removed", False),
        ]
        assert plan.notes == ()
        result = await workbench.rewind(sid, first.turn_id)
        assert result.incomplete is None
        assert (project / "data.txt").read_text() == "v1\n"
        assert (project / "run.sh").read_text() == "#!/bin/sh\n" and (
            project / "run.sh"
        ).stat().st_mode & 0o111
        assert not (project / "made.txt").exists() and not (project / "tool.txt").exists()
        assert (project / "wip.txt").read_text() == "the user's uncommitted file\n"
        assert (project / ".git" / "index").read_bytes() == index_before
        assert git(project, "stash", "list") == ""
        # Rewinding the second turn now: its file is put back to what the second turn found.
        await workbench.rewind(sid, second.turn_id)
        assert (project / "data.txt").read_text() == "v2\n"
        # The model is told, so its next turn does not count on what is gone.
        said = [m.text for m in workbench.engine.session(sid).transcript.messages if m.role == "user"]
        assert said[-1].startswith(f"[the user rewound turn {second.turn_id}: the files it changed are back")
        assert "restored data.txt" in said[-1]
        await workbench.close()
    workbench.close_store()
    events = log_of(tmp_path, sid)
    assert chain_violations(events) == []
    assert [e.payload["rewoundTurnId"] for e in events if e.type == "turn.rewound"] == [
        first.turn_id,
        second.turn_id,
    ]


async def test_protected_paths_are_written_back_only_when_allowed(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    (project / ".agent-tui").mkdir(parents=True)
    rules = project / ".agent-tui" / "permissions.toml"
    rules.write_text("# the project's rules\n")
    provider = turns([call("write_file", path=".agent-tui/permissions.toml", content="# changed\n")])
    workbench = workbench_for(tmp_path, project, provider)
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Change the rules", project, name="agent"))
        await idle(workbench, sid)
        assert rules.read_text() == "# changed\n"
        turn = workbench.facts(sid).turns[0]
        plan = await workbench.rewind_plan(sid, turn.turn_id)
        assert [f.shown for f in plan.protected] == [".agent-tui/permissions.toml"]
        result = await workbench.rewind(sid, turn.turn_id)
        assert [(f.path, f.action) for f in result.files] == [(".agent-tui/permissions.toml", "skipped")]
        assert result.incomplete is not None and "protected paths were left" in result.incomplete
        assert rules.read_text() == "# changed\n"
        result = await workbench.rewind(sid, turn.turn_id, allow_protected=True)
        assert [(f.path, f.action) for f in result.files] == [(".agent-tui/permissions.toml", "restored")]
        assert rules.read_text() == "# the project's rules\n"
        await workbench.close()
    workbench.close_store()
    assert chain_violations(log_of(tmp_path, sid)) == []


async def test_a_rewind_is_refused_while_a_turn_runs_and_for_an_unknown_turn(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    provider = turns([call("write_file", path="a.txt", content="a\n")])
    workbench = workbench_for(tmp_path, project, provider)
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Write", project, name="agent"))
        with pytest.raises(FinishRefused, match="is running"):
            await workbench.rewind(sid, "turn_x")
        await idle(workbench, sid)
        with pytest.raises(FinishRefused, match="has no turn turn_x"):
            await workbench.rewind(sid, "turn_x")
        await workbench.close()
    workbench.close_store()


async def test_a_symlinked_directory_planted_after_the_turn_is_not_followed_out(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    provider = turns([call("write_file", path="sub/a.txt", content="a\n")])
    workbench = workbench_for(tmp_path, project, provider)
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Write", project, name="agent"))
        await idle(workbench, sid)
        # Someone swaps the directory for a symlink out of the project, with a file of the same name.
        (project / "sub" / "a.txt").unlink()
        (project / "sub").rmdir()
        (outside / "a.txt").write_text("precious\n")
        (project / "sub").symlink_to(outside)
        turn = workbench.facts(sid).turns[0]
        result = await workbench.rewind(sid, turn.turn_id)
        assert [(f.path, f.action) for f in result.files] == [("sub/a.txt", "skipped")]
        assert (outside / "a.txt").read_text() == "precious\n"
        await workbench.close()
    workbench.close_store()


def test_the_chain_checker_takes_a_rewind_only_between_turns_and_of_a_turn_it_saw() -> None:
    from support_events import build_event

    files = [{"path": "a.txt", "action": "restored"}]
    log = [
        build_event(1, "session.created"),
        build_event(2, "turn.started", turn_id="turn_1"),
        build_event(3, "user.message", turn_id="turn_1"),
        build_event(4, "model.delta", turn_id="turn_1"),
        build_event(5, "turn.completed", turn_id="turn_1", stopReason="final", errorCode=None, message=None),
        build_event(6, "turn.rewound", turn_id=None, rewoundTurnId="turn_1", files=files),
    ]
    assert chain_violations(log) == []
    unknown = build_event(6, "turn.rewound", turn_id=None, rewoundTurnId="turn_9", files=files)
    assert chain_violations([*log[:5], unknown]) == [
        "sess_test#6 turn.rewound: rewinds turn turn_9, which this log never started"
    ]
    inside = build_event(4, "turn.rewound", turn_id=None, rewoundTurnId="turn_1", files=files)
    assert "sess_test#4 turn.rewound: a rewind while turn turn_1 is open" in chain_violations(
        [*log[:3], inside]
    )


async def test_in_git_a_turn_of_file_tools_only_leaves_what_others_changed_meanwhile(tmp_path: Path) -> None:
    from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest

    project = tmp_path / "repo"
    project.mkdir()
    (project / "mine.txt").write_text("v1\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")

    async def edits_while_asked(request: PermissionRequest) -> PermissionAnswer:
        (project / "mine.txt").write_text("the user's edit while the agent waited\n")
        return PermissionAnswer("allow")

    workbench = Workbench.for_project(
        project=project,
        sessions_dir=tmp_path / "sessions",
        models=scripted_models(turns([call("write_file", path="agent.txt", content="a\n")])),
        questions=Questions(edits_while_asked),
        data_dir=tmp_path / "data",
    )
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Write", project, name="agent"))
        await idle(workbench, sid)
        turn = workbench.facts(sid).turns[0]
        plan = await workbench.rewind_plan(sid, turn.turn_id)
        assert [(f.shown, f.action) for f in plan.files] == [("agent.txt", "removed")]
        await workbench.rewind(sid, turn.turn_id)
        assert not (project / "agent.txt").exists()
        assert (project / "mine.txt").read_text() == "the user's edit while the agent waited\n"
        await workbench.close()
    workbench.close_store()


def test_a_headless_run_records_what_a_rewind_needs(tmp_path: Path, server: FakeModelServer) -> None:
    """`agent-tui run --prompt` keeps the same rewind data as the dashboard: a turn run headless
    (here against a loopback OpenAI-compatible server) is rewound from the dashboard later."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hi')\n")
    write = ("call_w1", "write_file", ['{"path": "src/app.py", ', '"content": "print(\\"bye\\")\\n"}'])
    server.script(Stream(openai_stream(["Changing it."], [write])), Stream(openai_stream(["Done."])))
    result, events = play(prompt_run(tmp_path, "openai", server.openai_url, approve="allow"))
    assert result.ok and (project / "src" / "app.py").read_text() == 'print("bye")\n'
    sid = result.session_id
    assert sid is not None and (undo_dir(tmp_path / "sessions", sid) / "records.jsonl").exists()
    turn_id = next(e.turn_id for e in events if e.type == "turn.started")
    assert turn_id is not None

    async def rewind() -> None:
        workbench = workbench_for(tmp_path, project, ScriptedProvider())
        async with workbench.engine:
            assert await workbench.hydrate(lambda event: None) == []
            outcome = await workbench.rewind(sid, turn_id)
            assert outcome.incomplete is None
            await workbench.close()
        workbench.close_store()

    anyio.run(rewind)
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"
