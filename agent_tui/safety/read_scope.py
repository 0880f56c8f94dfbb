"""Where a `read` may look: the session's directory, a few harmless system places, never a
credential store.

The classifier proves a line only reads; this says whether what it reads is the session's to
read. Given the session's directory and whether the command runs in the sandbox (`ReadScope`),
`outside_reason` looks at every word a line's commands get (and `=`/`-o` values, `<` targets),
resolved as the shell would (from the directory each `cd` on the line goes to, an unquoted `~`
from `$HOME` and a quoted one as a name, both looked at, globs expanded on disk, symlinks
followed), and says why the line is not `read`:

- a credential store (`credential_stores`, and the secret files the config names) named, in any
  mode, unless the session's directory lies inside that store;
- without the sandbox, a path whose real path is outside the session's directory and not in
  `HARMLESS_PLACES`; a `cd` there, or to a place not known from the text (`cd -`, `popd`),
  counts as such a path, and so does any path through `/proc` or `/dev/fd` (resolved per
  process: `/proc/self/cwd/..` is not what it seems here), and a symlink leading out anywhere in
  the tree of a walk that follows links (`grep -R`, `rg -L`, `find -L`, `ls -LR`, `tree -l`:
  `MAX_WALKED` entries at most); and a session's directory that holds
  a credential store (a session in `$HOME`), since any recursive read of it would reach it.

Invariants:
- never raises; the work is bounded (`MAX_NAMES` resolutions, `MAX_MATCHES` per glob): past it,
  the line is not judged read;
- it only ever makes a `read` line riskier: the caller asks it about lines already proven `read`;
- a word that names nothing on disk is not a path (a pattern such as `/api/v1` or a `sed`
  script): it reads nothing. A path created between this look and the command's start, and a
  symlink deep inside a directory another program walks following links, are not seen here;
  the sandbox hides the stores from those.
"""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_tui.safety.credential_stores import StoreIndex, StorePath, real_path, store_paths, under
from agent_tui.safety.shell_parse import SimpleCommand, Word, parse_shell
from agent_tui.safety.shell_words import brace_spellings, names

__all__ = ["HARMLESS_PLACES", "MAX_MATCHES", "MAX_NAMES", "ReadScope", "outside_reason"]

_HARMLESS_GROUPS = {
    "installed software and its documentation (world-readable, the same on every machine)": (
        "/usr/share/ /usr/include/ /usr/lib/ /usr/lib64/ /usr/bin/ /usr/sbin/ /bin/ /sbin/ /lib/ /lib64/"
    ),
    "what system this is": (
        "/etc/os-release /etc/lsb-release /etc/debian_version /etc/redhat-release /etc/alpine-release "
        "/etc/hostname /etc/timezone /etc/localtime /etc/shells /proc/cpuinfo /proc/meminfo /proc/version "
        "/proc/uptime /proc/loadavg"
    ),
    "devices that hold nothing": "/dev/null /dev/zero /dev/random /dev/urandom /dev/stdin",
}
HARMLESS_PLACES: tuple[str, ...] = tuple(
    place for group in _HARMLESS_GROUPS.values() for place in group.split()
)
"""Places outside the session's directory a `read` may name without the sandbox: a directory
ends in `/` and covers what is under it. A path is judged by its real path (a
link from `/usr/lib` to `/etc/ssl/private` is not harmless)."""
MAX_NAMES = 2_000
"""Resolutions (word spellings times glob matches) one line may cost before it is not judged."""
MAX_MATCHES = 256
"""Files one glob may match before the line is not judged."""
MAX_WALKED = 20_000
"""Entries one line's symlink-following walks (`grep -R`) may hold before it is not judged."""

_NAMES_ONLY = names("echo printf basename dirname test [ true false pwd which type command realpath readlink")
"""Programs that never open their operands: a path among them is text, not a read."""
_CHANGES_DIRECTORY = frozenset({"cd", "pushd", "popd"})


@dataclass(frozen=True)
class ReadScope:
    """Where a shell call runs, as the classifier needs it.

    Attributes:
        cwd: the real path of the session's directory.
        sandboxed: the command runs in the sandbox, which hides the credential stores and keeps
            every write out; then only the stores are looked for.
        home: `$HOME`, for `~`.
        stores: the credential stores' paths for this user.
    """

    cwd: str
    sandboxed: bool
    home: str
    stores: tuple[StorePath, ...]

    @classmethod
    def of(cls, cwd: Path, *, sandboxed: bool, secret_files: Iterable[str] = ()) -> ReadScope:
        """The scope of a call in `cwd` for this process's user (its `HOME` and XDG places), with
        the secret files its config names."""
        stores = tuple(store_paths(named=secret_files))
        return cls(os.path.realpath(cwd), sandboxed, os.environ.get("HOME", ""), stores)


class _TooMany(Exception):
    pass


def _harmless(path: str) -> bool:
    for place in HARMLESS_PLACES:
        if place.endswith("/"):
            if under(path, place.rstrip("/")):
                return True
        elif path == place:
            return True
    return False


def _magic(path: str) -> bool:
    """A path through `/proc` or `/dev/fd`: `/proc/self/cwd/..` means one thing to the command and
    another to us (`self` is whoever looks), so its real path here proves nothing."""
    return any(under(path, root) for root in ("/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr"))


class _Judge:
    def __init__(self, scope: ReadScope) -> None:
        self.scope = scope
        self.cost = 0
        everywhere = StoreIndex(scope.stores)
        # stores the session works inside (the user chose to) do not count
        self.index = StoreIndex(
            found for found in scope.stores if not under(scope.cwd, everywhere.real(found))
        )

    def named(self, program: str, text: str, base: str, shown: str) -> str | None:
        """Why `program` naming `text` (taken from `base`) is not a read of the session's; or None."""
        for path in self._expanded(text, base):
            found = self.index.find(path)
            if found is not None:
                return (
                    f"`{program}` names {shown}, a credential store ({found.store.holds}): never judged read"
                )
            if self.scope.sandboxed or program in _NAMES_ONLY:
                continue
            cwd = self.scope.cwd
            spelled, real = os.path.normpath(path), real_path(path)
            if _magic(spelled) and not _harmless(spelled):
                return (
                    f"`{program}` reads {shown}, outside the session's directory (the kernel "
                    "resolves it per process): not judged read without the sandbox"
                )
            if not os.path.lexists(path):
                continue
            if under(real, cwd) or _harmless(real):  # where the kernel goes, links followed
                continue
            return f"`{program}` reads {shown}, outside the session's directory: not judged read without the sandbox"
        return None

    def _expanded(self, text: str, base: str) -> Iterator[str]:
        if "\x00" in text or not text:
            return
        # an unquoted `~` is `$HOME`, a quoted one a name in the directory: look at both
        for spelling in dict.fromkeys((self.tilde(text, base), text)):
            yield from self._matches(os.path.join(base, spelling), spelling)

    def _matches(self, path: str, text: str) -> Iterator[str]:
        self._pay(1)
        yield path  # a pattern itself too: a store's name written as a pattern is still a store
        if not (set("*?[") & set(text)):
            return
        try:
            matches = list(itertools.islice(glob.iglob(path), MAX_MATCHES + 1))
        except (OSError, ValueError, RecursionError):
            matches = []
        if len(matches) > MAX_MATCHES:
            raise _TooMany(f"`{text}` matches more than {MAX_MATCHES} files, too many to check")
        self._pay(len(matches))
        yield from matches

    def tilde(self, text: str, base: str) -> str:
        """`text` with a leading `~`, `~+` or `~USER` expanded as the shell would."""
        if not text.startswith("~"):
            return text
        user, sep, rest = text[1:].partition("/")
        if user == "":
            return self.scope.home + sep + rest if self.scope.home else text
        if user == "+":
            return base + sep + rest
        if user == "-":
            raise _TooMany(f"`{text}` names the previous directory, not known here")
        return os.path.expanduser(text)

    def walked(self, program: str, roots: Sequence[str], base: str) -> str | None:
        """Why a walk of `roots` that follows every symlink it meets is not a read of the
        session's: the first link in them that leads out of it (or to a store); or None."""
        seen = 0
        for root in roots:
            for top, directories, files in os.walk(root):  # links not followed: each is judged
                for name in [*directories, *files]:
                    seen += 1
                    if seen > MAX_WALKED:
                        raise _TooMany(
                            f"`{program}` follows links in more than {MAX_WALKED} files, too many to check"
                        )
                    path = os.path.join(top, name)
                    if os.path.islink(path):
                        reason = self.named(program, path, base, os.path.relpath(path, base))
                        if reason is not None:
                            return reason
        return None

    def _pay(self, cost: int) -> None:
        self.cost += cost
        if self.cost > MAX_NAMES:
            raise _TooMany(f"names more than {MAX_NAMES} paths, too many to check")


def _spellings(word: Word) -> Iterator[str]:
    """The word, and the value of `--option=VALUE`, `NAME=VALUE` and `-oVALUE` forms."""
    value = word.value
    yield value
    if "=" in value:  # `--file=PATH`, and `if=PATH` (bash expands a `~` after its `=`)
        yield value.split("=", 1)[1]
    elif value.startswith("-") and not value.startswith("--") and len(value) > 2:
        yield value[2:]


def outside_reason(cmd: str, scope: ReadScope) -> str | None:
    """Why a line proven `read` still reads what is not the session's (see the module contract),
    or None."""
    try:
        return _line_reason(parse_shell(cmd).commands, scope)
    except _TooMany as error:
        return f"cannot be judged read: {error}"


def _line_reason(commands: Sequence[SimpleCommand], scope: ReadScope) -> str | None:
    judge = _Judge(scope)
    if (held := _stores_held(judge, scope)) is not None:
        return held
    base = scope.cwd
    for command in commands:
        if not command.words:
            continue
        program = os.path.basename(command.words[0].value)
        args = command.words[1:]
        if program in _CHANGES_DIRECTORY:
            base, reason = _moved(judge, program, args, base)
            if reason is not None:
                return reason
            continue
        for word in args:
            for spelling in _spellings(word):
                for text in brace_spellings(spelling) if "brace" in word.expansions else [spelling]:
                    if (reason := judge.named(program, text, base, word.source)) is not None:
                        return reason
        if not scope.sandboxed and _follows_links(program, [word.value for word in args]):
            if (reason := judge.walked(program, _walk_roots(judge, args, base), base)) is not None:
                return reason
        for redirect in command.redirects:
            target = redirect.target
            if target is None or redirect.operator not in ("<", "<&") or target.value.isdigit():
                continue
            if (reason := judge.named(program, target.value, base, target.source)) is not None:
                return reason
    return None


def _stores_held(judge: _Judge, scope: ReadScope) -> str | None:
    """Why nothing is judged read without the sandbox when the session's directory holds
    credential stores, or None."""
    if scope.sandboxed:
        return None
    index = judge.index
    held = [
        found for found in index.stores if under(index.real(found), scope.cwd) and os.path.lexists(found.path)
    ]
    if not held:
        return None
    shown = ", ".join(found.store.shown for found in held[:3])
    return (
        f"the session's directory holds credential stores ({shown}): without the sandbox "
        "no command here is judged read"
    )


_FOLLOWING: dict[str, tuple[str, str]] = {
    # a program that walks a tree following every symlink in it: (its short flag, its long one)
    **dict.fromkeys(("grep", "egrep", "fgrep"), ("R", "--dereference-recursive")),
    "rg": ("L", "--follow"),
    "find": ("L", "-follow"),
    "tree": ("l", "--follow"),
}


def _follows_links(program: str, values: Sequence[str]) -> bool:
    """Whether `program` with these arguments walks a tree following its symlinks (`grep -R`,
    `rg -L`, `find -L`, `ls -LR`, `tree -l`): a link deep in the tree leads it anywhere."""
    shorts = "".join(value[1:] for value in values if value.startswith("-") and not value.startswith("--"))
    if program == "ls":
        return ("L" in shorts or "--dereference" in values) and ("R" in shorts or "--recursive" in values)
    if program not in _FOLLOWING:
        return False
    short, long = _FOLLOWING[program]
    if program == "find":
        return short in [value[1:] for value in values if value.startswith("-")] or long in values
    return short in shorts or long in values


def _walk_roots(judge: _Judge, args: Sequence[Word], base: str) -> list[str]:
    """The folders among the operands (the session's directory when none is named)."""
    roots = [
        path
        for word in args
        if not word.value.startswith("-")
        for path in judge._expanded(word.value, base)
        if os.path.isdir(path)
    ]
    return roots or [base]


def _moved(judge: _Judge, program: str, args: Sequence[Word], base: str) -> tuple[str, str | None]:
    """The directory a `cd`/`pushd`/`popd` goes to, and why going there is not a read, if it is not."""
    operands = [word for word in args if not (word.value.startswith("-") and word.value != "-")]
    if program == "popd" or (operands and (operands[0].value == "-" or operands[0].value.startswith("+"))):
        shown = " ".join([program, *(word.source for word in args)])
        return base, f"`{shown}` goes to a directory not known here: not judged read"
    target = operands[0] if operands else None
    text = target.value if target is not None else "~"
    reason = judge.named(program, text, base, target.source if target is not None else "~")
    if reason is not None:
        return base, reason.replace("` reads ", "` goes to ", 1)
    expanded = judge.tilde(text, base) if target is None or "tilde" in target.expansions else text
    return os.path.normpath(os.path.join(base, expanded)), None
