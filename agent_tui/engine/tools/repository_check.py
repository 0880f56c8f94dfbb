"""Whether the repository git finds from a directory has config that makes git run programs.

The shell classifier judges text; a repository's own config can still make `git status` or
`git diff` run a program (`core.fsmonitor`, `diff.X.textconv`, `filter.X.clean`, …), and that
config may come with the repository (a copied tree, a tarball) or from the agent. This is the
look the shell tool gives the classifier (`agent_tui.safety.RepositoryCheck`) before a `read`:

1. find the repositories git could use from the session's directory, the way git does: walking
   up, a `.git` directory or `gitdir:` file, or a directory that is itself a bare repository
   (every candidate up to the first real `.git` directory, so a misjudged candidate never hides
   the repository git really uses);
2. read each one's config files (`config` of the common directory, `config.worktree`, and every
   file named by `include.path` or `includeIf.*.path`, whatever the condition) with git's own
   parser, `git config --file FILE --no-includes --null --list`, run outside any repository;
3. look at the hooks directory (`core.hooksPath` or `hooks/`): an executable hook that a read
   can trigger (`post-index-change`: `git diff` and `git status` rewrite the index to refresh
   its stat cache, and then run it) is a reason;
4. do the same for the submodules git looks into (`modules/` of the git directory, the paths of
   `.gitmodules`, and every gitlink of the index).

Invariants:
- read-only: nothing here writes, and git is never run inside the repository being judged;
- on proof: the config is harmless only when every key is on the harmless list below; a key
  that names a program gives "the repository's config can run commands (core.fsmonitor)", any
  other key not known to be harmless, a file that cannot be read, or more files than the bound
  gives a reason too, so the command is asked;
- it never raises: a look that fails is a reason ("the repository cannot be checked (…)");
- bounded: at most `_MAX_FILES` config files, `_MAX_DEPTH` levels of includes and submodules,
  files of at most `_MAX_BYTES`, and a time limit on each git run.
"""

from __future__ import annotations

import os
import struct
import subprocess
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from agent_tui.safety import RepositoryCheck
from agent_tui.safety.git_hooks import WRITE_ONLY_HOOKS, common_dir_of, gitdir_of

__all__ = ["repository_check", "repository_config_risk"]

_MAX_FILES = 64
_MAX_DEPTH = 6
_MAX_BYTES = 1 << 20
_MAX_INDEX_BYTES = 64 << 20
_GIT_TIMEOUT_S = 10.0

# Keys whose value is a program git runs, or that make git run one (gpg, a pager, a helper).
# Patterns are matched on `section.subsection.key` as git lists it (section and key lowercase).
COMMAND_KEYS = (
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.sshcommand",
    "core.gitproxy",
    "core.alternaterefscommand",
    "pager.*",
    "diff.external",
    "diff.*.command",
    "diff.*.textconv",
    "filter.*",
    "merge.*.driver",
    "difftool.*",
    "mergetool.*",
    "sequence.editor",
    "gpg.program",
    "gpg.*.program",
    "gpg.ssh.defaultkeycommand",
    "log.showsignature",
    "format.pretty",
    "pretty.*",
    "credential.helper",
    "credential.*.helper",
    "interactive.difffilter",
    "web.browser",
    "browser.*",
    "man.*",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.vcs",
    "remote.*.promisor",
    "extensions.partialclone",
    "submodule.*.update",
    "uploadpack.packobjectshook",
    "trailer.*",
    "alias.*",
    "sendemail.*",
    "include.*",
    "includeif.*",
)

# Keys known not to make git run anything; everything else is "not known to be harmless".
HARMLESS_KEYS = (
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.quotepath",
    "core.abbrev",
    "core.compression",
    "core.loosecompression",
    "core.bigfilethreshold",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.splitindex",
    "core.untrackedcache",
    "core.commentchar",
    "core.commentstring",
    "core.whitespace",
    "core.preloadindex",
    "core.checkstat",
    "core.trustctime",
    "core.fscache",
    "core.longpaths",
    "core.multipackindex",
    "core.commitgraph",
    "core.excludesfile",
    "core.attributesfile",
    "core.worktree",
    "core.fsyncmethod",
    "core.fsync",
    "extensions.worktreeconfig",
    "extensions.objectformat",
    "extensions.refstorage",
    "extensions.preciousobjects",
    "core.hookspath",  # hooks run on commits, merges and checkouts, never on the reads
    # Sections whose every command-running key is in COMMAND_KEYS (checked first).
    "remote.*",
    "branch.*",
    "user.*",
    "author.*",
    "committer.*",
    "submodule.*",
    "diff.*",
    "merge.*",
    "log.*",
    "pull.*",
    "push.*",
    "fetch.*",
    "init.*",
    "rebase.*",
    "commit.*",
    "tag.*",
    "lfs.repositoryformatversion",
    "lfs.url",
    "lfs.*.access",
    "lfs.locksverify",
    "color.*",
    "column.*",
    "status.*",
    "gui.*",
    "i18n.*",
    "advice.*",
    "rerere.*",
    "feature.*",
    "index.*",
    "pack.*",
    "gc.*",
    "protocol.version",
    "blame.date",
    "blame.coloring",
    "blame.markignoredlines",
    "blame.markunblamablelines",
    "blame.showemail",
    "grep.linenumber",
    "grep.column",
    "grep.patterntype",
    "grep.extendedregexp",
    "grep.fullname",
    "grep.threads",
    "receive.denycurrentbranch",
    "worktree.guessremote",
    "checkout.defaultremote",
    "maintenance.auto",
    "maintenance.strategy",
)


@dataclass(slots=True)
class _Look:
    """One look at a repository: the files read so far and the first reason found."""

    files: int = 0
    reason: str | None = None
    seen: set[str] = field(default_factory=set)


def repository_check(cwd: Path) -> RepositoryCheck:
    """The check the classifier calls (lazily) for a line of git reads run in `cwd`."""
    return lambda: repository_config_risk(cwd)


def repository_config_risk(cwd: Path) -> str | None:
    """Why git run in `cwd` could run a program because of a repository's config, or None."""
    look = _Look()
    try:
        environment_dir = os.environ.get("GIT_DIR")
        candidates = [(Path(environment_dir), None)] if environment_dir else _candidates(Path(cwd))
        for git_dir, work_tree in candidates:
            _repository(look, git_dir, work_tree, depth=0, what="the repository's config")
            if look.reason is not None:
                return look.reason
    except (OSError, ValueError) as error:
        return f"the repository cannot be checked ({error})"
    return None


def _candidates(cwd: Path) -> list[tuple[Path, Path | None]]:
    """The git directories git could use from `cwd` (with their work trees), nearest first."""
    found: list[tuple[Path, Path | None]] = []
    try:
        here = cwd.resolve()
    except OSError:
        return found
    for directory in (here, *here.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            found.append((dot_git, directory))
            if _looks_like_git_dir(dot_git):
                return found  # git stops here
        elif dot_git.is_file():
            target = gitdir_of(dot_git)
            found.append((target if target is not None else dot_git, directory))
            return found  # git uses it, or stops with an error
        if _looks_like_git_dir(directory):
            found.append((directory, None))  # a bare repository (unless safe.bareRepository)
    return found


def _looks_like_git_dir(path: Path) -> bool:
    """Looser than git's own test (HEAD, and `objects` and `refs` it can enter; git takes an
    executable file for either), so every directory git could use is looked at."""
    return (path / "HEAD").exists() and ((path / "objects").exists() or (path / "refs").exists())


def _repository(look: _Look, git_dir: Path, work_tree: Path | None, depth: int, what: str) -> None:
    if look.reason is not None or depth > _MAX_DEPTH:
        return
    key = str(git_dir)
    if key in look.seen:
        return
    look.seen.add(key)
    common = common_dir_of(git_dir) or git_dir
    files = [common / "config", git_dir / "config.worktree", common / "config.worktree"]
    values: dict[str, str] = {}
    for path in dict.fromkeys(files):
        if path.exists():
            values.update(_config_file(look, path, depth, what))
    worktree = values.get("core.worktree")
    if worktree and work_tree is None:
        work_tree = Path(worktree) if Path(worktree).is_absolute() else git_dir / worktree
    if look.reason is not None:
        return
    hooks = values.get("core.hookspath")
    if hooks:
        hooks_dir = Path(os.path.expanduser(hooks))
        hooks_dir = hooks_dir if hooks_dir.is_absolute() else (work_tree or git_dir) / hooks_dir
    else:
        hooks_dir = common / "hooks"
    hook = _hook_run_by_reads(hooks_dir)
    if hook is not None:
        where = "the repository" if what.startswith("the repository") else "a submodule"
        look.reason = f"{where} has a hook git may run on a read ({hook})"
        return
    _submodules(look, common, work_tree, depth)


def _hook_run_by_reads(hooks_dir: Path) -> str | None:
    try:
        names = sorted(os.listdir(hooks_dir))
    except OSError:
        return None  # no hooks directory: git runs no hook
    for name in names:
        if name.endswith(".sample") or name in WRITE_ONLY_HOOKS:
            continue
        path = hooks_dir / name
        if path.is_file() and os.access(path, os.X_OK):
            return name
    return None


def _config_file(look: _Look, path: Path, depth: int, what: str) -> dict[str, str]:
    """Judge one config file and the files it includes; return its values (last one wins)."""
    values: dict[str, str] = {}
    if look.reason is not None:
        return values
    look.files += 1
    if look.files > _MAX_FILES or depth > _MAX_DEPTH:
        look.reason = f"{what} includes too many files to check"
        return values
    entries = _list_config(path)
    if entries is None:
        look.reason = f"{what} cannot be read ({path})"
        return values
    for name, value in entries:
        values[name] = value
        if name == "include.path" or (name.startswith("includeif.") and name.endswith(".path")):
            included = Path(os.path.expanduser(value))
            included = included if included.is_absolute() else path.parent / included
            if included.exists():
                values.update(_config_file(look, included, depth + 1, what))
            if look.reason is not None:
                return values
            continue
        if any(fnmatchcase(name, pattern) for pattern in COMMAND_KEYS):
            look.reason = f"{what} can run commands ({name})"
            return values
        if not any(fnmatchcase(name, pattern) for pattern in HARMLESS_KEYS):
            look.reason = f"{what} sets `{name}`, which is not known to be harmless"
            return values
    return values


def _list_config(path: Path) -> list[tuple[str, str]] | None:
    """`git config --file PATH --list`, parsed by git itself, outside any repository."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
    except OSError:
        return None
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.devnull,
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CEILING_DIRECTORIES": "/",
    }
    try:
        done = subprocess.run(
            ["git", "config", "--file", str(path), "--no-includes", "--null", "--list"],
            cwd="/",
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    entries = []
    for record in done.stdout.split(b"\0"):
        if not record:
            continue
        name, _, value = record.partition(b"\n")
        entries.append((name.decode("utf-8", "replace"), value.decode("utf-8", "replace")))
    return entries


def _submodules(look: _Look, common: Path, work_tree: Path | None, depth: int) -> None:
    """Judge the config of every submodule git could look into from this repository."""
    what = "a submodule's config"
    modules = common / "modules"
    if modules.is_dir():
        for directory, subdirectories, names in os.walk(modules):
            if "config" in names and look.reason is None:
                _repository(look, Path(directory), None, depth + 1, what)
            subdirectories[:] = sorted(set(subdirectories) - _NOT_MODULES)
            if look.reason is not None:
                return
    if work_tree is None:
        return
    paths: list[str] = []
    gitmodules = work_tree / ".gitmodules"
    if gitmodules.exists():
        entries = _list_config(gitmodules)
        if entries is None:
            look.reason = f"the repository's .gitmodules cannot be read ({gitmodules})"
            return
        paths += [
            value for name, value in entries if name.startswith("submodule.") and name.endswith(".path")
        ]
    links = _gitlinks(common / "index")
    if links is None:
        look.reason = f"the repository's index cannot be checked for submodules ({common / 'index'})"
        return
    paths += links
    for relative in dict.fromkeys(paths):
        dot_git = work_tree / relative / ".git"
        git_dir = gitdir_of(dot_git) if dot_git.is_file() else dot_git if dot_git.is_dir() else None
        if git_dir is not None:
            _repository(look, git_dir, work_tree / relative, depth + 1, what)
        if look.reason is not None:
            return


_NOT_MODULES = frozenset({"objects", "refs", "logs", "hooks", "info", "lfs", "worktrees"})
_GITLINK = 0o160000
_TYPE_MASK = 0o170000


def _gitlinks(index: Path) -> list[str] | None:
    """The paths of the index's gitlinks (submodules); [] without an index, None if unreadable."""
    try:
        if not index.exists():
            return []
        if not index.is_file() or index.stat().st_size > _MAX_INDEX_BYTES:
            return None
        data = index.read_bytes()
    except OSError:
        return None
    try:
        return _parse_gitlinks(data)
    except (struct.error, ValueError, IndexError):
        return None


def _parse_gitlinks(data: bytes) -> list[str] | None:
    if data[:4] != b"DIRC":
        return None
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        return None
    position = 12
    previous = b""
    links: list[str] = []
    for _ in range(count):
        mode = struct.unpack_from(">I", data, position + 24)[0]
        flags = struct.unpack_from(">H", data, position + 60)[0]
        name_at = position + 62 + (2 if version >= 3 and flags & 0x4000 else 0)
        if version == 4:
            strip, name_at = _varint(data, name_at)
            end = data.index(b"\0", name_at)
            if strip > len(previous):
                return None
            name = previous[: len(previous) - strip] + data[name_at:end]
            position = end + 1
        else:
            end = data.index(b"\0", name_at)
            name = data[name_at:end]
            position += (end - position + 8) & ~7
        if mode & _TYPE_MASK == _GITLINK:
            links.append(name.decode("utf-8", "surrogateescape"))
        previous = name
    while position + 8 <= len(data) - 20:
        signature = data[position : position + 4]
        if not signature.isalpha():
            break
        if signature == b"link":
            return None  # a split index: the entries live in another file
        size = struct.unpack_from(">I", data, position + 4)[0]
        position += 8 + size
    return links


def _varint(data: bytes, position: int) -> tuple[int, int]:
    byte = data[position]
    value = byte & 0x7F
    position += 1
    while byte & 0x80:
        byte = data[position]
        value = ((value + 1) << 7) | (byte & 0x7F)
        position += 1
    return value, position
