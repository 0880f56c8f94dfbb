"""`agent-tui attach [--bus URL|local]`: the dashboard, attached to every host on a bus.

Invariants: a bus that cannot be reached at start (no server, a wrong URL, refused credentials,
no local server recorded) is one line on stderr naming the URL without its secrets, and exit
status 2, before any screen is drawn; a missing `nats-py` (the `bus` extra) is one line saying
how to get it, also 2. Quitting the dashboard stops nothing on any host.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from agent_tui.cli.status import EXIT_USAGE, fail

if TYPE_CHECKING:
    from agent_tui.bus.attach_target import BusTarget

BUS_EXTRA = "pip install 'agent-tui-dashboard[bus]'"


def cmd_attach(args: argparse.Namespace) -> int:
    try:
        from agent_tui.bus.attach import AttachedBus
        from agent_tui.bus.attach_target import BusUnreachable, resolve_target
        from agent_tui.bus.consumer import StartAt
    except ImportError:
        return fail(f"attach needs the NATS client: {BUS_EXTRA}", EXIT_USAGE)
    try:
        target = resolve_target(args.bus, args.config)
        asyncio.run(probe(target))
    except BusUnreachable as error:
        return fail(str(error), EXIT_USAGE)
    from agent_tui.tui.attached_app import AttachedApp

    start = StartAt(sequence=args.from_sequence) if args.from_sequence is not None else None
    app = AttachedApp(AttachedBus(target, start=start))
    app.run()
    return app.return_code or 0


async def probe(target: BusTarget, name: str = "agent-tui-attach-probe") -> None:
    """Connect once and leave: the bus is there, with these credentials."""
    from agent_tui.bus.attach_target import connect

    connection = await connect(target, name=name)
    await connection.close()
