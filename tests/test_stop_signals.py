"""SIGINT, SIGTERM and SIGHUP stop every headless command the same way, tried on real processes.

Each test starts `python -m agent_tui` (a scenario run, a `--prompt` run against the loopback
fake model, or `agent-tui acp` driven as an ACP client over its pipes), lets the agent run a shell
command whose two `sleep 30` children write their pids to a file, and sends the signal once both
pids are there. Then: the exit status is 128 + the signal's number, every log ends with its
`turn.completed{cancelled}` and keeps the chains of the event log, the children are gone (their
process group was killed), and a scenario's scratch copy is gone.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import orjson
import pytest
from fake_model_server import FakeModelServer, Stream, openai_stream
from support_providers import FAKE_KEY
from support_signals import (
    CHILDREN,
    SHELL_STEPS,
    acp_server,
    assert_logs_closed,
    assert_stopped,
    finish,
    private_env,
    start,
    wait_for_pids,
)

SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]


@pytest.mark.parametrize("number", SIGNALS, ids=lambda number: signal.Signals(number).name)
def test_a_signal_stops_a_scenario_run_during_a_shell_call(tmp_path: Path, number: int) -> None:
    (tmp_path / "ws").mkdir()
    scenario = tmp_path / "s.json"
    scenario.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": "ws", "steps": SHELL_STEPS}]}))
    tmp, env = private_env(tmp_path)
    sessions = tmp_path / "sessions"
    args = ["run", str(scenario), "--sessions-dir", str(sessions), "--approve", "allow"]
    process = start(args, env)
    try:
        (copy,) = wait_for_copies(tmp)
        pids = wait_for_pids(copy / "ws" / "pids", process)
        process.send_signal(number)
    finally:
        out, err = finish(process)
    assert process.returncode == 128 + number, out + err
    assert "turn ended: cancelled" in out and "Traceback" not in err
    said = "interrupted" if number == signal.SIGINT else f"stopped by {signal.Signals(number).name}"
    assert err.splitlines()[-1] == f"agent-tui: {said}"
    assert_logs_closed(sessions)
    assert_stopped(pids)
    assert list(tmp.iterdir()) == []  # the scratch copy is gone
    assert not (tmp_path / "ws" / "pids").exists()  # it ran in the copy, never in the scenario's own


def wait_for_copies(tmp: Path) -> list[Path]:
    deadline = time.monotonic() + 60
    while not (copies := list(tmp.glob("agent-tui-*"))):
        assert time.monotonic() < deadline, "no scratch copy was made"
        time.sleep(0.05)
    return copies


@pytest.mark.parametrize("number", SIGNALS, ids=lambda number: signal.Signals(number).name)
def test_a_signal_stops_a_prompt_run_during_a_shell_call(tmp_path: Path, number: int) -> None:
    project = tmp_path / "project"
    project.mkdir()
    sessions = tmp_path / "sessions"
    call = ("call_1", "shell", [json.dumps({"cmd": CHILDREN})])
    with FakeModelServer() as server:
        server.script(Stream(openai_stream(["Running."], [call])), Stream(openai_stream(["Done."])))
        _, env = private_env(tmp_path, OPENAI_API_KEY=FAKE_KEY)  # its config: the sandbox off, no model
        args = ["run", "--prompt", "go", "--cwd", str(project), "--sessions-dir", str(sessions)]
        args += [
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            server.openai_url,
            "--approve",
            "allow",
        ]
        process = start(args, env)
        try:
            pids = wait_for_pids(project / "pids", process)
            process.send_signal(number)
        finally:
            out, err = finish(process)
    assert process.returncode == 128 + number, out + err
    assert "turn ended: cancelled" in out and "Traceback" not in err
    assert_logs_closed(sessions)
    assert_stopped(pids)


@pytest.mark.parametrize("number", SIGNALS, ids=lambda number: signal.Signals(number).name)
def test_a_signal_stops_the_acp_server_during_a_shell_call(tmp_path: Path, number: int) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with acp_server(tmp_path, SHELL_STEPS) as (client, sessions):
        assert "result" in client.answer(client.request("initialize", {"protocolVersion": 1}))
        created = client.answer(client.request("session/new", {"cwd": str(work), "mcpServers": []}))
        session_id = created["result"]["sessionId"]
        prompt = client.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        )
        pids = wait_for_pids(work / "pids", client.process)
        client.process.send_signal(number)
        client.ended()
        assert client.process.returncode == 128 + number
        # The prompt under way was answered before the server left.
        assert client.answer(prompt, timeout=0)["result"]["stopReason"] == "cancelled"
        assert client.process.stderr is not None
        assert "Traceback" not in client.process.stderr.read().decode()
    assert_logs_closed(sessions)
    assert_stopped(pids)
