"""The process is `agent-tui …` for `ps`, `pgrep` and `pkill`, however it was started: the console
script, `python -m agent_tui`, and the restart that takes keys out of the environment (which runs
`python -P -m agent_tui`). Real processes (`agent-tui acp` waiting on its pipes), real `ps`,
`pgrep` and `pkill`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support_signals import AcpClient

from agent_tui.engine import vault

SCRIPT = Path(sys.executable).with_name("agent-tui")
FAKE_KEY = "sk-proj-" + "k3y" * 12


def started(tmp_path: Path, program: list[str], **extra: str) -> subprocess.Popen[bytes]:
    scenario = tmp_path / "hello.json"
    scenario.write_text(json.dumps({"sessions": [{"prompt": "(client)", "steps": [{"text": ["hi"]}]}]}))
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AGENT_TUI_", "OPENAI_", "ANTHROPIC_"))
    }
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"), **extra)
    args = ["acp", "--scenario", str(scenario), "--sessions-dir", str(tmp_path / "sessions")]
    return subprocess.Popen(
        [*program, *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


@pytest.fixture
def stop() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()


def ready(process: subprocess.Popen[bytes]) -> AcpClient:
    """The process answered `initialize`: it runs agent-tui's own code, its title long set."""
    client = AcpClient(process)
    answer = client.answer(client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
    assert "result" in answer, answer
    return client


def ps(pid: int) -> tuple[str, str]:
    done = subprocess.run(
        ["ps", "-ww", "-o", "comm=,args=", "-p", str(pid)], capture_output=True, text=True, check=True
    )
    comm, _, args = done.stdout.strip().partition(" ")
    return comm, args.strip()


def pgrep(*args: str) -> set[int]:
    done = subprocess.run(["pgrep", *args], capture_output=True, text=True)
    return {int(pid) for pid in done.stdout.split()}


@pytest.mark.parametrize(
    ("how", "keyed"),
    [("the console script", False), ("the console script", True), ("python -m agent_tui", False)],
)
def test_ps_and_pgrep_see_agent_tui(
    tmp_path: Path, stop: list[subprocess.Popen[bytes]], how: str, keyed: bool
) -> None:
    program = [str(SCRIPT)] if how == "the console script" else [sys.executable, "-m", "agent_tui"]
    process = started(tmp_path, program, **({"OPENAI_API_KEY": FAKE_KEY} if keyed else {}))
    stop.append(process)
    ready(process)
    comm, args = ps(process.pid)
    assert comm == "agent-tui"
    assert (
        args == f"agent-tui acp --scenario {tmp_path / 'hello.json'} --sessions-dir {tmp_path / 'sessions'}"
    )
    assert process.pid in pgrep("-x", "agent-tui") and process.pid in pgrep("-f", "^agent-tui acp")
    environ = Path(f"/proc/{process.pid}/environ").read_bytes()
    # the environment's /proc entry is left whole (the title never spills over it) ...
    assert b"XDG_DATA_HOME=" in environ and b"PATH=" in environ
    # ... and a keyed start was the restart without the key, which is named all the same
    assert (f"{vault.SECRETS_FD_ENV}=".encode() in environ) is keyed
    assert FAKE_KEY.encode() not in environ
    assert FAKE_KEY.encode() not in Path(f"/proc/{process.pid}/cmdline").read_bytes()


def test_pkill_agent_tui_stops_it(tmp_path: Path, stop: list[subprocess.Popen[bytes]]) -> None:
    process = started(tmp_path, [str(SCRIPT)], OPENAI_API_KEY=FAKE_KEY)
    stop.append(process)
    ready(process)
    # only this test's own children: other agent-tui processes on the machine are left alone
    done = subprocess.run(["pkill", "-TERM", "-x", "-P", str(os.getpid()), "agent-tui"], capture_output=True)
    assert done.returncode == 0, done.stderr
    assert process.wait(timeout=60) == 128 + signal.SIGTERM  # agent-tui's own exit for a SIGTERM
