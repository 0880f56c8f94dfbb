"""Helpers for the tests that stop real agent-tui processes: a shell call whose children say
their pids, waiting for them, checking that they and the logs ended, and a raw ACP client."""

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

from support_providers import clean_env

from agent_tui.events.chains import chain_violations
from agent_tui.store import JsonlEventLog

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


def unsandboxed_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """`clean_env` with the shell's sandbox off: these tests find the commands' processes by the
    pids they wrote, which inside the sandbox are its own namespace's (the sandbox's own kill
    tests are in test_sandbox.py)."""
    config = tmp_path / "no-sandbox.toml"
    config.write_text("[sandbox]\nenabled = false\n")
    return clean_env(AGENT_TUI_CONFIG=str(config), **extra)


def private_env(tmp_path: Path, **extra: str) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp, unsandboxed_env(tmp_path, TMPDIR=str(tmp), **extra)


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
        unsandboxed_env(tmp_path),
        stdin=subprocess.PIPE,
    )
    client = AcpClient(process)
    try:
        yield client, sessions
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
