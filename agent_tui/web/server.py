"""The web dashboard's server: our page, and one `agent-tui attach` per browser tab.

Invariants:
- every route sits behind `access.token_access` (the token, or 403 and nothing else);
- each websocket on `/<path secret>/ws` is one tab: it starts one `TabProcess` and relays the tab's keys,
  size and focus to it and its output back; when the tab goes (closed, reloaded, its
  connection lost) or the app leaves, the process is ended (`TabProcess.stop`) and the socket
  closed. Nothing on a host is stopped by either;
- at most `max_tabs` tabs have a process at once: a tab's slot is taken under one lock with the
  count it was checked against (tabs opened together cannot pass the cap) and freed once its
  process has ended. A websocket that finds every slot taken waits while one of them is a tab
  that is ending (a reloaded tab comes back while its old process still quits), else it is
  closed at once with `AT_CAP_CLOSE_CODE` and a sentence that the page shows, and starts nothing;
- a message from the tab that is not what textual.js sends (not JSON, not a list, a size that
  is not two small positive numbers) is ignored, never fatal;
- no access log is kept (the first request line holds `?token=`); stopping the server ends every
  tab's process before `serve` returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web
from textual_serve.download_manager import DownloadManager

from agent_tui.web.access import APP_PROTOCOL, WEBSOCKET, token_access
from agent_tui.web.access_token import AccessToken
from agent_tui.web.page import Page
from agent_tui.web.tab_process import TabProcess

HEARTBEAT_S = 15.0
MAX_MESSAGE_BYTES = 1 << 20
LARGEST_SIDE = 1000
"""The most columns or rows a tab may ask for."""
DEFAULT_MAX_TABS = 8
"""Tabs open at once unless `--max-tabs` says otherwise: each is an `agent-tui attach` process."""
MOST_TABS = 1000
AT_CAP_CLOSE_CODE = 4029
"""The websocket close code of a tab beyond the cap (the page shows the close reason)."""


def at_cap_sentence(max_tabs: int) -> str:
    """What a tab beyond the cap shows (a close reason: at most 123 bytes)."""
    return (
        f"All {max_tabs} tabs this dashboard allows are open (agent-tui web --max-tabs): "
        "close one, then open this one again."
    )


async def _close(socket: web.WebSocketResponse) -> None:
    await socket.close()


class ListenError(Exception):
    """The server cannot listen where it was told; one sentence naming the address."""


@dataclass(frozen=True)
class TabCommand:
    """What each tab runs: the argument list and what it adds to the environment."""

    argv: Sequence[str]
    environment: Mapping[str, str] = field(default_factory=dict, repr=False)


def cells(value: object, default: int) -> int:
    """A terminal side from a tab: a whole number from 1 to `LARGEST_SIDE`, else `default`."""
    try:
        number = int(str(value))
    except ValueError:
        return default
    return number if 1 <= number <= LARGEST_SIDE else default


class WebServer:
    def __init__(self, command: TabCommand, token: AccessToken, max_tabs: int = DEFAULT_MAX_TABS) -> None:
        self.command = command
        self.token = token
        self.max_tabs = max_tabs
        self.page = Page(token.path_secret, token.session)
        self.tabs: set[TabProcess] = set()
        self._ending: set[TabProcess] = set()
        """Tabs whose websocket has gone and whose process is being ended (they keep their slot)."""
        self._slots = asyncio.Condition()
        """Held while `tabs` is counted and changed; notified when a tab leaves it."""
        self._sockets: set[web.WebSocketResponse] = set()
        self._downloads = DownloadManager()
        self._runner: web.AppRunner | None = None

    def application(self) -> web.Application:
        app = web.Application(middlewares=[token_access(self.token)])
        app.add_routes([*self.page.routes(), web.get(self.page.root + WEBSOCKET, self.handle_websocket)])
        app.on_shutdown.append(self._close_tabs)
        return app

    async def start(self, bind: str, port: int) -> int:
        """Listen on `bind:port`; the port listened on (`port` 0: one the system picks)."""
        self._runner = web.AppRunner(self.application(), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, bind, port)
        try:
            await site.start()
        except OSError as error:
            await self._runner.cleanup()
            self._runner = None
            shown = f"[{bind}]" if ":" in bind else bind
            raise ListenError(f"cannot listen on {shown}:{port}: {error.strerror or error}") from None
        address = self._runner.addresses[0]
        return int(address[1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self._close_tabs()

    async def _close_tabs(self, _app: web.Application | None = None) -> None:
        for socket in list(self._sockets):
            with contextlib.suppress(Exception):
                await socket.close()
        await asyncio.gather(*(tab.stop() for tab in list(self.tabs)), return_exceptions=True)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse(
            heartbeat=HEARTBEAT_S, max_msg_size=MAX_MESSAGE_BYTES, protocols=(APP_PROTOCOL,)
        )
        width = cells(request.query.get("width"), 80)
        height = cells(request.query.get("height"), 24)
        tab = TabProcess(
            self.command.argv,
            environment=self.command.environment,
            write_bytes=socket.send_bytes,
            write_str=socket.send_str,
            close=lambda: _close(socket),
            download_manager=self._downloads,
        )
        if not await self._take_slot(tab):
            await socket.prepare(request)
            await socket.close(code=AT_CAP_CLOSE_CODE, message=at_cap_sentence(self.max_tabs).encode())
            return socket
        self._sockets.add(socket)
        try:
            await socket.prepare(request)
            await tab.start(width, height)
            await self._serve_tab(socket, tab)
        finally:
            await self._end_tab(socket, tab)
        return socket

    async def _serve_tab(self, socket: web.WebSocketResponse, tab: TabProcess) -> None:
        """Relay the browser's input until it leaves or the tab's app ends."""
        relay = asyncio.ensure_future(self._relay(socket, tab))
        ended = asyncio.ensure_future(tab.ended())
        try:
            await asyncio.wait({relay, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (relay, ended):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _end_tab(self, socket: web.WebSocketResponse, tab: TabProcess) -> None:
        """Stop the tab's app, close its socket and give its slot back."""
        self._ending.add(tab)
        await tab.stop()
        self._sockets.discard(socket)
        with contextlib.suppress(Exception):
            await socket.close()
        async with self._slots:
            self.tabs.discard(tab)
            self._ending.discard(tab)
            self._slots.notify_all()

    async def _take_slot(self, tab: TabProcess) -> bool:
        """Count `tab` among the open tabs if there is room: now, or once a tab that is ending has
        ended. False: every slot is held by a tab that is not ending."""
        async with self._slots:
            await self._slots.wait_for(lambda: len(self.tabs) < self.max_tabs or not self._ending)
            if len(self.tabs) >= self.max_tabs:
                return False
            self.tabs.add(tab)
            return True

    async def _relay(self, socket: web.WebSocketResponse, tab: TabProcess) -> None:
        """The tab's messages to its process, until the tab goes."""
        async for message in socket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope: Any = json.loads(message.data)
            except (ValueError, RecursionError):  # not JSON, or nested past what json follows
                continue
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await tab.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                await tab.set_terminal_size(cells(data.get("width"), 80), cells(data.get("height"), 24))
            elif kind == "ping":
                await socket.send_json(["pong", data])
            elif kind == "blur":
                await tab.blur()
            elif kind == "focus":
                await tab.focus()
