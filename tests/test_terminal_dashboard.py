"""Claude Code and Codex sessions run in the user's own terminals, in the workbench and the dashboard.

Real transcripts (the importer tests' fixtures) in a temporary `CLAUDE_CONFIG_DIR` and
`CODEX_HOME`, found by `terminal.discovery`, listed by a real workbench beside our own logs,
read through the importers' real cache (`XDG_CACHE_HOME` in tmp_path) when used.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
from replay_logs import SessionLog, turn_events
from support_importers import FIXTURES
from support_workbench import arm_project, scripted_models, settle, type_text, wait_for
from test_workbench_cli import Terminal, clean_env
from textual.widgets import Static

from agent_tui.costs.budgets import BudgetLimit
from agent_tui.engine.errors import UnknownSession
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event, driven_from_its_terminal
from agent_tui.export import write_export
from agent_tui.importers import replay_inputs
from agent_tui.reducer import DashboardState, apply_event, project_state
from agent_tui.replay.sources import replay_files
from agent_tui.runtime.agent_requests import BudgetRefused, SendRefused
from agent_tui.runtime.finishing import FinishRefused
from agent_tui.runtime.workbench import Workbench
from agent_tui.terminal.discovery import TerminalTranscript, claude_folder_name, discover
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.formatting import decision_text
from agent_tui.tui.screens.approval import ApprovalScreen
from agent_tui.tui.screens.budget import BudgetScreen
from agent_tui.tui.screens.dashboard import NO_AGENT_TO_START, DashboardScreen
from agent_tui.tui.screens.search import SearchScreen
from agent_tui.tui.widgets.composer import Composer

SHOP = "/home/dev/shop-api"
CLAUDE = "sess_c4d5e6f7-8a9b-4c0d-9e1f-2a3b4c5d6e23"
CLAUDE_CHILD = CLAUDE + "_agent-a7f3c2"
CODEX = "sess_019c0d1e-2f3a-7b4c-8d5e-6f7a8b9c0d73"
CODEX_CHILD = "sess_019c0d1e-5a6b-7c8d-9e0f-1a2b3c4d5e84"
CLAUDE_NAME = "claude · Changelog entry for order cancellation"

pytestmark = pytest.mark.anyio


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The CLIs' folders holding the fixtures' sessions of SHOP, and the import cache, in tmp_path."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    shutil.copytree(
        FIXTURES / "claude_code" / "v2.1-subagents-dir", claude / "projects" / claude_folder_name(SHOP)
    )
    shutil.copytree(FIXTURES / "codex" / "multi-agent-0.58", codex / "sessions")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return claude, codex


def _ours(sessions_dir: Path) -> str:
    """One finished session of ours in `sessions_dir`."""
    sessions_dir.mkdir(parents=True, exist_ok=True)
    log = SessionLog("sess_ours")
    log.add("session.created", None, {"cwd": SHOP, "client": "agent-tui", "agentName": "lead"}, 0)
    for n, (kind, payload) in enumerate(turn_events(1, "plain"), start=1):
        log.add(kind, "turn_1", payload, n)
    log.write(sessions_dir)
    return "sess_ours"


def _workbench(sessions_dir: Path, *, all_projects: bool = False) -> Workbench:
    def find(every: bool, warn: object) -> list[object]:
        return list(discover(Path(SHOP), all_projects=every, warn=warn))  # type: ignore[arg-type]

    return Workbench.for_project(
        project=Path(SHOP),
        sessions_dir=sessions_dir,
        models=scripted_models(ScriptedProvider()),
        questions=None,
        find_terminal=find,  # type: ignore[arg-type]
        all_projects=all_projects,
    )


class _Folded:
    def __init__(self) -> None:
        self.state = DashboardState()
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        apply_event(self.state, event)


def _cache_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").rglob("*.jsonl"))


class TestTheHistory:
    async def test_terminal_sessions_are_listed_beside_ours_from_their_heads_and_read_only_when_used(
        self, tmp_path: Path, homes: tuple[Path, Path]
    ) -> None:
        sessions_dir = tmp_path / "sessions"
        ours = _ours(sessions_dir)
        workbench = _workbench(sessions_dir)
        folded = _Folded()
        async with workbench.serving():
            problems = await workbench.hydrate(folded, lazy=True)
            assert problems == []
            state = folded.state
            assert {ours, CLAUDE, CODEX, CODEX_CHILD} <= set(state.sessions)
            assert state.sessions[CLAUDE].client == "claude-code" and state.sessions[CODEX].client == "codex"
            assert state.sessions[CODEX_CHILD].parent_session_id == CODEX
            assert state.sessions[CLAUDE].turns == [] and CLAUDE_CHILD not in state.sessions
            assert _cache_files(tmp_path) == []  # nothing converted yet
            with pytest.raises(UnknownSession):
                workbench.engine.session(CLAUDE)  # and never in our engine

            assert await workbench.read_terminal(CLAUDE, folded) is None
            log = workbench.log_of(CLAUDE)
            assert log.is_file() and log.is_relative_to(tmp_path / "cache")
            assert state.sessions[CLAUDE_CHILD].parent_session_id == CLAUDE  # its sub-agent, with it
            with replay_inputs([homes[0] / "projects" / claude_folder_name(SHOP)]) as inputs:
                replayed = project_state(replay_files(inputs.files))
            for sid in (CLAUDE, CLAUDE_CHILD):  # the same fold as a replay of the transcript
                live, again = state.sessions[sid], replayed.sessions[sid]
                assert (live.title, live.client, live.spend, len(live.turns)) == (
                    again.title,
                    again.client,
                    again.spend,
                    len(again.turns),
                )
            assert state.sessions[CLAUDE].spend.tokens > 0
            exported = write_export(log, tmp_path / "exports", "md").read_text()  # export, unchanged
            assert "Changelog entry for order cancellation" in exported and "general-purpose" in exported
            count = len(folded.events)
            assert await workbench.read_terminal(CLAUDE, folded) is None
            assert len(folded.events) == count  # read once
            with pytest.raises(UnknownSession):
                workbench.engine.session(CLAUDE)

    async def test_a_terminal_session_stored_here_is_listed_from_its_log_once_and_not_opened(
        self, tmp_path: Path, homes: tuple[Path, Path]
    ) -> None:
        sessions_dir = tmp_path / "sessions"
        companion = SessionLog(CLAUDE)  # a followed session's companion log, in our store
        companion.add("session.created", None, {"cwd": SHOP, "client": "claude-code", "title": "followed"}, 0)
        sessions_dir.mkdir()
        companion.write(sessions_dir)
        workbench = _workbench(sessions_dir)
        folded = _Folded()
        async with workbench.serving():
            await workbench.hydrate(folded, lazy=True)
            created = [e for e in folded.events if e.session_id == CLAUDE and e.type == "session.created"]
            assert [e.payload["title"] for e in created] == ["followed"]  # not the transcript's too
            with pytest.raises(UnknownSession):
                workbench.engine.session(CLAUDE)
            refused = workbench.send(CLAUDE, "go on")
            assert refused == SendRefused(driven_from_its_terminal("claude · followed"))

    async def test_every_projects_sessions_are_listed_on_demand_and_known_as_others(
        self, tmp_path: Path, homes: tuple[Path, Path]
    ) -> None:
        claude, _ = homes
        other = claude / "projects" / claude_folder_name("/srv/other")
        other.mkdir(parents=True)
        record = {
            "cwd": "/srv/other",
            "sessionId": "elsewhere",
            "type": "user",
            "uuid": "u",
            "message": {"role": "user", "content": "hi"},
        }
        (other / "elsewhere.jsonl").write_bytes(orjson.dumps(record) + b"\n")
        workbench = _workbench(tmp_path / "sessions")
        folded = _Folded()
        async with workbench.serving():
            await workbench.hydrate(folded, lazy=True)
            assert "sess_elsewhere" not in folded.state.sessions
            assert await workbench.list_terminal(folded, all_projects=True) == []
            assert "sess_elsewhere" in folded.state.sessions
            assert not workbench.in_project("sess_elsewhere") and workbench.in_project(CLAUDE)
            before = len(folded.events)
            await workbench.list_terminal(folded, all_projects=True)
            assert len(folded.events) == before  # listed once

    async def test_a_file_skipped_is_said_in_one_line(self, tmp_path: Path, homes: tuple[Path, Path]) -> None:
        folder = homes[0] / "projects" / claude_folder_name(SHOP)
        (folder / "broken.jsonl").write_bytes(b"{not json\n")
        workbench = _workbench(tmp_path / "sessions")
        async with workbench.serving():
            problems = await workbench.hydrate(_Folded(), lazy=True)
        assert problems == []  # (a stored session of ours that was not reopened would be one)
        assert workbench.skipped == [f"{folder / 'broken.jsonl'}: its first line is not JSON (skipped)"]

    async def test_a_transcript_gone_since_it_was_listed_is_said_not_raised(
        self, tmp_path: Path, homes: tuple[Path, Path]
    ) -> None:
        workbench = _workbench(tmp_path / "sessions")
        folded = _Folded()
        async with workbench.serving():
            await workbench.hydrate(folded, lazy=True)
            path = workbench.records[CODEX].transcript.path  # type: ignore[union-attr]
            os.remove(path)
            said = await workbench.read_terminal(CODEX, folded)
            assert said is not None and said.startswith(f"{path}: could not be read")


class TestNeverDrivenByOurEngine:
    async def test_a_follow_up_a_budget_and_a_review_are_refused_in_one_sentence(
        self, tmp_path: Path, homes: tuple[Path, Path]
    ) -> None:
        workbench = _workbench(tmp_path / "sessions")
        folded = _Folded()
        async with workbench.serving():
            await workbench.hydrate(folded, lazy=True)
            await workbench.read_terminal(CLAUDE, folded)
            sentence = f"{CLAUDE_NAME} is a terminal agent: drive it from its own terminal"
            assert workbench.send(CLAUDE, "continue") == SendRefused(sentence)
            with pytest.raises(BudgetRefused, match=f"^{sentence}$"):
                await workbench.set_budget(CLAUDE, BudgetLimit(usd=1.0))
            for action in (workbench.review, workbench.turns, partial(workbench.commit, message="m")):
                with pytest.raises(FinishRefused, match=f"^{sentence}$"):
                    await action(CLAUDE)
            child = workbench.send(CLAUDE_CHILD, "more")
            assert child == SendRefused(
                f"{CLAUDE_NAME} › general-purpose is a terminal agent: drive it from its own terminal"
            )
            codex = workbench.send(CODEX_CHILD, "more")
            assert isinstance(codex, SendRefused) and codex.reason.startswith("codex · Which module")
            assert codex.reason.endswith(" › explorer is a terminal agent: drive it from its own terminal")


# -- the dashboard ---------------------------------------------------------------------------------
def project_with_transcripts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch | None = None
) -> tuple[Path, dict[str, str]]:
    """A real project directory, and the CLIs' folders holding the fixtures' sessions as run in it
    (their `cwd` rewritten to it); the variables naming the folders and the import cache."""
    project = tmp_path / "shop-api"
    project.mkdir(exist_ok=True)
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    for source, target in (
        (
            FIXTURES / "claude_code" / "v2.1-subagents-dir",
            claude / "projects" / claude_folder_name(str(project)),
        ),
        (FIXTURES / "codex" / "multi-agent-0.58", codex / "sessions"),
    ):
        for path in sorted(source.rglob("*")):
            if path.is_file():
                copy = target / path.relative_to(source)
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_bytes(path.read_bytes().replace(SHOP.encode(), str(project).encode()))
    env = {
        "CLAUDE_CONFIG_DIR": str(claude),
        "CODEX_HOME": str(codex),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    if monkeypatch is not None:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
    return project, env


def terminal_app(tmp_path: Path, project: Path, **kwargs: Any) -> AgentTuiApp:
    """The dashboard on `project` with no model configured: only its terminal agents."""

    def find(every: bool, warn: Callable[[str], object]) -> list[TerminalTranscript]:
        return discover(project, all_projects=every, warn=warn)

    return AgentTuiApp(
        sessions_dir=tmp_path / "sessions", project=project, models=[], find_terminal=find, **kwargs
    )


async def waited(pilot: Any, condition: Callable[[], bool], what: str) -> None:
    """`wait_for` with room for a loaded machine (the transcript is read and indexed meanwhile)."""
    await wait_for(pilot, condition, what, seconds=30)


class TestTheDashboard:
    async def test_the_tree_shows_them_by_their_cli_and_a_chosen_one_is_read_with_its_sub_agent(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        project, _ = project_with_transcripts(tmp_path, monkeypatch)
        app = terminal_app(tmp_path, project)
        async with app.run_test(size=(120, 40)) as pilot:
            await waited(
                pilot, lambda: app.live is not None and CODEX_CHILD in app.live.state.sessions, "the listing"
            )
            screen = app.screen
            assert isinstance(screen, DashboardScreen)

            # By their CLI; the glyph before is the session's status, which a read that has
            # already ended may have moved on (○ listed, ✓ read), and the tree redraws on its turn.
            def listed(start: str) -> bool:
                return any(str(node.label)[2:].startswith(start) for node in _tree_nodes(screen))

            await waited(
                pilot,
                lambda: listed("claude · Changelog entry") and listed("codex · Which module computes"),
                "both sessions in the tree by their CLI",
            )
            assert app.live is not None
            assert CLAUDE_CHILD not in app.live.state.sessions  # not read yet
            screen.select_session(CLAUDE)
            await waited(pilot, lambda: CLAUDE_CHILD in app.live.state.sessions, "the transcript read")  # type: ignore[union-attr]
            await waited(
                pilot,
                lambda: any(
                    str(n.label).startswith("✓ general-purpose") or "general-purpose" in str(n.label)
                    for n in _tree_nodes(screen)
                ),
                "its sub-agent in the tree",
            )
            assert app.live.log_of(CLAUDE).is_relative_to(tmp_path / "cache")  # type: ignore[union-attr]

            await pilot.press("F")  # what it said, once read, is searched
            await waited(pilot, lambda: isinstance(app.screen, SearchScreen), "the search screen")
            search = app.screen
            assert isinstance(search, SearchScreen)
            await waited(pilot, lambda: search.synced, "the index")
            await type_text(pilot, "cancellation")
            await waited(pilot, lambda: bool(search.hits), "the hits")
            assert CLAUDE in {hit.session_id for hit in search.hits}

    async def test_the_composer_review_and_budget_say_it_is_driven_from_its_own_terminal(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        project, _ = project_with_transcripts(tmp_path, monkeypatch)
        app = terminal_app(tmp_path, project)
        sentence = f"{CLAUDE_NAME} is a terminal agent: drive it from its own terminal"
        async with app.run_test(size=(120, 40)) as pilot:
            await waited(
                pilot, lambda: app.live is not None and CLAUDE in app.live.state.sessions, "the listing"
            )
            screen = app.screen
            assert isinstance(screen, DashboardScreen)
            screen.select_session(CLAUDE)
            await pilot.pause()
            composer = screen.query_one("#composer", Composer)
            note = str(composer.query_one("#composer-note", Static).render())
            assert sentence in note
            shown: list[str] = []
            monkeypatch.setattr(app, "notify", lambda message, **kw: shown.append(str(message)))
            monkeypatch.setattr(screen, "notify", lambda message, **kw: shown.append(str(message)))
            await pilot.press("D")
            await pilot.press("B")
            await pilot.pause()
            assert shown == [sentence, sentence]
            assert not isinstance(app.screen, BudgetScreen)
            await pilot.press("x")  # history, not followed here: nothing of it runs
            await waited(pilot, lambda: len(shown) == 3, "the stop's answer")
            await pilot.press("delete")
            await pilot.pause()
            assert shown[2:] == [
                f"Nothing is running under {CLAUDE_NAME}.",
                f"{CLAUDE_NAME} is a terminal agent: it is listed while its CLI keeps its transcript.",
            ]
            assert isinstance(app.screen, DashboardScreen)
            await pilot.press("i")
            await type_text(pilot, "go on")
            await pilot.press("enter")
            await waited(pilot, lambda: composer.reason is not None, "the composer's refusal")
            assert composer.reason == sentence and composer.text == "go on"  # the text is kept

    async def test_with_no_model_n_says_why_no_agent_of_ours_starts(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        project, _ = project_with_transcripts(tmp_path, monkeypatch)
        app = terminal_app(tmp_path, project)
        async with app.run_test(size=(120, 40)) as pilot:
            await waited(
                pilot, lambda: app.live is not None and CLAUDE in app.live.state.sessions, "the listing"
            )
            await pilot.press("n")
            await settle(pilot)
            assert isinstance(app.screen, DashboardScreen)  # no form with nothing to start
            assert app.notices[-1].message == NO_AGENT_TO_START

    async def test_the_palette_shows_and_hides_every_projects_sessions(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        project, env = project_with_transcripts(tmp_path, monkeypatch)
        other = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / claude_folder_name("/srv/other")
        other.mkdir(parents=True)
        record = {
            "cwd": "/srv/other",
            "sessionId": "elsewhere",
            "type": "user",
            "uuid": "u",
            "message": {"role": "user", "content": "tidy the other repo"},
        }
        (other / "elsewhere.jsonl").write_bytes(orjson.dumps(record) + b"\n")
        app = terminal_app(tmp_path, project)
        async with app.run_test(size=(120, 40)) as pilot:
            await waited(
                pilot, lambda: app.live is not None and CLAUDE in app.live.state.sessions, "the listing"
            )
            screen = app.screen
            assert isinstance(screen, DashboardScreen)
            assert "sess_elsewhere" not in app.live.state.sessions  # type: ignore[union-attr]
            names = [command.name for command in screen.palette_commands()]
            assert "Show every project's terminal sessions" in names
            screen.action_toggle_all_projects()
            await waited(
                pilot,
                lambda: any("tidy the other repo" in str(n.label) for n in _tree_nodes(screen)),
                "the other project's session",
            )
            assert "Show only this project's terminal sessions" in [c.name for c in screen.palette_commands()]
            screen.action_toggle_all_projects()
            await waited(
                pilot,
                lambda: not any("tidy the other repo" in str(n.label) for n in _tree_nodes(screen)),
                "it hidden again",
            )
            assert any("claude · Changelog" in str(n.label) for n in _tree_nodes(screen))


def _tree_nodes(screen: DashboardScreen) -> list[Any]:
    nodes = []
    stack = [screen.session_tree.root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.children)
    return nodes


class TestTheDefaultChoice:
    """`agent-tui` with no model configured, run as a user runs it (a real pseudo-terminal): the
    workbench on the project's terminal agents when there are some (or the hook is installed),
    else the built-in demo; `--demo` always opens the demo."""

    # (the tree's row, not its whole label: a redraw under load may paint the label in pieces)
    WORKBENCH = "claude · ".encode()
    DEMO = "live · demo".encode()  # the demo's top line

    def _open(self, tmp_path: Path, args: list[str], extra: dict[str, str]) -> Terminal:
        env = {**clean_env(tmp_path), **extra}
        env.setdefault("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude"))
        env.setdefault("CODEX_HOME", str(tmp_path / "no-codex"))
        return Terminal(args, env)

    def _shows(self, terminal: Terminal, wanted: bytes, unwanted: bytes) -> None:
        try:
            terminal.wait_until(lambda: wanted in terminal.output, f"{wanted!r} on the screen")
            assert unwanted not in terminal.output
        finally:
            terminal.close()

    def test_a_project_with_terminal_sessions_opens_the_workbench_on_them(self, tmp_path: Path) -> None:
        project, extra = project_with_transcripts(tmp_path)
        self._shows(self._open(tmp_path, ["--cwd", str(project)], extra), self.WORKBENCH, self.DEMO)

    def test_demo_opens_the_demo_all_the_same(self, tmp_path: Path) -> None:
        project, extra = project_with_transcripts(tmp_path)
        self._shows(self._open(tmp_path, ["--cwd", str(project), "--demo"], extra), self.DEMO, self.WORKBENCH)

    def test_a_project_with_none_opens_the_demo(self, tmp_path: Path) -> None:
        _, extra = project_with_transcripts(tmp_path)
        empty = tmp_path / "empty"
        empty.mkdir()
        self._shows(self._open(tmp_path, ["--cwd", str(empty)], extra), self.DEMO, self.WORKBENCH)

    def test_all_projects_opens_the_workbench_on_every_projects_sessions(self, tmp_path: Path) -> None:
        _, extra = project_with_transcripts(tmp_path)
        empty = tmp_path / "empty"
        empty.mkdir()
        terminal = self._open(tmp_path, ["--cwd", str(empty), "--all-projects"], extra)
        self._shows(terminal, self.WORKBENCH, self.DEMO)

    def test_the_hook_installed_opens_the_workbench_before_any_session(self, tmp_path: Path) -> None:
        empty = tmp_path / "empty"
        (empty / ".claude").mkdir(parents=True)
        command = f"{sys.executable} -I -m agent_tui.terminal.hook_client claude-code"
        hook = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}}
        (empty / ".claude" / "settings.local.json").write_bytes(orjson.dumps(hook))
        terminal = self._open(tmp_path, ["--cwd", str(empty)], {})
        self._shows(terminal, b"No sessions yet", self.DEMO)


class TestTakenBack:
    """A question its CLI took back (answered in the terminal, or Codex's handed back) is
    `permission.resolved{decision: withdrawn}` with the reason, as the terminal core stores it."""

    @staticmethod
    def _events(reason: str) -> list[Event]:
        def event(sequence: int, kind: str, turn: str | None, **payload: Any) -> Event:
            ts = f"2026-11-30T14:0{sequence}:00.000Z"
            return Event(
                id=f"evt_x_{sequence}",
                session_id=CLAUDE,
                turn_id=turn,
                sequence=sequence,
                ts=ts,
                type=kind,
                payload=payload,
            )

        asked = {"requestId": "hook_toolu_1_1_abc", "toolCallId": "toolu_1"}
        return [
            event(1, "session.created", None, cwd=SHOP, client="claude-code", title="fix-tests"),
            event(2, "turn.started", "t1", promptPreview="run the tests"),
            event(
                3,
                "model.tool_call_requested",
                "t1",
                toolCallId="toolu_1",
                tool="Bash",
                args={"command": "make test"},
            ),
            event(
                4, "permission.requested", "t1", tool="Bash", risk="execute", argsPreview="make test", **asked
            ),
            event(
                5, "permission.resolved", "t1", decision="ask", actor="policy", policy="claude-code", **asked
            ),
            event(
                6, "permission.resolved", "t1", decision="withdrawn", actor="system", reason=reason, **asked
            ),
        ]

    @pytest.mark.parametrize("reason", ["answered in the terminal", "handed back to the terminal"])
    def test_it_leaves_the_queue_and_the_detail_says_how(self, reason: str) -> None:
        events = self._events(reason)
        asking = project_state(events[:-1])
        assert [v.request_id for v in asking.pending_permissions()] == ["hook_toolu_1_1_abc"]
        state = project_state(events)
        assert state.pending_permissions() == []
        call = state.sessions[CLAUDE].turns[-1].tool_calls["toolu_1"]
        shown = decision_text(call)
        assert shown is not None and shown.plain == f"↩ {reason}"

    async def test_an_open_dialog_closes_saying_how_it_was_taken_back(self, tmp_path: Path) -> None:
        events = self._events("answered in the terminal")
        app = AgentTuiApp(events=events[:-1], live=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            arm_project(pilot)
            await pilot.press("A")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, ApprovalScreen) and dialog.terminal == "claude"
            screen = app.dashboard
            apply_event(screen.state, events[-1])
            screen.show_state(screen.state)
            await settle(pilot)
            assert not isinstance(app.screen, ApprovalScreen)
            assert app.notices[-1].message == (
                "claude · fix-tests: the Bash request was answered in the terminal."
            )


class TestHostileTranscripts:
    async def test_control_characters_and_parent_loops_in_heads_are_shown_harmlessly(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        project, env = project_with_transcripts(tmp_path, monkeypatch)
        folder = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / claude_folder_name(str(project))
        title = {
            "type": "ai-title",
            "aiTitle": "evil\x1b]52;c;cm0gLXJmIH4=\x07[b]x[/b]\x1b[2J",
            "sessionId": "evil",
        }
        user = {
            "cwd": str(project),
            "sessionId": "evil",
            "type": "user",
            "uuid": "u",
            "message": {"role": "user", "content": "hi"},
        }
        (folder / "evil.jsonl").write_bytes(orjson.dumps(title) + b"\n" + orjson.dumps(user) + b"\n")
        day = Path(env["CODEX_HOME"]) / "sessions" / "2026" / "03" / "01"
        day.mkdir(parents=True)
        for me, parent in (("loop-a", "loop-b"), ("loop-b", "loop-a")):  # each the other's parent
            meta = {
                "cwd": str(project),
                "id": me,
                "source": {"subagent": {"thread_spawn": {"parent_thread_id": parent}}},
            }
            line = {"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta", "payload": meta}
            (day / f"rollout-2026-03-01T10-00-00-{me}.jsonl").write_bytes(orjson.dumps(line) + b"\n")
        app = terminal_app(tmp_path, project)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(
                pilot,
                lambda: app.live is not None and "sess_loop-b" in app.live.state.sessions,
                "the listing",
            )
            screen = app.screen
            assert isinstance(screen, DashboardScreen)
            await settle(pilot)
            labels = [str(node.label) for node in _tree_nodes(screen)]
            evil = [label for label in labels if "evil" in label]
            assert evil and all("\x1b" not in label and "\x07" not in label for label in evil), evil
            assert app.live is not None and app.live.workbench is not None
            refused = app.live.workbench.send("sess_loop-a", "hi")  # the path's walk ends
            assert isinstance(refused, SendRefused) and refused.reason.endswith(
                "drive it from its own terminal"
            )
            assert app.live.workbench.in_project("sess_loop-a")


async def test_a_session_followed_live_since_it_was_listed_is_not_read_from_its_transcript_again(
    tmp_path: Path, homes: tuple[Path, Path]
) -> None:
    sessions_dir = tmp_path / "sessions"
    workbench = _workbench(sessions_dir)
    folded = _Folded()
    async with workbench.serving():
        await workbench.hydrate(folded, lazy=True)
        companion = SessionLog(CLAUDE)  # the terminal core began following it meanwhile
        companion.add("session.created", None, {"cwd": SHOP, "client": "claude-code", "title": "followed"}, 0)
        sessions_dir.mkdir(exist_ok=True)
        companion.write(sessions_dir)
        count = len(folded.events)
        assert await workbench.read_terminal(CLAUDE, folded) is None
        assert len(folded.events) == count and _cache_files(tmp_path) == []
        assert workbench.log_of(CLAUDE) == sessions_dir / f"{CLAUDE}.jsonl"


async def test_a_transcript_the_importers_choke_on_is_said_and_the_dashboard_goes_on(
    tmp_path: Path, homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent_tui.runtime.workbench as workbench_module

    def choking(paths: list[Path], **kwargs: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")  # what a hostile nesting could do

    monkeypatch.setattr(workbench_module, "replay_inputs", choking)
    workbench = _workbench(tmp_path / "sessions")
    folded = _Folded()
    async with workbench.serving():
        await workbench.hydrate(folded, lazy=True)
        said = await workbench.read_terminal(CLAUDE, folded)
        assert said is not None and "RecursionError: maximum recursion depth exceeded" in said
        assert workbench.records[CLAUDE].reading is False  # chosen again, it is tried again
