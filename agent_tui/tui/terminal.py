"""The terminal around the dashboard: its window title, the signals that end a run, a hang-up.

- `TerminalTitle` saves the terminal's own title (the xterm title stack) before it changes it,
  counts the requests that wait in it (`(2) agent-tui`), and restores it on the way out. It
  writes only when the text changes, through the writer it is given (the app's driver; nothing
  in a headless app), and the text it writes has its control characters as markers (`visible`):
  no BEL or ESC in it can end the title early and start a sequence of its own.
- SIGTERM and SIGHUP (a closed terminal window) are handed to a callback on the app's event
  loop (`ports.listen_for_leave_signals`, as the headless commands hear theirs), so they leave the way
  `q` does rather than killing the process mid-write; the run then exits 128 + the signal's
  number, as a shell expects of a process a signal ended.
- `terminal_gone` tells a terminal that hung up (its attributes can no longer be read: EIO)
  from one that is still there; after a hang-up nothing can be restored or written to it.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable

from agent_tui.events import visible


class TerminalTitle:
    """The terminal window's title: `name`, prefixed by the count of waiting requests.

    Args:
        name: the title when nothing waits.
        write: writes an escape sequence to the terminal.
    """

    def __init__(self, name: str, write: Callable[[str], None]) -> None:
        self.name = name
        self.text = name
        """The title last shown."""
        self._write = write

    def save(self) -> None:
        """Keep the terminal's own title, for `restore`."""
        self._write("\x1b[22;0t")

    def show(self, pending: int) -> None:
        """Count `pending` requests in the title (no count when none waits)."""
        text = f"({pending}) {self.name}" if pending else self.name
        if text != self.text:
            self.text = text
            self._write(f"\x1b]2;{visible(text)}\x07")

    def restore(self) -> None:
        """The terminal's own title again."""
        self._write("\x1b[23;0t")


def terminal_gone() -> bool:
    """Whether the controlling terminal hung up (its window was closed)."""
    import termios

    try:
        termios.tcgetattr(sys.__stdin__.fileno() if sys.__stdin__ is not None else 0)
    except termios.error as error:
        return error.args[0] == errno.EIO
    except (OSError, ValueError):
        return False
    return False
