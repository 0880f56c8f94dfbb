"""The web dashboard in a real browser: Debian's Chromium driven by Playwright, against real
processes (`agent-tui serve` with its private bus, `agent-tui run --bus local --approve ask`,
`agent-tui web`). The terminal is drawn on a canvas, so the tests assert on what the hosts
logged, on what the page received over its websocket, and on screenshots they save (checked
for size; tests/web-screenshots/ keeps the last ones for a person to look at).

Run with `-m browser` (the default run deselects these)."""

from __future__ import annotations

import json
import os
import re
import signal
import struct
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest
from playwright.async_api import Browser, BrowserContext, Page, Request, Route, async_playwright
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout
from support_bus_host import RENAMING, SPAWNING, host_env, start_agent_tui, wait_for_line
from support_web import CHROMIUM_ARGS, Web, children_of, chromium, start_web

from agent_tui.replay.sources import replay_all

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

SHOTS = Path(__file__).parent / "web-screenshots"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

RECEIVED = """
window.__received = "";
(() => {
  const Real = window.WebSocket;
  const decoder = new TextDecoder();
  window.WebSocket = function (url, protocols) {
    const socket = protocols === undefined ? new Real(url) : new Real(url, protocols);
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") {
        window.__received += decoder.decode(new Uint8Array(event.data), { stream: true });
      }
    });
    return socket;
  };
  window.WebSocket.prototype = Real.prototype;
})();
"""
"""Keeps, in the page, the text the app sent to the terminal (the canvas itself cannot be read)."""

ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[\]P].*?(?:\x07|\x1b\\)|\x1b.")


@dataclass
class Machine:
    tmp: Path
    env: dict[str, str]
    runs: list[subprocess.Popen[str]] = field(default_factory=list)
    """Every `run` started, ended with the machine (a failed test left them waiting for ever)."""

    def run(self, scenario: dict[str, object]) -> tuple[subprocess.Popen[str], Path]:
        (self.tmp / "ws" / "src").mkdir(parents=True, exist_ok=True)
        (self.tmp / "ws" / "src" / "foo.py").write_text("x = 1\n")
        path = self.tmp / "scenario.json"
        path.write_bytes(orjson.dumps(scenario))
        sessions = self.tmp / "run-sessions"
        args = ["run", str(path), "--sessions-dir", str(sessions), "--approve", "ask", "--bus", "local"]
        self.runs.append(start_agent_tui([*args, "--host", "ci-run"], self.env))
        return self.runs[-1], sessions


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Machine]:
    """`agent-tui serve` with its private bus (as `agent-tui web` would have started it)."""
    env = host_env(tmp_path)
    serve = start_agent_tui(
        ["serve", "--sessions-dir", str(tmp_path / "served"), "--cwd", str(tmp_path), "--host", "box"], env
    )
    record = tmp_path / "run" / "agent-tui" / "bus.json"
    machine = Machine(tmp_path, env)
    try:
        wait_for_line(serve, "host box serves")
        yield machine
    finally:
        for run in machine.runs:
            if run.poll() is None:
                run.kill()
                run.communicate(timeout=60)
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
        os.kill(json.loads(record.read_text())["pid"], signal.SIGTERM)


@pytest.fixture
def web(machine: Machine) -> Iterator[Web]:
    """`agent-tui web` on this machine's private bus and host."""
    served = start_web([], machine.env)
    try:
        yield served
    finally:
        said = served.stop()
        assert served.token not in said.replace(f"token={served.token}", ""), "the token was said again"


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@dataclass
class Tab:
    page: Page
    outside: list[str]

    async def received(self) -> str:
        raw: str = await self.page.evaluate("window.__received")
        return ESCAPES.sub("", raw)

    async def mark(self) -> int:
        return int(await self.page.evaluate("window.__received.length"))

    async def shows(self, text: str, after: int = 0, timeout_ms: int = 60_000) -> None:
        """Wait until the app has drawn `text` (escapes aside) since `after`."""
        script = (
            "([text, after]) => window.__received.slice(after).replace(" + ESCAPES_JS + ', "").includes(text)'
        )
        try:
            await self.page.wait_for_function(script, arg=[text, after], timeout=timeout_ms)
        except PlaywrightTimeout:
            SHOTS.mkdir(exist_ok=True)
            await self.page.screenshot(path=str(SHOTS / "failed.png"))
            plain = (await self.received())[-3000:]
            raise AssertionError(f"the page never showed {text!r}; it received, last: {plain!r}") from None


ESCAPES_JS = r"/\x1b\[[0-9;?<>=]*[ -\/]*[@-~]|\x1b[\]P][^\x07]*\x07|\x1b./g"


async def open_tab(
    browser: Browser | BrowserContext, url: str, viewport: dict[str, int] = DESKTOP, *, drawn: bool = True
) -> Tab:
    """A tab on `url` (in a context of its own, or in the given one), every request that would
    leave loopback refused and recorded; when `drawn`, once the app has drawn in it."""
    if isinstance(browser, Browser):
        page = await browser.new_page(viewport=viewport)  # type: ignore[arg-type]
    else:
        page = await browser.new_page()
        await page.set_viewport_size(viewport)  # type: ignore[arg-type]
    outside: list[str] = []

    async def guard(route: Route, request: Request) -> None:
        host = urlsplit(request.url).hostname
        if host in ("127.0.0.1", "localhost", "::1") or request.url.startswith(("data:", "blob:")):
            await route.continue_()
        else:
            outside.append(request.url)
            await route.abort()

    await page.route("**/*", guard)
    await page.add_init_script(RECEIVED)
    await page.goto(url)
    if drawn:
        await page.wait_for_selector("body.-first-byte", timeout=60_000)
    return Tab(page, outside)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


async def screenshot(tab: Tab, name: str, viewport: dict[str, int]) -> Path:
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    await tab.page.screenshot(path=str(path))
    assert png_size(path) == (viewport["width"], viewport["height"])
    assert path.stat().st_size > 5_000, "an empty page"  # a drawn terminal, not a blank canvas
    return path


def answers(sessions: Path) -> list[dict[str, object]]:
    return [
        e.payload
        for e in replay_all(sessions)
        if e.type == "permission.resolved" and e.payload["decision"] != "ask"
    ]


async def test_the_page_loads_with_the_token_fetches_nothing_outside_and_fits_a_phone(
    web: Web, browser: Browser
) -> None:
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        # textual.js fetches a `ping` address given in the page's address: a link cannot make it
        tab = await open_tab(browser, f"{web.url}&ping=http://outside.example/", viewport)
        await tab.shows("attached")
        assert tab.page.url == web.dashboard  # the token left the address bar
        assert web.token not in tab.page.url and "token" not in tab.page.url
        await screenshot(tab, f"dashboard-{name}", viewport)
        assert tab.outside == []
        if name == "phone":
            font = int(await tab.page.evaluate("document.body.dataset.fontSize"))
            assert font >= 11  # readable without zooming
            assert viewport["width"] // (font * 0.6) >= 56  # the dashboard's narrow layout fits
        assert await tab.page.evaluate("history.length") <= 2  # about:blank and the dashboard
        await tab.page.go_back()  # the entry address is not in the history to go back to
        assert tab.page.url == "about:blank"
        await tab.page.close()


async def test_the_page_takes_the_keys_and_shows_them_without_a_click(web: Web, browser: Browser) -> None:
    for viewport in (DESKTOP, PHONE):
        tab = await open_tab(browser, web.url, viewport)
        await tab.shows("attached")
        focused = (
            "document.activeElement && document.activeElement.matches('#terminal .xterm-helper-textarea')"
        )
        await tab.page.wait_for_function(focused)  # where xterm.js takes the keys from
        await tab.shows("Quit")  # the footer names the keys before anything is clicked
        mark = await tab.mark()
        await tab.page.keyboard.press("?")
        await tab.shows("agent-tui help", after=mark)  # the help screen: the key reached the app
        await tab.page.close()


async def test_without_the_token_everything_is_403_and_empty(web: Web, browser: Browser) -> None:
    page = await browser.new_page()
    secret = web.dashboard.removeprefix(web.base)
    for path in ("/", "/?token=wrong", "/static/js/textual.js", "/ws", "/nothing-here", f"{secret}ws"):
        response = await page.request.get(web.base + path, max_redirects=0)
        assert response.status == 403, path
        assert await response.body() == b"", path
    try:  # an empty 403: the browser has nothing to show (Chromium may say so as an error)
        shown = await page.goto(web.base + "/")
        assert shown is not None and shown.status == 403
        assert (await page.content()).count("<script") == 0
    except PlaywrightError as error:
        assert "ERR_HTTP_RESPONSE_CODE_FAILURE" in str(error)
    page = await browser.new_page()  # a blank one (the other may still be showing an error page)
    refused = await page.evaluate(
        """(url) => new Promise((done) => {
             const socket = new WebSocket(url);
             socket.onopen = () => done("open");
             socket.onerror = () => done("refused");
           })""",
        web.base.replace("http:", "ws:") + "/ws",
    )
    assert refused == "refused"
    forged = await page.evaluate(
        """([url, protocols]) => new Promise((done) => {
             const socket = new WebSocket(url, protocols);
             socket.onopen = () => done("open");
             socket.onerror = () => done("refused");
           })""",
        [web.websocket, ["agent-tui", "agent-tui.session." + web.token]],  # the token is not the session
    )
    assert forged == "refused"
    # The dashboard's address alone (a bookmark opened in another browser) opens nothing: it says why.
    tab = await open_tab(browser, web.dashboard, drawn=False)
    await tab.page.wait_for_selector(".no-session", state="visible")
    assert "?token=" in await tab.page.inner_text(".no-session")
    assert children_of(web.process.pid) == set()


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]


class Recorder:
    """Another loopback server, on another port (a dev server the agent started, say): it
    records every request it gets and answers each with a small page."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[Recorded] = []
        requests = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}))
                body = b"<!DOCTYPE html><title>another server</title><p>another server</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    served = Recorder()
    try:
        yield served
    finally:
        served.close()


async def test_another_server_on_loopback_never_receives_a_credential(
    web: Web, browser: Browser, recorder: Recorder
) -> None:
    from agent_tui.web.access_token import AccessToken

    token = AccessToken(web.token)
    context = await browser.new_context()
    tab = await open_tab(context, web.url)
    await tab.shows("attached")
    assert tab.page.url == web.dashboard
    secret = web.dashboard.removeprefix(web.base)  # "/<path secret>/"
    # The dashboard's page leaves for the other server, as a link in the app would take it.
    await tab.page.evaluate("(url) => { window.location.href = url; }", recorder.base + "/from-the-dashboard")
    await tab.page.wait_for_url(recorder.base + "/from-the-dashboard")
    other = await context.new_page()
    for path in ("/", secret, secret + "ws", secret + "static/js/textual.js", "/static/js/textual.js", "/ws"):
        await other.goto(recorder.base + path)
    # What a page of that server can reach: nothing of the dashboard's origin.
    assert await other.evaluate("window.localStorage.length") == 0
    assert await other.evaluate("document.cookie") == ""
    attempt = await other.evaluate(
        """([url, protocols]) => new Promise((done) => {
             const socket = new WebSocket(url, protocols);
             socket.onopen = () => done("open");
             socket.onerror = () => done("refused");
           })""",
        [web.websocket, ["agent-tui", "agent-tui.session.guess"]],
    )
    assert attempt == "refused"
    # The dashboard's origin keeps the session value (the other none): its address alone, as a
    # bookmark opens it in a new tab of the same browser, draws the dashboard.
    mine = await open_tab(context, web.dashboard)
    await mine.shows("attached")
    kept = await mine.page.evaluate(f"window.localStorage.getItem('agent-tui-session {secret}')")
    assert kept == token.session and await mine.page.evaluate("document.cookie") == ""
    seen = {r.path for r in recorder.requests}
    assert {"/from-the-dashboard", "/", secret, secret + "ws"} <= seen  # it was visited there
    for request in recorder.requests:
        assert "cookie" not in request.headers, request
        assert not request.headers.get("referer", "").startswith(web.base), request  # no referrer of ours
        # (its own pages name themselves as referrer, with the path it was visited at)
        said = " ".join(
            v for k, v in request.headers.items() if k != "referer" or not v.startswith(recorder.base)
        )
        for credential in (web.token, token.session, token.path_secret, "agent_tui", "agent-tui"):
            assert credential not in said, (credential, request)
    assert not [c for c in await context.cookies() if c["domain"] in ("127.0.0.1", "localhost")]
    await context.close()


async def test_tabs_beyond_the_cap_say_so_and_a_freed_slot_opens_again(
    machine: Machine, browser: Browser
) -> None:
    from agent_tui.web.server import at_cap_sentence

    served = start_web(["--max-tabs", "2"], machine.env)
    try:
        first = await open_tab(browser, served.url)
        second = await open_tab(browser, served.url)
        for tab in (first, second):
            await tab.shows("attached")
        assert len(children_of(served.process.pid)) == 2
        for _ in range(3):  # a tab reloaded at the cap comes back while its old process still quits
            await second.page.reload()
            await second.page.wait_for_selector("body.-first-byte", timeout=60_000)
            await second.shows("attached")
        tabs = children_of(served.process.pid)
        assert len(tabs) == 2
        beyond = await open_tab(browser, served.url, drawn=False)
        await beyond.page.wait_for_selector("body[data-refused='at-cap'] .ended", state="visible")
        assert (await beyond.page.inner_text(".ended p")).strip() == at_cap_sentence(2)
        await screenshot(beyond, "at-the-cap", DESKTOP)
        assert children_of(served.process.pid) == tabs  # nothing was started for it
        await second.page.close()
        await wait_gone(served, tabs, keep=1)
        mark = await beyond.mark()
        await beyond.page.click("#reconnect")  # "Open it again", now that a slot is free
        await beyond.page.wait_for_selector("body.-first-byte", timeout=60_000)
        await beyond.shows("attached", after=mark)
        assert len(children_of(served.process.pid)) == 2
    finally:
        served.stop()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_a_request_is_approved_by_keys_in_the_page(
    machine: Machine, web: Web, browser: Browser, viewport: dict[str, int]
) -> None:
    run, sessions = machine.run(RENAMING)
    tab = await open_tab(browser, web.url, viewport)
    await tab.shows("Approvals (1)")
    mark = await tab.mark()
    await tab.page.keyboard.press("Shift+A")
    for answer in ("Allow once  y", "This session  s", "Always  !", "Deny  n"):
        await tab.shows(answer, after=mark)  # every answer drawn whole, on a phone too
    await screenshot(tab, "approval-dialog" + ("-phone" if viewport is PHONE else ""), viewport)
    await tab.page.keyboard.press("y")
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 0, stderr
    (resolved,) = answers(sessions)
    assert resolved["decision"] == "allow" and resolved["actor"] == "user"
    assert isinstance(resolved["by"], dict) and resolved["by"]["dashboard"]
    assert [e.type for e in replay_all(sessions)].count("tool.completed") == 1  # the mv ran
    assert tab.outside == []


async def test_two_tabs_see_the_same_state_and_closing_one_stops_nothing(
    machine: Machine, web: Web, browser: Browser
) -> None:
    run, sessions = machine.run(RENAMING)
    first = await open_tab(browser, web.url)
    second = await open_tab(browser, web.url)
    third = await open_tab(browser, web.url)
    for tab in (first, second, third):
        await tab.shows("1 approval")
    tabs = children_of(web.process.pid)
    assert len(tabs) == 3, tabs  # one agent-tui attach per tab
    await third.page.close()
    await wait_gone(web, tabs, keep=2)
    assert run.poll() is None  # the run still waits for an answer: closing a tab stopped nothing
    mark = await second.mark()
    await first.page.keyboard.press("Shift+A")
    await first.shows("Allow once")
    await first.page.keyboard.press("n")
    await second.shows("0 approvals", after=mark)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 0, stderr
    (resolved,) = answers(sessions)
    assert resolved["decision"] == "deny"
    await first.page.close()
    await wait_gone(web, tabs, keep=1)
    assert web.process.poll() is None
    await screenshot(second, "second-tab", DESKTOP)


async def wait_gone(web: Web, tabs: set[int], keep: int) -> None:
    """Wait until only `keep` of the tab processes are left (web reaps them as tabs close)."""
    import asyncio

    async with asyncio.timeout(30):
        while len(children_of(web.process.pid) & tabs) > keep:
            await asyncio.sleep(0.05)  # polling /proc for a reaped child: nothing else says so


async def test_stop_subtree_from_the_page_ends_every_descendant(
    machine: Machine, web: Web, browser: Browser
) -> None:
    run, sessions = machine.run(SPAWNING)
    tab = await open_tab(browser, web.url)
    await tab.shows("1 approval")
    await tab.shows("writer")
    await tab.page.keyboard.press("x")  # the selected session, the lead (the first root)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 0, stderr
    reasons = [e.payload["stopReason"] for e in replay_all(sessions) if e.type == "turn.completed"]
    assert reasons == ["cancelled", "cancelled"]
    await screenshot(tab, "stopped", DESKTOP)


async def test_an_html_export_renders_offline(machine: Machine, browser: Browser, tmp_path: Path) -> None:
    sessions = tmp_path / "demo-sessions"
    demo = subprocess.run(
        [*start_command(), "demo", "--sessions-dir", str(sessions)],
        env=machine.env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    log = sorted(sessions.glob("*.jsonl"))[0]
    prompt = next(e.payload for e in replay_all(log) if e.type == "turn.started")["promptPreview"]
    out = tmp_path / "export.html"
    done = subprocess.run(
        [*start_command(), "export", str(log), "--format", "html", "--out", str(out)],
        env=machine.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page = await browser.new_page(viewport=DESKTOP)  # type: ignore[arg-type]
    fetched: list[str] = []

    async def record(route: Route, request: Request) -> None:
        if not request.url.startswith(("file:", "data:", "blob:")):
            fetched.append(request.url)
            await route.abort()
        else:
            await route.continue_()

    await page.route("**/*", record)
    await page.goto(out.as_uri())
    await page.wait_for_load_state("load")
    assert str(prompt).split("\n")[0][:40] in await page.inner_text("body")
    assert fetched == []
    SHOTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(SHOTS / "export.png"), full_page=False)
    assert png_size(SHOTS / "export.png") == (DESKTOP["width"], DESKTOP["height"])


def start_command() -> list[str]:
    import sys

    return [sys.executable, "-m", "agent_tui"]
