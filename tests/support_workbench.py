"""What the workbench tests share: a project in a fake home, fixed-time logs, scripted models.

`recorded_project(home)` builds the same dashboard state every time: a project `~/shop` (a real
git repository with a real `src/auth.py`, so diffs and the new-agent form have something real to
read) and sessions of yesterday and today with fixed ids and timestamps, one of them waiting on
an `edit_file` of that file. Paths are shown with `~`, so the pictures do not depend on where the
fake home is.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from support_tui import park_pending
from textual.pilot import Pilot
from textual.widget import Widget

from agent_tui.costs.prices import shipped_prices
from agent_tui.engine.scenario import AgentScript, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event, event_from_json, payload_from
from agent_tui.runtime.model_router import ModelChoice
from agent_tui.tui.app import AgentTuiApp, project_mode
from agent_tui.tui.live import LiveRun

WORKTREE = "fix-login-4f2a9c"
AUTH_PY = '''"""Login checks for the shop."""

import hmac

from shop.passwords import hash_password
from shop.users import find_user


def check_login(name: str, password: str) -> bool:
    user = find_user(name)
    if user.password == password:
        return True
    return False
'''
EDIT_OLD = "    if user.password == password:\n        return True\n    return False\n"
EDIT_NEW = (
    "    if user is None:\n"
    "        return False\n"
    "    return hmac.compare_digest(user.password_hash, hash_password(password))\n"
)


def git(directory: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(directory), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_project(root: Path) -> Path:
    """A small git repository `root/shop` with one commit (made once; reused if there)."""
    project = root / "shop"
    if (project / ".git").exists():
        return project
    (project / "src").mkdir(parents=True)
    (project / "src" / "auth.py").write_text(AUTH_PY)
    (project / "README.md").write_text("# shop\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    worktree = project / ".agent-tui" / "worktrees" / WORKTREE / "src"
    worktree.mkdir(parents=True)
    (worktree / "auth.py").write_text(AUTH_PY)
    (project / ".agent-tui" / "worktrees" / ".gitignore").write_text("*\n")
    return project


def fake_home(base: Path) -> Path:
    """`base/home` as $HOME, with the project in it."""
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HOME"] = str(home)
    make_project(home)
    return home


# -- fixed-time logs ---------------------------------------------------------------------------

NOW = datetime(2026, 11, 30, 14, 20, 0, tzinfo=UTC)


def at(hour: int, minute: int, second: int = 0, *, day: int = 30) -> datetime:
    return datetime(2026, 11, day, hour, minute, second, tzinfo=UTC)


class Log:
    """One session's events at given times (ids and sequences fixed).

    With `billed`, each model call (`step`) reports its usage (`model.usage`, priced at the
    shipped price of the session's model, `billed` if it names another one) and a turn's end
    sums them; without, a turn's end reports a flat usage and no price, as logs did before.
    """

    def __init__(self, session_id: str, when: datetime, *, billed: str | None = None, **created: Any) -> None:
        self.session_id = session_id
        self.events: list[Event] = []
        self.when = when
        self.billed = billed
        self._calls: dict[str, list[dict[str, Any]]] = {}  # a turn's usage so far, call by call
        self._step: tuple[str, int] | None = None  # the model call whose usage is still to come
        self.emit("session.created", None, client="agent-tui", **created)

    def emit(self, kind: str, turn_id: str | None, *, after: float = 0, **fields: Any) -> Event:
        self.when += timedelta(seconds=after)
        sequence = len(self.events) + 1
        event = Event(
            id=f"evt_{self.session_id[5:]}_{sequence}",
            session_id=self.session_id,
            turn_id=turn_id,
            sequence=sequence,
            ts=self.when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.when.microsecond // 1000:03d}Z",
            type=kind,
            payload=payload_from(kind, {key: value for key, value in fields.items() if value is not None}),
        )
        decoded = event_from_json(event.to_json())
        self.events.append(decoded)
        return decoded

    def start(self, turn_id: str, prompt: str, *, after: float = 0) -> None:
        self.emit("turn.started", turn_id, after=after, promptPreview=prompt[:80])
        self.emit("user.message", turn_id, content=prompt)

    def usage_of(self, step: int) -> dict[str, Any]:
        """What model call `step` reports: a prompt that grows with the transcript, its price."""
        prompt, completion = 14_000 + 9_000 * step, 600 + 250 * step
        cost = shipped_prices().cost_usd(self.billed, prompt, completion)
        return {"step": step, "promptTokens": prompt, "completionTokens": completion, "costUsd": cost}

    def _call_ended(self) -> None:
        """The open model call's stream ended: its usage (a billed log's)."""
        if self._step is None:
            return
        turn_id, step = self._step
        self._step = None
        usage = self.usage_of(step)
        self._calls.setdefault(turn_id, []).append(usage)
        self.emit("model.usage", turn_id, **usage)

    def step(self, turn_id: str, step: int, *chunks: str, after: float = 1) -> None:
        self._call_ended()
        tokens = {"instruction": 900, "transcript": 300 * step, "tools": 700}
        self.emit("context.built", turn_id, after=after, step=step, tokens=tokens, maxContextTokens=128000)
        for chunk in chunks:
            self.emit("model.delta", turn_id, after=0.4, text=chunk)
        if self.billed is not None:
            self._step = (turn_id, step)

    def tool(
        self,
        turn_id: str,
        call: str,
        tool: str,
        args: dict[str, Any],
        risk: str,
        preview: str,
        *,
        ask: float | None = None,
        result: str | None = "ok",
        reason: str | None = None,
    ) -> None:
        """A tool call: allowed by policy, or (ask=seconds) asked and allowed by the user after that
        long; `result=None` leaves it waiting."""
        self.emit("model.tool_call_requested", turn_id, toolCallId=call, tool=tool, args=args)
        self._call_ended()
        request: dict[str, Any] = {"requestId": "perm_" + call, "toolCallId": call}
        self.emit(
            "permission.requested",
            turn_id,
            tool=tool,
            risk=risk,
            argsPreview=preview,
            reason=reason,
            **request,
        )
        if ask is None:
            self.emit("permission.resolved", turn_id, decision="allow", actor="policy", **request)
        else:
            self.emit("permission.resolved", turn_id, decision="ask", actor="policy", **request)
            if result is None:
                return
            self.emit("permission.resolved", turn_id, after=ask, decision="allow", actor="user", **request)
        if result is None:
            return
        self.emit("tool.started", turn_id, toolCallId=call, tool=tool, argsPreview=preview)
        self.emit(
            "tool.completed", turn_id, after=0.5, toolCallId=call, tool=tool, result=result, truncated=False
        )

    def end(self, turn_id: str, stop: str = "final", *, after: float = 1, **fields: Any) -> None:
        usage: dict[str, Any] = {"promptTokens": 2100, "completionTokens": 180}
        if self.billed is not None:
            if stop == "error" and fields.get("errorCode") == "provider_failure":
                self._step = None  # the call failed: its provider reported no usage
            self._call_ended()
            calls = self._calls.pop(turn_id, [])
            usage = {
                "promptTokens": sum(call["promptTokens"] for call in calls),
                "completionTokens": sum(call["completionTokens"] for call in calls),
            }
            costs = [call["costUsd"] for call in calls]
            if calls and None not in costs:
                usage["costUsd"] = sum(costs)
            if not calls:
                usage = {}
        self.emit("turn.completed", turn_id, after=after, stopReason=stop, usage=usage or None, **fields)


def recorded_project(home: Path, budgets: str = "") -> list[Event]:
    """The sessions of `~/shop`: yesterday's refactor; today's tests, docs, login fix and lint.

    Every model call reports its usage at the shipped prices (docs' only call failed: no usage);
    fix-login's tree has a $1.00 budget. `budgets="near"` then lowers it to $0.50 (84% spent);
    `budgets="over"` gives lint a $0.02 budget its second call crosses (its turn stopped)."""
    shop = str(home / "shop")
    worktree = str(home / "shop" / ".agent-tui" / "worktrees" / WORKTREE)
    logs: list[Log] = []

    refactor = Log(
        "sess_0a1b2c3d4e5f",
        at(16, 2, 0, day=29),
        cwd=shop,
        agentName="refactor-db",
        title="Move the queries into repository classes",
        model="gpt-4.1-mini",
        billed="gpt-4.1-mini",
    )
    refactor.start("turn_r1", "Move the SQL queries into repository classes", after=2)
    refactor.step("turn_r1", 1, "Done: three repositories, tests green.", after=3)
    refactor.end("turn_r1", after=440)
    refactor.start("turn_r2", "Now add docstrings to them", after=1200)
    refactor.step("turn_r2", 1, "Added.", after=2)
    refactor.end("turn_r2", after=60)
    logs.append(refactor)

    tests = Log(
        "sess_1b2c3d4e5f6a",
        at(13, 40, 0),
        cwd=shop,
        agentName="add-tests",
        title="Add tests for the cart",
        model="gpt-4.1-mini",
        billed="gpt-4.1-mini",
    )
    tests.start("turn_t1", "Add tests for the cart totals", after=1)
    tests.step("turn_t1", 1, "Writing tests/test_cart.py.")
    tests.tool(
        "turn_t1",
        "call_t1",
        "write_file",
        {"path": "tests/test_cart.py", "content": "def test_total(): ..."},
        "write",
        'path="tests/test_cart.py"',
        ask=12,
        result="created tests/test_cart.py (21 bytes)",
    )
    tests.step("turn_t1", 2, "Added 4 tests; they pass.", after=150)
    tests.end("turn_t1", after=20)
    logs.append(tests)

    docs = Log(
        "sess_2c3d4e5f6a7b",
        at(13, 55, 0),
        cwd=shop,
        agentName="docs",
        title="Docs",
        model="claude-sonnet-4",
        billed="claude-sonnet-4",
    )
    docs.start("turn_d1", "Document the checkout API", after=1)
    docs.step("turn_d1", 1)
    docs.end("turn_d1", "error", after=19, errorCode="provider_failure")
    logs.append(docs)

    login = Log(
        "sess_3d4e5f6a7b8c",
        at(14, 10, 0),
        cwd=worktree,
        agentName="fix-login",
        title="Fix the login check",
        model="claude-sonnet-4",
        billed="claude-sonnet-4",
        worktree={"path": worktree, "branch": f"agent-tui/{WORKTREE}"},
        budget={"usd": 1.0},
    )
    login.start("turn_l1", "Fix the login check: it compares plain-text passwords", after=1)
    login.step("turn_l1", 1, "I'll read the login handler first.")
    login.tool(
        "turn_l1",
        "call_l1",
        "read_file",
        {"path": "src/auth.py"},
        "read",
        'path="src/auth.py"',
        result=AUTH_PY,
    )
    login.step("turn_l1", 2, "Let an explorer find every caller.", after=2)
    login.tool(
        "turn_l1",
        "call_l2",
        "spawn_agent",
        {"agentName": "explorer", "prompt": "Find callers of check_login"},
        "execute",
        'agentName="explorer"',
        ask=30,
        result='{"sessionId":"sess_4e5f6a7b8c9d"}',
    )
    logs.append(login)

    explorer = Log(
        "sess_4e5f6a7b8c9d",
        login.when,
        cwd=worktree,
        agentName="explorer",
        title="Find callers of check_login",
        parentSessionId=login.session_id,
        billed="claude-sonnet-4",  # its parent's model
    )
    explorer.start("turn_e1", "Find callers of check_login", after=1)
    explorer.step("turn_e1", 1, "Searching.")
    explorer.tool(
        "turn_e1",
        "call_e1",
        "shell",
        {"cmd": "grep -rn check_login src tests | sort"},
        "execute",
        'cmd="grep -rn check_login src tests | sort"',
        ask=0,
        result=None,
        reason="runs grep and sort",
    )
    logs.append(explorer)

    login.step("turn_l1", 3, "Replacing the plain comparison with a constant-time hash check.", after=400)
    login.tool(
        "turn_l1",
        "call_l3",
        "edit_file",
        {"path": "src/auth.py", "old": EDIT_OLD, "new": EDIT_NEW},
        "write",
        'path="src/auth.py"',
        ask=0,
        result=None,
    )

    if budgets == "near":
        login.emit("session.budget", "turn_l1", after=1, usd=0.5, by="dashboard")
    lint = Log(
        "sess_5f6a7b8c9d0e",
        at(14, 19, 0),
        cwd=shop,
        agentName="lint",
        title="Lint",
        model="gpt-4.1-mini",
        billed="gpt-4.1-mini",
        budget={"usd": 0.02} if budgets == "over" else None,
    )
    lint.start("turn_n1", "Fix the lint warnings in src/", after=1)
    lint.step("turn_n1", 1, "Running ruff.")
    lint.tool(
        "turn_n1",
        "call_n1",
        "shell",
        {"cmd": "ruff check src"},
        "read",
        'cmd="ruff check src"',
        result="All checks passed!",
    )
    lint.step("turn_n1", 2, "No warnings left; ", after=1)
    lint.when = NOW  # the newest event: "now" for a recorded view
    lint.emit("model.delta", "turn_n1", text="checking the tests too.")
    if budgets == "over":
        lint.end(
            "turn_n1",
            "error",
            after=0,
            errorCode="budget_exceeded",
            message="budget exceeded: spent $0.03 of a $0.02 budget",
        )
    logs.append(lint)
    events = [event for log in logs for event in log.events]
    events.sort(key=lambda e: (e.ts, e.session_id, e.sequence))
    return events


# -- apps --------------------------------------------------------------------------------------


def showcase_models() -> list[ModelChoice]:
    """Model choices for pictures (never built: nothing is run)."""

    def unused() -> Any:
        raise AssertionError("a picture never runs a model")

    return [
        ModelChoice(
            "default", "openai · gpt-4.1-mini", build=unused, provider="openai", model="gpt-4.1-mini"
        ),
        ModelChoice(
            "claude",
            "anthropic · claude-sonnet-4",
            build=unused,
            provider="anthropic",
            model="claude-sonnet-4",
        ),
    ]


def recorded_app(base: Path, budgets: str = "") -> AgentTuiApp:
    """The project's recorded state as the live dashboard shows it (see `arm_project`)."""
    home = fake_home(base)
    return AgentTuiApp(events=recorded_project(home, budgets), live=False, group_by_day=True)


def arm_project(pilot: Pilot) -> LiveRun:
    """Make the recorded dashboard live-like: a (never started) project run whose questions wait
    on each pending request, so the composer shows and approvals have buttons."""
    app = pilot.app
    assert isinstance(app, AgentTuiApp)
    screen = app.dashboard
    home = Path(os.environ["HOME"])
    sessions = home / ".local" / "share" / "agent-tui" / "projects" / "shop-5d41402abc4b"
    live = LiveRun(None, sessions, app.post_message, project=home / "shop", models=showcase_models())
    park_pending(live, screen.state)
    screen.live = live
    screen.summary.location = "~/.local/share/agent-tui/projects/shop-5d41402abc4b"
    screen.summary.mode = project_mode(home / "shop", showcase_models())
    screen.show_state(screen.state)
    return live


def scripted_models(provider: ScriptedProvider) -> list[ModelChoice]:
    return [ModelChoice("scripted", "scripted test model", build=lambda: provider)]


def agent_script(*steps: Step) -> AgentScript:
    return AgentScript(steps=list(steps))


async def repainted(pilot: Pilot, widget: Widget | None = None) -> None:
    """Wait until `widget` (by default the top screen) has been refreshed since this call, and
    what was queued before that refresh has run: the screen shows what came before it. An app
    that is closing (or a widget taken down) refreshes nothing more: that ends the wait too."""
    app = pilot.app
    target = widget if widget is not None else app.screen
    done: list[bool] = []
    target.call_after_refresh(done.append, True)

    def refreshed_or_gone() -> bool:
        return bool(done) or not app.is_running or not target.is_attached

    await wait_for(pilot, refreshed_or_gone, f"{target} to refresh")


async def settle(pilot: Pilot) -> None:
    """Let the app handle what is queued, then the refresh that shows it, and what that refresh
    asked to run after it (a scroll to the end, say)."""
    await pilot.pause()
    await repainted(pilot)
    await repainted(pilot)


async def armed(pilot: Pilot) -> LiveRun:
    """The recorded dashboard once it has settled, armed (`arm_project`) and settled again."""
    await settle(pilot)
    live = arm_project(pilot)
    await settle(pilot)
    return live


async def wait_for(pilot: Pilot, condition: Callable[[], bool], what: str, seconds: float = 10) -> None:
    """Wait (on the app's loop) until `condition()`; fail naming `what` after `seconds`."""
    for _ in range(int(seconds / 0.02)):
        if condition():
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def type_text(pilot: Pilot, text: str, *, newline: str = "shift+enter") -> None:
    """Type `text`; a newline is `newline` (the composer: shift+enter; a plain TextArea: enter)."""
    for char in text:
        await pilot.press({" ": "space", "\n": newline}.get(char, char))


Run = Callable[[Pilot], Awaitable[None]]
