"""One real agent turn, headless: `agent-tui run --prompt TEXT --cwd DIR` with a configured model.

Invariants:
- the turn works in the directory it is given, not in a copy (scenarios copy theirs): what
  protects that directory is the permission policy, the default one asking before every write,
  command, network call and destructive call, and `--approve` answering every ask (default deny);
  "always" rules are the user's for the project (`runtime.permission_files`), and
  `DIR/.agent-tui/permissions.json` applies only once accepted (`--trust-project-rules`);
- the model is told the directory, its tools and the rules, plus the project's `AGENTS.md` (or
  `CLAUDE.md`) (`providers.prompt`);
- the turn ends with its `turn.completed` in the log whatever happens: a provider failure ends it
  `error/provider_failure`, an interrupt (`interrupt()`; in the CLI Ctrl-C, SIGTERM or SIGHUP,
  `stop_signals`) `cancelled`; sub-agents it spawned are waited for, or stopped with it, their
  shells' process groups killed; the CLI then exits 128 + the signal's number;
- the provider's HTTP client is closed when the run ends;
- a budget (`--budget`, `--budget-tokens`, over the config's `[budget]` limit by limit) is
  recorded in the root session's `session.created.budget` and counts for its sub-agents too; a
  turn the budget stopped ends `error/budget_exceeded`, and the CLI prints what was spent and
  allowed and exits 1; that a dollar budget cannot be checked (a model with no price) is said
  once on stderr;
- without a sessions directory of its own, the log goes with the project's sessions
  (`session_dirs.default_sessions_dir`), where the dashboard opened on that project lists it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio

from agent_tui.costs.budgets import BudgetLimit
from agent_tui.costs.prices import PriceTable
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import DEFAULT_POLICY
from agent_tui.engine.provider import ModelProvider
from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.session_info import TurnHandle
from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.events import Event, visible
from agent_tui.events.turn_vocabulary import ENDINGS
from agent_tui.mcp.config import McpServerConfig
from agent_tui.mcp.servers import McpServers
from agent_tui.providers.config import Config, ModelSettings, config_path
from agent_tui.providers.factory import build_provider
from agent_tui.providers.prompt import ProjectInstructions, project_instructions, system_prompt
from agent_tui.providers.retry import RetryPolicy
from agent_tui.runtime.os_errors import os_reason, store_failure
from agent_tui.runtime.permission_files import permission_engine, project_rules_notice
from agent_tui.runtime.runner import RunResult, until_ended
from agent_tui.runtime.stop_signals import listen_for_stop_signals, said_stopped
from agent_tui.runtime.subagents import SubAgents
from agent_tui.runtime.turn_records import TurnRecorder
from agent_tui.store import JsonlFileEventStore


@dataclass
class PromptResult:
    """How the turn ended. `message` is the reason the log gives for an error, when it gives one."""

    session_id: str | None = None
    stop_reason: str | None = None
    error_code: str | None = None
    message: str | None = None
    interrupted: bool = False
    signal: int | None = None
    """The signal that stopped the run (SIGINT, SIGTERM, SIGHUP), if one did."""

    @property
    def ok(self) -> bool:
        """The turn ended with its answer (its ending's `answered`)."""
        ending = ENDINGS.get(self.stop_reason or "")
        return ending is not None and ending.answered


class HeadlessRun:
    """What `run --prompt` and `run --agent` share: one prompt's session, headless.

    `play` serves the run (`_serving`), starts its turn (`_begin`), waits for it and what it
    spawned (`_after_turn`), releases what it holds (`_release`, shielded) and says how it
    ended; `interrupt` (Ctrl-C, SIGTERM, SIGHUP in the CLI) stops the session's whole tree at
    any moment, before its turn started included. Subclasses set `engine` and `store`.
    """

    engine: SessionEngine
    store: JsonlFileEventStore
    notice: Callable[[str], None]
    """Told what the person running it should know (an MCP server that did not start)."""

    def __init__(self) -> None:
        self._interrupted = False
        self._signal: int | None = None

    @property
    def session_id(self) -> str | None:
        raise NotImplementedError

    def _serving(self) -> AbstractAsyncContextManager[object]:
        return self.engine

    async def _begin(self) -> TurnHandle:
        """Create the session and start its turn on the prompt."""
        raise NotImplementedError

    async def _after_turn(self) -> None:
        """Wait for what the turn left running (its sub-agents)."""

    async def _release(self) -> None:
        """Let go of what the run holds beyond the engine (a model's connections)."""

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return self.engine.subscribe(listener)

    def interrupt(self) -> None:
        """Stop the turn and everything it spawned (what Ctrl-C does)."""
        self._interrupted = True
        if self.session_id is not None:
            self.engine.stop_subtree(self.session_id)

    async def play(self, *, catch_interrupt: bool = False) -> PromptResult:
        """Run the prompt's turn and wait for its end.

        Args:
            catch_interrupt: turn SIGINT, SIGTERM and SIGHUP into `interrupt()` (the CLI; only
                from the main thread).
        """
        result = PromptResult()
        undo = listen_for_stop_signals(self._signalled) if catch_interrupt else None
        try:
            async with self._serving():
                turn = await self._begin()
                result.session_id = self.session_id
                if self._interrupted:  # the stop came while the session was being made
                    self.interrupt()
                await turn.wait()
                if (end := turn.end) is not None:  # how the turn ended (None: the store failed)
                    result.stop_reason, result.error_code = end.stop_reason, end.error_code
                    result.message = end.message
                await self._after_turn()
        finally:
            if undo is not None:
                undo()
            with anyio.CancelScope(shield=True):
                await self._release()
        result.interrupted = self._interrupted
        result.signal = self._signal
        return result

    def _signalled(self, number: int) -> None:
        if self._signal is None:
            self._signal = number
        self.interrupt()

    def close(self) -> None:
        self.store.close()


class PromptRun(HeadlessRun):
    """A session in `cwd` driven by a real model, for one prompt.

    Args:
        settings: the resolved model settings.
        prompt: what the user asks.
        cwd: the real directory the agent works in.
        sessions_dir: where the logs go.
        questions: the engine's questions (headless: answered by a fixed answer).
        provider: the model (built from `settings` and `env` when None).
        env: where the API key is read.
        policy: retries and timeouts of the provider.
        max_steps: model calls per turn before it ends `max_steps`.
        trust_project_rules: accept `cwd`'s own rules file as it is now.
        data_dir: the user data directory the rules are kept in (the platform's by default).
        budget: what the session's tree may spend (None: the settings' default, if any).
        prices: what model calls cost (the shipped table if not given).

    Raises:
        ConfigError: the provider cannot be built (no key for the vendor's endpoint).
        PermissionRulesError: the user's rules file, or a trusted project rules file, is not
            valid.
        NotADirectoryError, FileNotFoundError: `cwd` is not a directory.
    """

    def __init__(
        self,
        settings: ModelSettings,
        *,
        prompt: str,
        cwd: Path,
        sessions_dir: Path,
        questions: Questions | None,
        provider: ModelProvider | None = None,
        env: Mapping[str, str] = ENVIRONMENT,
        policy: RetryPolicy | None = None,
        max_steps: int = 250,
        trust_project_rules: bool = False,
        data_dir: Path | None = None,
        budget: BudgetLimit | None = None,
        prices: PriceTable | None = None,
        mcp_servers: Mapping[str, McpServerConfig] | None = None,
    ) -> None:
        super().__init__()
        cwd = cwd.resolve()
        if not cwd.exists():
            raise FileNotFoundError(2, "no such directory", str(cwd))
        if not cwd.is_dir():
            raise NotADirectoryError(20, "not a directory", str(cwd))
        self.permissions = permission_engine(
            DEFAULT_POLICY, project=cwd, data_dir=data_dir, trust_project_rules=trust_project_rules
        )
        self.settings = settings
        self.prompt = prompt
        self.cwd = cwd
        self.provider = provider if provider is not None else build_provider(settings, env, policy=policy)
        self.store = JsonlFileEventStore(sessions_dir)
        self.instructions: ProjectInstructions = project_instructions(cwd)
        self.notice = lambda text: None
        self.mcp = McpServers(
            mcp_servers or {}, lambda session_id: settings.profile, notice=lambda text: self.notice(text)
        )
        self.engine = SessionEngine(
            self.store,
            self.provider,
            permissions=self.permissions,
            questions=questions,
            max_steps=max_steps,
            instructions=system_prompt,  # per session: its directory, its tools, its AGENTS.md
            prices=prices,
            session_tools=self.mcp,
        )
        SubAgents(self.engine)
        # Recorded as in the dashboard, so a turn run here can be rewound there later.
        self.recorder = TurnRecorder(sessions_dir, lambda session_id: self.engine.session(session_id).cwd)
        self.engine.subscribe(self.recorder)
        self.budget = budget.merged_over(settings.budget) if budget is not None else settings.budget
        self._session_id: str | None = None

    @property
    def session_id(self) -> str | None:
        return self._session_id

    async def _begin(self) -> TurnHandle:
        self._session_id = await self.engine.create_session(
            self.cwd,
            title=self.prompt[:60],
            provider=self.settings.provider,
            model=self.settings.model,
            budget=self.budget.payload() if self.budget is not None else None,
        )
        return self.engine.start_turn(self._session_id, self.prompt)

    async def _after_turn(self) -> None:
        await until_ended(self.engine.unfinished_turns, self._stop_again)

    def _stop_again(self) -> None:
        if self._interrupted:  # a child that started while the stop went down the tree
            self.interrupt()

    async def _release(self) -> None:
        aclose = getattr(self.provider, "aclose", None)
        if aclose is not None:
            await aclose()


def run_prompt(
    *,
    prompt: str,
    cwd: Path,
    sessions_dir: Path | None,
    approve: str,
    quiet: bool,
    flags: Mapping[str, str | None],
    out: TextIO,
    err: TextIO,
    env: Mapping[str, str] = ENVIRONMENT,
    trust_project_rules: bool = False,
    budget: BudgetLimit | None = None,
    config: Config | None = None,
    questions: Questions | None = None,
    play: Callable[[HeadlessRun], Awaitable[PromptResult]] | None = None,
) -> int:
    """`agent-tui run --prompt`: resolve the model, run the turn, print its events.

    `sessions_dir`: where the log goes; None for the project's own sessions directory, made
    once the directory and the model settings are known to be good. `config`: the config file
    as the process loaded it (None: read it here). `questions`: who answers the permission asks
    (None: `approve`, for every one); `play(run)` replaces `run.play(catch_interrupt=True)` (a
    run that also publishes on a bus, where an attached dashboard may answer them).

    Returns the exit status: 0 when the turn ended `final`, 1 when it ended otherwise, 2 for a
    bad setting or directory, 128 + the signal's number when a signal stopped it (130 for
    Ctrl-C, 143 for SIGTERM, 129 for SIGHUP).
    """
    from agent_tui.engine.permissions import PermissionRulesError
    from agent_tui.mcp.config import McpConfigError, load_mcp_servers
    from agent_tui.providers.config import ConfigError
    from agent_tui.runtime.console import EventPrinter
    from agent_tui.runtime.session_dirs import SessionsDirError

    def fail(message: str, status: int) -> int:
        print(visible(f"agent-tui: {message}"), file=err)
        return status

    if not cwd.is_dir():
        return fail(f"{cwd}: {'not a directory' if cwd.exists() else 'no such directory'}", 2)
    decision: Literal["allow", "deny"] = "allow" if approve == "allow" else "deny"
    try:
        config, settings, sessions_dir = _model_and_logs(config, flags, env, cwd, sessions_dir)
        run = PromptRun(
            settings,
            prompt=prompt,
            cwd=cwd,
            sessions_dir=sessions_dir,
            questions=questions or Questions(fixed_answer(decision, reason=f"--approve {decision}")),
            env=env,
            trust_project_rules=trust_project_rules,
            budget=budget,
            prices=config.price_table(),
            mcp_servers=load_mcp_servers(config),
        )
    except (ConfigError, SessionsDirError, PermissionRulesError, McpConfigError) as error:
        return fail(str(error), 2)
    except OSError as error:
        return fail(f"{error.filename or cwd}: {os_reason(error)}", 2)
    _say_before(run, quiet, out, err)
    printer = EventPrinter(out, quiet=quiet, names=run.engine.agent_path)
    result = play_headless(run, printer, err, fail, (lambda: play(run)) if play is not None else None)
    if isinstance(result, int):
        return result
    return ended(result, printer, sessions_dir, err, fail, problems=run.recorder.problems)


def _model_and_logs(
    config: Config | None,
    flags: Mapping[str, str | None],
    env: Mapping[str, str],
    cwd: Path,
    sessions_dir: Path | None,
) -> tuple[Config, ModelSettings, Path]:
    """The config (read here if not given), the model's settings, and where the log goes (the
    project's own sessions directory, where the dashboard on that project lists the run, unless
    another is given).

    Raises:
        ConfigError: a bad setting, or no model configured. SessionsDirError, OSError: the
            project's sessions directory cannot be written.
    """
    from agent_tui.providers.config import HOW_TO_CONFIGURE, ConfigError, load_config, resolve_settings
    from agent_tui.runtime.session_dirs import default_sessions_dir, ensure_writable

    config = config if config is not None else load_config(config_path(env))
    settings = resolve_settings(config, env=env, **flags)
    if settings is None:
        raise ConfigError(HOW_TO_CONFIGURE.format(path=config.path))
    if sessions_dir is None:
        sessions_dir = default_sessions_dir(cwd)
        ensure_writable(sessions_dir)
    return config, settings, sessions_dir


def play_headless(
    run: HeadlessRun,
    printer: Any,
    err: TextIO,
    fail: Callable[[str, int], int],
    play: Callable[[], Awaitable[PromptResult]] | None = None,
) -> PromptResult | int:
    """Run the turn, its events printed and its budget's notices said; how it ended, or the exit
    status when its log could not be written. `play` replaces `run.play(catch_interrupt=True)`
    (a run that also publishes on a bus)."""
    from agent_tui.engine.errors import EventStoreFailure

    run.engine.budgets.notice = lambda text: print(visible(f"agent-tui: {text}"), file=err)
    run.notice = run.engine.budgets.notice
    run.subscribe(printer)
    try:
        return anyio.run(play or (lambda: run.play(catch_interrupt=True)))
    except EventStoreFailure as error:
        return fail(store_failure(error), 1)
    finally:
        run.close()


def _say_before(run: PromptRun, quiet: bool, out: TextIO, err: TextIO) -> None:
    """Say, before the turn, which project rules apply and which instructions file the model reads."""

    notice = project_rules_notice(run.permissions)
    if notice is not None:
        print(visible(f"agent-tui: {notice}"), file=err)
    if run.instructions.warning:
        print(visible(f"agent-tui: {run.instructions.warning}"), file=err)
    elif run.instructions.file and not quiet:
        out.write(visible(f"(the model reads {run.instructions.file} from {run.cwd})") + "\n")


def ended(
    result: PromptResult,
    printer: Any,
    sessions_dir: Path,
    err: TextIO,
    fail: Callable[[str, int], int],
    *,
    problems: Sequence[str] = (),
) -> int:
    """Print the summary and what went wrong after the turn (`problems`: with its rewind data);
    the exit status (see `run_prompt`)."""

    summary = RunResult(stop_reasons={result.session_id: result.stop_reason} if result.session_id else {})
    printer.summary(summary, sessions_dir)
    for problem in problems:  # the run went on; only its rewind is incomplete
        print(visible(f"agent-tui: rewind data: {problem}"), file=err)
    if printer.gone is not None and result.signal is None:  # after a hang-up no one is there
        print(f"agent-tui: stdout: {printer.gone} (the run went on; its log is complete)", file=err)
    if result.signal is not None:
        return said_stopped(result.signal, fail)
    if result.interrupted:
        return 130
    if result.error_code == "budget_exceeded":
        fail(result.message or "budget exceeded", 1)
    return 0 if result.ok else 1
