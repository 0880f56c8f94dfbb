"""Reads of what is not the session's, run for real: `agent-tui run SCENARIO --approve deny`.

`read` runs without asking under the default policy, so under `deny` whatever runs ran by
policy alone. The home holds a Codex login and a file outside the workspace, each with a secret;
each case is one session with one `shell` call that would print a secret. Under `deny` the call
must be asked and denied and no secret may reach the log; under `allow` each one does print it,
so every case is a real leak and not a command that could never have worked.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from support_providers import agent_tui, clean_env

from agent_tui.replay.sources import replay_all

SECRET = "sk-test-secret-5f0c1a"

# (case, command, sandbox on); `{h}` is the home. (`..` is in test_read_scope.py: a run works
# on a scratch copy of the workspace, which lies elsewhere.)
CASES = [
    ("store-by-tilde", "cat ~/.codex/auth.json", False),
    ("store-by-glob", "cat ~/.cod*/auth.*", False),
    ("store-after-cd", "cd ~ && cat .codex/auth.json", False),
    ("store-in-sandbox", "cat {h}/.codex/auth.json", True),
    ("outside-by-name", "cat {h}/notes/private.txt", False),
    ("outside-after-cd", "cd {h}/notes && cat private.txt", False),
]


def _run(tmp_path: Path, approve: str, sandbox: bool) -> tuple[dict[str, dict[str, object]], str]:
    home = tmp_path / approve / ("sandboxed" if sandbox else "bare")
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text(f'{{"OPENAI_API_KEY": "{SECRET}"}}\n')
    (home / "notes").mkdir()
    (home / "notes" / "private.txt").write_text(f"{SECRET}\n")
    (home / "scenario" / "ws").mkdir(parents=True)
    sessions = []
    for name, cmd, sandboxed in CASES:
        if sandboxed != sandbox:
            continue
        call = {"tool": "shell", "args": {"cmd": cmd.format(h=home)}}
        steps = [{"text": ["trying"], "toolCalls": [call]}, {"text": ["done"]}]
        sessions.append({"title": name, "cwd": "ws", "prompt": name, "steps": steps})
    scenario = home / "scenario" / "scenario.json"
    scenario.write_bytes(orjson.dumps({"sessions": sessions}))
    config = home / "config.toml"
    config.write_text(f"[sandbox]\nenabled = {'true' if sandbox else 'false'}\n")
    out = tmp_path / approve / f"sessions-{sandbox}"
    env = clean_env(HOME=str(home), AGENT_TUI_CONFIG=str(config))
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
    logs = "".join(path.read_text() for path in out.rglob("*.jsonl"))
    return outcome, logs


@pytest.mark.parametrize("sandbox", [False, True], ids=["bare", "sandboxed"])
def test_reads_of_what_is_not_the_sessions_are_asked_and_denied(tmp_path: Path, sandbox: bool) -> None:
    outcome, logs = _run(tmp_path, "deny", sandbox)
    assert SECRET not in logs
    names = [name for name, _, sandboxed in CASES if sandboxed == sandbox]
    assert sorted(outcome) == sorted(names)
    for name in names:
        seen = outcome[name]
        assert seen["risk"] == "execute", (name, seen)
        assert (seen["decision"], seen["actor"], seen["ended"]) == ("deny", "user", "permission_denied"), (
            name,
            seen,
        )


def test_the_same_reads_do_leak_when_allowed_without_the_sandbox(tmp_path: Path) -> None:
    outcome, logs = _run(tmp_path, "allow", False)
    assert all(seen["ended"] == "tool.completed" for seen in outcome.values()), outcome
    assert logs.count(SECRET) >= sum(1 for _, _, sandboxed in CASES if not sandboxed)
