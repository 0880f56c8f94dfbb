"""git: which subcommands and options only read, and what the others do.

The option tables live in `git_options`; this module applies them: global options first, then
the subcommand's own rule.

Invariants:
- `git` is `read` only for a read-only subcommand whose every option is listed in `git_options`, with no
  global option that changes what runs (`-c`, `--config-env`, `--exec-path`, `-p`) or which
  repository git uses (`-C`, `--git-dir`, `--work-tree`, `--bare`: another repository brings
  its own config, which can name programs to run), and no format that makes git run gpg
  (`%G…`, `--show-signature`);
- the text alone cannot show what the repository's own config runs: the classifier's caller may
  pass a check of the repository (`shell_risk.RepositoryCheck`), see `assess_shell`;
- options that write (`--output`), run programs (`--ext-diff`, `--textconv`, `-O`, `--filters`)
  or open the manual in a pager (`--help`) carry their own risk;
- `git branch NAME`, `git tag NAME`, `git config NAME VALUE` change the repository: `write`;
  `git reset --hard` or `git reset COMMIT` is `destructive`, a bare `git reset` `write`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent_tui.events.model import Risk
from agent_tui.safety.assessment import RiskAssessment, worst
from agent_tui.safety.git_options import BRANCH, CONFIG, DIFF, GLOBAL, LOG, READ_ONLY, RESET, TAG
from agent_tui.safety.options import OptionTable, Scan, scan

__all__ = ["git_assessment"]

_RUNS_GPG = re.compile(r"%G|%\(signature")  # format placeholders git fills in by running gpg


def git_assessment(args: list[str]) -> tuple[RiskAssessment, str]:
    """The risk of `git ARGS` (all words literal) and the label `git SUBCOMMAND`."""
    found = scan(args, GLOBAL, permute=False)
    findings = _findings("git", found)
    if found.dashdash:
        findings.append(RiskAssessment("execute", "`git --` before the command is not judged"))
    if not found.operands:
        return worst(findings) or RiskAssessment("read", "`git` only prints its version or help"), "git"
    sub, rest = found.operands[0], found.operands[1:]
    label = f"git {sub}"
    if any(use.option.spelling == "--help" for use in found.used):
        findings.append(RiskAssessment("execute", f"`git --help {sub}` opens the manual in a pager"))
    table = READ_ONLY.get(sub)
    if table is not None:
        findings.extend(_findings(label, scan(rest, table)))
        return worst(findings) or RiskAssessment("read", f"`{label}` only reads"), label
    rule = _SUBCOMMANDS.get(sub)
    if rule is None:
        findings.append(RiskAssessment("execute", f"`{label}` is not a known git command"))
    elif isinstance(rule, RiskAssessment):
        findings.append(rule)
    else:
        findings.append(rule(label, rest))
    return worst(findings) or RiskAssessment("read", f"`{label}` only reads"), label


def _findings(label: str, found: Scan) -> list[RiskAssessment]:
    findings = found.findings(label)
    for use in found.used:
        if use.option.spelling in ("--format", "--pretty") and use.value and _RUNS_GPG.search(use.value):
            findings.append(RiskAssessment("execute", f"`{label} {use.written}=%G…` runs gpg"))
    return findings


# -- subcommands that are not plainly read-only ---------------------------------------------------

_LISTING_FLAGS = frozenset({"-l", "--list"})


def _lists_or_creates(noun: str, table: OptionTable) -> Callable[[str, list[str]], RiskAssessment]:
    """`git branch` and `git tag`: a NAME creates one; without one, or with `--list`, they list."""

    def rule(label: str, args: list[str]) -> RiskAssessment:
        found = scan(args, table)
        if (risky := worst(_findings(label, found))) is not None:
            return risky
        listing = any(use.option.spelling in _LISTING_FLAGS for use in found.used)
        if found.operands and not listing:
            return RiskAssessment("write", f"`{label} NAME` creates a {noun}")
        if found.dashdash:
            return RiskAssessment("execute", f"`{label} --list --` is not judged")
        return RiskAssessment("read", f"`{label}` lists {noun}s")

    return rule


def _config(label: str, args: list[str]) -> RiskAssessment:
    found = scan(args, CONFIG)
    if (risky := worst(_findings(label, found))) is not None:
        return risky
    action = found.operands[0] if found.operands else ""
    if action in ("get", "list"):
        return RiskAssessment("read", f"`{label} {action}` only reads")
    if action in ("set", "unset", "rename-section", "remove-section"):
        return RiskAssessment("write", f"`{label} {action}` changes the configuration")
    if action == "edit":
        return RiskAssessment("execute", f"`{label} edit` opens an editor")
    reading = any(
        use.option.spelling.startswith("--get") or use.option.spelling in _LISTING_FLAGS for use in found.used
    )
    if reading or len(found.operands) <= 1:
        return RiskAssessment("read", f"`{label}` only reads")
    return RiskAssessment("write", f"`{label} NAME VALUE` changes the configuration")


def _reset(label: str, args: list[str]) -> RiskAssessment:
    found = scan(args, RESET)
    if (risky := worst(_findings(label, found))) is not None:
        return risky
    if found.before_dashdash:
        return RiskAssessment("destructive", f"`{label} COMMIT` moves the branch (and may drop commits)")
    return RiskAssessment("write", f"`{label}` unstages changes")


_REMOTE_WRITES = frozenset({"add", "rename", "remove", "rm", "set-url", "set-head", "set-branches"})


def _remote(label: str, args: list[str]) -> RiskAssessment:
    positionals = [arg for arg in args if not arg.startswith("-")]
    options = {arg for arg in args if arg.startswith("-")}
    action = positionals[0] if positionals else ""
    if action in _REMOTE_WRITES:
        return RiskAssessment("write", f"`{label} {action}` changes the remotes")
    if action in ("prune", "update"):
        return RiskAssessment("network", f"`{label} {action}` contacts the remote")
    if any(word in _REMOTE_WRITES or word in ("prune", "update") for word in positionals[1:]):
        return RiskAssessment(
            "execute", f"`{label} {' '.join(args)}`: a remote named like an action is not judged"
        )
    if action == "" and options <= {"-v", "--verbose"}:
        return RiskAssessment("read", f"`{label}` lists remotes")
    if action == "get-url" and options <= {"--push", "--all"}:
        return RiskAssessment("read", f"`{label} get-url` only reads")
    if action == "show" and options == {"-n"}:
        return RiskAssessment("read", f"`{label} show -n` only reads")
    if action == "show":
        return RiskAssessment("network", f"`{label} show` contacts the remote")
    return RiskAssessment("execute", f"`{label} {' '.join(args)}` is not judged")


_FORCE_PUSH = frozenset(
    {"--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--prune"}
)


def _push(label: str, args: list[str]) -> RiskAssessment:
    for arg in args:
        short_force = arg[:1] == "-" and arg[1:2] != "-" and bool(set(arg[1:]) & {"f", "d"})
        if short_force or arg.split("=", 1)[0] in _FORCE_PUSH:
            return RiskAssessment("destructive", f"`{label} {arg}` overwrites or deletes remote history")
        if arg.startswith(("+", ":")):
            return RiskAssessment("destructive", f"`{label} {arg}` overwrites or deletes remote history")
    return RiskAssessment("network", f"`{label}` sends commits to a remote")


def _checkout(label: str, args: list[str]) -> RiskAssessment:
    if any(arg in ("-b", "--orphan") for arg in args) and "-f" not in args and "--force" not in args:
        return RiskAssessment("write", f"`{label} -b` creates a branch")
    return RiskAssessment("destructive", f"`{label}` may overwrite files in the working tree")


def _switch(label: str, args: list[str]) -> RiskAssessment:
    if any(arg in ("-f", "-C", "--force", "--discard-changes", "--force-create") for arg in args):
        return RiskAssessment("destructive", f"`{label}` discards changes or overwrites a branch")
    return RiskAssessment("write", f"`{label}` changes the current branch")


def _restore(label: str, args: list[str]) -> RiskAssessment:
    staged = any(arg in ("-S", "--staged") for arg in args)
    worktree = any(arg in ("-W", "--worktree") for arg in args)
    if staged and not worktree:
        return RiskAssessment("write", f"`{label} --staged` unstages changes")
    return RiskAssessment("destructive", f"`{label}` discards changes in the working tree")


def _action(args: list[str]) -> tuple[str, list[str]]:
    """The first word that is not an option, and the other words."""
    for index, arg in enumerate(args):
        if not arg.startswith("-"):
            return arg, args[:index] + args[index + 1 :]
    return "", args


def _reads_with(label: str, args: list[str], table: OptionTable) -> RiskAssessment:
    return worst(_findings(label, scan(args, table))) or RiskAssessment("read", f"`{label}` only reads")


def _stash(label: str, args: list[str]) -> RiskAssessment:
    action, rest = _action(args)
    if action == "list":
        return _reads_with(f"{label} list", rest, LOG)
    if action == "show":
        return _reads_with(f"{label} show", rest, DIFF)
    if action in ("drop", "clear"):
        return RiskAssessment("destructive", f"`{label} {action}` deletes stashed changes")
    return RiskAssessment("write", f"`{label}` changes the working tree")


def _reflog(label: str, args: list[str]) -> RiskAssessment:
    action, rest = _action(args)
    if action in ("", "show"):
        return _reads_with(f"{label} {action}".strip(), rest, LOG)
    if action == "exists":
        return RiskAssessment("read", f"`{label} exists` only reads")
    if action in ("expire", "delete", "drop"):
        return RiskAssessment("destructive", f"`{label} {action}` deletes reflog entries")
    return RiskAssessment("execute", f"`{label} {action}` is not judged")


def _verbs(risk: Risk, what: str, names: str) -> dict[str, RiskAssessment]:
    return {name: RiskAssessment(risk, f"`git {name}` {what}") for name in names.split()}


def _worktree(label: str, args: list[str]) -> RiskAssessment:
    action, _ = _action(args)
    if action == "list" and all(arg in ("list", "--porcelain", "-v", "--verbose", "-z") for arg in args):
        return RiskAssessment("read", f"`{label} list` only reads")
    if action in ("remove", "prune"):
        return RiskAssessment("destructive", f"`{label} {action}` deletes worktrees")
    return RiskAssessment("write", f"`{label}` changes worktrees")


_SubcommandRule = RiskAssessment | Callable[[str, list[str]], RiskAssessment]
_SUBCOMMANDS: dict[str, _SubcommandRule] = {
    **_verbs(
        "network", "reaches a remote", "pull fetch clone ls-remote submodule send-email lfs request-pull"
    ),
    **_verbs(
        "write",
        "records changes in the repository",
        "add stage merge cherry-pick revert init apply am notes bisect format-patch pack-refs repack sparse-checkout gc",
    ),
    **_verbs(
        "destructive",
        "deletes or rewrites files or history",
        "rm mv rebase filter-branch filter-repo prune replace",
    ),
    "help": RiskAssessment("execute", "`git help` opens the manual in a pager"),
    "push": _push,
    "branch": _lists_or_creates("branch", BRANCH),
    "tag": _lists_or_creates("tag", TAG),
    "config": _config,
    "reset": _reset,
    "remote": _remote,
    "checkout": _checkout,
    "switch": _switch,
    "restore": _restore,
    "stash": _stash,
    "reflog": _reflog,
    "worktree": _worktree,
    "commit": lambda label, args: (
        RiskAssessment("destructive", f"`{label} --amend` rewrites the last commit")
        if "--amend" in args
        else RiskAssessment("write", f"`{label}` records a commit")
    ),
    "clean": lambda label, args: (
        RiskAssessment("execute", f"`{label} --dry-run` is not judged read")
        if any(arg in ("-n", "--dry-run") for arg in args)
        else RiskAssessment("destructive", f"`{label}` deletes untracked files")
    ),
    "update-ref": lambda label, args: (
        RiskAssessment("destructive", f"`{label} -d` deletes a ref")
        if "-d" in args
        else RiskAssessment("write", f"`{label}` changes a ref")
    ),
}
