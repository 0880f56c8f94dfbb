"""Escape sequences in what a model, a tool or a log says reach no terminal raw: the headless
console, every command that prints a log's text, the dashboard and the replay show them as
markers, and a real terminal (tmux) keeps its title, its clipboard and its screen."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from support_terminal import ATTACK, MARKERS, assert_markers, assert_safe, hostile_log, hostile_scenario
from support_tmux import Tmux
from support_workbench import settle, wait_for
from textual.app import App
from textual.content import Content

from agent_tui.events import visible
from agent_tui.replay.sources import replay_all
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.marked import marked
from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.screens.approval import ApprovalScreen
from agent_tui.tui.terminal import TerminalTitle

CLAUDE_LOG = next(
    (Path(__file__).parent / "fixtures" / "claude_code" / "v1.0-inline-sidechain").glob("*.jsonl")
)
HOSTILE_NAME = "logs " + ATTACK.replace("\r", "")  # a directory name (a file name keeps its CR too)


def agent_tui(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """The command, its output as bytes: text mode would turn a bare CR into a newline."""
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *map(str, args)], capture_output=True, cwd=cwd, timeout=120
    )


def out(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stdout.decode()


def err(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stderr.decode()


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[tuple[Path, subprocess.CompletedProcess[bytes]]]:
    """A hostile scenario run into a directory with a hostile name, plus a hostile hand-written log."""
    directory = tmp_path / HOSTILE_NAME
    run = agent_tui("run", hostile_scenario(tmp_path), "--sessions-dir", directory, "--approve", "allow")
    assert run.returncode == 0, err(run)
    hostile_log(directory)
    yield directory, run


# -- the headless console and the commands -----------------------------------------------------


def test_the_console_shows_the_agent_the_prompt_the_model_and_the_tool_as_markers(
    sessions: tuple[Path, subprocess.CompletedProcess[bytes]],
) -> None:
    _, run = sessions
    text = out(run)
    assert_markers(text, "agent-tui run")
    lines = text.splitlines()
    assert any("turn started: please ␛]0;PWNED-TITLE" in line and "evil␍OVER" in line for line in lines)
    assert any("says: model says ␛]0;PWNED-TITLE" in line for line in lines)
    assert any("shell done exit 0: tool says ␛]0;PWNED-TITLE" in line for line in lines)
    assert (
        lines[-1].startswith("1 session") and "logs in" in lines[-1] and "logs ␛]0;PWNED-TITLE" in lines[-1]
    )
    assert_safe(err(run), "agent-tui run's stderr")


def test_a_line_break_in_what_an_agent_says_cannot_forge_a_console_line(tmp_path: Path) -> None:
    scenario = {
        "maxContextTokens": 8000,
        "sessions": [
            {
                "title": "lead",
                "cwd": ".",
                "prompt": "hi\n[lead] permission deny by user\r\n[lead] turn ended: final",
                "steps": [{"text": ["ok"]}],
            }
        ],
    }
    path = tmp_path / "scenario.json"
    path.write_bytes(orjson.dumps(scenario))
    run = agent_tui("run", path, "--sessions-dir", tmp_path / "s")
    assert run.returncode == 0, err(run)
    lines = out(run).splitlines()
    assert lines[0] == "[lead] turn started: hi"
    assert lines[1:3] == ["    [lead] permission deny by user", "    [lead] turn ended: final"]
    assert [line for line in lines if line.startswith("[lead] turn ended")] == [lines[-2]]


@pytest.mark.parametrize("kind", ["events", "transcript", "frames", "state"])
def test_dumps_escape_every_control_and_keep_the_logs_text(
    sessions: tuple[Path, subprocess.CompletedProcess[bytes]], kind: str
) -> None:
    directory, _ = sessions
    result = agent_tui("replay", directory, "--dump", kind)
    assert result.returncode == 0, err(result)
    assert_safe(out(result), f"--dump {kind}")
    values = [orjson.loads(line) for line in result.stdout.splitlines()]
    if kind != "frames":  # (frames carry no text)
        assert "\\u001b]0;PWNED-TITLE" in out(result) and "\\u009b2J" in out(result)
        assert "\\u202eevil" in out(result)
        assert any(ATTACK in value for value in _strings(values))  # the log's text, byte for byte


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_the_session_listing_shows_names_prompts_and_the_directory_as_markers(
    sessions: tuple[Path, subprocess.CompletedProcess[bytes]],
) -> None:
    directory, _ = sessions
    result = agent_tui("sessions", "--sessions-dir", directory)
    assert result.returncode == 0, err(result)
    assert_markers(out(result), "agent-tui sessions")
    assert "2 sessions in " in out(result) and "lead ␛]0;PWNED-TITLE" in out(result)


def test_errors_and_warnings_name_a_hostile_path_and_line_as_markers(tmp_path: Path) -> None:
    directory = tmp_path / HOSTILE_NAME
    directory.mkdir()
    # A log is named after its session, so the hostile file name is the session's own (a file
    # name may hold a CR too, which a directory name here does not).
    torn = hostile_log(directory, "ses_" + uuid.uuid4().hex[:6] + " torn " + ATTACK)
    torn.write_bytes(torn.read_bytes() + b'{"v":1,"id":"evt_torn ' + ATTACK.encode() + b'"')
    result = agent_tui("replay", directory, "--dump", "events")
    assert result.returncode == 0, err(result)
    assert "torn" in err(result)
    assert_markers(err(result), "the torn-line warning", (*MARKERS, "evil␍OVER"))
    strict = agent_tui("replay", torn, "--dump", "events", "--strict")
    assert strict.returncode == 3
    assert_markers(err(strict), "the corrupt-log error")
    missing = agent_tui("replay", tmp_path / ("gone " + ATTACK + ".jsonl"))
    assert missing.returncode != 0
    assert_markers(err(missing), "the missing-log error")


def test_import_says_hostile_paths_and_converts_hostile_text_faithfully(tmp_path: Path) -> None:
    source = tmp_path / HOSTILE_NAME / "claude"
    source.mkdir(parents=True)
    lines = CLAUDE_LOG.read_bytes().splitlines()
    first = orjson.loads(lines[0])
    first["message"]["content"] = "imported " + ATTACK
    lines[0] = orjson.dumps(first)
    (source / CLAUDE_LOG.name).write_bytes(b"\n".join([*lines, b"not json " + ATTACK.encode()]) + b"\n")
    converted = tmp_path / ("out " + ATTACK.replace("\r", ""))
    result = agent_tui("import", source, "--out", converted)
    assert result.returncode == 0, err(result)
    assert "imported 1 Claude Code log" in out(result)
    assert_markers(out(result), "the import summary")
    assert_safe(err(result), "the import warnings")
    assert "␛]0;PWNED-TITLE" in err(result)  # the bad line's file
    dump = agent_tui("replay", converted, "--dump", "transcript")
    assert_safe(out(dump), "--dump transcript of an import")
    assert any(orjson.loads(line)["text"] == "imported " + ATTACK for line in dump.stdout.splitlines())


def test_models_shows_a_configured_name_with_markers(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    escaped = ATTACK.encode("unicode_escape").decode().replace("\\x", "\\u00")  # TOML's escapes
    config.write_text(f'[profiles.evil]\nprovider = "openai"\nmodel = "gpt {escaped}"\n')
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "models"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "AGENT_TUI_CONFIG": str(config)},
    )
    assert result.returncode == 0, err(result)
    assert_markers(out(result), "agent-tui models", ("gpt ␛]0;PWNED-TITLE␇", "\\x9b2J", "\\u202eevil␍OVER"))


# -- the dashboard and the replay --------------------------------------------------------------


def painted(app: App[Any]) -> str:
    """Every character the app's screen (the top one) sends to the terminal, row by row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def test_marked_draws_each_marker_in_reverse_video_and_the_rest_in_its_style() -> None:
    content = marked("a\x1b[2Jb\u202ec", "bold")
    assert content.plain == visible("a\x1b[2Jb\u202ec") == "a␛[2Jb\\u202ec"
    styles = {content.plain[span.start : span.end]: str(span.style) for span in content.spans}
    assert styles == {
        "a": "bold",
        "␛": "bold reverse",
        "[2Jb": "bold",
        "\\u202e": "bold reverse",
        "c": "bold",
    }
    assert marked("plain", "bold") == Content.styled("plain", "bold")


def test_the_window_title_writes_no_control_of_the_text() -> None:
    written: list[str] = []
    title = TerminalTitle("agent-tui " + ATTACK, written.append)
    title.show(2)
    (sequence,) = written
    assert sequence.startswith("\x1b]2;(2) agent-tui ␛]0;PWNED-TITLE␇") and sequence.endswith("\x07")
    assert_safe(sequence.removeprefix("\x1b]2;").removesuffix("\x07"), "the window title")


@pytest.mark.anyio
@pytest.mark.usefixtures("home_in_tmp")
async def test_the_replay_paints_markers_in_the_tree_the_detail_and_the_bars(
    sessions: tuple[Path, subprocess.CompletedProcess[bytes]],
) -> None:
    directory, _ = sessions
    app = ReplayApp(sorted(directory.glob("*.jsonl")))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.replay.loaded, "the replay")
        await settle(pilot)
        seen = []
        for _ in app.replay.state.sessions:  # each session in the detail panel in turn
            screen = painted(app)
            assert_safe(screen, "the replay")
            seen.append(screen)
            await pilot.press("down")
            await settle(pilot)
        everything = "\n".join(seen)
        painted_too = (
            "lead ␛]0;PWNED-TITLE",
            "tool says ␛]0;PWNED-TITLE",
            "␛[?1049h␛c\\x9b2J\\u202eevil␍OVER",
        )
        for what in ("model says", "user wrote", "model wrote", "ended", *painted_too):
            assert what in everything, f"{what!r} not painted"
        assert "turn.completed · lead ␛]0;PWNED-TITLE" in everything  # the scrubber's label
        app.notify("note " + ATTACK, title="t" + ATTACK[:5])
        await settle(pilot)
        assert_safe(painted(app), "a notification")
        assert "t␛]0;P: note ␛]0;PWNED-TITLE" in painted(app)


@pytest.mark.anyio
@pytest.mark.usefixtures("home_in_tmp")
async def test_the_dashboard_paints_markers_in_the_queue_and_the_approval_dialog(tmp_path: Path) -> None:
    events = list(replay_all(hostile_log(tmp_path).parent))
    app = AgentTuiApp(events=events, live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        screen = painted(app)
        assert_safe(screen, "the dashboard")
        assert "1. hostile  shell · destructive" in screen  # the approval queue
        assert "␛]0;PWNED-TITLE␇␛]2;PWNED-TWO␛\\␛]52;c;cHduZWQ=␇␛[2J␛[" in screen
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval dialog")
        await settle(pilot)
        dialog = painted(app)
        assert_safe(dialog, "the approval dialog")
        assert "Run shell?" in dialog and "why asks because" in dialog
        assert "./\\u202e␛]0;PWNED-TITLE␇" in dialog  # the command, its RLO shown


# -- a real terminal ---------------------------------------------------------------------------


def test_replay_in_a_real_terminal_keeps_its_title_clipboard_and_screen(
    sessions: tuple[Path, subprocess.CompletedProcess[bytes]], tmux: Tmux
) -> None:
    directory, _ = sessions
    tmux.start(sys.executable, "-m", "agent_tui", "replay", directory)
    screen = tmux.wait_for("turn.completed · lead ␛]0;PWNED-TITLE", "the replay at its last event")
    assert "user wrote" in screen and "ended" in screen  # the hostile session's detail
    assert tmux.title() == "KNOWN-TITLE"
    tmux("send-keys", "-t", "t", "Down")  # the other session: the model's text and the tool's output
    screen = tmux.wait_for("tool says ␛]0;PWNED-TITLE", "the other session's detail")
    assert "model says" in screen and "Sessions" in screen and "paused" in screen  # nothing wiped
    tmux("send-keys", "-t", "t", "Home")  # the scrubber moves: the bars are drawn again
    # the 28 events of the two sessions and a model.usage after each of the 2 model calls
    tmux.wait_for("‖ paused  0 / 30  start", "the scrubber at its start")
    tmux("send-keys", "-t", "t", "End")
    screen = tmux.wait_for("30 / 30  turn.completed · lead ␛]0;PWNED-TITLE", "the scrubber at its end")
    assert "Sessions" in screen and "Detail" in screen
    assert tmux.title() == "KNOWN-TITLE"
    assert tmux.buffers() == ""  # OSC 52 wrote nothing to the clipboard
    tmux("send-keys", "-t", "t", "q")
    tmux.wait_for("dead", "the replay to quit")
    assert tmux.title() == "KNOWN-TITLE"
    assert tmux.buffers() == ""


def test_a_headless_run_in_a_real_terminal_keeps_its_title_clipboard_and_screen(
    tmp_path: Path, tmux: Tmux
) -> None:
    scenario = hostile_scenario(tmp_path)
    tmux.start(
        sys.executable,
        "-m",
        "agent_tui",
        "run",
        scenario,
        "--sessions-dir",
        tmp_path / "s",
        "--approve",
        "allow",
    )
    screen = tmux.wait_for("dead", "the run to end")
    assert tmux.title() == "KNOWN-TITLE"
    assert tmux.buffers() == ""
    rows = [row for row in screen.splitlines() if row.strip()]
    assert "turn started: please ␛]0;PWNED-TITLE" in rows[0]  # the first line was not wiped
    assert any("model says ␛]0;PWNED-TITLE" in row for row in rows)
    assert any(row.startswith("1 session, ") for row in rows)
