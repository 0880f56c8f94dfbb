"""A tmux server of a test's own, for tests that look at a real terminal (`Tmux`, the `tmux` fixture of the tests that import it).

Invariants:
- the pane answers what a program asks its terminal at start-up, as a terminal emulator does: the
  cursor position and device attributes (tmux always answers those) and the default colours (OSC
  10/11), which a detached tmux 3.3 answers only when the window's style names them
  (`DEFAULT_COLOURS`). Left unanswered, a TUI such as Codex waits out its probe's deadline and the
  answers that do come may arrive after it, into the input it drains before a protected screen;
- the program starts only once the pane has a known title and our Enter has released it; every key
  a test sends afterwards is counted (`keys_sent`);
- a pane whose program died is reported at once by `wait_for`, with its screen. The one exception is
  a start-up failure the caller names (`start(restart_once_on=...)`): if the pane died showing exactly
  that text before any key of ours was sent, the program is started again, once, with a warning in
  the test output. Anything else (another message, a second failure, a death after our keys) fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

DEFAULT_COLOURS = "fg=#d0d0d0,bg=#1c1c1c"
"""The window's default colours, so that the pane answers OSC 10/11 queries (see the module's invariants)."""


class Tmux:
    """A tmux server of the test's own, one window (120×40 unless told) whose panes stay once they exit."""

    def __init__(self) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is needed for the real-terminal tests (the Debian package tmux)")
        self.socket = f"agent-tui-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.keys_sent = 0
        """Keys sent to the pane since its program was released (`send-keys` calls)."""
        self._restart_once_on: str | None = None
        self._cwd: Path | None = None

    def __call__(self, *args: str) -> str:
        if args[:1] == ("send-keys",):
            self.keys_sent += 1
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
        restart_once_on: str | None = None,
    ) -> None:
        """Run `command` once the pane has a known title (it waits for a line on stdin first),
        with `env` added to its environment (`-e`, never on a command line), in `cwd`.

        `restart_once_on`: a start-up failure of the program's own (the text it shows as it dies)
        that `wait_for` answers by starting it again, once, if no key was sent to it yet."""
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
        self("set-option", "-g", "window-style", DEFAULT_COLOURS)
        self("set-option", "-g", "set-titles", "on")
        self("set-option", "-g", "remain-on-exit", "on")
        self._restart_once_on, self._cwd = restart_once_on, cwd
        self._release()

    def _release(self) -> None:
        """Give the waiting pane its known title, then the Enter that starts the program."""
        self("select-pane", "-t", "t", "-T", "KNOWN-TITLE")
        assert self.title() == "KNOWN-TITLE"
        self("send-keys", "-t", "t", "Enter")
        self.keys_sent = 0

    def title(self) -> str:
        return self("display-message", "-p", "-t", "t", "#{pane_title}").rstrip("\n")

    def screen(self) -> str:
        return self("capture-pane", "-p", "-J", "-t", "t")

    def dead(self) -> bool:
        return self("display-message", "-p", "-t", "t", "#{pane_dead}").strip() == "1"

    def wait_for(self, condition: str, what: str, timeout: float = 60) -> str:
        """The pane's text once `condition` (a string it shows, or `dead`) holds; fails at once if
        the pane's program exited without showing it (see `start` for the one restart)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if condition == "dead":
                if self.dead():
                    return screen
            elif condition in screen:
                return screen
            elif self.dead():
                screen = self.screen()  # what it printed last, before it exited
                if condition in screen:
                    return screen
                if not self._restarted(screen):
                    raise AssertionError(
                        f"the pane's program exited while waiting for {what}; it shows:\n{screen}"
                    )
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the pane shows:\n{screen}")
            time.sleep(0.1)

    def _restarted(self, screen: str) -> bool:
        """Start the dead pane's program again if it died of the named start-up failure before any
        key of ours reached it, once; says so in the test output."""
        failure = self._restart_once_on
        if failure is None or failure not in screen or self.keys_sent:
            return False
        self._restart_once_on = None
        warnings.warn(
            f"the program in tmux died at start-up with {failure!r} before any key was sent to it; "
            f"started it again (once). Its screen was:\n{screen}",
            stacklevel=3,
        )
        self("respawn-pane", "-t", "t", *(("-c", str(self._cwd)) if self._cwd is not None else ()))
        self._release()
        return True

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
