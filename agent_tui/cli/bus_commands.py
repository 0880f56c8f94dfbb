"""The bus's commands: `agent-tui serve` (a headless host) and `agent-tui run --bus` (a run, of a
scenario, a `--prompt` or an `--agent`, that publishes its events and, with `--approve ask`,
waits for an attached dashboard to answer its asks).

Invariants:
- a bus that cannot be used at the start of `serve` (no server, a wrong URL, refused
  credentials, the host's name held by another process, no nats-server binary for the private
  server) is one line on stderr naming the URL without any secret, and exit status 2;
- `run --bus` never fails because of the bus: it says so on stderr, runs, logs, and publishes
  when the bus is there (the logs have everything; the next host on them publishes the rest);
- both stop on SIGINT, SIGTERM and SIGHUP the way `run` does: every turn is cancelled and logs
  its end, which is published before the process leaves (for a bounded time);
- `serve`, once it serves, prints on stdout one line per agent's turn started or ended and per
  question waiting for a person (`serve_lines`); its own notices go to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import sys
import threading
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import Any

from agent_tui.cli.status import EXIT_OK, EXIT_USAGE, fail, say, sessions_dir_error


class _Refused(Exception):
    """A setting or the bus itself refused the command; the message is the line to show."""


def _stderr(line: str) -> None:
    try:
        say(f"agent-tui: {line}", sys.stderr)
    except OSError:
        pass  # stderr is gone with the terminal: the host goes on


def bus_settings_for(config: Any, flag_url: str | None, flag_host: str | None, *, start_private: bool) -> Any:
    """The bus settings of the flags, the environment and the loaded config file, with the
    private server's address and nkey seed file when that is the bus. Raises _Refused."""
    from agent_tui.bus.config import LOCAL, BusConfigError, bus_settings
    from agent_tui.bus.local_server import LocalServerError, ensure_local_server, running_local_server

    try:
        settings = bus_settings(config, flag_url=flag_url, flag_host=flag_host)
    except BusConfigError as error:
        raise _Refused(str(error)) from None
    if settings.url is None and not start_private:
        raise _Refused("--host goes with --bus URL|local (or [bus] url in the config file)")
    if settings.url is None:
        try:
            info, started = ensure_local_server()
        except LocalServerError as error:
            raise _Refused(str(error)) from None
        if started:
            _stderr(
                f"started a private bus at {info.url} (nats-server pid {info.pid}; it stays up for later hosts)"
            )
        return info.settings(settings, follow=True)
    if settings.url == LOCAL:
        try:
            running = running_local_server()
        except LocalServerError as error:
            raise _Refused(str(error)) from None
        if running is None:
            raise _Refused(
                "no private bus runs on this machine: start `agent-tui serve` first, or give --bus URL"
            )
        return running.settings(settings, follow=True)
    return settings


def cmd_serve(args: argparse.Namespace) -> int:
    """`agent-tui serve`: the workbench on a project, headless, its agents offered on the bus."""
    import anyio

    from agent_tui.cli.dashboard import _acp_agents, _model_choices
    from agent_tui.private_files import make_private_dirs
    from agent_tui.runtime.session_dirs import default_sessions_dir
    from agent_tui.runtime.workbench import Workbench

    project = (args.serve_cwd or Path.cwd()).expanduser().resolve()
    if not project.is_dir():
        return fail(f"{project}: no such directory", EXIT_USAGE)
    from agent_tui.terminal.agents import hand_back_after

    try:
        settings = bus_settings_for(args.config, args.bus, args.host, start_private=True)
        external, servers = _acp_agents(args.config, None)
        models, _ = _model_choices(args)
        hand_back = hand_back_after(args.config) if args.relay_hooks else None  # `--relay-hooks`
    except (
        _Refused,
        ValueError,
    ) as error:  # a bus setting, a profile, an [acp.NAME], [mcp.NAME] or [hooks] table
        return fail(str(error), EXIT_USAGE)
    sessions_dir = args.serve_sessions_dir or default_sessions_dir(project)
    problem = sessions_dir_error(sessions_dir)
    if problem is not None:
        return fail(problem)
    make_private_dirs(sessions_dir)
    workbench = partial(
        Workbench.for_project,
        project=project,
        sessions_dir=sessions_dir,
        models=models,
        external=external if external.names() else None,
        prices=args.config.price_table(),
        mcp_servers=servers,
    )
    return anyio.run(_serve, settings, project, sessions_dir, workbench, hand_back)


async def _serve(
    settings: Any,
    project: Path,
    sessions_dir: Path,
    make_workbench: Callable[..., Any],
    hand_back: float | None = None,
) -> int:
    """The host on the bus, serving the workbench `make_workbench(questions=...)` makes; with
    `hand_back` (`--relay-hooks`), also the terminal agents' hooks, answered by attached dashboards."""
    import anyio

    from agent_tui.bus.config import default_name
    from agent_tui.bus.host import BusHost, BusUnreachable, NameTaken
    from agent_tui.engine.questions import Questions

    name = settings.host or default_name()
    host = BusHost(settings, name=name, kind="serve", sessions_dir=sessions_dir, say=_stderr, cwd=project)
    try:
        await host.start(required=True)
    except (BusUnreachable, NameTaken) as error:
        await host.close(0)
        return fail(str(error), EXIT_USAGE)
    stop = anyio.Event()
    stopped_by: list[int] = []
    undo = _stop_on_signals(stop, stopped_by)
    workbench = make_workbench(questions=Questions(None))
    try:
        async with workbench.serving(), _offered(host, workbench, project, hand_back):
            _stderr(
                f"host {name} serves {sessions_dir} on the bus at {settings.shown_url()} "
                f"({len(workbench.engine.sessions())} sessions open); stop it with Ctrl-C"
            )
            await stop.wait()
            await workbench.close()
    finally:
        await host.close()
        workbench.close_store()
        await workbench.close_models()
        undo()
    if stopped_by:
        from agent_tui.runtime.stop_signals import said_stopped

        return said_stopped(stopped_by[0], fail)
    return EXIT_OK


def _stop_on_signals(stop: Any, stopped_by: list[int]) -> Callable[[], None]:
    """Set `stop` on SIGINT, SIGTERM or SIGHUP (its number into `stopped_by`); a second one, or a
    close that outlasts `SHUTDOWN_GRACE_S`, leaves at once. Returns the undo."""
    from agent_tui.runtime.stop_signals import listen_for_stop_signals

    def on_signal(number: int) -> None:
        if stopped_by:  # asked again while closing: go now
            _leave_now(number, "stopped again while closing")
        stopped_by.append(number)
        stop.set()
        # A close that hangs (a bus client stuck mid-reconnect) never keeps the host from
        # leaving: the logs are whole at every append, and the next start republishes.
        watchdog = threading.Timer(SHUTDOWN_GRACE_S, _leave_now, (number, "did not close in time"))
        watchdog.daemon = True
        watchdog.start()

    return listen_for_stop_signals(on_signal)


@contextlib.asynccontextmanager
async def _offered(host: Any, workbench: Any, project: Path, hand_back: float | None) -> AsyncIterator[None]:
    """The workbench's engine and commands offered on the host, its stored sessions reopened (and
    with `hand_back`, the terminal agents' hooks relayed); serve's lines printed from then on."""
    async with contextlib.AsyncExitStack() as terminal:
        engine = workbench.engine
        executor = host.executor(engine, workbench=workbench, project=project)
        host.attach(engine, executor)
        await host.control_ready()
        for problem in await workbench.hydrate(lambda _event: None):
            _stderr(problem)
        if hand_back is not None:
            executor.terminal = await terminal.enter_async_context(
                _relay_hooks(host, engine, project, hand_back)
            )
        from agent_tui.cli.serve_lines import ServeLines

        engine.subscribe(ServeLines(sys.stdout, engine.agent_path))  # what it does from now on
        yield


@contextlib.asynccontextmanager
async def _relay_hooks(host: Any, engine: Any, project: Path, hand_back: float) -> AsyncIterator[Any]:
    """`serve --relay-hooks`: the terminal agents of this machine followed and their hooks
    answered, by a dashboard attached to this bus (none attached: no decision, nothing asked)."""
    import anyio

    from agent_tui.terminal.agents import TerminalAgents, hook_socket

    present = [False]

    async def watch() -> None:
        while True:
            present[0] = await _dashboard_attached(host)
            await anyio.sleep(DASHBOARDS_EVERY_S)

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        async with TerminalAgents(
            engine,
            watched=lambda: present[0],
            hand_back_after=hand_back,
            on_warning=_stderr,
            transcript_wait=TerminalAgents.TRANSCRIPT_WAIT,
        ).serving(project=project, socket=hook_socket()) as agents:
            yield agents
        group.cancel_scope.cancel()


DASHBOARDS_EVERY_S = 2.0
"""How often `serve --relay-hooks` looks for attached dashboards (their names on the bus)."""


async def _dashboard_attached(host: Any) -> bool:
    """Whether a dashboard holds a name on the host's bus now (a question would be seen)."""
    from agent_tui.bus.presence import bucket
    from agent_tui.bus.protocol import NAMES_BUCKET, NameClaim

    stream = host.link.stream
    if stream is None:
        return False
    try:
        names = await bucket(stream, NAMES_BUCKET, host.settings.presence_ttl_s)
        keys = await names.keys()
    except Exception:  # no names yet (`keys` raises when there are none), the bus gone: no one
        return False
    for key in keys:
        try:
            entry = await names.get(key)
            if entry.value and NameClaim.model_validate_json(entry.value).kind == "dashboard":
                return True
        except Exception:  # a name let go meanwhile, a value that is no claim: not a dashboard
            continue
    return False


SHUTDOWN_GRACE_S = 30.0
"""How long a stopped host may take to flush and close before it leaves anyway."""


def _leave_now(number: int, why: str) -> None:
    _stderr(f"host {why}; leaving now (its logs are whole; the next start publishes the rest)")
    os._exit(128 + number)


def scenario_on_bus(args: argparse.Namespace) -> Any:
    """How `run SCENARIO --bus URL|local` plays its run with its host on the bus (the engine is
    attached once the run is built on its copies), or the exit status when the bus settings are
    wrong."""
    import anyio

    host = _run_host(args, args.config)
    if isinstance(host, int):
        return host

    async def play_on_bus(headless: Any) -> Any:
        async with _published(*host, headless.sessions_dir) as published:
            inner = headless.listener

            def listener(run: Any) -> Any:
                published.attach(run.engine)
                return inner(run)

            headless.listener = listener
            return await headless.play()

    return lambda headless: anyio.run(play_on_bus, headless)


def publishing_play(args: argparse.Namespace, config: Any) -> Any:
    """How `run --prompt` and `run --agent` play their run while publishing it on the bus (as
    `run SCENARIO --bus` does; an attached dashboard answers its asks with `--approve ask`), or
    the exit status when the bus settings are wrong."""
    host = _run_host(args, config)
    if isinstance(host, int):
        return host

    async def play(run: Any) -> Any:
        async with _published(*host, run.store.root) as published:
            published.attach(run.engine)
            return await run.play(catch_interrupt=True)

    return play


def _run_host(args: argparse.Namespace, config: Any) -> tuple[Any, str] | int:
    """The bus settings of a run (`--bus`, `--host`) and the name its host takes there (the
    machine's, made unique), or the exit status when they are wrong."""
    from agent_tui.bus.config import default_name

    try:
        settings = bus_settings_for(config, args.run_bus, args.run_host, start_private=False)
    except _Refused as error:
        return fail(str(error), EXIT_USAGE)
    return settings, settings.host or f"{default_name()[:59]}-{secrets.token_hex(2)}"


@contextlib.asynccontextmanager
async def _published(settings: Any, name: str, sessions_dir: Path) -> AsyncIterator[Any]:
    """A run's host on the bus while inside (started without requiring the bus); leaving says
    when the bus did not take every event."""
    from agent_tui.bus.host import BusHost

    host = BusHost(settings, name=name, kind="run", sessions_dir=sessions_dir, say=_stderr)
    await host.start(required=False)
    _stderr(f"run {name} publishes on the bus at {settings.shown_url()}")
    try:
        yield host
    finally:
        if not await host.close():
            _stderr(
                f"the bus at {settings.shown_url()} did not take every event before the run ended; "
                "the logs have them all"
            )
