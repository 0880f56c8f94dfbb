"""A replay loads what a replay shows: the scrubber's app, run as a real process on real logs,
never imports the engine, the runtime, the bus or the safety rules (what the live dashboard
runs), and the dashboard's ports load each name from its home only when it is first used.

The app runs headless in a child process (`ReplayApp.run_test`) until its first screen is
composed, and prints the modules it has imported; pressing `A` on a recorded request still opens
the approval dialog (loading its module then).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).parent / "sample-logs"

LIVE_ONLY = (
    "agent_tui.engine",
    "agent_tui.runtime",
    "agent_tui.turns",
    "agent_tui.bus",
    "agent_tui.safety",
    "agent_tui.acp",
    "agent_tui.mcp",
    "agent_tui.importers",
    "agent_tui.export",
    "agent_tui.terminal",
    "agent_tui.providers",
    "agent_tui.tui.app",
    "agent_tui.tui.live",
    "agent_tui.tui.screens.approval",
    "nats",
)
"""What a replay's first screen never needs."""

_RUN = """
import asyncio, json, sys
from pathlib import Path

from agent_tui.tui.replay_app import ReplayApp


async def main() -> None:
    app = ReplayApp(sorted(Path(sys.argv[1]).glob("*.jsonl")))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        while not screen.loaded:
            await pilot.pause(0.01)
        await pilot.pause()
        first = sorted(sys.modules)
        await pilot.press("A")
        await pilot.pause()
        opened = type(app.screen).__name__
    print(json.dumps({"first": first, "opened": opened}))


asyncio.run(main())
"""


def _among(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in names))


def test_a_replay_loads_neither_the_engine_nor_the_runtime_and_still_opens_a_recorded_request() -> None:
    # The `live` sample has requests waiting when its log ends: `A` opens the first of them.
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(SAMPLES / "live")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "agent_tui.tui.replay_app" in found["first"]
    assert "agent_tui.reducer" in found["first"]
    assert _among(found["first"], LIVE_ONLY) == []
    assert found["opened"] == "ApprovalScreen"
