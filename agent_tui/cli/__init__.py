"""The `agent-tui` command line (its commands and options: README.md).

Heavy imports (Textual, pydantic models, the engine) happen inside the subcommands, so
`agent-tui --help` answers at once: this package imports nothing at the top but the exit
statuses (`agent_tui.cli.entry` is imported through it, `agent-tui --version` answers there), and
each command's module is imported when that command runs, never for another's. Every expected
failure is one sentence on stderr and an exit status; a Python traceback is never what a user
sees for bad input.

The package: `parser` (the arguments), `commands` (the headless commands), `dashboard` (the
dashboard command), `search` (the search command), `status` (exit statuses and how failures are
said); `main` dispatches, after making agent-tui's own data and cache folders 0700, handing
the commands the config file as the entry read it (`args.config`: read once per process).
"""

from __future__ import annotations

from agent_tui.cli.status import EXIT_CORRUPT, EXIT_FAILED, EXIT_OK, EXIT_USAGE, fail

TYPE_CHECKING = False
if TYPE_CHECKING:  # `agent-tui --version` imports this package before anything: `typing` costs its start-up
    import argparse
    from collections.abc import Callable
    from typing import Any, Literal

    from agent_tui.cli.commands import awaited_dir
    from agent_tui.providers.config import Config

__all__ = ["EXIT_CORRUPT", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "awaited_dir", "main"]


def __getattr__(name: str) -> Any:
    if name == "awaited_dir":  # the headless commands' module, imported when asked for
        from agent_tui.cli.commands import awaited_dir

        return awaited_dir
    raise AttributeError(f"module 'agent_tui.cli' has no attribute {name!r}")


_RUNS_TOOLS = ("run", "demo", "acp", "serve", "mcp", None)
"""The commands that run shell commands or MCP servers (None: the dashboard)."""


def main(argv: list[str] | None = None, config: Config | None = None) -> int:
    """Run one command. `config`: the config file as the entry read it (None: read it here,
    once, when the command needs it); the commands are given it as `args.config`."""
    from agent_tui.cli.parser import parse_arguments

    args = parse_arguments(argv)
    args.config = config
    _tighten_own_folders()
    if args.command not in _RUNS_TOOLS:
        return _dispatch(args)
    from agent_tui.engine.tools.shell_setup import use_shell_setup
    from agent_tui.providers.config import ConfigError, load_config
    from agent_tui.runtime.shell_settings import shell_setup_for

    try:
        args.config = config if config is not None else load_config()
    except ConfigError as error:
        return fail(str(error), EXIT_USAGE)
    setup = shell_setup_for(args.config)
    if setup.sandbox:
        from agent_tui.engine.tools.sandbox import sandbox_status

        sandbox_status()  # probed here, once, rather than inside the first command's event loop
    with use_shell_setup(setup):
        return _dispatch(args)


def _tighten_own_folders() -> None:
    """agent-tui's folders in the data and cache dirs, 0700 (earlier versions made them by the
    umask, so the logs in them could be read by others)."""
    from pathlib import Path

    import platformdirs

    from agent_tui.private_files import tighten_own_folder

    for folder in (platformdirs.user_data_dir("agent-tui"), platformdirs.user_cache_dir("agent-tui")):
        tighten_own_folder(Path(folder))


def _dispatch(args: argparse.Namespace) -> int:
    from agent_tui.cli.status import silence_stdout

    try:
        return COMMANDS.get(args.command, _dashboard)(args)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        silence_stdout()
        return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    """`agent-tui run`: one real-model turn with --prompt, else a scenario (here or on a bus)."""
    if args.agent is not None:
        from agent_tui.cli.run_agent_command import cmd_run_agent

        return cmd_run_agent(args)
    if args.prompt is not None or args.cwd is not None:
        play = None
        if args.run_bus is not None or args.run_host is not None:
            from agent_tui.cli.bus_commands import publishing_play

            play = publishing_play(args, args.config)
            if isinstance(play, int):
                return play
        from agent_tui.cli.commands import cmd_run_prompt

        return cmd_run_prompt(args, play)
    if args.scenario is None:
        return fail("run needs a SCENARIO.json, or --prompt TEXT --cwd DIR for a real model", EXIT_USAGE)
    if any(getattr(args, flag) is not None for flag in ("profile", "provider", "model", "base_url")):
        return fail("--profile, --provider, --model and --base-url go with --prompt", EXIT_USAGE)
    if args.budget is not None or args.budget_tokens is not None:
        return fail("--budget and --budget-tokens go with --prompt", EXIT_USAGE)
    if args.run_sessions_dir is None:
        return fail("a scenario run needs --sessions-dir DIR for its logs", EXIT_USAGE)
    if args.run_bus is None and (args.approve == "ask" or args.ask_timeout is not None):
        return fail("--approve ask and --ask-timeout go with --bus URL|local", EXIT_USAGE)
    if args.run_bus is not None or args.run_host is not None:
        from agent_tui.cli.bus_commands import cmd_run_on_bus

        return cmd_run_on_bus(args)
    from agent_tui.cli.commands import cmd_run

    return cmd_run(
        args.scenario,
        args.run_sessions_dir,
        args.approve,
        args.workspace,
        args.quiet,
        trust_project_rules=args.trust_project_rules,
    )


def _replay(args: argparse.Namespace) -> int:
    from agent_tui.cli.commands import cmd_replay
    from agent_tui.cli.status import project_logs

    tools: tuple[Literal["claude", "codex"], ...] = ("claude",) * args.claude + ("codex",) * args.codex
    path = args.path
    if path is not None and args.replay_sessions_dir is not None:
        return fail("give a PATH or --sessions-dir, not both", EXIT_USAGE)
    if path is None and not tools:  # the project's sessions, as `sessions`, `search` and `export` read
        found = project_logs(args.replay_sessions_dir, args.replay_cwd, waiting=args.follow)
        if isinstance(found, int):
            return found
        path = found
    return cmd_replay(path, args.dump, args.strict, args.follow, tools, args.since, args.from_start)


def _serve(args: argparse.Namespace) -> int:
    from agent_tui.cli.bus_commands import cmd_serve

    return cmd_serve(args)


def _demo(args: argparse.Namespace) -> int:
    from agent_tui.cli.commands import cmd_run
    from agent_tui.cli.status import fresh_dir
    from agent_tui.demo import demo_scenario_path

    return cmd_run(demo_scenario_path(), args.demo_sessions_dir or fresh_dir(), args.approve, None, False)


def _export(args: argparse.Namespace) -> int:
    from agent_tui.cli.export_command import cmd_export

    return cmd_export(args.target, args.export_format, args.out, args.export_sessions_dir, args.export_cwd)


def _attach(args: argparse.Namespace) -> int:
    from agent_tui.cli.attach_command import cmd_attach

    return cmd_attach(args.bus, args.from_sequence, args.config)


def _web(args: argparse.Namespace) -> int:
    from agent_tui.cli.web_command import cmd_web

    return cmd_web(args)


def _hooks(args: argparse.Namespace) -> int:
    from agent_tui.cli.hooks_command import cmd_hooks

    return cmd_hooks(args)


def _search(args: argparse.Namespace) -> int:
    from agent_tui.cli.search import cmd_search

    return cmd_search(
        args.words, args.search_sessions_dir, args.search_cwd, limit=args.limit, color=args.color
    )


def _dashboard(args: argparse.Namespace) -> int:
    from agent_tui.cli.dashboard import cmd_dashboard

    return cmd_dashboard(args)


def _models(args: argparse.Namespace) -> int:
    from agent_tui.cli.commands import cmd_models

    return cmd_models(args)


def _mcp(args: argparse.Namespace) -> int:
    from agent_tui.cli.commands import cmd_mcp

    return cmd_mcp(args)


def _import(args: argparse.Namespace) -> int:
    from agent_tui.cli.commands import cmd_import

    return cmd_import(args.src, args.out)


def _schema(args: argparse.Namespace) -> int:
    from agent_tui.cli.commands import cmd_schema

    return cmd_schema()


def _acp(args: argparse.Namespace) -> int:
    from agent_tui.cli.commands import cmd_acp

    return cmd_acp(args)


def _sessions(args: argparse.Namespace) -> int:
    from agent_tui.cli.commands import cmd_sessions

    return cmd_sessions(args.list_sessions_dir, args.list_cwd)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": _run,
    "serve": _serve,
    "models": _models,
    "mcp": _mcp,
    "replay": _replay,
    "import": _import,
    "schema": _schema,
    "acp": _acp,
    "demo": _demo,
    "export": _export,
    "attach": _attach,
    "web": _web,
    "sessions": _sessions,
    "search": _search,
    "hooks": _hooks,
}
"""What each command runs (no command: the dashboard, `cmd_dashboard`); each imports its
command's module when it runs, so building the parser or running one command imports no other's."""
