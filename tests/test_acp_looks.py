"""What ACP agents look like in the dashboard: one of our agents and two external ACP agents side
by side in the tree (one asking a question, one dead with its reason), and an ACP agent's
question open with the agent's own options.

The logs are written here the way `agent_tui.acp` writes them (fixed ids and times, a project in
a fake home), so the pictures are byte-stable; `scripts/screenshots.py` draws the README's
`acp-agents.svg` and `acp-approval.svg` from these same scenes.

    .venv/bin/python -m pytest tests/test_acp_looks.py                     # check
    .venv/bin/python -m pytest tests/test_acp_looks.py --snapshot-update   # accept new looks
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from support_tui import Scene, ask, pin_scene, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import EDIT_NEW, EDIT_OLD, Log, arm_project, at, fake_home, settle
from textual.pilot import Pilot

from agent_tui.events import Event
from agent_tui.ports import AcpPermissionRequest, AgentOption
from agent_tui.tui.app import AgentTuiApp

SCENE_BASE: Path | None = None
"""Where scenes make their fake home (a test's tmp_path; a fresh temp dir if unset)."""

CLAUDE = "sess_7a8b9c0d1e2f"
GEMINI = "sess_8b9c0d1e2f3a"
OURS = "sess_6f7a8b9c0d1e"
CLAUDE_OPTIONS = (
    AgentOption("allow_always", "Always Allow", "allow_always"),
    AgentOption("allow", "Allow", "allow_once"),
    AgentOption("reject", "Reject", "reject_once"),
)
"""The options Claude Code's ACP adapter offers for an edit."""
CODEX = "sess_9c0d1e2f3a4b"
CODEX_OPTIONS = (
    AgentOption("approved", "Yes, proceed", "allow_once"),
    AgentOption(
        "approved-execpolicy-amendment",
        "Yes, and don't ask again for commands that start with `git push --force origin`",
        "allow_always",
    ),
    AgentOption("abort", "No, and tell Codex what to do differently", "reject_once"),
)
"""The options codex-acp 0.16.0 offers for a command with a proposed rule (its
`build_exec_permission_options`)."""
OPENCODE = "sess_0d1e2f3a4b5c"
OPENCODE_OPTIONS = (
    AgentOption("once", "Allow once", "allow_once"),
    AgentOption("always", "Always allow", "allow_always"),
    AgentOption("reject", "Reject", "reject_once"),
)
"""The options opencode's `acp` offers."""
PUSH = ["bash", "-lc", "git push --force origin fix-login"]


def offered(options: tuple[AgentOption, ...]) -> list[dict[str, str]]:
    """An agent's options as `permission.requested.options` records them."""
    return [{"optionId": o.option_id, "name": o.name, "kind": o.kind} for o in options]


LOGOUT_PY = '''"""Logging out: the session cookie is dropped and the token revoked."""

from shop.app import app
from shop.sessions import revoke


@app.post("/logout")
def logout(request):
    revoke(request.session_token)
    return {"ok": True}
'''
GEMINI_DEATH = (
    "gemini exited with status 1; (not set: GEMINI_API_KEY); stderr: "
    "Please set an Auth method in your settings.json or specify GEMINI_API_KEY"
)


class AcpLog(Log):
    """A session an external ACP agent ran (`client` is the agent's name)."""

    def __init__(self, session_id: str, when: datetime, agent: str, **created: Any) -> None:
        self.session_id = session_id
        self.events: list[Event] = []
        self.when = when
        self.emit("session.created", None, client=agent, agentName=agent, **created)

    def record(self, turn_id: str, record_type: str, data: dict[str, Any], *, after: float = 0) -> None:
        self.emit("source.record", turn_id, after=after, format="acp", recordType=record_type, data=data)


def side_by_side(home: Path) -> list[Event]:
    """Our `fix-login` streaming; ACP `claude` asking to edit a file; ACP `gemini` dead at start."""
    shop = str(home / "shop")
    ours = Log(OURS, at(14, 8), cwd=shop, agentName="fix-login", title="Fix the login", model="gpt-4.1-mini")
    ours.start("turn_o1", "Fix the login check: it compares plain-text passwords", after=1)
    ours.step("turn_o1", 1, "Reading src/auth.py first.")
    ours.tool("turn_o1", "call_o1", "read_file", {"path": "src/auth.py"}, "read", 'path="src/auth.py"')
    ours.step("turn_o1", 2, "The comparison is not constant-time; ", after=3)

    claude = AcpLog(CLAUDE, at(14, 12), "claude", cwd=shop, title="Add a logout endpoint")
    claude.start("turn_c1", "Add a logout endpoint, with a test", after=1)
    claude.record(
        "turn_c1",
        "session/new",
        {"sessionId": "0199a1b2-c3d4", "protocolVersion": 1, "agentInfo": {"name": "claude-code-acp"}},
        after=2,
    )
    claude.emit(
        "context.built",
        "turn_c1",
        after=1,
        step=1,
        tokens={"instruction": 0, "transcript": 41200, "tools": 0},
        maxContextTokens=200000,
    )
    claude.record(
        "turn_c1",
        "agent_thought_chunk",
        {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "A new module keeps app.py small."},
        },
    )
    claude.emit("model.delta", "turn_c1", after=2, text="I'll put the route in its own module.")
    logout = f"{shop}/src/logout.py"
    call = {
        "toolCallId": "toolu_01",
        "title": "Write src/logout.py",
        "kind": "edit",
        "status": "pending",
        "locations": [{"path": logout}],
        "rawInput": {"file_path": logout, "content": LOGOUT_PY},
        "content": [{"type": "diff", "path": logout, "newText": LOGOUT_PY}],
    }
    claude.emit(
        "model.tool_call_requested", "turn_c1", after=1, toolCallId="toolu_01", tool="edit", args=call
    )
    ask: dict[str, Any] = {"requestId": "perm_c1", "toolCallId": "toolu_01"}
    claude.emit(
        "permission.requested", "turn_c1", tool="edit", risk="write", argsPreview="Write src/logout.py",
        options=offered(CLAUDE_OPTIONS), **ask,
    )  # fmt: skip
    claude.emit(
        "permission.resolved", "turn_c1", decision="ask", actor="policy", policy="agent:claude", **ask
    )

    gemini = AcpLog(GEMINI, at(14, 15), "gemini", cwd=shop, title="Document the checkout API")
    gemini.start("turn_g1", "Document the checkout API", after=1)
    gemini.emit(
        "turn.completed",
        "turn_g1",
        after=2,
        stopReason="error",
        errorCode="provider_failure",
        message=GEMINI_DEATH,
    )
    ours.when = at(14, 20)  # the newest event: "now" for a recorded view
    ours.emit("model.delta", "turn_o1", text="switching to hmac.compare_digest.")
    events = [event for log in (ours, claude, gemini) for event in log.events]
    events.sort(key=lambda e: (e.ts, e.session_id, e.sequence))
    return events


def acp_app() -> AgentTuiApp:
    base = SCENE_BASE if SCENE_BASE is not None else Path(tempfile.mkdtemp(prefix="agent-tui-scene-"))
    home = fake_home(base)
    return AgentTuiApp(events=side_by_side(home), live=False, group_by_day=True)


def one_question(home: Path, agent: str) -> list[Event]:
    """One ACP session asking: `codex` to force-push (a command), `opencode` to edit a file
    (a diff), each as the recorder writes it."""
    shop = str(home / "shop")
    if agent == "codex":
        log = AcpLog(CODEX, at(14, 16), "codex", cwd=shop, title="Publish the login fix")
        title = "git push --force origin fix-login"
        call: dict[str, Any] = {
            "toolCallId": "call_push",
            "title": title,
            "kind": "execute",
            "status": "pending",
            "rawInput": {"call_id": "call_push", "command": PUSH, "cwd": shop},
            "content": [{"type": "content", "content": {"type": "text", "text": "Available Decisions: …"}}],
        }
        tool, risk, options = "execute", "destructive", CODEX_OPTIONS
        warning: str | None = f"{title}: the agent's call can delete or overwrite data"
    else:
        log = AcpLog(OPENCODE, at(14, 16), "opencode", cwd=shop, title="Harden the login check")
        title = "Edit src/auth.py"
        auth = f"{shop}/src/auth.py"
        call = {
            "toolCallId": "call_edit",
            "title": title,
            "kind": "edit",
            "status": "pending",
            "locations": [{"path": auth}],
            "rawInput": {"filePath": auth, "oldString": EDIT_OLD, "newString": EDIT_NEW},
            "content": [{"type": "diff", "path": auth, "oldText": EDIT_OLD, "newText": EDIT_NEW}],
        }
        tool, risk, warning, options = "edit", "write", None, OPENCODE_OPTIONS
    log.start("turn_1", "Publish the fix" if agent == "codex" else "Harden the login check", after=1)
    log.emit("model.delta", "turn_1", after=2, text="One step first.")
    call_id = call["toolCallId"]
    log.emit("model.tool_call_requested", "turn_1", after=1, toolCallId=call_id, tool=tool, args=call)
    asked: dict[str, Any] = {"requestId": "perm_1", "toolCallId": call_id}
    reason = "classified from its command" if tool == "execute" else f"ACP tool kind {tool}"
    log.emit(
        "permission.requested", "turn_1", tool=tool, risk=risk, argsPreview=title, reason=reason,
        warning=warning, options=offered(options), **asked,
    )  # fmt: skip
    log.emit(
        "permission.resolved", "turn_1", decision="ask", actor="policy", policy=f"agent:{agent}", **asked
    )
    return log.events


def question_app(agent: str) -> Callable[[], AgentTuiApp]:
    def build() -> AgentTuiApp:
        base = SCENE_BASE if SCENE_BASE is not None else Path(tempfile.mkdtemp(prefix="agent-tui-scene-"))
        return AgentTuiApp(events=one_question(fake_home(base), agent), live=False, group_by_day=True)

    return build


def armed(
    *keys: str, session: str = CLAUDE, options: tuple[AgentOption, ...] = CLAUDE_OPTIONS
) -> Callable[[Pilot], Awaitable[None]]:
    """A live-like dashboard: `session`'s question waits with the agent's own `options`, the end
    messages of the turns in the log, `session` is selected; then `keys`."""

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        live = arm_project(pilot)
        app = pilot.app
        assert isinstance(app, AgentTuiApp)
        state = app.dashboard.state
        [view] = [v for v in state.pending_permissions() if v.session_id == session]
        ask(
            live,
            AcpPermissionRequest(
                session_id=session,
                turn_id=view.turn_id,
                request_id=view.request_id,
                tool_call_id=view.tool_call_id,
                tool=view.tool,
                risk=view.risk or "write",  # type: ignore[arg-type]
                args_preview=view.args_preview,
                args={},
                agent_path=state.agent_path(session),
                warning=view.reason,
                options=options,
            ),
        )
        app.dashboard.show_state(state)
        app.dashboard.select_session(session)
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot)

    return run_before


SCENES: dict[str, Scene] = {
    "acp_tree_100x30": Scene(acp_app, (100, 30), armed()),
    "acp_approval": Scene(acp_app, (100, 30), armed("A")),
    "codex_approval_80x24": Scene(
        question_app("codex"), (80, 24), armed("A", session=CODEX, options=CODEX_OPTIONS)
    ),
    "codex_approval_120x30": Scene(
        question_app("codex"), (120, 30), armed("A", session=CODEX, options=CODEX_OPTIONS)
    ),
    "codex_approval_phone": Scene(
        question_app("codex"), (45, 30), armed("A", session=CODEX, options=CODEX_OPTIONS)
    ),
    "claude_approval_phone": Scene(acp_app, (45, 30), armed("A")),
    "opencode_edit_80x24": Scene(
        question_app("opencode"), (80, 24), armed("A", session=OPENCODE, options=OPENCODE_OPTIONS)
    ),
    "opencode_edit_phone": Scene(
        question_app("opencode"), (45, 30), armed("A", session=OPENCODE, options=OPENCODE_OPTIONS)
    ),
}
"""Also read by scripts/screenshots.py."""


@pytest.fixture(autouse=True)
def _pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC (the pictures show clock times) and the fake home is the test's own."""
    yield from pin_scene(globals(), tmp_path, monkeypatch)


class TestAcpAgentsLook:
    def test_ours_and_two_acp_agents_side_by_side(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["acp_tree_100x30"])

    def test_an_acp_question_offers_the_agents_own_options(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["acp_approval"])


class TestAcpQuestionAtEachSize:
    """Every option an agent offers shows whole, its key and what it does beside it, at 80x24,
    at 120 columns and at a phone's size (the web dashboard at ~390 px: 45x30)."""

    def test_codex_command_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["codex_approval_80x24"])

    def test_codex_command_at_120_columns(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["codex_approval_120x30"])

    def test_codex_command_on_a_phone(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["codex_approval_phone"])

    def test_claude_edit_on_a_phone(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["claude_approval_phone"])

    def test_opencode_edit_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["opencode_edit_80x24"])

    def test_opencode_edit_on_a_phone(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["opencode_edit_phone"])
