"""Credentials and TLS against a real nats-server: a user and password from the named variable,
an nkey seed file and a creds file (a user JWT of an operator-mode server) given as `creds_file`
to a host (`agent-tui serve`) and an attached dashboard, a server certificate checked against the
trust store, and each refusal said in one line that names the bus and never the secret."""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import nats
import orjson
import pytest
from support_bus import until
from support_bus_host import host_env, start_agent_tui, stream_lines, wait_for_line
from support_nats import NatsServer, certificates
from support_nats_auth import OperatorMode, user_nkey

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget, BusUnreachable, resolve_target
from agent_tui.runtime.commands import StopAll

PASSWORD = "pa55-w0rd-that-must-never-show"
FAST = {"sessions": [{"title": "hi", "cwd": "ws", "prompt": "Say hello", "steps": [{"text": ["hello"]}]}]}


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    path = tmp_path / "fast.json"
    path.write_bytes(orjson.dumps(FAST))
    return path


def run_on(url: str, env: dict[str, str], scenario: Path, sessions: Path) -> tuple[int, str, str]:
    process = start_agent_tui(
        ["run", str(scenario), "--sessions-dir", str(sessions), "--bus", url, "--host", "ci"], env
    )
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def serve_on(url: str, env: dict[str, str], sessions: Path) -> tuple[int, str]:
    """`agent-tui serve` that cannot get in: its exit status and what it said."""
    process = start_agent_tui(["serve", "--bus", url, "--sessions-dir", str(sessions)], env)
    out, err = process.communicate(timeout=60)
    return process.returncode, out + err


async def published_lines(url: str, login: dict[str, str]) -> dict[str, list[bytes]]:
    client = await nats.connect(url, connect_timeout=5, **login)
    try:
        return (await stream_lines(client.jetstream()))[0]
    finally:
        await client.close()


def stored_lines(sessions: Path) -> dict[str, list[bytes]]:
    return {log.stem: log.read_bytes().splitlines() for log in sessions.glob("*.jsonl")}


def test_a_user_and_password_from_the_variable_get_in_and_a_wrong_one_is_said_without_it(
    tmp_path: Path, scenario: Path
) -> None:
    server = NatsServer(store=tmp_path / "store", options=["--user", "ana", "--pass", PASSWORD])
    server.start()
    try:
        config = '[bus]\ncredentials_env = "BUS_LOGIN"\n'
        status, _, err = run_on(
            server.url, host_env(tmp_path, config, BUS_LOGIN=f"ana:{PASSWORD}"), scenario, tmp_path / "s1"
        )
        assert status == 0, err
        assert "connected to the bus" in err and "did not take every event" not in err
        published = anyio.run(published_lines, server.url, {"user": "ana", "password": PASSWORD})
        assert published == stored_lines(tmp_path / "s1")  # a run that ends at once still publishes

        status, said = serve_on(
            server.url, host_env(tmp_path, config, BUS_LOGIN="ana:wrong-password"), tmp_path / "s2"
        )
        assert status == 2
        assert said.strip().splitlines() == [
            f"agent-tui: cannot reach the bus at {server.url}: "
            "the server refused the credentials (authorization violation)"
        ]
        status, said = serve_on(server.url, host_env(tmp_path, config), tmp_path / "s3")
        assert status == 2 and "$BUS_LOGIN (bus credentials_env) is not set" in said
        assert PASSWORD not in said and "wrong-password" not in said
    finally:
        server.stop()


def test_tls_by_url_checks_the_servers_certificate(tmp_path: Path, scenario: Path) -> None:
    authority, cert, key = certificates(tmp_path / "certs")
    server = NatsServer(
        store=tmp_path / "store", options=["--tls", "--tlscert", str(cert), "--tlskey", str(key)]
    )
    server.start()
    try:
        assert server.url.startswith("tls://")
        trusted = host_env(tmp_path, SSL_CERT_FILE=str(authority))  # the trust store holds the CA
        status, _, err = run_on(server.url, trusted, scenario, tmp_path / "s1")
        assert status == 0, err
        assert "connected to the bus" in err and "did not take every event" not in err

        status, said = serve_on(server.url, host_env(tmp_path), tmp_path / "s2")  # a stranger's certificate
        assert status == 2
        assert len(said.strip().splitlines()) == 1
        assert said.startswith(f"agent-tui: cannot reach the bus at {server.url}: ")
        assert "certificate" in said
    finally:
        server.stop()


def secret_file(tmp_path: Path, name: str, text: str) -> str:
    """`text` in a file only its owner reads (as a seed or creds file is kept): the config line."""
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o600)
    return f'[bus]\ncreds_file = "{path}"\n'


def written_with(root: Path, secret: str) -> list[Path]:
    """Every file under `root` holding `secret`, but the seed and creds files themselves (what
    the host and the server wrote: logs, records, the store)."""
    kept = (".nk", ".creds")
    return [
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix not in kept and secret in p.read_text("latin-1")
    ]


def dashboard_target(url: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> BusTarget:
    """What `agent-tui attach --bus URL` resolves with the config file of `env`."""
    monkeypatch.setenv("AGENT_TUI_CONFIG", env["AGENT_TUI_CONFIG"])
    monkeypatch.delenv("AGENT_TUI_BUS", raising=False)
    return resolve_target(url)


async def host_and_dashboard_get_in(
    server: NatsServer, tmp_path: Path, config: str, monkeypatch: pytest.MonkeyPatch
) -> str:
    """`agent-tui serve` and an attached dashboard, both with `config`'s credentials: the
    dashboard sees the host and the host answers its control request. What the host said."""
    env = host_env(tmp_path, config)
    args = ["serve", "--bus", server.url, "--host", "box", "--cwd", str(tmp_path)]
    serve = start_agent_tui([*args, "--sessions-dir", str(tmp_path / "sessions")], env)
    try:
        said = "".join(wait_for_line(serve, "host box serves"))
        dashboard = AttachedBus(dashboard_target(server.url, env, monkeypatch))
        await dashboard.open()
        try:
            assert not dashboard.read_only
            await until(dashboard, lambda: dashboard.host("box").reachable, "the host's heartbeat")
            outcome = await dashboard.control.send("box", StopAll())
            assert outcome.answered and outcome.ok, outcome
        finally:
            await dashboard.close()
    finally:
        serve.send_signal(signal.SIGTERM)
        out, err = serve.communicate(timeout=60)
    assert serve.returncode == 128 + signal.SIGTERM, err
    return said + out + err


async def refused_to_both(
    server: NatsServer, tmp_path: Path, config: str, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """`agent-tui serve` and an attached dashboard with `config`'s wrong credentials: each is
    refused in one line; both lines."""
    env = host_env(tmp_path, config)
    status, said = serve_on(server.url, env, tmp_path / "refused")
    assert status == 2
    with pytest.raises(BusUnreachable) as refused:
        await AttachedBus(dashboard_target(server.url, env, monkeypatch)).open()
    assert str(refused.value) == f"no bus at {server.url}: the server refused the credentials"
    return [*said.strip().splitlines(), str(refused.value)]


@pytest.mark.anyio
async def test_an_nkey_seed_file_gets_a_host_and_a_dashboard_in_and_a_strangers_is_refused_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana, stranger = user_nkey(), user_nkey()
    server = NatsServer(
        store=tmp_path / "store", config=f'authorization {{ users = [ {{ nkey: "{ana.public}" }} ] }}\n'
    )
    server.start()
    try:
        said = await host_and_dashboard_get_in(
            server, tmp_path, secret_file(tmp_path, "ana.nk", ana.seed + "\n"), monkeypatch
        )
        assert f"host box serves {tmp_path / 'sessions'} on the bus at {server.url}" in said
        assert ana.seed not in said

        wrong = secret_file(tmp_path, "stranger.nk", stranger.seed + "\n")
        lines = await refused_to_both(server, tmp_path, wrong, monkeypatch)
        assert lines[0] == (
            f"agent-tui: cannot reach the bus at {server.url}: "
            "the server refused the credentials (authorization violation)"
        )
        assert not any(stranger.seed in line or ana.seed in line for line in lines)
        assert written_with(tmp_path, ana.seed) == written_with(tmp_path, stranger.seed) == []
    finally:
        server.stop()


@pytest.mark.anyio
async def test_a_creds_file_gets_a_host_and_a_dashboard_into_an_operator_mode_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trust = OperatorMode.make()
    server = NatsServer(store=tmp_path / "store", config=trust.server_config)
    server.start()
    try:
        said = await host_and_dashboard_get_in(
            server, tmp_path, secret_file(tmp_path, "ana.creds", trust.creds), monkeypatch
        )
        assert f"on the bus at {server.url}" in said and trust.user_seed not in said

        stranger = trust.stranger()
        lines = await refused_to_both(
            server, tmp_path, secret_file(tmp_path, "x.creds", stranger), monkeypatch
        )
        assert lines[0].startswith(f"agent-tui: cannot reach the bus at {server.url}: the server refused")
        assert len(lines) == 2 and not any("NKEY" in line or "-----" in line for line in lines)
        jwt = trust.creds.split("\n")[1]
        assert written_with(tmp_path, trust.user_seed) == written_with(tmp_path, jwt) == []
    finally:
        server.stop()
