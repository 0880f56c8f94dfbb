"""A tmux server of a test's own, for tests that look at a real terminal (`Tmux`, the `tmux` fixture of the tests that import it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


class Tmux:
    """A tmux server of the test's own, one window (120×40 unless told) whose panes stay once they exit."""

    def __init__(self) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is needed for the real-terminal tests (the Debian package tmux)")
        self.socket = f"agent-tui-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True, timeout=30
        )
        assert result.returncode == 0, f"tmux {args}: {result.stderr}"
        return result.stdout

    def start(
        self,
        *command: str | Path,
        env: dict[str, str] | None = None,
        size: tuple[int, int] = (120, 40),
        cwd: Path | None = None,
    ) -> None:
        """Run `command` once the pane has a known title (it waits for a line on stdin first),
        with `env` added to its environment (`-e`, never on a command line), in `cwd`."""
        words = " ".join(_quoted(str(word)) for word in command)
        extra = [item for name, value in (env or {}).items() for item in ("-e", f"{name}={value}")]
        # (COLUMNS and LINES, if the test runner has them, would override the pane's own size.)
        self(
            "new-session",
            "-d",
            *extra,
            *(("-c", str(cwd)) if cwd is not None else ()),
            "-x",
            str(size[0]),
            "-y",
            str(size[1]),
            "-s",
            "t",
            f"read _; exec env -u COLUMNS -u LINES {words}",
        )
        self("set-option", "-g", "set-titles", "on")
        self("set-option", "-g", "remain-on-exit", "on")
        self("select-pane", "-t", "t", "-T", "KNOWN-TITLE")
        assert self.title() == "KNOWN-TITLE"
        self("send-keys", "-t", "t", "Enter")

    def title(self) -> str:
        return self("display-message", "-p", "-t", "t", "#{pane_title}").rstrip("\n")

    def screen(self) -> str:
        return self("capture-pane", "-p", "-J", "-t", "t")

    def wait_for(self, condition: str, what: str, timeout: float = 60) -> str:
        """The pane's text once `condition` (a string it shows, or `dead`) holds."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if (
                condition == "dead"
                and self("display-message", "-p", "-t", "t", "#{pane_dead}").strip() == "1"
            ):
                return screen
            if condition != "dead" and condition in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the pane shows:\n{screen}")
            time.sleep(0.1)

    def buffers(self) -> str:
        return self("list-buffers")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


def _quoted(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    server = Tmux()
    yield server
    server.close()
