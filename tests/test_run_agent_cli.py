"""`agent-tui run --agent NAME --prompt TEXT`: a configured ACP agent's turn, headless, as the real
command runs it (a subprocess) with the test agent (`acp_test_agent.py`) as `[acp.test-agent]`.

The same exit status as `run --prompt` for the same ending, its questions answered by
`--approve`, a clear line for every wrong name or flag, and a stop at any moment (start-up too)
that leaves a closed log.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from acp_support import TEST_AGENT
from support_providers import agent_tui, clean_env
from support_signals import finish, start

from agent_tui.events.chains import chain_violations
from agent_tui.store import JsonlEventLog

STARTUP_AGENT = TEST_AGENT.with_name("acp_startup_agent.py")


def config_file(tmp_path: Path, *agent_args: str, command: str = sys.executable) -> Path:
    path = tmp_path / "config.toml"
    args = json.dumps([*agent_args])
    path.write_text(
        f"[sandbox]\nenabled = false\n\n[acp.test-agent]\ncommand = {json.dumps(command)}\nargs = {args}\n"
        '\n[acp.other]\ncommand = "other-acp"\n'
    )
    return path


def env_for(tmp_path: Path, config: Path) -> dict[str, str]:
    return clean_env(AGENT_TUI_CONFIG=str(config), XDG_DATA_HOME=str(tmp_path / "data"))


def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir(exist_ok=True)
    return cwd


def the_log(sessions: Path) -> list:
    [log] = sorted(sessions.glob("*.jsonl"))
    events = list(JsonlEventLog(log).replay("strict"))
    assert chain_violations(events) == []
    return events


def payloads(events: list, kind: str) -> list[dict]:
    return [event.payload for event in events if event.type == kind]


def run_agent(tmp_path: Path, *args: str, agent_args: tuple[str, ...] = (str(TEST_AGENT),)):
    config = config_file(tmp_path, *agent_args)
    sessions = tmp_path / "sessions"
    done = agent_tui(
        "run", "--agent", "test-agent", "--cwd", str(project(tmp_path)), "--sessions-dir", str(sessions),
        *args, env=env_for(tmp_path, config),
    )  # fmt: skip
    return done, sessions


@pytest.mark.parametrize(("approve", "made"), [("allow", True), ("deny", False)])
def test_its_questions_are_answered_by_approve_and_the_turn_ends_as_the_agent_ended_it(
    tmp_path: Path, approve: str, made: bool
) -> None:
    done, sessions = run_agent(tmp_path, "--prompt", "terminal: echo made > made.txt", "--approve", approve)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert (project(tmp_path) / "made.txt").exists() == made
    events = the_log(sessions)
    [created] = payloads(events, "session.created")
    assert created["client"] == "test-agent"
    decisions = [p["decision"] for p in payloads(events, "permission.resolved") if p.get("actor") == "user"]
    assert decisions == [approve]
    [end] = payloads(events, "turn.completed")
    assert end["stopReason"] == "final"
    assert "1 session" in done.stdout and "1 final" in done.stdout and str(sessions) in done.stdout


def test_the_agent_given_before_the_command_is_the_same(tmp_path: Path) -> None:
    config = config_file(tmp_path, str(TEST_AGENT))
    sessions = tmp_path / "sessions"
    done = agent_tui(
        "--agent", "test-agent", "run", "--prompt", "hello", "--cwd", str(project(tmp_path)),
        "--sessions-dir", str(sessions), env=env_for(tmp_path, config),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p["text"] for p in payloads(the_log(sessions), "model.delta")] == ["echo: hello"]


def test_an_agent_that_fails_ends_the_run_with_status_1_and_its_reason(tmp_path: Path) -> None:
    done, sessions = run_agent(tmp_path, "--prompt", "crash")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test-agent exited with status 3" in done.stdout
    [end] = payloads(the_log(sessions), "turn.completed")
    assert (end["stopReason"], end["errorCode"]) == ("error", "provider_failure")


def test_a_program_that_is_not_there_says_the_command_that_was_tried(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-acp"
    config = config_file(tmp_path, command=str(missing))
    sessions = tmp_path / "sessions"
    done = agent_tui(
        "run", "--agent", "test-agent", "--prompt", "hi", "--cwd", str(project(tmp_path)),
        "--sessions-dir", str(sessions), env=env_for(tmp_path, config),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"test-agent could not start: {missing}: command not found" in done.stdout
    assert "Traceback" not in done.stderr


def test_an_unknown_agent_lists_the_configured_ones_and_the_config_file(tmp_path: Path) -> None:
    config = config_file(tmp_path, str(TEST_AGENT))
    done = agent_tui(
        "run", "--agent", "codex", "--prompt", "hi", "--cwd", str(project(tmp_path)),
        env=env_for(tmp_path, config),
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        f"agent-tui: no ACP agent named 'codex' in {config} (configured: test-agent, other)\n"
    )


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--approve", "ask"], "--approve ask goes with --bus URL|local"),
        (["--model", "m"], "an ACP agent uses its own model settings"),
        (["--ask-timeout", "1m"], "--ask-timeout goes with --approve ask"),
        (["--workspace", "w"], "--workspace is for scenarios"),
    ],
)
def test_flags_that_do_not_go_with_an_agent_are_refused(tmp_path: Path, flags: list[str], said: str) -> None:
    done, _ = run_agent(tmp_path, "--prompt", "hi", *flags)
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr


def test_without_a_prompt_it_says_what_is_missing(tmp_path: Path) -> None:
    done, _ = run_agent(tmp_path)
    assert done.returncode == 2
    assert "--agent test-agent needs --prompt TEXT" in done.stderr


def test_a_signal_during_the_agents_start_up_stops_the_run_with_a_closed_log(tmp_path: Path) -> None:
    hang = tmp_path / "hang"
    hang.touch()
    config = config_file(tmp_path, str(STARTUP_AGENT), "--hang-initialize-while", str(hang))
    sessions = tmp_path / "sessions"
    args = ["run", "--agent", "test-agent", "--prompt", "hi", "--cwd", str(project(tmp_path))]
    process = start([*args, "--sessions-dir", str(sessions)], env_for(tmp_path, config))
    try:
        wait_for_prompt_in_log(sessions, process)
        process.send_signal(signal.SIGTERM)
    finally:
        out, err = finish(process)
    assert process.returncode == 128 + signal.SIGTERM, out + err
    assert "Traceback" not in err
    [end] = payloads(the_log(sessions), "turn.completed")
    assert end["stopReason"] == "cancelled"
    assert end["message"] == "stopped while test-agent was starting"


def wait_for_prompt_in_log(sessions: Path, process: subprocess.Popen[bytes]) -> None:
    """Once the turn's `user.message` is stored, the agent is being started (polled: the command
    runs in another process)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for log in sessions.glob("*.jsonl"):
            if '"user.message"' in log.read_text():
                return
        assert process.poll() is None, f"agent-tui exited ({process.returncode}) before its prompt"
        time.sleep(0.05)
    raise AssertionError("the prompt never reached the log")
