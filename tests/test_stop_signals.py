"""SIGINT, SIGTERM and SIGHUP stop every headless command the same way, tried on real processes.

Each test starts `python -m agent_tui` (a scenario run, a `--prompt` run against the loopback
fake model, or `agent-tui acp` driven as an ACP client over its pipes), lets the agent run a shell
command whose two `sleep 30` children write their pids to a file, and sends the signal once both
pids are there. Then: the exit status is 128 + the signal's number, every log ends with its
`turn.completed{cancelled}` and keeps the chains of the event log, the children are gone (their
process group was killed), and a scenario's scratch copy is gone.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson
import pytest

from agent_tui.events.chains import chain_violations
from agent_tui.store import JsonlEventLog
from tests.fake_model_server import FakeModelServer, Stream, openai_stream
from tests.support_providers import FAKE_KEY, clean_env

SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]
CHILDREN = "sleep 30 & echo $! >> pids; sleep 30 & echo $! >> pids; wait"
"""A shell call that runs until it is stopped, its two children's pids in `pids`."""
SHELL_STEPS: list[dict[str, Any]] = [
    {"text": ["Running."], "toolCalls": [{"tool": "shell", "args": {"cmd": CHILDREN}}]},
    {"text": ["Done."]},
]


def default_sigint() -> None:
    """In the child: SIGINT as a terminal's Ctrl-C finds it, even when the tests run in a
    background job (where it is ignored, and would stay ignored in the command)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args: list[str], env: dict[str, str], **options: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_tui", *args],
        env=env,
        stdout=options.pop("stdout", subprocess.PIPE),
        stderr=subprocess.PIPE,
        preexec_fn=default_sigint,
        **options,
    )


def wait_for_pids(where: Path, process: subprocess.Popen[bytes], count: int = 2) -> list[int]:
    """The children's pids, once the shell wrote them all (polled: the shell runs elsewhere)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if where.exists():
            pids = [int(word) for word in where.read_text().split()]
            if len(pids) >= count:
                return pids
        assert process.poll() is None, f"agent-tui exited ({process.returncode}) before the shell ran"
        time.sleep(0.05)
    raise AssertionError(f"the shell never wrote {count} pids to {where}")


def running(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting for init to reap it has stopped)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] != "Z"


def assert_stopped(pids: list[int]) -> None:
    """Every pid stops soon: SIGKILL went to their group before the command exited (the wait is
    only for the kernel to finish them off)."""
    deadline = time.monotonic() + 10
    while any(running(pid) for pid in pids):
        assert time.monotonic() < deadline, f"still running: {[pid for pid in pids if running(pid)]}"
        time.sleep(0.05)


def assert_logs_closed(sessions: Path, count: int = 1) -> None:
    logs = sorted(sessions.glob("*.jsonl"))
    assert len(logs) == count, logs
    for log in logs:
        events = list(JsonlEventLog(log).replay("strict"))
        last = events[-1]
        assert (last.type, last.payload["stopReason"]) == ("turn.completed", "cancelled"), log
        assert chain_violations(events) == [], log


def finish(process: subprocess.Popen[bytes]) -> tuple[str, str]:
    try:
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return out.decode(), err.decode()


def private_env(tmp_path: Path, **extra: str) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp, clean_env(TMPDIR=str(tmp), **extra)


@pytest.mark.parametrize("number", SIGNALS, ids=lambda number: signal.Signals(number).name)
def test_a_signal_stops_a_scenario_run_during_a_shell_call(tmp_path: Path, number: int) -> None:
    (tmp_path / "ws").mkdir()
    scenario = tmp_path / "s.json"
    scenario.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": "ws", "steps": SHELL_STEPS}]}))
    tmp, env = private_env(tmp_path)
    sessions = tmp_path / "sessions"
    args = ["run", str(scenario), "--sessions-dir", str(sessions), "--approve", "allow"]
    process = start(args, env)
    try:
        (copy,) = wait_for_copies(tmp)
        pids = wait_for_pids(copy / "ws" / "pids", process)
        process.send_signal(number)
    finally:
        out, err = finish(process)
    assert process.returncode == 128 + number, out + err
    assert "turn ended: cancelled" in out and "Traceback" not in err
    assert err.strip().splitlines()[-1] in (
        "agent-tui: interrupted",
        f"agent-tui: stopped by {signal.Signals(number).name}",
    )
    assert_logs_closed(sessions)
    assert_stopped(pids)
    assert list(tmp.iterdir()) == []  # the scratch copy is gone
    assert not (tmp_path / "ws" / "pids").exists()  # it ran in the copy, never in the scenario's own


def wait_for_copies(tmp: Path) -> list[Path]:
    deadline = time.monotonic() + 60
    while not (copies := list(tmp.glob("agent-tui-*"))):
        assert time.monotonic() < deadline, "no scratch copy was made"
        time.sleep(0.05)
    return copies


@pytest.mark.parametrize("number", SIGNALS, ids=lambda number: signal.Signals(number).name)
def test_a_signal_stops_a_prompt_run_during_a_shell_call(tmp_path: Path, number: int) -> None:
    project = tmp_path / "project"
    project.mkdir()
    sessions = tmp_path / "sessions"
    call = ("call_1", "shell", [json.dumps({"cmd": CHILDREN})])
    with FakeModelServer() as server:
        server.script(Stream(openai_stream(["Running."], [call])), Stream(openai_stream(["Done."])))
        _, env = private_env(tmp_path, AGENT_TUI_CONFIG=str(tmp_path / "none.toml"), OPENAI_API_KEY=FAKE_KEY)
        args = ["run", "--prompt", "go", "--cwd", str(project), "--sessions-dir", str(sessions)]
        args += [
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            server.openai_url,
            "--approve",
            "allow",
        ]
        process = start(args, env)
        try:
            pids = wait_for_pids(project / "pids", process)
            process.send_signal(number)
        finally:
            out, err = finish(process)
    assert process.returncode == 128 + number, out + err
    assert "turn ended: cancelled" in out and "Traceback" not in err
    assert_logs_closed(sessions)
    assert_stopped(pids)


class AcpClient:
    """`agent-tui acp` over its pipes, driven as an ACP client sends JSON-RPC lines."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []
        self._arrived = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self._reader.start()
        self._next = 0

    def _read(self, stdout: IO[bytes]) -> None:
        for raw in stdout:
            with self._arrived:
                self.lines.append(json.loads(raw))
                self._arrived.notify_all()
        with self._arrived:
            self._arrived.notify_all()

    def request(self, method: str, params: dict[str, Any]) -> int:
        self._next += 1
        self.send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return self._next

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def answer(self, request_id: int, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                for line in self.lines:
                    if line.get("id") == request_id and "method" not in line:
                        return line
                left = deadline - time.monotonic()
                assert left > 0 and self._reader.is_alive(), f"no answer to {request_id}: {self.lines[-3:]}"
                self._arrived.wait(left)

    def ended(self) -> None:
        """Wait for the process to exit, stdin still open (a client that stays)."""
        self.process.wait(timeout=60)
        self._reader.join(10)


@contextmanager
def acp_server(tmp_path: Path, steps: list[dict[str, Any]]) -> Iterator[tuple[AcpClient, Path]]:
    scenario = tmp_path / "acp.json"
    script = {"sessions": [{"prompt": "(client)", "steps": steps}], "policy": {"byTool": {"shell": "allow"}}}
    scenario.write_text(json.dumps(script))
    sessions = tmp_path / "sessions"
    process = start(
        ["acp", "--scenario", str(scenario), "--sessions-dir", str(sessions)],
        clean_env(),
        stdin=subprocess.PIPE,
    )
    client = AcpClient(process)
    try:
        yield client, sessions
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


@pytest.mark.parametrize("number", SIGNALS, ids=lambda number: signal.Signals(number).name)
def test_a_signal_stops_the_acp_server_during_a_shell_call(tmp_path: Path, number: int) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with acp_server(tmp_path, SHELL_STEPS) as (client, sessions):
        assert "result" in client.answer(client.request("initialize", {"protocolVersion": 1}))
        created = client.answer(client.request("session/new", {"cwd": str(work), "mcpServers": []}))
        session_id = created["result"]["sessionId"]
        prompt = client.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        )
        pids = wait_for_pids(work / "pids", client.process)
        client.process.send_signal(number)
        client.ended()
        assert client.process.returncode == 128 + number
        # The prompt under way was answered before the server left.
        assert client.answer(prompt, timeout=0)["result"]["stopReason"] == "cancelled"
        assert client.process.stderr is not None
        assert "Traceback" not in client.process.stderr.read().decode()
    assert_logs_closed(sessions)
    assert_stopped(pids)
