"""The dashboard command: the demo, or the workbench on a project with its models and ACP agents.

Which one `agent-tui` opens (`--demo` always opens the demo):
- a model configured (the config file, or `--provider`/`--model`), or an ACP agent: the workbench
  on the project, its Claude Code and Codex sessions listed beside ours;
- none of these, but the project has Claude Code or Codex sessions (`terminal.discovery`; every
  project's with `--all-projects`), or agent-tui's hook is installed in a CLI's settings
  (`hooks_installed`): the workbench on those sessions (our own agents then say no model is
  configured);
- else the built-in demo, with a line saying how to configure a model.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from agent_tui.cli.status import EXIT_USAGE, fail, fresh_dir, sessions_dir_error

NO_MODEL_NOTICE = (
    "This is the built-in demo. To work on your own project, configure a model in "
    "~/.config/agent-tui/config.toml or pass --provider openai|anthropic --model NAME "
    "(README, 'Real models'); --demo opens the demo on purpose."
)


def cmd_dashboard(args: argparse.Namespace) -> int:
    from agent_tui.runtime.session_dirs import default_sessions_dir
    from agent_tui.runtime.shell_settings import sandbox_problem

    project = (args.cwd or Path.cwd()).expanduser().resolve()
    if not project.is_dir():
        return fail(f"{project}: no such directory", EXIT_USAGE)
    if args.demo and args.agent is not None:
        return fail("--agent runs an agent on your project, not in the demo (leave out --demo)", EXIT_USAGE)
    try:
        chosen = _Choices() if args.demo else _choices(args)
    except ValueError as error:  # a setting, an [acp.NAME] or [mcp.NAME] table, or --agent, is wrong
        return fail(str(error), EXIT_USAGE)
    models, external = chosen.models, chosen.external
    has_agents = external is not None and bool(external.names())
    all_projects = bool(getattr(args, "all_projects", False))
    ours = bool(models or has_agents)
    terminal = None if args.demo else _terminal_shown(project, ours=ours, all_projects=all_projects)
    runs_project = ours or terminal is not None
    sessions_dir = args.sessions_dir or (default_sessions_dir(project) if runs_project else fresh_dir())
    problem = sessions_dir_error(sessions_dir)
    if problem is not None:
        return fail(problem)
    from agent_tui.tui.app import run_dashboard

    return run_dashboard(
        sessions_dir,
        project=project,
        models=models,
        prompt=args.prompt,
        notice=chosen.notice,
        # The demo's scripted commands need no sandbox; its top line keeps how to configure a model.
        warning=sandbox_problem(args.config) if models or has_agents else None,
        external=external if has_agents else None,
        agent=args.agent,
        notify_command=_notify_command(args.config),
        prices=args.config.price_table(),
        mcp_servers=chosen.servers,
        find_terminal=terminal,
        all_projects=all_projects,
        terminal_hand_back=chosen.hand_back,
    )


@dataclass(frozen=True)
class _Choices:
    """What the configuration and the options give the workbench (nothing, for the demo)."""

    models: list[Any] = field(default_factory=list)
    notice: str | None = None
    external: Any = None
    servers: dict[str, Any] = field(default_factory=dict)
    hand_back: float | None = None


def _choices(args: argparse.Namespace) -> _Choices:
    """The models, ACP agents, MCP servers and terminal hand-back the configuration and options give.

    Raises:
        ValueError: a setting, an `[acp.NAME]` or `[mcp.NAME]` table, or `--agent` is wrong.
    """
    from agent_tui.terminal.agents import hand_back_after

    external, servers = _acp_agents(args.config, args.agent)
    models, notice = _model_choices(args)
    return _Choices(models, notice, external, servers, hand_back_after(args.config))


def _terminal_shown(project: Path, *, ours: bool, all_projects: bool) -> Any:
    """The workbench's `TerminalFinder`: the Claude Code and Codex sessions of `project` (every
    project's when asked), from the CLIs' transcript folders. None when there is nothing to show
    in it: no model or agent of ours, and neither such a session (every project's, with
    `--all-projects`) nor agent-tui's hook installed in a CLI's settings (its sessions will come);
    the demo then says how to configure one."""
    from agent_tui.terminal.discovery import discover, hooks_installed

    if not ours and not hooks_installed(project) and not discover(project, all_projects=all_projects):
        return None

    def find(all_projects: bool, warn: Callable[[str], object]) -> Any:
        return discover(project, all_projects=all_projects, warn=warn)

    return find


def _notify_command(config: Any) -> Any:
    """The config's `notify_command` (a `NotifyCommand`), or None when it sets none."""
    from agent_tui.runtime.notify_command import NotifyCommand

    if not config.notify_command:
        return None
    return NotifyCommand(config.notify_command, where=config.where_set("notify_command"))


def _acp_agents(config: Any, wanted: str | None) -> tuple[Any, dict[str, Any]]:
    """The ACP agents of the loaded config file, for the dashboard (`AcpWorkbenchAgents`), with
    its MCP servers, which they are handed as our own agents are (`load_mcp_servers`).

    Raises:
        ValueError: an `[acp.NAME]` or `[mcp.NAME]` table is wrong (`PATH:LINE: reason`), or
            `wanted` is not one of the agents (the message lists those that are).
    """
    from agent_tui.acp.config import load_acp_agents
    from agent_tui.acp.workbench_agents import AcpWorkbenchAgents, unknown_agent_message
    from agent_tui.mcp.config import load_mcp_servers

    configs = load_acp_agents(config)
    if wanted is not None and wanted not in configs:
        raise ValueError(unknown_agent_message(wanted, configs, config.path))
    servers = load_mcp_servers(config)
    return AcpWorkbenchAgents(configs, where=config.path, mcp_servers=servers), servers


def _model_choices(args: argparse.Namespace) -> tuple[list[Any], str | None]:
    """The models the dashboard offers, the chosen one first; `([], notice)` when none is set up.

    The chosen model's provider is built here, so a missing key is an error before the UI opens;
    the config's other profiles are built when first picked in the new-agent form.

    Raises:
        ConfigError: a flag, variable or profile is wrong, or the chosen model's key is missing.
    """
    from agent_tui.providers.config import ConfigError, resolve_settings
    from agent_tui.providers.factory import build_provider

    config = args.config
    flags = {"provider": args.provider, "model": args.model, "base_url": args.base_url}
    chosen = resolve_settings(config, profile=args.profile, **flags)
    if chosen is None:
        return [], NO_MODEL_NOTICE
    provider = build_provider(chosen)
    choices = [_choice(chosen.profile or "default", chosen, lambda: provider)]
    for name in sorted(config.profiles):
        if name == chosen.profile:
            continue
        try:
            other = resolve_settings(config, profile=name)
        except ConfigError:
            continue  # a broken profile nobody asked for does not stop the dashboard
        if other is not None:
            choices.append(_choice(name, other, partial(build_provider, other)))
    return choices, None


def _choice(name: str, settings: Any, build: Callable[[], Any]) -> Any:
    """The form's entry (a `ModelChoice`) for the model `settings` name, made by `build` when used."""
    from agent_tui.runtime.model_router import ModelChoice

    shown = f"{settings.provider} · {settings.model}"
    return ModelChoice(
        name, shown, build=build, provider=settings.provider, model=settings.model, budget=settings.budget
    )
