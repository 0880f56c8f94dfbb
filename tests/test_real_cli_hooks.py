"""What the real Claude Code and Codex CLIs do with a hook: the behaviour agent-tui's terminal agents rely on.

Each test drives a CLI's own TUI (or its headless mode) in tmux, offline, against the fake model,
with a recording hook configured (`tests/support_real_clis.py`): the model proposes one shell
command that creates a marker file, and the hook's output decides it. These tests pin, per pinned
version: where hooks are configured; which events fire with which fields (the tool call's id on
PreToolUse, none on PermissionRequest; sub-agents' `agent_id`); that an allow runs the command and
a deny does not; that no decision leaves the CLI's own question working; Claude Code's dialog
beside a running hook (an answer in the terminal kills the hook) and its interrupt; `claude -p`
waiting for the hook; Claude Code's "always allow" from a hook; Codex asking for the hook first,
killing it on an interrupt, reading no field beyond `behavior` and `message`, and trusting hooks
once per position; Codex's hooks running under its background service; `codex exec` never asking.
"""

from __future__ import annotations

import json
import os
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from support_real_clis import (
    CLAUDE_DIALOG,
    CLAUDE_INTERRUPTED,
    CODEX_BLOCKED,
    CODEX_DIALOG,
    CODEX_RUNNING_HOOK,
    CODEX_TRUST,
    Session,
    claude_tool_results,
    cli_session,
    codex_tool_outputs,
    dismiss,
    permission_decision,
    pre_tool_use_deny,
    press,
    stop_codex_daemon,
    submit,
    wait_gone,
    wait_ready,
)
from support_tmux import Tmux

pytestmark = pytest.mark.real_agents

__all__ = ["cli_session"]  # the fixture the tests take

OpenSession = Callable[..., Session]

PROMPT = "Please create the marker file."
HELD_HOOK_TIMEOUT = 25
"""Seconds: the hook timeout of the test whose hook Claude Code leaves running."""
SUBAGENT_PROMPT = "Create the sub-agent's marker file."


def _marker(session: Session, name: str = "marker") -> Path:
    return session.home.workspace / name


def _run_turn(session: Session, *, project_hooks: bool = False) -> Path:
    """Hooks installed, the model scripted, the TUI open, the prompt sent; the marker's path."""
    marker = _marker(session)
    session.home.install_hook(project=project_hooks)
    session.script(PROMPT, f"touch {marker}")
    session.open_tui()
    submit(session.tmux, PROMPT)
    return marker


# -- Claude Code -----------------------------------------------------------------------------------


def test_claude_tui_runs_the_command_a_permission_hook_allows(cli_session: OpenSession) -> None:
    session = cli_session("claude-code")
    session.hook.decide("PermissionRequest", permission_decision("allow"))
    marker = _run_turn(session)
    session.hook.wait_for("Stop")
    assert marker.exists()
    pre = session.hook.wait_for("PreToolUse")
    asked = session.hook.wait_for("PermissionRequest")
    assert pre["tool_use_id"] == "toolu_main1" and pre["tool_input"]["command"] == f"touch {marker}"
    assert "tool_use_id" not in asked and asked["tool_input"] == pre["tool_input"]
    assert asked["session_id"] == pre["session_id"] and Path(asked["transcript_path"]).exists()
    post = session.hook.wait_for("PostToolUse")
    assert post["tool_use_id"] == "toolu_main1"
    # The transcript lies where the importers look for it, and holds the call by its id.
    assert "toolu_main1" in Path(pre["transcript_path"]).read_text()
    assert Path(pre["transcript_path"]).parent.parent == session.home.config_dir / "projects"


def test_claude_tui_does_not_run_what_the_hook_denies_and_the_turn_goes_on(cli_session: OpenSession) -> None:
    session = cli_session("claude-code")
    session.hook.decide("PermissionRequest", permission_decision("deny", "denied by the test"))
    marker = _run_turn(session)
    session.hook.wait_for("Stop")
    assert not marker.exists()
    assert claude_tool_results(session.model, "toolu_main1") == ["denied by the test"]


def test_claude_permission_deny_with_interrupt_aborts_the_turn(cli_session: OpenSession) -> None:
    session = cli_session("claude-code")
    session.hook.decide("PermissionRequest", permission_decision("deny", "stopped", interrupt=True))
    marker = _run_turn(session)
    session.tmux.wait_for(CLAUDE_INTERRUPTED, "Claude Code's interrupted turn")
    wait_ready(session.tmux, "claude-code")
    assert not marker.exists()
    assert claude_tool_results(session.model, "toolu_main1") == []  # nothing went back to the model
    assert session.hook.events("Stop") == []


def test_claude_pre_tool_use_deny_stops_the_call_before_any_question(cli_session: OpenSession) -> None:
    session = cli_session("claude-code")
    session.hook.decide("PreToolUse", pre_tool_use_deny("not now"))
    marker = _run_turn(session)
    session.hook.wait_for("Stop")
    assert not marker.exists()
    assert session.hook.events("PermissionRequest") == []
    assert claude_tool_results(session.model, "toolu_main1") == ["PreToolUse:Bash hook error: not now"]


def test_claude_dialog_shows_beside_the_running_hook_which_an_answer_in_the_terminal_leaves_running(
    cli_session: OpenSession,
) -> None:
    """The user's answer decides; the hook is not told: it runs on until its timeout, then gets
    SIGTERM (so agent-tui must learn of the answer from the events that follow it)."""
    session = cli_session("claude-code")
    session.hook.hold("PermissionRequest")
    marker = _marker(session)
    session.home.install_hook(project=True, timeout=HELD_HOOK_TIMEOUT)
    session.script(PROMPT, f"touch {marker}")
    session.open_tui()
    submit(session.tmux, PROMPT)
    asked = session.hook.wait_for("PermissionRequest")
    session.tmux.wait_for(CLAUDE_DIALOG, "Claude Code's own question while the hook runs")
    hook_pid = session.hook.pid_of("PermissionRequest")
    answer_in_dialog(session, "1")  # "Yes"
    done = session.hook.wait_for("PostToolUse")
    session.hook.wait_for("Stop")
    assert marker.exists()
    assert done["tool_use_id"] == session.hook.wait_for("PreToolUse")["tool_use_id"]
    assert done["tool_input"] == asked["tool_input"]
    assert Path(f"/proc/{hook_pid}").exists() and session.hook.signals("PermissionRequest") == []
    wait_gone(hook_pid, "the PermissionRequest hook at its timeout", HELD_HOOK_TIMEOUT + 15)
    assert session.hook.signals("PermissionRequest") == [15]
    assert not any("released" in record for record in session.hook.records())


def test_claude_no_in_the_terminal_stops_the_running_hook_at_once(cli_session: OpenSession) -> None:
    """Refusing in Claude Code's own dialog aborts the turn and terminates the hook (its
    connection closes: the withdrawal signal), well before the hook's timeout; nothing follows."""
    session = cli_session("claude-code")
    session.hook.hold("PermissionRequest")
    marker = _marker(session)
    session.home.install_hook(timeout=HELD_HOOK_TIMEOUT * 20)
    session.script(PROMPT, f"touch {marker}")
    session.open_tui()
    submit(session.tmux, PROMPT)
    session.hook.wait_for("PermissionRequest")
    session.tmux.wait_for(CLAUDE_DIALOG, "Claude Code's own question while the hook runs")
    hook_pid = session.hook.pid_of("PermissionRequest")
    answer_in_dialog(session, "4")  # "No"
    session.tmux.wait_for(CLAUDE_INTERRUPTED, "Claude Code's aborted turn")
    wait_gone(hook_pid, "the PermissionRequest hook after the user said no")
    assert session.hook.signals("PermissionRequest") == [15]
    assert not marker.exists()
    later = [e["hook_event_name"] for e in session.hook.events()]
    assert later[-1] == "PermissionRequest", later


def test_claude_no_decision_leaves_its_own_question_working(cli_session: OpenSession) -> None:
    session = cli_session("claude-code")
    session.hook.decide("PermissionRequest", "")
    marker = _run_turn(session)
    session.hook.wait_for("PermissionRequest")
    session.tmux.wait_for(CLAUDE_DIALOG, "Claude Code's own question")
    assert not marker.exists()
    answer_in_dialog(session, "1")
    session.hook.wait_for("Stop")
    assert marker.exists()


def test_claude_headless_waits_for_the_hook(cli_session: OpenSession) -> None:
    session = cli_session("claude-code")
    marker = _marker(session)
    session.home.install_hook()
    session.script(PROMPT, f"touch {marker}")
    session.hook.hold("PermissionRequest")
    session.hook.decide("PermissionRequest", permission_decision("allow"))
    session.home.start(session.tmux, *session.home.headless(PROMPT))
    session.hook.wait_for("PermissionRequest")
    assert not session.tmux.dead() and not marker.exists()
    session.hook.release("PermissionRequest")
    session.tmux.wait_for("dead", "claude -p to finish")
    assert marker.exists()
    assert claude_tool_results(session.model, "toolu_main1") != []


def test_claude_headless_without_a_decision_refuses_the_call(cli_session: OpenSession) -> None:
    session = cli_session("claude-code")
    marker = _marker(session)
    session.home.install_hook()
    session.script(PROMPT, f"touch {marker}")
    session.home.start(session.tmux, *session.home.headless(PROMPT))
    session.tmux.wait_for("dead", "claude -p to finish")
    assert not marker.exists()
    (result,) = claude_tool_results(session.model, "toolu_main1")
    assert "needs approval" in result


def test_claude_always_allow_from_the_hook_writes_the_rule_to_the_project(cli_session: OpenSession) -> None:
    """An allow with `updatedPermissions` is Claude Code's own "always allow": it keeps the rule
    in the project's settings.local.json."""
    session = cli_session("claude-code")
    marker = _marker(session)
    session.home.install_hook()
    rule = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}]}
    always = permission_decision("allow")
    always["hookSpecificOutput"]["decision"]["updatedPermissions"] = [
        {**rule, "behavior": "allow", "destination": "localSettings"}
    ]
    session.hook.decide("PermissionRequest", always)
    session.script(PROMPT, f"touch {marker}")
    session.home.start(session.tmux, *session.home.headless(PROMPT))
    session.tmux.wait_for("dead", "claude -p to finish")
    assert marker.exists()
    settings = json.loads((session.home.workspace / ".claude" / "settings.local.json").read_text())
    assert settings["permissions"]["allow"] == ["Bash(touch:*)"]


def test_claude_subagent_hooks_carry_its_id_and_its_transcript(cli_session: OpenSession) -> None:
    session = cli_session("claude-code")
    sub_marker = _marker(session, "sub-marker")
    session.home.install_hook()
    session.hook.decide("PermissionRequest", permission_decision("allow"))
    session.script(PROMPT, "", subagent_prompt=SUBAGENT_PROMPT, subagent_command=f"touch {sub_marker}")
    session.open_tui()
    submit(session.tmux, PROMPT)
    started = session.hook.wait_for("SubagentStart")
    stopped = session.hook.wait_for("SubagentStop")
    assert sub_marker.exists()
    agent = started["agent_id"]
    assert stopped["agent_id"] == agent and started["agent_type"] == "general-purpose"
    asked = session.hook.wait_for("PermissionRequest", lambda e: e.get("agent_id") == agent)
    assert asked["session_id"] == started["session_id"]
    pre = session.hook.wait_for("PreToolUse", lambda e: e.get("agent_id") == agent)
    assert pre["tool_use_id"] == "toolu_sub1"
    transcript = Path(stopped["agent_transcript_path"])
    assert transcript.name == f"agent-{agent}.jsonl" and transcript.parent.name == "subagents"
    assert "toolu_sub1" in transcript.read_text()


# -- Codex -----------------------------------------------------------------------------------------


def _trust_keys(session: Session) -> set[str]:
    config = tomllib.loads((session.home.config_dir / "config.toml").read_text())
    return set(config.get("hooks", {}).get("state", {}))


def test_codex_asks_to_trust_new_hooks_once_and_runs_what_the_hook_allows(cli_session: OpenSession) -> None:
    session = cli_session("codex")
    session.hook.decide("PermissionRequest", permission_decision("allow"))
    marker = _run_turn(session)
    session.hook.wait_for("Stop")
    assert marker.exists()
    hooks_json = session.home.hooks_file()
    assert f"{hooks_json}:permission_request:0:0" in _trust_keys(session)
    pre = session.hook.wait_for("PreToolUse")
    asked = session.hook.wait_for("PermissionRequest")
    assert pre["tool_use_id"] == "call_main1" and pre["tool_input"] == {"command": f"touch {marker}"}
    assert "tool_use_id" not in asked and asked["tool_input"]["command"] == f"touch {marker}"
    assert asked["turn_id"] == pre["turn_id"] and asked["session_id"] == pre["session_id"]
    assert "call_main1" in Path(pre["transcript_path"]).read_text()
    assert Path(pre["transcript_path"]) in session.home.transcripts()
    # A second start with the same hooks asks nothing.
    session.tmux.close()
    session.tmux = Tmux()
    session.home.start(session.tmux)
    screen = wait_ready(session.tmux, "codex")
    assert "Hooks need review" not in screen


def test_codex_keeps_the_trust_of_hooks_before_an_appended_one(cli_session: OpenSession) -> None:
    """Trust is kept per position: a hook appended after trusted ones is the only one asked
    about, and the ones before it run without being trusted again."""
    session = cli_session("codex")
    marker = _marker(session)
    path = session.home.install_hook(events=("PreToolUse", "Stop"))
    session.open_tui()
    session.tmux.close()
    config = json.loads(path.read_text())
    config["hooks"]["PreToolUse"].append({"hooks": [{"type": "command", "command": "true", "timeout": 5}]})
    path.write_text(json.dumps(config, indent=2))
    session.tmux = Tmux()
    session.home.start(session.tmux)
    screen = session.tmux.wait_for(CODEX_TRUST, "Codex's question about the appended hook")
    assert "1 hook is new or changed" in screen, screen
    session.tmux.wait_for("Continue without trusting", "the choice to leave it untrusted")
    dismiss(session.tmux, "Escape", "Continue without trusting")  # skip: the new hook stays untrusted
    wait_ready(session.tmux, "codex")
    session.script(PROMPT, f"touch {marker}")
    submit(session.tmux, PROMPT)
    pre = session.hook.wait_for("PreToolUse")
    assert pre["tool_use_id"] == "call_main1"
    keys = _trust_keys(session)
    assert f"{path}:pre_tool_use:0:0" in keys and f"{path}:pre_tool_use:1:0" not in keys


def test_codex_does_not_run_what_the_hook_denies(cli_session: OpenSession) -> None:
    session = cli_session("codex")
    session.hook.decide("PermissionRequest", permission_decision("deny", "denied by the test"))
    marker = _run_turn(session)
    session.hook.wait_for("Stop")
    session.tmux.wait_for(CODEX_BLOCKED, "Codex's note of the hook's deny")
    assert not marker.exists()
    (output,) = codex_tool_outputs(session.model, "call_main1")
    assert "denied by the test" in output


def test_codex_takes_a_decision_with_any_other_field_as_no_decision(cli_session: OpenSession) -> None:
    """Codex reads only `behavior` and `message`: Claude Code's `interrupt` makes the hook count
    as failed, so Codex asks its own question (agent-tui must never send it to Codex)."""
    session = cli_session("codex")
    session.hook.decide("PermissionRequest", permission_decision("deny", "stopped", interrupt=True))
    marker = _run_turn(session)
    screen = session.tmux.wait_for(CODEX_DIALOG, "Codex's own question after the failed hook")
    assert "unsupported interrupt" in screen
    press(session.tmux, "y")
    session.hook.wait_for("Stop")
    assert marker.exists()


def test_codex_pre_tool_use_deny_blocks_the_call(cli_session: OpenSession) -> None:
    session = cli_session("codex")
    session.hook.decide("PreToolUse", pre_tool_use_deny("not now"))
    marker = _run_turn(session, project_hooks=True)
    session.hook.wait_for("Stop")
    assert not marker.exists()
    assert session.hook.events("PermissionRequest") == []
    # The project's hooks are trusted in the user's config, keyed by the project file's path.
    assert f"{session.home.hooks_file(project=True)}:pre_tool_use:0:0" in _trust_keys(session)


def test_codex_waits_for_the_hook_before_its_own_question(cli_session: OpenSession) -> None:
    session = cli_session("codex")
    session.hook.hold("PermissionRequest")
    session.hook.decide("PermissionRequest", "")
    marker = _run_turn(session)
    session.hook.wait_for("PermissionRequest")
    screen = session.tmux.wait_for(CODEX_RUNNING_HOOK, "Codex waiting for the hook")
    assert CODEX_DIALOG not in screen
    session.hook.release("PermissionRequest")
    session.tmux.wait_for(CODEX_DIALOG, "Codex's own question once the hook gave no decision")
    assert not marker.exists()
    press(session.tmux, "y")
    session.hook.wait_for("Stop")
    assert marker.exists()


def test_codex_interrupt_while_the_hook_runs_kills_the_hook(cli_session: OpenSession) -> None:
    """Esc while Codex waits for the hook ends the turn and kills the hook at once (SIGKILL: the
    hook gets no chance to record a signal), well before its timeout."""
    session = cli_session("codex")
    session.hook.hold("PermissionRequest")
    marker = _marker(session)
    session.home.install_hook(timeout=600)
    session.script(PROMPT, f"touch {marker}")
    session.open_tui()
    submit(session.tmux, PROMPT)
    session.hook.wait_for("PermissionRequest")
    session.tmux.wait_for(CODEX_RUNNING_HOOK, "Codex waiting for the hook")
    hook_pid = session.hook.pid_of("PermissionRequest")
    press(session.tmux, "Escape")
    session.tmux.wait_for("Conversation interrupted", "Codex's interrupted turn")
    wait_gone(hook_pid, "the PermissionRequest hook after the interrupt")
    assert session.hook.signals("PermissionRequest") == []
    assert not marker.exists() and session.hook.events("Stop") == []


def test_codex_subagent_hooks_carry_its_id_under_the_parent_session(cli_session: OpenSession) -> None:
    session = cli_session("codex")
    sub_marker = _marker(session, "sub-marker")
    session.home.install_hook()
    session.hook.decide("PermissionRequest", permission_decision("allow"))
    session.script(PROMPT, "", subagent_prompt=SUBAGENT_PROMPT, subagent_command=f"touch {sub_marker}")
    session.open_tui()
    submit(session.tmux, PROMPT)
    started = session.hook.wait_for("SubagentStart")
    stopped = session.hook.wait_for("SubagentStop")
    assert sub_marker.exists()
    parent = session.hook.wait_for("SessionStart")["session_id"]
    agent = started["agent_id"]
    assert started["session_id"] == parent and stopped["agent_id"] == agent
    asked = session.hook.wait_for("PermissionRequest", lambda e: e.get("agent_id") == agent)
    assert asked["session_id"] == parent and "tool_use_id" not in asked
    pre = session.hook.wait_for("PreToolUse", lambda e: e.get("agent_id") == agent)
    assert pre["tool_use_id"] == "call_sub1"
    transcript = Path(stopped["agent_transcript_path"])
    assert transcript.name.endswith(f"-{agent}.jsonl") and "call_sub1" in transcript.read_text()


def test_codex_hooks_run_under_its_background_service(cli_session: OpenSession) -> None:
    session = cli_session("codex", daemon=True)
    session.hook.decide("PermissionRequest", permission_decision("allow"))
    marker = _run_turn(session)
    session.hook.wait_for("Stop")
    assert marker.exists()
    service = session.hook.parent_of("PermissionRequest")
    argv = Path(f"/proc/{service}/cmdline").read_bytes().split(b"\0")
    assert b"app-server" in argv and argv[0].decode().startswith(str(session.home.config_dir))
    session.tmux.close()  # the TUI ends; the service that ran the hooks stays
    assert Path(f"/proc/{service}").exists()
    assert service in stop_codex_daemon(session.home)


def test_codex_exec_never_asks(cli_session: OpenSession) -> None:
    session = cli_session("codex")
    marker = _marker(session)
    session.home.install_hook(events=("SessionStart", "PreToolUse", "PermissionRequest", "Stop"))
    session.script(PROMPT, f"touch {marker}")
    session.home.start(session.tmux, *session.home.headless(PROMPT, "--dangerously-bypass-hook-trust"))
    session.tmux.wait_for("dead", "codex exec to finish")
    assert not marker.exists()
    assert session.hook.events("PermissionRequest") == []
    assert session.hook.wait_for("SessionStart")["permission_mode"] == "bypassPermissions"
    assert os.path.exists(session.hook.wait_for("Stop")["transcript_path"])


def answer_in_dialog(session: Session, key: str) -> None:
    """Press `key` in Claude Code's own dialog, and again, as a user does, while the dialog still
    shows a second later (a key pressed before the dialog takes keys is lost)."""
    deadline = time.monotonic() + 60
    press(session.tmux, key)
    while True:
        settle = time.monotonic() + 1.0
        while CLAUDE_DIALOG in session.tmux.screen() and time.monotonic() < settle:
            time.sleep(0.05)
        if CLAUDE_DIALOG not in session.tmux.screen():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"Claude Code's dialog never took {key!r}:\n{session.tmux.screen()}")
        press(session.tmux, key)
