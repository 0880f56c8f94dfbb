"""The review screen says what came of each action on the screen itself (not only as a notice
under it, seen after `escape`): a commit, a merge, a rewind, a discard, and each refusal whole,
a merge refused for an untracked file of the user's checkout included.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from support_tui import snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import agent_script, git, scripted_models
from test_review_screen import ReviewApp, settled, shop_with_a_worktree
from textual.pilot import Pilot
from textual.widgets import Static

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.ports import Command, Merge, Reply
from agent_tui.runtime.command_executor import CommandExecutor
from agent_tui.runtime.commands import refused
from agent_tui.runtime.review import ReviewRefused, merge_worktree, review_worktree
from agent_tui.runtime.workbench import AgentSpec, Workbench
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.review import ReviewScreen
from agent_tui.tui.screens.review_dialogs import CommitMessageScreen, TurnPickScreen


@pytest.fixture(autouse=True)
def pinned_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "tester@example.com")
        monkeypatch.setenv(f"GIT_{role}_DATE", "2026-11-30T12:00:00Z")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    yield


class QuietReviewApp(ReviewApp):
    """The review screen alone, its notices kept rather than shown as toasts (the dashboard's go
    to its summary bar, under the review screen: the result line is what the user sees)."""

    def __init__(self, screen: ReviewScreen) -> None:
        super().__init__(screen)
        self.said: list[str] = []

    def notify(self, message: str, *, title: str = "", **_: object) -> None:
        self.said.append(f"{title}: {message}")


def result_line(screen: ReviewScreen) -> str:
    line = screen.query_one("#review-result", Static)
    return str(line.render()) if line.display else ""


async def until(pilot: Pilot, condition: object, what: str) -> None:
    with anyio.fail_after(20):
        while not condition():  # type: ignore[operator]
            await pilot.pause(0.02)


@pytest.mark.anyio
async def test_commit_merge_rewind_discard_and_their_refusals_show_on_the_review_screen(
    tmp_path: Path,
) -> None:
    project = Path(os.environ["HOME"]) / "repo"
    project.mkdir()
    (project / "notes.txt").write_text("one\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    write = ScriptedToolCall(tool="write_file", args={"path": "greet.py", "content": "print('hi')\n"})
    provider = ScriptedProvider(
        agents={"w": agent_script(Step(text=["W."], toolCalls=[write]), Step(text=["Done."]))}
    )
    workbench = Workbench.for_project(
        project=project,
        sessions_dir=tmp_path / "sessions",
        models=scripted_models(provider),
        questions=Questions(fixed_answer("allow")),
        data_dir=tmp_path / "data",
    )
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Greet people", project, name="w", own_worktree=True))
        with anyio.fail_after(20):
            while workbench.is_running(sid):
                await anyio.sleep(0.01)
        review = await workbench.review(sid)
        screen = ReviewScreen(CommandExecutor(workbench.engine, workbench=workbench), review, "w")
        app = QuietReviewApp(screen)
        async with app.run_test(size=(100, 30)) as pilot:
            await settled(pilot)
            assert result_line(screen) == ""
            # A merge before the commit: refused, and said here.
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge question")
            await pilot.press("y")
            await until(pilot, lambda: "Not merged" in result_line(screen), "the refusal")
            assert "uncommitted changes: commit them first (c)" in result_line(screen)
            # The commit: said with its id.
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, CommitMessageScreen), "the message")
            await pilot.press("ctrl+s")
            await until(pilot, lambda: "committed" in screen.finished, "the commit")
            commit = git(review.root, "rev-parse", "HEAD").strip()
            await until(pilot, lambda: result_line(screen).startswith("✓ Committed:"), "the commit said")
            assert commit[:7] in result_line(screen)
            # The user's checkout has an untracked greet.py the merge would overwrite: said whole.
            (project / "greet.py").write_text("mine\n")
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge question")
            await pilot.press("y")
            await until(pilot, lambda: "untracked" in result_line(screen), "the untracked refusal")
            assert result_line(screen) == (
                "✗ Not merged: the merge would overwrite untracked files of your checkout (greet.py): "
                "move them away yourself, then merge again"
            )
            assert (project / "greet.py").read_text() == "mine\n"
            # Moved away: the merge is done and said.
            (project / "greet.py").unlink()
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge question")
            await pilot.press("y")
            await until(pilot, lambda: "merged" in screen.finished, "the merge")
            assert result_line(screen).startswith("✓ Merged: ")
            assert result_line(screen).endswith(" into main.")
            # A rewind: what it put back.
            await pilot.press("w")
            await until(pilot, lambda: isinstance(app.screen, TurnPickScreen), "the turn list")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the rewind question")
            await pilot.press("y")
            await until(pilot, lambda: "rewound" in screen.finished, "the rewind")
            assert result_line(screen).startswith("✓ Rewound: 1 file(s) put back.")
            # The discard: the screen stays and says so; nothing else is left to do.
            await pilot.press("d")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the discard question")
            await pilot.press("y")
            await until(pilot, lambda: "discarded" in screen.finished, "the discard")
            assert app.screen is screen
            assert result_line(screen).startswith("✓ Discarded: w: worktree removed, branch deleted")
            await pilot.press("c")
            assert result_line(screen) == "! Nothing to do: it was discarded; esc goes back"
            assert app.said[:2] == [
                "Not merged: the agent's worktree has uncommitted changes: commit them first (c)",
                f"Committed: 1 file(s) as {commit[:7]}.",
            ]  # and each is a notice too
        await workbench.close()
    workbench.close_store()


class MergeRefusedForAnUntrackedFile:
    """A host that commits the worktree and merges it for real, into a checkout that has an
    untracked file in the way (what the runtime says is what the screen gets)."""

    def __init__(self, project: Path, worktree: Path) -> None:
        self.project, self.worktree = project, worktree

    async def send(self, command: Command, host: str | None = None) -> Reply:
        assert isinstance(command, Merge)
        git(self.worktree, "add", "-A")
        git(self.worktree, "commit", "-q", "-m", "Fix the login check")
        (self.project / "src" / "test_auth.py").write_text("# mine\n")
        try:
            merge_worktree(self.worktree, "agent-tui/fix-login-4f2a9c", "main", "merge")
        except ReviewRefused as error:
            return refused(str(error))
        raise AssertionError("the merge was not refused")


def test_looks_of_a_merge_refused_for_an_untracked_file_80x24(snap_compare) -> None:
    project, worktree = shop_with_a_worktree()
    review = review_worktree(
        "sess_fix", worktree, "agent-tui/fix-login-4f2a9c", "main", None, "Fix the login check"
    )
    app = QuietReviewApp(ReviewScreen(MergeRefusedForAnUntrackedFile(project, worktree), review, "fix-login"))

    async def merge(pilot: Pilot) -> None:
        await settled(pilot)
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge question")
        await pilot.press("y")
        await until(pilot, lambda: "untracked" in app.review_screen.result, "the refusal")
        await settled(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=merge)


@pytest.mark.anyio
async def test_from_the_dashboard_a_merge_refused_for_an_untracked_file_is_said_on_the_review(
    tmp_path: Path,
) -> None:
    """The refusal travels whole (runtime → executor's reply → `FinishRefused` → the screen): it
    is said on the review, where the user is, and kept in the notices (`N`)."""
    from support_workbench import wait_for

    from agent_tui.tui.app import AgentTuiApp

    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# project\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    write = ScriptedToolCall(tool="write_file", args={"path": "notes.txt", "content": "from the agent\n"})
    provider = ScriptedProvider(agents={"isolated": agent_script(Step(text=["Writing."], toolCalls=[write]))})
    app = AgentTuiApp(sessions_dir=tmp_path / "sessions", project=project, models=scripted_models(provider))
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: live.workbench is not None, "the engine")
        sid = await live.workbench.start_agent(  # type: ignore[union-attr]
            AgentSpec("Write notes", project, name="isolated", own_worktree=True)
        )
        await wait_for(pilot, lambda: len(live.questions.waiting()) == 1, "the write request")
        await pilot.press("A", "y")
        await wait_for(pilot, lambda: live.state.sessions[sid].status == "completed", "the turn")
        app.dashboard.select_session(sid)
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CommitMessageScreen), "the message")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "committed" in screen.finished, "the commit")
        (project / "notes.txt").write_text("mine\n")
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge question")
        await pilot.press("y")
        await wait_for(pilot, lambda: "untracked" in screen.result, "the refusal")
        assert result_line(screen).startswith(
            "✗ Not merged: the merge would overwrite untracked files of your checkout (notes.txt)"
        )
        assert app.notices[-1].message.startswith("the merge would overwrite untracked files")
        await pilot.press("escape")
        await pilot.press("q")
