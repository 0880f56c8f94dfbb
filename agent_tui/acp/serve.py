"""Running `agent-tui acp`: the engine, its model, and the stdio connection to the client.

Invariants:
- the model is a scenario's scripted model (`--scenario`, no network) or a real one from the
  model flags, the environment or a profile of the config file (the same resolution as
  `agent-tui run --prompt`); with neither, nothing starts and the error says how to configure one;
- stdout carries JSON-RPC only: file descriptor 1 is pointed at stderr once the connection holds
  its own copy of the real stdout, so a stray `print` cannot corrupt the stream;
- when the client closes the connection, every running turn is stopped and writes its
  `turn.completed` before the process exits.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import acp

from agent_tui.acp.server import EngineAgent
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import DEFAULT_POLICY, PermissionEngine, PermissionRulesError, PolicyConfig
from agent_tui.engine.provider import ModelProvider

STDIO_LIMIT = 50 * 1024 * 1024
"""The longest JSON-RPC line read from the client (bytes)."""


class ServerSetupError(Exception):
    """`agent-tui acp` cannot start: no model, a bad scenario or setting (one readable line)."""


def default_sessions_dir() -> Path:
    """`sessions` in agent-tui's data directory: where `session/load` finds earlier sessions."""
    import platformdirs

    return Path(platformdirs.user_data_dir("agent-tui")) / "sessions"


def protect_stdout() -> Any:
    """A binary file on the real stdout; file descriptor 1 and `sys.stdout` now go to stderr."""
    sys.stdout.flush()
    real = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return real


async def serve_stdio(agent: EngineAgent, engine: SessionEngine) -> None:
    """Serve `agent` over stdin/stdout until the client closes the connection (inside `async
    with engine`); then stop every running turn."""
    real_stdout = protect_stdout()
    saved, sys.stdout = sys.stdout, real_stdout  # the SDK connects the pipe it finds there
    try:
        reader, writer = await acp.stdio_streams(limit=STDIO_LIMIT)
    finally:
        sys.stdout = saved
    agent.engine = engine
    try:
        # EngineAgent implements the methods it supports; the SDK answers the rest "method not found".
        await acp.run_agent(cast(acp.Agent, agent), writer, reader)
    finally:
        for info in engine.sessions():
            engine.stop_subtree(info.id)


def run_acp_server(
    sessions_dir: Path,
    *,
    scenario: Path | None = None,
    flags: Mapping[str, str | None] | None = None,
    trust_project_rules: bool = False,
) -> int:
    """Build the engine for a scenario or a configured model and serve it; the exit status.

    The permission rules are the user's for the directory the server runs in, plus that
    directory's own rules file once accepted (`trust_project_rules` accepts it as it is now).

    Raises:
        ServerSetupError: a bad scenario, a bad setting, a rules file that is not valid, or no
            model at all.
    """
    import anyio

    from agent_tui.store import JsonlFileEventStore

    flags = dict(flags or {})
    if scenario is not None:
        if any(value is not None for value in flags.values()):
            raise ServerSetupError("give either --scenario or model flags, not both")
        agent, provider, make_engine = _scripted(scenario)
    else:
        agent, provider, make_engine = _real_model(flags)
    policy = agent.scenario.policy if agent.scenario is not None else None
    permissions = _permissions(policy, trust_project_rules, keep_rules=scenario is None)
    store = JsonlFileEventStore(sessions_dir)

    async def main() -> None:
        engine: SessionEngine = make_engine(store, agent, permissions)
        try:
            async with engine:
                await serve_stdio(agent, engine)
        finally:
            aclose = getattr(provider, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()

    try:
        anyio.run(main)
    finally:
        store.close()
    return 0


def _scripted(path: Path) -> tuple[EngineAgent, ModelProvider, Any]:
    from agent_tui.engine.scenario import ScenarioError, load_scenario
    from agent_tui.engine.scripted import ScriptedProvider
    from agent_tui.runtime.subagents import SubAgents

    try:
        scenario = load_scenario(path)
    except ScenarioError as error:
        raise ServerSetupError(str(error)) from None
    agent = EngineAgent(scenario=scenario)
    provider = ScriptedProvider(max_context_tokens=scenario.maxContextTokens, agents=scenario.agents)

    def make(store: Any, agent: EngineAgent, permissions: PermissionEngine) -> SessionEngine:
        engine = SessionEngine(
            store,
            provider,
            permissions=permissions,
            prompter=agent.prompter,
            max_steps=scenario.maxSteps,
        )
        SubAgents(
            engine,
            max_background=scenario.maxBackground,
            max_depth=scenario.maxDepth,
            policies={name: script.policy for name, script in scenario.agents.items() if script.policy},
        )
        return engine

    return agent, provider, make


def _real_model(flags: Mapping[str, str | None]) -> tuple[EngineAgent, ModelProvider, Any]:
    """A configured model; each session's system prompt is built for the directory the client
    opened it in, with that directory's `AGENTS.md` or `CLAUDE.md`."""
    from agent_tui.providers.config import (
        HOW_TO_CONFIGURE,
        ConfigError,
        config_path,
        load_config,
        resolve_settings,
    )
    from agent_tui.providers.factory import build_provider
    from agent_tui.providers.prompt import system_prompt
    from agent_tui.runtime.subagents import SubAgents

    try:
        settings = resolve_settings(load_config(), **flags)  # type: ignore[arg-type]
        if settings is None:
            raise ServerSetupError(
                HOW_TO_CONFIGURE.format(path=config_path()).rstrip(".")
                + "; or pass --scenario FILE for a scripted model"
            )
        provider = build_provider(settings)
    except ConfigError as error:
        raise ServerSetupError(str(error)) from None
    agent = EngineAgent()

    def make(store: Any, agent: EngineAgent, permissions: PermissionEngine) -> SessionEngine:
        engine = SessionEngine(
            store,
            provider,
            permissions=permissions,
            prompter=agent.prompter,
            instructions=system_prompt,  # per session: the directory the client opened it in
        )
        SubAgents(engine)
        return engine

    return agent, provider, make


def _permissions(
    policy: PolicyConfig | None, trust_project_rules: bool, *, keep_rules: bool
) -> PermissionEngine:
    """The user's rules for the server's directory, and its own rules file once accepted (a
    scripted model's "always" answers last for the run: `keep_rules` False)."""
    from agent_tui.runtime.permission_files import permission_engine, project_rules_notice

    try:
        permissions = permission_engine(policy or DEFAULT_POLICY, project=Path.cwd(), keep_rules=keep_rules)
        if trust_project_rules and permissions.project_rules is not None:
            permissions.project_rules.accept_current()
    except PermissionRulesError as error:
        raise ServerSetupError(str(error)) from None
    notice = project_rules_notice(permissions)
    if notice is not None:
        print(f"agent-tui: {notice}", file=sys.stderr)
    return permissions
