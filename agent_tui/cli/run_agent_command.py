"""`agent-tui run --agent NAME --prompt TEXT`: a configured ACP agent's turn, headless.

It runs as `agent-tui run --prompt` runs our own agent (`acp.agent_run`): the same output, log
and exit status. `--approve allow|deny` answers every question the agent asks; `--approve ask`
goes with `--bus`, where an attached dashboard answers, as for a scenario run.

Invariants:
- every wrong flag or setting is one line on stderr and exit status 2, before anything starts:
  an agent name that is not configured lists the configured ones and the config file's path;
- a program that cannot be started is the turn's error (the command that was tried), status 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_tui.cli.commands import budget_of, model_flags, questions_for
from agent_tui.cli.status import EXIT_USAGE, fail, sessions_dir_error


def cmd_run_agent(args: argparse.Namespace) -> int:
    from agent_tui.acp.agent_run import run_agent
    from agent_tui.acp.config import AcpConfigError, load_acp_agents
    from agent_tui.acp.workbench_agents import unknown_agent_message
    from agent_tui.mcp.config import McpConfigError, load_mcp_servers
    from agent_tui.providers.config import ConfigError, config_path, load_config
    from agent_tui.runtime.session_dirs import SessionsDirError, default_sessions_dir, ensure_writable

    problem = _flag_problem(args)
    if problem is not None:
        return fail(problem, EXIT_USAGE)
    questions = questions_for(args)
    if isinstance(questions, int):
        return questions
    cwd: Path = args.cwd if args.cwd is not None else Path.cwd()
    if not cwd.is_dir():
        return fail(f"{cwd}: {'not a directory' if cwd.exists() else 'no such directory'}", EXIT_USAGE)
    try:
        config = args.config if args.config is not None else load_config(config_path())
        agents = load_acp_agents(config)
        if args.agent not in agents:
            return fail(unknown_agent_message(args.agent, agents, config.path), EXIT_USAGE)
        mcp_servers = load_mcp_servers(config)
        sessions_dir = args.run_sessions_dir
        if sessions_dir is None:
            sessions_dir = default_sessions_dir(cwd)
            ensure_writable(sessions_dir)
    except (ConfigError, AcpConfigError, McpConfigError, SessionsDirError) as error:
        return fail(str(error), EXIT_USAGE)
    except OSError as error:
        from agent_tui.runtime.os_errors import os_reason

        return fail(f"{error.filename or sessions_dir}: {os_reason(error)}", EXIT_USAGE)
    play = None
    if args.run_bus is not None or args.run_host is not None:
        from agent_tui.cli.bus_commands import publishing_play

        play = publishing_play(args, config)
        if isinstance(play, int):
            return play
    return run_agent(
        agents[args.agent],
        prompt=args.prompt,
        cwd=cwd,
        sessions_dir=sessions_dir,
        questions=questions,
        quiet=args.quiet,
        out=sys.stdout,
        err=sys.stderr,
        trust_project_rules=args.trust_project_rules,
        budget=budget_of(args),
        prices=config.price_table(),
        mcp_servers=mcp_servers,
        play=play,
    )


def _flag_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the flags of `run --agent`, in one line (None: nothing)."""
    if args.scenario is not None:
        return "give either a SCENARIO.json or --agent NAME --prompt TEXT, not both"
    if args.prompt is None:
        return f"--agent {args.agent} needs --prompt TEXT (what to ask it)"
    if args.workspace is not None:
        return "--workspace is for scenarios; --cwd is the directory the agent works in"
    if any(value is not None for value in model_flags(args).values()):
        return (
            "--profile, --provider, --model and --base-url are for our own agents; an ACP agent "
            "uses its own model settings"
        )
    if args.run_sessions_dir is not None:
        return sessions_dir_error(args.run_sessions_dir)
    return None
