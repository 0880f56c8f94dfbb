"""`agent-tui web` without a browser: the token kept in the data dir, the access rules at the
HTTP and websocket level (403 and nothing else; the token taken once, no cookie, the path and
session value derived from it), the tab's process ended with its websocket, the cap on tabs,
and the start-up failures said in one line."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from support_bus_host import host_env
from support_nats import NatsServer, free_port, nats_server
from support_web import Web, children_of, start_web

from agent_tui.cli.web_command import is_loopback, page_url
from agent_tui.web.access_token import AccessToken, TokenStore
from agent_tui.web.server import MOST_TABS, at_cap_sentence

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return host_env(tmp_path)


@pytest.fixture
def web(nats_server: NatsServer, env: dict[str, str]) -> Iterator[Web]:
    served = start_web(["--bus", nats_server.url], env)
    try:
        yield served
    finally:
        said = served.stop()
        assert served.token not in said.replace(f"token={served.token}", "")


def token_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_DATA_HOME"]) / "agent-tui" / "web-token"


def test_the_token_is_kept_private_and_reused(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "data" / "web-token")
    first = store.load()
    assert first.made_because is None
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    again = store.load()
    assert again.token == first.token and again.made_because is None
    replaced = store.load(new=True)
    assert replaced.token != first.token and store.load().token == replaced.token
    assert first.token.value not in repr(first.token)


def test_a_token_others_could_read_is_replaced(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "web-token")
    old = store.load().token
    store.path.chmod(0o644)
    loaded = store.load()
    assert loaded.token != old and "could be read by others" in str(loaded.made_because)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    store.path.unlink()
    store.path.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text(old.value)
    loaded = store.load()
    assert "not a regular file" in str(loaded.made_because) and not store.path.is_symlink()
    store.path.write_text("short\n")
    store.path.chmod(0o600)
    assert "did not hold a token" in str(store.load().made_because)


def test_the_comparison_needs_the_whole_token() -> None:
    token = AccessToken("a" * 43)
    assert token.matches("a" * 43)
    for offered in (None, "", "a" * 42, "a" * 44, "A" * 43, "a" * 42 + "\u00e9"):
        assert not token.matches(offered)


@pytest.mark.parametrize(
    ("bind", "loopback", "url"),
    [
        ("127.0.0.1", True, "http://127.0.0.1:8765"),
        ("127.0.0.2", True, "http://127.0.0.2:8765"),
        ("::1", True, "http://[::1]:8765"),
        ("localhost", True, "http://localhost:8765"),
        ("192.168.1.5", False, "http://192.168.1.5:8765"),
        ("box.example", False, "http://box.example:8765"),
    ],
)
def test_loopback_and_the_printed_address(bind: str, loopback: bool, url: str) -> None:
    assert is_loopback(bind) is loopback
    assert page_url(bind, 8765) == url


async def get(url: str, **options: object) -> tuple[int, bytes, aiohttp.ClientResponse]:
    async with aiohttp.ClientSession() as session, session.get(url, allow_redirects=False, **options) as r:  # type: ignore[arg-type]
        return r.status, await r.read(), r


def refused_quietly(status: int, body: bytes, response: aiohttp.ClientResponse, token: str) -> bool:
    """A 403 with an empty body that sets no cookie (deleting an earlier version's is allowed)."""
    cookies = response.headers.getall("Set-Cookie", [])
    deleting = all(c.startswith('agent_tui_web=""') and "Max-Age=0" in c for c in cookies)
    return (status, body) == (403, b"") and deleting and token not in str(response.headers)


async def test_without_the_token_every_path_is_403_and_empty(web: Web) -> None:
    bad = "x" * len(web.token)
    secret = AccessToken(web.token).path_secret
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
    upgrade["Sec-WebSocket-Key"] = "dGhlIHNhbXBsZSBub25jZQ=="
    session = AccessToken(web.token).session
    cases: list[tuple[str, dict[str, object]]] = [
        ("/", {}),
        (f"/?token={bad}", {}),
        (f"/?token={web.token[:-1]}", {}),
        (f"/?token={web.token}&token={web.token}", {}),
        ("/static/js/textual.js", {}),
        ("/static/agent-tui/web.js", {}),
        ("/ws", {}),
        ("/no/such/path", {}),
        (f"/{secret[:-1]}/", {}),  # a path secret must be whole
        (f"/{secret}x/", {}),
        (f"/{web.token}/", {}),  # the token is not the path
        (f"/x/{secret}/", {}),
        (f"/{session}/", {}),
        ("/", {"cookies": {"agent_tui_web": web.token}}),  # the old token-as-cookie opens nothing
        ("/", {"cookies": {"agent_tui_web": bad}}),
        (f"/{secret}/ws", {"cookies": {"agent_tui_web": web.token}, "headers": upgrade}),
        (f"/?token={bad}", {"cookies": {"agent_tui_web": web.token}}),
        ("/", {"headers": {"Authorization": f"Bearer {web.token}"}}),
        (f"/?TOKEN={web.token}", {}),
        (f"/?token=%20{web.token}", {}),
        (f"/x?token={web.token}", {}),
        (f"/{secret}/?token={web.token}", {"headers": upgrade}),
        (f"/?token={web.token}", {"headers": upgrade}),  # the token opens no websocket
        # the websocket needs the session value, whole, once, and not the token in its place
        (f"/{secret}/ws", {"headers": upgrade}),
        (
            f"/{secret}/ws",
            {"headers": {**upgrade, "Sec-WebSocket-Protocol": f"agent-tui.session.{web.token}"}},
        ),
        (
            f"/{secret}/ws",
            {"headers": {**upgrade, "Sec-WebSocket-Protocol": f"agent-tui.session.{session[:-1]}"}},
        ),
        (f"/{secret}/ws", {"headers": {**upgrade, "Sec-WebSocket-Protocol": f"agent-tui, {session}"}}),
        (
            f"/{secret}/ws",
            {
                "headers": {
                    **upgrade,
                    "Sec-WebSocket-Protocol": f"agent-tui.session.{session}, agent-tui.session.{session}",
                }
            },
        ),
        (f"/{secret}/ws?session={session}", {"headers": upgrade}),
        (f"/{secret}/ws", {"headers": upgrade, "cookies": {"agent_tui_web": session}}),
    ]
    for path, options in cases:
        status, body, response = await get(web.base + path, **options)
        assert refused_quietly(status, body, response, web.token), path
    async with aiohttp.ClientSession() as session_:
        for method in ("POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"):
            for path in ("/static/js/textual.js", f"/?token={web.token}"):
                async with session_.request(method, web.base + path, allow_redirects=False) as response:
                    assert (response.status, await response.read()) == (403, b""), method
    assert children_of(web.process.pid) == set()  # nothing was started for any of them


def test_what_the_browser_keeps_is_derived_from_the_token_and_gives_it_back_not() -> None:
    token = AccessToken("a" * 43)
    again = AccessToken("a" * 43)
    other = AccessToken("a" * 42 + "b")
    assert (token.path_secret, token.session) == (again.path_secret, again.session)  # a bookmark lasts
    assert token.path_secret != other.path_secret and token.session != other.session
    assert len(token.path_secret) == 22 and len(token.session) == 43
    for derived in (token.path_secret, token.session):
        assert token.value not in derived and derived not in token.value
    assert token.path_secret not in token.session and not token.session.startswith(token.path_secret)
    assert token.session_matches(token.session) and not token.session_matches(token.value)
    assert token.path_matches(token.path_secret) and not token.path_matches(token.session[:22])
    assert token.value not in repr(token) and token.session not in repr(token)


async def test_the_token_is_taken_once_and_no_cookie_is_ever_set(web: Web) -> None:
    token = AccessToken(web.token)
    status, page, response = await get(f"{web.base}/?token={web.token}&ping=http://evil.example/")
    assert status == 200 and "Set-Cookie" not in response.headers
    assert f'content="{token.session}"'.encode() in page  # the entry page hands over the session value
    assert f'content="{token.path_secret}/"'.encode() in page  # and where the dashboard is
    assert web.token.encode() not in page and b"evil.example" not in page
    assert f"{token.path_secret}/static/agent-tui/enter.js".encode() in page
    assert b"<script>" not in page  # no inline script (the policy allows none)
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["Cache-Control"] == "no-store"  # the page holding the session value
    status, _, response = await get(f"{web.base}/?token={web.token}", cookies={"agent_tui_web": web.token})
    assert status == 200  # an earlier version's cookie is deleted where it shows up
    (deleted,) = response.headers.getall("Set-Cookie")
    assert deleted.startswith('agent_tui_web=""') and "Max-Age=0" in deleted and "Path=/" in deleted
    status, page, response = await get(web.dashboard)
    assert status == 200 and b"static/js/textual.js" in page and "Set-Cookie" not in response.headers
    assert b"http" not in page.replace(b"http-equiv", b"")  # nothing from elsewhere
    assert token.session.encode() not in page and web.token.encode() not in page
    assert response.headers["X-Frame-Options"] == "DENY"
    status, _, response = await get(web.dashboard + "?ping=http://evil.example/&token=x")
    assert status == 303 and response.headers["Location"] == "./"
    status, _, response = await get(web.dashboard.rstrip("/"))
    assert status == 308 and response.headers["Location"] == f"./{token.path_secret}/"
    for path in (
        "static/js/textual.js",
        "static/fonts/RobotoMono-VariableFont_wght.ttf",
        "static/agent-tui/enter.js",
    ):
        status, body, _ = await get(web.dashboard + path)
        assert status == 200 and len(body) > 500, path
    for path in (
        "static/",
        "static/../pyproject.toml",
        "static/%2e%2e/server.py",
        "static/images/",
        "nothing",
    ):
        status, _, _ = await get(web.dashboard + path)
        assert status == 404, path


async def test_a_websocket_from_another_origin_is_refused(web: Web) -> None:
    async with aiohttp.ClientSession() as session:
        for origin in ("http://127.0.0.1:1", "http://evil.example", "null"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(web.websocket, origin=origin, protocols=web.protocols)
            assert refused.value.status == 403
    assert children_of(web.process.pid) == set()  # nothing was started for them


async def test_closing_the_tab_ends_its_process_and_nothing_else(web: Web) -> None:
    async with aiohttp.ClientSession() as session:
        socket = await session.ws_connect(
            web.websocket + "?width=100&height=30", origin=web.base, protocols=web.protocols
        )
        assert socket.protocol == "agent-tui"
        message = await socket.receive(timeout=60)  # the dashboard's first frame
        assert message.type == aiohttp.WSMsgType.BINARY
        await socket.send_str("not json")  # ignored, never fatal
        await socket.send_str("[" * 100_000 + "]" * 100_000)  # too deep for json: ignored too
        await socket.send_str('["resize", {"width": "huge", "height": -1}]')
        await socket.send_str('["ping", "p1"]')
        while True:
            reply = await socket.receive(timeout=60)
            assert reply.type not in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), reply
            if reply.type == aiohttp.WSMsgType.TEXT and reply.data == '["pong", "p1"]':
                break
        (tab,) = children_of(web.process.pid)
        cmdline = (
            Path(f"/proc/{tab}/cmdline").read_bytes().replace(b"\0", b" ").split()
        )  # `agent-tui attach …`
        assert b"attach" in cmdline and not any(b"nats://" in part for part in cmdline)
        await socket.close()
    async with asyncio.timeout(30):
        while Path(f"/proc/{tab}").exists() and "Z" not in _state(tab):
            await asyncio.sleep(0.05)  # polling /proc for the process's end: nothing else says so
    assert web.process.poll() is None


async def test_tabs_beyond_the_cap_are_told_so_and_a_freed_slot_opens_again(
    nats_server: NatsServer, env: dict[str, str]
) -> None:
    served = start_web(["--bus", nats_server.url, "--max-tabs", "2"], env)
    assert "at most 2 at once" in "".join(served.said)
    try:
        async with aiohttp.ClientSession() as session:

            async def tab() -> aiohttp.ClientWebSocketResponse:
                return await session.ws_connect(
                    served.websocket, origin=served.base, protocols=served.protocols
                )

            first, second, third = await asyncio.gather(tab(), tab(), tab())  # all at once
            closed = []
            for socket in (first, second, third):
                message = await socket.receive(timeout=60)
                if message.type == aiohttp.WSMsgType.CLOSE:
                    closed.append((socket, message))
            ((beyond, message),) = closed  # exactly one was over the cap
            assert message.data == 4029 and message.extra == at_cap_sentence(2)
            assert len(children_of(served.process.pid)) == 2  # nothing was started for it
            kept = next(s for s in (first, second, third) if s is not beyond)
            tabs = children_of(served.process.pid)
            await kept.close()
            async with asyncio.timeout(30):
                while len(children_of(served.process.pid) & tabs) > 1:
                    await asyncio.sleep(0.05)  # polling /proc for the reaped tab: nothing else says so
            again = await tab()
            message = await again.receive(timeout=60)
            assert message.type == aiohttp.WSMsgType.BINARY  # the freed slot serves a dashboard
            assert len(children_of(served.process.pid)) == 2
            await again.close()
    finally:
        served.stop()


def test_the_cap_sentence_fits_a_close_reason() -> None:
    assert len(at_cap_sentence(MOST_TABS).encode()) <= 123


@pytest.mark.parametrize("value", ["0", "-1", "1001"])
def test_a_max_tabs_out_of_range_is_one_line_and_exit_2(value: str, env: dict[str, str]) -> None:
    done = web_command("--bus", "nats://127.0.0.1:1", "--max-tabs", value, env=env)
    assert done.returncode == 2
    assert done.stderr == f"agent-tui: --max-tabs {value}: not a number of tabs (1 to 1000)\n"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def web_command(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", "web", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_no_bus_is_one_line_and_exit_2(env: dict[str, str]) -> None:
    port = free_port()
    done = web_command("--bus", f"nats://ana:hunter2@127.0.0.1:{port}", "--port", "0", env=env)
    assert done.returncode == 2
    assert done.stderr == f"agent-tui: no bus at nats://127.0.0.1:{port}: nothing answers there\n"
    assert "hunter2" not in done.stdout + done.stderr and not token_file(env).exists()


def test_a_port_in_use_is_one_line_and_exit_2(nats_server: NatsServer, env: dict[str, str]) -> None:
    done = web_command("--bus", nats_server.url, "--port", str(nats_server.port), env=env)
    assert done.returncode == 2
    assert done.stderr.startswith(f"agent-tui: cannot listen on 127.0.0.1:{nats_server.port}: ")
    assert done.stderr.count("\n") == 1 and "token" not in done.stdout + done.stderr


def test_another_address_says_anyone_with_the_token_can_act_as_you(
    nats_server: NatsServer, env: dict[str, str]
) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_tui",
            "web",
            "--bus",
            nats_server.url,
            "--bind",
            "0.0.0.0",
            "--port",
            "0",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    start = next(line for line in process.stdout if line.startswith("open "))
    process.send_signal(2)
    _, stderr = process.communicate(timeout=60)
    assert "anyone who has the token can act as you" in stderr and "TLS proxy" in stderr
    assert start.startswith("open http://") and "?token=" in start
    assert token_file(env).read_text().strip() in start
    assert stat.S_IMODE(os.stat(token_file(env)).st_mode) == 0o600


def test_new_token_replaces_the_kept_one(nats_server: NatsServer, env: dict[str, str]) -> None:
    first = start_web(["--bus", nats_server.url], env)
    first.stop()
    again = start_web(["--bus", nats_server.url], env)
    again.stop()
    assert again.token == first.token  # a bookmark survives a restart
    renewed = start_web(["--bus", nats_server.url, "--new-token"], env)
    renewed.stop()
    assert renewed.token != first.token


def test_with_no_bus_named_the_private_host_is_started_and_outlives_web(
    tmp_path: Path, env: dict[str, str]
) -> None:
    import json
    import re
    import signal

    project = tmp_path / "project"
    project.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "web", "--port", "0"],
        env=env,
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    started = process.stderr.readline()
    found = re.search(r"started agent-tui serve on (.+) \(pid (\d+),", started)
    assert found, started
    serve = int(found.group(2))
    record = Path(env["XDG_RUNTIME_DIR"]) / "agent-tui" / "bus.json"
    try:
        assert found.group(1) == str(project)
        start = next(line for line in process.stdout if line.startswith("open "))
        assert "?token=" in start
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
        os.kill(serve, 0)  # web is gone; the host it started still runs
        again = subprocess.Popen(
            [sys.executable, "-m", "agent_tui", "web", "--port", "0"],
            env=env,
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert again.stdout is not None
        next(line for line in again.stdout if line.startswith("open "))
        again.send_signal(signal.SIGINT)
        _, stderr = again.communicate(timeout=60)
        assert "started agent-tui serve" not in stderr  # the running host is used
    finally:
        os.kill(serve, signal.SIGTERM)
        if record.exists():
            os.kill(json.loads(record.read_text())["pid"], signal.SIGTERM)


async def test_a_tab_whose_reader_ended_cancelled_stops_all_the_same() -> None:
    """textual-serve cancels and awaits its stderr reader when the output ends, also one that never
    ran (a process that left at once): its reader then ends cancelled, and `stop` still returns
    (it raised `CancelledError` into whoever closed the tab)."""
    from textual_serve.download_manager import DownloadManager

    from agent_tui.web import tab_process

    async def ignore(data: object = None) -> None:
        pass

    tab = tab_process.TabProcess(
        [sys.executable, "-c", "pass"],
        environment={},
        write_bytes=ignore,
        write_str=ignore,
        close=ignore,
        download_manager=DownloadManager(),
    )
    await tab.start(80, 24)
    await tab.ended()
    reader = asyncio.get_running_loop().create_task(asyncio.sleep(60))
    reader.cancel()  # the reader as textual-serve leaves it in that case: ended cancelled
    await asyncio.wait({reader})
    tab._task = reader
    await tab.stop()
    assert tab.process is not None and tab.process.returncode == 0


async def test_a_tab_process_that_ignores_quit_is_ended_all_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual_serve.download_manager import DownloadManager

    from agent_tui.web import tab_process

    monkeypatch.setattr(tab_process, "QUIT_GRACE_S", 0.2)
    monkeypatch.setattr(tab_process, "TERM_GRACE_S", 0.2)
    ready = tmp_path / "ready"
    stubborn = (
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = os.fork()\n"  # a child of its own, in its process group: ended with it
        "if child == 0:\n"
        "    time.sleep(600)\n"
        f"open({str(ready)!r}, 'w').write(str(child))\n"
        "sys.stdout.write('__GANGLION__\\n'); sys.stdout.flush()\n"
        "time.sleep(600)\n"
    )
    sent: list[bytes] = []

    async def write_bytes(data: bytes) -> None:
        sent.append(data)

    async def write_str(text: str) -> None:
        pass

    async def close() -> None:
        pass

    tab = tab_process.TabProcess(
        [sys.executable, "-c", stubborn],
        environment={},
        write_bytes=write_bytes,
        write_str=write_str,
        close=close,
        download_manager=DownloadManager(),
    )
    await tab.start(80, 24)
    async with asyncio.timeout(30):
        while not ready.exists() or not ready.read_text():
            await asyncio.sleep(0.02)  # polling the file the stub writes once it has forked
    child = int(ready.read_text())
    await asyncio.gather(tab.stop(), tab.stop())  # twice at once: one end, both wait for it
    assert tab.process is not None and tab.process.returncode == -9
    async with asyncio.timeout(30):
        while Path(f"/proc/{child}").exists() and _state(child) != "Z":
            await asyncio.sleep(0.02)  # the grandchild, killed with its group, reaped by init
    await tab.stop()  # and again, after the end
