"""The shell risk classifier: `read` only on proof, the ranks of everything else, and why.

The table holds one row per command: its expected risk and a piece of the reason the approval
shows. Rows are grouped by what they check; the property tests after it check that wrapping a
command never lowers its risk and that a line tree-sitter cannot parse is never `read`; the
last tests run real commands in a scratch directory.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import tree_sitter_bash
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import example as hypothesis_example
from hypothesis import strategies as st
from tree_sitter import Language, Parser

from agent_tui.events import Event, event_from_json, payload_from
from agent_tui.reducer import project_state
from agent_tui.safety import RISK_ORDER, assess_shell, classify_shell, riskiest, shell_programs

READ = [
    # documented read-only commands
    ("ls src/foo.py", "read", "`ls`"),
    ("ls -la", "read", "`ls`"),
    ("cat README.md", "read", "`cat`"),
    ("grep -rn TODO src", "read", "`grep`"),
    ("pwd", "read", "`pwd`"),
    ("head -n 20 a.txt", "read", "`head`"),
    ("tail -5 log.txt", "read", "`tail`"),
    ("wc -l *.py", "read", "`wc`"),  # a glob is fine for a program with no risky option
    ("ls ~/projects {a,b}.txt", "read", "`ls`"),
    ("cd src && ls", "read", "`cd`, `ls`"),
    ("ls 2>&1 | grep foo | sort | uniq -c", "read", "`sort`"),
    ("echo hi > /dev/null", "read", "`echo`"),
    ("cat a 2>/dev/null", "read", "`cat`"),
    ("ls >&2 2>&-", "read", "`ls`"),
    ("cat < input.txt", "read", "`cat`"),
    ('cat <<< "hello"', "read", "`cat`"),
    ("cat <<EOF\nhello\nEOF", "read", "`cat`"),
    ("cat <<'EOF'\n$(rm -rf x) $HOME\nEOF", "read", "`cat`"),  # a quoted heredoc is data
    ('cat <<"EOF"\n`rm -rf x`\nEOF', "read", "`cat`"),
    ("cat <<\\EOF\n`rm -rf x`\nEOF", "read", "`cat`"),
    ("cat <<-'EOF' | grep -c x\n\t`rm -rf x`\n\tEOF", "read", "`grep`"),
    ("cat <<'EOF'\nEO\\\nF\nEOF", "read", "`cat`"),  # quoted: no line is joined
    ("cat <<'END OF' | wc -l\nx\nEND OF", "read", "`wc`"),
    ("[[ 1 -eq 1 ]] && ls", "read", "`ls`"),
    ("echo 'a; rm -rf x'", "read", "`echo`"),
    ('echo "\\$(rm x)"', "read", "`echo`"),  # escaped: the text `$(rm x)`, not a substitution
    ("echo $((1 + 2))", "read", "`echo`"),
    ("/bin/ls -l", "read", "`ls`"),
    ("ls # rm -rf x", "read", "`ls`"),
    ("ls; pwd\ngrep -c x f", "read", "`grep`"),
    ("grep pattern\\\n  file", "read", "`grep`"),
    ("[ -f setup.py ] && cat setup.py", "read", "`cat`"),
    ("LC_ALL=C sort names.txt", "read", "`sort`"),
    ("find . -name '*.py' -not -path './.venv/*'", "read", "`find`"),
    ("find src -type f -mtime -2 -print0", "read", "`find`"),
    ("find . -name '*.ts' | grep -v node_modules | sort | head -20", "read", "`find`"),
    ("sort -- -o output", "read", "`sort`"),
    ("sort -rn -k2 counts.txt", "read", "`sort`"),
    ("uniq input.txt", "read", "`uniq`"),
    ("tree -L 2 -I node_modules", "read", "`tree`"),
    ("base64 -d blob.b64", "read", "`base64`"),
    ("date +%Y-%m-%d", "read", "`date`"),
    ("printf '%s\\n' value", "read", "`printf`"),
    ("rg -n --hidden -g '*.py' TODO", "read", "`rg`"),
    ("rg -- -z file", "read", "`rg`"),
    ("fd -e py src", "read", "`fd`"),
    ("jq '.name' package.json", "read", "`jq`"),
    ("diff -u a.txt b.txt", "read", "`diff`"),
    ("stat -c %s file && du -sh . && df -h", "read", "`du`"),
    ("which python3 && command -v git", "read", "`which`"),
    ("env", "read", "`env`"),
    ("export LC_ALL=C", "read", "`export`"),
    ("declare -x TZ=UTC", "read", "`declare`"),
    # sed and awk that only print
    ("sed -n '1,10p' file", "read", "`sed`"),
    ("sed 's/old/new/g' file", "read", "`sed`"),
    ("sed -n '/needle/p' file", "read", "`sed`"),
    ("sed '/pattern/d; s/a/b/' file", "read", "`sed`"),
    ("sed 's/a/woutput/' file", "read", "`sed`"),  # `woutput` is replacement text
    ("sed 's#x#s/a/b/woutput#' file", "read", "`sed`"),
    ("sed -E -e 's/(a)/\\1/' -e '$!N' file", "read", "`sed`"),
    ("awk '{print $1}' file.txt", "read", "`awk`"),
    ("awk -F : '{ print $1 }' /etc/passwd", "read", "`awk`"),
    ("awk 'BEGIN { print \"user@example.com\" }'", "read", "`awk`"),
    ("awk '$3 > 100' data.txt", "read", "`awk`"),  # a comparison, and no print to redirect
    # git
    ("git status", "read", "`git status`"),
    ("git status --short --branch", "read", "`git status`"),
    ("git log --oneline -5", "read", "`git log`"),
    ("git log -p --stat -- src/", "read", "`git log`"),
    ("git log -- --output=log.out", "read", "`git log`"),  # after `--`: a path
    ("git diff HEAD~1 --stat", "read", "`git diff`"),
    ("git diff -Oorderfile --no-ext-diff", "read", "`git diff`"),
    ("git show -p HEAD:src/app.py", "read", "`git show`"),
    ("git blame -L 10,20 file.py", "read", "`git blame`"),
    ("git --no-pager log --format='%h %s'", "read", "`git log`"),
    ("git branch", "read", "`git branch`"),
    ("git branch -a -v", "read", "`git branch`"),
    ("git branch --list --color=always 'feat/*'", "read", "`git branch`"),
    ("git branch --show-current", "read", "`git branch`"),
    ("git status; cd src", "read", "`git status`"),  # git runs before the `cd`
    ("git tag --list 'v1.*'", "read", "`git tag`"),
    ("git remote -v", "read", "`git remote`"),
    ("git remote get-url origin", "read", "`git remote`"),
    ("git rev-parse --abbrev-ref HEAD", "read", "`git rev-parse`"),
    ("git ls-files -m", "read", "`git ls-files`"),
    ("git grep -n TODO -- '*.py'", "read", "`git grep`"),
    ("git stash list", "read", "`git stash`"),
    ("git config --get user.name", "read", "`git config`"),
    ("git --version", "read", "`git`"),
]

SED_AND_AWK = [
    ("sed 's/a/b/e' file", "execute", "`sed` script uses `e`: runs a command"),
    ("sed 'e date' file", "execute", "uses `e`"),
    ("sed '1etouch marker' file", "execute", "uses `e`"),
    ("sed 's#a#printf hacked > marker#pe' file", "execute", "uses `e`"),
    ("sed -es/a/b/e", "execute", "uses `e`"),
    ("sed 's/a/b/w out.txt' file", "destructive", "`sed` script uses `w`: writes a file"),
    ("sed 'woutput' file", "destructive", "uses `w`"),
    ("sed '/pattern/W output' file", "destructive", "uses `W`"),
    ("sed 'p;w output' file", "destructive", "uses `w`"),
    ("sed -newout input", "destructive", "uses `w`"),  # -n, then -e `wout`
    ("sed -e 's/a/b/' -e 'woutput' file", "destructive", "uses `w`"),
    ("sed 'r /etc/passwd' file", "execute", "uses `r`: reads another file"),
    ("sed '1i header' file", "execute", "uses `i`"),
    ("sed -einstall file", "execute", "uses `i`"),
    ("sed -f script.sed file", "execute", "`sed -f` reads its script from a file"),
    ("sed -fscript.sed file", "execute", "reads its script from a file"),
    ('sed "$SCRIPT" file', "execute", '`"$SCRIPT"` expands to a value not known here'),
    ("sed 's/a/b/' \"$FILE\"", "execute", "expands to a value not known here"),
    ("sed s/a/*/ file", "execute", "expands to words not known here"),
    ("sed 's/w /x/' file", "execute", "a command's shape"),
    ("sed 's/a/b/' 'w file'", "execute", "a command's shape"),
    ("sed -e '' file", "execute", "script is empty"),
    ("sed -- -i file", "execute", "unknown command `-`"),
    ("sed --f script.sed file", "execute", "ambiguous"),
    ("sed 's/[/]/x/w out' file", "execute", "inside `[…]`"),
    ("awk 'BEGIN {system(\"rm -rf /\")}'", "execute", "`awk` program uses `system`: runs a command"),
    ("awk '{print > \"output.txt\"}' input.txt", "execute", "prints with `>`"),
    ("awk '{print | \"sort\"}' input.txt", "execute", "uses `|`"),
    ("awk 'BEGIN {\"date\" | getline d}'", "execute", "uses `getline`"),
    ('awk \'BEGIN { fn = "system"; @fn("touch x") }\'', "execute", "uses `system`"),
    ("awk '@include \"lib.awk\"' file", "execute", "uses `@`"),
    ("awk -f prog.awk file", "execute", "`awk -f` reads its program from a file"),
    ("awk -e '{ print }' file", "execute", "not a known option"),
    ("awk {print*2} file", "execute", "expands to words not known here"),
    ("awk -v x=\"$VALUE\" '{ print x }' file", "execute", "expands to a value not known here"),
]

OUTPUT_OPTIONS = [
    ("sed -i 's/a/b/' f.txt", "destructive", "`sed -i` edits files in place"),
    ("sed -I .bak 's/a/b/' file", "destructive", "`sed -I` edits files in place"),
    ("sed -ni.bak 's/a/b/' file", "destructive", "`sed -i` edits files in place"),
    ("sed --in-pl=.bak 's/a/b/' file", "destructive", "`sed --in-pl` edits files in place"),
    ("sort -o out.txt in.txt", "destructive", "`sort -o` writes its output to a file"),
    ("sort -roout input", "destructive", "`sort -o`"),
    ("sort --out=output input", "destructive", "`sort --out` writes its output to a file"),
    ("uniq input output", "destructive", "writes its second file"),
    ("uniq -- -f output", "destructive", "writes its second file"),
    ("base64 -o out.bin in", "destructive", "`base64 -o` writes its output to a file"),
    ("base64 -ob64.txt in", "destructive", "`base64 -o`"),
    ("tree -o tree.txt", "destructive", "`tree -o` writes its output to a file"),
    ("tree -Cofile .", "destructive", "`tree -o`"),
    ("git log --output=log.txt -n 1", "destructive", "`git log --output` writes its output to a file"),
    ("git diff --output patch.diff", "destructive", "`git diff --output` writes its output to a file"),
    ("git diff --outp=patch.diff", "execute", "`--outp` is ambiguous"),  # git refuses it too
    ("git show --output=show.out HEAD", "destructive", "writes its output to a file"),
    ("date -s 'tomorrow'", "write", "sets the system clock"),
    ("date 0101", "write", "sets the system clock"),
    ("hostname evil", "write", "sets the host name"),
    ("file -C -m magic", "write", "compiles a magic file"),
]

RUNS_ANOTHER_PROGRAM = [
    ("rg --pre cat pattern", "execute", "`rg --pre` runs a preprocessor program"),
    ("rg --pre=./evil.sh pattern", "execute", "runs a preprocessor program"),
    ("rg --hostname-bin=hostname pattern", "execute", "`rg --hostname-bin` runs a program"),
    ("rg -z pattern archive.gz", "execute", "`rg -z` runs decompression programs"),
    ("rg -iz pattern archive.gz", "execute", "`rg -z`"),
    ("rg --search-zip pattern", "execute", "runs decompression programs"),
    ("sort --compress-program gzip input", "execute", "`sort --compress-program` runs a compression program"),
    ("sort --co=cat input", "execute", "`sort --co` runs a compression program"),
    ("git grep -Ovim needle", "execute", "`git grep -O` opens the matches in a pager program"),
    ("git grep --open-files-in-pager=less needle", "execute", "pager program"),
    ("git -c core.pager=cat log", "execute", "`git -c` overrides configuration"),
    ("git -ccore.pager=cat status", "execute", "`git -c`"),
    ("git --config-env=diff.external=HELPER diff", "execute", "`git --config-env` overrides configuration"),
    ("git --exec-path=/tmp/evil status", "execute", "`git --exec-path` changes where git finds"),
    ("git diff --ext-diff", "execute", "`git diff --ext-diff` runs an external diff program"),
    ("git show --textconv HEAD:file", "execute", "`git show --textconv` runs text conversion"),
    ("git cat-file --filters HEAD:file", "execute", "runs conversion filters"),
    ("git -p log", "execute", "`git -p` runs a pager program"),
    ("git --paginate log", "execute", "runs a pager program"),
    ("git log --show-signature -1", "execute", "runs gpg"),
    ("git show --format=%G? HEAD", "execute", "runs gpg"),
    ("git status --help", "execute", "opens the manual in a pager"),
    ("git --help commit", "execute", "opens the manual in a pager"),
    ("git log --frobnicate", "execute", "`--frobnicate` is not a known option"),
    ("git --unknown-option status", "execute", "not a known option"),
    ("git -- status", "execute", "`git --` before the command"),
    # another repository brings its own config, which can run programs
    ("git -C sub status", "execute", "`git -C` points git at another repository"),
    ("git -C . branch --show-current", "execute", "`git -C` points git at another repository"),
    ("git --git-dir=evil --work-tree=. diff", "execute", "`git --git-dir` points git at another"),
    ("git --work-tree=.. status", "execute", "`git --work-tree` points git at another"),
    ("git --bare log", "execute", "`git --bare` points git at another repository"),
    ("git --git-d=evil log", "execute", "`git --git-d` points git at another"),  # a unique prefix
    ("GIT_DIR=evil git log", "execute", "`GIT_DIR=` can change what runs"),
    ("export GIT_DIR=evil; git status", "execute", "`GIT_DIR=` can change what runs"),
    ("cd evil && git diff", "execute", "`git` after `cd` may use another repository"),
    ("cd evil; git --no-pager log -1", "execute", "`git` after `cd` may use another repository"),
    ("pushd evil && git status", "execute", "`git` after `pushd`"),
    ("cd evil && nice git status", "execute", "runs another command"),
    ("cd evil && ls | git status", "execute", "`git` after `cd`"),
    ("find . -exec echo {} \\;", "execute", "`find -exec` runs a command"),
    ("fd -e py -x wc -l", "execute", "`fd -x` runs a command on every match"),
    ("file -z archive.gz", "execute", "runs decompressors"),
    ("bat --pager=less file", "execute", "runs a pager program"),
    ("less file", "execute", "`less` is not on the read-only list"),
    ("printf -v PATH /tmp", "execute", "`printf -v` assigns a shell variable"),
    ("printf -v PATH /tmp; ls", "execute", "assigns a shell variable"),
]

ASSIGNMENTS = [
    ("LD_PRELOAD=/tmp/evil.so ls", "execute", "`LD_PRELOAD=` can change what runs"),
    ("DYLD_INSERT_LIBRARIES=x.dylib ls", "execute", "can change what runs"),
    ("GIT_EXTERNAL_DIFF=/tmp/helper git diff", "execute", "`GIT_EXTERNAL_DIFF=` can change what runs"),
    ("FOO=bar GIT_EXTERNAL_DIFF=/tmp/helper git diff", "execute", "`FOO=` is not known to be harmless"),
    ("GIT_EXTERNAL_DIFF='touch /tmp/pwned'; git diff", "execute", "can change what runs"),
    ("PAGER=helper git log", "execute", "`PAGER=` can change what runs"),
    ("GIT_PAGER=helper git log", "execute", "can change what runs"),
    ("PATH=/tmp/evil:$PATH ls", "execute", "assigns a value not known here"),
    ("PATH=/tmp/evil ls", "execute", "`PATH=` can change what runs"),
    ("RIPGREP_CONFIG_PATH=/tmp/config rg pattern", "execute", "`RIPGREP_CONFIG_PATH=` can change what runs"),
    ("EDITOR=vim git log", "execute", "`EDITOR=` can change what runs"),
    ("BASH_ENV=/tmp/x bash -c ls", "execute", "`BASH_ENV=` can change what runs"),
    ("NPM_CONFIG_PREFIX=/tmp ls", "execute", "can change what runs"),
    ("FOO=bar ls", "execute", "`FOO=` is not known to be harmless"),
    ("FOO=bar; ls", "execute", "`FOO=` is not known to be harmless"),
    ("export PATH=/tmp; ls", "execute", "`PATH=` can change what runs"),
    ("env LD_PRELOAD=x.so ls", "execute", "can change what runs"),
    ("FOO=$(rm target) ls", "destructive", "`rm` deletes files"),
]

GIT_CHANGES = [
    ("git branch topic", "write", "`git branch NAME` creates a branch"),
    ("git branch --sort=refname sort-topic", "write", "creates a branch"),
    (
        "git branch --sort refname",
        "write",
        "creates a branch",
    ),  # git takes `refname` as the value; we do not guess
    ("git branch -v verbose-topic", "write", "creates a branch"),
    ("git branch -m old new", "write", "renames or copies a branch"),
    ("git branch -u origin/main", "write", "changes a branch's settings"),
    ("git branch -D topic", "destructive", "`git branch -D` deletes a branch"),
    ("git branch --delete topic", "destructive", "deletes a branch"),
    ("git branch --list -- -d", "execute", "not judged"),
    ("git tag v1.0", "write", "creates a tag"),
    ("git tag -d v1.0", "destructive", "deletes a tag"),
    ("git remote add origin url", "write", "changes the remotes"),
    ("git remote get-url prune", "execute", "a remote named like an action is not judged"),
    ("git remote show origin", "network", "contacts the remote"),
    ("git config user.name Someone", "write", "changes the configuration"),
    ("git config --unset user.name", "write", "changes the configuration"),
    ("git reset", "write", "`git reset` unstages changes"),
    ("git reset -- src/app.py", "write", "unstages changes"),
    ("git reset HEAD~1", "destructive", "`git reset COMMIT` moves the branch"),
    ("git reset --soft HEAD~1", "destructive", "moves the branch"),
    ("git reset --hard", "destructive", "`git reset --hard` discards changes"),
    ("git add -A && git commit -m 'msg'", "write", "records"),
    ("git commit --amend -m x", "destructive", "rewrites the last commit"),
    ("git stash", "write", "changes the working tree"),
    ("git stash drop", "destructive", "deletes stashed changes"),
    ("git clean -fdx", "destructive", "deletes untracked files"),
    ("git clean --dry-run", "execute", "not judged read"),
    ("git checkout -- src/foo.py", "destructive", "may overwrite files"),
    ("git checkout -b feature", "write", "creates a branch"),
    ("git restore --staged a.py", "write", "unstages"),
    ("git rebase -i HEAD~3", "destructive", "rewrites"),
    ("git push", "network", "sends commits to a remote"),
    ("git push origin main", "network", "sends commits"),
    ("git push --force origin main", "destructive", "overwrites or deletes remote history"),
    ("git push -f", "destructive", "overwrites or deletes remote history"),
    ("git push origin +main", "destructive", "overwrites or deletes remote history"),
    ("git pull --rebase", "network", "reaches a remote"),
    ("git fetch origin", "network", "reaches a remote"),
    ("git clone https://github.com/x/y", "network", "reaches a remote"),
    ("git frobnicate", "execute", "not a known git command"),
]

EXPANSIONS = [
    ("echo $HOME", "execute", "`$HOME` expands to a value not known here"),
    ('echo "hi $USER"', "execute", "expands to a value not known here"),
    ("ls $(echo -la)", "execute", "uses a command substitution"),
    ("echo $(pwd)", "execute", "uses a command substitution"),
    ("echo `pwd`", "execute", "command substitution"),
    ("cat <(git status)", "execute", "uses a process substitution"),
    ('echo "$\\\n(touch /tmp/pwned)"', "execute", "expands to a value not known here"),
    ('echo "${one="$"}${two="$one(touch /tmp/pwned)"}${two@P}"', "execute", "expands to a value"),
    ("uniq *", "execute", "`uniq` gets `*`, which expands to words not known here"),
    ('uniq "$FILES"', "execute", "expands to a value not known here"),
    ('sort "$OPTIONS" input', "execute", "expands to a value not known here"),
    ("sort {-o,output} input", "execute", "`sort` gets `{-o,output}`"),
    ('find . "$EXPRESSION"', "execute", "expands to a value not known here"),
    ('rg "$OPTIONS" pattern', "execute", "expands to a value not known here"),
    ('git status "$OPTIONS"', "execute", "expands to a value not known here"),
    ("git log *", "execute", "`git` gets `*`"),
    ("find . -name *.py", "execute", "`find` gets `*.py`"),
    ("$EDITOR notes.txt", "execute", "the program `$EDITOR` is not known"),
    ("cat <<EOF\n$HOME\nEOF", "execute", "an expansion inside a heredoc"),
    # heredoc bodies (unquoted delimiter) expand like double-quoted text, backquotes included
    ("cat <<EOF\nhi `touch m`\nEOF", "execute", "an expansion inside a heredoc"),
    ("cat <<-EOF\n\t`touch m`\n\tEOF", "execute", "an expansion inside a heredoc"),
    ('grep a <<EOF\n"`touch m`"\nEOF', "execute", "an expansion inside a heredoc"),
    ("cat << EOF | grep x\n`touch m`\nEOF", "execute", "an expansion inside a heredoc"),
    ("cat <<EOF\n`\ntouch m\n`\nEOF", "execute", "an expansion inside a heredoc"),
    ("cat <<EOF\na$\\\n(touch m)\nEOF", "execute", "ends in `\\`"),
    ("cat <<EOF\n\\\\`touch m`\nEOF", "execute", "not judged read"),
    ("cat <<EOF\n${x:=y}\nEOF", "execute", "an expansion inside a heredoc"),
    ("cat <<EOF\n$((x=1))\nEOF", "execute", "an expansion inside a heredoc"),
    ("cat <<EOF\n${x[$(rm m)]}\nEOF", "destructive", "`rm` deletes files"),
    ("cat <<EOF\n`rm m`\nEOF", "destructive", "`rm` deletes files"),
    ("cat <<EOF\nok\nEOF\ncat <<'X'\n`touch m`\nX", "execute", "an expansion inside a heredoc"),
    # where bash ends a heredoc is where we end it, or the line is not judged
    ('cat <<E"O"F\nEOF\ntouch m\nE"O"F', "execute", 'the heredoc delimiter `E"O"F` is not a plain'),
    ("cat <<$'EOF'\nEOF\ntouch m\n$'EOF'", "execute", "is not a plain word"),
    ("cat <<'EO'F\nEOF\ntouch m\n'EO'F", "execute", "cannot be judged"),
    ("cat <<'EOF'\nx\n EOF\ntouch m\nEOF", "execute", "cannot tell where the heredoc `'EOF'` ends"),
    ("cat <<'A' && cat <<'B'\nx\nA\ny\nB\ntouch m", "execute", "cannot be judged"),
    (
        "cat <<EOF\nEO\\\nF\ntouch m\nEOF",
        "execute",
        "a line of the heredoc `EOF` ends in `\\`",
    ),  # bash: `EOF`
    ("cat <<EOF\nEOF\\\n\ntouch m\nEOF", "execute", "cannot be judged"),
    # `[[ … ]]` and bash's `test` evaluate `NAME[…]` subscripts and arithmetic operands
    ("[[ 'a[$(touch m)]' -eq 1 ]] && ls", "execute", "an arithmetic test in `[[ … ]]`"),
    ("[[ x -lt 2 ]] && ls", "execute", "an arithmetic test"),
    ("[ -v 'a[$(touch m)]' ] && ls", "execute", "a test of `NAME[…]`"),
    ("test -v 'a[`touch m`]'", "execute", "`test` may expand a `NAME[…]` subscript"),
    ("[[ -v 'a[$(touch m)]' ]] && ls", "execute", "a test of `NAME[…]`"),
    # bash evaluates `declare -i` values as arithmetic, and `-n`/`-a` read subscripts
    ("declare -i LC_ALL='a[$(touch m)]'", "execute", "`declare -i` changes how bash reads the values"),
    ("typeset -n TZ=x", "execute", "`typeset -n` changes how bash reads the values"),
    ("declare -a TZ='([$(touch m)]=1)'", "execute", "changes how bash reads the values"),
    ("export TZ='a[$(touch m)]'", "execute", "whose subscript bash may expand"),
]

UNPARSEABLE = [
    ("ls |", "execute", "cannot be judged"),
    ("(; ls)", "execute", "cannot be judged: syntax error"),
    ("ls | | cat", "execute", "cannot be judged"),
    ("ls && && cat", "execute", "cannot be judged"),
    ("{ && ls; }", "execute", "cannot be judged"),
    ("(ls &&)", "execute", "cannot be judged"),
    ("echo 'unbalanced", "execute", "cannot be judged"),
    ("ls $(echo 'x", "execute", "cannot be judged"),
    ("ls >", "execute", "cannot be judged"),
    ("cat <> file", "execute", "cannot be judged"),
    ("ls\x00 -la", "execute", "control character"),
    ("ls\rrm x", "execute", "control character"),
    ("", "execute", "empty command"),
    ("   ", "execute", "empty command"),
    ("rm -rf build |", "destructive", "`rm` deletes files"),  # broken, but what it shows still counts
]

CONSTRUCTS = [
    ("(git status)", "execute", "uses a subshell"),
    ("{ ls; pwd; }", "execute", "uses a group"),
    ("ls & pwd", "execute", "uses a background job"),
    ("! ls", "execute", "uses a negation"),
    ("if true; then ls; fi", "execute", "uses an `if` statement"),
    ("for f in *.py; do wc -l $f; done", "execute", "uses a `for` loop"),
    ("while read l; do echo $l; done < f", "execute", "uses a loop"),
    ("f() { ls; }", "execute", "uses a function definition"),
    ("[[ -f x ]] && cat x", "read", "`cat`"),  # a literal test runs nothing
    ("[[ -f $x ]] && cat x", "execute", "a test"),
]

WRAPPERS = [
    ("env ls", "execute", "`env` runs another command"),
    ("nice ls", "execute", "`nice` runs another command"),
    ("timeout 5 ls", "execute", "runs another command"),
    ("xargs grep foo", "execute", "`xargs` runs a command with arguments read from its input"),
    ("sh -c ls", "execute", "`sh -c` runs a shell"),
    ("bash -lc 'ls && git status'", "execute", "`bash -c` runs a shell"),
    ("sudo ls", "execute", "`sudo` runs a command as another user"),
    ("time ls", "execute", "runs another command"),
    ("timeout 5 rm x", "destructive", "`rm` deletes files"),
    ("env FOO=1 rm x", "destructive", "`rm` deletes files"),
    ("nice -n 5 rm x", "destructive", "`rm` deletes files"),
    ("nice -5 rm x", "destructive", "`rm` deletes files"),  # an option we do not know: every reading
    ("ls | xargs rm", "destructive", "`rm` deletes files"),
    ("find . -name '*.py' | xargs -I{} rm {}", "destructive", "`rm` deletes files"),
    ("sh -c 'rm -rf x'", "destructive", "`rm` deletes files"),
    ('bash -lc "ls; rm x"', "destructive", "`rm` deletes files"),
    ("echo ok && sudo rm -rf /", "destructive", "`rm` deletes files"),
    ("find . -exec grep x {} \\; -delete", "destructive", "`find -delete` deletes what it finds"),
    ("find . -name '*.o' -exec rm {} \\;", "destructive", "`rm` deletes files"),
    ("find . -exec sh -c 'curl x | sh' \\;", "network", "`curl` reaches the network"),
    ("eval 'rm -rf x'", "destructive", "`rm` deletes files"),
    ("time -o out.txt ls", "destructive", "`time -o` writes a file"),
    ("cat install.sh | bash", "execute", "`bash` runs a script or its input"),
    ("sudo apt-get install -y jq", "network", "downloads or publishes packages"),
]

RANKS = [
    ("mkdir -p build", "write", "`mkdir` creates files or directories"),
    ("touch a.txt", "write", "creates files"),
    ("echo hi >> log.txt", "write", "`>>` appends to log.txt"),
    ("cp -n a b", "write", "copies without replacing"),
    ("ls | tee -a out.txt", "write", "`tee -a` appends to out.txt"),
    ("rm x", "destructive", "`rm` deletes files"),
    ("ls; rm -rf x", "destructive", "`rm` deletes files"),
    ("mv src/foo.py src/bar.py", "destructive", "`mv` moves files"),
    ("cat a > b", "destructive", "`>` overwrites b"),
    (": > important.log", "destructive", "overwrites important.log"),
    ("echo x >| f", "destructive", "`>|` overwrites f"),
    ("make &> build.log", "destructive", "`&>` overwrites build.log"),
    ("ls 2> errors.txt", "destructive", "`2>` overwrites errors.txt"),
    ("> out", "destructive", "overwrites out"),
    ("echo > $OUT", "destructive", "a name not known here"),
    ("truncate -s 0 f", "destructive", "cuts files short"),
    ("dd if=/dev/zero of=disk.img bs=1M count=1", "destructive", "overwrites a file or disk"),
    ("find . -delete", "destructive", "deletes what it finds"),
    ("find . -name -delete", "destructive", "deletes what it finds"),  # even as a value: no doubt left
    ("find . -fprint out.txt", "destructive", "`find -fprint` writes a file"),
    ("shred secret.txt", "destructive", "deletes files"),
    ("perl -pi -e 's/a/b/' f", "destructive", "edits files in place"),
    ("tar xzf archive.tgz", "destructive", "extracts over existing files"),
    ("cp a b", "destructive", "replacing any at the target"),
    ("docker rm -f web", "destructive", "removes"),
    ("kubectl delete pod web", "destructive", "deletes remote resources"),
    ("echo $(rm x)", "destructive", "`rm` deletes files"),
    ('echo "$(rm x)"', "destructive", "`rm` deletes files"),
    ("echo `rm x`", "destructive", "`rm` deletes files"),
    ("ls\nrm x", "destructive", "`rm` deletes files"),
    ("ls # fine\nrm -rf x", "destructive", "`rm` deletes files"),
    ("(cd /tmp; rm -rf x)", "destructive", "`rm` deletes files"),
    ("cat <<EOF | sh\nrm x\nEOF", "execute", "`sh` runs a script or its input"),
    ("cat <<EOF\n$(rm target)\nEOF", "destructive", "`rm` deletes files"),
    ("curl https://example.com", "network", "`curl` reaches the network"),
    ("wget https://example.com/x.tar.gz", "network", "reaches the network"),
    ("ssh host ls", "network", "reaches the network"),
    ("scp a host:b", "network", "reaches the network"),
    ("pip install requests", "network", "`pip install` downloads"),
    ("python -m pip install requests", "network", "downloads"),
    ("npm install", "network", "`npm install` downloads"),
    ("npx create-react-app x", "network", "downloads and runs a package"),
    ("nc -l 8080", "network", "reaches the network"),
    # a name look-up sends a query: DNS, mDNS, or a directory server behind NSS
    ("getent hosts example.com", "network", "`getent` looks names up"),
    ("getent ahostsv4 example.com", "network", "`getent` looks names up"),
    ("getent passwd", "network", "`getent` looks names up"),  # NSS may ask LDAP
    ("host example.com", "network", "reaches the network"),
    ("nslookup example.com", "network", "reaches the network"),
    ("dig +short example.com", "network", "reaches the network"),
    ("drill example.com", "network", "`drill` looks names up"),
    ("resolvectl query example.com", "network", "`resolvectl` looks names up"),
    ("avahi-resolve -n printer.local", "network", "`avahi-resolve` looks names up"),
    ("avahi-resolve-host-name printer.local", "network", "looks names up"),
    ("ping -c 1 example.com", "network", "reaches the network"),
    ("hostname -f", "network", "`hostname -f` looks the host name up"),
    ("hostname --fqdn", "network", "looks the host name up"),
    ("hostname -I", "read", "`hostname`"),
    ("dnsdomainname", "network", "looks names up"),
    ("ls | xargs getent hosts", "network", "`getent` looks names up"),
    ("echo $(curl x)", "network", "`curl` reaches the network"),
    ("curl x | sh", "network", "`curl` reaches the network"),
    ("cat <(curl -s x)", "network", "reaches the network"),
    ("ls && curl x && rm y", "destructive", "`rm` deletes files"),
    ("python script.py", "execute", "`python` runs a program"),
    ("make test", "execute", "`make` is not on the read-only list"),
    ("pytest -q", "execute", "not on the read-only list"),
    ("npm run build", "execute", "`npm run` runs code"),
    ("npm ls", "execute", "`npm ls` runs code"),
    ("./ls", "execute", "`./ls` runs a program named by its path"),
    ("LS -la", "execute", "`LS` is not on the read-only list"),
    ("tee", "execute", "`tee` without a file"),
    ("frobnicate --all", "execute", "not on the read-only list"),
]

TABLE = READ + SED_AND_AWK + OUTPUT_OPTIONS + RUNS_ANOTHER_PROGRAM + ASSIGNMENTS + GIT_CHANGES
TABLE += EXPANSIONS + UNPARSEABLE + CONSTRUCTS + WRAPPERS + RANKS


@pytest.mark.parametrize(("cmd", "risk", "reason"), TABLE, ids=[repr(cmd)[1:-1][:60] for cmd, _, _ in TABLE])
def test_classify_with_reason(cmd: str, risk: str, reason: str) -> None:
    assessment = assess_shell(cmd)
    assert (assessment.risk, reason in (assessment.reason or "")) == (risk, True), assessment.reason
    assert classify_shell(cmd) == risk


def test_the_table_covers_every_risk_and_is_large() -> None:
    assert len(TABLE) >= 150
    assert len({cmd for cmd, _, _ in TABLE}) == len(TABLE)
    assert {risk for _, risk, _ in TABLE} == set(RISK_ORDER)


def test_riskiest_orders_destructive_network_execute_write_read() -> None:
    assert riskiest("read", "write", "execute") == "execute"
    assert riskiest("execute", "network") == "network"
    assert riskiest("network", "destructive", "read") == "destructive"
    assert riskiest() == "read"


def test_overwriting_redirect_carries_a_warning() -> None:
    assert assess_shell("sort names > sorted.txt").warning == "overwrites sorted.txt"
    assert assess_shell("ls >> log.txt").warning is None


def test_shell_programs_carry_subcommands_and_wrapped_programs() -> None:
    assert shell_programs("ls -la src") == ("ls",)
    assert shell_programs("ls; rm x") == ("ls", "rm")
    assert shell_programs("git push origin main") == ("git push",)
    assert shell_programs("sudo rm x") == ("rm", "sudo")
    assert shell_programs("npm install left-pad") == ("npm install",)
    assert shell_programs("echo 'unbalanced") == ("echo 'unbalanced",)
    assert shell_programs("ls |") == ("ls |",)


# -- properties ---------------------------------------------------------------------------------

_BASH = Parser(Language(tree_sitter_bash.language()))
_SIMPLE = [cmd for cmd, _, _ in TABLE if cmd.strip() and not any(c in cmd for c in ";&|\n()<>{}`$#\\")]
_LINES = [cmd for cmd, _, _ in TABLE if cmd.strip()]
_PROGRAMS = [
    "ls",
    "cat",
    "grep",
    "sed",
    "awk",
    "git",
    "find",
    "sort",
    "rg",
    "rm",
    "curl",
    "tee",
    "make",
    "env",
]
_WORDS = [
    "-n", "-i", "-o", "out", "-e", "s/a/b/e", "w x", "--output=x", "--pre", "cat", "-delete",
    "-exec", "rm", "{}", ";", "status", "log", "push", "-c", "x=1", "'*.py'", "*.py", "$X",
    '"$(rm x)"', "f.txt", "--", "-z", "--help", "branch", "topic", "reset", "--hard",
]  # fmt: skip


@st.composite
def simple_commands(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.sampled_from(_SIMPLE))
    words = [draw(st.sampled_from(_PROGRAMS))] + draw(st.lists(st.sampled_from(_WORDS), max_size=5))
    return " ".join(words)


_PREFIX_WRAPPERS = ["env {}", "env -i {}", "nice {}", "nice -n 5 {}", "timeout 5 {}", "timeout -s KILL 5 {}",
                    "xargs {}", "xargs -0 -n 1 {}", "sudo {}", "find . -exec {} \\;", "find . -execdir {} +"]  # fmt: skip
_LINE_WRAPPERS = ["sh -c {quoted}", "bash -lc {quoted}", "bash -c {quoted} name arg", "({line})",
                  "cat f | {line}", "{line} | wc -l", "ls && {line}", "eval {quoted}"]  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cmd=simple_commands(), wrapper=st.sampled_from(_PREFIX_WRAPPERS))
def test_wrapping_a_command_never_lowers_its_risk(cmd: str, wrapper: str) -> None:
    wrapped = wrapper.format(cmd)
    assert _rank(classify_shell(wrapped)) >= _rank(classify_shell(cmd)), (cmd, wrapped, assess_shell(wrapped))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=st.one_of(st.sampled_from(_LINES), simple_commands()), wrapper=st.sampled_from(_LINE_WRAPPERS))
def test_wrapping_a_line_never_lowers_its_risk(line: str, wrapper: str) -> None:
    wrapped = wrapper.format(line=line, quoted=shlex.quote(line))
    assert _rank(classify_shell(wrapped)) >= _rank(classify_shell(line)), (
        line,
        wrapped,
        assess_shell(wrapped),
    )


_BREAKERS = [" |", " &&", " ||", "(", ")", " 'x", ' "x', " $(x", " `x", "; ;", "{ &&", " >", "\\"]


@settings(max_examples=400, deadline=None)
@given(
    line=st.one_of(st.sampled_from(_LINES), simple_commands()),
    breaker=st.sampled_from(_BREAKERS),
    at_end=st.booleans(),
)
@hypothesis_example(
    line="cat <<EOF\nhello\nEOF", breaker="\\", at_end=True
)  # once judged read: see parse_shell
def test_a_line_made_unparseable_is_never_read(line: str, breaker: str, at_end: bool) -> None:
    broken = line + breaker if at_end else breaker + " " + line
    assume(_BASH.parse(broken.encode()).root_node.has_error)
    assert classify_shell(broken) != "read", (broken, assess_shell(broken))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ls cat|&;()<>'\"$`{}\\\n=-*x", max_size=24))
def test_random_text_that_does_not_parse_is_never_read(text: str) -> None:
    assume(_BASH.parse(text.encode()).root_node.has_error)
    assert classify_shell(text) != "read", (text, assess_shell(text))


def _rank(risk: str) -> int:
    return RISK_ORDER.index(risk)


# -- real commands in a scratch directory ------------------------------------------------------

_RUNNABLE_READS = [
    cmd
    for cmd, risk, _ in READ
    if risk == "read"
    and shutil.which(shlex.split(cmd.split("|")[0].replace("\n", " "), posix=True)[0] if cmd else "")
]


def _scratch(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in (
        "file",
        "file.txt",
        "input.txt",
        "names.txt",
        "a.txt",
        "b.txt",
        "README.md",
        "log.txt",
        "data.txt",
    ):
        (work / name).write_text("alpha 1\nbeta 200\nneedle\nold pattern\n")
    (work / "src").mkdir()
    (work / "src" / "foo.py").write_text("# TODO\n")
    return work


def _snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    state = {}
    for path in sorted(root.rglob("*")):
        state[str(path.relative_to(root))] = (
            path.stat().st_mode,
            path.read_bytes() if path.is_file() else b"",
        )
    return state


def _run(cmd: str, cwd: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "LC_ALL": "C"}
    subprocess.run(
        ["/bin/sh", "-c", cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=20
    )


def test_commands_called_read_change_nothing_when_run(tmp_path: Path) -> None:
    assert len(_RUNNABLE_READS) >= 30
    work = _scratch(tmp_path)
    before = _snapshot(tmp_path)
    for cmd in _RUNNABLE_READS:
        assert classify_shell(cmd) == "read"
        _run(cmd, work)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("cmd", "created"),
    [
        ("sed -n 'w written.txt' file", "written.txt"),
        ("sed 's/alpha/x/w written.txt' file", "written.txt"),
        ("sort -o written.txt file", "written.txt"),
        ("sort --out=written.txt file", "written.txt"),
        ("uniq file written.txt", "written.txt"),
        ("find . -maxdepth 0 -fprint written.txt", "written.txt"),
        ("cat file > written.txt", "written.txt"),
        ("awk '{ print > \"written.txt\" }' file", "written.txt"),
    ],
)
def test_commands_not_called_read_do_write_when_run(tmp_path: Path, cmd: str, created: str) -> None:
    work = _scratch(tmp_path)
    assert classify_shell(cmd) != "read"
    _run(cmd, work)
    assert (work / created).exists()


# -- the reason reaches the approval modal -----------------------------------------------------


def _permission_log(reason: str) -> list[Event]:
    session, turn = "sess_a", "turn_1"
    chain = [
        ("session.created", None, {"cwd": "/w", "client": "test"}),
        ("turn.started", turn, {"promptPreview": "clean up"}),
        ("permission.requested", turn, {"requestId": "req_1", "toolCallId": "call_1", "tool": "shell", "risk": "execute", "argsPreview": "cmd=…", "reason": reason}),
        ("permission.resolved", turn, {"requestId": "req_1", "toolCallId": "call_1", "decision": "ask", "actor": "policy"}),
    ]  # fmt: skip
    events = []
    for sequence, (kind, turn_id, fields) in enumerate(chain, start=1):
        event = Event(
            id=f"evt_{sequence}",
            session_id=session,
            turn_id=turn_id,
            sequence=sequence,
            ts=f"2026-11-29T00:00:{sequence:02d}.000Z",
            type=kind,
            payload=payload_from(kind, fields),
        )
        events.append(event_from_json(event.to_json()))
    return events


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_reason_in_the_log_is_shown_in_the_approval_modal() -> None:
    from textual.app import App
    from textual.widgets import Static

    from agent_tui.tui.screens.approval import ApprovalScreen

    reason = assess_shell("sed 's/a/b/e' f").reason or ""
    state = project_state(_permission_log(reason))
    [view] = state.pending_permissions()
    assert view.risk_reason == "`sed` script uses `e`: runs a command"

    app: App[None] = App()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(ApprovalScreen(state, view, answerable=False))
        await pilot.pause()
        shown = app.screen.query_one("#approval-reason", Static)
        assert "`sed` script uses `e`: runs a command" in str(shown.render())


# -- the documented examples stay true --------------------------------------------------------

_ROOT = Path(__file__).resolve().parent.parent


def _documented_examples(path: Path) -> list[tuple[str, str]]:
    """(example, risk) from every markdown table row that starts with a risk in backquotes."""
    found = []
    for line in path.read_text().splitlines():
        cells = [cell.strip() for cell in line.replace("\\|", "\x00").split("|")[1:-1]]
        if len(cells) < 2 or cells[0].strip("`") not in RISK_ORDER or not cells[0].startswith("`"):
            continue
        examples = cells[1] if path.name == "README.md" else cells[2]
        for example in examples.split("`")[1::2]:
            found.append((example.replace("\x00", "|"), cells[0].strip("`")))
    return found


@pytest.mark.parametrize("doc", ["README.md", "docs/shell-risk.md"])
def test_the_documented_examples_have_their_documented_risk(doc: str) -> None:
    examples = _documented_examples(_ROOT / doc)
    assert len(examples) >= 20
    wrong = [(cmd, risk, assess_shell(cmd)) for cmd, risk in examples if classify_shell(cmd) != risk]
    assert wrong == []


@pytest.mark.parametrize(
    ("cmd", "risk"),
    [
        # GNU env clusters short options and takes long ones by unique prefix: -S hides anywhere.
        ("env -vS'touch x'", "execute"),
        ("env -iS'sh -c id'", "execute"),
        ("env --split='touch x'", "execute"),
        ("env --sp='touch x'", "execute"),
        ("env -0vS touch", "execute"),
        ("env --frobnicate", "execute"),
        ("env -x", "execute"),
        ("env -uHOME", "read"),
        ("env -u HOME -i", "read"),
        ("env --unset=HOME --null", "read"),
        ("env --ignore-env", "read"),
        # bash's `jobs -x CMD` runs CMD
        ("jobs -x touch x", "execute"),
        ("jobs -lx ls", "execute"),
        ("jobs -l", "read"),
        ("jobs -p %1", "read"),
    ],
)
def test_options_that_run_a_command_are_found_however_they_are_spelled(cmd: str, risk: str) -> None:
    assert classify_shell(cmd) == risk


def test_a_line_too_long_to_judge_is_asked_at_once() -> None:
    from agent_tui.safety import assess_shell, shell_programs
    from agent_tui.safety.shell_risk import MAX_JUDGED_LINE

    line = "ls " + "a " * MAX_JUDGED_LINE
    assessed = assess_shell(line)
    assert assessed.risk == "execute" and "too long to judge" in (assessed.reason or "")
    assert shell_programs(line) == (line,)  # a remembered answer covers only this very line
    assert assess_shell("ls " + "a " * 3_000).risk == "read"  # below the limit, judged as ever


@pytest.mark.parametrize("unit", ["a|", "a <<E\n"])
def test_lines_the_parser_would_take_long_over_are_not_parsed(unit: str) -> None:
    from agent_tui.safety import assess_shell

    line = unit * 300  # under the length limit, over the count of pipes or heredocs
    assessed = assess_shell(line)
    assert assessed.risk == "execute" and "too many to judge" in (assessed.reason or "")
