"""`agent-tui attach` at the command line: a bus that is not there, a wrong URL or refused
credentials are one line naming the URL (never its secret) and exit 2; `--bus local` finds the
record `agent-tui serve` leaves in the runtime directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support_nats import NatsServer, free_port

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusUnreachable, local_record_path, resolve_target, shown_url

pytestmark = pytest.mark.anyio


def attach(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", "attach", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_no_server_is_one_line_naming_the_url_and_exit_2() -> None:
    port = free_port()
    done = attach("--bus", f"nats://ana:hunter2@127.0.0.1:{port}")
    assert done.returncode == 2
    assert done.stderr == f"agent-tui: no bus at nats://127.0.0.1:{port}: nothing answers there\n"
    assert "hunter2" not in done.stdout + done.stderr and not done.stdout


def test_refused_credentials_are_said_without_the_token(tmp_path: Path) -> None:
    server = NatsServer(store=tmp_path / "store", token="s3cret-token")
    server.start()
    try:
        runtime = tmp_path / "run"
        record = runtime / "agent-tui" / "bus.json"
        record.parent.mkdir(parents=True)
        record.write_text(json.dumps({"url": server.url, "token": "wrong-token"}))
        done = attach("--bus", "local", env={"XDG_RUNTIME_DIR": str(runtime)})
        assert done.returncode == 2
        assert done.stderr == f"agent-tui: no bus at {server.url}: the server refused the credentials\n"
        assert "token" not in done.stderr
    finally:
        server.stop()


def test_no_local_record_says_how_to_get_one(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path), "AGENT_TUI_BUS": ""}
    done = attach(env=env)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "agent-tui serve" in done.stderr and str(tmp_path / "agent-tui" / "bus.json") in done.stderr


def test_the_target_comes_from_the_flag_the_environment_or_the_record(tmp_path: Path) -> None:
    assert resolve_target("nats://a:1", {}).url == "nats://a:1"
    assert resolve_target(None, {"AGENT_TUI_BUS": "nats://b:2"}).source == "$AGENT_TUI_BUS"
    record = local_record_path({"XDG_RUNTIME_DIR": str(tmp_path)})
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"url": "nats://127.0.0.1:4999", "token": "t0k"}))
    target = resolve_target("local", {"XDG_RUNTIME_DIR": str(tmp_path), "AGENT_TUI_BUS": "nats://b:2"})
    assert (target.url, target.token) == ("nats://127.0.0.1:4999", "t0k")
    assert "t0k" not in repr(target) and "t0k" not in str(target)
    record.write_text("{not json")
    with pytest.raises(BusUnreachable, match="not readable"):
        resolve_target(None, {"XDG_RUNTIME_DIR": str(tmp_path)})


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("nats://ana:pw@host:4222", "nats://host:4222"),
        ("tls://tok@host", "tls://host"),
        ("nats://host:4222", "nats://host:4222"),
        ("nats://[::1]:4222", "nats://[::1]:4222"),
        ("nats://a:b@[::1]:4222", "nats://[::1]:4222"),
        ("garbage@", "<an unreadable URL>"),
    ],
)
def test_a_shown_url_carries_no_secret(url: str, shown: str) -> None:
    assert shown_url(url) == shown


async def test_the_local_record_with_its_token_attaches(tmp_path: Path) -> None:
    server = NatsServer(store=tmp_path / "store", token="s3cret-token")
    server.start()
    try:
        environ = {"XDG_RUNTIME_DIR": str(tmp_path / "run")}
        record = local_record_path(environ)
        record.parent.mkdir(parents=True)
        record.write_text(json.dumps({"url": server.url, "token": "s3cret-token"}))
        bus = AttachedBus(resolve_target(None, environ))
        await bus.open()
        try:
            assert bus.connected and bus.is_open
        finally:
            await bus.close()
    finally:
        server.stop()
