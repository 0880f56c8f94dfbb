"""git: which subcommands and options only read, and what the others do.

git reads its options with parse-options: short options cluster, long options match by unique
prefix (`--outp` is `--output`), `--no-X` negates, and options may follow revisions. The tables
below list the read-only options of each read-only subcommand; anything else lifts the command
to `execute`.

Invariants:
- `git` is `read` only for a read-only subcommand whose every option is listed here, with no
  global option that changes what runs (`-c`, `--config-env`, `--exec-path`, `-p`), and no
  format that makes git run gpg (`%G…`, `--show-signature`);
- options that write (`--output`), run programs (`--ext-diff`, `--textconv`, `-O`, `--filters`)
  or open the manual in a pager (`--help`) carry their own risk;
- `git branch NAME`, `git tag NAME`, `git config NAME VALUE` change the repository: `write`;
  `git reset --hard` or `git reset COMMIT` is `destructive`, a bare `git reset` `write`.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_tui.events.model import Risk
from agent_tui.safety.assessment import RiskAssessment, worst
from agent_tui.safety.options import OptionTable, Scan, scan

__all__ = ["git_assessment"]

_HELP: dict[str, tuple[Risk, str]] = {"--help": ("execute", "opens the manual in a pager")}
_DIFF = (
    "-p -u --patch -s --no-patch -U= --unified= --output-indicator-new= --output-indicator-old= "
    "--output-indicator-context= --raw --patch-with-raw --patch-with-stat --indent-heuristic "
    "--no-indent-heuristic --minimal --patience --histogram --anchored= --diff-algorithm= "
    "--stat=? --stat-width= --stat-name-width= --stat-graph-width= --stat-count= "
    "--compact-summary --numstat --shortstat -X=? --dirstat=? --cumulative --dirstat-by-file=? "
    "--summary -z --name-only --name-status --submodule=? --color=? --no-color --color-moved=? "
    "--no-color-moved --color-moved-ws= --no-color-moved-ws --word-diff=? --word-diff-regex= "
    "--color-words=? --no-renames --rename-empty --no-rename-empty --check "
    "--ws-error-highlight= --full-index --binary --abbrev=? --no-abbrev -B=? --break-rewrites=? "
    "-M=? --find-renames=? -C=? --find-copies=? --find-copies-harder -D --irreversible-delete "
    "-l= --diff-filter= -S= -G= --find-object= --pickaxe-all --pickaxe-regex -O= --skip-to= "
    "--rotate-to= -R --relative=? --no-relative -a --text --ignore-cr-at-eol "
    "--ignore-space-at-eol -b --ignore-space-change -w --ignore-all-space --ignore-blank-lines "
    "-I= --ignore-matching-lines= --inter-hunk-context= -W --function-context --exit-code "
    "--quiet --no-ext-diff --no-textconv --ignore-submodules=? --src-prefix= --dst-prefix= "
    "--no-prefix --default-prefix --line-prefix= --ita-invisible-in-index "
    "--ita-visible-in-index -c --cc --combined-all-paths -m --dd --diff-merges= "
    "--no-diff-merges --remerge-diff -h "
)
_DIFF_RISKS: dict[str, tuple[Risk, str]] = {
    "--output=": ("destructive", "writes its output to a file"),
    "--ext-diff": ("execute", "runs an external diff program"),
    "--textconv": ("execute", "runs text conversion programs"),
    **_HELP,
}
_LOG = (
    "-n= --max-count= --skip= --since= --after= --since-as-filter= --until= --before= "
    "--author= --committer= --grep-reflog= --grep= --all-match --invert-grep -i "
    "--regexp-ignore-case --basic-regexp -E --extended-regexp -F --fixed-strings -P "
    "--perl-regexp --remove-empty --merges --no-merges --min-parents= --max-parents= "
    "--no-min-parents --no-max-parents --first-parent --exclude-first-parent-only --not --all "
    "--branches=? --tags=? --remotes=? --glob= --exclude= --exclude-hidden= --reflog "
    "--alternate-refs --single-worktree --ignore-missing --bisect --stdin --cherry-mark "
    "--cherry-pick --left-only --right-only --cherry -g --walk-reflogs --merge --boundary "
    "--simplify-by-decoration --show-pulls --full-history --dense --sparse --simplify-merges "
    "--ancestry-path=? --date-order --author-date-order --topo-order --reverse --no-walk=? "
    "--do-walk --pretty=? --format= --abbrev-commit --no-abbrev-commit --oneline --encoding= "
    "--expand-tabs=? --no-expand-tabs --notes=? --no-notes --show-notes=? --standard-notes "
    "--no-standard-notes --relative-date --date= --parents --children --left-right --graph "
    "--show-linear-break=? --follow --no-follow --decorate=? --no-decorate --decorate-refs= "
    "--decorate-refs-exclude= --clear-decorations --source --mailmap --no-mailmap --use-mailmap "
    "--no-use-mailmap --full-diff --log-size -L= --max-age= --min-age= --count "
)
_LOG_RISKS: dict[str, tuple[Risk, str]] = {
    **_DIFF_RISKS,
    "--show-signature": ("execute", "runs gpg to check signatures"),
}
_LOG_TABLE = OptionTable(_DIFF + _LOG, _LOG_RISKS, numbers=True, negatable=True)
_DIFF_TABLE = OptionTable(
    _DIFF + "--cached --staged --no-index --merge-base -1 -2 -3 -0 --base --ours --theirs",
    _DIFF_RISKS,
    negatable=True,
)
_DIFF_PLUMBING = OptionTable(
    _DIFF + "-r -t --root --no-commit-id --always --stdin --pretty=? --format= -v --cached -q -1 -2 -3 -0",
    _LOG_RISKS,
    negatable=True,
)

_READ_ONLY: dict[str, OptionTable] = {
    "log": _LOG_TABLE,
    "show": _LOG_TABLE,
    "whatchanged": _LOG_TABLE,
    "rev-list": _LOG_TABLE,
    "diff": _DIFF_TABLE,
    "diff-tree": _DIFF_PLUMBING,
    "diff-files": _DIFF_PLUMBING,
    "diff-index": _DIFF_PLUMBING,
    "range-diff": OptionTable(
        _DIFF + "--creation-factor= --no-dual-color --left-only --right-only --notes=? --no-notes",
        _DIFF_RISKS,
        negatable=True,
    ),
    "status": OptionTable(
        "-s --short -b --branch --show-stash --porcelain=? --long -v --verbose -u=? "
        "--untracked-files=? --ignore-submodules=? --ignored=? -z --column=? --no-column "
        "--ahead-behind --no-ahead-behind --renames --no-renames --find-renames=? -h",
        _HELP,
        negatable=True,
    ),
    "blame": OptionTable(
        "-b --root --show-stats --score-debug -f --show-name -n --show-number -p --porcelain "
        "--line-porcelain --incremental -L= -l -t -S= --reverse= --first-parent --encoding= "
        "--contents= --date= --progress --no-progress -M=? -C=? --ignore-rev= "
        "--ignore-revs-file= --color-lines --color-by-age -e --show-email -w --abbrev=? -s -c "
        "--minimal --no-textconv -h",
        {"--textconv": ("execute", "runs text conversion programs"), **_HELP},
    ),
    "grep": OptionTable(
        "-a --text --no-textconv -i --ignore-case -I --max-depth= -r --recursive --no-recursive "
        "-w --word-regexp -v --invert-match -h -H --full-name -E --extended-regexp -G "
        "--basic-regexp -P --perl-regexp -F --fixed-strings -n --line-number --column -l "
        "--files-with-matches --name-only -L --files-without-match -z --null -o --only-matching "
        "-c --count --color=? --no-color --break --heading -p --show-function -A= -B= -C= "
        "--after-context= --before-context= --context= -W --function-context -m= --max-count= "
        "--threads= -f= -e= --and --or --not --all-match -q --quiet --cached --untracked "
        "--no-index --exclude-standard --no-exclude-standard --recurse-submodules",
        {
            "-O=? --open-files-in-pager=?": ("execute", "opens the matches in a pager program"),
            "--textconv": ("execute", "runs text conversion programs"),
            **_HELP,
        },
        numbers=True,
    ),
    "ls-files": OptionTable(
        "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u --unmerged "
        "-k --killed -z -t -v -f --directory --no-empty-directory --eol --exclude= -x= -X= "
        "--exclude-from= --exclude-per-directory= --exclude-standard --error-unmatch "
        "--with-tree= --full-name --recurse-submodules --abbrev=? --debug --deduplicate "
        "--format= --sparse --resolve-undo -h",
        _HELP,
    ),
    "ls-tree": OptionTable(
        "-d -r -t -l --long -z --name-only --name-status --object-only --full-name --full-tree "
        "--abbrev=? --format= -h",
        _HELP,
    ),
    "rev-parse": OptionTable(
        "--verify --short=? --abbrev-ref=? --symbolic --symbolic-full-name --show-toplevel "
        "--show-prefix --show-cdup --git-dir --git-common-dir --absolute-git-dir "
        "--is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository "
        "--show-superproject-working-tree --shared-index-path --local-env-vars -q --quiet --sq "
        "--sq-quote --not --all --branches=? --tags=? --remotes=? --glob= --exclude= "
        "--disambiguate= --default= --prefix= --revs-only --no-revs --flags --no-flags --since= "
        "--after= --until= --before= --resolve-git-dir= --git-path= --path-format= "
        "--show-object-format=? --show-ref-format --stop-at-non-option --keep-dashdash "
        "--stuck-long -h",
        _HELP,
    ),
    "cat-file": OptionTable(
        "-t -s -e -p --path= --batch=? --batch-check=? --batch-command=? --batch-all-objects "
        "--buffer --unordered --follow-symlinks -Z -z --allow-unknown-type --mailmap --no-mailmap "
        "--use-mailmap -h",
        {"--textconv --filters": ("execute", "runs conversion filters"), **_HELP},
    ),
    "describe": OptionTable(
        "--all --tags --contains --abbrev= --candidates= --exact-match --debug --long --match= "
        "--exclude= --always --first-parent --dirty=? --broken=? -h",
        _HELP,
    ),
    "shortlog": OptionTable(
        "-n --numbered -s --summary -e --email --format= --group= -c --committer -w=? --all "
        "--no-merges --merges --since= --until= --after= --before= --author= --max-count= "
        "--first-parent --reverse -h",
        _HELP,
    ),
    "show-ref": OptionTable(
        "--head --branches --tags --heads -d --dereference -s --hash=? --abbrev=? --verify -q "
        "--quiet --exclude-existing=? --exists -h",
        _HELP,
    ),
    "for-each-ref": OptionTable(
        "--count= --shell --perl --python --tcl --sort= --format= --color=? --points-at= "
        "--merged=? --no-merged=? --contains=? --no-contains=? --ignore-case --omit-empty "
        "--exclude= --include-root-refs -h",
        _HELP,
    ),
    "merge-base": OptionTable("-a --all --octopus --independent --is-ancestor --fork-point -h", _HELP),
    "name-rev": OptionTable(
        "--tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined --always -h", _HELP
    ),
    "count-objects": OptionTable("-v --verbose -H --human-readable -h", _HELP),
    "check-ignore": OptionTable("-q --quiet -v --verbose -n --non-matching --no-index --stdin -z -h", _HELP),
    "var": OptionTable("-l -h", _HELP),
    "version": OptionTable("--build-options -h", _HELP),
    "cherry": OptionTable("-v --abbrev=? -h", _HELP),
    "show-branch": OptionTable(
        "-a --all -r --remotes --topo-order --date-order --current --color=? --no-color --sparse "
        "--more= --list --merge-base --independent --no-name --sha1-name --topics -g --reflog=? -h",
        _HELP,
    ),
}

_GLOBAL = OptionTable(
    "-C= --no-pager -P --no-replace-objects --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks --git-dir= --work-tree= "
    "--namespace= --bare --version -v --help -h --html-path --man-path --info-path --no-advice",
    {
        "-c= --config-env=": ("execute", "overrides configuration, which can name programs to run"),
        "--exec-path=?": ("execute", "changes where git finds the programs it runs"),
        "-p --paginate": ("execute", "runs a pager program"),
    },
)


def git_assessment(args: list[str]) -> tuple[RiskAssessment, str]:
    """The risk of `git ARGS` (all words literal) and the label `git SUBCOMMAND`."""
    found = scan(args, _GLOBAL, permute=False)
    findings = _findings("git", found)
    if found.dashdash:
        findings.append(RiskAssessment("execute", "`git --` before the command is not judged"))
    if not found.operands:
        return worst(findings) or RiskAssessment("read", "`git` only prints its version or help"), "git"
    sub, rest = found.operands[0], found.operands[1:]
    label = f"git {sub}"
    if any(use.option.spelling == "--help" for use in found.used):
        findings.append(RiskAssessment("execute", f"`git --help {sub}` opens the manual in a pager"))
    table = _READ_ONLY.get(sub)
    if table is not None:
        findings.extend(_read_only_subcommand(label, rest, table))
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
    findings = [RiskAssessment("execute", f"`{label}`: {problem}") for problem in found.problems]
    for use in found.used:
        option = use.option
        if option.risk != "read":
            findings.append(RiskAssessment(option.risk, f"`{label} {use.written}` {option.effect}"))
        elif option.spelling in ("--format", "--pretty") and use.value and _runs_gpg(use.value):
            findings.append(RiskAssessment("execute", f"`{label} {use.written}=%G…` runs gpg"))
    return findings


def _runs_gpg(format_text: str) -> bool:
    return "%G" in format_text or "%(signature" in format_text


def _read_only_subcommand(label: str, args: list[str], table: OptionTable) -> list[RiskAssessment]:
    return _findings(label, scan(args, table))


# -- subcommands that are not plainly read-only ---------------------------------------------------

_BRANCH = OptionTable(
    "-l --list -a --all -r --remotes -v --verbose -q --quiet --show-current --contains= "
    "--no-contains= --merged= --no-merged= --points-at= --sort=? --format=? --color=? --no-color "
    "--column=? --no-column --abbrev=? --no-abbrev -i --ignore-case --omit-empty -h",
    {
        "-d --delete -D": ("destructive", "deletes a branch"),
        "-M -C -f --force": ("destructive", "overwrites a branch"),
        "-m --move -c --copy": ("write", "renames or copies a branch"),
        "-u= --set-upstream-to= --unset-upstream --edit-description -t=? --track=? --no-track "
        "--create-reflog --recurse-submodules": ("write", "changes a branch's settings"),
        **_HELP,
    },
)
_TAG = OptionTable(
    "-l --list -n=? --contains= --no-contains= --merged= --no-merged= --points-at= --sort= "
    "--format= --color=? --column=? --no-column -i --ignore-case --omit-empty -h",
    {
        "-d --delete": ("destructive", "deletes a tag"),
        "-f --force": ("destructive", "replaces a tag"),
        "-a --annotate -s --sign -u= --local-user= -m= --message= -F= --file= -e --edit "
        "--cleanup= --create-reflog": ("write", "creates a tag"),
        "-v --verify": ("execute", "runs gpg to verify a tag"),
        **_HELP,
    },
)
_CONFIG = OptionTable(
    "--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool -l --list "
    "--show-origin --show-scope --name-only -z --null --global --system --local --worktree -f= "
    "--file= --blob= --type= --bool --int --bool-or-int --path --expiry-date --no-type "
    "--includes --no-includes --default= --fixed-value -h",
    {
        "--add --replace-all --unset --unset-all --rename-section --remove-section": (
            "write",
            "changes the configuration",
        ),
        "-e --edit": ("execute", "opens an editor"),
        **_HELP,
    },
)
_RESET = OptionTable(
    "-q --quiet --soft --mixed -N --intent-to-add -p --patch --pathspec-from-file= "
    "--pathspec-file-nul --no-refresh --refresh --recurse-submodules=? --no-recurse-submodules",
    {"--hard --merge --keep": ("destructive", "discards changes in the working tree"), **_HELP},
)
_LISTING_FLAGS = frozenset({"-l", "--list"})


def _branch(label: str, args: list[str]) -> RiskAssessment:
    found = scan(args, _BRANCH)
    risky = worst(_findings(label, found))
    if risky is not None:
        return risky
    listing = any(use.option.spelling in _LISTING_FLAGS for use in found.used)
    if found.operands and not listing:
        return RiskAssessment("write", f"`{label} NAME` creates a branch")
    if found.dashdash:
        return RiskAssessment("execute", f"`{label} --list --` is not judged")
    return RiskAssessment("read", f"`{label}` lists branches")


def _tag(label: str, args: list[str]) -> RiskAssessment:
    found = scan(args, _TAG)
    risky = worst(_findings(label, found))
    if risky is not None:
        return risky
    listing = any(use.option.spelling in _LISTING_FLAGS for use in found.used)
    if found.operands and not listing:
        return RiskAssessment("write", f"`{label} NAME` creates a tag")
    return RiskAssessment("read", f"`{label}` lists tags")


def _config(label: str, args: list[str]) -> RiskAssessment:
    found = scan(args, _CONFIG)
    risky = worst(_findings(label, found))
    if risky is not None:
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
    found = scan(args, _RESET)
    risky = worst(_findings(label, found))
    if risky is not None:
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
        return _reads_with(f"{label} list", rest, _LOG_TABLE)
    if action == "show":
        return _reads_with(f"{label} show", rest, _DIFF_TABLE)
    if action in ("drop", "clear"):
        return RiskAssessment("destructive", f"`{label} {action}` deletes stashed changes")
    return RiskAssessment("write", f"`{label}` changes the working tree")


def _reflog(label: str, args: list[str]) -> RiskAssessment:
    action, rest = _action(args)
    if action in ("", "show"):
        return _reads_with(f"{label} {action}".strip(), rest, _LOG_TABLE)
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
    "branch": _branch,
    "tag": _tag,
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
