"""`HookSocket`: the hooks' socket, spoken to over a real Unix socket by a bare client (what a hook
sends, and what a hook that misbehaves sends). The replies are the CLIs' own hook output, rendered
here (`render`); that output is checked against the CLIs' shapes in `test_hook_client.py`."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream
from support_terminal import event_line

from agent_tui.private_files import UntrustedStateError
from agent_tui.terminal import hook_socket
from agent_tui.terminal.hook_socket import HookSocket, HookSocketBusy, HookSocketError, Reply, render
from agent_tui.terminal.hook_wire import MAX_LINE, PING_LINE, Cli, output_of, socket_path

pytestmark = pytest.mark.anyio

EVENT = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "ls"}}
NO_OUTPUT = b"\n"
"""The reply that is no decision: an empty line."""


def output(reply: Reply, cli: Cli = "codex", event: dict[str, Any] = EVENT) -> bytes:
    """The reply line a hook gets for `reply` to `event` (the CLI's hook output, never empty here)."""
    rendered = render(cli, event, reply)
    assert rendered and output_of(rendered[:-1]) == rendered  # what the hook prints as it is
    return rendered


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="atui-s-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def answer_allow(cli: str, event: dict[str, Any]) -> Reply:
    return Reply("allow")


async def exchange(line: bytes) -> bytes:
    """Send `line` and return the one reply line (b"" when the server closed without one)."""
    async with await anyio.connect_unix(socket_path()) as stream:
        await stream.send(line)
        return await read_reply(stream)


async def read_reply(stream: SocketStream) -> bytes:
    try:
        return await BufferedByteReceiveStream(stream).receive_until(b"\n", MAX_LINE) + b"\n"
    except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
        return b""  # closed (or reset: closed with our line unread)


async def test_the_socket_is_ours_alone_and_answers_an_event(runtime: Path) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        asked.append((cli, event))
        return Reply("deny", message="no", interrupt=True)

    async with HookSocket(handler, lambda: True) as served:
        assert served.path == runtime / "agent-tui" / "hooks.sock"
        assert stat.S_IMODE(os.lstat(served.path.parent).st_mode) == 0o700
        info = os.lstat(served.path)
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
        assert await exchange(event_line("codex", EVENT)) == output(
            Reply("deny", message="no", interrupt=True)
        )
    assert asked == [("codex", EVENT)]
    assert not served.path.exists()  # removed on leaving


@pytest.mark.parametrize("watched", [True, False])
async def test_a_ping_is_answered_without_the_handler(runtime: Path, watched: bool) -> None:
    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        raise AssertionError("a ping reached the handler")

    async with HookSocket(handler, lambda: watched):
        pong = json.loads(await exchange(PING_LINE))
    assert pong == {"v": 2, "pong": True, "pid": os.getpid(), "watched": watched}


@pytest.mark.parametrize(
    "line",
    [
        b"garbage\n",
        b"[]\n",
        b'{"v":1,"cli":"codex","event":{"hook_event_name":"PermissionRequest"}}\n',  # an older hook
        b'{"v": 1, "ping": true}\n',  # an older `hooks status`: not answered as a pong either
        b'{"v":2,"cli":"gemini","event":{}}\n',
        b'{"v":2,"cli":"codex","event":"PermissionRequest"}\n',
        b'{"v":2,"cli":"codex"}\n',
        b"[" * 100_000 + b"\n",
        b'{"v":2,"cli":"codex","event":' + b"{" * 100_000 + b"}\n",
        b'{"v":2,"cli":"codex","event":{"hook_event_name":"PermissionRequest","x":"\xff"}}\n',
        b'{"v":2,"cli":"codex","event":{"hook_event_name":"PermissionRequest","x":"a\tb"}}\n',
        # fields smuggled past the event's end: it is the bytes up to the final `}`, one object
        b'{"v":2,"cli":"codex","event":{"hook_event_name":"PermissionRequest"},"cli":"claude-code","x":{}}\n',
        b'{"v":2,"cli":"codex","event":{"hook_event_name":"PermissionRequest"}} \n',
        b'{"v": 2, "cli": "codex", "event": {"hook_event_name": "PermissionRequest"}}\n',
    ],
    ids=[
        "text",
        "array",
        "version",
        "old-ping",
        "cli",
        "event-string",
        "no-event",
        "deep",
        "deep-event",
        "not-utf8",
        "raw-tab-in-a-string",
        "smuggled-fields",
        "trailing-blank",
        "not-the-prefix",
    ],
)
async def test_a_malformed_request_is_no_decision_and_never_reaches_the_handler(
    runtime: Path, line: bytes
) -> None:
    asked: list[object] = []

    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        asked.append(event)
        return Reply("allow")

    async with HookSocket(handler, lambda: True):
        assert await exchange(line) == NO_OUTPUT
    assert asked == []


async def test_a_line_longer_than_the_limit_is_not_read_nor_answered(runtime: Path) -> None:
    async with HookSocket(answer_allow, lambda: True):
        async with await anyio.connect_unix(socket_path()) as stream:
            try:
                await stream.send(b"x" * (MAX_LINE + 1))
            except anyio.BrokenResourceError:
                pass  # closed while we were still sending
            assert await read_reply(stream) == b""
        assert await exchange(event_line("codex", EVENT)) == output(Reply("allow"))  # still serving


async def test_a_hook_that_sends_nothing_is_dropped_after_the_read_time(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hook_socket, "READ_SECONDS", 0.05)
    async with HookSocket(answer_allow, lambda: True), await anyio.connect_unix(socket_path()) as stream:
        await stream.send(b'{"v":2')  # and no more
        assert await read_reply(stream) == b""


@pytest.mark.parametrize("how", ["raises", "not-a-reply"])
async def test_a_failing_handler_is_no_decision_and_the_server_goes_on(
    runtime: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[int] = []

    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            if how == "raises":
                raise RuntimeError("secret event text")
            return "allow"  # type: ignore[return-value]
        return Reply("allow")

    async with HookSocket(handler, lambda: True):
        assert await exchange(event_line("claude-code", EVENT)) == NO_OUTPUT
        assert await exchange(event_line("claude-code", EVENT)) == output(Reply("allow"))
    assert "secret event text" not in caplog.text  # the event and the error's text are not logged


async def test_a_hook_that_goes_away_cancels_its_handler_and_nothing_is_written(runtime: Path) -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return Reply("allow")

    async with HookSocket(handler, lambda: True):
        stream = await anyio.connect_unix(socket_path())
        await stream.send(event_line("claude-code", EVENT))
        await started.wait()
        await stream.aclose()
        with anyio.fail_after(60):  # a question never withdrawn would wait forever: fail, not hang
            await cancelled.wait()


async def test_many_hooks_wait_at_once(runtime: Path) -> None:
    count = 30
    arrived = 0
    everyone = anyio.Event()

    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        nonlocal arrived
        arrived += 1
        if arrived == count:
            everyone.set()
        await everyone.wait()
        return Reply("deny", message=str(event["n"]))

    replies: dict[int, bytes] = {}

    async def one(n: int) -> None:
        replies[n] = await exchange(event_line("codex", {**EVENT, "n": n}))

    async with HookSocket(handler, lambda: True), anyio.create_task_group() as tasks:
        for n in range(count):
            tasks.start_soon(one, n)
    assert replies == {
        n: output(Reply("deny", message=str(n)), event={**EVENT, "n": n}) for n in range(count)
    }


async def test_a_stale_socket_file_is_replaced(runtime: Path) -> None:
    folder = runtime / "agent-tui"
    folder.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as dead:
        dead.bind(str(folder / "hooks.sock"))  # left by an agent-tui that died: nobody accepts
    async with HookSocket(answer_allow, lambda: True):
        assert await exchange(event_line("codex", EVENT)) == output(Reply("allow"))


async def test_a_live_agent_tui_holding_the_socket_is_named(runtime: Path) -> None:
    async with HookSocket(answer_allow, lambda: True) as first:
        with pytest.raises(HookSocketBusy) as raised:
            async with HookSocket(answer_allow, lambda: True):
                pass
        assert str(raised.value) == (
            f"another agent-tui (pid {os.getpid()}) already answers the Claude Code and Codex hooks at "
            f"{first.path}: quit it first, or leave the hooks to it"
        )
        assert await exchange(event_line("codex", EVENT)) == output(Reply("allow"))  # the first goes on


async def test_leaving_removes_the_socket_file_only_if_it_is_still_ours(runtime: Path) -> None:
    async with HookSocket(answer_allow, lambda: True) as served:
        served.path.unlink()  # someone else's socket took the name meanwhile
        with socket.socket(socket.AF_UNIX) as later:
            later.bind(str(served.path))
            before = os.lstat(served.path).st_ino
    assert os.lstat(served.path).st_ino == before


@pytest.mark.parametrize("how", ["symlink", "others-write"])
async def test_a_runtime_folder_that_is_not_ours_is_refused(runtime: Path, how: str) -> None:
    folder = runtime / "agent-tui"
    if how == "symlink":
        (runtime / "elsewhere").mkdir(mode=0o700)
        folder.symlink_to(runtime / "elsewhere")
    else:
        folder.mkdir()
        folder.chmod(0o777)
    with pytest.raises(UntrustedStateError):
        async with HookSocket(answer_allow, lambda: True):
            pass
    assert not (runtime / "elsewhere" / "hooks.sock").exists()
    assert not (folder / "hooks.sock").exists() or how == "symlink"


async def test_a_connection_that_fails_in_an_unforeseen_way_is_its_own_end_only(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures = [RuntimeError("a bug of ours")]
    real = hook_socket.peer_uid

    def flaky(sock: socket.socket) -> int | None:
        if failures:
            raise failures.pop()
        return real(sock)

    monkeypatch.setattr(hook_socket, "peer_uid", flaky)
    async with HookSocket(answer_allow, lambda: True):
        assert await exchange(event_line("codex", EVENT)) == b""  # that one is closed
        assert await exchange(event_line("codex", EVENT)) == output(Reply("allow"))  # the server goes on
    assert failures == []


async def test_a_socket_path_too_long_is_one_sentence(runtime: Path) -> None:
    deep = runtime / ("d" * 120)
    deep.mkdir(mode=0o700)
    path = deep / "agent-tui" / "hooks.sock"
    with pytest.raises(HookSocketError) as raised:
        async with HookSocket(answer_allow, lambda: True, path=path):
            pass
    assert str(raised.value) == (
        f"agent-tui cannot listen for the Claude Code and Codex hooks at {path}: AF_UNIX path too long"
    )


async def test_two_agent_tuis_starting_at_once_one_serves_and_the_other_is_told(runtime: Path) -> None:
    outcomes: list[str] = []
    both, done = anyio.Event(), anyio.Event()

    def say(outcome: str) -> None:
        outcomes.append(outcome)
        if len(outcomes) == 2:
            both.set()

    async def start() -> None:
        try:
            async with HookSocket(answer_allow, lambda: True):
                say("serves")
                await done.wait()
        except HookSocketBusy:
            say("busy")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(start)
        tasks.start_soon(start)
        await both.wait()  # the second could not serve while the first does
        assert await exchange(event_line("codex", EVENT)) == output(Reply("allow"))
        done.set()
    assert sorted(outcomes) == ["busy", "serves"]


@pytest.mark.parametrize(
    ("name", "reply"),
    [("PermissionRequest", Reply()), ("PreToolUse", Reply("allow")), ("SessionStart", Reply("deny"))],
    ids=["no-decision", "allow-before-the-tool", "no-form"],
)
async def test_a_reply_with_no_output_for_the_cli_is_the_empty_line(
    runtime: Path, name: str, reply: Reply
) -> None:
    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        return reply

    async with HookSocket(handler, lambda: True):
        assert await exchange(event_line("claude-code", {**EVENT, "hook_event_name": name})) == NO_OUTPUT


async def test_the_output_escapes_what_the_event_and_the_message_hold(runtime: Path) -> None:
    # A message (or a suggestion Claude Code echoed from the event) with line breaks and control
    # characters still makes one line of printable ASCII, which the hook prints.
    hostile = "no\nmore\r\x1b]0;title\x07 é \u2028"

    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        return Reply("deny", message=hostile)

    async with HookSocket(handler, lambda: True):
        got = await exchange(event_line("claude-code", EVENT))
    assert output_of(got[:-1]) == got
    assert json.loads(got)["hookSpecificOutput"]["decision"]["message"] == hostile


async def test_an_output_longer_than_a_line_is_no_decision(runtime: Path) -> None:
    async def handler(cli: str, event: dict[str, Any]) -> Reply:
        return Reply("deny", message="x" * MAX_LINE)

    async with HookSocket(handler, lambda: True):
        assert await exchange(event_line("codex", EVENT)) == NO_OUTPUT
