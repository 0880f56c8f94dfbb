"""Credentials and TLS against a real nats-server: a user and password from the named variable,
a server certificate checked against the trust store, and each refusal said in one line that
names the bus and never the secret."""

from __future__ import annotations

from pathlib import Path

import anyio
import nats
import orjson
import pytest
from support_bus_host import host_env, start_agent_tui, stream_lines
from support_nats import NatsServer, certificates

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
