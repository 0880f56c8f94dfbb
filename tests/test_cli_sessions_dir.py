"""A `--sessions-dir` that cannot hold logs: every command that writes logs says so in one line
before anything runs (no traceback, no half-started run), as the dashboard does; and
`sessions --cwd` of a project that does not exist says so rather than listing nothing.

Run as a user runs them: real subprocesses. The unusable directory is one under a regular file,
which fails for root too (permissions do not stop root).
"""

from __future__ import annotations

from pathlib import Path

import orjson
from support_providers import agent_tui, clean_env


def blocked(tmp_path: Path) -> Path:
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    return blocker / "sessions"


def scenario(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    path = tmp_path / "s.json"
    path.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": "ws", "steps": [{"text": ["ok"]}]}]}))
    return path


def test_a_real_model_run_names_the_directory_instead_of_a_traceback(tmp_path: Path) -> None:
    sessions = blocked(tmp_path)
    (tmp_path / "project").mkdir()
    result = agent_tui(
        "run",
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",  # never reached: the directory is refused first
        "--prompt",
        "hi",
        "--cwd",
        str(tmp_path / "project"),
        "--sessions-dir",
        str(sessions),
        env=clean_env(OPENAI_API_KEY="sk-test"),
    )
    assert (result.returncode, result.stderr) == (2, f"agent-tui: {sessions}: Not a directory\n")
    assert result.stdout == ""


def test_a_scenario_run_says_it_once(tmp_path: Path) -> None:
    sessions = blocked(tmp_path)
    result = agent_tui("run", str(scenario(tmp_path)), "--sessions-dir", str(sessions), env=clean_env())
    assert (result.returncode, result.stderr) == (1, f"agent-tui: {sessions}: Not a directory\n")
    assert result.stdout == ""


def test_the_headless_demo_says_it_once(tmp_path: Path) -> None:
    sessions = blocked(tmp_path)
    result = agent_tui("demo", "--sessions-dir", str(sessions), env=clean_env())
    assert (result.returncode, result.stderr) == (1, f"agent-tui: {sessions}: Not a directory\n")


def test_a_regular_file_given_as_the_directory_is_called_not_a_directory(tmp_path: Path) -> None:
    sessions = blocked(tmp_path).parent  # the file itself
    result = agent_tui("run", str(scenario(tmp_path)), "--sessions-dir", str(sessions), env=clean_env())
    assert (result.returncode, result.stderr) == (1, f"agent-tui: {sessions}: Not a directory\n")


def test_a_bad_scenario_is_said_before_the_directory_is_made(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    sessions = tmp_path / "out"
    result = agent_tui("run", str(bad), "--sessions-dir", str(sessions), env=clean_env())
    assert result.returncode == 2 and result.stderr.startswith(f"agent-tui: {bad}")
    assert not sessions.exists()


def test_sessions_of_a_project_that_does_not_exist_is_an_error_not_an_empty_list(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-project"
    result = agent_tui("sessions", "--cwd", str(missing), env=clean_env(XDG_DATA_HOME=str(tmp_path / "data")))
    assert (result.returncode, result.stderr, result.stdout) == (
        2,
        f"agent-tui: {missing}: no such directory\n",
        "",
    )
