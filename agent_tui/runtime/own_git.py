"""How agent-tui runs git for itself: never a program the repository names.

Every git command agent-tui runs on its own (the turn snapshots, worktree add and remove, the
review's diffs, commit, merge, discard, rewind) goes through `git_bytes` here. The agent's own
shell commands do not: they keep the shell's rules (`engine.tools.tool_env`).

Invariants:
- no hook runs, of the repository or of the user: `core.hooksPath` is `/dev/null` (a path that can
  never hold a hook), every event of `safety.git_hooks.HOOK_EVENTS` is `hook.<event>.enabled=false` and every
  hook the config defines (`hook.<name>.command`, git 2.54) is `hook.<name>.enabled=false`, and
  the callers pass `--no-verify` where git has it;
- no program named by configuration the repository controls ever runs: its `.git/config`, its
  worktree config (`config.worktree`), and every file those include (`include.path`,
  `includeIf.*.path`: git lists what they set under the includer's scope; a conditional include's
  file is read whether its condition holds for the listing or not, since `worktree add` reads the
  config again in the new worktree, on another branch). Before each command,
  `git config --list --show-scope` is read in the same directory by a git that runs nothing, and
  every key of `PROGRAM_KEYS` set at any scope but `USER_SCOPES` is overridden for the command
  (`GIT_CONFIG_COUNT`, which beats every config file): first with its neutral value, then with
  every value the user's own config (`system`, `global`, `command`: the environment) gives it, in
  order. So the user's own driver of the same name (git-lfs in `~/.gitconfig`, the user's signing
  program) is what runs, and a name only the repository defines runs nothing: filters are
  skipped, a merge driver is git's own `merge-file`, signing uses git's default program, helpers
  and commands are emptied. A `.gitattributes` can still name a driver, but only the user's;
- set always, whatever the config says: no fsmonitor, no pager, no editor (`:`), no prompt (no
  terminal, an empty `GIT_ASKPASS`), no transport at all (`GIT_ALLOW_PROTOCOL` allows none, so a
  partial clone's lazy fetch, `ext::` URLs and upload-pack programs cannot start), no submodule
  recursion, no automatic gc or maintenance, no bare repository git was not pointed at;
- `status` never looks inside a submodule's working tree (`--ignore-submodules=dirty` is put
  first; a `submodule.<name>.ignore` of the repository cannot undo it, the command line wins):
  git would run `git status` in the submodule, under the submodule's own config, which the
  listing here does not read; what a submodule's commit changed is still seen;
- the variables that would point git at another repository (`GIT_DIR`, `GIT_WORK_TREE`,
  `GIT_INDEX_FILE`, …) or at a program (`GIT_SSH`, `GIT_EXTERNAL_DIFF`, `SSH_ASKPASS`, …) are
  taken from the caller's `env` only, never inherited;
- the working tree is where the repository's `.git` is: a `core.worktree` of the repository's
  config that names another folder (`$HOME`, whose `~/.ssh` a snapshot would copy into the
  repository's objects) is a `GitError`; a submodule's, whose working tree has a `.git` file
  that points back, is kept;
- a config that cannot be read is a `GitError` (the command is not run); every failure is a
  `GitError` in git's own words, never a traceback.

Why this design: git has no switch that ignores the repository's config (it holds the object
format, the worktree, the extensions), and `-c`/`GIT_CONFIG_COUNT` can override a key but not
delete one, so the keys that name programs are overridden one by one, with values that are
tested to run nothing (an empty filter is skipped; an empty merge driver would fail the merge,
hence `merge-file`). The listing and the command are two processes: a config file changed in the
milliseconds between them is read by the command with the old overrides. `diff` callers also pass
`--no-ext-diff --no-textconv`, which covers diff drivers whatever the config.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from agent_tui.engine.tools.shell_setup import ShellSetup
from agent_tui.engine.tools.tool_env import shell_environment
from agent_tui.safety.git_hooks import HOOK_EVENTS, gitdir_of

__all__ = ["ALWAYS", "GIT_TIMEOUT", "PROGRAM_KEYS", "GitError", "git", "git_bytes", "own_git_environment"]

GIT_TIMEOUT = 60.0
MAX_INCLUDED_FILES = 64
"""How many conditionally included files are read for one command (git stops at a depth of 10)."""
NO_HOOKS_DIR = os.devnull
MERGE_FILE = "git merge-file --marker-size=%L %A %O %B"
"""A merge driver that is git's own three-way text merge (what a driver-less file gets)."""

ALWAYS: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", NO_HOOKS_DIR),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("safe.bareRepository", "explicit"),
)
"""Config every own git command gets, whatever any config file says."""

PROGRAM_KEYS: tuple[tuple[str, str], ...] = (
    # (pattern on the key as git lists it, lower-cased; the neutral value)
    ("core.askpass", ""),
    ("core.sshcommand", ""),
    ("core.gitproxy", ""),
    ("core.alternaterefscommand", ""),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.hookspath", NO_HOOKS_DIR),
    ("pager.*", "false"),
    ("diff.external", ""),
    ("diff.*.command", ""),
    ("diff.*.textconv", ""),
    ("diff.tool", ""),
    ("diff.guitool", ""),
    ("difftool.*.cmd", ""),
    ("difftool.*.path", ""),
    ("filter.*.clean", ""),
    ("filter.*.smudge", ""),
    ("filter.*.process", ""),
    ("filter.*.required", "false"),
    ("merge.*.driver", MERGE_FILE),
    ("merge.tool", ""),
    ("merge.guitool", ""),
    ("mergetool.*.cmd", ""),
    ("mergetool.*.path", ""),
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.ssh.defaultkeycommand", ""),
    ("credential.helper", ""),
    ("credential.*.helper", ""),
    ("remote.*.uploadpack", "git-upload-pack"),
    ("remote.*.receivepack", "git-receive-pack"),
    ("remote.*.vcs", ""),
    ("remote.*.proxy", ""),
    ("protocol.allow", "never"),
    ("protocol.*.allow", "never"),
    ("uploadpack.packobjectshook", ""),
    ("gc.recentobjectshook", ""),
    ("imap.tunnel", ""),
    ("help.browser", ""),
    ("instaweb.browser", ""),
    ("hook.*.command", ""),
    ("hook.*.event", ""),
    ("submodule.*.update", "checkout"),
    ("submodule.recurse", "false"),
    ("trailer.*.command", ""),
    ("trailer.*.cmd", ""),
    ("interactive.difffilter", ""),
    ("web.browser", ""),
    ("browser.*.cmd", ""),
    ("browser.*.path", ""),
    ("man.*.cmd", ""),
    ("man.*.path", ""),
    ("guitool.*.cmd", ""),
    ("sendemail.smtpserver", ""),
    ("sendemail.sendmailcmd", ""),
    ("sendemail.tocmd", ""),
    ("sendemail.cccmd", ""),
    ("sendemail.headercmd", ""),
)
"""Keys whose value is a program git runs (or that let one run), with the value that runs none.
A pattern's `*` is a subsection (a driver's, a remote's, a URL's name)."""

SAME_SETTING: tuple[frozenset[str], ...] = (frozenset({"gpg.program", "gpg.openpgp.program"}),)
"""Keys that set one thing (the last one read wins, whichever of them it is)."""

NO_HOOK_EVENTS = tuple((f"hook.{event}.enabled", "false") for event in HOOK_EVENTS)

USER_SCOPES = frozenset({"system", "global", "command"})
"""Scopes of config the user controls; every other one (`local`, `worktree`, and any scope a
later git may add) is taken as the repository's."""

_NOT_INHERITED = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
        "GIT_ATTR_SOURCE",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXTERNAL_DIFF",
        "GIT_PROXY_COMMAND",
    }
)
"""Inherited variables that point git elsewhere or at a program; only the caller's `env` sets them."""

_FIXED: Mapping[str, str] = {
    "GIT_ASKPASS": "",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
}


class GitError(Exception):
    """git could not do it; the message says what git said."""


def git_bytes(
    directory: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git -C directory ARGS` the hardened way (see the module contract); raw bytes out.

    Args:
        directory: where git runs (`-C`).
        args: git's arguments.
        env: variables for this command (`GIT_INDEX_FILE` of a snapshot), over the hardened ones.
        check: raise when git fails.
        input: bytes for git's stdin (default: none).

    Raises:
        GitError: git is missing, took too long, the config could not be read, or (with `check`)
            git failed.
    """
    environment = own_git_environment(directory, env)
    if args[:1] == ("status",):
        args = ("status", "--ignore-submodules=dirty", *args[1:])
    done = _run(directory, args, environment, input)
    if check and done.returncode != 0:
        raise GitError(_said(done) or f"git {args[0]} failed ({done.returncode})")
    return done


def git(directory: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """`git -C directory ARGS`'s output as text, stripped (see `git_bytes`)."""
    return git_bytes(directory, *args, env=env).stdout.decode("utf-8", "replace").strip()


def own_git_environment(directory: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for one own git command in `directory` (see the module contract).

    Raises:
        GitError: git is missing, or the config could not be read (git's words).
    """
    base = _base_environment(env)
    listing = _run(directory, ("config", "--list", "--show-scope", "-z"), base, None)
    if listing.returncode != 0:
        said = _said(listing)
        if "not a git repository" not in said and "cannot change to" not in said:
            raise GitError(f"git could not read the config: {said or listing.returncode}")
    listed = listing.stdout + _conditionally_included(directory, base, listing.stdout)
    _check_worktree(directory, base, listed)
    _append_config(base, [*program_overrides(listed), *ALWAYS, *NO_HOOK_EVENTS])  # these win
    return base


def _check_worktree(directory: Path, environment: Mapping[str, str], listing: bytes) -> None:
    """Refuse a working tree the repository's config moved away from its `.git`.

    `core.worktree` in the repository's config can make any folder the working tree (`$HOME`,
    by `../../..`): a snapshot's `add -A` would copy its files (`~/.ssh`) into the repository's
    objects, a merge or a rewind would write there. Git sets it itself only for a submodule,
    whose working tree holds a `.git` file that points back at the git directory; so the working
    tree is taken only when its `.git` is the repository's own.

    Raises:
        GitError: the working tree's `.git` is not the repository's git directory.
    """
    if not any(
        scope not in USER_SCOPES and name.lower() == "core.worktree" for scope, name, _ in _entries(listing)
    ):
        return
    asked = ("rev-parse", "--path-format=absolute", "--show-toplevel", "--absolute-git-dir")
    found = _run(directory, asked, environment, None)
    lines = found.stdout.decode("utf-8", "surrogateescape").splitlines()
    if found.returncode != 0 or len(lines) != 2:
        raise GitError(f"git could not find the working tree: {_said(found) or found.returncode}")
    top, git_dir = Path(lines[0]), Path(lines[1])
    if not _points_at(top / ".git", git_dir):
        raise GitError(
            f"the repository's config sets core.worktree to {top}, a folder whose .git is not "
            f"the repository's ({git_dir}): agent-tui runs no git there"
        )


def _points_at(dot_git: Path, git_dir: Path) -> bool:
    """Whether `dot_git` (a folder, or a `gitdir:` file) is the git directory `git_dir`."""
    try:
        if dot_git.is_symlink():
            return False
        if dot_git.is_dir():
            return dot_git.samefile(git_dir)
        said = gitdir_of(dot_git)
        return said is not None and said.samefile(git_dir)
    except OSError:
        return False


def _conditionally_included(directory: Path, environment: Mapping[str, str], listing: bytes) -> bytes:
    """What every file of the repository's `includeIf.*.path` sets, whether its condition holds
    here or not, listed as the `local` scope (`-z` records of `git config --list --show-scope`).

    A condition is tested by each git process: `worktree add` checks out in the new worktree, on
    the agent's branch, where an `onbranch:` or `gitdir:` that failed for the listing holds. Files
    those files include (`include.path` and `includeIf` again) are followed to git's own depth.
    """
    if not any(
        scope not in USER_SCOPES and name.lower().startswith("includeif.") and name.lower().endswith(".path")
        for scope, name, _ in _entries(listing)
    ):
        return b""  # the common case: no second listing
    origins = _run(directory, ("config", "--list", "--show-scope", "--show-origin", "-z"), environment, None)
    pending = [
        (origin, value)
        for scope, origin, name, value in _origin_entries(origins.stdout)
        if scope not in USER_SCOPES
        and name.lower().startswith("includeif.")
        and name.lower().endswith(".path")
    ]
    top = _run(directory, ("rev-parse", "--show-toplevel"), environment, None)
    # git lists a file of the repository by its path from the top of the working tree
    anchor = Path(top.stdout.decode("utf-8", "surrogateescape").strip() or directory.absolute())
    seen: set[Path] = set()
    found = b""
    while pending and len(seen) < MAX_INCLUDED_FILES:
        origin, value = pending.pop()
        file = _included_path(anchor, origin, value)
        if file is None or file in seen:
            continue
        seen.add(file)
        arguments = (
            "config",
            "--list",
            "--show-scope",
            "--show-origin",
            "--includes",
            "-z",
            "--file",
            str(file),
        )
        read = _run(directory, arguments, environment, None)
        for _, inner_origin, name, inner_value in _origin_entries(read.stdout):
            found += b"local\0" + f"{name}\n{inner_value}".encode("utf-8", "surrogateescape") + b"\0"
            if name.lower().startswith("includeif.") and name.lower().endswith(".path"):
                pending.append((inner_origin, inner_value))
    return found


def _included_path(anchor: Path, origin: str, value: str) -> Path | None:
    """The file an include's `value` names, as git resolves it from the file `origin` names (a
    relative `origin` is from `anchor`, the top of the working tree)."""
    if not origin.startswith("file:") or not value:
        return None
    if value.startswith("~/"):
        return Path(value).expanduser()
    if value.startswith("%(prefix)/"):
        return None  # git's install prefix: the user's, not the repository's
    including = anchor / origin.removeprefix("file:")
    return including.parent / value


def _origin_entries(listing: bytes) -> list[tuple[str, str, str, str]]:
    """`(scope, origin, key, value)` of each `--show-scope --show-origin -z` record."""
    records = listing.split(b"\0")
    entries: list[tuple[str, str, str, str]] = []
    for scope, origin, record in zip(records[0::3], records[1::3], records[2::3], strict=False):
        name, _, value = record.decode("utf-8", "surrogateescape").partition("\n")
        entries.append(
            (scope.decode("ascii", "replace"), origin.decode("utf-8", "surrogateescape"), name, value)
        )
    return entries


def program_overrides(listing: bytes) -> list[tuple[str, str]]:
    """The settings that take away what the repository's config names (see the module contract).

    Args:
        listing: `git config --list --show-scope -z` output.
    """
    entries = _entries(listing)
    repository = {
        name for scope, name, _ in entries if scope not in USER_SCOPES and _neutral(name) is not None
    }
    overrides: list[tuple[str, str]] = []
    for name in sorted(repository):
        overrides.append((name, _neutral(name) or ""))
        folded = name.lower()
        overrides += [
            (name, value)
            for scope, other, value in entries
            if scope in USER_SCOPES and other.lower() == folded
        ]
    hooks = sorted(
        {name.rsplit(".", 1)[0] for _, name, _ in entries if fnmatchcase(name.lower(), "hook.*.command")}
    )
    overrides += [(f"{hook}.enabled", "false") for hook in hooks]  # ours run no hook, the user's neither
    for group in SAME_SETTING:
        users = [
            (name, value) for scope, name, value in entries if scope in USER_SCOPES and name.lower() in group
        ]
        if users and any(name.lower() in group for name in repository):
            overrides.append(users[-1])  # the user's own last word, as without the repository's
    return overrides


def _neutral(name: str) -> str | None:
    folded = name.lower()
    return next((value for pattern, value in PROGRAM_KEYS if fnmatchcase(folded, pattern)), None)


def _entries(listing: bytes) -> list[tuple[str, str, str]]:
    """`(scope, key, value)` of each entry (a key listed without `=` has the value "")."""
    records = listing.split(b"\0")
    entries: list[tuple[str, str, str]] = []
    for scope, record in zip(records[0::2], records[1::2], strict=False):
        name, _, value = record.decode("utf-8", "surrogateescape").partition("\n")
        entries.append((scope.decode("ascii", "replace"), name, value))
    return entries


def _base_environment(env: Mapping[str, str] | None) -> dict[str, str]:
    environment = shell_environment(ShellSetup())  # no keys, no pager, no optional locks
    for name in _NOT_INHERITED | {"SSH_ASKPASS"}:
        environment.pop(name, None)
    environment.update(_FIXED)
    _append_config(environment, [*ALWAYS, *NO_HOOK_EVENTS])
    if env:
        environment.update(env)
    return environment


def _append_config(environment: dict[str, str], settings: Sequence[tuple[str, str]]) -> None:
    """Add `settings` after the `GIT_CONFIG_KEY_n` already there (the last one of a key wins)."""
    count = int(environment["GIT_CONFIG_COUNT"])  # set (and made valid) by shell_environment
    for offset, (key, value) in enumerate(settings):
        environment[f"GIT_CONFIG_KEY_{count + offset}"] = key
        environment[f"GIT_CONFIG_VALUE_{count + offset}"] = value
    environment["GIT_CONFIG_COUNT"] = str(count + len(settings))


def _run(
    directory: Path, args: tuple[str, ...], environment: Mapping[str, str], input: bytes | None
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "--no-pager", "-C", str(directory), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            env=environment,
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT:.0f} s") from None


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    said = done.stderr.decode("utf-8", "replace") or done.stdout.decode("utf-8", "replace")
    return " ".join(said.split())
