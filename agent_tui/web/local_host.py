"""The private bus and host of this machine, for `agent-tui web` with no bus named: the ones
`agent-tui serve` starts, started here when none runs.

Invariants:
- the runtime dir is used only when it is this user's own (`local_server.private_runtime_dir`);
- a host counts as running when the private server (`local_server.running_local_server`) runs
  and its presence bucket holds a `serve` host of this machine whose process is alive;
- otherwise `agent-tui serve` is started on the project, in a session of its own, its input
  closed and its output appended to `SERVE_LOG` (0600) in the user's runtime dir: it outlives
  `agent-tui web` (its agents keep running; stop it as any `serve`); this waits until it says it
  serves, or fails with the last line it wrote;
- nothing here ever stops a host or a server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from agent_tui.providers.config import Config

SERVE_LOG = "web-serve.log"
START_TIMEOUT_S = 60.0
SERVING = " serves "
"""What `agent-tui serve` writes on stderr once its host is on the bus."""


class LocalHostError(Exception):
    """The private host could not be found or started; one sentence."""


@dataclass(frozen=True)
class StartedHost:
    pid: int
    log: Path


async def serve_host_running(config: Config) -> bool:
    """Whether a `serve` host of this machine is on the private bus now (`config`: the loaded
    config file, whose `[bus]` credentials reach it)."""
    from agent_tui.bus.attach_target import BusUnreachable, connect, resolve_target
    from agent_tui.bus.local_server import LocalServerError, running_local_server
    from agent_tui.bus.presence import alive, machine
    from agent_tui.bus.protocol import PRESENCE_BUCKET, Presence

    try:
        if running_local_server() is None:
            return False
    except LocalServerError as error:
        raise LocalHostError(str(error)) from None
    try:
        client = await connect(resolve_target("local", config), name="agent-tui-web-probe")
    except BusUnreachable:
        return False
    try:
        bucket = await client.jetstream().key_value(PRESENCE_BUCKET)
        for key in await bucket.keys():
            entry = await bucket.get(key)
            try:
                presence = Presence.model_validate_json(entry.value or b"")
            except ValueError:
                continue
            if presence.kind == "serve" and presence.machine == machine() and alive(presence.pid):
                return True
        return False
    except Exception:  # no bucket, no keys yet: no host has been heard
        return False
    finally:
        await client.close()


def start_serve_host(project: Path) -> StartedHost:
    """Start `agent-tui serve` on `project` and wait until it serves. Raises LocalHostError."""
    from agent_tui.bus.local_server import LocalServerError, private_runtime_dir
    from agent_tui.private_files import open_private

    try:
        folder = private_runtime_dir()
    except LocalServerError as error:
        raise LocalHostError(str(error)) from None
    try:
        log = folder / SERVE_LOG
        fd = open_private(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    except OSError as error:
        raise LocalHostError(f"{error.filename or folder}: {error.strerror or error}") from None
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "agent_tui", "serve"],
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
        )
    except OSError as error:
        raise LocalHostError(f"cannot start agent-tui serve: {error.strerror or error}") from None
    finally:
        os.close(fd)
    _wait_until_serving(process, log, start)
    return StartedHost(process.pid, log)


def _wait_until_serving(process: subprocess.Popen[bytes], log: Path, start: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        said = _said_since(log, start)
        if SERVING in said:
            return
        if process.poll() is not None:
            last = said.strip().splitlines()[-1:] or ["no reason given"]
            raise LocalHostError(
                f"agent-tui serve exited at start ({last[0].removeprefix('agent-tui: ')}); see {log}"
            )
        time.sleep(0.05)  # a starting host: nothing to wait on but what it writes to its log
    raise LocalHostError(f"agent-tui serve did not start in {START_TIMEOUT_S:.0f} s (see {log})")


def _said_since(log: Path, start: int) -> str:
    try:
        with open(log, "rb") as file:
            file.seek(start)
            return file.read().decode("utf-8", "replace")
    except OSError:
        return ""
