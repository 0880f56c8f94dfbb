"""The private bus of one machine dies under a running host and the next `agent-tui serve`
starts it again: it comes back on the same port with the same nkey, so the first host
reconnects by itself and an attached dashboard sees it again. Real processes throughout."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support_bus import until
from support_bus_host import host_env, start_agent_tui, wait_for_line
from support_nats import free_port
from support_nats_auth import user_nkey

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import resolve_target
from agent_tui.bus.local_server import (
    NKEYS_HINT,
    LocalServerError,
    ensure_local_server,
    local_server_file,
    read_local_server,
    seed_file,
    stop_local_server,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    try:
        yield started
    finally:
        for process in started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.communicate(timeout=60)


def squat(squatter: socket.socket, port: int) -> None:
    """Listen on `port` as soon as the killed server's socket lets go of it."""
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as nats-server does
    deadline = time.monotonic() + 10
    while True:
        try:
            squatter.bind(("127.0.0.1", port))
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # polling a port a dying process still holds: not a test's wait
    squatter.listen()


async def said(process: subprocess.Popen[str], words: str) -> list[str]:
    """stderr's lines up to `words`; a process that never says them fails the test (killed)."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(wait_for_line, process, words), 60)
    except TimeoutError:
        process.kill()  # ends the read of its stderr too
        pytest.fail(f"never said {words!r}: {process.communicate()[1][-2000:]}")


@pytest.mark.parametrize("port_taken", [False, True], ids=["same port", "its port taken meanwhile"])
async def test_a_host_finds_the_private_server_again_after_it_restarts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: list[subprocess.Popen[str]], port_taken: bool
) -> None:
    """Killed, the server comes back where it was and the host reconnects by itself; if
    another program took its port meanwhile, it comes back on another port and the host
    follows the record there."""
    env = host_env(tmp_path)
    record_path = tmp_path / "run" / "agent-tui" / "bus.json"
    first = start_agent_tui(["serve", "--sessions-dir", str(tmp_path / "a"), "--host", "alpha"], env)
    processes.append(first)
    await said(first, "host alpha serves")
    before = json.loads(record_path.read_text())
    squatter = socket.socket()
    try:
        os.kill(before["pid"], signal.SIGKILL)
        await said(first, "is away")
        if port_taken:
            squat(squatter, int(before["url"].rpartition(":")[2]))
        second = start_agent_tui(["serve", "--sessions-dir", str(tmp_path / "b"), "--host", "beta"], env)
        processes.append(second)
        await said(second, "host beta serves")
        after = json.loads(record_path.read_text())
        assert after["pid"] != before["pid"] and after["seedFile"] == before["seedFile"]
        assert (after["url"] != before["url"]) is port_taken
        await said(first, "is back")

        for name in ("AGENT_TUI_CONFIG", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "TMPDIR"):
            monkeypatch.setenv(name, env[name])
        monkeypatch.delenv("AGENT_TUI_BUS", raising=False)
        dashboard = AttachedBus(resolve_target("local"))
        await dashboard.open()
        try:
            await until(
                dashboard,
                lambda: {view.name for view in dashboard.hosts() if view.reachable} == {"alpha", "beta"},
                "both hosts seen, the first one again",
            )
            alpha = next(view for view in dashboard.hosts() if view.name == "alpha")
            assert alpha.presence is not None and alpha.presence.presence is not None
            assert alpha.presence.presence.pid == first.pid
        finally:
            await dashboard.close()
    finally:
        squatter.close()
        record = json.loads(record_path.read_text())
        with contextlib.suppress(ProcessLookupError):
            os.kill(record["pid"], signal.SIGTERM)


async def test_a_host_follows_a_private_server_started_afresh_with_a_new_key(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    """Ended and forgotten (`stop_local_server`), the server the next `serve` starts has a new
    port and a new nkey; the host still running follows the record and signs in with the new key."""
    env = host_env(tmp_path)
    record_path = tmp_path / "run" / "agent-tui" / "bus.json"
    first = start_agent_tui(["serve", "--sessions-dir", str(tmp_path / "a"), "--host", "alpha"], env)
    processes.append(first)
    await said(first, "host alpha serves")
    before = json.loads(record_path.read_text())
    old_seed = Path(before["seedFile"]).read_text()
    record_path.unlink()  # as stop_local_server does
    os.kill(before["pid"], signal.SIGKILL)
    await said(first, "is away")
    second = start_agent_tui(["serve", "--sessions-dir", str(tmp_path / "b"), "--host", "beta"], env)
    processes.append(second)
    try:
        await said(second, "host beta serves")
        after = json.loads(record_path.read_text())
        assert Path(after["seedFile"]).read_text() != old_seed
        await said(first, "is back")
    finally:
        record = json.loads(record_path.read_text())
        with contextlib.suppress(ProcessLookupError):
            os.kill(record["pid"], signal.SIGTERM)


def runtime_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = host_env(tmp_path)
    for name in ("XDG_RUNTIME_DIR", "XDG_DATA_HOME", "TMPDIR"):
        monkeypatch.setenv(name, env[name])
    local_server_file().parent.mkdir(mode=0o700, parents=True, exist_ok=True)


def record(fields: dict[str, object]) -> None:
    """A record of a server that died (its pid is no process)."""
    local_server_file().write_text(json.dumps({"pid": 2**22 + 1, "store": "x", "startedAt": "t", **fields}))
    local_server_file().chmod(0o600)


def served_key() -> str:
    """The public key the running private server takes (from its config)."""
    config = (local_server_file().parent / "nats-server.conf").read_text()
    return config.partition('nkey: "')[2].partition('"')[0]


def test_a_port_taken_meanwhile_gets_a_new_one_and_the_same_nkey(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime_env(tmp_path, monkeypatch)
    kept = user_nkey()
    seed_file().write_text(kept.seed + "\n")
    seed_file().chmod(0o600)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        record({"url": f"nats://127.0.0.1:{port}", "seedFile": str(seed_file())})
        info, started = ensure_local_server()
    try:
        assert started and info.url != f"nats://127.0.0.1:{port}" and info.seed_file == str(seed_file())
        assert seed_file().read_text().strip() == kept.seed and served_key() == kept.public
        assert read_local_server() == info
    finally:
        stop_local_server()


def test_a_record_of_an_older_version_with_a_token_is_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh server with a fresh key; the old token is nowhere in what is written."""
    runtime_env(tmp_path, monkeypatch)
    record({"url": f"nats://127.0.0.1:{free_port()}", "token": "the-old-token"})
    assert read_local_server() is None
    info, started = ensure_local_server()
    try:
        assert started and "the-old-token" not in local_server_file().read_text()
        assert "token" not in (local_server_file().parent / "nats-server.conf").read_text()
        assert seed_file().stat().st_mode & 0o777 == 0o600 and info.seed_file == str(seed_file())
    finally:
        stop_local_server()


def test_without_the_nkeys_package_the_private_bus_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime_env(tmp_path, monkeypatch)
    monkeypatch.setitem(sys.modules, "nkeys", None)  # `import nkeys` raises ImportError
    with pytest.raises(LocalServerError) as refused:
        ensure_local_server()
    assert str(refused.value) == NKEYS_HINT and "pip install 'agent-tui-dashboard[bus]'" in NKEYS_HINT
    assert read_local_server() is None and not seed_file().exists()


class Impostor:
    """Another local user's listener on the dead private server's port: it speaks first as a
    NATS server that wants a login (a nonce of its own choosing) and keeps what a client sends."""

    INFO = {
        "server_id": "x",
        "server_name": "x",
        "version": "2.10.0",
        "proto": 1,
        "host": "127.0.0.1",
        "headers": True,
        "max_payload": 1048576,
        "jetstream": True,
        "client_id": 1,
        "nonce": "abc",
        "auth_required": True,
    }

    def __init__(self, nonce: bool) -> None:
        self.info = self.INFO if nonce else {k: v for k, v in self.INFO.items() if k != "nonce"}
        self.received = bytearray()
        self.connect_line: bytes | None = None
        self.got_connect = asyncio.Event()

    async def serve(self, port: int) -> asyncio.Server:
        deadline = time.monotonic() + 10
        while True:
            try:
                return await asyncio.start_server(self._client, "127.0.0.1", port, reuse_address=True)
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.02)  # polling a port a dying process still holds: not a test's wait

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"INFO " + json.dumps(self.info).encode() + b"\r\n")
        await writer.drain()
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while line := await reader.readline():
                self.received += line
                if line.startswith(b"CONNECT ") and self.connect_line is None:
                    self.connect_line = line
                    self.got_connect.set()
                    break
        writer.close()


def replay(url: str, connect_line: bytes) -> bytes:
    """What a NATS server at `url` answers to `connect_line` and a PING (`PONG`: logged in)."""
    host, _, port = url.removeprefix("nats://").rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        stream = connection.makefile("rb")
        assert stream.readline().startswith(b"INFO ")
        connection.sendall(connect_line + b"PING\r\n")
        return stream.readline()


@pytest.mark.parametrize("nonce", [True, False], ids=["a nonce of its own", "no nonce"])
async def test_a_listener_on_the_dead_servers_port_learns_nothing_that_logs_in(
    tmp_path: Path, processes: list[subprocess.Popen[str]], nonce: bool
) -> None:
    """While the private server is down, another local user listens on its port; the running
    host reconnects there and sends its login. That login is a signature over the impostor's
    nonce (or nothing, given none to sign): the real server, back on the port, refuses it, and
    the seed was never sent."""
    env = host_env(tmp_path)
    record_path = tmp_path / "run" / "agent-tui" / "bus.json"
    first = start_agent_tui(["serve", "--sessions-dir", str(tmp_path / "a"), "--host", "alpha"], env)
    processes.append(first)
    await said(first, "host alpha serves")
    before = json.loads(record_path.read_text())
    os.kill(before["pid"], signal.SIGKILL)
    await said(first, "is away")
    impostor = Impostor(nonce)
    listener = await impostor.serve(int(before["url"].rpartition(":")[2]))
    try:
        await asyncio.wait_for(impostor.got_connect.wait(), 60)
    finally:
        listener.close()
        await listener.wait_closed()
    assert impostor.connect_line is not None
    second = start_agent_tui(["serve", "--sessions-dir", str(tmp_path / "b"), "--host", "beta"], env)
    processes.append(second)
    try:
        await said(second, "host beta serves")
        after = json.loads(record_path.read_text())
        assert after["url"] == before["url"] and after["pid"] != before["pid"]
        answer = await asyncio.to_thread(replay, after["url"], impostor.connect_line)
        assert answer.startswith(b"-ERR 'Authorization Violation'"), answer
        login = json.loads(impostor.connect_line.removeprefix(b"CONNECT "))
        assert not {"auth_token", "pass", "user"} & set(login), login
        assert not nonce or (login["sig"] and login["nkey"].startswith("U"))
        seed = Path(after["seedFile"]).read_text().strip()
        assert seed.startswith("SU") and seed.encode() not in bytes(impostor.received)
        await said(first, "is back")  # the host itself signs in to the real server again
    finally:
        record = json.loads(record_path.read_text())
        with contextlib.suppress(ProcessLookupError):
            os.kill(record["pid"], signal.SIGTERM)
