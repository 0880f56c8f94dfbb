"""Protected paths: what no rule, remembered answer or policy may let a tool call change.

Two kinds of places run or decide things later, so a write there is more than a write:
agent-tui's own permission files (`.agent-tui/` in a project, and the user's rules directory),
and a repository's machinery (`.git/`: hooks run code, config names programs). A call that
would change them is put to the user every time, with a warning saying which kind it is.

Invariants:
- `protected_change` is a pure function of the call, the session's directory and what is on
  disk now; it never raises; a `read_file` or a `read` shell line builds nothing;
- the areas a session directory's calls are judged by (its real path, its repository's git
  directories, the links named `.git` or `.agent-tui`, the extra roots) are read once and kept
  while every directory and file they were read from is unchanged (`safety.resolution`): a link
  made or swapped, a `.git` file written, between two calls, is seen at the second; the path a
  call names is resolved on every call;
- a path is protected when its real path (symlinks followed, `..` applied, from the session's
  directory) or its plain spelling has a component `.git` or `.agent-tui` (except inside a
  worktree's checkout under `.agent-tui/worktrees/NAME/`, whose own `.git` and `.agent-tui`
  are protected in their turn), or lies under an extra root: where a `.git` file or symlink
  points (a worktree's git directory and the repository's common directory), and the user's
  rules directory given by the caller;
- `write_file`/`edit_file` are judged by their `path`; `shell` by every word and redirection
  target of every command it holds (scripts inside `sh -c '…'` too, words resolved from the cwd
  and from each directory it `cd`s into, `~` from `$HOME`), by a plain-text search for a
  protected name, by `git config` (which writes `.git/config` without naming it) and by asking
  git for its directory (`git rev-parse --git-dir`, whose answer the line may write to); a
  `shell` line the classifier proved read-only is never a change;
- a word with a glob or a brace (`.gi[t]`, `.g*t`, `.{g,}it`) is protected when one of its
  spellings could be a protected component: the shell or the program expands it later, so it is
  judged by what it could match, not by its letters (the shell's globs match a leading `.` only
  when they spell it; `find`'s own patterns may match it anyway);
- the work is bounded: a line over `MAX_JUDGED_LINE` characters, or with more words and `cd`s
  than can be resolved quickly, is reported as a possible change (asked) without resolving it;
- this sees what a call names: a path built while the command runs (a variable, a program's
  own logic) is not seen here; the classifier's risk still applies to such a call.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_tui.events.model import Risk
from agent_tui.safety import shell_commands
from agent_tui.safety.git_hooks import common_dir_of, gitdir_of
from agent_tui.safety.resolution import Resolution
from agent_tui.safety.resolution import clock as resolution_clock
from agent_tui.safety.shell_parse import MAX_PIPES
from agent_tui.safety.shell_words import brace_spellings

__all__ = ["ProtectedChange", "find_repository", "protected_change"]

FILE_WRITERS = frozenset({"write_file", "edit_file"})
"""The file tools whose `path` argument is written."""

GIT = ".git"
OWN = ".agent-tui"
WORKTREES = "worktrees"

Kind = Literal["permissions", "repository"]

# A protected name in plain text: `.git` or `.agent-tui` as a whole path component (so
# `.gitignore`, `.github` and `repo.git` do not count), or the user's rules directory.
_NAMED = re.compile(r"(?<![\w.-])\.(?:git|agent-tui)(?![\w.-])|agent-tui[/\\]permissions(?![\w.-])")
# Asking git where its directory is, in a line that changes something: the path is computed.
_GIT_DIR_QUERY = re.compile(r"--(?:absolute-)?git-(?:dir|common-dir|path)(?![\w-])")
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
_MAX_SHOWN = 3
MAX_JUDGED_LINE = 8_192
"""A shell line longer than this is not resolved word by word: it is asked as a possible change."""
_MAX_JUDGEMENTS = 20_000
"""Words times the directories they are resolved from (each a `realpath`): past this, asked."""
_GLOB = frozenset("*?[")
_SCRIPT = frozenset(" \t\n;&|<>()`")


@dataclass(frozen=True, slots=True)
class ProtectedChange:
    """A call that would change a protected path: which kind, and the paths as the call named them."""

    kind: Kind
    paths: tuple[str, ...]

    @property
    def warning(self) -> str:
        shown = ", ".join(self.paths[:_MAX_SHOWN]) + (" …" if len(self.paths) > _MAX_SHOWN else "")
        if self.kind == "permissions":
            return (
                f"changes agent-tui's permissions ({shown}): such a write is asked every time, "
                "whatever the rules say"
            )
        return (
            f"changes the repository's machinery ({shown}): hooks and git config run code "
            "later; such a write is asked every time, whatever the rules say"
        )


@dataclass(frozen=True, slots=True)
class Repository:
    """The git repository a directory is in: its root, and its git directories (real paths).

    For a worktree, `root` is the worktree, `main_root` the repository it belongs to, and
    `git_dirs` holds both the worktree's own git directory and the common one.
    """

    root: Path
    main_root: Path
    git_dirs: tuple[Path, ...]


def find_repository(directory: Path, read: _Read | None = None) -> Repository | None:
    """The repository `directory` is in, read from the files (no `git` is run); None if none.

    `read`, when given, gets every path the answer was resolved from and every file whose
    content it used (`safety.resolution` watches them)."""
    current = os.path.realpath(directory)
    while True:
        dot_git = os.path.join(current, GIT)
        if read is not None:
            read.paths.append(dot_git)
        if os.path.lexists(dot_git):
            return _repository_at(Path(current), Path(dot_git), read)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


@dataclass(slots=True)
class _Read:
    """What an answer was read from: paths resolved, files read."""

    paths: list[str]
    files: list[str]


def _repository_at(root: Path, dot_git: Path, read: _Read | None) -> Repository:
    if os.path.isdir(dot_git):
        real = Path(os.path.realpath(dot_git))
        return Repository(root, _main_of(real, root), (real,))
    said = gitdir_of(dot_git)
    if read is not None:
        read.files.append(str(dot_git))
    if said is None:
        return Repository(root, root, ())
    target = Path(os.path.realpath(said))
    dirs = [target]
    named = common_dir_of(target)
    if read is not None:
        read.paths.extend((str(said), str(target / "commondir"), *([str(named)] if named else [])))
        read.files.append(str(target / "commondir"))
    common = Path(os.path.realpath(named)) if named is not None else target
    if common != target:
        dirs.append(common)
    return Repository(root, _main_of(dirs[-1], root), tuple(dirs))


def _main_of(git_dir: Path, fallback: Path) -> Path:
    return git_dir.parent if git_dir.name == GIT else fallback


class _Areas:
    """The protected areas as seen from one session directory.

    `read` gets what they were read from (`find_repository`), so they can be kept while none
    of it changes (`_areas`)."""

    def __init__(self, cwd: Path, extra: Sequence[Path], read: _Read) -> None:
        self.cwd = os.path.realpath(cwd)
        read.paths.extend((str(cwd), *map(str, extra)))
        roots: dict[str, Kind] = {os.path.realpath(path): "permissions" for path in extra}
        repository = find_repository(Path(self.cwd), read)
        if repository is not None:
            for git_dir in repository.git_dirs:
                roots[str(git_dir)] = "repository"
            for base in {repository.root, repository.main_root, Path(self.cwd)}:
                links: tuple[tuple[str, Kind], ...] = ((GIT, "repository"), (OWN, "permissions"))
                for name, kind in links:
                    link = base / name
                    read.paths.append(str(link))
                    if os.path.islink(link):
                        roots[os.path.realpath(link)] = kind
        self.roots = roots

    def kind_of(self, path: str) -> Kind | None:
        """The kind of protected area `path` (absolute) is in, or None."""
        if (kind := _by_components(path)) is not None:
            return kind
        for root, root_kind in self.roots.items():
            if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
                return root_kind
        return None

    def judge(self, named: str, bases: Iterable[str]) -> Kind | None:
        """Whether the word `named`, taken from any of `bases`, is a protected path."""
        if not named or "\x00" in named:
            return None
        if (pattern_kind := _by_pattern(named)) is not None:
            return pattern_kind
        if named.startswith("~"):
            named = os.path.expanduser(named)
        for base in bases:
            joined = os.path.join(base, named)
            try:
                real = os.path.realpath(joined)
            except (OSError, ValueError):  # not a name a file can have (a lone surrogate)
                real = joined
            for path in (os.path.normpath(joined), real):
                if (kind := self.kind_of(path)) is not None:
                    return kind
        return None


_KEPT_AREAS = 64
"""Session directories whose areas are kept (the oldest goes first)."""
_kept: dict[tuple[Path, tuple[Path, ...]], tuple[_Areas, Resolution]] = {}


def _areas(cwd: Path, extra: Sequence[Path]) -> _Areas:
    """The areas seen from `cwd`: built once, and again only when a directory or file they were
    read from has changed since (`safety.resolution`: a link swapped, a `.git` made, a `gitdir:`
    rewritten between two calls is seen at the second)."""
    key = (cwd, tuple(extra))
    kept = _kept.get(key)
    if kept is not None and kept[1].valid():
        return kept[0]
    began = resolution_clock()
    read = _Read([], [])
    areas = _Areas(cwd, extra, read)
    resolved = Resolution(read.paths, read.files, since=began)
    _kept.pop(key, None)
    _kept[key] = (areas, resolved)
    while len(_kept) > _KEPT_AREAS:
        _kept.pop(next(iter(_kept)), None)
    return areas


def _by_pattern(word: str, *, dot_explicit: bool = True) -> Kind | None:
    """The kind of protected component a glob or brace word could name (see the contract).

    `dot_explicit`: the word is the shell's to expand, and the shell matches a leading `.` only
    when the pattern spells it (`*` is not `.git`); a pattern a program matches itself (`find
    -name '*it'`) may match it anyway.
    """
    if not (_GLOB & set(word)) and "{" not in word:
        return None
    for spelling in brace_spellings(word):
        for part in spelling.split("/"):
            if not part or (dot_explicit and not part.startswith(".")):
                continue
            if fnmatch.fnmatchcase(GIT, part) or part == GIT:
                return "repository"
            if fnmatch.fnmatchcase(OWN, part) or part == OWN:
                return "permissions"
    return None


def _by_components(path: str) -> Kind | None:
    parts = path.split(os.sep)
    index = 0
    while index < len(parts):
        part = parts[index]
        if part == GIT:
            return "repository"
        if part == OWN:
            # `.agent-tui/worktrees/NAME/…` is a worktree's checkout: look on inside it.
            if index + 3 < len(parts) and parts[index + 1] == WORKTREES:
                index += 3
                continue
            return "permissions"
        index += 1
    return None


def protected_change(
    tool: str, args: Mapping[str, Any], risk: Risk, cwd: Path | None, *, extra_roots: Sequence[Path] = ()
) -> ProtectedChange | None:
    """The protected paths this call would change, or None (see the module contract).

    Args:
        tool, args, risk: the call, as parsed and assessed.
        cwd: the session's directory (None: nothing is protected, there is nothing to resolve).
        extra_roots: more directories of agent-tui's own (the user's rules directory).
    """
    if cwd is None:
        return None
    if tool in FILE_WRITERS:
        path = args.get("path")
        if not isinstance(path, str):
            return None
        areas = _areas(cwd, extra_roots)
        kind = areas.judge(path, [areas.cwd])
        return ProtectedChange(kind, (path,)) if kind is not None else None
    if tool == "shell":
        cmd = args.get("cmd")
        if not isinstance(cmd, str) or risk == "read":
            return None
        return _shell_change(cmd, _areas(cwd, extra_roots))
    return None  # no other tool writes a path: its areas are not even looked at


def _shell_change(cmd: str, areas: _Areas) -> ProtectedChange | None:
    if len(cmd) > MAX_JUDGED_LINE:
        return ProtectedChange("repository", (f"a line of {len(cmd):,} characters, too long to check",))
    if cmd.count("|") > MAX_PIPES:
        return ProtectedChange("repository", (f"a line of more than {MAX_PIPES} pipes, too many to check",))
    commands = shell_commands(cmd)
    bases = [areas.cwd]
    for command in commands:
        words = [word.value for word in command.words]
        if len(words) >= 2 and os.path.basename(words[0]) == "cd":
            bases.append(os.path.join(areas.cwd, os.path.expanduser(words[1])))
    bases = list(dict.fromkeys(bases))
    names = list(dict.fromkeys(_named_words(cmd, commands)))
    if len(names) * len(bases) > _MAX_JUDGEMENTS:
        return ProtectedChange(
            "repository", (f"{len(names):,} words from {len(bases):,} directories, too many to check",)
        )
    found = _protected_named(cmd, commands, names, bases, areas)
    if not found:
        return None
    kinds = set(found.values())
    kind: Kind = "permissions" if "permissions" in kinds else "repository"
    return ProtectedChange(kind, tuple(found))


def _protected_named(
    cmd: str, commands: Sequence[Any], names: list[str], bases: list[str], areas: _Areas
) -> dict[str, Kind]:
    """What the line names that is protected (a word, a `find` pattern, a path in its text, a
    `git config`), each with its kind, in the order found."""
    found: dict[str, Kind] = {}
    for command in commands:
        words = [word.value for word in command.words]
        if words and os.path.basename(words[0]) == "find":  # find matches its own patterns
            for word in words[1:]:
                pattern_kind = _by_pattern(word, dot_explicit=False)
                if pattern_kind is not None:
                    found.setdefault(word, pattern_kind)
    for named in names:
        if any(char in _SCRIPT for char in named):
            continue  # a script in a word: its own words are among these
        for candidate in _spellings(named):
            judged = areas.judge(candidate, bases)
            if judged is not None:
                found.setdefault(named, judged)
                break
    for match in _NAMED.finditer(cmd):
        if not any(match.group() in named for named in found):
            text_kind: Kind = "repository" if match.group().startswith(GIT) else "permissions"
            found.setdefault(_token_around(cmd, match.start(), match.end()), text_kind)
    for command in commands:
        if _git_subcommand([word.value for word in command.words]) == "config":
            found.setdefault("git config", "repository")
    query = _GIT_DIR_QUERY.search(cmd)
    if query is not None:
        found.setdefault(query.group(), "repository")
    return found


def _named_words(cmd: str, commands: Sequence[Any]) -> Iterator[str]:
    """Every word a program gets and every redirection target, then the line's plain tokens
    (the parser may not list a word that follows a redirection)."""
    for command in commands:
        for word in command.words[1:]:
            yield word.value
        for redirect in command.redirects:
            if redirect.target is not None:
                yield redirect.target.value
        for assignment in command.assignments:
            yield assignment.value.value
    try:
        tokens = shlex.split(cmd, comments=False)
    except ValueError:
        tokens = cmd.split()
    for token in tokens:
        yield token.lstrip("<>&|;0123456789") if token[:1].isdigit() or token[:1] in "<>" else token


def _spellings(word: str) -> Iterator[str]:
    """The word, and the value of `--option=VALUE` / `NAME=VALUE` / `-oVALUE` forms."""
    yield word
    if "=" in word:
        yield word.split("=", 1)[1]
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        yield word[2:]


def _token_around(text: str, start: int, end: int) -> str:
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "'\"=<>;|&(":
        start -= 1
    while end < len(text) and not text[end].isspace() and text[end] not in "'\";|&)":
        end += 1
    return text[start:end]


def _git_subcommand(words: Sequence[str]) -> str | None:
    if not words or os.path.basename(words[0]) != "git":
        return None
    index = 1
    while index < len(words):
        word = words[index]
        if word in _GIT_VALUE_OPTIONS:
            index += 2
        elif word.startswith("-"):
            index += 1
        else:
            return word
    return None
