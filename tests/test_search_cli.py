"""`agent-tui search` as a user runs it: a real subprocess on real logs written by `agent-tui run`.

The index goes to the data directory of a scratch `XDG_DATA_HOME`, as it would to the user's.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from support_providers import agent_tui, clean_env

from agent_tui.runtime.session_dirs import default_sessions_dir

SCENARIO = Path(__file__).parent / "sample-logs" / "scenario.json"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample scenario's logs, written by the real command (made once for the module)."""
    sessions = tmp_path_factory.mktemp("recorded") / "sessions"
    result = agent_tui("run", str(SCENARIO), "--sessions-dir", str(sessions), "--approve", "allow", "-q")
    assert result.returncode in (0, 1), result.stderr  # the scenario has a failing session on purpose
    assert len(list(sessions.glob("*.jsonl"))) > 3
    return sessions


@pytest.fixture
def sessions(recorded: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "sessions"
    shutil.copytree(recorded, copy)
    return copy


def search(tmp_path: Path, *args: str, cwd: Path | None = None):
    return agent_tui("search", *args, env=clean_env(XDG_DATA_HOME=str(tmp_path / "data")), cwd=cwd)


def events_of(log: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


def log_of(sessions: Path, agent: str) -> Path:
    for log in sessions.glob("*.jsonl"):
        if events_of(log)[0]["payload"]["agentName"] == agent:  # type: ignore[index]
            return log
    raise AssertionError(agent)


def test_hits_are_listed_by_session_and_turn_with_the_event_sequence(tmp_path: Path, sessions: Path) -> None:
    result = search(tmp_path, "rename", "src/foo.py", "--sessions-dir", str(sessions))
    assert result.returncode == 0, result.stderr
    lead = log_of(sessions, "lead")
    prompt: dict[str, Any] = next(e for e in events_of(lead) if e["type"] == "user.message")
    lines = result.stdout.splitlines()
    header = f"lead · {lead.stem} · {lead}"
    assert header in lines
    turn_line = lines.index(f"  {prompt['turnId']}")
    assert turn_line == lines.index(header) + 1
    assert lines[turn_line + 1].split() == [
        str(prompt["sequence"]),
        "prompt",
        *str(prompt["payload"]["content"]).split(),
    ]
    assert lines[-1].startswith("1 matches.")
    assert "\x1b" not in result.stdout  # not a terminal: no marks


def test_prefixes_phrases_and_every_kind_of_text(tmp_path: Path, sessions: Path) -> None:
    result = search(tmp_path, "--sessions-dir", str(sessions), '"src/foo.py src/bar.py"')
    assert result.returncode == 0, result.stderr
    assert "command  shell mv src/foo.py src/bar.py" in result.stdout
    result = search(tmp_path, "--sessions-dir", str(sessions), "gree*")
    kinds = {line.split()[1] for line in result.stdout.splitlines() if line.startswith("    ")}
    assert {"prompt", "command", "output", "answer"} <= kinds


def test_the_shared_options_go_before_the_command_too(tmp_path: Path, sessions: Path) -> None:
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "data"))
    before = agent_tui("--sessions-dir", str(sessions), "search", "rename", env=env)
    after = agent_tui("search", "rename", "--sessions-dir", str(sessions), env=env)
    assert before.returncode == after.returncode == 0
    assert before.stdout == after.stdout and "Rename src/foo.py" in before.stdout


def test_no_matches_is_exit_1_with_a_sentence(tmp_path: Path, sessions: Path) -> None:
    result = search(tmp_path, "zebracorn", "--sessions-dir", str(sessions))
    assert (result.returncode, result.stdout, result.stderr) == (1, "No matches for 'zebracorn'.\n", "")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ('"foo bar', """agent-tui: search: the quote at column 1 of '"foo bar' is never closed\n"""),
        ("...", "agent-tui: search: '...' has no words to search for (a word is letters and digits)\n"),
    ],
)
def test_a_bad_query_is_one_line_not_a_traceback(
    tmp_path: Path, sessions: Path, query: str, message: str
) -> None:
    result = search(tmp_path, query, "--sessions-dir", str(sessions))
    assert (result.returncode, result.stdout, result.stderr) == (2, "", message)


def test_a_limit_below_one_is_a_usage_error(tmp_path: Path, sessions: Path) -> None:
    result = search(tmp_path, "foo", "--limit", "0", "--sessions-dir", str(sessions))
    assert (result.returncode, result.stderr) == (2, "agent-tui: search: --limit 0: give at least 1\n")
    result = search(tmp_path, "foo*", "--limit", "2", "--sessions-dir", str(sessions))
    assert result.returncode == 0
    assert len([line for line in result.stdout.splitlines() if line.startswith("    ")]) == 2
    assert "(the first 2 shown)" in result.stdout


def test_fts_operators_typed_are_words_not_syntax(tmp_path: Path, sessions: Path) -> None:
    for query in ("NEAR(foo bar)", "foo OR bar", "kind:prompt", "foo AND", "-foo", "^foo", "foo*bar"):
        result = search(tmp_path, "--sessions-dir", str(sessions), "--", query)
        assert result.returncode in (0, 1), (query, result.stderr)
        assert "Traceback" not in result.stderr and "sqlite" not in result.stderr.lower(), query


def test_an_index_that_cannot_be_made_is_one_line(tmp_path: Path, sessions: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    env = clean_env(XDG_DATA_HOME=str(blocker / "data"))
    result = agent_tui("search", "foo", "--sessions-dir", str(sessions), env=env)
    assert result.returncode == 1
    assert result.stderr == f"agent-tui: {blocker / 'data' / 'agent-tui' / 'search'}: Not a directory\n"


def test_a_directory_that_is_not_there(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = search(tmp_path, "foo", "--sessions-dir", str(missing))
    assert (result.returncode, result.stderr) == (2, f"agent-tui: {missing}: no such directory\n")


def test_the_projects_own_sessions_by_default(tmp_path: Path, recorded: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    result = search(tmp_path, "foo", cwd=project)
    assert result.returncode == 1
    assert "no sessions yet" in result.stderr
    shutil.copytree(recorded, default_sessions_dir(project, tmp_path / "data" / "agent-tui"))
    result = search(tmp_path, "rename", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "prompt   Rename src/foo.py" in result.stdout
    assert search(tmp_path, "rename", "--cwd", str(project)).stdout == result.stdout
    assert list((tmp_path / "data" / "agent-tui" / "search").glob("*.sqlite3"))


def test_a_grown_log_is_found_on_the_next_search(tmp_path: Path, sessions: Path) -> None:
    assert search(tmp_path, "platypus", "--sessions-dir", str(sessions)).returncode == 1
    lead = log_of(sessions, "lead")
    last = events_of(lead)[-1]
    appended = {**last, "id": "evt_x", "sequence": int(last["sequence"]) + 1, "type": "user.message"}  # type: ignore[call-overload]
    appended["payload"] = {"content": "now the platypus"}
    with lead.open("ab") as handle:
        handle.write(orjson.dumps(appended) + b"\n")
    result = search(tmp_path, "platypus", "--sessions-dir", str(sessions))
    assert result.returncode == 0
    assert f"{appended['sequence']:>6}  prompt   now the platypus" in result.stdout


def test_a_corrupt_line_is_named_and_skipped(tmp_path: Path, sessions: Path) -> None:
    lead = log_of(sessions, "lead")
    count = len(lead.read_bytes().splitlines())
    with lead.open("ab") as handle:
        handle.write(b"{this is not json\n")
    result = search(tmp_path, "rename", "--sessions-dir", str(sessions))
    assert result.returncode == 0
    assert result.stderr == f"agent-tui: {lead}:{count + 1}: 1 corrupt line skipped\n"


def test_control_characters_in_a_log_never_reach_the_terminal(tmp_path: Path, sessions: Path) -> None:
    lead = log_of(sessions, "lead")
    last = events_of(lead)[-1]
    hostile = {**last, "id": "evt_h", "sequence": int(last["sequence"]) + 1, "type": "user.message"}  # type: ignore[call-overload]
    hostile["payload"] = {"content": "wombat \x1b]0;owned\x07\x1b[2J\r\x9b31m done"}
    with lead.open("ab") as handle:
        handle.write(orjson.dumps(hostile) + b"\n")
    plain = search(tmp_path, "wombat", "--sessions-dir", str(sessions), "--color", "never")
    assert plain.returncode == 0
    assert "\x1b" not in plain.stdout and "\r" not in plain.stdout and "\x9b" not in plain.stdout
    assert "wombat ␛]0;owned␇␛[2J␍\\x9b31m done" in plain.stdout
    marked = search(tmp_path, "wombat", "--sessions-dir", str(sessions), "--color", "always")
    assert "\x1b[1;4mwombat\x1b[22;24m ␛]0;owned" in marked.stdout
    assert marked.stdout.replace("\x1b[1;4m", "").replace("\x1b[22;24m", "") == plain.stdout


def test_claude_code_logs_are_searched_too(tmp_path: Path) -> None:
    source = Path(__file__).parent / "fixtures" / "claude_code" / "v2.0-agent-files"
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    result = agent_tui("search", "shipped", "--sessions-dir", str(source), env=env)
    assert result.returncode == 0, result.stderr
    assert "Add a test for cancelling an order that was already shipped." in result.stdout
