"""Finishing an agent's work through the workbench: the review's diff, commit, merge (clean,
refused on a dirty checkout, refused on a conflict without a half-merge), discard, and reopening
a closed session. Real git repositories, real scripted runs whose tools write files and run
shell commands.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from support_workbench import agent_script, git, scripted_models

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import event_from_json
from agent_tui.events.chains import chain_violations
from agent_tui.runtime.finishing import FinishRefused
from agent_tui.runtime.review import commit_message
from agent_tui.runtime.session_dirs import closed_sessions
from agent_tui.runtime.workbench import AgentSpec, Workbench

pytestmark = pytest.mark.anyio

PROMPT = "Add a greeting module\n\nIt says hello."


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "tester@example.com")


def repository(tmp_path: Path) -> Path:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "app.py").write_text("print('app')\n")
    (project / "notes.txt").write_text("one\ntwo\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    return project


def writer_script() -> ScriptedProvider:
    writes = [
        ScriptedToolCall(
            tool="write_file", args={"path": "greet.py", "content": "def greet():\n    return 'hi'\n"}
        ),
        ScriptedToolCall(tool="shell", args={"cmd": "printf 'one\\nTWO\\n' > notes.txt"}),
    ]
    return ScriptedProvider(
        agents={"writer": agent_script(Step(text=["Writing."], toolCalls=writes), Step(text=["Done."]))}
    )


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


def status(directory: Path) -> str:
    return git(directory, "status", "--porcelain", "--untracked-files=all")


async def test_the_review_shows_the_whole_change_and_commit_then_merge_finish_it(tmp_path: Path) -> None:
    project = repository(tmp_path)
    workbench = workbench_for(tmp_path, project, writer_script())
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer", own_worktree=True))
        await idle(workbench, sid)
        review = await workbench.review(sid)
        assert review.kind == "worktree" and review.base_branch == "main"
        assert review.base_label.startswith("main at ")
        assert [(f.path, f.status) for f in review.files] == [
            ("greet.py", "added"),
            ("notes.txt", "modified"),
        ]
        notes = review.files[1]
        assert "-two" in notes.diff and "+TWO" in notes.diff and (notes.added, notes.removed) == (1, 1)
        assert review.uncommitted == 2
        assert review.message == commit_message(PROMPT) == f"Add a greeting module\n\n{PROMPT}"
        # Nothing is merged before it is committed.
        with pytest.raises(FinishRefused, match="uncommitted changes: commit them first"):
            await workbench.merge(sid)
        done = await workbench.commit(sid, "Add greet.py")
        assert done.files == 2
        worktree = review.root
        assert status(worktree) == ""
        assert git(worktree, "log", "-1", "--format=%s").strip() == "Add greet.py"
        # The review after the commit still shows the whole change against main.
        assert [f.path for f in (await workbench.review(sid)).files] == ["greet.py", "notes.txt"]
        with pytest.raises(FinishRefused, match="nothing to commit"):
            await workbench.commit(sid, "again")
        merged = await workbench.merge(sid)
        assert merged.into == "main" and merged.fast_forward and merged.checkout == project
        assert (project / "greet.py").read_text() == "def greet():\n    return 'hi'\n"
        assert (project / "notes.txt").read_text() == "one\nTWO\n"
        assert status(project) == ""
        assert git(project, "rev-parse", "main").strip() == done.commit
        await workbench.close()
    workbench.close_store()


async def test_a_merge_into_a_dirty_checkout_is_refused_and_the_users_file_is_untouched(
    tmp_path: Path,
) -> None:
    project = repository(tmp_path)
    workbench = workbench_for(tmp_path, project, writer_script())
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer", own_worktree=True))
        await idle(workbench, sid)
        await workbench.commit(sid, "Agent work")
        mine = b"print('app')\n# my own edit, not committed\r\n\x00"
        (project / "app.py").write_bytes(mine)
        main_before = git(project, "rev-parse", "main")
        with pytest.raises(
            FinishRefused, match=r"your checkout of main .* has uncommitted changes \(app.py\)"
        ):
            await workbench.merge(sid)
        assert (project / "app.py").read_bytes() == mine
        assert git(project, "rev-parse", "main") == main_before
        assert git(project, "stash", "list") == ""
        assert status(project) == " M app.py\n"
        await workbench.close()
    workbench.close_store()


async def test_a_conflicting_merge_stops_with_the_files_named_and_leaves_no_half_merge(
    tmp_path: Path,
) -> None:
    project = repository(tmp_path)
    workbench = workbench_for(tmp_path, project, writer_script())
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer", own_worktree=True))
        await idle(workbench, sid)
        await workbench.commit(sid, "Agent work")
        (project / "notes.txt").write_text("one\nzwei\n")  # main changes the same line meanwhile
        git(project, "commit", "-q", "-am", "mine")
        main_before = git(project, "rev-parse", "main")
        with pytest.raises(FinishRefused, match=r"conflicts in notes.txt: nothing was merged"):
            await workbench.merge(sid)
        assert status(project) == ""
        assert not (project / ".git" / "MERGE_HEAD").exists()
        assert git(project, "rev-parse", "main") == main_before
        assert (project / "notes.txt").read_text() == "one\nzwei\n"
        await workbench.close()
    workbench.close_store()


async def test_a_merge_into_a_branch_no_checkout_holds_moves_only_that_branch(tmp_path: Path) -> None:
    project = repository(tmp_path)
    workbench = workbench_for(tmp_path, project, writer_script())
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer", own_worktree=True))
        await idle(workbench, sid)
        await workbench.commit(sid, "Agent work")
        git(project, "switch", "-q", "-c", "elsewhere")
        (project / "app.py").write_text("print('mine')\n")  # uncommitted, on another branch
        (project / "other.txt").write_text("x\n")
        git(project, "add", "other.txt")
        git(project, "commit", "-q", "-m", "on elsewhere")
        git(project, "switch", "-q", "main")
        git(project, "commit", "-q", "--allow-empty", "-m", "main moves")
        git(project, "switch", "-q", "elsewhere")
        merged = await workbench.merge(sid, "Merge the greeting")
        assert merged.checkout is None and not merged.fast_forward
        assert git(project, "log", "-1", "--format=%s %P", "main").startswith("Merge the greeting ")
        assert len(git(project, "log", "-1", "--format=%P", "main").split()) == 2
        assert git(project, "show", "main:greet.py").startswith("def greet")
        assert git(project, "symbolic-ref", "--short", "HEAD").strip() == "elsewhere"
        assert not (project / "greet.py").exists()
        await workbench.close()
    workbench.close_store()


async def test_discard_closes_the_session_removes_its_worktree_and_deletes_its_branch(tmp_path: Path) -> None:
    project = repository(tmp_path)
    workbench = workbench_for(tmp_path, project, writer_script())
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer", own_worktree=True))
        await idle(workbench, sid)
        review = await workbench.review(sid)
        await workbench.discard(sid)
        assert not review.root.exists()
        assert git(project, "branch", "--list", review.branch or "x") == ""
        assert sid in closed_sessions(tmp_path / "sessions")
        assert status(project) == "" and (project / "notes.txt").read_text() == "one\ntwo\n"
        await workbench.close()
    workbench.close_store()


async def test_a_directory_session_is_reviewed_against_its_first_turns_start(tmp_path: Path) -> None:
    project = repository(tmp_path)
    (project / "app.py").write_text("print('changed before the agent')\n")  # the user's own change
    workbench = workbench_for(tmp_path, project, writer_script())
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer"))
        await idle(workbench, sid)
        review = await workbench.review(sid)
        assert review.kind == "directory" and review.base_label == "the start of its first turn"
        assert [f.path for f in review.files] == ["greet.py", "notes.txt"]  # not app.py
        assert not review.can_finish
        with pytest.raises(FinishRefused, match="not in a worktree of its own"):
            await workbench.commit(sid, "x")
        await workbench.close()
    workbench.close_store()


async def test_a_closed_session_is_listed_and_reopened_with_its_sub_agents(tmp_path: Path) -> None:
    project = repository(tmp_path)
    provider = ScriptedProvider(agents={"talker": agent_script(Step(text=["One."]), Step(text=["Two."]))})
    workbench = workbench_for(tmp_path, project, provider)
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Say one", project, name="talker"))
        await idle(workbench, sid)
        await workbench.dispose(sid)
        assert [s.session_id for s in await workbench.closed()] == [sid]
        with pytest.raises(FinishRefused, match="not closed"):
            await workbench.reopen("sess_other", lambda event: None)
        folded: list[str] = []
        assert await workbench.reopen(sid, lambda event: folded.append(event.type)) == []
        assert folded[0] == "session.created" and folded[-1] == "turn.completed"
        assert await workbench.closed() == [] and sid not in closed_sessions(tmp_path / "sessions")
        assert workbench.send(sid, "Say two").how == "started"  # type: ignore[union-attr]
        await idle(workbench, sid)
        await workbench.close()
    workbench.close_store()
    events = [
        event_from_json(raw) for raw in (tmp_path / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()
    ]
    assert chain_violations(events) == []
    assert [e.payload["stopReason"] for e in events if e.type == "turn.completed"] == ["final", "final"]


async def test_a_reopened_dashboard_does_not_reopen_until_asked(tmp_path: Path) -> None:
    project = repository(tmp_path)
    provider = ScriptedProvider(agents={"talker": agent_script(Step(text=["One."]))})
    first = workbench_for(tmp_path, project, provider)
    async with first.engine:
        sid = await first.start_agent(AgentSpec("Say one", project, name="talker"))
        await idle(first, sid)
        await first.dispose(sid)
        await first.close()
    first.close_store()
    second = workbench_for(tmp_path, project, provider)
    async with second.engine:
        assert await second.hydrate(lambda event: None) == []
        assert second.engine.sessions() == []
        await second.reopen(sid, lambda event: None)
        assert [info.id for info in second.engine.sessions()] == [sid]
        await second.close()
    second.close_store()


async def test_no_hook_of_the_repository_runs_for_a_commit_a_merge_or_a_discard(tmp_path: Path) -> None:
    project = repository(tmp_path)
    marker = tmp_path / "hook-ran"
    for name in (
        "post-checkout",
        "post-index-change",
        "pre-commit",
        "commit-msg",
        "post-commit",
        "pre-merge-commit",
        "post-merge",
        "reference-transaction",
    ):
        hook = project / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        hook.chmod(0o755)
    workbench = workbench_for(tmp_path, project, writer_script())
    async with workbench.engine:
        first = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer", own_worktree=True))
        await idle(workbench, first)
        assert not marker.exists()  # making the worktree ran no checkout hook either
        await workbench.commit(first, "Agent work")
        git(project, "commit", "-q", "--allow-empty", "--no-verify", "-m", "main moves")  # a real merge
        if marker.exists():
            marker.unlink()  # the test's own commit
        merged = await workbench.merge(first)
        assert not merged.fast_forward and merged.checkout == project
        second = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer", own_worktree=True))
        await idle(workbench, second)
        await workbench.discard(second)
        await workbench.close()
    workbench.close_store()
    assert not marker.exists(), marker.read_text()


async def test_a_merge_that_would_overwrite_an_untracked_file_is_refused(tmp_path: Path) -> None:
    project = repository(tmp_path)
    workbench = workbench_for(tmp_path, project, writer_script())
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec(PROMPT, project, name="writer", own_worktree=True))
        await idle(workbench, sid)
        await workbench.commit(sid, "Agent work")
        git(project, "commit", "-q", "--allow-empty", "-m", "main moves")
        mine = b"my own greet.py, never added\n"
        (project / "greet.py").write_bytes(mine)
        main_before = git(project, "rev-parse", "main")
        with pytest.raises(
            FinishRefused, match=r"would overwrite untracked files of your checkout \(greet.py\)"
        ):
            await workbench.merge(sid)
        assert (project / "greet.py").read_bytes() == mine
        assert git(project, "rev-parse", "main") == main_before
        assert not (project / ".git" / "MERGE_HEAD").exists()
        assert status(project) == "?? greet.py\n"
        await workbench.close()
    workbench.close_store()


def test_hostile_file_names_are_reviewed_whole_and_shown_inert(tmp_path: Path) -> None:
    from agent_tui.runtime.review import review_worktree
    from agent_tui.runtime.worktrees import create_worktree
    from agent_tui.tui.screens.review import file_label

    project = repository(tmp_path)
    worktree = create_worktree(project, "hostile")
    names = ["-rf", "a b.txt", "new\nline.txt", "esc\x1b[31mred.txt", "ünï.txt", "--output=x"]
    for name in names:
        (worktree.path / name).write_text(f"content of {name!r}\n")
    (worktree.path / "notes.txt").write_text("one\ntwo\nthree\n")
    review = review_worktree(
        "s", worktree.path, worktree.branch, worktree.base_branch, worktree.base_commit, "x"
    )
    by_path = {item.path: item for item in review.files}
    assert set(by_path) == {*names, "notes.txt"}
    for name in names:
        assert by_path[name].status == "added" and by_path[name].new_text == f"content of {name!r}\n"
        assert by_path[name].old_text == ""
    assert by_path["notes.txt"].added == 1 and "+three" in by_path["notes.txt"].diff
    label = file_label(by_path["esc\x1b[31mred.txt"]).plain
    assert "\x1b" not in label  # the escape is shown as a marker, never sent to the terminal
    assert status(project) == ""  # the user's checkout: nothing staged, nothing changed


def test_a_symlink_the_agent_added_is_marked_as_one(tmp_path: Path) -> None:
    from agent_tui.runtime.review import review_worktree
    from agent_tui.runtime.worktrees import create_worktree
    from agent_tui.tui.screens.review import file_label

    project = repository(tmp_path)
    worktree = create_worktree(project, "linker")
    (worktree.path / "config").symlink_to("/etc/passwd")
    review = review_worktree(
        "s", worktree.path, worktree.branch, worktree.base_branch, worktree.base_commit, "x"
    )
    (link,) = review.files
    assert (link.path, link.status, link.symlink, link.new_text) == ("config", "added", True, "/etc/passwd")
    assert "(symlink)" in file_label(link).plain
