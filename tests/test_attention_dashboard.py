"""Attention in the running dashboard: the config's notify_command (a real script that records
its stdin and environment, one that fails, one that hangs), the dashboard telling it while the
terminal has lost focus, and the desktop notification in a real pty, attacked with a hostile name."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support_terminal import ATTACK, MARKERS, assert_safe
from support_workbench import agent_script, scripted_models, wait_for
from textual import events

from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.providers.config import ConfigError, load_config
from agent_tui.reducer import AttentionPolicy
from agent_tui.runtime.notify_command import NotifyCommand
from agent_tui.runtime.workbench import AgentSpec
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.run_surface import start_agent

pytestmark = pytest.mark.anyio

RECORDER = """\
import json, os, sys
data = sys.stdin.read()
with open(sys.argv[1], "a") as out:
    out.write(json.dumps({"stdin": data, "env": dict(os.environ)}) + "\\n")
"""

HANGER = """\
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
with open(sys.argv[1], "w") as out:
    out.write(str(child.pid))
sys.stdin.read()
child.wait()
"""


def script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def recorded(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def ended(pid: int, within: float = 10.0) -> bool:
    """Whether `pid` is gone once the kernel has carried out a SIGKILL sent to it (its death
    is asynchronous: a process killed a moment ago may still be exiting)."""
    deadline = time.monotonic() + within
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)  # polling the kernel's process table until the kill took effect
    return True


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1].startswith("Z")  # a zombie no longer runs
    except FileNotFoundError:
        return True


async def test_the_command_gets_the_json_on_stdin_and_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    monkeypatch.setenv("SOME_HARMLESS", "kept")
    out = tmp_path / "out.jsonl"
    recorder = script(tmp_path, "recorder.py", RECORDER)
    command = NotifyCommand((sys.executable, str(recorder), str(out)))
    assert await command.send(b'{"body": "2 requests waiting"}') is None
    [entry] = recorded(out)
    assert entry["stdin"] == '{"body": "2 requests waiting"}'
    env = entry["env"]
    assert isinstance(env, dict)
    assert "OPENAI_API_KEY" not in env and env["SOME_HARMLESS"] == "kept"
    assert "sk-very-secret" not in json.dumps(env)


async def test_a_failing_a_missing_and_a_hanging_command_each_say_why(tmp_path: Path) -> None:
    failing = script(tmp_path, "fail.py", "import sys; sys.stderr.write('no route\\n'); sys.exit(3)")
    problem = await NotifyCommand((sys.executable, str(failing)), where="cfg.toml:4").send(b"{}")
    assert problem is not None
    assert "exited with status 3: no route" in problem and "(cfg.toml:4)" in problem

    missing = await NotifyCommand((str(tmp_path / "nope"),)).send(b"{}")
    assert missing is not None and "could not start" in missing

    pid_file = tmp_path / "child.pid"
    hanger = script(tmp_path, "hang.py", HANGER)
    command = NotifyCommand((sys.executable, str(hanger), str(pid_file)), timeout=1.0)
    problem = await command.send(b"{}")
    assert problem is not None and "did not finish within 1 s and was stopped" in problem
    assert ended(int(pid_file.read_text())), "the hanging command's child outlived it"


def test_the_config_reads_notify_command_and_refuses_a_string(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('\nnotify_command = ["ntfy", "publish", "my-topic"]\n')
    loaded = load_config(config)
    assert loaded.notify_command == ("ntfy", "publish", "my-topic")
    assert loaded.where_set("notify_command") == f"{config}:2"
    config.write_text('notify_command = "ntfy publish my-topic"\n')
    with pytest.raises(ConfigError, match=r":1: notify_command must be a list"):
        load_config(config)
    config.write_text('notify_command = ["ntfy", 3]\n')
    with pytest.raises(ConfigError, match=r":1: notify_command: every item"):
        load_config(config)


def asking_app(tmp_path: Path, command: NotifyCommand | None) -> AgentTuiApp:
    write = ScriptedToolCall(tool="write_file", args={"path": "a.txt", "content": "a\n"})
    provider = ScriptedProvider(
        agents={
            "asker": agent_script(Step(text=["A."], toolCalls=[write])),
            "other": agent_script(Step(text=["B."], toolCalls=[write])),
        }
    )
    project = tmp_path / "project"
    project.mkdir()
    return AgentTuiApp(
        sessions_dir=tmp_path / "sessions",
        project=project,
        models=scripted_models(provider),
        notify_command=command,
        attention=AttentionPolicy(lambda: time.monotonic_ns() // 1_000_000, gather_ms=0, min_gap_ms=0),
    )


async def test_away_from_the_dashboard_a_request_reaches_the_command(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    recorder = script(tmp_path, "recorder.py", RECORDER)
    app = asking_app(tmp_path, NotifyCommand((sys.executable, str(recorder), str(out))))
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: live.workbench is not None and live.hydrated, "the engine")
        await start_agent(live, app.post_message, AgentSpec("Ask", live.project or tmp_path, name="asker"))
        await wait_for(pilot, lambda: len(live.questions.waiting()) == 1, "the first request")
        assert app.attention.sent == []  # the user was looking: the bell and the title do
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus, "the blur")
        await start_agent(
            live, app.post_message, AgentSpec("Ask too", live.project or tmp_path, name="other")
        )
        await wait_for(pilot, lambda: bool(recorded(out)), "the command to run", seconds=20)
        [entry] = recorded(out)
        told = json.loads(str(entry["stdin"]))
        assert told["body"] == "1 request waiting: other asks for write_file (write)"
        assert told["counts"]["approval"] == 1
        await pilot.press("q")


async def test_a_failing_command_is_reported_once_and_a_hanging_one_never_freezes_the_ui(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child.pid"
    hanger = script(tmp_path, "hang.py", HANGER)
    app = asking_app(tmp_path, NotifyCommand((sys.executable, str(hanger), str(pid_file)), timeout=3.0))
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: live.workbench is not None and live.hydrated, "the engine")
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus, "the blur")
        await start_agent(live, app.post_message, AgentSpec("Ask", live.project or tmp_path, name="asker"))
        await wait_for(
            pilot, lambda: pid_file.exists() and pid_file.read_text() != "", "the command to start"
        )
        # The command hangs: the dashboard still answers keys meanwhile.
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "the help")
        await pilot.press("escape")
        assert app.app_focus  # a key says the user is back; and they leave again
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus, "the second blur")
        await start_agent(
            live, app.post_message, AgentSpec("Ask too", live.project or tmp_path, name="other")
        )
        await wait_for(pilot, lambda: len(app.attention.sent) == 2, "the second notification", seconds=20)

        def failures() -> int:
            return sum(1 for n in app.notices if n.title == "The notify command failed")

        await wait_for(pilot, lambda: failures() == 1, "the failure to be reported", seconds=20)
        assert app.attention.reported is not None and "did not finish within 3 s" in app.attention.reported
        await wait_for(pilot, lambda: not any(w.group == "notify-command" for w in app.workers), "both runs")
        assert failures() == 1
        assert ended(int(pid_file.read_text()))
        await pilot.press("q")


DRIVER = """\
import sys, time
from pathlib import Path
from agent_tui.engine.scenario import ScriptedToolCall, Step, AgentScript
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.reducer import AttentionPolicy
from agent_tui.runtime.model_router import ModelChoice
from agent_tui.runtime.notify_command import NotifyCommand
from agent_tui.runtime.workbench import AgentSpec
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.run_surface import start_agent

base, name = Path(sys.argv[1]), sys.argv[2]
write = ScriptedToolCall(tool="write_file", args={"path": "a.txt", "content": "a\\n"})
provider = ScriptedProvider(agents={name: AgentScript(steps=[Step(text=["A."], toolCalls=[write])])})
project = base / "project"
project.mkdir()
app = AgentTuiApp(
    sessions_dir=base / "sessions",
    project=project,
    models=[ModelChoice("scripted", "scripted", build=lambda: provider)],
    notify_command=NotifyCommand((sys.executable, sys.argv[3], sys.argv[4])),
    attention=AttentionPolicy(lambda: time.monotonic_ns() // 1_000_000, gather_ms=0),
)

def focus(focused):
    if not focused:  # the terminal said it lost focus: now an agent asks
        app.run_worker(start_agent(app.live, app.post_message, AgentSpec("Ask", project, name=name)))

app.call_later(lambda: app.watch(app, "app_focus", focus, init=False))
app.run()
"""


def read_until(fd: int, found: bytes, seen: bytearray, seconds: float = 30) -> None:
    """Read the pty into `seen` until it holds `found` (fail after `seconds`)."""
    deadline = time.monotonic() + seconds
    while found not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {found!r} in what the dashboard wrote: {bytes(seen[-400:])!r}"
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    assert found in seen, f"the pty closed before {found!r}: {bytes(seen[-400:])!r}"


def test_in_a_real_terminal_a_lost_focus_brings_a_desktop_notification_a_name_cannot_break(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.jsonl"
    recorder = script(tmp_path, "recorder.py", RECORDER)
    driver = script(tmp_path, "driver.py", DRIVER)
    name = "evil " + ATTACK
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the dashboard in the pty
        os.execve(
            sys.executable, [sys.executable, str(driver), str(tmp_path), name, str(recorder), str(out)], env
        )
    seen = bytearray()
    try:
        read_until(fd, b"\x1b[?1004h", seen)  # Textual asked for focus reports
        os.write(fd, b"\x1b[O")  # the terminal lost focus
        read_until(fd, b"\x1b]9;", seen)
        start = seen.index(b"\x1b]9;")
        deadline = time.monotonic() + 20
        while seen.find(b"\x07", start) < 0:
            assert time.monotonic() < deadline, "the notification never ended"
            drain(fd, seen, 0.1)
        body = seen[start + 4 : seen.index(b"\x07", start)].decode()
        assert_safe(body, "the notification")
        assert body.startswith("agent-tui: 1 request waiting: evil ")
        assert all(marker in body for marker in MARKERS[:2]), body  # (the name is cut at 40)
        assert body.endswith("asks for write_file (write)")
        deadline = time.monotonic() + 20
        while not recorded(out):
            assert time.monotonic() < deadline, "the notify command never ran"
            drain(fd, seen, 0.1)
        told = json.loads(str(recorded(out)[0]["stdin"]))
        assert told["body"] == body.removeprefix("agent-tui: ")
        os.write(fd, b"q")
        read_until(fd, b"Quit?", seen)  # a request waits: quitting asks first
        os.write(fd, b"y")
        drain(fd, seen, 20)
    finally:
        reap(pid)
        os.close(fd)


def drain(fd: int, seen: bytearray, seconds: float) -> None:
    """Read the pty for up to `seconds`, or until it closes (the dashboard left)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        seen += chunk


def reap(pid: int) -> None:
    """Wait for the dashboard to leave (it was told to); kill it if it has not."""
    for _ in range(200):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)


def test_the_module_runs_without_textual() -> None:
    code = textwrap.dedent(
        """
        import sys
        import agent_tui.reducer.attention, agent_tui.runtime.notify_command
        assert "textual" not in sys.modules
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True)
