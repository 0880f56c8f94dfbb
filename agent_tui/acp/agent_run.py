"""One turn of a configured ACP agent, headless: `agent-tui run --agent NAME --prompt TEXT`.

It is `agent-tui run --prompt` (`runtime.prompt_run`) with the `[acp.NAME]` agent of the config
file in place of our engine's model: the same printed events, log, summary and exit status for
the same ending.

Invariants:
- the agent works in the directory it is given (the real one), under the same permission policy
  as `run --prompt`: the default policy, the user's "always" rules for the project, the
  project's own rules file only once accepted (`--trust-project-rules`); every question the
  agent asks is answered by `questions` (`--approve allow|deny`, or an attached dashboard);
  protected paths and our deny rules still win over an allow;
- the turn ends with its `turn.completed` in the log whatever happens: the agent's own ending,
  its failure to start (`error/provider_failure`, with the command that was tried), or a stop
  (`interrupt()`; in the CLI Ctrl-C, SIGTERM or SIGHUP) `cancelled`, at any moment, start-up
  included; the agent's process group is ended before `play` returns;
- without a sessions directory of its own, the log goes with the project's sessions
  (`session_dirs.default_sessions_dir`), where the dashboard opened on that project lists it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from agent_tui.acp.agents import AcpAgents
from agent_tui.acp.client import AcpAgentSession
from agent_tui.acp.config import AcpAgentConfig
from agent_tui.costs.budgets import BudgetLimit
from agent_tui.costs.prices import PriceTable
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import DEFAULT_POLICY
from agent_tui.engine.questions import Questions
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.engine.session_info import TurnHandle
from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.mcp.config import McpServerConfig
from agent_tui.runtime.permission_files import permission_engine
from agent_tui.runtime.prompt_run import HeadlessRun, PromptResult
from agent_tui.store import JsonlFileEventStore


class AgentRun(HeadlessRun):
    """A session of an ACP agent in `cwd`, for one prompt.

    Args:
        config: the agent (`[acp.NAME]`).
        prompt: what the user asks.
        cwd: the real directory the agent works in.
        sessions_dir: where the log goes.
        questions: the engine's questions (a fixed answer, or `Questions(None)` for a dashboard
            attached over the bus).
        env: where the variables the agent's `env` names come from.
        trust_project_rules: accept `cwd`'s own rules file as it is now.
        data_dir: the user data directory the rules are kept in (the platform's by default).
        budget: what the session may spend (None: no limit).
        prices: what tokens cost, for an agent that does not say (the shipped table if not given).
        mcp_servers: the MCP servers the agent is handed in `session/new`.
        start_timeout, cancel_timeout: see `AcpAgents`.

    Raises:
        PermissionRulesError: the user's rules file, or a trusted project rules file, is not valid.
    """

    def __init__(
        self,
        config: AcpAgentConfig,
        *,
        prompt: str,
        cwd: Path,
        sessions_dir: Path,
        questions: Questions | None,
        env: Mapping[str, str] = ENVIRONMENT,
        trust_project_rules: bool = False,
        data_dir: Path | None = None,
        budget: BudgetLimit | None = None,
        prices: PriceTable | None = None,
        mcp_servers: Mapping[str, McpServerConfig] | None = None,
        start_timeout: float = 30.0,
        cancel_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        cwd = cwd.resolve()  # a directory: `run_agent` makes sure
        self.config = config
        self.prompt = prompt
        self.cwd = cwd
        self.budget = budget
        self.store = JsonlFileEventStore(sessions_dir)
        self.permissions = permission_engine(
            DEFAULT_POLICY, project=cwd, data_dir=data_dir, trust_project_rules=trust_project_rules
        )
        # The engine's own model is never called: the agent brings its own.
        self.engine = SessionEngine(
            self.store, ScriptedProvider(), permissions=self.permissions, questions=questions, prices=prices
        )
        self.agents = AcpAgents(
            self.engine,
            start_timeout=start_timeout,
            cancel_timeout=cancel_timeout,
            env=dict(env),
            mcp_servers=mcp_servers,
        )
        self.notice: Callable[[str], None] = lambda text: None
        self.session: AcpAgentSession | None = None

    @property
    def session_id(self) -> str | None:
        return self.session.session_id if self.session is not None else None

    @asynccontextmanager
    async def _serving(self) -> AsyncIterator[None]:
        async with self.engine, self.agents:
            yield

    async def _begin(self) -> TurnHandle:
        budget = self.budget.payload() if self.budget is not None else None
        self.session = await self.agents.start(self.config, self.cwd, prompt=self.prompt, budget=budget)
        turn = self.session.turn
        assert turn is not None  # started with a prompt
        return turn


def run_agent(
    config: AcpAgentConfig,
    *,
    cwd: Path,
    sessions_dir: Path,
    quiet: bool,
    out: TextIO,
    err: TextIO,
    play: Callable[[AgentRun], Awaitable[PromptResult]] | None = None,
    **run_options: Any,
) -> int:
    """`agent-tui run --agent NAME --prompt TEXT`: run the turn, print its events.

    `run_options` are `AgentRun`'s (`prompt`, `questions`, `budget`, ...). `play(run)` replaces
    `run.play(catch_interrupt=True)` (the CLI's run that also publishes on a bus). Returns the exit status as `run_prompt` does: 0 when the turn ended `final`, 1 when it
    ended otherwise, 2 for a bad directory or rules file, 128 + the signal's number when a signal
    stopped it.
    """
    from agent_tui.engine.permissions import PermissionRulesError
    from agent_tui.events import visible
    from agent_tui.runtime.console import EventPrinter
    from agent_tui.runtime.os_errors import os_reason
    from agent_tui.runtime.prompt_run import ended, play_headless

    def fail(message: str, status: int) -> int:
        print(visible(f"agent-tui: {message}"), file=err)
        return status

    if not cwd.is_dir():
        return fail(f"{cwd}: {'not a directory' if cwd.exists() else 'no such directory'}", 2)
    try:
        run = AgentRun(config, cwd=cwd, sessions_dir=sessions_dir, **run_options)
    except PermissionRulesError as error:
        return fail(str(error), 2)
    except OSError as error:
        return fail(f"{error.filename or cwd}: {os_reason(error)}", 2)
    printer = EventPrinter(out, quiet=quiet, names=run.engine.agent_path)
    result = play_headless(run, printer, err, fail, (lambda: play(run)) if play is not None else None)
    if isinstance(result, int):
        return result
    return ended(result, printer, sessions_dir, err, fail)
