"""Run command lines in a throw-away sandbox under strace, and say what each one really did.

The sandbox is bubblewrap: the whole file system bound read-only, a fresh /dev and /proc, every
namespace unshared (no network, its own pids), and one scratch directory bound at the same path
so paths mean the same inside and out. strace runs outside it, so nothing in the sandbox can
reach the trace. All the lines run in one sandbox, one after another, each as
`/bin/sh FILE` (or another shell) under `timeout` from a small driver script; the trace is split by the process
tree under each line's shell.

Invariants:
- what a line did is what its own process tree asked the kernel for, whether or not the kernel
  allowed it: an open for writing refused with EROFS still counts as a write (only a program
  is counted once it really started: a failed exec, such as dash looking `[[` up, runs nothing);
- a write is an open with O_WRONLY/O_RDWR/O_CREAT/O_TRUNC/O_APPEND of anything but /dev/null,
  /dev/tty, /dev/std* or /dev/fd/*, or any creat/unlink/rename/mkdir/rmdir/link/symlink/truncate/
  chmod/chown/utime/mknod call; a network use is a socket of any family but AF_UNIX, or a
  connect to anything but a local socket;
- a missing strace or bwrap is a failure that names it, never a skip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Behaviour", "SandboxEnvironment", "run_lines"]

_TRACED = (
    "execve,execveat,open,openat,openat2,creat,unlink,unlinkat,rename,renameat,renameat2,"
    "mkdir,mkdirat,rmdir,link,linkat,symlink,symlinkat,truncate,chmod,fchmodat,chown,lchown,"
    "fchownat,utime,utimes,utimensat,futimesat,mknod,mknodat,socket,connect,"
    "clone,clone3,fork,vfork"
)
_LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\(|\+\+\+ (killed) by SIGKILL)(.*)$")
_HARMLESS_WRITES = re.compile(r'^"(/dev/null|/dev/tty|/dev/stdout|/dev/stderr|/dev/fd/\d+)"')
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
_CHANGES = frozenset(
    ["creat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
     "link", "linkat", "symlink", "symlinkat", "truncate", "chmod", "fchmodat", "chown", "lchown",
     "fchownat", "utime", "utimes", "utimensat", "futimesat", "mknod", "mknodat"]
)  # fmt: skip


@dataclass
class Behaviour:
    """What one line's process tree did."""

    programs: set[str] = field(default_factory=set)
    writes: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)
    killed: bool = False  # the time limit ended it


@dataclass(frozen=True)
class SandboxEnvironment:
    """Where the lines run: the scratch root (bound writable) and the environment they get."""

    scratch: Path
    env: dict[str, str]


def _tool(name: str) -> str:
    found = shutil.which(name)
    assert found is not None, f"`{name}` is needed for the sandboxed tests (Debian package: {name})"
    return found


def run_lines(
    sandbox: SandboxEnvironment, lines: list[tuple[str, Path]], shell: str = "/bin/sh"
) -> list[Behaviour]:
    """Run each (command line, cwd) with `shell` in the sandbox; what each one did, in order."""
    strace, bwrap = _tool("strace"), _tool("bwrap")
    timeout = _tool("timeout")
    scratch = sandbox.scratch
    lines_dir = scratch / "lines"
    lines_dir.mkdir(exist_ok=True)
    driver = ["#!/bin/sh"]
    for index, (cmd, cwd) in enumerate(lines):
        script = lines_dir / f"{index}.sh"
        script.write_text(cmd + "\n")
        driver.append(f"cd '{cwd}' && {timeout} -s KILL 10 {shell} {script} </dev/null >/dev/null 2>&1")
    driver.append("exit 0")  # a line may fail: that is its business
    (scratch / "driver.sh").write_text("\n".join(driver) + "\n")
    trace = scratch.parent / f"{scratch.name}.trace"
    command = [
        strace, "-f", "-q", "--seccomp-bpf", "--pidns-translation", "-s", "256", "-e", f"trace={_TRACED}", "-o", str(trace),
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--bind", str(scratch), str(scratch), "--unshare-all", "--die-with-parent",
        "--new-session", "--clearenv", *_setenv(sandbox.env), "--chdir", str(scratch),
        "/bin/sh", str(scratch / "driver.sh"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"the sandbox failed: {done.stderr[-2000:]}"
    return _split(trace.read_text(errors="replace"), lines_dir, len(lines), shell)


def _setenv(env: dict[str, str]) -> list[str]:
    out: list[str] = []
    for name, value in env.items():
        out += ["--setenv", name, value]
    return out


def _split(text: str, lines_dir: Path, count: int, shell: str) -> list[Behaviour]:
    """Assign every traced call to the line whose shell its process descends from."""
    calls = list(_calls(text))
    parent: dict[str, str] = {}
    for pid, name, args in calls:  # strace may print a child's calls before its clone returns
        if name in ("clone", "clone3", "fork", "vfork"):
            returned = args.rsplit("=", 1)[-1]
            outer = re.search(r"/\* (\d+) in strace's PID NS \*/", returned)
            child = outer.group(1) if outer is not None else returned.strip().split(" ")[0]
            if child.isdigit():
                parent[child] = pid
    line_of: dict[str, int] = {}
    behaviours = [Behaviour() for _ in range(count)]
    pattern = re.compile(r'\["' + re.escape(shell) + '", "' + re.escape(str(lines_dir)) + r'/(\d+)\.sh"\]')
    for pid, name, args in calls:
        if name == "execve":
            script = pattern.search(args)
            if script is not None:
                line_of[pid] = int(script.group(1))
                continue
        index = _owner(pid, line_of, parent)
        if index is not None:
            _record(name, args, behaviours[index])
    return behaviours


def _calls(text: str) -> list[tuple[str, str, str]]:
    unfinished: dict[str, str] = {}
    calls = []
    for raw in text.splitlines():
        match = _LINE.match(raw)
        if match is None:
            continue
        pid, resumed, started, killed, rest = match.groups()
        if killed is not None:
            calls.append((pid, "killed", ""))
            continue
        if started is not None and rest.endswith("<unfinished ...>"):
            unfinished[pid] = started + "(" + rest.removesuffix("<unfinished ...>")
            continue
        if resumed is not None:
            name, _, head = unfinished.pop(pid, resumed + "(").partition("(")
            rest = head + rest
        else:
            name = started or ""
        calls.append((pid, name, rest))
    return calls


def _owner(pid: str, line_of: dict[str, int], parent: dict[str, str]) -> int | None:
    seen = 0
    while pid not in line_of:
        pid = parent.get(pid, "")
        seen += 1
        if not pid or seen > 1000:
            return None
    return line_of[pid]


def _record(name: str, args: str, behaviour: Behaviour) -> None:
    if name in ("clone", "clone3", "fork", "vfork"):
        return
    if name == "killed":
        behaviour.killed = True
    elif name in ("execve", "execveat"):
        path = re.match(r'(?:\d+, )?"([^"]*)"', args)
        if path is not None and args.rstrip().endswith("= 0"):  # a failed exec ran nothing
            behaviour.programs.add(path.group(1).rsplit("/", 1)[-1])
    elif name in ("open", "openat", "openat2"):
        target = args.split(", ", 1)[1] if name != "open" else args
        flags = target.split(", ", 2)[1] if ", " in target else ""
        if any(flag in flags for flag in _WRITE_FLAGS) and not _HARMLESS_WRITES.match(target):
            behaviour.writes.append(f"{name}({args}")
    elif name in _CHANGES:
        behaviour.writes.append(f"{name}({args}")
    elif _network(name, args):
        behaviour.network.append(f"{name}({args}")


def _network(name: str, args: str) -> bool:
    if name == "socket":
        return not args.startswith(("AF_UNIX", "AF_LOCAL"))
    return name == "connect" and "AF_UNIX" not in args
