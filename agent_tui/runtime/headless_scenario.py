"""`HeadlessScenario`: a scenario run from its copies to its end, stoppable by a signal throughout.

What `agent-tui run SCENARIO` (and `agent-tui demo`) runs: the scenario's directories are copied
(in a worker thread, so the event loop hears a signal while a big directory is copied), the run
is built on the copies, played, and closed.

Invariants:
- SIGINT, SIGTERM and SIGHUP (`stop_signals`) are heard from before the first copy until the run
  ends; the first one is `signal`. During the copy it stops the copy (the partial copy is
  removed, `CopyStopped` is raised); during the run it stops every turn (`ScenarioRun.stop`), and
  `play` returns once every turn has ended and logged its `turn.completed{cancelled}`;
- `close()` closes the store and removes the scratch copies this run made (a `--workspace` root
  is the user's and stays); `play` does it before it stops listening for signals, however it
  ended.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio

from agent_tui.engine.questions import Questions
from agent_tui.engine.scenario import Scenario
from agent_tui.events import Event
from agent_tui.runtime.runner import RunResult, ScenarioRun, copy_directories
from agent_tui.runtime.stop_signals import listen_for_stop_signals
from agent_tui.runtime.workspace import Workspace


class HeadlessScenario:
    """One headless scenario run.

    Args:
        scenario: the parsed scenario.
        base_dir: where the scenario file lives (its `cwd`s are relative to it).
        sessions_dir: where the logs go.
        questions: the engine's questions (answered by a fixed answer).
        workspace_root: where the copies go (a temporary directory, removed at the end, if None).
        listener: made for the run once it is built (the console printer), and subscribed.
        trust_project_rules: accept the project's own rules file as it is now
            (`--trust-project-rules`); otherwise it is used only if accepted before.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        base_dir: Path,
        sessions_dir: Path,
        questions: Questions,
        workspace_root: Path | None,
        listener: Callable[[ScenarioRun], Callable[[Event], None]],
        trust_project_rules: bool = False,
    ) -> None:
        self.trust_project_rules = trust_project_rules
        self.scenario = scenario
        self.base_dir = base_dir
        self.sessions_dir = sessions_dir
        self.questions = questions
        self.workspace_root = workspace_root
        self.listener = listener
        self.signal: int | None = None
        """The first stop signal that came, if one did."""
        self.workspace: Workspace | None = None
        self.run: ScenarioRun | None = None

    def stop(self, number: int) -> None:
        """A stop signal: stop the copy or the run, whichever is under way."""
        if self.signal is None:
            self.signal = number
        if self.workspace is not None:
            self.workspace.stop.set()
        if self.run is not None:
            self.run.stop()

    async def play(self) -> RunResult:
        """Copy, build and play the run (on the main thread's event loop: it hears the signals).

        Raises:
            ScenarioError: a `cwd` cannot be copied, or the rules file is wrong.
            CopyStopped: a signal came during the copy.
            OSError: the sessions directory or the scratch root cannot be used.
            EventStoreFailure: the store failed.
        """
        undo = listen_for_stop_signals(self.stop)
        try:
            workspace = self.workspace = Workspace(
                self.base_dir, self.workspace_root, leave_out=[self.sessions_dir]
            )
            if self.signal is not None:
                workspace.stop.set()
            await anyio.to_thread.run_sync(copy_directories, self.scenario, workspace)
            run = self.run = ScenarioRun(
                self.scenario,
                base_dir=self.base_dir,
                sessions_dir=self.sessions_dir,
                questions=self.questions,
                workspace=workspace,
                trust_project_rules=self.trust_project_rules,
            )
            run.subscribe(self.listener(run))
            if self.signal is not None:
                run.stop()
            async with run.engine:
                return await run.play()
        finally:
            self.close()  # while the signals are still ours: a late one cannot leave the copies
            undo()

    def close(self) -> None:
        """Close the store and remove our scratch copies (idempotent)."""
        if self.run is not None:
            self.run.close()
        if self.workspace is not None:
            self.workspace.remove()  # our own scratch copies (nobody was told where); --workspace stays
