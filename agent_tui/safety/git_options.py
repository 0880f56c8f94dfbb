"""git's options as data: the read-only options of each read-only subcommand, and the rest.

git reads options with parse-options: short options cluster, long options match by unique prefix
(`--outp` could be `--output`), `--no-X` negates, and options may follow revisions. Each table
lists what one subcommand accepts; risky entries carry their risk and what they do. Anything a
table does not list lifts the command to `execute` (see `git_rules`).
"""

from __future__ import annotations

from agent_tui.events.model import Risk
from agent_tui.safety.options import OptionTable

__all__ = ["BRANCH", "CONFIG", "DIFF", "GLOBAL", "LOG", "READ_ONLY", "RESET", "TAG"]

HELP: dict[str, tuple[Risk, str]] = {"--help": ("execute", "opens the manual in a pager")}
_DIFF_SPEC = (
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
DIFF_RISKS: dict[str, tuple[Risk, str]] = {
    "--output=": ("destructive", "writes its output to a file"),
    "--ext-diff": ("execute", "runs an external diff program"),
    "--textconv": ("execute", "runs text conversion programs"),
    **HELP,
}
_LOG_SPEC = (
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
LOG_RISKS: dict[str, tuple[Risk, str]] = {
    **DIFF_RISKS,
    "--show-signature": ("execute", "runs gpg to check signatures"),
}
LOG = OptionTable(_DIFF_SPEC + _LOG_SPEC, LOG_RISKS, numbers=True, negatable=True)
DIFF = OptionTable(
    _DIFF_SPEC + "--cached --staged --no-index --merge-base -1 -2 -3 -0 --base --ours --theirs",
    DIFF_RISKS,
    negatable=True,
)
DIFF_PLUMBING = OptionTable(
    _DIFF_SPEC
    + "-r -t --root --no-commit-id --always --stdin --pretty=? --format= -v --cached -q -1 -2 -3 -0",
    LOG_RISKS,
    negatable=True,
)

READ_ONLY: dict[str, OptionTable] = {
    "log": LOG,
    "show": LOG,
    "whatchanged": LOG,
    "rev-list": LOG,
    "diff": DIFF,
    "diff-tree": DIFF_PLUMBING,
    "diff-files": DIFF_PLUMBING,
    "diff-index": DIFF_PLUMBING,
    "range-diff": OptionTable(
        _DIFF_SPEC + "--creation-factor= --no-dual-color --left-only --right-only --notes=? --no-notes",
        DIFF_RISKS,
        negatable=True,
    ),
    "status": OptionTable(
        "-s --short -b --branch --show-stash --porcelain=? --long -v --verbose -u=? "
        "--untracked-files=? --ignore-submodules=? --ignored=? -z --column=? --no-column "
        "--ahead-behind --no-ahead-behind --renames --no-renames --find-renames=? -h",
        HELP,
        negatable=True,
    ),
    "blame": OptionTable(
        "-b --root --show-stats --score-debug -f --show-name -n --show-number -p --porcelain "
        "--line-porcelain --incremental -L= -l -t -S= --reverse= --first-parent --encoding= "
        "--contents= --date= --progress --no-progress -M=? -C=? --ignore-rev= "
        "--ignore-revs-file= --color-lines --color-by-age -e --show-email -w --abbrev=? -s -c "
        "--minimal --no-textconv -h",
        {"--textconv": ("execute", "runs text conversion programs"), **HELP},
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
            **HELP,
        },
        numbers=True,
    ),
    "ls-files": OptionTable(
        "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u --unmerged "
        "-k --killed -z -t -v -f --directory --no-empty-directory --eol --exclude= -x= -X= "
        "--exclude-from= --exclude-per-directory= --exclude-standard --error-unmatch "
        "--with-tree= --full-name --recurse-submodules --abbrev=? --debug --deduplicate "
        "--format= --sparse --resolve-undo -h",
        HELP,
    ),
    "ls-tree": OptionTable(
        "-d -r -t -l --long -z --name-only --name-status --object-only --full-name --full-tree "
        "--abbrev=? --format= -h",
        HELP,
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
        HELP,
    ),
    "cat-file": OptionTable(
        "-t -s -e -p --path= --batch=? --batch-check=? --batch-command=? --batch-all-objects "
        "--buffer --unordered --follow-symlinks -Z -z --allow-unknown-type --mailmap --no-mailmap "
        "--use-mailmap -h",
        {"--textconv --filters": ("execute", "runs conversion filters"), **HELP},
    ),
    "describe": OptionTable(
        "--all --tags --contains --abbrev= --candidates= --exact-match --debug --long --match= "
        "--exclude= --always --first-parent --dirty=? --broken=? -h",
        HELP,
    ),
    "shortlog": OptionTable(
        "-n --numbered -s --summary -e --email --format= --group= -c --committer -w=? --all "
        "--no-merges --merges --since= --until= --after= --before= --author= --max-count= "
        "--first-parent --reverse -h",
        HELP,
    ),
    "show-ref": OptionTable(
        "--head --branches --tags --heads -d --dereference -s --hash=? --abbrev=? --verify -q "
        "--quiet --exclude-existing=? --exists -h",
        HELP,
    ),
    "for-each-ref": OptionTable(
        "--count= --shell --perl --python --tcl --sort= --format= --color=? --points-at= "
        "--merged=? --no-merged=? --contains=? --no-contains=? --ignore-case --omit-empty "
        "--exclude= --include-root-refs -h",
        HELP,
    ),
    "merge-base": OptionTable("-a --all --octopus --independent --is-ancestor --fork-point -h", HELP),
    "name-rev": OptionTable(
        "--tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined --always -h", HELP
    ),
    "count-objects": OptionTable("-v --verbose -H --human-readable -h", HELP),
    "check-ignore": OptionTable("-q --quiet -v --verbose -n --non-matching --no-index --stdin -z -h", HELP),
    "var": OptionTable("-l -h", HELP),
    "version": OptionTable("--build-options -h", HELP),
    "cherry": OptionTable("-v --abbrev=? -h", HELP),
    "show-branch": OptionTable(
        "-a --all -r --remotes --topo-order --date-order --current --color=? --no-color --sparse "
        "--more= --list --merge-base --independent --no-name --sha1-name --topics -g --reflog=? -h",
        HELP,
    ),
}

GLOBAL = OptionTable(
    "--no-pager -P --no-replace-objects --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks "
    "--namespace= --version -v --help -h --html-path --man-path --info-path --no-advice",
    {
        "-c= --config-env=": ("execute", "overrides configuration, which can name programs to run"),
        "-C= --git-dir= --work-tree= --bare": (
            "execute",
            "points git at another repository, whose config can name programs to run",
        ),
        "--exec-path=?": ("execute", "changes where git finds the programs it runs"),
        "-p --paginate": ("execute", "runs a pager program"),
    },
)


BRANCH = OptionTable(
    "-l --list -a --all -r --remotes -v --verbose -q --quiet --show-current --contains= "
    "--no-contains= --merged= --no-merged= --points-at= --sort=? --format=? --color=? --no-color "
    "--column=? --no-column --abbrev=? --no-abbrev -i --ignore-case --omit-empty -h",
    {
        "-d --delete -D": ("destructive", "deletes a branch"),
        "-M -C -f --force": ("destructive", "overwrites a branch"),
        "-m --move -c --copy": ("write", "renames or copies a branch"),
        "-u= --set-upstream-to= --unset-upstream --edit-description -t=? --track=? --no-track "
        "--create-reflog --recurse-submodules": ("write", "changes a branch's settings"),
        **HELP,
    },
)
TAG = OptionTable(
    "-l --list -n=? --contains= --no-contains= --merged= --no-merged= --points-at= --sort= "
    "--format= --color=? --column=? --no-column -i --ignore-case --omit-empty -h",
    {
        "-d --delete": ("destructive", "deletes a tag"),
        "-f --force": ("destructive", "replaces a tag"),
        "-a --annotate -s --sign -u= --local-user= -m= --message= -F= --file= -e --edit "
        "--cleanup= --create-reflog": ("write", "creates a tag"),
        "-v --verify": ("execute", "runs gpg to verify a tag"),
        **HELP,
    },
)
CONFIG = OptionTable(
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
        **HELP,
    },
)
RESET = OptionTable(
    "-q --quiet --soft --mixed -N --intent-to-add -p --patch --pathspec-from-file= "
    "--pathspec-file-nul --no-refresh --refresh --recurse-submodules=? --no-recurse-submodules",
    {"--hard --merge --keep": ("destructive", "discards changes in the working tree"), **HELP},
)
