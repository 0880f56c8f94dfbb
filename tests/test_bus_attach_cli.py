"""`agent-tui attach` at the command line: a bus that is not there, a wrong URL or refused
credentials are one line naming the URL (never its secret) and exit 2; `--bus local` (or no bus
named) finds the record `agent-tui serve` leaves in the runtime directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support_nats import NatsServer, free_port
from support_nats_auth import user_nkey

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusUnreachable, resolve_target, shown_url

pytestmark = pytest.mark.anyio


@pytest.fixture
def alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """No config file, no $AGENT_TUI_BUS, a runtime dir of the test's own."""
    env = {
        "AGENT_TUI_CONFIG": str(tmp_path / "config.toml"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "AGENT_TUI_BUS": "",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def record_local_server(env: dict[str, str], url: str, seed: str) -> Path:
    """The record `agent-tui serve` writes for its private server, and its nkey seed file."""
    record = Path(env["XDG_RUNTIME_DIR"]) / "agent-tui" / "bus.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    seed_file = record.parent / "bus.nk"
    seed_file.write_text(seed + "\n")
    seed_file.chmod(0o600)
    fields = {
        "url": url,
        "seedFile": str(seed_file),
        "pid": os.getpid(),
        "store": "/tmp/x",
        "startedAt": "2026-12-01T21:00:00Z",
    }
    record.write_text(json.dumps(fields))
    return record


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


def nkey_server(tmp_path: Path, public_key: str) -> NatsServer:
    """A server that takes the user nkey `public_key` only, as the private server does."""
    config = f'authorization {{ users = [ {{ nkey: "{public_key}" }} ] }}\n'
    return NatsServer(store=tmp_path / "store", config=config)


def test_refused_credentials_are_said_without_the_seed(tmp_path: Path, alone: dict[str, str]) -> None:
    server = nkey_server(tmp_path, user_nkey().public)
    server.start()
    try:
        wrong = user_nkey()
        record_local_server(alone, server.url, wrong.seed)
        done = attach("--bus", "local")
        assert done.returncode == 2
        assert done.stderr == f"agent-tui: no bus at {server.url}: the server refused the credentials\n"
        assert wrong.seed not in done.stderr
    finally:
        server.stop()


def test_no_local_record_says_how_to_get_one(tmp_path: Path, alone: dict[str, str]) -> None:
    done = attach()
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert (
        "agent-tui serve" in done.stderr and str(tmp_path / "run" / "agent-tui" / "bus.json") in done.stderr
    )


def test_a_wrong_url_is_said_where_it_came_from(alone: dict[str, str]) -> None:
    done = attach(env={"AGENT_TUI_BUS": "http://nope"})
    assert done.returncode == 2 and done.stderr.startswith("agent-tui: $AGENT_TUI_BUS: bus URL")


def test_the_target_comes_from_the_flag_the_environment_the_config_or_the_record(
    tmp_path: Path, alone: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_target("nats://a:1").url == "nats://a:1"
    monkeypatch.setenv("AGENT_TUI_BUS", "nats://b:2")
    assert resolve_target(None).source == "$AGENT_TUI_BUS"
    key = user_nkey()
    record = record_local_server(alone, "nats://127.0.0.1:4999", key.seed)
    target = resolve_target("local")
    assert (target.url, target.options, target.source) == (
        "nats://127.0.0.1:4999",
        {"nkeys_seed": str(record.parent / "bus.nk")},
        str(record),
    )
    assert key.seed not in repr(target) and key.seed not in str(target)
    monkeypatch.setenv("AGENT_TUI_BUS", "")
    Path(alone["AGENT_TUI_CONFIG"]).write_text(
        '[bus]\nurl = "nats://c:3"\ncredentials_env = "MY_BUS_TOKEN"\n'
    )
    monkeypatch.setenv("MY_BUS_TOKEN", "tok-from-env")
    target = resolve_target(None)
    assert (target.url, target.options, target.source) == (
        "nats://c:3",
        {"token": "tok-from-env"},
        "[bus] url",
    )
    Path(alone["AGENT_TUI_CONFIG"]).write_text('[bus]\nurl = "local"\ncredentials_env = "MY_BUS_TOKEN"\n')
    target = resolve_target(None)  # the private server takes its key only: no token beside it
    assert target.options == {"nkeys_seed": str(record.parent / "bus.nk")}
    record.write_text("{not json")
    Path(alone["AGENT_TUI_CONFIG"]).write_text("")
    with pytest.raises(BusUnreachable, match="records none"):
        resolve_target(None)


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


async def test_the_local_record_with_its_nkey_attaches(tmp_path: Path, alone: dict[str, str]) -> None:
    key = user_nkey()
    server = nkey_server(tmp_path, key.public)
    server.start()
    try:
        record_local_server(alone, server.url, key.seed)
        bus = AttachedBus(resolve_target(None))
        await bus.open()
        try:
            assert bus.connected and bus.is_open
        finally:
            await bus.close()
    finally:
        server.stop()
