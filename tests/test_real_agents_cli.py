"""Each real agent headless: `agent-tui run --agent NAME --prompt …`, as a user or a script runs it.

The agent is an `[acp.NAME]` table of a config file of its own, `$HOME` a fresh directory, its
model a fake one on 127.0.0.1 that calls the agent's shell tool. `--approve allow` answers the
question: the command runs, the agent's answer is printed and the run exits 0. `--approve deny`:
the command never runs, the log says the user's deny and the call failed `permission_denied`,
and the run exits as `run --prompt` does for the same ending (0 for a turn that ended `final`,
1 otherwise: Codex ends a turn `cancelled` once a call is denied). Either way the log's chains hold.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from fake_model_server import FakeModelServer
from support_real_agents import REAL_AGENTS, write_config

from agent_tui.events import event_from_json
from agent_tui.events.chains import chain_violations

pytestmark = pytest.mark.real_agents

COMMAND = "printf hello > made.txt; echo done"
ANSWER = "The file is there now."


def run_agent(name: str, tmp_path: Path, approve: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    """`agent-tui run --agent NAME` on a fresh project; (the process, the project, its logs)."""
    adapter = importlib.import_module(f"real_agent_{name}")
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    sessions = tmp_path / "sessions"
    with FakeModelServer() as model:
        agent = adapter.setup(home, model)
        adapter.shell_call(model, COMMAND, then=ANSWER)
        config = write_config(tmp_path / "config.toml", agent)
        env = {**os.environ, "HOME": str(home), "AGENT_TUI_CONFIG": str(config), **agent.env}
        for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
            env.pop(variable, None)
        done = subprocess.run(
            [sys.executable, "-m", "agent_tui", "run", "--agent", name, "--prompt", "Make the file",
             "--cwd", str(project), "--sessions-dir", str(sessions), "--approve", approve],
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    return done, project, sessions


def the_log(sessions: Path) -> list[dict[str, object]]:
    [log] = sorted(sessions.glob("*.jsonl"))
    events = [event_from_json(line) for line in log.read_bytes().splitlines()]
    assert chain_violations(events) == []
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


@pytest.mark.parametrize("name", REAL_AGENTS)
def test_an_allowed_command_runs_and_the_run_exits_0(name: str, tmp_path: Path) -> None:
    done, project, sessions = run_agent(name, tmp_path, "allow")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "made.txt").read_text() == "hello"
    assert ANSWER in done.stdout
    log = the_log(sessions)
    kinds = [event["type"] for event in log]
    assert kinds.index("permission.resolved") < kinds.index("tool.started")
    [end] = [e["payload"] for e in log if e["type"] == "turn.completed"]
    assert end["stopReason"] == "final"  # type: ignore[index]


@pytest.mark.parametrize("name", REAL_AGENTS)
def test_a_denied_command_never_runs_and_the_log_says_the_user_denied_it(name: str, tmp_path: Path) -> None:
    done, project, sessions = run_agent(name, tmp_path, "deny")
    assert not (project / "made.txt").exists()
    log = the_log(sessions)
    answers = [e["payload"] for e in log if e["type"] == "permission.resolved"]
    assert any(a["decision"] == "deny" and a["actor"] == "user" for a in answers), answers  # type: ignore[index]
    failed = [e["payload"] for e in log if e["type"] == "tool.failed"]
    assert [f["errorCode"] for f in failed] == ["permission_denied"]  # type: ignore[index]
    assert not any(e["type"] == "tool.started" for e in log)
    [end] = [e["payload"] for e in log if e["type"] == "turn.completed"]
    expected = 0 if end["stopReason"] == "final" else 1  # type: ignore[index]  # as `run --prompt`
    assert done.returncode == expected, done.stdout + done.stderr
