"""The attacks on `read` run for real: `agent-tui run SCENARIO --approve deny`.

`read` is allowed by the default policy without asking, so under `--approve deny` whatever runs
ran by policy alone. Each case is one session with one `shell` call that would create its own
marker file (outside the workspace) if it ran. Under `deny` no marker may appear and the log
must show the call asked and denied; the same scenario under `allow` creates every marker, so
each case is a real attack and not a command that could never have worked. A control case that
really is `read` runs under `deny` too, so the run does execute allowed commands.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson
import pytest
from support_providers import agent_tui, clean_env

from agent_tui.replay.sources import replay_all

_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}

# (case, kind of workspace, command); `{m}` is the case's marker file. `ws` is a repository with
# a hostile bare repository `evil` (core.worktree=.., core.fsmonitor) and a hostile nested
# repository `hostile-inner` in it; `hostile` is a repository whose own .git/config has
# core.fsmonitor; `textconv` selects a textconv driver from .gitattributes; `hooked` has only
# a post-index-change hook.
ATTACKS = [
    ("backquote-in-heredoc", "ws", "cat <<EOF\nhi `touch {m}`\nEOF"),
    ("backquote-in-dash-heredoc", "ws", "cat <<-EOF\n\t`touch {m}`\n\tEOF"),
    ("backquote-grep-heredoc", "ws", 'grep a <<EOF\n"`touch {m}` a"\nEOF'),
    ("heredoc-in-pipeline", "ws", "cat <<EOF | grep -c x\n`touch {m}`\nEOF"),
    ("backquote-across-lines", "ws", "cat <<EOF\n`\ntouch {m}\n`\nEOF"),
    ("continued-dollar-paren", "ws", "cat <<EOF\na$\\\n(touch {m})\nEOF"),
    ("second-heredoc-unquoted", "ws", "cat <<'A'\nx\nA\ncat <<B\n`touch {m}`\nB"),
    ("partly-quoted-delimiter", "ws", 'cat <<E"O"F\nEOF\ntouch {m}\nE"O"F'),
    ("git-dir-bare-fsmonitor", "ws", "git --git-dir=evil --work-tree=. diff"),
    ("git-dir-status", "ws", "git --git-dir=evil --work-tree=. status --short"),
    ("cd-into-bare-repository", "ws", "cd evil && git --work-tree=.. diff"),
    ("git-C-hostile", "ws", "git -C hostile-inner status"),
    ("cd-into-hostile", "ws", "cd hostile-inner && git status"),
    ("own-config-fsmonitor", "hostile", "git status"),
    ("own-config-diff", "hostile", "git diff"),
    ("own-config-textconv", "textconv", "git diff"),
    ("hook-on-index-refresh", "hooked", "git diff"),
    ("env-clustered-split", "ws", "env -vS'touch {m}'"),
    ("env-split-by-prefix", "ws", "env --split='touch {m}'"),
    ("env-ignore-and-split", "ws", "env -iS'sh -c \"touch {m}\"'"),
]


def _git(cwd: Path, *args: str) -> None:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=clean_env(**_GIT_ENV), capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, (args, done.stderr)


def _repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "-b", "main", ".")
    (path / "a.txt").write_text("a one\n")
    _git(path, "add", "a.txt")
    _git(path, "commit", "-q", "-m", "first")
    (path / "a.txt").write_text("a two\n")
    return path


def _program(path: Path, marker: Path, then: str) -> Path:
    path.write_text(f"#!/bin/sh\ntouch {marker}\n{then}\n")
    path.chmod(0o755)
    return path


def _workspace(root: Path, kind: str, marker: Path) -> Path:
    """A fresh workspace of `kind` for one case, whose hostile config makes only its marker."""
    path = root / f"{kind}-{marker.name}"
    repo = _repository(path)
    if kind == "ws":
        _git(root, "init", "-q", "--bare", str(repo / "evil"))
        _git(repo / "evil", "config", "core.worktree", "..")
        _git(
            repo / "evil", "config", "core.fsmonitor", str(_program(repo / "evil" / "w.sh", marker, "exit 1"))
        )
        inner = _repository(repo / "hostile-inner")
        _git(inner, "config", "core.fsmonitor", str(_program(inner / ".git" / "w.sh", marker, "exit 1")))
    elif kind == "hostile":
        _git(repo, "config", "core.fsmonitor", str(_program(repo / ".git" / "w.sh", marker, "exit 1")))
    elif kind == "hooked":  # no config at all: a hook git runs when `git diff` refreshes the index
        (path / "same.txt").write_text("same\n")
        _git(path, "add", "same.txt")
        _git(path, "commit", "-q", "-m", "same")
        os.utime(path / "same.txt", (1, 1))
        _program(repo / ".git" / "hooks" / "post-index-change", marker, "exit 0")
    elif kind == "textconv":
        (repo / ".gitattributes").write_text("*.txt diff=evil\n")
        _git(repo, "config", "diff.evil.textconv", str(_program(repo / ".git" / "c.sh", marker, 'cat "$1"')))
    return path


def _scenario(root: Path, markers: Path, cases: list[tuple[str, str, str]]) -> Path:
    sessions = []
    for name, kind, cmd in cases:
        marker = markers / name
        workspace = _workspace(root, kind, marker)
        call = {"tool": "shell", "args": {"cmd": cmd.format(m=marker)}}
        steps = [{"text": ["trying"], "toolCalls": [call]}, {"text": ["done"]}]
        sessions.append({"title": name, "cwd": workspace.name, "prompt": name, "steps": steps})
    path = root / "scenario.json"
    path.write_bytes(orjson.dumps({"sessions": sessions}))
    return path


def _run(
    tmp_path: Path, approve: str, cases: list[tuple[str, str, str]]
) -> tuple[Path, dict[str, dict[str, object]]]:
    root = tmp_path / approve
    markers = root / "markers"
    markers.mkdir(parents=True)
    scenario = _scenario(root, markers, cases)
    out = root / "sessions"
    # The sandbox off: these runs judge the classifier alone (the first line). With the sandbox on,
    # a misjudged command could not write its marker outside the workspace, and a regression of
    # the classifier would pass unseen; and under `allow` the attacks could not show they are real.
    config = root / "no-sandbox.toml"
    config.write_text("[sandbox]\nenabled = false\n")
    env = clean_env(**_GIT_ENV, HOME=str(root), AGENT_TUI_CONFIG=str(config))
    result = agent_tui("run", str(scenario), "--sessions-dir", str(out), "--approve", approve, env=env)
    assert result.returncode == 0, result.stderr
    outcome: dict[str, dict[str, object]] = {}
    titles: dict[str, str] = {}
    for event in replay_all(out, "strict"):
        payload = event.payload
        if event.type == "session.created":
            titles[event.session_id] = str(payload["title"])
            continue
        seen = outcome.setdefault(titles[event.session_id], {})
        if event.type == "permission.requested":
            seen["risk"], seen["reason"] = payload["risk"], payload["reason"]
        elif event.type == "permission.resolved":
            seen["decision"], seen["actor"] = payload["decision"], payload["actor"]
        elif event.type in ("tool.completed", "tool.failed"):
            seen["ended"] = event.type if event.type == "tool.completed" else payload["errorCode"]
    return markers, outcome


def test_attacks_on_read_are_asked_and_denied_and_run_nothing(tmp_path: Path) -> None:
    markers, outcome = _run(tmp_path, "deny", ATTACKS)
    assert sorted(path.name for path in markers.iterdir()) == []
    for name, _, _ in ATTACKS:
        seen = outcome[name]
        assert seen["risk"] != "read", (name, seen)
        assert (seen["decision"], seen["actor"], seen["ended"]) == ("deny", "user", "permission_denied"), (
            name,
            seen,
        )


FSMONITOR_ATTACKS = {
    "git-dir-bare-fsmonitor",
    "git-dir-status",
    "cd-into-bare-repository",
    "git-C-hostile",
    "cd-into-hostile",
    "own-config-fsmonitor",
    "own-config-diff",
}
"""The attacks through `core.fsmonitor`: even allowed, the hardened git of every shell command
(`core.fsmonitor=false` through `GIT_CONFIG_COUNT`) starts no fsmonitor program, a second line
behind the classifier. That each of them runs its program under plain git is shown in
test_repository_check.py."""


def test_the_same_attacks_do_run_when_allowed(tmp_path: Path) -> None:
    markers, outcome = _run(tmp_path, "allow", ATTACKS)
    ran = sorted(path.name for path in markers.iterdir())
    assert ran == sorted(name for name, _, _ in ATTACKS if name not in FSMONITOR_ATTACKS)
    assert all(seen["ended"] == "tool.completed" for seen in outcome.values()), outcome


@pytest.mark.parametrize(
    ("name", "workspace", "cmd"),
    [
        ("quoted-heredoc", "ws", "cat <<'EOF'\n`touch {m}` $(touch {m})\nEOF"),
        ("plain-git", "ws", "git status --short && git diff --stat && git log --oneline -1"),
    ],
)
def test_real_reads_still_run_without_asking(tmp_path: Path, name: str, workspace: str, cmd: str) -> None:
    markers, outcome = _run(tmp_path, "deny", [(name, workspace, cmd)])
    assert outcome[name]["risk"] == "read"
    assert (outcome[name]["decision"], outcome[name]["actor"]) == ("allow", "policy")
    assert outcome[name]["ended"] == "tool.completed"
    assert not (markers / name).exists()
