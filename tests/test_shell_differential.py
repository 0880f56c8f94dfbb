"""Differential: whatever the classifier calls `read` is run for real, and must only read.

A seeded generator builds a few hundred command lines from the read-only programs and their
options, writers and runners, heredocs (every delimiter form, `<<-`, bodies with backquotes,
`$(…)`, `${x:=…}`, `$((x=1))`, line continuations, lines that look like the delimiter),
here-strings, substitutions, redirections, `[[ … ]]` tests, and git in every form (plain reads,
`-C`, `--git-dir`, `-c`, `cd` first, `GIT_DIR=`). Each line is classified as the shell tool does
(with the look at the session's repository) in one of two directories: a real repository with
a hostile bare repository (`core.worktree=..`, `core.fsmonitor`) and a hostile nested repository
inside it, a repository whose own config has `core.fsmonitor`, or one with only a
`post-index-change` hook (which `git diff` runs when it refreshes the index).

Every line judged `read` then runs in a bubblewrap sandbox (read-only file system but the
scratch directory, no network, own pids) under strace (see `tests/shell_sandbox.py`): it must
write nothing (but git's refresh of its own index), start only the programs it names, and
open no network socket. The environment
is the one the shell tool's commands get for git (`GIT_OPTIONAL_LOCKS=0`, no global or system
git config), without the config overrides that would hide a misjudged repository.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path

import pytest
from shell_sandbox import Behaviour, SandboxEnvironment, run_lines

from agent_tui.engine.tools.repository_check import repository_check
from agent_tui.safety import assess_shell, shell_programs
from agent_tui.safety.program_rules import READ_ONLY

_SEED = 19
_LINES = 600

_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}

# `{p}` is a file the line must never create; `hostid` is a program it must never start.
_SUBSTITUTIONS = [
    "$(hostid)", "`hostid`", "$(touch {p})", "`touch {p}`", "${{x:=1}}", "$((x=1))", "${{x[$(hostid)]}}",
    "$(( 1 + 2 ))", "$HOME", "\\$(hostid)", "\\`hostid\\`", "'$(hostid)'", "<(hostid)", "$'\\x41'", "${{x@P}}",
]  # fmt: skip
_ARGUMENTS = {
    "ls": ["", "-la", "-1", "src", "-R", "*.txt", "-d src", "--color=never"],
    "cat": ["a.txt", "a.txt b.txt", "-n notes.md", "src/*.py", "-A a.txt"],
    "head": ["-n 2 a.txt", "-c 5 b.txt", "-2 notes.md"],
    "tail": ["-n 1 a.txt", "-3 notes.md", "-c 4 b.txt"],
    "wc": ["-l a.txt", "-c *.txt", "-w notes.md"],
    "sort": ["a.txt", "-r b.txt", "-u a.txt b.txt", "-o out.txt a.txt", "--out=out.txt a.txt", "-k2 -n a.txt",
             "--compress-program=hostid a.txt", "-roout.txt a.txt", "-- -o out.txt"],
    "uniq": ["a.txt", "-c a.txt", "a.txt out.txt"],
    "grep": ["-n one a.txt", "-r two .", "-c x notes.md", "-l one a.txt b.txt", "-E 'o+' a.txt"],
    "sed": ["-n 1p a.txt", "'s/one/1/' a.txt", "-n '/two/p' b.txt", "'s/a/b/w out.txt' a.txt", "'1e hostid' a.txt",
            "-i 's/a/b/' a.txt", "'w out.txt' a.txt", "-n '$p' a.txt", "'y/abc/xyz/' a.txt", "-e 's/x/y/' -e 2q a.txt",
            "'s/o/0/e' a.txt", "--in-pl 's/a/b/' a.txt"],
    "awk": ["'{print $1}' a.txt", "-F: '{print NF}' a.txt", "'BEGIN{system(\"hostid\")}'", "'{print > \"out.txt\"}' a.txt",
            "'NR==1' a.txt", "'{print | \"hostid\"}' a.txt", "'BEGIN { \"hostid\" | getline x }'"],
    "find": [". -name '*.txt'", ". -type f -newer a.txt", "src -maxdepth 1", ". -name '*.py' -print0",
             ". -name nothing -delete", ". -maxdepth 1 -exec hostid \\;", ". -maxdepth 0 -fprint out.txt", ". -maxdepth 1 -ls"],
    "cut": ["-d' ' -f1 a.txt", "-c1-3 b.txt"],
    "tr": ["a-z A-Z", "-d o"],
    "diff": ["a.txt b.txt", "-u a.txt b.txt"],
    "echo": ["hello", "'a b'", "\"quoted\""],
    "printf": ["'%s\\n' x", "-v x y", "'%d\\n' 3"],
    "stat": ["-c %s a.txt"],
    "basename": ["src/foo.py"],
    "dirname": ["src/foo.py"],
    "realpath": ["a.txt"],
    "readlink": ["-f a.txt"],
    "jq": ["'.a' data.json", ". data.json"],
    "od": ["-c a.txt"],
    "rev": ["a.txt"],
    "tac": ["a.txt"],
    "nl": ["a.txt"],
    "fold": ["-w 3 a.txt"],
    "column": ["-t a.txt"],
    "date": ["+%Y", "-d @0 +%s"],
        "uname": ["-a"],
    "pwd": [""],
    "test": ["-f a.txt", "-v 'a[$(hostid)]'", "1 -eq 1"],
    "[": ["-d src ]", "-v 'a[$(hostid)]' ]", "-n x ]"],
    "[[": ["-f a.txt ]]", "'a[$(hostid)]' -eq 1 ]]", "x -lt 2 ]]", "-v 'a[`hostid`]' ]]"],
    "seq": ["3"],
    "expr": ["1 + 2"],
    "cmp": ["a.txt b.txt"],
    "comm": ["a.txt b.txt"],
    "paste": ["a.txt b.txt"],
    "tee": ["out.txt", "-a out.txt", ""],
    "touch": ["{p}"],
    "mkdir": ["newdir"],
    "rm": ["-f {p}"],
    "cp": ["a.txt c.txt"],
    "file": ["a.txt", "-z a.txt"],
    "env": ["", "hostid"],
    "declare": ["-i TZ='a[$(hostid)]'", "-x TZ=UTC", "-n TZ='a[`hostid`]'", "-a TZ='([$(hostid)]=1)'"],
    "export": ["TZ=UTC", "LC_ALL='a[$(hostid)]'", "-p"],
    "readonly": ["TZ=UTC"],
    "xargs": ["echo"],
    "git": ["status", "status --short", "log --oneline -3", "log -p -1", "diff", "diff --stat", "diff HEAD~1",
            "show --stat HEAD", "blame a.txt", "ls-files", "rev-parse HEAD", "grep -n one", "branch", "branch -a",
            "tag --list", "describe --always", "log --format='%h %s' -2", "-C hostile-inner status",
            "--git-dir=evil --work-tree=. diff", "--git-dir=evil --work-tree=. status", "-c core.fsmonitor=hostid status",
            "log --output=out.txt -1", "diff --ext-diff", "--no-pager log -1", "cat-file -p HEAD", "ls-tree HEAD",
            "count-objects -v", "status --porcelain", "stash list", "remote -v", "config --get user.name",
            "for-each-ref", "show-ref", "rev-list --count HEAD", "diff --no-index a.txt b.txt", "-C . status",
            "--work-tree=.. status", "--bare log", "show --textconv HEAD:a.txt", "grep -O hostid one", "-p log -1",
            "log --show-signature -1", "branch topic", "tag v1"],
}  # fmt: skip
_STDIN_READERS = ["cat", "grep -c a", "wc -l", "sort", "head -1", "tr a b", "sed -n p", "cat -"]
_REDIRECTS = [" 2>/dev/null", " > out.txt", " >> out.txt", " < a.txt", " 2>&1", " >/dev/null", " >&2"]
_PREFIXES = ["cd src && ", "cd evil && ", "cd hostile-inner && ", "LC_ALL=C ", "GIT_DIR=evil ", "x=1; ",
             "GIT_EXTERNAL_DIFF=hostid ", "pushd src >/dev/null && ", "cd . && "]  # fmt: skip
_BODIES = [
    "plain text",
    "two words",
    "EOF ",
    " EOF",
    "\tEOF",
    "EO\\\nF",  # bash joins the two lines into the delimiter; sh does not
    "x\\",
    "a$\\\n(hostid)",
    "`\nhostid\n`",
    "\\\\`hostid`",
    "$",
]


def _word(rng: random.Random, marker: Path) -> str:
    program = "git" if rng.random() < 0.3 else rng.choice(sorted(_ARGUMENTS))
    arguments = rng.choice(_ARGUMENTS[program])
    if rng.random() < 0.1:
        arguments += " " + rng.choice(_SUBSTITUTIONS).format(p=marker)
    return f"{program} {arguments}".strip().replace("{p}", str(marker))


def _heredoc(rng: random.Random, marker: Path) -> str:
    reader = rng.choice(_STDIN_READERS)
    written, end = rng.choice(
        [("EOF", "EOF"), ("'EOF'", "EOF"), ('"EOF"', "EOF"), ("\\EOF", "EOF"), ('E"O"F', "EOF"),
         ("$'EOF'", "EOF"), ("'E O'", "E O"), ("END_1", "END_1")]
    )  # fmt: skip
    dash = rng.random() < 0.3
    indent = "\t" if dash else ""
    risky = _BODIES + [payload.format(p=marker) for payload in _SUBSTITUTIONS]
    plain = ["plain text", "a line, with: punctuation!", "x=1 and 'quotes' and \"more\"", "50% done"]
    lines = [indent + rng.choice(risky if rng.random() < 0.5 else plain) for _ in range(rng.randint(1, 3))]
    after = rng.choice(["", " | grep -v x", " | wc -c", " && echo done", " 2>/dev/null"])
    tail = rng.choice(["", "", f"\ntouch {marker}", "\nhostid", "\nls"])
    operator = "<<-" if dash else "<<"
    return f"{reader} {operator}{written}{after}\n" + "\n".join(lines) + f"\n{indent}{end}{tail}"


def _segment(rng: random.Random, marker: Path) -> str:
    kind = rng.random()
    if kind < 0.25:
        return _heredoc(rng, marker)
    if kind < 0.32:
        payload = rng.choice(["hello", '"a b"', "'$(hostid)'", *_SUBSTITUTIONS]).format(p=marker)
        return f"{rng.choice(_STDIN_READERS)} <<< {payload}"
    segment = _word(rng, marker)
    if rng.random() < 0.25:
        segment += rng.choice(_REDIRECTS)
    return segment


# Lines that once were, or nearly were, misjudged: always among the generated ones, so a
# regression runs them (and is caught) whatever the seed draws.
_KNOWN = [
    "cat <<EOF\nhi `hostid`\nEOF",
    "cat <<-EOF\n\t`hostid`\n\tEOF",
    'grep a <<EOF\n"`hostid`"\nEOF',
    "cat <<EOF | grep -c x\n`hostid`\nEOF",
    "cat <<EOF\n`\nhostid\n`\nEOF",
    "cat <<EOF\na$\\\n(hostid)\nEOF",
    "cat <<EOF\nEO\\\nF\nhostid\nEOF",
    'cat <<E"O"F\nEOF\nhostid\nE"O"F',
    "cat <<$'EOF'\nEOF\nhostid\n$'EOF'",
    "cat <<'A'\nx\nA\ncat <<B\n`hostid`\nB",
    "[[ 'a[$(hostid)]' -eq 1 ]] && ls",
    "[ -v 'a[$(hostid)]' ] && ls",
    "declare -i LC_ALL='a[$(hostid)]'",
    "declare -n TZ='a[$(hostid)]'; echo $TZ",
    "git --git-dir=evil --work-tree=. diff",
    "git --git-dir=evil --work-tree=. status",
    "cd evil && git --work-tree=.. status",
    "git -C hostile-inner status",
    "cd hostile-inner && git status",
    "git status",
    "git diff",
]


def generate(count: int, marker: Path) -> list[str]:
    rng = random.Random(_SEED)
    lines: list[str] = list(_KNOWN)
    while len(lines) < count:
        parts = [_segment(rng, marker) for _ in range(rng.choice([1, 1, 2, 3]))]
        line = parts[0]
        for part in parts[1:]:
            line += rng.choice([" && ", " || ", "; ", " | ", "\n"]) + part
        if rng.random() < 0.15:
            line = rng.choice(_PREFIXES) + line
        if line not in lines:
            lines.append(line)
    return lines


# -- the scratch directory ---------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.devnull, **_GIT_ENV}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, (args, done.stderr)


def _hostile(git_dir: Path, marker: Path) -> None:
    watch = git_dir / "watch.sh"
    watch.write_text(f"#!/bin/sh\ntouch {marker}\nhostid >/dev/null\nexit 1\n")
    watch.chmod(0o755)
    _git(git_dir, "config", "core.fsmonitor", str(watch))


def _repository(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "src").mkdir()
    (path / "a.txt").write_text("one two\nthree four\none again\n")
    (path / "b.txt").write_text("alpha\nbeta two\n")
    (path / "notes.md").write_text("# notes\nx marks\n")
    (path / "data.json").write_text('{"a": 1}\n')
    (path / "src" / "foo.py").write_text("x = 1\n")
    _git(path, "init", "-q", "-b", "main", ".")
    _git(path, "add", ".")
    _git(path, "commit", "-q", "-m", "first")
    (path / "a.txt").write_text("one two\nthree four\none again\nmore\n")
    _git(path, "commit", "-q", "-am", "second")
    (path / "b.txt").write_text("alpha\nbeta two\nchanged\n")  # a change for status and diff
    (path / "untracked.txt").write_text("new\n")
    for name in ("notes.md", "data.json", "src/foo.py"):
        os.utime(path / name, (1, 1))  # a stale stat: git refreshes its index (and runs hooks)
    return path


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> SandboxEnvironment:
    root = tmp_path_factory.mktemp("differential") / "scratch"
    root.mkdir()
    marker = root / "PWNED"
    repo = _repository(root / "repo")
    _git(root, "init", "-q", "--bare", str(repo / "evil"))
    _git(repo / "evil", "config", "core.worktree", "..")
    _hostile(repo / "evil", marker)
    inner = _repository(repo / "hostile-inner")
    _hostile(inner / ".git", marker)
    hostile = _repository(root / "hostile")
    _hostile(hostile / ".git", marker)
    hooked = _repository(root / "hooked")  # no config at all, only a hook
    hook = hooked / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nhostid >/dev/null\n")
    hook.chmod(0o755)
    (root / "home").mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root / "home"),
        "LC_ALL": "C",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    return SandboxEnvironment(root, env)


def _judged_read(sandbox: SandboxEnvironment) -> list[tuple[str, Path]]:
    marker = sandbox.scratch / "PWNED"
    rng = random.Random(_SEED + 1)
    reads = []
    for line in generate(_LINES, marker):
        cwd = sandbox.scratch / rng.choice(["repo", "repo", "repo", "repo", "hostile", "hooked"])
        if assess_shell(line, repository_check(cwd)).risk == "read":
            reads.append((line, cwd))
    return reads


_READ_PROGRAMS = set(READ_ONLY) | {"git", "sed", "awk", "find", "env", "declare", "export", "readonly"}


def _named(line: str) -> set[str]:
    """The programs a line may start: those it names that are read-only ones, and its shell."""
    named = {label.split(" ")[0].rsplit("/", 1)[-1] for label in shell_programs(line)}
    return (named & _READ_PROGRAMS) | {"sh", "dash", "bash"}


# `git diff` and `git status` refresh the stat cache of the index (`.git/index.lock`, renamed
# over `.git/index`) even with GIT_OPTIONAL_LOCKS=0: git's own cache, no tracked content. That
# is the one write a git read may do (and why a hook it runs then is a reason, see
# repository_check).
_INDEX_REFRESH = re.compile(
    r'^(openat\(AT_FDCWD, "[^"]*/\.git/index\.lock", O_RDWR\|O_CREAT\|O_EXCL\|O_CLOEXEC, 0666\)'
    r'|rename\("[^"]*/\.git/index\.lock", "[^"]*/\.git/index"\)'
    r'|unlink\("[^"]*/\.git/index\.lock"\))'
)


def _misdeeds(line: str, behaviour: Behaviour) -> list[str]:
    named = _named(line)
    found = [f"started `{program}`" for program in sorted(behaviour.programs - named)]
    if behaviour.killed:
        found.append("still running at the time limit")
    writes = [call for call in behaviour.writes if not ("git" in named and _INDEX_REFRESH.match(call))]
    return found + [f"wrote: {call}" for call in writes] + [f"network: {n}" for n in behaviour.network]


@pytest.mark.slow
@pytest.mark.parametrize("shell", ["/bin/sh", "/bin/bash"])  # the shell tool's, and the richer one
def test_every_line_judged_read_only_reads_when_run(scratch: SandboxEnvironment, shell: str) -> None:
    reads = _judged_read(scratch)
    assert len(reads) >= 120, f"only {len(reads)} of {_LINES} generated lines were judged read"
    assert sum("<<" in line for line, _ in reads) >= 20  # heredocs and here-strings among them
    assert sum("git " in line for line, _ in reads) >= 15
    behaviours = run_lines(scratch, reads, shell)
    wrong = {
        f"{line!r} in {cwd.name}": misdeeds
        for (line, cwd), behaviour in zip(reads, behaviours, strict=True)
        if (misdeeds := _misdeeds(line, behaviour))
    }
    assert wrong == {}
    assert not (scratch.scratch / "PWNED").exists()
    ran = sum(bool(behaviour.programs) for behaviour in behaviours)
    assert ran >= len(reads) // 2  # the lines really ran (builtins-only lines start nothing)


def test_the_sandbox_sees_what_misjudged_lines_would_do(scratch: SandboxEnvironment) -> None:
    """The watch can fail: lines that are not read, run the same way, are caught."""
    marker = scratch.scratch / "PWNED"
    repo, hostile = scratch.scratch / "repo", scratch.scratch / "hostile"
    cases = [
        ("cat <<EOF\nhi `hostid`\nEOF", repo, "started `hostid`"),
        (f"cat <<EOF\n$(touch {marker})\nEOF", repo, "wrote"),
        ("sort -o out.txt a.txt", repo, "wrote"),
        ("echo x >> out.txt", repo, "wrote"),
        ("git status", hostile, "started `watch.sh`"),
        ("git --git-dir=evil --work-tree=. status", repo, "started `watch.sh`"),
        ("git diff", scratch.scratch / "hooked", "started `post-index-change`"),
        ("python3 -c 'import socket; socket.socket().connect((\"127.0.0.1\", 9))'", repo, "network"),
    ]
    behaviours = run_lines(scratch, [(cmd, cwd) for cmd, cwd, _ in cases])
    for (cmd, cwd, expected), behaviour in zip(cases, behaviours, strict=True):
        misdeeds = _misdeeds(cmd, behaviour)
        assert any(expected in misdeed for misdeed in misdeeds), (cmd, misdeeds)
        assert assess_shell(cmd, repository_check(cwd)).risk != "read"
    marker.unlink(missing_ok=True)
