"""What terminal agents look like in the dashboard: a Claude Code session with its sub-agent and a
Codex session beside one of our own in the tree, and a terminal agent's question open (a shell
command from the sub-agent, an edit with its diff from the session itself), at 80x24 and at
120x40.

The logs are written here the way the importers and the terminal core write them (`client`
`claude-code`/`codex`, the CLI's own tool names, the policy's `ask` named by the CLI; fixed ids
and times, a project in a fake home), so the pictures are byte-stable; `scripts/screenshots.py`
draws the README's `terminal-agents.svg` and `terminal-approval.svg` from these same scenes.

    .venv/bin/python -m pytest tests/test_terminal_looks.py                     # check
    .venv/bin/python -m pytest tests/test_terminal_looks.py --snapshot-update   # accept new looks
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from support_tui import Scene, pin_scene, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import EDIT_NEW, EDIT_OLD, Log, arm_project, at, fake_home, settle
from textual.pilot import Pilot
from textual.widgets import Button

from agent_tui.events import Event
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.approval import ApprovalScreen

SCENE_BASE: Path | None = None
"""Where scenes make their fake home (a test's tmp_path; a fresh temp dir if unset)."""

OURS = "sess_6f7a8b9c0d1e"
CLAUDE = "sess_4d2c8a10-5b3e-4f7a-9c61-0e8d2f4b7a93"
EXPLORE = CLAUDE + "_agent-a91f3c"
CODEX = "sess_019c2b7e-4a1d-7c3f-8e52-9b6d0a4c1f28"
PYTEST = "pytest -x tests/test_checkout.py -k 'refund or cancel'"


class TerminalLog(Log):
    """A session a terminal CLI ran, as its import writes it (`client` is the CLI's)."""

    def __init__(self, session_id: str, when: datetime, cli: str, *, billed: str, **created: Any) -> None:
        self.session_id = session_id
        self.events: list[Event] = []
        self.when = when
        self.billed = billed
        self._calls: dict[str, list[dict[str, Any]]] = {}
        self._step: tuple[str, int] | None = None
        self.emit("session.created", None, client=cli, **created)

    def asks(
        self, turn_id: str, call: str, tool: str, args: dict[str, Any], risk: str, preview: str, **more: Any
    ) -> None:
        """A tool call its CLI is about to ask the user about, through the hook: in the queue."""
        self.emit("model.tool_call_requested", turn_id, after=1, toolCallId=call, tool=tool, args=args)
        self._call_ended()
        request: dict[str, Any] = {"requestId": f"hook_{call}_1_a1b2c3", "toolCallId": call}
        self.emit(
            "permission.requested", turn_id, tool=tool, risk=risk, argsPreview=preview, **more, **request
        )
        cli = "claude-code" if self.session_id.startswith("sess_4d") else "codex"
        self.emit("permission.resolved", turn_id, decision="ask", actor="policy", policy=cli, **request)


def edit_diff(path: str) -> str:
    """The request's preview of Claude Code's Edit, as the terminal core words it (a short diff)."""
    import difflib

    lines = difflib.unified_diff(
        EDIT_OLD.splitlines(), EDIT_NEW.splitlines(), f"a/{path}", f"b/{path}", lineterm="", n=2
    )
    return "\n".join(lines)


def side_by_side(home: Path, asking: str = "explore") -> list[Event]:
    """Our `fix-login` streaming; Claude Code fixing the checkout tests, its `Explore` sub-agent
    running a command (asking for it with `asking="explore"`), or the session itself asking to edit
    src/auth.py (`asking="edit"`); Codex's finished version bump."""
    shop = str(home / "shop")
    ours = Log(OURS, at(14, 8), cwd=shop, agentName="fix-login", title="Fix the login", model="gpt-4.1-mini")
    ours.start("turn_o1", "Fix the login check: it compares plain-text passwords", after=1)
    ours.step("turn_o1", 1, "Reading src/auth.py first.")

    claude = TerminalLog(
        CLAUDE,
        at(14, 10),
        "claude-code",
        billed="claude-sonnet-4-5",
        cwd=shop,
        title="Fix the flaky checkout tests",
    )
    claude.start("turn_c1", "The checkout tests fail one run in five: find out why and fix them", after=1)
    claude.step("turn_c1", 1, "I'll have an agent look at the tests first.")
    task = {
        "description": "Find the flaky tests",
        "prompt": "Run the checkout tests and find which ones flake",
    }
    claude.emit(
        "model.tool_call_requested", "turn_c1", after=1, toolCallId="toolu_task", tool="Task", args=task
    )
    claude.emit(
        "tool.started", "turn_c1", toolCallId="toolu_task", tool="Task", argsPreview="Find the flaky tests"
    )
    explore = TerminalLog(
        EXPLORE,
        at(14, 11),
        "claude-code",
        billed="claude-haiku-4-5",
        cwd=shop,
        parentSessionId=CLAUDE,
        agentName="Explore",
        title="Find the flaky tests",
    )
    explore.start("turn_e1", "Run the checkout tests and find which ones flake", after=1)
    explore.step("turn_e1", 1, "Running the checkout tests.")
    if asking == "explore":
        explore.asks(
            "turn_e1", "toolu_pytest", "Bash", {"command": PYTEST, "description": "Run the checkout tests"},
            "execute", PYTEST, reason="runs a program: pytest",
        )  # fmt: skip
    else:
        explore.emit(
            "model.tool_call_requested", "turn_e1", after=1, toolCallId="toolu_grep", tool="Grep",
            args={"pattern": "refund", "path": "tests"},
        )  # fmt: skip
        explore.emit(
            "tool.started", "turn_e1", toolCallId="toolu_grep", tool="Grep", argsPreview='pattern="refund"'
        )
        auth = "src/auth.py"  # (Claude Code gives the whole path: a fake home's would change the picture)
        claude.asks(
            "turn_c1", "toolu_edit", "Edit", {"file_path": auth, "old_string": EDIT_OLD, "new_string": EDIT_NEW},
            "write", edit_diff(auth),
        )  # fmt: skip

    codex = TerminalLog(
        CODEX, at(13, 40), "codex", billed="gpt-5.4-mini", cwd=shop, title="Bump the API version to 2.3"
    )
    codex.start("turn_x1", "Bump the API version to 2.3 and update the changelog", after=1)
    codex.step("turn_x1", 1, "Done: version 2.3, changelog updated.")
    codex.end("turn_x1", after=4)

    ours.when = at(14, 20)  # the newest event: "now" for a recorded view
    ours.emit("model.delta", "turn_o1", text="switching to hmac.compare_digest.")
    events = [event for log in (ours, claude, explore, codex) for event in log.events]
    events.sort(key=lambda e: (e.ts, e.session_id, e.sequence))
    return events


def terminal_app(asking: str) -> Callable[[], AgentTuiApp]:
    def build() -> AgentTuiApp:
        base = SCENE_BASE if SCENE_BASE is not None else Path(tempfile.mkdtemp(prefix="agent-tui-scene-"))
        return AgentTuiApp(events=side_by_side(fake_home(base), asking), live=False, group_by_day=True)

    return build


def armed(*keys: str, select: str = EXPLORE) -> Callable[[Pilot], Awaitable[None]]:
    """A live-like dashboard (its questions wait on the pending requests), `select` selected and
    its tree open; then `keys`."""

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        arm_project(pilot)
        app = pilot.app
        assert isinstance(app, AgentTuiApp)
        app.dashboard.select_session(select)
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot)

    return run_before


SCENES: dict[str, Scene] = {
    "terminal_tree_120x40": Scene(terminal_app("explore"), (120, 40), armed()),
    "terminal_tree_80x24": Scene(terminal_app("explore"), (80, 24), armed()),
    "terminal_command_120x40": Scene(terminal_app("explore"), (120, 40), armed("A")),
    "terminal_command_80x24": Scene(terminal_app("explore"), (80, 24), armed("A")),
    "terminal_edit_120x40": Scene(terminal_app("edit"), (120, 40), armed("A", select=CLAUDE)),
    "terminal_edit_80x24": Scene(terminal_app("edit"), (80, 24), armed("A", select=CLAUDE)),
}
"""Also read by scripts/screenshots.py."""


@pytest.fixture(autouse=True)
def _pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC (the pictures show clock times) and the fake home is the test's own."""
    yield from pin_scene(globals(), tmp_path, monkeypatch)


class TestTerminalAgentsLook:
    def test_claude_code_with_its_sub_agent_and_codex_beside_ours(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["terminal_tree_120x40"])

    def test_the_tree_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["terminal_tree_80x24"])


class TestTerminalQuestionAtEachSize:
    """A terminal agent's question: its path, its command or its edit's diff, the risk said to be
    agent-tui's reading, and the CLI's own answers (y, !, n), at 80x24 and at 120x40."""

    def test_a_sub_agents_command_at_120x40(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["terminal_command_120x40"])

    def test_a_sub_agents_command_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["terminal_command_80x24"])

    def test_an_edit_with_its_diff_at_120x40(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["terminal_edit_120x40"])

    def test_an_edit_with_its_diff_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["terminal_edit_80x24"])


@pytest.mark.anyio
class TestTerminalQuestionDialog:
    """The dialog's behaviour behind the pictures."""

    async def test_the_path_the_command_and_the_clis_answers(self, tmp_path: Path) -> None:
        app = terminal_app("explore")()
        async with app.run_test(size=(120, 40)) as pilot:
            await armed("A")(pilot)
            dialog = app.screen
            assert isinstance(dialog, ApprovalScreen)
            assert dialog.terminal == "claude"
            text = " ".join(str(widget.render()) for widget in dialog.query("Static"))
            assert "claude · Fix the flaky checkout tests › Explore" in text
            assert PYTEST in text and "agent-tui's reading, shown only" in text
            buttons = [str(button.label) for button in dialog.query(Button)]
            assert buttons == ["Allow once  y", "Always (claude)  !", "Deny  n"]
            await pilot.press("s")  # agent-tui's "this session" does not reach a terminal agent
            await pilot.pause()
            assert app.screen is dialog
            answered: list[Any] = []
            dialog.dismiss = answered.append  # type: ignore[method-assign,assignment]
            await pilot.press("exclamation_mark")
            assert [(a.decision, a.remember) for a in answered] == [("allow", "always")]

    async def test_an_edit_is_previewed_against_the_file_as_it_is_now(self, tmp_path: Path) -> None:
        app = terminal_app("edit")()
        async with app.run_test(size=(120, 40)) as pilot:
            await armed("A", select=CLAUDE)(pilot)
            dialog = app.screen
            assert isinstance(dialog, ApprovalScreen)
            assert dialog.preview is not None and dialog.preview.kind == "edit"
            assert dialog.preview.path == "src/auth.py"
