"""A headless scenario run (and `agent-tui demo`) works on scratch copies of the scenario's
directories: copies it made in a temporary directory are removed when it ends, as the dashboard's
demo removes its own; copies under `--workspace DIR` are the user's and stay.

Real subprocesses, each with its own TMPDIR, so what a run leaves behind is all there is in it.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.support_providers import agent_tui, clean_env


def scenario(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("x\n")
    write = {"tool": "write_file", "args": {"path": "b.txt", "content": "y"}}
    steps = [{"text": ["w"], "toolCalls": [write]}, {"text": ["done"]}]
    path = tmp_path / "s.json"
    path.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": "ws", "steps": steps}]}))
    return path


def private_tmp(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp, clean_env(TMPDIR=str(tmp))


def test_a_run_removes_the_scratch_copies_it_made(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    out = tmp_path / "out"
    result = agent_tui(
        "run", str(scenario(tmp_path)), "--sessions-dir", str(out), "--approve", "allow", env=env
    )
    assert result.returncode == 0, result.stderr
    assert any(out.glob("*.jsonl"))
    assert list(tmp.iterdir()) == []


def test_copies_under_workspace_stay_for_the_user(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    keep = tmp_path / "keep"
    result = agent_tui(
        "run",
        str(scenario(tmp_path)),
        "--sessions-dir",
        str(tmp_path / "out"),
        "--approve",
        "allow",
        "--workspace",
        str(keep),
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert (keep / "ws" / "b.txt").read_text() == "y"  # what the agent wrote, kept
    assert not (tmp_path / "ws" / "b.txt").exists()  # the scenario's own files untouched
    assert list(tmp.iterdir()) == []


def test_the_headless_demo_leaves_no_scratch_copy(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    result = agent_tui("demo", "--sessions-dir", str(tmp_path / "out"), env=env)
    assert result.returncode == 0, result.stderr
    assert list(tmp.iterdir()) == []


def test_a_scenario_refused_while_its_copies_are_made_leaves_none(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": "nope", "steps": [{"text": ["x"]}]}]}))
    result = agent_tui("run", str(bad), "--sessions-dir", str(tmp_path / "out"), env=env)
    assert result.returncode == 2
    assert result.stderr == (
        f"agent-tui: {tmp_path}: sessions[0].cwd: 'nope': no such directory ({tmp_path / 'nope'})\n"
    )
    assert list(tmp.iterdir()) == []


def test_a_broken_rules_file_is_named_where_it_is_and_leaves_no_copy(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    path = scenario(tmp_path)
    rules = tmp_path / "ws" / ".agent-tui" / "permissions.json"
    rules.parent.mkdir()
    rules.write_text("not json\n")
    out = str(tmp_path / "out")
    result = agent_tui("run", str(path), "--sessions-dir", out, "--trust-project-rules", env=env)
    assert result.returncode == 2
    assert result.stderr.startswith(f"agent-tui: {rules}: invalid JSON (")  # the user's file, not the copy
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert list(tmp.iterdir()) == []


def test_a_broken_rules_file_nobody_trusted_is_ignored_and_named(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    path = scenario(tmp_path)
    rules = tmp_path / "ws" / ".agent-tui" / "permissions.json"
    rules.parent.mkdir()
    rules.write_text("not json\n")
    result = agent_tui("run", str(path), "--sessions-dir", str(tmp_path / "out"), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(f"agent-tui: {rules}: ignored: invalid JSON (")
    assert list(tmp.iterdir()) == []
