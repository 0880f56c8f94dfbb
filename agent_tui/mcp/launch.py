"""The launcher every stdio MCP server runs under: `python -P -m agent_tui.mcp.launch -- COMMAND ARGS`.

We start it for the servers of our own sessions (`mcp.stdio`), and hand it, as the command, to
the ACP agents we drive (`acp.mcp_servers`), which start it in their project; either way the
server gets the same two guarantees.

Invariants:
- the server never starts in the session's (or the agent's) directory: it starts in a private,
  empty folder made for this start alone (0700, by `mkdtemp`, under `server_dirs()`: the user's
  cache folder, never a shared temporary one) and removed when the launcher ends; only `--cwd
  DIR`, which comes from the user's own config (`[mcp.NAME] cwd`), chooses another. So a
  repository's `.npmrc`, `package.json`, `uv.toml`, `pyproject.toml [tool.uv]`,
  `.python-version`, `.tool-versions`, `mise.toml`, ... are never a project config of the tools
  that look for one from their working directory upward (npm, npx, uv, uvx, pyenv, mise, asdf);
  `PWD` and `OLDPWD` say the server's folder too. The launcher itself runs with `-P`, so a
  repository's own `agent_tui` folder is never imported when an agent starts it there;
- the server's whole process tree ends with it: on Linux the launcher is a child subreaper
  (`PR_SET_CHILD_SUBREAPER`), so every orphan of the tree, one that called `setsid` or
  double-forked included, becomes the launcher's child rather than init's; once the server
  exits, or the launcher is asked to stop (SIGTERM, SIGINT, SIGHUP, or the end of the process
  that started it, `PR_SET_PDEATHSIG`: strictly, of the thread that started it, which for
  agent-tui is its event loop's), it SIGKILLs its children until it has none left, and then
  exits with the server's status (128 + signal when it was stopped);
- the server is the launcher's child, in a process group of its own, with the launcher's stdin
  and stdout (the launcher lets go of both, so the pipe closes when the tree is gone) and
  environment;
- a command that cannot be run, or a `--cwd` that cannot be entered, is one line on stderr and
  exit status 127.

Why a subreaper, rather than a pid namespace (bwrap's `--unshare-pid`) or a cgroup: it needs
no privilege, no user namespaces and no bwrap, so it works on every Linux machine agent-tui runs
on (containers included), and it leaves the server the user's whole view of files, network and
its own caches, which an MCP server needs. What it does not cover: a SIGKILL of the launcher
itself (its server child is then killed by `PR_SET_PDEATHSIG`, but that server's own children
are left to init). Elsewhere than Linux there is no subreaper: the launcher still starts the
server in its private folder and kills the server's process group when it ends.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

__all__ = ["launch_command", "main", "server_dirs"]

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def launch_command(command: str, args: list[str], cwd: Path | None = None) -> list[str]:
    """The command line that runs `command args` under this launcher (this Python, `-P`)."""
    where = ["--cwd", str(cwd)] if cwd is not None else []
    return [sys.executable, "-P", "-m", "agent_tui.mcp.launch", *where, "--", command, *args]


def server_dirs() -> Path:
    """The folder the private folders of servers are made in: `mcp` in agent-tui's cache folder
    (each of the two made 0700, whatever the umask, when we make it). Never in a shared temporary
    folder: npm and uv look for project config in every folder above the one they start in, and
    anyone can write into `/tmp`."""
    import platformdirs

    cache = Path(platformdirs.user_cache_dir("agent-tui"))
    base = cache / "mcp"
    for folder in (cache, base):
        try:
            folder.mkdir(mode=0o700, parents=folder == cache)
        except FileExistsError:
            continue
        folder.chmod(0o700)
    return base


def main(argv: list[str] | None = None) -> int:
    """Run a server under the launcher (see the module); returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    cwd: str | None = None
    if argv[:1] == ["--cwd"] and len(argv) >= 2:
        cwd, argv = argv[1], argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("agent-tui mcp launcher: no server command given", file=sys.stderr)
        return 2
    starter = os.getppid()
    # Held until the server runs and we wait for it (`_serve`): a stop never lands half-way.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    stop = _Stop()
    for number in _STOP_SIGNALS:
        signal.signal(number, stop.handler)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != starter:  # the starter died before the line above: nobody to serve
        return 128 + signal.SIGTERM
    reaper = _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    try:
        private = None if cwd is not None else Path(tempfile.mkdtemp(prefix="server-", dir=server_dirs()))
    except OSError as error:
        print(f"agent-tui mcp launcher: cannot make the server's folder: {error}", file=sys.stderr)
        return 126
    home = cwd if cwd is not None else str(private)
    try:
        return _serve(argv, home, stop, reaper)
    finally:
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)


class _Stop(Exception):
    """Raised by the stop signals' handler, out of whatever the launcher was waiting on."""

    def __init__(self) -> None:
        super().__init__("stop")
        self.signal: int | None = None
        self.armed = True
        """Whether a stop signal still interrupts the wait (not once the tree is being ended)."""

    def handler(self, number: int, frame: object) -> None:
        if self.signal is None:
            self.signal = number
        if self.armed:
            self.armed = False
            raise self


def _serve(argv: list[str], home: str, stop: _Stop, reaper: bool) -> int:
    env = dict(os.environ, PWD=home, OLDPWD=home)
    launcher = os.getpid()
    server = os.fork()
    if server == 0:
        _exec_server(argv, home, env, launcher)
    _let_go_of_stdio()
    status: int | None = None
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        while status is None:  # reap orphans handed to us until the server itself exits
            pid, wait_status = os.waitpid(-1, 0)
            if pid == server:
                status = os.waitstatus_to_exitcode(wait_status)
        stop.armed = False  # inside the try: a stop from here on only waits for the end below
    except _Stop:
        status = 128 + (stop.signal or signal.SIGTERM)
    except ChildProcessError:
        status = 1
    _end_tree(server, reaper)
    return status if status >= 0 else 128 - status


def _exec_server(argv: list[str], home: str, env: dict[str, str], launcher: int) -> None:
    """In the forked child: become the server (never returns)."""
    try:
        for number in _STOP_SIGNALS:
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the launcher killed: its server goes too
        if os.getppid() != launcher:
            os._exit(127)
        os.setpgid(0, 0)  # a group of its own: all that is left to end where there is no subreaper
        try:
            os.chdir(home)
        except OSError as error:
            os.write(
                2, f"cannot start {argv[0]} in {home}: {error.strerror or error}\n".encode(errors="replace")
            )
            os._exit(127)
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        os.write(2, f"cannot run {argv[0]}: no such program\n".encode(errors="replace"))
    except OSError as error:
        os.write(2, f"cannot run {argv[0]}: {error.strerror or error}\n".encode(errors="replace"))
    except BaseException:
        pass
    os._exit(127)


def _let_go_of_stdio() -> None:
    """Point our own stdin and stdout at /dev/null: the server's pipe must close with its tree,
    not stay open while the launcher tidies up."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)


def _end_tree(server: int, reaper: bool) -> None:
    """SIGKILL what is left of the server's tree and reap it: as a subreaper, every descendant
    becomes our child once its parent dies, so killing our children until none is left ends
    the whole tree, whatever sessions or groups its members made."""
    _kill(-server)  # a negative pid: the server's whole process group
    if not reaper:
        return
    while True:
        children = _children()
        if not children:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    return  # a child /proc does not show (no /proc): nothing more we can do
            except ChildProcessError:
                return
            continue
        for child in children:
            _kill(child)
        for child in children:
            try:
                os.waitpid(child, 0)
            except ChildProcessError:
                pass


def _children() -> list[int]:
    """Our children (zombies too), from /proc; nothing where there is no /proc."""
    me = os.getpid()
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _prctl(option: int, value: int) -> bool:
    """Linux's prctl; False where there is none or it refused."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


if __name__ == "__main__":
    sys.exit(main())
