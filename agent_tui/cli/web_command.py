"""`agent-tui web [--bus URL] [--bind ADDRESS] [--port N] [--new-token] [--max-tabs N]`: the
dashboard in a browser.

Each tab runs `agent-tui attach` over the same bus (`agent_tui.web`); with no bus named (no
`--bus`, `$AGENT_TUI_BUS` or `[bus] url`), the private bus and host of this machine, the ones
`agent-tui serve` starts, are used, and started when none runs.

Invariants:
- the access token is printed once, in the start line on stdout (`http://HOST:PORT/?token=…`),
  and nowhere else: not in an error, not in a tab's command line or environment, not in a log;
- a bus that cannot be reached at start, a port that cannot be listened on, a token file that
  cannot be written, a `--max-tabs` that is not 1 to `MOST_TABS`, or a missing `bus` extra is
  one line on stderr and exit status 2;
- binding to anything but a loopback address says, on stderr, that anyone with the token can
  act as the user;
- SIGINT, SIGTERM and SIGHUP stop the server: every tab's process ends, nothing on a host stops.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from agent_tui.cli.attach_command import BUS_EXTRA, probe
from agent_tui.cli.status import EXIT_OK, EXIT_USAGE, fail, say


def cmd_web(args: argparse.Namespace) -> int:
    try:
        from agent_tui.bus.attach_target import BusUnreachable, resolve_target
        from agent_tui.bus.config import LOCAL, BusConfigError, bus_settings
        from agent_tui.providers.config import ConfigError, load_config
        from agent_tui.web.access_token import TokenStore, TokenStoreError
        from agent_tui.web.local_host import LocalHostError
        from agent_tui.web.page import PageError
        from agent_tui.web.server import DEFAULT_MAX_TABS, MOST_TABS
    except ImportError:
        return fail(f"web needs textual-serve and the NATS client: {BUS_EXTRA}", EXIT_USAGE)
    if not 0 <= args.port <= 65535:
        return fail(f"--port {args.port}: not a port (0 to 65535)", EXIT_USAGE)
    max_tabs = DEFAULT_MAX_TABS if args.max_tabs is None else args.max_tabs
    if not 1 <= max_tabs <= MOST_TABS:
        return fail(f"--max-tabs {max_tabs}: not a number of tabs (1 to {MOST_TABS})", EXIT_USAGE)
    try:
        config = args.config or load_config()
        settings = bus_settings(config, flag_url=args.web_bus)
    except (ConfigError, BusConfigError) as error:
        return fail(str(error), EXIT_USAGE)
    local = settings.url in (None, LOCAL)
    try:
        command = _tab_command(settings, local, config)
        target = resolve_target("local" if local else args.web_bus, config)
        asyncio.run(probe(target, "agent-tui-web-probe"))
        token = TokenStore().load(new=args.new_token)
    except (BusUnreachable, LocalHostError, TokenStoreError) as error:
        return fail(str(error), EXIT_USAGE)
    if token.made_because not in (None, "--new-token"):
        say(f"agent-tui: a new access token was made: {token.made_because}", sys.stderr)
    try:
        return asyncio.run(_serve(command, token.token, args.bind, args.port, target.shown, max_tabs))
    except PageError as error:
        return fail(str(error), EXIT_USAGE)


def _tab_command(settings: Any, local: bool, config: Any) -> Any:
    """How a tab runs `agent-tui attach` (a `TabCommand`): on this machine's private bus, whose
    `agent-tui serve` is started here when none runs, or on the bus `settings` name.

    Raises:
        LocalHostError: the local host could not be started.
    """
    from agent_tui.web.local_host import serve_host_running, start_serve_host
    from agent_tui.web.server import TabCommand

    attach = [sys.executable, "-P", "-m", "agent_tui", "attach"]
    if not local:
        return TabCommand(attach, _bus_environment(settings))
    if not asyncio.run(serve_host_running(config)):
        project = Path.cwd()
        started = start_serve_host(project)
        say(
            f"agent-tui: started agent-tui serve on {project} (pid {started.pid}, its output in "
            f"{started.log}); it keeps its agents running after web stops",
            sys.stderr,
        )
    return TabCommand([*attach, "--bus", "local"])


def _bus_environment(settings: object) -> dict[str, str]:
    """What a tab needs to reach this bus, given on purpose: a tab gets none of our secret
    variables otherwise. The URL goes in its environment, not on its command line, where anyone
    sees it; so does the variable `credentials_env` names, with its value (from the vault)."""
    from agent_tui.bus.config import BusSettings
    from agent_tui.engine.vault import ENVIRONMENT

    assert isinstance(settings, BusSettings)
    environment = {"AGENT_TUI_BUS": settings.url} if settings.url else {}
    name = settings.credentials_env
    if name and name in ENVIRONMENT:
        environment[name] = ENVIRONMENT[name]
    return environment


async def _serve(command: object, token: object, bind: str, port: int, bus: str, max_tabs: int) -> int:
    from agent_tui.web.access_token import AccessToken
    from agent_tui.web.server import ListenError, TabCommand, WebServer

    assert isinstance(command, TabCommand) and isinstance(token, AccessToken)
    server = WebServer(command, token, max_tabs)
    try:
        port = await server.start(bind, port)
    except ListenError as error:
        return fail(str(error), EXIT_USAGE)
    stop = asyncio.Event()
    stopped_by: list[int] = []
    loop = asyncio.get_running_loop()

    def on_signal(number: int) -> None:
        stopped_by.append(number)
        stop.set()

    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(number, on_signal, number)
    try:
        _say_listening(bind, port, bus, max_tabs, token.value)
        await stop.wait()
    finally:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(number)
        await server.stop()
    try:
        say("agent-tui: web stopped; the hosts' agents keep running", sys.stderr)
    except OSError:
        pass
    if stopped_by and stopped_by[0] != signal.SIGINT:
        from agent_tui.runtime.stop_signals import said_stopped

        return said_stopped(stopped_by[0], fail)
    return EXIT_OK


def _say_listening(bind: str, port: int, bus: str, max_tabs: int, token: str) -> None:
    """Say where the dashboard is served (a warning first when not only to this machine)."""
    if not is_loopback(bind):
        say(
            f"agent-tui: listening on {bind}, not only this machine: anyone who has the token "
            "can act as you (approve, steer, stop and start agents on every host of the bus); "
            "put it behind a TLS proxy (docs/web.md)",
            sys.stderr,
        )
    say(
        f"agent-tui: the dashboard of every host on the bus at {bus}; each tab is one attached "
        f"dashboard (at most {max_tabs} at once)"
    )
    print(f"open {page_url(bind, port)}/?token={token}", flush=True)


def is_loopback(bind: str) -> bool:
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind).is_loopback
    except ValueError:
        return False


def page_url(bind: str, port: int) -> str:
    """The address a browser opens for `bind:port` (a wildcard address: this machine's name)."""
    host = bind
    if bind in ("", "0.0.0.0", "::"):
        host = socket.gethostname()
    elif ":" in bind:
        host = f"[{bind}]"
    return f"http://{host}:{port}"
