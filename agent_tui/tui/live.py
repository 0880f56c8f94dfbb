"""`LiveRun`: a scenario running inside the dashboard, and the one state its events feed.

Invariants:
- every event the engine stores goes through `apply_event` into `state` (the same reducer the
  replay uses), in store order; the listener only marks the state dirty, so the screen redraws
  on its own timer, never once per event;
- the run lives on the app's event loop (a Textual worker), so listener, prompter and UI share
  one thread and need no locks;
- `shutdown` stops every running turn through the engine (each writes its
  `turn.completed{cancelled}`) and waits for them, before the worker is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from textual.message import Message

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.engine.scenario import load_scenario
from agent_tui.events import Event
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.runtime.runner import RunResult, ScenarioRun
from agent_tui.tui.prompter import TuiPrompter
from agent_tui.turns.registry import Attached


class LiveRun:
    """A scenario the dashboard runs and controls.

    Args:
        scenario_path: the scenario file (the built-in demo for `agent-tui`).
        sessions_dir: where the session logs go.
        post: delivers messages to the UI (the app's `post_message`).
        workspace_root: where the scenario's directories are copied (a temp dir if None).
    """

    def __init__(
        self,
        scenario_path: Path,
        sessions_dir: Path,
        post: Callable[[Message], object],
        workspace_root: Path | None = None,
    ) -> None:
        self.scenario_path = scenario_path
        self.sessions_dir = sessions_dir
        self.workspace_root = workspace_root
        self.prompter = TuiPrompter(post)
        self.state = DashboardState()
        self.dirty = True
        self.run: ScenarioRun | None = None
        self.finished = False

    # -- running -------------------------------------------------------------------------------
    async def play(self) -> RunResult:
        """Build the run and play it to the end (raises what the scenario or store raise)."""
        scenario = load_scenario(self.scenario_path)
        run = ScenarioRun(
            scenario,
            base_dir=self.scenario_path.resolve().parent,
            sessions_dir=self.sessions_dir,
            prompter=self.prompter,
            workspace_root=self.workspace_root,
        )
        self.run = run
        unsubscribe = run.subscribe(self._on_event)
        try:
            async with run.engine:
                return await run.play()
        finally:
            unsubscribe()
            run.close()
            self.finished = True

    def _on_event(self, event: Event) -> None:
        apply_event(self.state, event)
        self.dirty = True

    # -- controls ------------------------------------------------------------------------------
    def is_waiting(self, session_id: str, request_id: str) -> bool:
        return self.prompter.request(session_id, request_id) is not None

    def answer(self, session_id: str, request_id: str, answer: PermissionAnswer) -> bool:
        return self.prompter.answer(session_id, request_id, answer)

    def stop_subtree(self, session_id: str) -> int:
        """Stop the session and every running descendant; how many turns were stopped."""
        if self.run is None:
            return 0
        return self.run.engine.stop_subtree(session_id)

    def stop_all(self) -> int:
        """Stop every running turn; how many were stopped."""
        if self.run is None:
            return 0
        engine = self.run.engine
        return sum(1 for info in engine.sessions() if engine.cancel_turn(info.id))

    def running_turns(self) -> int:
        if self.run is None:
            return 0
        return sum(1 for info in self.run.engine.sessions() if info.turn is not None)

    def steer(self, session_id: str, text: str) -> bool:
        """Give a running turn more input. False when the session has no running turn."""
        if self.run is None:
            return False
        return isinstance(self.run.engine.submit(session_id, text), Attached)

    async def shutdown(self, timeout: float = 3.0) -> None:
        """Stop every turn and wait (up to `timeout` s) until each has logged its end."""
        with anyio.move_on_after(timeout):
            while not self.finished and self.running_turns():
                self.stop_all()
                await anyio.sleep(0.02)
