"""An ACP agent's question in the approval dialog, read off the screen and answered with keys.

The scenes are `test_acp_looks`'s (real option sets of codex-acp 0.16.0, Claude's ACP adapter
and opencode, a real command and a real diff). At 80x24, 120 columns and a phone's 45x30:
every option's whole name is on screen inside the dialog, and so are the keys of our own
answers. A number picks the agent's option by its id (so the agent's `always` is used only when
the user picks it); `s` is our session rule, an answer with no option of the agent's named.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_acp_looks as looks
from support_engine import make_engine
from support_tui import pin_scene
from textual.geometry import Region
from textual.widgets import Button

from agent_tui.ports import (
    AcpPermissionAnswer,
    AcpPermissionRequest,
    Answer,
    CommandExecutor,
    PermissionAnswer,
)
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.approval import ApprovalScreen

pytestmark = pytest.mark.anyio

SIZES = [(80, 24), (120, 30), (45, 30)]
AGENTS = {
    "codex": (looks.question_app("codex"), looks.CODEX, looks.CODEX_OPTIONS),
    "claude": (looks.acp_app, looks.CLAUDE, looks.CLAUDE_OPTIONS),
    "opencode": (looks.question_app("opencode"), looks.OPENCODE, looks.OPENCODE_OPTIONS),
}


@pytest.fixture(autouse=True)
def _pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from pin_scene(vars(looks), tmp_path, monkeypatch)


def words_in(app: AgentTuiApp, region: Region) -> str:
    """The text on screen inside `region`, its lines joined by spaces (so a wrapped name reads
    as one), with runs of spaces made one."""
    strips = app.screen._compositor.render_strips()
    lines = [strip.crop(region.x, region.right).text for strip in strips[region.y : region.bottom]]
    return re.sub(r"\s+", " ", " ".join(lines))


def opened(app: AgentTuiApp) -> ApprovalScreen:
    modal = app.screen
    assert isinstance(modal, ApprovalScreen)
    return modal


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("agent", list(AGENTS))
async def test_every_option_shows_whole_inside_the_dialog(agent: str, size: tuple[int, int]) -> None:
    build, session, options = AGENTS[agent]
    app = build()
    async with app.run_test(size=size) as pilot:
        await looks.armed("A", session=session, options=options)(pilot)
        modal = opened(app)
        dialog = modal.query_one("#approval-dialog").content_region
        assert Region(0, 0, *size).contains_region(modal.query_one("#approval-dialog").region)
        buttons = list(modal.query(Button).results())
        assert [button.id for button in buttons] == [f"option-{n}" for n in range(1, len(options) + 1)]
        for number, (button, option) in enumerate(zip(buttons, options, strict=True), start=1):
            assert dialog.contains_region(button.region), f"{option.name!r} is cut off at {size}"
            shown = words_in(app, button.content_region)
            reach = "always · the agent remembers" if option.kind == "allow_always" else ""
            assert f"{number} {option.name}" in shown and reach in shown, shown
        hint = modal.query_one("#approval-hint")
        assert dialog.contains_region(hint.region)
        said = words_in(app, hint.content_region)
        assert "s this session (agent-tui remembers, not the agent)" in said and "n deny" in said


@pytest.mark.parametrize("agent", list(AGENTS))
async def test_a_view_that_only_has_the_log_offers_the_agents_options_from_it(agent: str) -> None:
    """An attached or browser dashboard (on a phone too) has only the events: the agent's options
    come from `permission.requested.options`, as in the local dashboard."""
    build, session, options = AGENTS[agent]
    app = build()  # the state folded from the log, no run behind it: as an attached dashboard has
    async with app.run_test(size=(45, 30)) as pilot:
        await pilot.pause()
        app.dashboard.can_answer = lambda view: True  # type: ignore[method-assign]  # as over the bus
        app.dashboard.select_session(session)
        await pilot.press("A")
        await pilot.pause()
        modal = opened(app)
        dialog = modal.query_one("#approval-dialog").content_region
        buttons = list(modal.query(Button).results())
        assert len(buttons) == len(options)
        for number, (button, option) in enumerate(zip(buttons, options, strict=True), start=1):
            assert dialog.contains_region(button.region), f"{option.name!r} is cut off on a phone"
            assert f"{number} {option.name}" in words_in(app, button.content_region)


async def test_a_codex_command_shows_as_the_agent_sent_it_with_the_risk_of_the_real_command() -> None:
    build, session, options = AGENTS["codex"]
    app = build()
    async with app.run_test(size=(120, 30)) as pilot:
        await looks.armed("A", session=session, options=options)(pilot)
        modal = opened(app)
        dialog = words_in(app, modal.query_one("#approval-dialog").content_region)
        # argv as a shell would read it (quoted), not its parts run together
        assert "bash -lc 'git push --force origin fix-login'" in dialog
        assert "git push --force origin fix-login? execute · destructive" in dialog
        assert "why classified from its command" in dialog


async def test_an_opencode_edit_shows_its_diff_against_the_file() -> None:
    build, session, options = AGENTS["opencode"]
    app = build()
    async with app.run_test(size=(120, 40)) as pilot:
        await looks.armed("A", session=session, options=options)(pilot)
        modal = opened(app)
        assert modal.preview is not None and modal.preview.kind == "edit"
        dialog = words_in(app, modal.query_one("#approval-dialog").content_region)
        assert "Edit src/auth.py? edit · write · +3 −3" in dialog
        assert "- if user.password == password:" in dialog and "+ if user is None:" in dialog


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("1", AcpPermissionAnswer("allow", "once", option_id="approved")),
        ("2", AcpPermissionAnswer("allow", "once", option_id="approved-execpolicy-amendment")),
        ("3", AcpPermissionAnswer("deny", "once", option_id="abort")),
        ("s", PermissionAnswer("allow", "session")),
        ("y", PermissionAnswer("allow", "once")),
        ("n", PermissionAnswer("deny", "once")),
    ],
)
async def test_numbers_pick_the_agents_options_and_s_is_our_session_rule(
    key: str, expected: PermissionAnswer
) -> None:
    build, session, options = AGENTS["codex"]
    app = build()
    async with app.run_test(size=(80, 24)) as pilot:
        await looks.armed(session=session, options=options)(pilot)
        state = app.dashboard.state
        [view] = state.pending_permissions()
        answers: list[PermissionAnswer | None] = []
        modal = ApprovalScreen(state, view, answerable=True, options=options)
        await app.push_screen(modal, answers.append)
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
        assert answers == [expected]
        assert type(answers[0]) is type(expected)  # `s` names no option of the agent's


async def test_a_picked_option_reaches_the_question_by_its_id(tmp_path: Path) -> None:
    """The dashboard's answer is an `Answer` command: the option's id rides along with it, so the
    agent gets the very option the user picked (its `always` only when picked)."""
    engine = make_engine(tmp_path, approve=None)
    engine.questions.answerer = None  # a person answers, from the dashboard
    request = AcpPermissionRequest(
        session_id="sess_1",
        turn_id="turn_1",
        request_id="perm_1",
        tool_call_id="call_1",
        tool="execute",
        risk="execute",
        args_preview="git push",
        args={},
        agent_path=("codex",),
        warning=None,
        options=looks.CODEX_OPTIONS,
    )
    asked = asyncio.ensure_future(engine.questions.ask(request))
    await asyncio.sleep(0)  # the question waits
    command = Answer(
        sessionId="sess_1",
        requestId="perm_1",
        decision="allow",
        remember="session",
        optionId="approved-execpolicy-amendment",
    )
    reply = await CommandExecutor(engine).send(command)
    assert reply.ok, reply.message
    answer = await asked
    assert isinstance(answer, AcpPermissionAnswer)
    assert answer.option_id == "approved-execpolicy-amendment" and answer.decision == "allow"


async def test_a_diff_taller_than_the_screen_scrolls_above_answers_that_stay() -> None:
    build, session, options = AGENTS["opencode"]
    app = build()
    async with app.run_test(size=(80, 24)) as pilot:
        await looks.armed("A", session=session, options=options)(pilot)
        modal = opened(app)
        dialog = modal.query_one("#approval-dialog").content_region
        last = "return hmac.compare_digest"
        assert last not in words_in(app, dialog)  # below the fold at first
        body = modal.query_one("#approval-body")
        body.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        shown = words_in(app, dialog)
        assert last in shown and "3 Reject · deny once" in shown
