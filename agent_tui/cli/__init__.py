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
    from typing import Any

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

    module, _, function = COMMANDS[args.command].partition(":")
    try:
        # `__import__`, not `importlib`: the command's module is imported as an `import` statement
        # imports it (and `importlib`, which no command needs, is not)
        command: Callable[[argparse.Namespace], int] = getattr(
            __import__(f"agent_tui.cli.{module}", fromlist=[function]), function
        )
        return command(args)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        silence_stdout()
        return EXIT_OK


COMMANDS: dict[str | None, str] = {
    None: "dashboard:cmd_dashboard",
    "run": "commands:cmd_run",
    "serve": "bus_commands:cmd_serve",
    "models": "commands:cmd_models",
    "mcp": "commands:cmd_mcp",
    "replay": "commands:cmd_replay",
    "import": "commands:cmd_import",
    "schema": "commands:cmd_schema",
    "acp": "commands:cmd_acp",
    "demo": "commands:cmd_demo",
    "export": "export_command:cmd_export",
    "attach": "attach_command:cmd_attach",
    "web": "web_command:cmd_web",
    "sessions": "commands:cmd_sessions",
    "search": "search:cmd_search",
    "hooks": "hooks_command:cmd_hooks",
}
"""What each command runs (None: the dashboard), as `MODULE:FUNCTION` of `agent_tui.cli`: the
module is imported when its command runs, so building the parser or running one command imports
no other's."""
