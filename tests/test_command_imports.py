"""Each headless command imports only what it uses: run as a real process, its imports listed.

The process runs with `PYTHONPROFILEIMPORTTIME` (kept across the entry's restart), so stderr
names every module it imported; the test says which must not be among them. No timing is
asserted here: `bench/bench_startup.py` measures the commands beside `python -c pass`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support_pipes import returns_without_waiting

import agent_tui
from agent_tui.cli.search import own_logs
from agent_tui.replay.sources import _lone_log_of_ours, open_replay

SCENARIO = Path(__file__).parent / "sample-logs" / "scenario.json"
CONSOLE_SCRIPT = Path(sys.executable).parent / "agent-tui"

HEAVY = (
    "textual",
    "agent_tui.tui",
    "agent_tui.engine.engine",
    "agent_tui.runtime.workbench",
    "agent_tui.runtime.runner",
    "agent_tui.bus",
    "agent_tui.acp",
    "nats",
)
"""What no headless command below imports."""
VALIDATION = ("pydantic", "agent_tui.events.model")
"""The event models: only a command that reads events through the store validates them."""
IMPORTERS = ("agent_tui.importers", "watchfiles", "anyio")
"""Claude Code's and Codex's converters (and their follower)."""
COMMAND_MODULES = (
    "agent_tui.cli.commands",
    "agent_tui.cli.dashboard",
    "agent_tui.cli.search",
    "agent_tui.cli.export_command",
    "agent_tui.cli.hooks_command",
    "agent_tui.cli.bus_commands",
    "agent_tui.cli.web_command",
    "agent_tui.cli.attach_command",
)
_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)


def run_listed(
    *command: str, home: Path, stdin: str = "", program: list[str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `agent-tui COMMAND` (`python -m agent_tui`, or `program`) with an environment of its
    own (no keys, no config); its result and the modules it imported."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_RUNTIME_DIR": str(home / "run"),
        "PYTHONPROFILEIMPORTTIME": "1",
    }
    (home / "run").mkdir(exist_ok=True, mode=0o700)
    done = subprocess.run(
        [*(program or [sys.executable, "-m", "agent_tui"]), *command],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return done, set(_IMPORTED.findall(done.stderr))


def among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules of `modules` that are one of `names` or inside one of them."""
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in names))


def said(done: subprocess.CompletedProcess[str]) -> str:
    """stderr without the import lines."""
    return "\n".join(line for line in done.stderr.splitlines() if not line.startswith("import time:"))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample scenario's logs, written by the real command (made once for the module)."""
    sessions = tmp_path_factory.mktemp("recorded") / "sessions"
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui", "run", str(SCENARIO), "--sessions-dir", str(sessions), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr  # the scenario has a failing session on purpose
    assert len(list(sessions.glob("*.jsonl"))) > 3
    return sessions


@pytest.mark.parametrize("program", ["module", "console script"])
def test_version_answers_before_the_parser_the_config_and_the_keys(tmp_path: Path, program: str) -> None:
    done, modules = run_listed(
        "--version",
        home=tmp_path,
        program=None if program == "module" else [str(CONSOLE_SCRIPT)],
    )
    assert done.returncode == 0, said(done)
    assert done.stdout == f"agent-tui {agent_tui.__version__}\n"
    assert "agent_tui.cli.entry" in modules  # the listing works
    left = ("argparse", "typing", "importlib.metadata", "agent_tui.cli.parser", "agent_tui.providers")
    assert among(modules, HEAVY + VALIDATION + left + COMMAND_MODULES + ("agent_tui.engine",)) == []


def test_version_after_another_option_goes_through_the_parser_and_says_the_same(tmp_path: Path) -> None:
    done, modules = run_listed("--cwd", str(tmp_path), "--version", home=tmp_path)
    assert done.returncode == 0, said(done)
    assert done.stdout == f"agent-tui {agent_tui.__version__}\n"
    assert "agent_tui.cli.parser" in modules


def test_building_the_parser_imports_no_command(tmp_path: Path) -> None:
    done, modules = run_listed("--help", home=tmp_path)
    assert done.returncode == 0, said(done)
    assert "agent_tui.cli.parser" in modules
    assert among(modules, HEAVY + VALIDATION + IMPORTERS + COMMAND_MODULES) == []


def test_the_hook_imports_no_config_and_no_model(tmp_path: Path) -> None:
    event = '{"hook_event_name": "PermissionRequest", "session_id": "s", "tool_name": "Bash"}'
    done, modules = run_listed("hook", "claude-code", home=tmp_path, stdin=event)
    assert done.returncode == 0, said(done)
    assert "agent_tui.terminal.hook_client" in modules
    left = ("argparse", "agent_tui.cli.parser", "agent_tui.providers", "agent_tui.engine")
    assert among(modules, HEAVY + VALIDATION + IMPORTERS + COMMAND_MODULES + left) == []


def test_hooks_status_imports_its_own_module_only(tmp_path: Path) -> None:
    done, modules = run_listed("hooks", "status", "--project", str(tmp_path), home=tmp_path)
    assert done.returncode in (0, 1), said(done)
    assert "agent_tui.cli.hooks_command" in modules
    others = tuple(m for m in COMMAND_MODULES if m != "agent_tui.cli.hooks_command")
    assert among(modules, HEAVY + VALIDATION + IMPORTERS + others + ("agent_tui.runtime",)) == []


def test_sessions_reads_the_logs_without_the_engine_or_the_importers(tmp_path: Path, recorded: Path) -> None:
    done, modules = run_listed("sessions", "--sessions-dir", str(recorded), home=tmp_path)
    assert done.returncode == 0, said(done)
    assert "agent_tui.runtime.session_dirs" in modules
    others = tuple(m for m in COMMAND_MODULES if m != "agent_tui.cli.commands")
    assert among(modules, HEAVY + IMPORTERS + others) == []


def test_export_reads_one_session_without_the_engine_or_the_importers(tmp_path: Path, recorded: Path) -> None:
    log = sorted(recorded.glob("*.jsonl"))[0]
    done, modules = run_listed("export", str(log), home=tmp_path)
    assert done.returncode == 0, said(done)
    assert done.stdout.startswith("#")
    others = tuple(m for m in COMMAND_MODULES if m != "agent_tui.cli.export_command")
    assert among(modules, HEAVY + IMPORTERS + others) == []


def test_search_a_second_time_imports_neither_the_importers_nor_the_event_models(
    tmp_path: Path, recorded: Path
) -> None:
    first, modules = run_listed("search", "--sessions-dir", str(recorded), "the", home=tmp_path)
    assert first.returncode == 0, said(first)
    others = tuple(m for m in COMMAND_MODULES if m != "agent_tui.cli.search")
    assert "agent_tui.importers" in modules  # the logs were found as `replay` finds them
    assert among(modules, HEAVY + others) == []
    again, modules = run_listed("search", "--sessions-dir", str(recorded), "the", home=tmp_path)
    assert (again.returncode, again.stdout, said(again)) == (first.returncode, first.stdout, said(first))
    assert "agent_tui.search.index" in modules
    assert among(modules, HEAVY + VALIDATION + IMPORTERS + others) == []


def test_search_finds_the_logs_again_once_one_changed(tmp_path: Path, recorded: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for log in recorded.glob("*.jsonl"):
        (sessions / log.name).write_bytes(log.read_bytes())
    run_listed("search", "--sessions-dir", str(sessions), "the", home=tmp_path)
    (sessions / "notes.jsonl").write_text("not a log\n")
    again, modules = run_listed("search", "--sessions-dir", str(sessions), "the", home=tmp_path)
    assert again.returncode == 0, said(again)
    assert "agent_tui.importers" in modules
    assert f"{sessions / 'notes.jsonl'}: not a Claude Code, Codex or agent-tui log (skipped)" in said(again)


def test_own_logs_are_the_logs_replay_finds_in_a_directory_of_ours(tmp_path: Path, recorded: Path) -> None:
    logs = sorted(recorded.glob("*.jsonl"))
    flat = tmp_path / "flat"
    nested = tmp_path / "nested"
    for number, log in enumerate(logs):
        (flat / ("a" if number % 2 else "") / "subagents").mkdir(parents=True, exist_ok=True)
        where = flat / "a" / "subagents" if number % 2 else flat
        (where / log.name).write_bytes(log.read_bytes())
        deep = nested / f"day{number % 3}" / "x"
        deep.mkdir(parents=True, exist_ok=True)
        (deep / log.name).write_bytes(log.read_bytes())
    for directory in (flat, nested):
        with open_replay(directory) as inputs:
            assert inputs.warnings == []
            assert own_logs(directory) == [str(path.absolute()) for path in inputs.files]


def test_search_finds_the_logs_again_once_one_was_written_to(tmp_path: Path, recorded: Path) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(recorded, sessions)
    first, _ = run_listed("search", "--sessions-dir", str(sessions), "the", home=tmp_path)
    log = sorted(sessions.glob("*.jsonl"))[0]
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 1_000_000_000))
    again, modules = run_listed("search", "--sessions-dir", str(sessions), "the", home=tmp_path)
    assert "agent_tui.importers" in modules
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    log.unlink()  # a log gone: the index lets go of it, found as `replay` finds the rest
    third, modules = run_listed("search", "--sessions-dir", str(sessions), "the", home=tmp_path)
    assert "agent_tui.importers" in modules
    assert str(log) not in third.stdout
    fourth, modules = run_listed("search", "--sessions-dir", str(sessions), "the", home=tmp_path)
    assert "agent_tui.importers" not in modules
    assert (fourth.returncode, fourth.stdout) == (third.returncode, third.stdout)


LAZY_NAMES_CHECK = """
import importlib, pkgutil, sys, types
package = importlib.import_module(sys.argv[1])
for info in pkgutil.iter_modules(package.__path__):
    if not info.name.startswith("__"):  # `python -m agent_tui` would start the app
        importlib.import_module(f"{package.__name__}.{info.name}")  # each module loaded first
print([name for name in package.__all__ if isinstance(getattr(package, name), types.ModuleType)])
"""


def test_a_lazily_loaded_name_stays_itself_once_every_module_is_loaded() -> None:
    """A package's lazy name that is also one of its modules' names turns into that module when
    the module is loaded before the name is asked for (`events.args_preview` did: the tree's
    tool lines called a module). Each lazy package in a process of its own, nothing asked first."""
    root = Path(agent_tui.__file__).parent
    lazy = [
        ".".join(init.parent.relative_to(root.parent).parts)
        for init in sorted(root.rglob("__init__.py"))
        if "lazy_names(__name__" in init.read_text(encoding="utf-8")
    ]
    assert "agent_tui.events" in lazy
    for package in lazy:
        done = subprocess.run(
            [sys.executable, "-c", LAZY_NAMES_CHECK, package],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "[]", package


def test_replay_dump_of_one_of_our_logs_imports_no_importer(tmp_path: Path, recorded: Path) -> None:
    log = sorted(recorded.glob("*.jsonl"))[0]
    done, modules = run_listed("replay", str(log), "--dump", "state", home=tmp_path)
    assert done.returncode == 0, said(done)
    assert done.stdout.startswith("{")
    assert "agent_tui.replay.dump" in modules
    assert among(modules, HEAVY + IMPORTERS) == []


def test_replay_of_a_log_the_importers_must_look_at_still_goes_through_them(
    tmp_path: Path, recorded: Path
) -> None:
    # Ours beside a Claude Code sub-agent log (one that could go with it), a file that is no log,
    # and a missing file: the importers decide, in their own words.
    ours = tmp_path / "logs" / sorted(recorded.glob("*.jsonl"))[0].name
    ours.parent.mkdir()
    ours.write_bytes(sorted(recorded.glob("*.jsonl"))[0].read_bytes())
    (ours.parent / "agent-1.jsonl").write_text('{"type": "user", "sessionId": "x", "uuid": "u"}\n')
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"note": "not a log"}\n')
    for path, status, words in (
        (ours, 0, ""),
        (notes, 2, f"{notes}: not a Claude Code, Codex or agent-tui log"),
        (tmp_path / "gone.jsonl", 2, f"{tmp_path / 'gone.jsonl'}: no such file or directory"),
    ):
        done, modules = run_listed("replay", str(path), "--dump", "events", home=tmp_path)
        assert done.returncode == status, said(done)
        assert words in said(done)
        assert "agent_tui.importers" in modules


def test_one_of_our_logs_is_given_as_the_importers_would_give_it(tmp_path: Path, recorded: Path) -> None:
    from agent_tui.importers import replay_inputs

    samples = Path(__file__).parent / "sample-logs"
    logs = [*sorted(recorded.glob("*.jsonl")), *sorted(samples.glob("*/*.jsonl"))]
    ours = [log for log in logs if not log.name.startswith("agent-")]
    assert len(ours) > 5
    for log in ours:
        with open_replay(log) as given, replay_inputs([log]) as expected:
            assert (given.files, given.watch_dir, given.warnings) == (
                expected.files,
                expected.watch_dir,
                expected.warnings,
            ), log


def test_a_pipe_swapped_in_for_a_lone_log_is_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the look (`is_file`) and the read of its first line, a named pipe put in the log's
    place: the read refuses it rather than wait for a writer, and the importers decide (and say
    what is wrong)."""
    pipe = tmp_path / "sess_pipe.jsonl"
    os.mkfifo(pipe)
    monkeypatch.setattr(Path, "is_file", lambda self: True)  # it was a file when looked at
    assert returns_without_waiting(lambda: _lone_log_of_ours(pipe), pipe) == [False]
