"""The `agent-tui` command line (its commands and options: README.md).

Heavy imports (Textual, pydantic models, the engine) happen inside the subcommands, so
`agent-tui --help` answers at once. Every expected failure is one sentence on stderr and an exit
status; a Python traceback is never what a user sees for bad input.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from typing import Any, Literal

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CORRUPT = 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-tui",
        description=(
            "Watch many coding agents at once: a live session tree, one approval queue, stop "
            "controls, and a replay scrubber over their JSONL logs. With no command, opens the "
            "dashboard on the current directory with the configured model (the built-in demo "
            "when none is configured)."
        ),
    )
    from agent_tui import __version__

    parser.add_argument("--version", action="version", version=f"agent-tui {__version__}")
    parser.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        help="where the logs go (default: the project's directory in agent-tui's data directory; "
        "the demo: a fresh temporary directory)",
    )
    parser.add_argument("--demo", action="store_true", help="open the built-in demo, even with a model")
    parser.add_argument("--cwd", type=Path, default=None, help="the project directory (default: .)")
    parser.add_argument("--prompt", default=None, help="start an agent with this prompt at launch")
    parser.add_argument(
        "--agent",
        default=None,
        metavar="NAME",
        help="start the ACP agent [acp.NAME] of the config file at launch (with --prompt, if given)",
    )
    _model_flags(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="run a scenario headlessly, or one real agent turn with --prompt, writing one log per session",
    )
    run.add_argument(
        "scenario",
        type=Path,
        nargs="?",
        help="scenario JSON file (see README, 'Scenarios'); not with --prompt",
    )
    run.add_argument("--prompt", default=None, help="run one turn of a real model on this prompt")
    run.add_argument(
        "--cwd",
        type=Path,
        default=None,
        help="with --prompt: the directory the agent works in (the real one)",
    )
    _model_flags(run)
    run.add_argument(
        "--sessions-dir",
        type=Path,
        required=True,
        dest="run_sessions_dir",
        help="directory for the session logs",
    )
    run.add_argument(
        "--approve",
        choices=("allow", "deny"),
        default="deny",
        help="how the user answers every permission ask (default: deny)",
    )
    run.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="where the scenario's directories are copied (default: a temp dir)",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="print only the summary")

    replay = commands.add_parser("replay", help="scrub through recorded sessions, or dump them")
    replay.add_argument(
        "path",
        type=Path,
        nargs="?",
        help="a session log (.jsonl) or a directory of them: ours, Claude Code's or Codex's",
    )
    replay.add_argument(
        "--claude", action="store_true", help="your Claude Code sessions (~/.claude/projects)"
    )
    replay.add_argument("--codex", action="store_true", help="your Codex sessions (~/.codex/sessions)")
    replay.add_argument(
        "--since", default=None, help="with --claude/--codex: only sessions changed within, e.g. 2d"
    )
    replay.add_argument(
        "--follow",
        "-f",
        action="store_true",
        help="tail the logs as they grow (a directory may be empty or not exist yet: it waits)",
    )
    replay.add_argument(
        "--from-start", action="store_true", help="open at the first event instead of the last"
    )
    replay.add_argument(
        "--dump",
        choices=("events", "transcript", "frames", "state"),
        help="write a deterministic view to stdout instead of opening the UI",
    )
    replay.add_argument(
        "--strict", action="store_true", help="treat a torn final line as corrupt instead of skipping it"
    )

    demo = commands.add_parser("demo", help="run the built-in demo headlessly (no UI)")
    demo.add_argument("--sessions-dir", type=Path, default=None, dest="demo_sessions_dir")
    demo.add_argument("--approve", choices=("allow", "deny"), default="allow")

    commands.add_parser("schema", help="print the JSON Schema of one event-log line")

    imports = commands.add_parser("import", help="convert Claude Code / Codex logs into agent-tui logs")
    imports.add_argument("src", type=Path, help="a log file or a directory of logs")
    imports.add_argument("--out", type=Path, required=True, help="directory for the converted logs")

    models = commands.add_parser("models", help="list the model profiles and where each setting comes from")
    _model_flags(models)

    acp = commands.add_parser("acp", help="serve our engine as an ACP agent over stdio (for Zed, Toad, ...)")
    acp.add_argument(
        "--scenario",
        type=Path,
        default=None,
        metavar="FILE",
        help="use a scenario's scripted model (no network)",
    )
    acp.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        dest="acp_sessions_dir",
        metavar="DIR",
        help="where session logs are written and loaded from (default: agent-tui's data directory)",
    )
    _model_flags(acp)

    sessions = commands.add_parser("sessions", help="list a project's stored sessions, newest first")
    sessions.add_argument("--sessions-dir", type=Path, default=None, dest="list_sessions_dir")
    sessions.add_argument("--cwd", type=Path, default=None, dest="list_cwd", help="the project (default: .)")
    return parser


def _model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default=None, help="a profile of the config file")
    parser.add_argument("--provider", choices=("openai", "anthropic"), default=None)
    parser.add_argument("--model", default=None, help="the model's name, as the provider knows it")
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible (or Anthropic) endpoint")


def _fail(message: str, status: int = EXIT_FAILED) -> int:
    print(f"agent-tui: {message}", file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            if args.prompt is not None or args.cwd is not None:
                return _cmd_run_prompt(args)
            if args.scenario is None:
                return _fail(
                    "run needs a SCENARIO.json, or --prompt TEXT --cwd DIR for a real model", EXIT_USAGE
                )
            if any(getattr(args, flag) is not None for flag in ("profile", "provider", "model", "base_url")):
                return _fail("--profile, --provider, --model and --base-url go with --prompt", EXIT_USAGE)
            return _cmd_run(args.scenario, args.run_sessions_dir, args.approve, args.workspace, args.quiet)
        if args.command == "models":
            return _cmd_models(args)
        if args.command == "replay":
            tools: tuple[Literal["claude", "codex"], ...] = ()
            if args.claude:
                tools += ("claude",)
            if args.codex:
                tools += ("codex",)
            return _cmd_replay(
                args.path, args.dump, args.strict, args.follow, tools, args.since, args.from_start
            )
        if args.command == "import":
            return _cmd_import(args.src, args.out)
        if args.command == "schema":
            return _cmd_schema()
        if args.command == "acp":
            return _cmd_acp(args)
        if args.command == "demo":
            from agent_tui.demo import demo_scenario_path

            return _cmd_run(
                demo_scenario_path(), args.demo_sessions_dir or _fresh_dir(), args.approve, None, False
            )
        if args.command == "sessions":
            return _cmd_sessions(args.list_sessions_dir, args.list_cwd)
        return _cmd_dashboard(args)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK


def _silence_stdout() -> None:
    """The reader went away (`| head`): stop writing, and let exit not complain about it."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _fresh_dir() -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="agent-tui-sessions-"))


def _cmd_schema() -> int:
    import orjson

    from agent_tui.events import log_line_json_schema

    sys.stdout.buffer.write(orjson.dumps(log_line_json_schema(), option=orjson.OPT_INDENT_2) + b"\n")
    return EXIT_OK


def _cmd_run(
    scenario_path: Path,
    sessions_dir: Path,
    approve: Literal["allow", "deny"],
    workspace: Path | None,
    quiet: bool,
) -> int:
    import anyio

    from agent_tui.engine.errors import EventStoreFailure
    from agent_tui.engine.permissions import StaticPrompter
    from agent_tui.engine.scenario import ScenarioError, load_scenario
    from agent_tui.runtime.console import EventPrinter
    from agent_tui.runtime.runner import RunResult, ScenarioRun

    try:
        scenario = load_scenario(scenario_path)
        run = ScenarioRun(
            scenario,
            base_dir=scenario_path.resolve().parent,
            sessions_dir=sessions_dir,
            prompter=StaticPrompter(approve, reason=f"--approve {approve}"),
            workspace_root=workspace,
        )
    except ScenarioError as error:
        return _fail(str(error), EXIT_USAGE)
    except OSError as error:
        return _fail(f"{error.filename or sessions_dir}: {error.strerror or error}")
    printer = EventPrinter(sys.stdout, quiet=quiet, names=run.engine.agent_path)
    run.subscribe(printer)

    async def go() -> RunResult:
        async with run.engine:
            return await run.play()

    try:
        result = anyio.run(go)
    except EventStoreFailure as error:
        return _fail(f"{error} ({error.__cause__})")
    finally:
        run.close()
    printer.summary(result, sessions_dir)
    for line in result.errors:
        print(f"agent-tui: {line}", file=sys.stderr)
    return EXIT_OK if result.all_ended else EXIT_FAILED


def _cmd_run_prompt(args: argparse.Namespace) -> int:
    from agent_tui.runtime.prompt_run import run_prompt

    if args.scenario is not None:
        return _fail("give either a SCENARIO.json or --prompt, not both", EXIT_USAGE)
    if args.prompt is None or args.cwd is None:
        return _fail("a real-model run needs both --prompt TEXT and --cwd DIR", EXIT_USAGE)
    if args.workspace is not None:
        return _fail("--workspace is for scenarios; --cwd is the directory the agent works in", EXIT_USAGE)
    return run_prompt(
        prompt=args.prompt,
        cwd=args.cwd,
        sessions_dir=args.run_sessions_dir,
        approve=args.approve,
        quiet=args.quiet,
        flags={
            "profile": args.profile,
            "provider": args.provider,
            "model": args.model,
            "base_url": args.base_url,
        },
        out=sys.stdout,
        err=sys.stderr,
    )


def _cmd_models(args: argparse.Namespace) -> int:
    from agent_tui.providers.config import ConfigError, load_config
    from agent_tui.runtime.model_listing import models_report

    try:
        config = load_config()
        report = models_report(
            config, profile=args.profile, provider=args.provider, model=args.model, base_url=args.base_url
        )
    except ConfigError as error:
        return _fail(str(error), EXIT_USAGE)
    sys.stdout.write(report)
    return EXIT_OK


def _cmd_acp(args: argparse.Namespace) -> int:
    from agent_tui.acp.serve import ServerSetupError, default_sessions_dir, run_acp_server

    flags = {key: getattr(args, key) for key in ("profile", "provider", "model", "base_url")}
    try:
        return run_acp_server(
            args.acp_sessions_dir or default_sessions_dir(), scenario=args.scenario, flags=flags
        )
    except ServerSetupError as error:
        return _fail(f"acp: {error}", EXIT_USAGE)


def _cmd_replay(
    path: Path | None,
    dump: str | None,
    strict: bool,
    follow: bool,
    tools: tuple[Literal["claude", "codex"], ...] = (),
    since: str | None = None,
    from_start: bool = False,
) -> int:
    from agent_tui.replay.sources import ReplaySourceError, open_replay
    from agent_tui.store import EventLogDecodeError

    if follow and dump is None and not tools and path is not None and _awaited_dir(path):
        from agent_tui.tui.app import run_replay

        return run_replay([], follow=True, sessions_dir=path, from_start=from_start)
    try:
        inputs = open_replay(path, follow=follow and dump is None, tools=tools, since=since)
    except ReplaySourceError as error:
        return _fail(str(error), EXIT_USAGE)
    except OSError as error:
        return _fail(f"{error.filename or path}: {error.strerror or error}")
    for warning in inputs.warnings:
        print(f"agent-tui: {warning}", file=sys.stderr)
    with inputs:
        if dump is None:
            from agent_tui.tui.app import run_replay

            return run_replay(
                inputs.files, follow=follow, sessions_dir=inputs.watch_dir, from_start=from_start
            )
        from agent_tui.replay.dump import write_dump
        from agent_tui.replay.sources import replay_files

        mode = "strict" if strict else "skip-trailing-partial"
        out = sys.stdout.buffer
        try:
            write_dump(dump, replay_files(inputs.files, mode), out)  # type: ignore[arg-type]
        except EventLogDecodeError as error:
            out.flush()
            print(str(error), file=sys.stderr)
            return EXIT_CORRUPT
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_OK
        except OSError as error:
            return _fail(f"{error.filename or path}: {error.strerror or error}")
        out.flush()
        return EXIT_OK


def _awaited_dir(path: Path) -> bool:
    """A sessions directory to wait in: missing (and not named like a log), or holding no logs."""
    if not path.exists():
        return path.suffix != ".jsonl"
    return path.is_dir() and not any(path.rglob("*.jsonl"))


def _cmd_import(src: Path, out_dir: Path) -> int:
    from agent_tui.importers import ImportInputError, import_path

    try:
        report = import_path(src, out_dir)
    except ImportInputError as error:
        return _fail(str(error), EXIT_USAGE)
    except OSError as error:
        return _fail(f"{error.filename or src}: {error.strerror or error}")
    for warning in report.warnings:
        print(f"agent-tui: {warning}", file=sys.stderr)
    print(report.summary(out_dir))
    return EXIT_OK


NO_MODEL_NOTICE = (
    "This is the built-in demo. To work on your own project, configure a model in "
    "~/.config/agent-tui/config.toml or pass --provider openai|anthropic --model NAME "
    "(README, 'Real models'); --demo opens the demo on purpose."
)


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from agent_tui.runtime.session_dirs import SessionsDirError, default_sessions_dir, ensure_writable

    project = (args.cwd or Path.cwd()).expanduser().resolve()
    if not project.is_dir():
        return _fail(f"{project}: no such directory", EXIT_USAGE)
    models: list[Any] = []
    notice: str | None = None
    external: Any = None
    if args.demo and args.agent is not None:
        return _fail("--agent runs an agent on your project, not in the demo (leave out --demo)", EXIT_USAGE)
    if not args.demo:
        from agent_tui.providers.config import ConfigError

        try:
            external = _acp_agents(args.agent)
            models, notice = _model_choices(args)
        except ConfigError as error:
            return _fail(str(error), EXIT_USAGE)
        except ValueError as error:  # an [acp.NAME] table, or --agent, is wrong
            return _fail(str(error), EXIT_USAGE)
    has_agents = external is not None and bool(external.names())
    sessions_dir = args.sessions_dir or (
        default_sessions_dir(project) if models or has_agents else _fresh_dir()
    )
    try:
        ensure_writable(sessions_dir)
    except SessionsDirError as error:
        return _fail(str(error))
    from agent_tui.tui.app import run_dashboard

    return run_dashboard(
        sessions_dir,
        project=project,
        models=models,
        prompt=args.prompt,
        notice=notice,
        external=external if has_agents else None,
        agent=args.agent,
    )


def _acp_agents(wanted: str | None) -> Any:
    """The ACP agents of the config file, for the dashboard (`AcpWorkbenchAgents`).

    Raises:
        ValueError: an `[acp.NAME]` table is wrong (`PATH:LINE: reason`), or `wanted` is not one
            of them (the message lists those that are).
    """
    from agent_tui.acp.config import acp_config_path, load_acp_agents
    from agent_tui.acp.workbench_agents import AcpWorkbenchAgents, unknown_agent_message

    path = acp_config_path()
    configs = load_acp_agents(path)
    if wanted is not None and wanted not in configs:
        raise ValueError(unknown_agent_message(wanted, configs, path))
    return AcpWorkbenchAgents(configs, where=path)


def _model_choices(args: argparse.Namespace) -> tuple[list[Any], str | None]:
    """The models the dashboard offers, the chosen one first; `([], notice)` when none is set up.

    The chosen model's provider is built here, so a missing key is an error before the UI opens;
    the config's other profiles are built when first picked in the new-agent form.

    Raises:
        ConfigError: a flag, variable or profile is wrong, or the chosen model's key is missing.
    """
    from agent_tui.providers.config import ConfigError, load_config, resolve_settings
    from agent_tui.providers.factory import build_provider
    from agent_tui.runtime.model_router import ModelChoice

    config = load_config()
    flags = {"provider": args.provider, "model": args.model, "base_url": args.base_url}
    chosen = resolve_settings(config, profile=args.profile, **flags)
    if chosen is None:
        return [], NO_MODEL_NOTICE
    provider = build_provider(chosen)
    choices = [
        ModelChoice(
            chosen.profile or "default",
            f"{chosen.provider} · {chosen.model}",
            build=lambda: provider,
            provider=chosen.provider,
            model=chosen.model,
        )
    ]
    for name in sorted(config.profiles):
        if name == chosen.profile:
            continue
        try:
            other = resolve_settings(config, profile=name)
        except ConfigError:
            continue  # a broken profile nobody asked for does not stop the dashboard
        if other is not None:
            choices.append(
                ModelChoice(
                    name,
                    f"{other.provider} · {other.model}",
                    build=partial(build_provider, other),
                    provider=other.provider,
                    model=other.model,
                )
            )
    return choices, None


def _cmd_sessions(sessions_dir: Path | None, cwd: Path | None) -> int:
    from agent_tui.runtime.session_dirs import default_sessions_dir, format_listing, list_stored_sessions

    directory = sessions_dir or default_sessions_dir((cwd or Path.cwd()).expanduser().resolve())
    if sessions_dir is not None and not directory.is_dir():
        return _fail(f"{directory}: no such directory", EXIT_USAGE)
    sys.stdout.write(format_listing(directory, list_stored_sessions(directory)))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
