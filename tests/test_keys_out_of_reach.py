"""Keys out of the tools' reach, tried the way an attacker would, on the real command.

Every run is `python -m agent_tui` in a subprocess with fake keys in its environment: the
vendor's variable, a `*_TOKEN`, a `*_PASSWORD`, and a variable a config profile names as its
`api_key_env` although its name looks harmless. A scenario's shell calls then try every way we
know to read them (the environment, our own `/proc` entries, every process's, `ps eww`), with
the sandbox on and off; the log, what is printed and what the model is sent must hold none.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_model_server import FakeModelServer, Stream, openai_stream
from support_providers import clean_env

from agent_tui.events import Event
from agent_tui.store import JsonlEventLog

# Made afresh by each test process: without the sandbox a command can read the environment of
# every process of ours, and another test may be running one with keys of its own right now.
FAKE_KEY = f"sk-test-{uuid.uuid4().hex}"
TOKEN = f"tok-test-{uuid.uuid4().hex}"
PASSWORD = f"pw-test-{uuid.uuid4().hex}"
HARMLESS_LOOKING = f"llm-test-{uuid.uuid4().hex}"
"""The value of `LLM_AUTH`, which only the config file says is a key."""
INCLUDED = f"inc-test-{uuid.uuid4().hex}"
SECRETS = (FAKE_KEY, TOKEN, PASSWORD, HARMLESS_LOOKING)

MEMORY_SCAN = """import os, re
parent = os.getppid()
memory = open(f"/proc/{parent}/mem", "rb", 0)
read = found = 0
for line in open(f"/proc/{parent}/maps"):
    span, perms = line.split()[:2]
    start, end = (int(x, 16) for x in span.split("-"))
    if "r" not in perms:
        continue
    try:
        memory.seek(start)
        data = memory.read(end - start)
    except (OSError, ValueError, OverflowError):
        continue
    read += 1
    found += len(re.findall(rb"(?:sk|tok|pw|llm)-test-[A-Za-z0-9]+", data))
print(f"regions read: {read}, keys found: {found}")
"""
"""Reads every readable mapping of the parent's memory and counts what looks like a fake key."""

ATTACKS = [
    "env",
    "printenv OPENAI_API_KEY MY_SERVICE_TOKEN DB_PASSWORD LLM_AUTH; echo printenv=$?",
    "cat /proc/self/environ",
    "cat /proc/$PPID/environ; echo; echo parent=$(tr '\\0' ' ' < /proc/$PPID/cmdline)",
    "xargs -0 -n1 < /proc/$PPID/environ",
    "cat /proc/$PPID/task/*/environ",
    "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null",
    "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done 2>/dev/null",
    "ps eww",
    "ps -eo args",
]


def scenario(tmp_path: Path, commands: list[str]) -> Path:
    (tmp_path / "ws").mkdir(exist_ok=True)
    steps: list[dict[str, Any]] = [
        {"text": [f"try {n}"], "toolCalls": [{"tool": "shell", "args": {"cmd": cmd}}]}
        for n, cmd in enumerate(commands)
    ]
    steps.append({"text": ["done"]})
    body = {"sessions": [{"title": "lead", "cwd": "ws", "prompt": "read the keys", "steps": steps}]}
    path = tmp_path / "scenario.json"
    path.write_bytes(orjson.dumps(body))
    return path


def config(tmp_path: Path, *, sandbox: bool, include: tuple[str, ...] = ()) -> Path:
    path = tmp_path / "config.toml"
    names = ", ".join(f'"{name}"' for name in include)
    path.write_text(
        f"[sandbox]\nenabled = {'true' if sandbox else 'false'}\n\n"
        f"[shell_env]\ninclude = [{names}]\n\n"
        '[profiles.gateway]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "LLM_AUTH"\n'
    )
    return path


def keyed_env(tmp_path: Path, config_file: Path, **extra: str) -> dict[str, str]:
    return clean_env(
        AGENT_TUI_CONFIG=str(config_file),
        OPENAI_API_KEY=FAKE_KEY,
        MY_SERVICE_TOKEN=TOKEN,
        DB_PASSWORD=PASSWORD,
        LLM_AUTH=HARMLESS_LOOKING,
        XDG_DATA_HOME=str(tmp_path / "data"),
        **extra,
    )


def run(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )


def tool_outputs(sessions: Path) -> list[str]:
    (log,) = sessions.glob("*.jsonl")
    events: list[Event] = list(JsonlEventLog(log).replay("strict"))
    return [
        e.payload.get("result") or e.payload.get("message", "")
        for e in events
        if e.type in ("tool.completed", "tool.failed")
    ]


@pytest.mark.parametrize("sandbox", [False, True], ids=["no sandbox", "sandbox"])
def test_no_tool_reads_a_key_by_any_way_we_know(tmp_path: Path, sandbox: bool) -> None:
    env = keyed_env(tmp_path, config(tmp_path, sandbox=sandbox))
    sessions = tmp_path / "sessions"
    done = run(
        tmp_path,
        env,
        "run",
        str(scenario(tmp_path, ATTACKS)),
        "--sessions-dir",
        str(sessions),
        "--approve",
        "allow",
    )
    assert done.returncode == 0, done.stderr
    logged = b"".join(path.read_bytes() for path in sessions.glob("*.jsonl"))
    for secret in SECRETS:
        assert secret.encode() not in logged
        assert secret not in done.stdout + done.stderr
    outputs = tool_outputs(sessions)
    assert len(outputs) == len(ATTACKS)
    # The attacks did run and read something: the environment and the parent's entries are there.
    assert "PATH=" in outputs[0] and "GIT_OPTIONAL_LOCKS=0" in outputs[0]
    assert "printenv=1" in outputs[1]
    # (A non-root user cannot read agent-tui's /proc entries at all: it is not dumpable.)
    assert "PATH=" in outputs[3] or "Permission denied" in outputs[3]
    if sandbox:
        assert "parent=/usr/bin/bwrap" in outputs[3] or "bwrap" in outputs[3].split("parent=")[1]
    else:
        # The parent is agent-tui itself, started again without the keys: its environment and
        # its command line are readable, and hold none of them.
        # (It is named `agent-tui` for ps; the handed-over descriptor shows it is the restart.)
        environ, parent = outputs[3].split("parent=")
        assert parent.startswith("agent-tui run ") and "AGENT_TUI_SECRETS_FD=" in environ


def test_in_the_sandbox_not_even_the_parents_memory_holds_a_key(tmp_path: Path) -> None:
    # Without the sandbox, a command with the right to trace agent-tui (root, or the same user
    # where the kernel allows it) could read the keys from agent-tui's memory: the sandbox's
    # parent is bwrap's stub, whose memory never held one.
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "scan.py").write_text(MEMORY_SCAN)
    env = keyed_env(tmp_path, config(tmp_path, sandbox=True))
    sessions = tmp_path / "sessions"
    # A Python the sandbox can see: its own /tmp hides the one of a venv kept under /tmp.
    python = Path(sys.base_prefix, "bin", "python3").resolve()
    path = scenario(tmp_path, [f"{python} scan.py"])
    done = run(tmp_path, env, "run", str(path), "--sessions-dir", str(sessions), "--approve", "allow")
    assert done.returncode == 0, done.stderr
    (output,) = tool_outputs(sessions)
    counts = re.fullmatch(r"regions read: (\d+), keys found: (\d+)", output.strip())
    assert counts is not None, output
    read, found = int(counts[1]), int(counts[2])
    assert read > 0 and found == 0, output


def test_shell_env_include_passes_a_variable_through(tmp_path: Path) -> None:
    env = keyed_env(tmp_path, config(tmp_path, sandbox=True, include=("MY_SERVICE_TOKEN", "EXTRA_SECRET")))
    env["EXTRA_SECRET"] = INCLUDED
    sessions = tmp_path / "sessions"
    path = scenario(
        tmp_path, ["printenv MY_SERVICE_TOKEN EXTRA_SECRET; printenv OPENAI_API_KEY; echo rest=$?"]
    )
    done = run(tmp_path, env, "run", str(path), "--sessions-dir", str(sessions), "--approve", "allow")
    assert done.returncode == 0, done.stderr
    (output,) = tool_outputs(sessions)
    assert output == f"{TOKEN}\n{INCLUDED}\nrest=1\n"  # on purpose; the model key still not


def test_the_model_still_gets_its_key_and_never_sees_it(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    env = keyed_env(tmp_path, config(tmp_path, sandbox=False), AGENT_TUI_API_KEY_ENV="OPENAI_API_KEY")
    call = '{"cmd": "cat /proc/$PPID/environ; env"}'
    with FakeModelServer() as server:
        server.script(
            Stream(openai_stream([], [("call_1", "shell", [call])])), Stream(openai_stream(["No keys."]))
        )
        done = run(
            tmp_path,
            env,
            "run",
            "--prompt",
            "Print your environment",
            "--cwd",
            str(cwd),
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            server.openai_url,
            "--sessions-dir",
            str(tmp_path / "s"),
            "--approve",
            "allow",
        )
    assert done.returncode == 0, done.stdout + done.stderr
    first, second = server.requests
    assert first.headers["authorization"] == f"Bearer {FAKE_KEY}"  # after the restart, from the vault
    assert second.headers["authorization"] == f"Bearer {FAKE_KEY}"
    sent = orjson.dumps(second.body).decode()
    assert "GIT_OPTIONAL_LOCKS=0" in sent  # the tool's output did reach the model
    for secret in SECRETS:
        assert secret not in sent
        assert secret.encode() not in b"".join(p.read_bytes() for p in (tmp_path / "s").glob("*.jsonl"))


def test_an_acp_agent_gets_the_keys_it_names_and_no_other(tmp_path: Path) -> None:
    # The agent is a shell script that writes down its environment. The program that starts it
    # takes the keys out of its own environment the way the entry does, then starts the agent
    # the way the dashboard does (`AgentProcess`, the `[acp.probe]` table of the config file).
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\nenv > {tmp_path}/agent-env\n")
    agent.chmod(0o755)
    config_file = tmp_path / "config.toml"
    config_file.write_text(f'[acp.probe]\ncommand = "{agent}"\nenv = ["MY_SERVICE_TOKEN", "LLM_AUTH"]\n')
    code = (
        "import os, anyio, pathlib\n"
        "from agent_tui.cli.entry import keys_to_move\n"
        "from agent_tui.engine import vault\n"
        "moved = keys_to_move(os.environ)\n"
        "for name in moved: del os.environ[name]\n"
        "vault.keep(moved)\n"
        "from agent_tui.acp.agent_process import AgentProcess\n"
        "from agent_tui.acp.config import load_acp_agents\n"
        "async def go():\n"
        "    process = AgentProcess(load_acp_agents()['probe'], pathlib.Path.cwd())\n"
        "    await process.start()\n"
        "    await process.run()\n"
        "anyio.run(go)\n"
    )
    env = keyed_env(tmp_path, config_file, AGENT_TUI_API_KEY_ENV="LLM_AUTH")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    got = dict(
        line.split("=", 1) for line in (tmp_path / "agent-env").read_text().splitlines() if "=" in line
    )
    assert got["MY_SERVICE_TOKEN"] == TOKEN and got["LLM_AUTH"] == HARMLESS_LOOKING  # named: passed
    assert "OPENAI_API_KEY" not in got and "DB_PASSWORD" not in got  # not named: not passed
    assert FAKE_KEY not in (tmp_path / "agent-env").read_text()


def test_a_bad_hand_over_descriptor_is_one_sentence(tmp_path: Path) -> None:
    env = clean_env(AGENT_TUI_SECRETS_FD="notanumber")
    done = run(tmp_path, env, "schema")
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == "agent-tui: $AGENT_TUI_SECRETS_FD: expected a file descriptor number, got 'notanumber'\n"
    )
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"not json")
    os.close(write_fd)
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui", "schema"],
        capture_output=True,
        text=True,
        env={**env, "AGENT_TUI_SECRETS_FD": str(read_fd)},
        pass_fds=(read_fd,),
        timeout=60,
    )
    os.close(read_fd)
    assert done.returncode == 2
    assert (
        done.stderr
        == f"agent-tui: $AGENT_TUI_SECRETS_FD: file descriptor {read_fd} does not hold agent-tui's keys\n"
    )


def test_the_restart_does_not_run_a_repositorys_own_agent_tui(tmp_path: Path) -> None:
    # The console script restarts `python -m agent_tui` in the current directory, a repository
    # we do not trust: one with an `agent_tui` package of its own must not stand in for ours.
    script = Path(sys.executable).parent / "agent-tui"
    assert script.exists(), f"the console script {script} is not installed (pip install -e .)"
    hostile = tmp_path / "repo"
    (hostile / "agent_tui").mkdir(parents=True)
    marker = tmp_path / "hijacked"
    (hostile / "agent_tui" / "__init__.py").write_text("")
    (hostile / "agent_tui" / "__main__.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    env = clean_env(OPENAI_API_KEY=FAKE_KEY)
    done = subprocess.run(
        [str(script), "schema"], capture_output=True, text=True, env=env, cwd=hostile, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)  # our schema, from our agent_tui
    assert not marker.exists()
