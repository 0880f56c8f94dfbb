"""The workbench in use: a real engine (scripted model), real logs, real files, real git.

Each test drives the dashboard with keys the way a user would: `n` and the form to start an
agent, the composer to follow up or steer, `A` to reach a request, the diff in the approval, a
worktree agent, a restart that reopens the earlier sessions. The model is the scripted provider
(`ScriptedProvider`, scripts chosen by agent name); everything else is the real thing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_tui import detail_text, log_of
from support_workbench import agent_script, git, scripted_models, type_text, wait_for
from textual.widgets import Checkbox, Input, Static, TextArea

from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.runtime.commands import Answer
from agent_tui.runtime.workbench import AgentSpec
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.run_surface import start_agent
from agent_tui.tui.screens.approval import ApprovalScreen
from agent_tui.tui.screens.close_session import CloseSessionScreen
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.help import HelpScreen
from agent_tui.tui.screens.new_agent import NewAgentScreen
from agent_tui.tui.widgets.composer import Composer

pytestmark = pytest.mark.anyio


def make_app(tmp_path: Path, provider: ScriptedProvider, *, prompt: str | None = None) -> AgentTuiApp:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return AgentTuiApp(
        sessions_dir=tmp_path / "sessions", project=project, models=scripted_models(provider), prompt=prompt
    )


def named(app: AgentTuiApp, name: str) -> str | None:
    assert app.live is not None
    return next((sid for sid, s in app.live.state.sessions.items() if s.display_name == name), None)


def status(app: AgentTuiApp, name: str) -> str | None:
    assert app.live is not None
    sid = named(app, name)
    return app.live.state.sessions[sid].status if sid else None


def completed_after(app: AgentTuiApp, name: str, turns: int) -> bool:
    """Whether the session called `name` has had `turns` turns and the last one completed."""
    sid = named(app, name)
    return (
        app.live is not None
        and sid is not None
        and len(app.live.state.sessions[sid].turns) == turns
        and status(app, name) == "completed"
    )


def tool(name: str, **args: object) -> ScriptedToolCall:
    return ScriptedToolCall(tool=name, args=args)


async def next_request(pilot, app: AgentTuiApp, what: str) -> ApprovalScreen:
    """Wait until one request waits and no modal is open (the last answer went through), open it."""
    live = app.live
    assert live is not None
    await wait_for(
        pilot, lambda: len(live.questions.waiting()) == 1 and not isinstance(app.screen, ApprovalScreen), what
    )
    await pilot.press("A")
    modal = app.screen
    assert isinstance(modal, ApprovalScreen)
    return modal


async def ready(pilot, app: AgentTuiApp) -> None:
    assert app.live is not None
    live = app.live
    await wait_for(pilot, lambda: live.workbench is not None and live.project is not None, "the engine")


class TestNewAgent:
    async def test_n_opens_the_form_and_the_agent_streams_its_first_delta(self, tmp_path: Path) -> None:
        provider = ScriptedProvider(agents={"fixer": agent_script(Step(text=["Looking ", "at it now."]))})
        app = make_app(tmp_path, provider)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app)
            await pilot.press("n")
            assert isinstance(app.screen, NewAgentScreen)
            await type_text(pilot, "Fix the flaky test.\nThen say so.", newline="enter")
            app.screen.query_one("#new-agent-name", Input).value = "fixer"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: status(app, "fixer") == "completed", "the agent's turn")
            sid = named(app, "fixer")
            assert sid is not None and app.dashboard.session_tree.selected_id == sid
            events = log_of(app, sid)
            deltas = [e["payload"]["text"] for e in events if e["type"] == "model.delta"]
            assert deltas[0] == "Looking "
            assert events[2]["payload"]["content"] == "Fix the flaky test.\nThen say so."
            await wait_for(pilot, lambda: "Looking at it now." in detail_text(app), "the words in the detail")
            await pilot.press("q")

    async def test_a_project_with_no_sessions_says_how_to_start_one(self, tmp_path: Path) -> None:
        app = make_app(tmp_path, ScriptedProvider())
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app)
            await wait_for(pilot, lambda: "Press n to start an agent" in detail_text(app), "the hint")
            await pilot.press("q")

    async def test_an_empty_prompt_keeps_the_form_open_and_says_why(self, tmp_path: Path) -> None:
        app = make_app(tmp_path, ScriptedProvider())
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app)
            await pilot.press("n", "ctrl+s")
            assert isinstance(app.screen, NewAgentScreen)
            assert "Write a prompt first" in str(app.screen.query_one("#new-agent-error", Static).content)
            await pilot.press("escape")
            assert not isinstance(app.screen, NewAgentScreen)
            assert app.live is not None and not app.live.state.sessions
            await pilot.press("q")

    async def test_prompt_flag_starts_an_agent_at_launch(self, tmp_path: Path) -> None:
        provider = ScriptedProvider(agents={"fix-it": agent_script(Step(text=["On it."]))})
        app = make_app(tmp_path, provider, prompt="Fix it")
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: status(app, "fix-it") == "completed", "the launch agent")
            await pilot.press("q")


class TestComposer:
    async def test_a_follow_up_on_an_idle_session_is_turn_2_of_the_same_log(self, tmp_path: Path) -> None:
        provider = ScriptedProvider(
            agents={"fix-it": agent_script(Step(text=["First answer."]), Step(text=["Second answer."]))}
        )
        app = make_app(tmp_path, provider, prompt="Fix it")
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: status(app, "fix-it") == "completed", "turn 1")
            sid = named(app, "fix-it")
            assert sid is not None
            await pilot.press("i")
            composer = app.dashboard.query_one("#composer", Composer)
            assert composer.input.has_focus
            await type_text(pilot, "And the docs?")
            await pilot.press("enter")
            await wait_for(pilot, lambda: completed_after(app, "fix-it", 2), "turn 2")
            assert composer.text == ""
            events = log_of(app, sid)
            started = [e for e in events if e["type"] == "turn.started"]
            assert len(started) == 2 and started[1]["payload"]["promptPreview"] == "And the docs?"
            assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
            seen = [m.text for m in provider.calls[-1].messages]
            assert "Fix it" in seen and "First answer." in seen and "And the docs?" in seen
            await pilot.press("q")

    async def test_enter_on_a_running_turn_steers_it(self, tmp_path: Path) -> None:
        write = tool("write_file", path="note.txt", content="x\n")
        provider = ScriptedProvider(
            agents={"fix-it": agent_script(Step(text=["Writing."], toolCalls=[write]), Step(text=["Done."]))}
        )
        app = make_app(tmp_path, provider, prompt="Fix it")
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.live is not None
            live = app.live
            await wait_for(pilot, lambda: len(live.questions.waiting()) == 1, "the write request")
            await pilot.press("i")
            await type_text(pilot, "Use tabs.")
            await pilot.press("enter")
            assert app.dashboard.query_one("#composer", Composer).text == ""
            await pilot.press("escape", "a", "a", "y")
            await wait_for(pilot, lambda: status(app, "fix-it") == "completed", "the turn")
            sid = named(app, "fix-it")
            assert sid is not None
            steered = [
                e for e in log_of(app, sid) if e["type"] == "user.message" and e["payload"].get("steered")
            ]
            assert [e["payload"]["content"] for e in steered] == ["Use tabs."]
            await pilot.press("q")

    async def test_a_send_that_fails_keeps_the_text_and_says_why(self, tmp_path: Path) -> None:
        provider = ScriptedProvider(agents={"fix-it": agent_script(Step(text=["Done."]))})
        app = make_app(tmp_path, provider, prompt="Fix it")
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.live is not None
            await wait_for(pilot, lambda: status(app, "fix-it") == "completed", "turn 1")
            await app.live.shutdown()  # the engine closes, as when the dashboard is leaving
            await pilot.press("i")
            await type_text(pilot, "One more thing")
            await pilot.press("enter")
            composer = app.dashboard.query_one("#composer", Composer)
            assert composer.text == "One more thing"
            assert composer.reason is not None and "engine is not open" in composer.reason
            assert "not sent" in str(composer.query_one("#composer-note", Static).content)
            await pilot.press("escape", "q")


class TestDiffApprovals:
    async def test_an_edit_request_shows_the_diff_against_the_file_as_it_is(self, tmp_path: Path) -> None:
        project = tmp_path / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("def hello():\n    return 'hi'\n\n\nprint(hello())\n")
        (project / "README.md").write_text("old readme\n")
        edit = tool("edit_file", path="src/app.py", old="    return 'hi'\n", new="    return 'hello'\n")
        overwrite = tool("write_file", path="README.md", content="new readme\n")
        create = tool("write_file", path="docs/new.md", content="line 1\nline 2\n")
        steps = [Step(text=["Editing."], toolCalls=[edit, overwrite, create]), Step(text=["Done."])]
        provider = ScriptedProvider(agents={"fix-it": agent_script(*steps)})
        app = make_app(tmp_path, provider, prompt="Fix it")
        async with app.run_test(size=(120, 40)) as pilot:
            modal = await next_request(pilot, app, "the edit request")
            assert modal.preview is not None and modal.preview.kind == "edit"
            assert modal.preview.unified_text() == (
                "@@ -1,5 +1,5 @@\n def hello():\n-    return 'hi'\n+    return 'hello'\n \n \n print(hello())\n"
            )
            assert "Edit src/app.py" in str(modal.query_one("#approval-title", Static).content)
            await pilot.press("y")
            modal = await next_request(pilot, app, "the overwrite request")
            assert modal.preview is not None and modal.preview.kind == "overwrite"
            assert "overwrites the existing README.md" in str(
                modal.query_one("#approval-warning", Static).content
            )
            await pilot.press("y")
            modal = await next_request(pilot, app, "the new-file request")
            assert modal.preview is not None and modal.preview.kind == "create"
            assert modal.preview.unified_text() == "@@ -0,0 +1,2 @@\n+line 1\n+line 2\n"
            await pilot.press("y")
            await wait_for(pilot, lambda: status(app, "fix-it") == "completed", "the turn")
            assert (project / "src" / "app.py").read_text().startswith("def hello():\n    return 'hello'\n")
            assert (project / "docs" / "new.md").read_text() == "line 1\nline 2\n"
            await pilot.press("q")

    async def test_a_shell_request_shows_its_whole_command(self, tmp_path: Path) -> None:
        command = "printf '%s\\n' one two three | sort -r > sorted.txt && cat sorted.txt"
        provider = ScriptedProvider(
            agents={"fix-it": agent_script(Step(text=["Sorting."], toolCalls=[tool("shell", cmd=command)]))}
        )
        app = make_app(tmp_path, provider, prompt="Fix it")
        async with app.run_test(size=(120, 40)) as pilot:
            modal = await next_request(pilot, app, "the shell request")
            assert modal.preview is None
            shown = "".join(str(w.content) for w in modal.query("#approval-args Static").results(Static))
            assert command in shown
            await pilot.press("n", "q")


class TestWorktrees:
    async def test_a_worktree_agent_writes_only_in_its_worktree(self, tmp_path: Path) -> None:
        project = tmp_path / "project"
        project.mkdir()
        (project / "README.md").write_text("# project\n")
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "first")
        write = tool("write_file", path="notes.txt", content="from the agent\n")
        provider = ScriptedProvider(
            agents={"isolated": agent_script(Step(text=["Writing."], toolCalls=[write]))}
        )
        app = make_app(tmp_path, provider)
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.live is not None
            live = app.live
            await ready(pilot, app)
            await pilot.press("n")
            form = app.screen
            assert isinstance(form, NewAgentScreen)
            await wait_for(pilot, lambda: form.repository == project.resolve(), "the repository check")
            form.query_one("#new-agent-prompt", TextArea).text = "Write notes"
            form.query_one("#new-agent-name", Input).value = "isolated"
            await pilot.click("#new-agent-worktree")
            assert form.query_one("#new-agent-worktree", Checkbox).value
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: len(live.questions.waiting()) == 1, "the write request")
            await pilot.press("A", "y")
            await wait_for(pilot, lambda: status(app, "isolated") == "completed", "the turn")
            sid = named(app, "isolated")
            assert sid is not None
            created = log_of(app, sid)[0]["payload"]
            worktree = Path(created["worktree"]["path"])
            branch = created["worktree"]["branch"]
            assert worktree.parent == project.resolve() / ".agent-tui" / "worktrees"
            assert Path(created["cwd"]) == worktree
            assert (worktree / "notes.txt").read_text() == "from the agent\n"
            assert not (project / "notes.txt").exists()
            assert git(project, "status", "--porcelain") == ""
            assert branch in git(project, "branch", "--list", branch)
            session = live.state.sessions[sid]
            assert session.worktree_branch == branch
            tree = app.dashboard.session_tree
            await wait_for(pilot, lambda: sid in tree.visible_ids, "the agent in the tree")
            assert "⎇" in str(tree._session_nodes[sid].label)

            await pilot.press("delete")
            dialog = app.screen
            assert isinstance(dialog, CloseSessionScreen)
            await pilot.press("r")
            await wait_for(
                pilot,
                lambda: not worktree.exists() and sid not in tree.visible_ids,
                "the session and its worktree to go",
            )
            assert branch in git(project, "branch", "--list", branch)  # the branch is kept
            await pilot.press("q")


class TestRestart:
    async def test_restarting_lists_the_earlier_sessions_and_continues_one(self, tmp_path: Path) -> None:
        first = ScriptedProvider(agents={"fix-it": agent_script(Step(text=["First answer."]))})
        app = make_app(tmp_path, first, prompt="Fix it")
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: status(app, "fix-it") == "completed", "turn 1")
            sid = named(app, "fix-it")
            await pilot.press("q")
        assert sid is not None

        second = ScriptedProvider()
        app = make_app(tmp_path, second)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(
                pilot, lambda: app.dashboard.session_tree.visible_ids == [sid], "the earlier session"
            )
            assert status(app, "fix-it") == "completed"
            app.dashboard.select_session(sid)
            await pilot.pause()
            await pilot.press("i")
            await type_text(pilot, "Again please")
            await pilot.press("enter")
            await wait_for(pilot, lambda: completed_after(app, "fix-it", 2), "turn 2 in the new process")
            events = log_of(app, sid)
            assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
            assert [e["payload"]["stopReason"] for e in events if e["type"] == "turn.completed"] == [
                "final",
                "final",
            ]
            seen = [m.text for m in second.calls[-1].messages]
            assert "Fix it" in seen and "First answer." in seen and "Again please" in seen
            await pilot.press("q")


class TestAttention:
    async def test_a_request_elsewhere_rings_and_titles_and_A_reaches_it(self, tmp_path: Path) -> None:
        first = tool("write_file", path="a.txt", content="a\n")
        second = tool("write_file", path="b.txt", content="b\n")
        provider = ScriptedProvider(
            agents={
                "quiet": agent_script(Step(text=["Thinking", " on."], delayMs=10_000)),
                "asker": agent_script(
                    Step(text=["A."], toolCalls=[first]), Step(text=["B."], toolCalls=[second])
                ),
            }
        )
        app = make_app(tmp_path, provider)
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.live is not None
            live = app.live
            await ready(pilot, app)
            project = live.project or tmp_path
            asker = await start_agent(live, app.post_message, AgentSpec("Ask", project, name="asker"))
            await wait_for(pilot, lambda: len(live.questions.waiting()) == 1, "the first request")
            # The user was looking at asker (a new agent is selected): no bell, but the title counts.
            assert app.dashboard.session_tree.selected_id == asker
            assert (app.bells, app.window_title.text) == (0, "(1) agent-tui")

            quiet = await start_agent(live, app.post_message, AgentSpec("Think", project, name="quiet"))
            await wait_for(pilot, lambda: app.dashboard.session_tree.selected_id == quiet, "quiet selected")
            request = live.questions.waiting()[0]
            await live.commands.send(
                Answer(sessionId=request.session_id, requestId=request.request_id, decision="allow")
            )
            await wait_for(
                pilot,
                lambda: (
                    [r.tool_call_id for r in live.questions.waiting()] not in ([], [request.tool_call_id])
                ),
                "the second request",
            )
            assert app.bells == 1  # rung as the question's event is folded
            await wait_for(pilot, lambda: app.window_title.text == "(1) agent-tui", "the title's count")
            await wait_for(pilot, lambda: any("A opens it" in n.title for n in app.notices), "the notice")

            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("A")
            assert isinstance(app.screen, ApprovalScreen)
            assert app.dashboard.session_tree.selected_id == asker
            await pilot.press("y")
            await wait_for(pilot, lambda: app.window_title.text == "agent-tui", "the title to clear")
            await pilot.press("q")


class TestSmallThings:
    async def test_stop_all_gives_the_focus_back_to_the_tree(self, tmp_path: Path) -> None:
        provider = ScriptedProvider(
            agents={"fix-it": agent_script(Step(text=["Slow", " down."], delayMs=10_000))}
        )
        app = make_app(tmp_path, provider, prompt="Fix it")
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: status(app, "fix-it") == "running", "the turn")
            await pilot.press("i")
            await pilot.press("escape")
            app.dashboard.queue.focus()
            await pilot.press("X")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("y")
            await wait_for(pilot, lambda: status(app, "fix-it") == "cancelled", "the stop")
            assert app.dashboard.session_tree.has_focus
            await pilot.press("q")

    async def test_the_palette_offers_stop_only_for_running_sessions(self, tmp_path: Path) -> None:
        provider = ScriptedProvider(
            agents={
                "slow": agent_script(Step(text=["Slow", " down."], delayMs=10_000)),
                "fast": agent_script(Step(text=["Done."])),
            }
        )
        app = make_app(tmp_path, provider)
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.live is not None
            live = app.live
            await ready(pilot, app)
            await start_agent(
                live, app.post_message, AgentSpec("Slow", live.project or tmp_path, name="slow")
            )
            await start_agent(
                live, app.post_message, AgentSpec("Fast", live.project or tmp_path, name="fast")
            )
            await wait_for(
                pilot,
                lambda: status(app, "fast") == "completed" and status(app, "slow") == "running",
                "one running, one done",
            )
            names = [command.name for command in app.dashboard.palette_commands()]
            assert "Stop slow" in names and "Stop fast" not in names
            assert "Jump to slow" in names and "Jump to fast" in names and "New agent…" in names
            await pilot.press("q")

    async def test_an_unknown_theme_is_named_in_a_warning(self, tmp_path: Path) -> None:
        app = AgentTuiApp(events=[], live=False, theme="no-such-theme")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert app.theme == "tokyo-night"
            assert any("no-such-theme" in n.message for n in app.notices)
            assert "no-such-theme" in app.dashboard.summary.notice

    async def test_one_session_is_singular(self, tmp_path: Path) -> None:
        provider = ScriptedProvider(agents={"fix-it": agent_script(Step(text=["Done."]))})
        app = make_app(tmp_path, provider, prompt="Fix it")
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_for(pilot, lambda: status(app, "fix-it") == "completed", "the turn")

            def counts() -> str:
                return str(app.dashboard.summary.query_one("#summary-counts", Static).content)

            await wait_for(pilot, lambda: "1 session ·" in counts(), "the summary")
            assert "1 sessions" not in counts()
            # Where the logs are: the bar holds it (a temporary path this long is shown only
            # where it fits, its beginning cut: tests/test_top_line.py).
            assert app.dashboard.summary.location == str(tmp_path / "sessions").replace(str(Path.home()), "~")
            await pilot.press("q")
