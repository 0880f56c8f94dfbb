"""Helpers for the web dashboard's tests: `agent-tui web` as a real process (its start line
read for the address and the token), and the system's Chromium driven by Playwright."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from support_bus_host import start_agent_tui

from agent_tui.web.access import APP_PROTOCOL, SESSION_PROTOCOL
from agent_tui.web.access_token import AccessToken

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START_LINE = re.compile(r"^open (http://127\.0\.0\.1:(\d+))/\?token=([A-Za-z0-9_-]+)$")


@dataclass
class Web:
    process: subprocess.Popen[str]
    base: str
    token: str
    said: list[str]

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"

    @property
    def dashboard(self) -> str:
        """The dashboard's own address (under the path derived from the token)."""
        return f"{self.base}/{AccessToken(self.token).path_secret}/"

    @property
    def websocket(self) -> str:
        return self.dashboard.replace("http:", "ws:") + "ws"

    @property
    def protocols(self) -> tuple[str, str]:
        """The subprotocols our page offers: ours, and the one carrying the session value."""
        return (APP_PROTOCOL, SESSION_PROTOCOL + AccessToken(self.token).session)

    def stop(self) -> str:
        """Stop it as Ctrl-C does; everything it wrote on stderr."""
        self.process.send_signal(2)
        _, stderr = self.process.communicate(timeout=60)
        return "".join(self.said) + stderr


def start_web(args: list[str], env: dict[str, str]) -> Web:
    """`agent-tui web ARGS --port 0`, once it has printed where it listens."""
    process = start_agent_tui(["web", *args, "--port", "0"], env)
    assert process.stdout is not None
    said: list[str] = []
    for line in process.stdout:
        said.append(line)
        found = START_LINE.match(line.strip())
        if found:
            return Web(process, found.group(1), found.group(3), said)
    _, stderr = process.communicate(timeout=60)
    raise AssertionError(f"agent-tui web ended ({process.returncode}) before its start line: {said} {stderr}")


def chromium() -> str:
    if not CHROMIUM.is_file():
        pytest.fail("no /usr/bin/chromium: apt-get install chromium (the browser tests drive it)")
    return str(CHROMIUM)


def children_of(pid: int) -> set[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(status.parent.name))
    return found
