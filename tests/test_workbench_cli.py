"""The command line of the workbench, run as a user runs it: real subprocesses, and the dashboard
in a real pseudo-terminal that gets SIGTERM, SIGHUP or simply loses its terminal.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from support_providers import agent_tui

from agent_tui import __version__
from agent_tui.reducer import project_state
from agent_tui.replay.sources import replay_all
from agent_tui.tui.formatting import decision_text

ROOT = Path(__file__).resolve().parent.parent


def clean_env(tmp_path: Path) -> dict[str, str]:
    """No config, a private home, data and temp dir: nothing of the machine's leaks in."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AGENT_TUI", "XDG_"))}
    for name in ("home", "config", "data", "tmp"):
        (tmp_path / name).mkdir(exist_ok=True)
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        TMPDIR=str(tmp_path / "tmp"),
        TERM="xterm-256color",
    )
    env.pop("OPENAI_API_KEY", None)
    env.pop("ANTHROPIC_API_KEY", None)
    return env


class TestCommands:
    def test_version(self) -> None:
        result = agent_tui("--version")
        assert (result.returncode, result.stdout) == (0, f"agent-tui {__version__}\n")

    def test_sessions_lists_a_directory_newest_first(self, tmp_path: Path) -> None:
        scenario = tmp_path / "s.json"
        (tmp_path / "ws").mkdir()
        sessions = [
            {
                "agentName": name,
                "prompt": f"do {name}",
                "cwd": "ws",
                "startDelayMs": delay,
                "steps": [{"text": ["ok"]}],
            }
            for name, delay in (("first", 0), ("second", 1100))
        ]
        scenario.write_bytes(orjson.dumps({"sessions": sessions}))
        assert agent_tui("run", str(scenario), "--sessions-dir", str(tmp_path / "out"), "-q").returncode == 0
        result = agent_tui("sessions", "--sessions-dir", str(tmp_path / "out"))
        assert result.returncode == 0
        lines = result.stdout.splitlines()
        assert lines[0] == f"2 sessions in {tmp_path / 'out'}"
        named = [line for line in lines if "completed" in line]
        assert ["second" in named[0], "first" in named[1]] == [True, True]
        assert "'do second'" in named[0]

    def test_sessions_marks_the_ones_closed_in_the_dashboard(self, tmp_path: Path) -> None:
        from agent_tui.runtime.session_dirs import mark_closed

        scenario = tmp_path / "s.json"
        (tmp_path / "ws").mkdir()
        sessions = [
            {"agentName": name, "prompt": f"do {name}", "cwd": "ws", "steps": [{"text": ["ok"]}]}
            for name in ("kept", "gone")
        ]
        scenario.write_bytes(orjson.dumps({"sessions": sessions}))
        out = tmp_path / "out"
        assert agent_tui("run", str(scenario), "--sessions-dir", str(out), "-q").returncode == 0
        before = agent_tui("sessions", "--sessions-dir", str(out)).stdout
        assert "closed" not in before  # no column while nothing is closed
        state = project_state(replay_all(out))
        gone = next(s.session_id for s in state.sessions.values() if s.agent_name == "gone")
        mark_closed(out, [gone])  # what closing it in the dashboard writes
        result = agent_tui("sessions", "--sessions-dir", str(out))
        assert result.returncode == 0
        lines = result.stdout.splitlines()
        assert lines[0] == f"2 sessions in {out} (1 closed: the dashboard does not reopen them)"
        (closed,) = [line for line in lines if " gone " in line]
        (kept,) = [line for line in lines if " kept " in line]
        assert "completed   closed gone  'do gone'" in closed
        assert "completed          kept  'do kept'" in kept

    def test_sessions_of_a_project_with_none_yet(self, tmp_path: Path) -> None:
        env = clean_env(tmp_path)
        result = agent_tui("sessions", "--cwd", str(tmp_path), env=env)
        assert result.returncode == 0
        assert result.stdout.startswith(f"no sessions in {tmp_path / 'data' / 'agent-tui' / 'projects'}/")

    def test_a_sessions_dir_that_cannot_be_written_is_an_error_before_the_ui(self, tmp_path: Path) -> None:
        blocker = tmp_path / "a-file"
        blocker.write_text("in the way")
        result = agent_tui("--demo", "--sessions-dir", str(blocker / "sessions"), env=clean_env(tmp_path))
        assert result.returncode == 1
        assert result.stderr == f"agent-tui: {blocker / 'sessions'}: Not a directory\n"
        assert result.stdout == ""  # the UI never opened

    def test_answers_of_the_headless_runner_read_allowed_by_approve(self, tmp_path: Path) -> None:
        scenario = tmp_path / "s.json"
        (tmp_path / "ws").mkdir()
        write = {"tool": "write_file", "args": {"path": "a.txt", "content": "x"}}
        steps = [{"text": ["w"], "toolCalls": [write]}, {"text": ["done"]}]
        scenario.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": "ws", "steps": steps}]}))
        out = tmp_path / "out"
        assert (
            agent_tui("run", str(scenario), "--sessions-dir", str(out), "--approve", "allow").returncode == 0
        )
        state = project_state(replay_all(out))
        (session,) = state.sessions.values()
        (call,) = session.turns[0].tool_calls.values()
        decision = decision_text(call)
        assert decision is not None and decision.plain == "allowed by --approve"


# -- the dashboard in a real terminal ----------------------------------------------------------


class Terminal:
    """`agent-tui ARGS` in a pseudo-terminal of 120x40; its output is collected by a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        import fcntl
        import termios

        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become agent-tui
            os.chdir(ROOT)
            os.execve(sys.executable, [sys.executable, "-m", "agent_tui", *args], env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.output = bytearray()
        self.status: int | None = None
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        # select with a timeout, so `hang_up` can stop this thread before it closes the fd (a
        # read blocked in another thread would keep the terminal open).
        while not self._stop.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.output += chunk

    def hang_up(self) -> None:
        """Close the terminal, as when its window is closed: the kernel sends SIGHUP."""
        self._stop.set()
        self._reader.join(5)
        os.close(self.fd)
        self.fd = -1

    def wait_until(self, condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what}; output tail: {bytes(self.output[-400:])!r}"
                )
            if self.exited():
                raise AssertionError(f"agent-tui exited ({self.status}) before {what}")
            time.sleep(0.05)

    def exited(self) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status is not None

    def close(self) -> None:
        if not self.exited():
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self._stop.set()
        if self.fd >= 0:
            os.close(self.fd)


def asked(sessions: Path) -> int:
    """How many requests wait for the user in the logs (asked, not answered yet)."""
    waiting: set[str] = set()
    for path in sessions.glob("*.jsonl"):
        for raw in path.read_bytes().splitlines():
            if b'"permission.resolved"' not in raw:
                continue
            payload = orjson.loads(raw)["payload"]
            if payload["decision"] == "ask":
                waiting.add(payload["requestId"])
            else:
                waiting.discard(payload["requestId"])
    return len(waiting)


def turn_ends(sessions: Path) -> dict[str, tuple[int, list[str]]]:
    """Per log: (turns started, stop reasons of the turns that ended)."""
    ends = {}
    for path in sessions.glob("*.jsonl"):
        events = [orjson.loads(raw) for raw in path.read_bytes().splitlines()]
        started = sum(1 for e in events if e["type"] == "turn.started")
        ends[path.stem] = (
            started,
            [e["payload"]["stopReason"] for e in events if e["type"] == "turn.completed"],
        )
    return ends


@pytest.fixture
def demo(tmp_path: Path):
    sessions = tmp_path / "sessions"
    env = clean_env(tmp_path)
    terminal = Terminal(["--sessions-dir", str(sessions)], env)
    try:
        terminal.wait_until(lambda: asked(sessions) >= 2, "two approvals to wait in the demo")
        terminal.wait_until(lambda: b"approvals" in terminal.output, "the dashboard to draw")
        yield terminal, sessions, tmp_path
    finally:
        terminal.close()


def assert_every_turn_ended(sessions: Path) -> None:
    ends = turn_ends(sessions)
    assert ends and all(started == len(stops) for started, stops in ends.values()), ends
    assert "cancelled" in [stop for _, stops in ends.values() for stop in stops]


class TestLeaving:
    @pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
    def test_a_signal_ends_every_turn_and_restores_the_terminal(self, demo, number: int) -> None:
        terminal, sessions, tmp_path = demo
        assert b"no model configured" in terminal.output  # the demo says a model can be configured
        mark = len(terminal.output)
        os.kill(terminal.pid, number)
        terminal.wait_until(terminal.exited, "agent-tui to exit", seconds=30)
        assert terminal.status == 128 + number  # 143, 129: what a shell expects of a signalled run
        assert_every_turn_ended(sessions)
        terminal._reader.join(5)
        after = bytes(terminal.output[mark:])
        assert b"\x1b[?1049l" in after  # left the alternate screen: the terminal is restored
        assert list((tmp_path / "tmp").glob("agent-tui-*")) == []  # the demo's scratch workspace is gone

    def test_a_closed_terminal_ends_every_turn(self, demo) -> None:
        terminal, sessions, _ = demo
        terminal.hang_up()
        terminal.wait_until(terminal.exited, "agent-tui to exit", seconds=30)
        assert terminal.status == 128 + signal.SIGHUP
        assert_every_turn_ended(sessions)


class TestProjectRun:
    def test_a_real_model_run_on_a_project_is_kept_and_listed_for_the_next_run(self, tmp_path: Path) -> None:
        from fake_model_server import FakeModelServer, Stream, openai_stream

        project = tmp_path / "shop"
        project.mkdir()
        env = clean_env(tmp_path)
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["Hi", " there."])))
            model = ["--provider", "openai", "--model", "test-model", "--base-url", server.openai_url]
            terminal = Terminal(["--cwd", str(project), *model, "--prompt", "Say hi"], env)
            try:
                sessions = tmp_path / "data" / "agent-tui" / "projects"
                terminal.wait_until(
                    lambda: any(ends == (1, ["final"]) for ends in _all_turn_ends(sessions).values()),
                    "the agent's turn to end",
                )
                terminal.wait_until(lambda: b"say-hi" in terminal.output, "the agent in the tree")
                os.kill(terminal.pid, signal.SIGTERM)
                terminal.wait_until(terminal.exited, "agent-tui to exit", seconds=30)
                assert terminal.status == 128 + signal.SIGTERM
            finally:
                terminal.close()
        listing = agent_tui("sessions", "--cwd", str(project), env=env)
        assert listing.returncode == 0
        lines = listing.stdout.splitlines()
        assert lines[0].startswith("1 session in ") and "completed   say-hi  'Say hi'" in listing.stdout
        assert server.requests[0].body["messages"][-1] == {"role": "user", "content": "Say hi"}


def _all_turn_ends(projects: Path) -> dict[str, tuple[int, list[str]]]:
    ends: dict[str, tuple[int, list[str]]] = {}
    for directory in projects.glob("*") if projects.is_dir() else []:
        ends.update(turn_ends(directory))
    return ends


class TestTypingInARealTerminal:
    def test_ctrl_s_right_after_the_prompt_starts_the_agent_with_it(self, demo) -> None:
        # A terminal delivers the typed words and ctrl+s in one burst; the form must read the
        # prompt after the prompt box has taken every key (it once said "Write a prompt first").
        terminal, sessions, _ = demo
        before = set(sessions.glob("*.jsonl"))
        mark = len(terminal.output)
        os.write(terminal.fd, b"n")
        terminal.wait_until(lambda: b"should the agent do" in terminal.output[mark:], "the new-agent form")
        os.write(terminal.fd, b"Add a NOTES.md file\x13")  # \x13 is ctrl+s

        def started() -> bool:
            return any(
                b"Add a NOTES.md file" in path.read_bytes() for path in set(sessions.glob("*.jsonl")) - before
            )

        terminal.wait_until(started, "a session started with the typed prompt")
        assert b"Write a prompt first" not in terminal.output
