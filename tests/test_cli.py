"""The command line as a user meets it: real scenario files, real logs, exit codes, no tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from agent_tui.events.chains import chain_violations
from agent_tui.replay.sources import replay_all

SCENARIO = {
    "maxContextTokens": 8000,
    "sessions": [
        {
            "title": "lead",
            "cwd": "ws",
            "prompt": "Rename src/foo.py to bar.py",
            "steps": [
                {
                    "text": ["I'll check ", "first."],
                    "toolCalls": [{"tool": "shell", "args": {"cmd": "ls src/foo.py"}}],
                },
                {
                    "text": ["Renaming."],
                    "toolCalls": [{"tool": "shell", "args": {"cmd": "mv src/foo.py src/bar.py"}}],
                },
                {"text": ["Done."]},
            ],
        },
        {
            "title": "helper",
            "cwd": "ws",
            "prompt": "spawn",
            "steps": [
                {
                    "text": ["spawning"],
                    "toolCalls": [
                        {"tool": "spawn_agent", "args": {"agentName": "explorer", "prompt": "look"}}
                    ],
                },
                {"text": ["ok"]},
            ],
        },
    ],
    "agents": {"explorer": {"steps": [{"text": ["Found 3 files."]}]}},
}


def agent_tui(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "foo.py").write_text("x = 1\n")
    path = tmp_path / "scenario.json"
    path.write_bytes(orjson.dumps(SCENARIO))
    return path


@pytest.fixture
def sessions(tmp_path: Path, scenario: Path) -> Path:
    out = tmp_path / "sessions"
    result = agent_tui("run", str(scenario), "--sessions-dir", str(out), "--approve", "allow")
    assert result.returncode == 0, result.stderr
    return out


def test_run_writes_well_formed_logs_and_leaves_the_scenario_alone(
    tmp_path: Path, scenario: Path, sessions: Path
) -> None:
    assert len(list(sessions.glob("*.jsonl"))) == 3
    assert chain_violations(list(replay_all(sessions, "strict"))) == []
    assert (tmp_path / "ws" / "src" / "foo.py").exists()  # the run worked on a scratch copy


def test_run_with_deny_denies_the_destructive_mv(tmp_path: Path, scenario: Path) -> None:
    out = tmp_path / "denied"
    result = agent_tui("run", str(scenario), "--sessions-dir", str(out))
    assert result.returncode == 0
    events = list(replay_all(out))
    failed = [e.payload for e in events if e.type == "tool.failed"]
    assert any(f["errorCode"] == "permission_denied" and f["tool"] == "shell" for f in failed)


@pytest.mark.parametrize("kind", ["events", "transcript", "frames", "state"])
def test_dumps_are_deterministic(sessions: Path, kind: str) -> None:
    first = agent_tui("replay", str(sessions), "--dump", kind)
    second = agent_tui("replay", str(sessions), "--dump", kind)
    assert first.returncode == 0 and first.stdout and first.stdout == second.stdout
    if kind == "state":
        state = orjson.loads(first.stdout)
        assert [s["sessionId"] for s in state["sessions"]] == sorted(
            s["sessionId"] for s in state["sessions"]
        )
        assert {s["status"] for s in state["sessions"]} == {"completed"}
        child = next(s for s in state["sessions"] if s["parentSessionId"])
        assert child["agentName"] == "explorer"
    if kind == "transcript":
        lines = [orjson.loads(line) for line in first.stdout.splitlines()]
        assert {"sessionId", "turnId", "role", "text"} <= set(lines[0])
        assert any(line["role"] == "assistant" and line["text"] == "I'll check first." for line in lines)
        assert any(line["role"] == "tool" and "toolCallId" in line for line in lines)
    if kind == "frames":
        frames = [orjson.loads(line) for line in first.stdout.splitlines()]
        assert frames[0]["to"] == "start" and frames[-1]["to"] == "end" and frames[-1]["reason"] == "done"


def test_events_dump_is_sessions_in_id_order_each_in_sequence(sessions: Path) -> None:
    out = agent_tui("replay", str(sessions), "--dump", "events").stdout.splitlines()
    keys = [(e["sessionId"], e["sequence"]) for e in map(orjson.loads, out)]
    assert keys == sorted(keys)


def _one_log(sessions: Path) -> Path:
    return sorted(sessions.glob("*.jsonl"))[0]


def test_torn_final_line_is_skipped_or_strictly_an_error(sessions: Path) -> None:
    log = _one_log(sessions)
    lines = log.read_bytes().count(b"\n")
    clean = agent_tui("replay", str(log), "--dump", "events")
    assert clean.returncode == 0 and clean.stderr == ""
    torn = b'{"v":1,"id":"torn"'
    with open(log, "ab") as handle:
        handle.write(torn)
    ok = agent_tui("replay", str(log), "--dump", "events")
    assert ok.returncode == 0 and len(ok.stdout.splitlines()) == lines
    # left out, but said: one line naming the file and line, the exit status unchanged
    assert ok.stderr == (
        f"{log}:{lines + 1}: a torn final line ({len(torn)} bytes without a newline) was left out\n"
    )
    for kind in ("transcript", "frames", "state"):  # every view reads the same logs
        assert agent_tui("replay", str(log), "--dump", kind).stderr == ok.stderr
    strict = agent_tui("replay", str(log), "--dump", "events", "--strict")
    assert strict.returncode == 3
    assert strict.stderr.strip().startswith(f"agent-tui: {log}:{lines + 1}: ")
    assert "Traceback" not in strict.stderr


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda line: b"not json at all", "not JSON"),
        (lambda line: line.replace(b'"type":"', b'"type":"bogus.'), "unknown event type"),
        (lambda line: line.replace(b'"sequence":', b'"sequence":1', 1), "sequence"),
        (lambda line: line.replace(b'"payload":{', b'"payload":{"zzz":1,', 1), "zzz"),
    ],
)
def test_a_bad_complete_line_stops_the_dump_with_file_and_line(sessions: Path, mutate, reason: str) -> None:
    log = _one_log(sessions)
    lines = log.read_bytes().splitlines()
    lines[3] = mutate(lines[3])
    log.write_bytes(b"\n".join(lines) + b"\n")
    for strict in ([], ["--strict"]):
        result = agent_tui("replay", str(log), "--dump", "state", *strict)
        assert result.returncode == 3
        assert result.stderr.startswith(f"agent-tui: {log}:4: ") and reason in result.stderr
        assert "Traceback" not in result.stderr


def test_bad_scenarios_say_where(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(
        orjson.dumps(
            {
                "sessions": [
                    {"prompt": "x", "steps": [{"text": ["a"]}, {"text": ["b"]}, {"text": "not a list"}]}
                ]
            }
        )
    )
    result = agent_tui("run", str(bad), "--sessions-dir", str(tmp_path / "s"))
    assert result.returncode == 2
    assert "sessions[0].steps[2].text: Input should be a valid list" in result.stderr
    bad.write_text("{ nope")
    assert (
        "bad.json: not JSON at column 3: an object key without double quotes"
        in agent_tui("run", str(bad), "--sessions-dir", str(tmp_path / "s")).stderr
    )
    missing = agent_tui("run", str(tmp_path / "missing.json"), "--sessions-dir", str(tmp_path / "s"))
    assert missing.returncode == 2 and "missing.json: no such file" in missing.stderr
    bad.write_bytes(
        orjson.dumps({"sessions": [{"prompt": "x", "cwd": "nowhere", "steps": [{"text": ["a"]}]}]})
    )
    nowhere = agent_tui("run", str(bad), "--sessions-dir", str(tmp_path / "s"))
    assert nowhere.returncode == 2 and "sessions[0].cwd" in nowhere.stderr
    for result in (missing, nowhere):
        assert "Traceback" not in result.stderr


def test_a_scenario_run_without_a_sessions_dir_says_it_needs_one(tmp_path: Path, scenario: Path) -> None:
    result = agent_tui("run", str(scenario), cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "agent-tui: a scenario run needs --sessions-dir DIR for its logs\n"


def test_replay_of_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    result = agent_tui("replay", str(tmp_path / "nope"), "--dump", "events")
    assert result.returncode == 2 and "no such file or directory" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = agent_tui("replay", str(empty), "--dump", "events")
    assert result.returncode == 2 and "no session logs" in result.stderr


def test_unwritable_sessions_dir_is_a_clear_error(tmp_path: Path, scenario: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    result = agent_tui("run", str(scenario), "--sessions-dir", str(blocker / "sessions"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "file-not-dir" in result.stderr


def test_schema_prints_a_json_schema_of_every_event_type() -> None:
    result = agent_tui("schema")
    schema = orjson.loads(result.stdout)
    assert schema["$schema"].endswith("2020-12/schema")
    assert "model.delta" in result.stdout and "turn.completed" in result.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["run", "s.json", "--sessions-dir", "out"],
        ["replay", "logs"],
        ["demo"],
        ["schema"],
        ["import", "src", "--out", "out"],
        ["models"],
        ["acp"],
        ["sessions"],
    ],
)
def test_an_unknown_flag_is_said_with_the_subcommands_own_usage(tmp_path: Path, command: list[str]) -> None:
    result = agent_tui(*command, "--frob", cwd=tmp_path)
    name = command[0]
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"usage: agent-tui {name} [-h]"), result.stderr
    assert result.stderr.endswith(f"agent-tui {name}: error: unrecognized option --frob\n")


def test_a_stray_argument_is_the_subcommands_error_and_a_top_level_one_the_top_levels() -> None:
    stray = agent_tui("schema", "extra")
    assert stray.returncode == 2
    assert stray.stderr.endswith("agent-tui schema: error: unrecognized arguments: extra\n")
    top = agent_tui("--frob")
    assert top.returncode == 2 and top.stderr.startswith("usage: agent-tui [-h]")
    assert top.stderr.endswith("agent-tui: error: unrecognized option --frob\n")


SHARED_BEFORE_AND_AFTER = [
    (["--cwd", "proj"], "sessions", "list_cwd", Path("proj")),
    (["--sessions-dir", "logs"], "sessions", "list_sessions_dir", Path("logs")),
    (["--sessions-dir", "logs"], "run", "run_sessions_dir", Path("logs")),
    (["--sessions-dir", "logs"], "demo", "demo_sessions_dir", Path("logs")),
    (["--sessions-dir", "logs"], "acp", "acp_sessions_dir", Path("logs")),
    (["--cwd", "proj"], "run", "cwd", Path("proj")),
    (["--prompt", "hi"], "run", "prompt", "hi"),
    (["--provider", "openai"], "run", "provider", "openai"),
    (["--model", "m"], "models", "model", "m"),
    (["--profile", "p"], "acp", "profile", "p"),
    (["--base-url", "http://127.0.0.1:9"], "run", "base_url", "http://127.0.0.1:9"),
]


@pytest.mark.parametrize(("option", "command", "dest", "value"), SHARED_BEFORE_AND_AFTER)
def test_a_shared_option_means_the_same_before_and_after_the_command(
    option: list[str], command: str, dest: str, value: object
) -> None:
    from agent_tui.cli.parser import parse_arguments

    before = parse_arguments([*option, command])
    after = parse_arguments([command, *option])
    assert getattr(before, dest) == getattr(after, dest) == value


def test_a_shared_option_after_the_command_wins_over_the_one_before() -> None:
    from agent_tui.cli.parser import parse_arguments

    args = parse_arguments(["--model", "outer", "run", "--model", "inner"])
    assert args.model == "inner"
    assert parse_arguments(["run"]).model is None and parse_arguments(["sessions"]).list_cwd is None


def test_a_shared_option_before_a_command_that_does_not_take_it_is_a_usage_error() -> None:
    result = agent_tui("--provider", "openai", "replay", "logs")
    assert result.returncode == 2
    assert result.stderr.endswith("agent-tui: error: --provider does not go with `replay`\n")


def test_sessions_dir_before_sessions_lists_that_directory(sessions: Path) -> None:
    before = agent_tui("--sessions-dir", str(sessions), "sessions")
    after = agent_tui("sessions", "--sessions-dir", str(sessions))
    assert before.returncode == after.returncode == 0
    assert before.stdout == after.stdout and "lead" in before.stdout


def test_every_command_says_what_it_does_and_every_option_has_help() -> None:
    import argparse

    from agent_tui.cli.parser import build_parser

    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in [("agent-tui", parser), *commands.choices.items()]:
        if sub is not parser:
            assert sub.description, f"`agent-tui {name} --help` has no description line"
        for action in sub._actions:
            if action.option_strings and not isinstance(action, argparse._HelpAction):
                assert action.help, f"{name} {action.option_strings[0]} has no help text"
    import re

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    headings = {line.lstrip("#").strip() for line in readme.splitlines() if line.startswith("#")}
    helps = " ".join(a.help or "" for sub in [parser, *commands.choices.values()] for a in sub._actions)
    named = re.findall(r"README, '([^']+)'", helps)
    assert named and set(named) <= headings


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "deploy", "--limit", "3"],
        ["--cwd", "/tmp", "sessions"],
        ["--profile", "p", "run", "s.json"],
        ["replay", "--follow", "x.jsonl"],
        ["export", "x.jsonl", "--format", "html"],
        ["hooks", "status"],
    ],
)
def test_a_command_line_parses_as_the_whole_parser_parses_it(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`parse_arguments` builds only the named command's arguments; what it reads is the same."""
    import argparse

    from agent_tui.cli import parser

    lazy = parser.parse_arguments(argv)
    build = parser.build_parser
    (commands,) = (a for a in build(lazy=True)._actions if isinstance(a, argparse._SubParsersAction))
    assert all(len(sub._actions) == 1 for sub in commands.choices.values())  # `-h` until parsed
    monkeypatch.setattr(parser, "build_parser", lambda lazy=False: build())
    whole = parser.parse_arguments(argv)
    assert vars(lazy) == vars(whole) and lazy.command in argv


def test_the_demo_s_docs_agent_edits_the_readme_it_was_asked_to(tmp_path: Path) -> None:
    from agent_tui.demo import demo_scenario_path

    workspace = tmp_path / "ws"
    args = ("--sessions-dir", str(tmp_path / "logs"), "--workspace", str(workspace), "--approve", "allow")
    result = agent_tui("run", str(demo_scenario_path()), *args, "--quiet")
    assert result.returncode == 0, result.stderr
    readmes = list(workspace.rglob("README.md"))
    assert any("## Usage" in readme.read_text() for readme in readmes)
    assert not list(workspace.rglob("USAGE.md"))


def test_version_is_the_installed_distribution_s() -> None:
    from importlib.metadata import version

    from agent_tui import DISTRIBUTION, __version__

    assert DISTRIBUTION == "agent-tui-dashboard" and __version__ == version(DISTRIBUTION)
    assert agent_tui("--version").stdout == f"agent-tui {__version__}\n"


def test_a_full_disk_under_stdout_is_said_in_plain_words_and_the_run_goes_on(
    tmp_path: Path, scenario: Path
) -> None:
    out = tmp_path / "out"
    with open("/dev/full", "w") as full:  # every write: ENOSPC
        done = subprocess.run(
            [sys.executable, "-m", "agent_tui", "run", str(scenario), "--sessions-dir", str(out)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0
    assert (
        done.stderr == "agent-tui: stdout: No space left on device (the run went on; its logs are complete)\n"
    )
    events = list(replay_all(out))
    assert events and chain_violations(events) == []


def test_an_os_error_is_said_in_the_systems_words() -> None:
    import errno

    from agent_tui.runtime.os_errors import os_reason

    # What the store raises for a short write: its own text, shown by str() as "[Errno 28] ...".
    short = OSError(errno.ENOSPC, "short write to /x.jsonl (3 of 9 bytes)")
    assert os_reason(short) == "No space left on device"
    assert os_reason(PermissionError(errno.EACCES, "Permission denied", "/x")) == "Permission denied"
    assert os_reason(OSError("no number")) == "no number"
