"""`agent-tui web` without a browser: the token kept in the data dir, the access rules at the
HTTP and websocket level (403 and nothing else), the tab's process ended with its websocket,
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


async def test_without_the_token_every_path_is_403_and_empty(web: Web) -> None:
    bad = "x" * len(web.token)
    cases: list[tuple[str, dict[str, object]]] = [
        ("/", {}),
        (f"/?token={bad}", {}),
        (f"/?token={web.token[:-1]}", {}),
        (f"/?token={web.token}&token={web.token}", {}),
        ("/static/js/textual.js", {}),
        ("/static/agent-tui/web.js", {}),
        ("/ws", {}),
        ("/no/such/path", {}),
        ("/", {"cookies": {"agent_tui_web": bad}}),
        (f"/?token={bad}", {"cookies": {"agent_tui_web": web.token}}),  # a wrong token is wrong
        ("/", {"headers": {"Authorization": f"Bearer {web.token}"}}),  # only the cookie counts
        (f"/?TOKEN={web.token}", {}),
        (f"/?token=%20{web.token}", {}),
        (f"/x?token={web.token}", {"headers": {"Origin": "http://evil.example", "Upgrade": "websocket"}}),
    ]
    for path, options in cases:
        status, body, response = await get(web.base + path, **options)
        assert (status, body) == (403, b""), path
        assert "Set-Cookie" not in response.headers and web.token not in str(response.headers)
    async with aiohttp.ClientSession() as session:
        for method in ("POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"):
            async with session.request(method, web.base + "/static/js/textual.js") as response:
                assert (response.status, await response.read()) == (403, b""), method


async def test_the_token_sets_a_strict_cookie_and_leaves_the_address(web: Web) -> None:
    status, _, response = await get(f"{web.base}/?token={web.token}&ping=http://evil.example/")
    assert status == 303 and response.headers["Location"] == "./"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    status, page, response = await get(web.base + "/", cookies={"agent_tui_web": web.token})
    assert status == 200 and b"static/js/textual.js" in page
    assert b"http" not in page.replace(b"http-equiv", b"")  # nothing from elsewhere
    assert response.headers["X-Frame-Options"] == "DENY"
    for path in ("/static/js/textual.js", "/static/fonts/RobotoMono-VariableFont_wght.ttf"):
        status, body, _ = await get(web.base + path, cookies={"agent_tui_web": web.token})
        assert status == 200 and len(body) > 1000
    for path in ("/static/", "/static/../pyproject.toml", "/static/%2e%2e/server.py", "/static/images/"):
        status, _, _ = await get(web.base + path, cookies={"agent_tui_web": web.token})
        assert status == 404, path


async def test_a_websocket_from_another_origin_is_refused(web: Web) -> None:
    async with aiohttp.ClientSession(cookies={"agent_tui_web": web.token}) as session:
        for origin in ("http://127.0.0.1:1", "http://evil.example", "null"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(web.base.replace("http:", "ws:") + "/ws", origin=origin)
            assert refused.value.status == 403
    assert children_of(web.process.pid) == set()  # nothing was started for them


async def test_closing_the_tab_ends_its_process_and_nothing_else(web: Web) -> None:
    async with aiohttp.ClientSession(cookies={"agent_tui_web": web.token}) as session:
        socket = await session.ws_connect(
            web.base.replace("http:", "ws:") + "/ws?width=100&height=30", origin=web.base
        )
        message = await socket.receive(timeout=60)  # the dashboard's first frame
        assert message.type == aiohttp.WSMsgType.BINARY
        await socket.send_str("not json")  # ignored, never fatal
        await socket.send_str('["resize", {"width": "huge", "height": -1}]')
        await socket.send_str('["ping", "p1"]')
        while True:
            reply = await socket.receive(timeout=60)
            if reply.type == aiohttp.WSMsgType.TEXT and reply.data == '["pong", "p1"]':
                break
        (tab,) = children_of(web.process.pid)
        cmdline = Path(f"/proc/{tab}/cmdline").read_bytes().split(b"\0")
        assert b"attach" in cmdline and not any(b"nats://" in part for part in cmdline)
        await socket.close()
    async with asyncio.timeout(30):
        while Path(f"/proc/{tab}").exists() and "Z" not in _state(tab):
            await asyncio.sleep(0.05)  # polling /proc for the process's end: nothing else says so
    assert web.process.poll() is None


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
