"""`agent-tui acp` at the edges of its pipes: garbage in, stdout closed, redirected or gone.

Real processes; what they must never do is print a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support_providers import clean_env
from support_signals import (
    SHELL_STEPS,
    assert_logs_closed,
    assert_stopped,
    start,
    unsandboxed_env,
    wait_for_pids,
)

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "acp.json"
    path.write_text(json.dumps({"sessions": [{"prompt": "(client)", "steps": [{"text": ["hi"]}]}]}))
    return path


def acp_command(tmp_path: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "agent_tui",
        "acp",
        "--scenario",
        str(scenario(tmp_path)),
        "--sessions-dir",
        str(tmp_path / "sessions"),
    ]


def lines(*messages: Any) -> bytes:
    return b"".join((m if isinstance(m, bytes) else json.dumps(m).encode()) + b"\n" for m in messages)


def test_garbage_gets_json_rpc_errors_and_the_server_goes_on(tmp_path: Path) -> None:
    garbage = [
        b"this is not json",
        b"{",
        b"[1, 2]",
        b'"a string"',
        {"id": 2, "method": "initialize"},  # no "jsonrpc": "2.0"
        {"jsonrpc": "2.0", "id": [3], "method": "initialize"},
        {"jsonrpc": "2.0", "id": 4, "method": 5},
        {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": "x"},
        {"jsonrpc": "2.0", "id": 6},
        {"jsonrpc": "2.0", "id": 7, "error": "bad"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "result": {}},
        {"jsonrpc": "2.0", "result": {}},
        {"jsonrpc": "2.0", "id": 99, "result": {}},  # answers nothing we asked: ignored
        {"jsonrpc": "2.0", "id": 8, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": [1, 2]},
        b"\xff\xfe not even utf-8",
        b"",
        INITIALIZE,
    ]
    done = subprocess.run(acp_command(tmp_path), input=lines(*garbage), capture_output=True, env=clean_env())
    assert done.returncode == 0
    assert b"Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    codes = [(answer.get("id"), answer["error"]["code"]) for answer in answers if "error" in answer]
    expected = [
        (None, -32700),
        (None, -32700),
        (None, -32600),
        (None, -32600),
        (2, -32600),
        (None, -32600),
        (4, -32600),
        (5, -32600),
        (6, -32600),
        (7, -32600),
        (None, -32600),
        (None, -32600),
        (8, -32601),  # the SDK's own answer to a well-formed request it has no method for
        (9, -32602),
        (None, -32700),
    ]
    # Sorted: the SDK answers the requests it takes in tasks of their own, so not in line order.
    assert sorted(codes, key=repr) == sorted(expected, key=repr)
    (initialized,) = [answer for answer in answers if answer.get("id") == 1]
    assert initialized["result"]["protocolVersion"] == 1
    assert all(answer["jsonrpc"] == "2.0" for answer in answers)


def test_stdout_redirected_to_a_file_gets_the_answers(tmp_path: Path) -> None:
    out = tmp_path / "answers.jsonl"
    with open(out, "wb") as file:
        done = subprocess.run(
            acp_command(tmp_path),
            input=lines(INITIALIZE),
            stdout=file,
            stderr=subprocess.PIPE,
            env=clean_env(),
        )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    (answer,) = [json.loads(line) for line in out.read_bytes().splitlines()]
    assert answer["id"] == 1 and "result" in answer


@pytest.mark.parametrize("closed", ["stdout", "stdin", "stderr"])
def test_a_closed_descriptor_is_one_line_or_a_quiet_end(tmp_path: Path, closed: str) -> None:
    command = " ".join(f"'{word}'" for word in acp_command(tmp_path))
    redirect = {"stdout": ">&-", "stdin": "<&-", "stderr": "2>&-"}[closed]
    # Another protocol version: the server says so on stderr, which must never end up on stdout.
    other_version = {**INITIALIZE, "params": {"protocolVersion": 7}}
    done = subprocess.run(
        ["/bin/sh", "-c", f"exec {command} {redirect}"],
        input=lines(b"garbage", other_version),
        capture_output=True,
        env=clean_env(),
    )
    assert b"Traceback" not in done.stderr
    if closed == "stdout":
        assert done.returncode == 2
        assert done.stderr == b"agent-tui: acp: stdout is closed; the client reads the answers there\n"
    elif closed == "stdin":  # no input: the end of the input at once
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    else:
        assert done.returncode == 0
        answers = [json.loads(line) for line in done.stdout.splitlines()]  # JSON-RPC only
        assert [answer["id"] for answer in answers] == [None, 1]


def test_a_client_that_stops_reading_ends_the_server_quietly(tmp_path: Path) -> None:
    process = subprocess.Popen(
        acp_command(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        process.stdin.write(lines(INITIALIZE))
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        process.stdout.close()  # the client stops reading; its stdin stays open
        new = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": []},
        }
        process.stdin.write(lines(new))
        process.stdin.flush()
        assert process.wait(timeout=60) == 0  # the answer found no reader: the server ends
        assert b"Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


LONG_SHELL_STEPS = [json.loads(json.dumps(SHELL_STEPS[0]).replace("sleep 30", "sleep 300")), SHELL_STEPS[1]]
"""Children that outlive the test's patience: only the server noticing the closed pipe ends them."""


def test_a_client_that_closes_stdout_during_a_shell_call_stops_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    path = tmp_path / "shell.json"
    script = {
        "sessions": [{"prompt": "(client)", "steps": LONG_SHELL_STEPS}],
        "policy": {"byTool": {"shell": "allow"}},
    }
    path.write_text(json.dumps(script))
    sessions = tmp_path / "sessions"
    process = start(
        ["acp", "--scenario", str(path), "--sessions-dir", str(sessions)],
        unsandboxed_env(tmp_path),
        stdin=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None

    def ask(request: dict[str, Any]) -> dict[str, Any]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(lines(request))
        process.stdin.flush()
        while (answer := json.loads(process.stdout.readline())).get("id") != request[
            "id"
        ] or "method" in answer:
            pass
        return answer

    try:
        ask(INITIALIZE)
        new = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(work), "mcpServers": []},
        }
        session_id = ask(new)["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        process.stdin.write(lines({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}))
        process.stdin.flush()
        pids = wait_for_pids(work / "pids", process)
        process.stdout.close()  # the client went away; nothing is written while the shell runs
        assert process.wait(timeout=60) == 0  # the closed pipe alone ended the server
        assert b"Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert_logs_closed(sessions)
    assert_stopped(pids)


def test_a_stdout_that_fails_otherwise_is_one_line_and_status_1(tmp_path: Path) -> None:
    with open("/dev/full", "wb") as full:  # every write: ENOSPC
        done = subprocess.run(
            acp_command(tmp_path),
            input=lines(INITIALIZE),
            stdout=full,
            stderr=subprocess.PIPE,
            env=clean_env(),
        )
    assert done.returncode == 1
    assert done.stderr == b"agent-tui acp: stdout: No space left on device; the server stopped\n"


def test_a_message_nested_too_deep_is_an_error_and_the_server_goes_on(tmp_path: Path) -> None:
    """100,000 nested arrays (past what any JSON parser here recurses to), a request nested 900
    levels (which the parser reads, but the code after it would not), a lone surrogate escape
    (which no log line can hold: a prompt with one was "could not store"), then a real request."""
    deepest = b"[" * 100_000 + b"]" * 100_000
    deep = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {"x": json.loads("[" * 900 + "]" * 900)},
    }
    deep_in_id = b'{"jsonrpc":"2.0","id":' + b"[" * 500 + b"]" * 500 + b',"method":"initialize"}'
    surrogate = b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"text":"\\ud800"}}'
    messages = [deepest, json.dumps(deep).encode(), deep_in_id, surrogate, INITIALIZE]
    done = subprocess.run(acp_command(tmp_path), input=lines(*messages), capture_output=True, env=clean_env())
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    codes = [(answer.get("id"), answer["error"]["code"]) for answer in answers if "error" in answer]
    assert codes == [(None, -32700), (2, -32600), (None, -32600), (None, -32700)]
    (initialized,) = [answer for answer in answers if answer.get("id") == 1]
    assert initialized["result"]["protocolVersion"] == 1
