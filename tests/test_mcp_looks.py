"""What MCP calls look like in the dashboard: a session whose agent called two tools of an MCP
server, one answered and one that timed out, selected, so the tree and the detail show them.

The log is written here the way the engine writes it for MCP calls (fixed ids and times), so the
pictures are byte-stable.

    .venv/bin/python -m pytest tests/test_mcp_looks.py                     # check
    .venv/bin/python -m pytest tests/test_mcp_looks.py --snapshot-update   # accept new looks
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_test_server import HOSTILE_TEXT
from support_mcp import CONTROLS
from support_tui import Scene, detail_text, pin_scene, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import Log, arm_project, at, fake_home, settle
from textual.pilot import Pilot
from textual.widgets import Static

from agent_tui.events import Event
from agent_tui.events.argument_preview import args_preview
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.approval import ApprovalScreen

SCENE_BASE: Path | None = None
"""Where scenes make their fake home (a test's tmp_path; a fresh temp dir if unset)."""

SESSION = "sess_4d5e6f7a8b9c"
SEARCH = "mcp__github__search_issues"
SEARCH_ARGS = {"query": "login redirect", "repo": "acme/shop", "labels": ["bug", "auth"]}
FOUND = "#412 Login redirects to /undefined after SSO (open)\n#398 Session cookie lost on redirect (closed)"
CREATE = "mcp__github__create_issue"
CREATE_ARGS = {"repo": "acme/shop", "title": "Redirect after SSO drops the next= parameter"}
TIMED_OUT = "MCP server github did not answer create_issue within 60 s"


def mcp_calls(
    home: Path, *, finished: bool = True, found: str = FOUND, asking: dict[str, Any] | None = None
) -> list[Event]:
    """The session; unfinished, it stops while the second call runs; `asking`, it stops while a
    second call with these arguments waits for an answer."""
    log = Log(SESSION, at(9, 30), cwd=str(home / "shop"), agentName="triage", title="Triage the login bugs")
    log.start("turn_1", "Find the open login bugs and file one for the SSO redirect", after=1)
    log.step("turn_1", 1, "Searching the tracker first.")
    log.tool(
        "turn_1",
        "call_1",
        SEARCH,
        SEARCH_ARGS,
        "read",
        args_preview(SEARCH_ARGS),
        result=found,
        reason="MCP server github, tool search_issues (the server says it only reads)",
    )
    log.step("turn_1", 2, "No issue covers the next= parameter; filing one.")
    args = asking if asking is not None else CREATE_ARGS
    preview = args_preview(args)
    log.emit("model.tool_call_requested", "turn_1", toolCallId="call_2", tool=CREATE, args=args)
    request: dict[str, Any] = {"requestId": "perm_call_2", "toolCallId": "call_2"}
    log.emit(
        "permission.requested",
        "turn_1",
        tool=CREATE,
        risk="execute",
        argsPreview=preview,
        reason="MCP server github, tool create_issue",
        **request,
    )
    if asking is not None:
        log.emit("permission.resolved", "turn_1", decision="ask", actor="policy", **request)
        return log.events
    log.emit("permission.resolved", "turn_1", after=4, decision="allow", actor="user", **request)
    log.emit("tool.started", "turn_1", toolCallId="call_2", tool=CREATE, argsPreview=preview)
    if not finished:
        return log.events
    log.emit(
        "tool.failed",
        "turn_1",
        after=60,
        toolCallId="call_2",
        tool=CREATE,
        errorCode="timeout",
        message=TIMED_OUT,
    )
    log.step("turn_1", 3, "The tracker did not answer; I'll leave the issue text here instead.")
    log.end("turn_1")
    return log.events


def mcp_app(
    *, finished: bool = True, found: str = FOUND, asking: dict[str, Any] | None = None
) -> AgentTuiApp:
    base = SCENE_BASE if SCENE_BASE is not None else Path(tempfile.mkdtemp(prefix="agent-tui-scene-"))
    events = mcp_calls(fake_home(base), finished=finished, found=found, asking=asking)
    return AgentTuiApp(events=events, live=False, group_by_day=True)


async def selected(pilot: Pilot) -> None:
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, AgentTuiApp)
    app.dashboard.select_session(SESSION)
    await settle(pilot)


SCENES: dict[str, Scene] = {
    "mcp_80x24": Scene(mcp_app, (80, 24), selected),
    "mcp_120x40": Scene(mcp_app, (120, 40), selected),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from pin_scene(globals(), tmp_path, monkeypatch)


class TestMcpCallsLook:
    def test_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["mcp_80x24"])

    def test_at_120x40(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["mcp_120x40"])


class TestMcpCallsRead:
    @pytest.mark.anyio
    async def test_the_detail_names_each_call_with_its_arguments_result_and_failure(self) -> None:
        app = mcp_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await selected(pilot)
            text = detail_text(app)
        assert SEARCH in text and CREATE in text
        assert 'query="login redirect"' in text
        assert "#412 Login redirects to /undefined after SSO (open)" in text
        assert TIMED_OUT in text

    @pytest.mark.anyio
    async def test_a_running_call_shows_as_executing_in_the_tree_and_running_in_the_detail(self) -> None:
        app = mcp_app(finished=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await selected(pilot)
            tree = app.dashboard.session_tree
            line = tree.render_line(tree.cursor_line).text
            text = detail_text(app)
        assert "triage" in line and "executing" in line
        assert CREATE in text and "running" in text and TIMED_OUT not in text

    @pytest.mark.anyio
    async def test_control_codes_in_a_result_are_shown_as_markers(self) -> None:
        app = mcp_app(found=f"found {HOSTILE_TEXT} here")
        async with app.run_test(size=(120, 40)) as pilot:
            await selected(pilot)
            text = detail_text(app)
        assert "found" in text and "here" in text
        assert not any(control in text for control in CONTROLS)

    @pytest.mark.anyio
    async def test_the_approval_shows_the_arguments_pretty_printed_and_no_control_codes(self) -> None:
        app = mcp_app(asking={"repo": "acme/shop", "title": f"title {HOSTILE_TEXT}", "labels": ["bug"]})
        async with app.run_test(size=(120, 40)) as pilot:
            await selected(pilot)
            arm_project(pilot)
            await pilot.press("A")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ApprovalScreen)
            text = "\n".join(str(widget.content) for widget in screen.query(Static).results(Static))
        assert CREATE in text and "MCP server github, tool create_issue" in text
        assert '"repo": "acme/shop",\n' in text and '"labels": [\n' in text
        assert "\\u202eevil" in text  # the bidi override, shown as its marker
        assert not any(control in text for control in CONTROLS)
