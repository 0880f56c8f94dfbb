"""The dashboard driving external ACP agents: `agent-tui acp` (our engine with a scripted model)
and the SDK-shaped test agent, each a real subprocess over stdio, declared as `[acp.NAME]`
tables in a config file found through `$AGENT_TUI_CONFIG`, the way a user declares them.

The user's keys do everything: `n` and the form's "ACP: served" entry start the agent, `A` and
the agent's own option answer its question, `x` stops it mid-stream, the composer sends the
follow-ups, and a killed agent's reason shows in its tree line. Every message on the wire is
checked against the SDK's schema; the UI is awaited on its state, never on time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_support import PASS_ON, TEST_AGENT, WireValidator
from support_tui import detail_text
from support_workbench import scripted_models, type_text, wait_for
from textual.widgets import Button, Select
from textual.widgets.tree import TreeNode

from agent_tui.acp.config import load_acp_agents
from agent_tui.acp.workbench_agents import AcpWorkbenchAgents
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event, event_from_json
from agent_tui.events.chains import chain_violations
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.approval import ApprovalScreen
from agent_tui.tui.screens.new_agent import AcpEntry, NewAgentScreen
from agent_tui.tui.widgets.composer import Composer

pytestmark = pytest.mark.anyio

AGENT_START = 60.0
"""Seconds the UI waits for a state that needs an agent's process (a loaded machine starts
Python slowly); the waits end as soon as the state is there."""

SERVED_SCRIPT = [
    {  # turn 1: streams, then writes a file, which asks the client (our approval queue)
        "text": ["Hello", " from", " agent-tui."],
        "toolCalls": [{"tool": "write_file", "args": {"path": "notes.txt", "content": "hi\n"}}],
    },
    {"text": ["Wrote the notes."]},
    {"text": [f"chunk {n} " for n in range(60)], "delayMs": 200},  # turn 2: stopped mid-stream
    {"text": ["Back again."]},  # turn 3: a follow-up
    {  # turn 4: waits on a question while its process is killed
        "text": ["Writing more."],
        "toolCalls": [{"tool": "write_file", "args": {"path": "more.txt", "content": "m\n"}}],
    },
]


def write_config(tmp_path: Path) -> Path:
    """A config file with `[acp.served]` (agent-tui acp, scripted) and `[acp.test-agent]`."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"sessions": [{"prompt": "(client)", "steps": SERVED_SCRIPT}]}))
    served = [
        "-m",
        "agent_tui",
        "acp",
        "--scenario",
        str(scenario),
        "--sessions-dir",
        str(tmp_path / "served"),
    ]
    config = tmp_path / "config.toml"
    config.write_text(
        "[acp.served]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps(served)}\n"
        f"env = {json.dumps(list(PASS_ON))}\n"
        "\n"
        "[acp.test-agent]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(TEST_AGENT)])}\n"
        f"env = {json.dumps(list(PASS_ON))}\n"
    )
    return config


def make_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any
) -> tuple[AgentTuiApp, WireValidator]:
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(write_config(tmp_path)))
    validator = WireValidator()
    agents = AcpWorkbenchAgents(load_acp_agents(), observers=[validator])
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    app = AgentTuiApp(
        sessions_dir=tmp_path / "sessions",
        project=project,
        models=scripted_models(ScriptedProvider()),
        external=agents,
        **options,
    )
    return app, validator


def state_of(app: AgentTuiApp) -> Any:
    assert app.live is not None
    return app.live.state


def session_named(app: AgentTuiApp, name: str) -> str | None:
    return next((sid for sid, s in state_of(app).sessions.items() if s.display_name == name), None)


def status(app: AgentTuiApp, sid: str) -> str:
    return str(state_of(app).sessions[sid].status)


def turns(app: AgentTuiApp, sid: str) -> int:
    return len(state_of(app).sessions[sid].turns)


def noted(app: AgentTuiApp, text: str) -> bool:
    """Whether a notification on screen says `text`."""
    return any(notice.message == text for notice in app.notices)


def tree_line(app: AgentTuiApp, sid: str) -> str:
    def find(node: TreeNode[str]) -> TreeNode[str] | None:
        if node.data == sid:
            return node
        return next((found for child in node.children if (found := find(child)) is not None), None)

    node = find(app.dashboard.session_tree.root)
    assert node is not None, f"{sid} is not in the tree"
    return str(node.label)


def events_of(app: AgentTuiApp, sid: str) -> list[Event]:
    path = app.live.sessions_dir / f"{sid}.jsonl"  # type: ignore[union-attr]
    return [event_from_json(line) for line in path.read_bytes().splitlines()]


async def send(pilot: Any, text: str) -> None:
    """Type `text` into the composer of the selected session and press enter."""
    if not pilot.app.dashboard.query_one("#composer", Composer).input.has_focus:
        await pilot.press("i")
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_the_dashboard_drives_agent_tui_acp_as_an_external_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, validator = make_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: live.workbench is not None, "the engine")

        # The form lists the ACP agents after the model; choosing one starts it.
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewAgentScreen)
        await type_text(pilot, "Take notes", newline="enter")
        select = form.query_one("#new-agent-model", Select)
        labels = [str(label) for label, _ in select._options]
        assert labels[1].startswith("ACP: served · ") and "agent_tui acp --scenario" in labels[1]
        select.value = AcpEntry("served")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: session_named(app, "served") is not None, "the session", AGENT_START)
        sid = session_named(app, "served")
        assert sid is not None and app.dashboard.session_tree.selected_id == sid

        # Its words stream into the detail; its question waits in the queue with its own options.
        await wait_for(pilot, lambda: "Hello from agent-tui." in detail_text(app), "the words", AGENT_START)
        await wait_for(pilot, lambda: len(live.questions.waiting()) == 1, "the question", AGENT_START)
        # the tree repaints on its own clock: the flag follows the question, not at once
        await wait_for(pilot, lambda: "⚑" in tree_line(app, sid), "the flag in the tree", AGENT_START)
        await pilot.press("A")
        modal = app.screen
        assert isinstance(modal, ApprovalScreen)
        assert [str(b.label) for b in modal.query(Button).results()] == [
            "1  Allow once  · allow once",
            "2  Allow for this session  · always · the agent remembers",
            "3  Deny  · deny once",
            "4  Deny for this session  · deny always · the agent remembers",
        ]
        await pilot.pause()
        dialog = modal.query_one("#approval-dialog").region
        assert all(dialog.contains_region(b.region) for b in modal.query(Button).results())  # none cut off
        await pilot.press("1")
        await wait_for(pilot, lambda: noted(app, "Chose “Allow once”: served · edit"), "the note")
        await wait_for(pilot, lambda: status(app, sid) == "completed", "turn 1", AGENT_START)
        assert (tmp_path / "project" / "notes.txt").read_text() == "hi\n"
        await wait_for(pilot, lambda: "Wrote the notes." in detail_text(app), "the last words")

        # A follow-up from the composer; stopped mid-stream with x, it ends cancelled.
        await send(pilot, "Stream please")
        await wait_for(pilot, lambda: "chunk 1 " in detail_text(app), "the stream", AGENT_START)
        refused = app.dashboard.query_one("#composer", Composer)
        await type_text(pilot, "faster")
        await pilot.press("enter")  # an ACP turn cannot be steered: the text stays, with why
        assert refused.text == "faster" and refused.reason is not None and "stop it (x)" in refused.reason
        refused.input.clear()  # the user deletes it
        await pilot.press("escape", "x")
        await wait_for(pilot, lambda: status(app, sid) == "cancelled", "the stop", AGENT_START)
        assert validator.methods["session/cancel"] == 1
        assert "chunk 59" not in detail_text(app)

        # The next follow-up is turn 3 of the same session and log.
        await send(pilot, "Still there?")
        await wait_for(
            pilot, lambda: turns(app, sid) == 3 and status(app, sid) == "completed", "turn 3", AGENT_START
        )
        await wait_for(pilot, lambda: "Back again." in detail_text(app), "turn 3's words")

        # Turn 4 asks again; the agent dies meanwhile: the question leaves the queue, the turn
        # ends failed, and the tree line and the detail say why.
        await send(pilot, "Write more")
        await wait_for(pilot, lambda: len(live.questions.waiting()) == 1, "turn 4's question", AGENT_START)
        session = live.workbench.external.session(sid)  # type: ignore[union-attr]
        assert session.process is not None and session.process.process is not None
        os.kill(session.process.process.pid, signal.SIGKILL)
        await wait_for(pilot, lambda: status(app, sid) == "failed", "the failure", AGENT_START)
        await wait_for(
            pilot,
            lambda: "✗ served end" in tree_line(app, sid) and "was killed by SIGKILL" in tree_line(app, sid),
            "the tree's reason",
        )
        # The tree line and the detail panel are redrawn by the same throttle, not the same frame.
        await wait_for(
            pilot, lambda: "served was killed by SIGKILL" in detail_text(app), "the detail's reason"
        )
        await wait_for(pilot, lambda: app.dashboard.queue.count == 0, "the queue emptied")
        assert not live.questions.waiting()

        # A follow-up to a dead agent is refused with the reason; the text stays.
        await send(pilot, "Hello?")
        composer = app.dashboard.query_one("#composer", Composer)
        assert composer.text == "Hello?"
        assert composer.reason is not None and "served was killed by SIGKILL" in composer.reason
        await pilot.press("escape", "q")

    log = events_of(app, sid)
    assert chain_violations(log) == []
    assert validator.problems == []
    assert log[0].payload["client"] == "served"
    ends = [(e.payload["stopReason"], e.payload.get("errorCode")) for e in log if e.type == "turn.completed"]
    assert ends == [("final", None), ("cancelled", None), ("final", None), ("error", "provider_failure")]
    assert [e.payload["content"] for e in log if e.type == "user.message"] == [
        "Take notes",
        "Stream please",
        "Still there?",
        "Write more",
    ]
    chosen = [e.payload for e in log if e.type == "permission.resolved" and e.payload["actor"] == "user"]
    assert [(p["decision"], p["reason"]) for p in chosen] == [("allow", "chose 'Allow once'")]


async def test_agent_flag_starts_the_agent_and_its_death_shows_its_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, validator = make_app(tmp_path, monkeypatch, agent="test-agent", prompt="crash")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot, lambda: session_named(app, "test-agent") is not None, "the session", AGENT_START
        )
        sid = session_named(app, "test-agent")
        assert sid is not None
        await wait_for(pilot, lambda: status(app, sid) == "failed", "the crash", AGENT_START)
        await wait_for(pilot, lambda: "exited with status 3" in tree_line(app, sid), "the tree's reason")
        line = tree_line(app, sid)
        assert line.startswith("✗ test-agent") and "stderr: fatal: out of cheese" in line
        assert "stderr: fatal: out of cheese" in detail_text(app)
        await pilot.press("q")
    assert chain_violations(events_of(app, sid)) == []
    assert validator.problems == []


async def test_agent_flag_without_a_prompt_opens_a_session_waiting_for_the_composer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, validator = make_app(tmp_path, monkeypatch, agent="test-agent")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot, lambda: session_named(app, "test-agent") is not None, "the session", AGENT_START
        )
        sid = session_named(app, "test-agent")
        assert sid is not None and status(app, sid) == "idle"
        await wait_for(pilot, lambda: app.dashboard.session_tree.selected_id == sid, "the selection")
        await send(pilot, "echo me")
        await wait_for(pilot, lambda: status(app, sid) == "completed", "the first turn", AGENT_START)
        process = app.live.workbench.external.session(sid).process  # type: ignore[union-attr]
        assert process is not None and not process.exited.is_set()
        await pilot.press("escape", "q")
    assert process.exited.is_set()  # leaving the dashboard ended the agent
    assert validator.problems == []
    log = events_of(app, sid)
    assert [e.type for e in log][:3] == ["session.created", "turn.started", "user.message"]
    assert "echo me" in "".join(e.payload["text"] for e in log if e.type == "model.delta")


def launch(tmp_path: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`agent-tui --cwd tmp_path ARGS` with `config` as the config file (no terminal)."""
    env = {**os.environ, "AGENT_TUI_CONFIG": str(config), "HOME": str(tmp_path)}
    command = [sys.executable, "-m", "agent_tui", "--cwd", str(tmp_path), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)


def test_an_unknown_agent_name_is_one_line_naming_the_configured_ones(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    out = launch(tmp_path, config, "--agent", "claude")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        f"agent-tui: no ACP agent named 'claude' in {config} (configured: served, test-agent)\n"
    )
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    out = launch(tmp_path, empty, "--agent", "claude")
    assert (out.returncode, out.stdout) == (2, "")
    assert (
        out.stderr
        == f"agent-tui: no ACP agent named 'claude': {empty} declares none (add an [acp.claude] table)\n"
    )


def test_a_wrong_acp_table_is_named_by_file_and_line_before_the_dashboard_opens(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[acp.claude]\ncommand = "claude-code-acp"\nenv = "ANTHROPIC_API_KEY"\n')
    out = launch(tmp_path, config)
    assert (out.returncode, out.stdout) == (2, "")
    assert (
        out.stderr
        == f"agent-tui: {config}:3: acp.claude.env: expected a list of environment variable names\n"
    )
    out = launch(tmp_path, write_config(tmp_path), "--demo", "--agent", "served")
    assert (out.returncode, out.stdout) == (2, "")
    assert (
        out.stderr == "agent-tui: --agent runs an agent on your project, not in the demo (leave out --demo)\n"
    )
