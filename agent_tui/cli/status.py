"""Exit statuses of the command line and how a failure is said: one line on stderr.

`say` is how every command writes a line that may hold what a log, a file name or an agent said:
its control characters are shown as markers (`agent_tui.events.terminal_text`), never obeyed by
the terminal. `fail` says its message that way.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # imported by `agent_tui.cli`, before `agent-tui --version` answers
    from pathlib import Path
    from typing import TextIO

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CORRUPT = 3


def say(line: str, out: TextIO | None = None) -> None:
    """Write `line` and a newline to `out` (stdout by default), its control characters visible."""
    from agent_tui.events.terminal_text import visible

    print(visible(line), file=out or sys.stdout)


def fail(message: str, status: int = EXIT_FAILED) -> int:
    say(f"agent-tui: {message}", sys.stderr)
    return status


def fail_os(error: OSError, where: object, status: int = EXIT_FAILED) -> int:
    """`fail` with an OS error in one line: the file it names (else `where`) and its reason in
    the system's words ("No space left on device")."""
    from agent_tui.runtime.os_errors import os_reason

    return fail(f"{error.filename or where}: {os_reason(error)}", status)


def silence_stdout() -> None:
    """The reader went away (`| head`): stop writing, and let exit not complain about it."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def sessions_dir_error(directory: Path) -> str | None:
    """Why `directory` cannot hold session logs (`DIR: reason`), or None once it can (created if
    needed): asked before a run starts, so a bad `--sessions-dir` is one line, not a failed store."""
    from agent_tui.runtime.session_dirs import SessionsDirError, ensure_writable

    if directory.exists() and not directory.is_dir():
        return f"{directory}: Not a directory"
    try:
        ensure_writable(directory)
    except SessionsDirError as error:
        return str(error)
    return None


def project_logs(sessions_dir: Path | None, cwd: Path | None, *, waiting: bool = False) -> Path | int:
    """The directory of logs a reading command (`search`, `replay`) reads: `--sessions-dir`, else
    the project's (`--cwd`, else the current directory); the exit status when there is none,
    said. `waiting`: the project's directory may not exist yet (`replay --follow` waits for it)."""
    if sessions_dir is None:
        from pathlib import Path

        from agent_tui.runtime.session_dirs import default_sessions_dir

        project = (cwd or Path.cwd()).expanduser().resolve()
        if not project.is_dir():
            return fail(f"{project}: no such directory", EXIT_USAGE)
        directory = default_sessions_dir(project)
        if not directory.is_dir() and not waiting:
            return fail(f"{project}: no sessions yet (looked in {directory})", EXIT_FAILED)
        return directory
    directory = sessions_dir.expanduser()
    if not directory.is_dir() and not waiting:
        return fail(f"{directory}: no such directory", EXIT_USAGE)
    return directory


def fresh_dir() -> Path:
    import tempfile
    from pathlib import Path

    return Path(tempfile.mkdtemp(prefix="agent-tui-sessions-"))
