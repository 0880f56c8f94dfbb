"""The review screen: its looks at 80x24 and 120x40 (a real worktree of a real repository, with
pinned commit dates so the pictures are byte-stable), and its keys driving the workbench's real
actions (commit with the prefilled message, merge, rewind) on a real scripted run.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from support_tui import snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import agent_script, git, scripted_models
from textual.app import App
from textual.pilot import Pilot

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.runtime.command_executor import CommandExecutor, bounded
from agent_tui.runtime.review import review_worktree
from agent_tui.runtime.workbench import AgentSpec, Workbench
from agent_tui.tui.app_base import stylesheet_path
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.review import ReviewScreen, review_title
from agent_tui.tui.screens.review_dialogs import CommitMessageScreen, TurnPickScreen

BEFORE = '''"""Login checks for the shop."""

from shop.users import find_user


def check_login(name: str, password: str) -> bool:
    user = find_user(name)
    if user.password == password:
        return True
    return False
'''
AFTER = BEFORE.replace(
    "    if user.password == password:\n        return True\n    return False\n",
    "    if user is None:\n        return False\n    return hmac.compare_digest(user.password_hash, hash_password(password))\n",
).replace("from shop.users", "import hmac\n\nfrom shop.passwords import hash_password\nfrom shop.users")


@pytest.fixture(autouse=True)
def pinned_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fixed identities and dates (so commit ids are the same every run), HOME in the test."""
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "tester@example.com")
        monkeypatch.setenv(f"GIT_{role}_DATE", "2026-11-30T12:00:00Z")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    yield


class ReviewApp(App[None]):
    CSS_PATH = str(stylesheet_path())

    def __init__(self, screen: Any) -> None:
        super().__init__()
        self.review_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self.review_screen)


def shop_with_a_worktree() -> tuple[Path, Path]:
    """`~/shop` on main, and a worktree of it on `agent-tui/fix-login-4f2a9c` with the agent's
    change: one file edited, one added, one deleted (not committed)."""
    project = Path(os.environ["HOME"]) / "shop"
    (project / "src").mkdir(parents=True)
    (project / "src" / "auth.py").write_text(BEFORE)
    (project / "OLD_NOTES.md").write_text("# old\n")
    (project / "README.md").write_text("# shop\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    worktree = project / ".agent-tui" / "worktrees" / "fix-login-4f2a9c"
    git(project, "worktree", "add", "-q", "-b", "agent-tui/fix-login-4f2a9c", str(worktree))
    (worktree / "src" / "auth.py").write_text(AFTER)
    (worktree / "src" / "test_auth.py").write_text(
        'def test_unknown_user():\n    assert not check_login("nobody", "secret")\n'
    )
    (worktree / "OLD_NOTES.md").unlink()
    return project, worktree


def scene_app(bound: int | None = None) -> ReviewApp:
    """The review of `shop_with_a_worktree`; with `bound`, as a host sends it over the bus when
    its reply may hold only `bound` bytes of diffs."""
    project, worktree = shop_with_a_worktree()
    review = review_worktree(
        "sess_fix",
        worktree,
        "agent-tui/fix-login-4f2a9c",
        "main",
        None,
        "Fix the login check: compare hashes",
    )
    workbench = Workbench.for_project(
        project=project,
        sessions_dir=project.parent / "sessions",
        models=scripted_models(ScriptedProvider()),
        questions=None,
        data_dir=project.parent / "data",
    )
    return ReviewApp(
        ReviewScreen(
            CommandExecutor(workbench.engine, workbench=workbench),
            review if bound is None else bounded(review, bound),
            "fix-login",
        )
    )


async def settled(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.pause()


class TestReviewLooks:
    def test_80x24(self, snap_compare) -> None:
        assert snap_compare(scene_app(), terminal_size=(80, 24), run_before=settled)

    def test_120x40_on_the_second_file(self, snap_compare) -> None:
        async def second(pilot: Pilot) -> None:
            await settled(pilot)
            await pilot.press("down")
            await settled(pilot)

        assert snap_compare(scene_app(), terminal_size=(120, 40), run_before=second)

    def test_120x40_read_from_a_host_with_a_diff_cut(self, snap_compare) -> None:
        async def third(pilot: Pilot) -> None:
            await settled(pilot)
            await pilot.press("down", "down")
            await settled(pilot)

        assert snap_compare(scene_app(CUT_BOUND), terminal_size=(120, 40), run_before=third)


CUT_BOUND = 900
"""Room for the deleted notes whole, then for the names of the other two files, not for their
diffs."""


def test_a_review_cut_for_the_bus_keeps_what_fits_and_says_what_does_not() -> None:
    _, worktree = shop_with_a_worktree()
    whole = review_worktree("s", worktree, "agent-tui/fix-login-4f2a9c", "main", None, "Fix it")
    assert bounded(whole, 10**6) == whole
    marker = "[diff not sent: the review reached its 900 bytes bound for the bus]"
    cut = bounded(whole, CUT_BOUND)
    counts = [(f.path, f.status, f.added, f.removed) for f in cut.files]
    assert counts == [(f.path, f.status, f.added, f.removed) for f in whole.files]
    assert cut.files[0] == whole.files[0]
    assert [(f.diff, f.old_text, f.new_text) for f in cut.files[1:]] == [(marker, None, None)] * 2
    assert cut.cut == (
        "2 files' diffs were cut to keep the reply under 900 bytes; the whole change is on the host, in its worktree"
    )
    assert "diff cut" in review_title(cut, "fix-login").plain
    plain = bounded(whole, 1000)  # the edit's diff fits without its texts; the new file's name does not
    assert plain.files[:2] == (
        whole.files[0],
        dataclasses.replace(whole.files[1], old_text=None, new_text=None),
    )
    assert (len(plain.files), plain.more_files) == (2, 1)
    assert plain.cut == (
        "1 more file is only counted to keep the reply under 1,000 bytes; the whole change is on the host, in its worktree"
    )


def test_the_files_and_the_title_say_what_changed_against_what() -> None:
    _, worktree = shop_with_a_worktree()
    review = review_worktree("s", worktree, "agent-tui/fix-login-4f2a9c", "main", None, "Fix it")
    assert [(f.path, f.status) for f in review.files] == [
        ("OLD_NOTES.md", "deleted"),
        ("src/auth.py", "modified"),
        ("src/test_auth.py", "added"),
    ]
    title = review_title(review, "fix-login").plain
    assert title.endswith(
        "worktree ~/shop/.agent-tui/worktrees/fix-login-4f2a9c (agent-tui/fix-login-4f2a9c)"
    )
    assert "against main at " in title and title.startswith(
        "Review fix-login · 3 files +8 −4 · 3 uncommitted · against main at "
    )


async def until(pilot: Pilot, condition: Any, what: str) -> None:
    with anyio.fail_after(20):
        while not condition():
            await pilot.pause(0.02)


@pytest.mark.anyio
async def test_the_keys_commit_with_the_prefilled_message_merge_and_rewind(tmp_path: Path) -> None:
    project = Path(os.environ["HOME"]) / "repo"
    project.mkdir()
    (project / "notes.txt").write_text("one\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    writes = [
        ScriptedToolCall(tool="write_file", args={"path": "greet.py", "content": "print('hi')\n"}),
        ScriptedToolCall(tool="shell", args={"cmd": "echo two >> notes.txt"}),
    ]
    provider = ScriptedProvider(
        agents={"w": agent_script(Step(text=["W."], toolCalls=writes), Step(text=["Done."]))}
    )
    workbench = Workbench.for_project(
        project=project,
        sessions_dir=tmp_path / "sessions",
        models=scripted_models(provider),
        questions=Questions(fixed_answer("allow")),
        data_dir=tmp_path / "data",
    )
    async with workbench.engine:
        sid = await workbench.start_agent(
            AgentSpec("Greet people\n\nIn greet.py.", project, name="w", own_worktree=True)
        )
        with anyio.fail_after(20):
            while workbench.is_running(sid):
                await anyio.sleep(0.01)
        review = await workbench.review(sid)
        screen = ReviewScreen(CommandExecutor(workbench.engine, workbench=workbench), review, "w")
        app = ReviewApp(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            # Rewind the only turn: the worktree is as it was made.
            await pilot.press("w")
            await until(pilot, lambda: isinstance(app.screen, TurnPickScreen), "the turn list")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the rewind question")
            await pilot.press("y")
            await until(pilot, lambda: "rewound" in screen.finished, "the rewind")
            await until(pilot, lambda: screen.review.files == (), "the review read again")
            assert not (review.root / "greet.py").exists()
            assert (review.root / "notes.txt").read_text() == "one\n"
            # Write something again, then commit it with the prefilled message.
            (review.root / "greet.py").write_text("print('hello')\n")
            await pilot.press("r")
            await until(pilot, lambda: len(screen.review.files) == 1, "the review read again")
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, CommitMessageScreen), "the message")
            assert app.screen.query_one("TextArea").text == "Greet people\n\nGreet people\n\nIn greet.py."  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
            await until(pilot, lambda: "committed" in screen.finished, "the commit")
            assert git(review.root, "log", "-1", "--format=%s").strip() == "Greet people"
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge question")
            await pilot.press("y")
            await until(pilot, lambda: "merged" in screen.finished, "the merge")
            assert (project / "greet.py").read_text() == "print('hello')\n"
        await workbench.close()
    workbench.close_store()


@pytest.mark.anyio
async def test_D_opens_the_review_of_the_selected_session_and_O_reopens_a_closed_one(tmp_path: Path) -> None:
    from support_workbench import wait_for

    from agent_tui.tui.app import AgentTuiApp
    from agent_tui.tui.screens.close_session import CloseSessionScreen
    from agent_tui.tui.screens.reopen import ReopenScreen

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
        review = app.screen
        assert isinstance(review, ReviewScreen)
        assert [(f.path, f.status) for f in review.review.files] == [("notes.txt", "added")]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen), "the dashboard")
        tree = app.dashboard.session_tree
        await pilot.press("delete")
        assert isinstance(app.screen, CloseSessionScreen)
        await pilot.press("k")
        await wait_for(pilot, lambda: sid not in tree.visible_ids, "the session to leave the tree")
        await pilot.press("O")
        await wait_for(pilot, lambda: isinstance(app.screen, ReopenScreen), "the closed sessions")
        await pilot.press("enter")
        await wait_for(pilot, lambda: sid in tree.visible_ids, "the session back in the tree")
        assert [info.id for info in live.workbench.engine.sessions()] == [sid]  # type: ignore[union-attr]
        await pilot.press("q")


@pytest.mark.anyio
async def test_O_reopens_a_session_closed_in_an_earlier_run_with_its_stored_turns(tmp_path: Path) -> None:
    """The `Reopen` command's stored events reach the dashboard's state (the session was closed
    before this run started, so nothing of it was folded)."""
    from support_workbench import wait_for

    from agent_tui.tui.app import AgentTuiApp
    from agent_tui.tui.screens.reopen import ReopenScreen

    project = tmp_path / "project"
    project.mkdir()
    provider = ScriptedProvider(agents={"w": agent_script(Step(text=["Done."]))})
    first = Workbench.for_project(
        project=project,
        sessions_dir=tmp_path / "sessions",
        models=scripted_models(provider),
        questions=Questions(fixed_answer("allow")),
        data_dir=tmp_path / "data",
    )
    async with first.engine:
        sid = await first.start_agent(AgentSpec("Say done", project, name="w"))
        with anyio.fail_after(20):
            while first.is_running(sid):
                await anyio.sleep(0.01)
        await first.dispose(sid)
    first.close_store()
    app = AgentTuiApp(sessions_dir=tmp_path / "sessions", project=project, models=scripted_models(provider))
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: live.hydrated, "the engine")
        assert sid not in live.state.sessions
        await pilot.press("O")
        await wait_for(pilot, lambda: isinstance(app.screen, ReopenScreen), "the closed sessions")
        await pilot.press("enter")
        tree = app.dashboard.session_tree
        await wait_for(pilot, lambda: sid in tree.visible_ids, "the session back in the tree")
        session = live.state.sessions[sid]
        assert (session.status, len(session.turns)) == ("completed", 1)
        await pilot.press("q")


@pytest.mark.anyio
async def test_a_rewind_asks_on_its_own_before_writing_a_protected_path_back(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    (project / ".agent-tui").mkdir(parents=True)
    rules = project / ".agent-tui" / "permissions.toml"
    rules.write_text("# the project's rules\n")
    write = ScriptedToolCall(
        tool="write_file", args={"path": ".agent-tui/permissions.toml", "content": "# x\n"}
    )
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
        sid = await workbench.start_agent(AgentSpec("Change the rules", project, name="w"))
        with anyio.fail_after(20):
            while workbench.is_running(sid):
                await anyio.sleep(0.01)
        commands = CommandExecutor(workbench.engine, workbench=workbench)
        screen = ReviewScreen(commands, await workbench.review(sid), "w")
        app = ReviewApp(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            for allow, expected in (("n", "# x\n"), ("y", "# the project's rules\n")):
                await pilot.press("w")
                await until(pilot, lambda: isinstance(app.screen, TurnPickScreen), "the turn list")
                await pilot.press("enter")
                await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the rewind question")
                question = str(app.screen.query_one("#confirm-question").render())
                assert "restore .agent-tui/permissions.toml (protected: asked next)" in question
                await pilot.press("y")
                await until(
                    pilot,
                    lambda: (
                        isinstance(app.screen, ConfirmScreen)
                        and "protected paths" in str(app.screen.query_one("#confirm-question").render())
                    ),
                    "the protected question",
                )
                done = len(screen.finished)
                await pilot.press(allow)
                await until(pilot, lambda done=done: len(screen.finished) > done, "the rewind")
                assert rules.read_text() == expected
        await workbench.close()
    workbench.close_store()
