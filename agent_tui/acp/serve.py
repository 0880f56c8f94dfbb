"""Running `agent-tui acp`: the engine, its model, and the stdio connection to the client.

Invariants:
- the model is a scenario's scripted model (`--scenario`, no network) or a real one from the
  model flags, the environment or a profile of the config file (the same resolution as
  `agent-tui run --prompt`); with neither, nothing starts and the error says how to configure one;
- stdout carries JSON-RPC only: file descriptor 1 is pointed at stderr once the connection holds
  its own copy of the real stdout, so a stray `print` cannot corrupt the stream;
- what comes in on stdin is judged before the SDK sees it (`StdioWire`): garbage is answered
  with a JSON-RPC error, never a traceback; a stdout the client closed ends the server quietly,
  one that fails otherwise (a full disk) ends it with one line on stderr, and so does a stdout
  closed from the start (`>&-`);
- when the client closes the connection, or SIGINT, SIGTERM or SIGHUP comes, every running
  turn is stopped and writes its `turn.completed` before the process exits (128 + the signal's
  number after a signal);
- what the SDK logs (a handler that failed) is one line on stderr, never a traceback.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import acp

from agent_tui.acp.server import EngineAgent
from agent_tui.acp.stdio_wire import StdioWire, StdoutClosed
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import DEFAULT_POLICY, PermissionEngine, PermissionRulesError, PolicyConfig
from agent_tui.engine.provider import ModelProvider
from agent_tui.engine.questions import Questions
from agent_tui.mcp.config import McpConfigError, McpServerConfig, load_mcp_servers
from agent_tui.mcp.servers import McpServers
from agent_tui.providers.config import Config

McpConfigs = Mapping[str, McpServerConfig]
Model = tuple[EngineAgent, ModelProvider, dict[str, Any], dict[str, Any]]
"""The ACP agent, its model, and the options of its engine and of its sub-agents."""

STDIO_LIMIT = 50 * 1024 * 1024
"""The longest JSON-RPC line read from the client (bytes)."""


class ServerSetupError(Exception):
    """`agent-tui acp` cannot start: no model, a bad scenario or setting (one readable line)."""


def protect_stdio() -> int:
    """A descriptor on the real stdout; file descriptor 1 and `sys.stdout` now go to stderr.

    Called before anything else opens a file: a descriptor 0, 1 or 2 the process was started
    without is filled with /dev/null (stdin: the input ends at once), so no file, pipe or event
    loop opened later takes its number and gets read or written as stdin, stdout or stderr.

    Raises:
        StdoutClosed: file descriptor 1 was not open.
    """
    closed = [fd for fd in (0, 1, 2) if not _is_open(fd)]
    for fd in closed:
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if 1 in closed:
        raise StdoutClosed()
    if sys.stdout is not None:
        with contextlib.suppress(OSError):
            sys.stdout.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return real


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


class OneLineLog(logging.Handler):
    """What the SDK logs, as one line on stderr: its message and the error's, no traceback."""

    def emit(self, record: logging.LogRecord) -> None:
        error = record.exc_info[1] if record.exc_info else None
        why = f": {type(error).__name__}: {error}" if error is not None else ""
        with contextlib.suppress(OSError, ValueError):
            print(f"agent-tui acp: {record.getMessage()}{why}", file=sys.stderr, flush=True)


async def serve_stdio(agent: EngineAgent, engine: SessionEngine, stdout: int) -> int:
    """Serve `agent` over stdin and `stdout` (`protect_stdio`'s) until the client closes the
    connection or a stop signal comes (inside `async with engine`); then stop every running turn.

    Returns the exit status: 0 when the client ended the connection, 128 + the signal's number
    after a stop signal, 1 when stdout failed (said on stderr).
    """
    from agent_tui.runtime.stop_signals import exit_status, listen_for_stop_signals

    stopped_by: list[int] = []

    def stop_everything() -> None:
        for info in engine.sessions():
            engine.stop_subtree(info.id)

    def on_signal(number: int) -> None:
        if not stopped_by:
            stopped_by.append(number)
        wire.end()

    wire = await StdioWire.open(stdout, limit=STDIO_LIMIT, on_ending=stop_everything)
    agent.engine = engine

    undo = listen_for_stop_signals(on_signal)
    try:
        # EngineAgent implements the methods it supports; the SDK answers the rest "method not found".
        await acp.run_agent(cast(acp.Agent, agent), wire)
    finally:
        undo()
        stop_everything()
    if stopped_by:
        return exit_status(stopped_by[0])
    if wire.gone is not None and not wire.client_left:  # a client that left needs no word
        print(f"agent-tui acp: stdout: {wire.gone}; the server stopped", file=sys.stderr, flush=True)
        return 1
    return 0


def run_acp_server(
    sessions_dir: Path,
    *,
    config: Config,
    scenario: Path | None = None,
    flags: Mapping[str, str | None] | None = None,
    trust_project_rules: bool = False,
) -> int:
    """Build the engine for a scenario or a configured model and serve it; the exit status.
    `config`: the config file as the command loaded it (its profiles, prices and MCP servers).

    The permission rules are the user's for the directory the server runs in, plus that
    directory's own rules file once accepted (`trust_project_rules` accepts it as it is now).

    Raises:
        ServerSetupError: a bad scenario, a bad setting, a rules file that is not valid, or no
            model at all.
    """
    import anyio

    from agent_tui.store import JsonlFileEventStore

    try:
        mcp = load_mcp_servers(config)
    except McpConfigError as error:
        raise ServerSetupError(str(error)) from None
    agent, provider, engine_options, sub_agent_options = _model(scenario, dict(flags or {}), config, mcp)
    policy = agent.scenario.policy if agent.scenario is not None else None
    permissions = _permissions(policy, trust_project_rules, keep_rules=scenario is None)
    try:
        stdout = protect_stdio()
    except StdoutClosed:
        raise ServerSetupError("stdout is closed; the client reads the answers there") from None
    store = JsonlFileEventStore(sessions_dir)
    sdk_log = logging.getLogger()
    sdk_log.addHandler(OneLineLog())

    async def main() -> int:
        from agent_tui.runtime.subagents import SubAgents

        questions = Questions(agent.ask_client)
        engine = SessionEngine(
            store, provider, permissions=permissions, questions=questions, **engine_options
        )
        SubAgents(engine, **sub_agent_options)
        try:
            async with engine:
                return await serve_stdio(agent, engine, stdout)
        finally:
            aclose = getattr(provider, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()

    try:
        return anyio.run(main)
    finally:
        store.close()


def _model(scenario: Path | None, flags: dict[str, str | None], config: Config, mcp: McpConfigs) -> Model:
    """The scripted model of `scenario`, or the configured one `flags` pick, with the options of
    its engine and of its sub-agents."""
    if scenario is None:
        return _real_model(flags, config, mcp)
    if any(value is not None for value in flags.values()):
        raise ServerSetupError("give either --scenario or model flags, not both")
    return _scripted(scenario, mcp)


def _scripted(path: Path, mcp: McpConfigs) -> Model:
    from agent_tui.engine.scenario import ScenarioError, load_scenario
    from agent_tui.engine.scripted import ScriptedProvider

    try:
        scenario = load_scenario(path)
    except ScenarioError as error:
        raise ServerSetupError(str(error)) from None
    provider = ScriptedProvider(max_context_tokens=scenario.maxContextTokens, agents=scenario.agents)
    sub_agents = {
        "max_background": scenario.maxBackground,
        "max_depth": scenario.maxDepth,
        "policies": {name: script.policy for name, script in scenario.agents.items() if script.policy},
    }
    agent = EngineAgent(scenario=scenario)
    options = {"max_steps": scenario.maxSteps, "session_tools": McpServers(mcp, notice=agent.notice)}
    return agent, provider, options, sub_agents


def _real_model(flags: Mapping[str, str | None], config: Config, mcp: McpConfigs) -> Model:
    """A configured model; each session's system prompt is built for the directory the client
    opened it in, with that directory's `AGENTS.md` or `CLAUDE.md`."""
    from agent_tui.providers.config import HOW_TO_CONFIGURE, ConfigError, resolve_settings
    from agent_tui.providers.factory import build_provider
    from agent_tui.providers.prompt import system_prompt

    try:
        settings = resolve_settings(config, **flags)  # type: ignore[arg-type]
        if settings is None:
            raise ServerSetupError(
                HOW_TO_CONFIGURE.format(path=config.path).rstrip(".")
                + "; or pass --scenario FILE for a scripted model"
            )
        provider = build_provider(settings)
    except ConfigError as error:
        raise ServerSetupError(str(error)) from None
    agent = EngineAgent(budget=settings.budget)
    options = {
        "instructions": system_prompt,  # per session: the directory the client opened it in
        "prices": config.price_table(),
        "session_tools": McpServers(mcp, lambda session_id: settings.profile, notice=agent.notice),
    }
    return agent, provider, options, {}


def _permissions(
    policy: PolicyConfig | None, trust_project_rules: bool, *, keep_rules: bool
) -> PermissionEngine:
    """The user's rules for the server's directory, and its own rules file once accepted (a
    scripted model's "always" answers last for the run: `keep_rules` False)."""
    from agent_tui.runtime.permission_files import permission_engine, project_rules_notice

    try:
        permissions = permission_engine(
            policy or DEFAULT_POLICY,
            project=Path.cwd(),
            keep_rules=keep_rules,
            trust_project_rules=trust_project_rules,
        )
    except PermissionRulesError as error:
        raise ServerSetupError(str(error)) from None
    notice = project_rules_notice(permissions)
    if notice is not None:
        print(f"agent-tui: {notice}", file=sys.stderr)
    return permissions
