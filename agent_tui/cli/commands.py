"""The headless commands: `run`, `models`, `mcp`, `acp`, `replay`, `import`, `schema`, `sessions`.

Each imports what it needs when it runs, and turns every expected failure into one line on
stderr and an exit status (`agent_tui.cli.status`).

`agent-tui run --agent NAME --prompt TEXT` (`cmd_run_agent`) runs a configured ACP agent's turn as
`agent-tui run --prompt` runs our own agent (`acp.agent_run`): the same output, log and exit
status. `--approve allow|deny` answers every question the agent asks; `--approve ask` goes with
`--bus`, where an attached dashboard answers, as for a scenario run. Every wrong flag or setting
is one line on stderr and exit status 2, before anything starts: an agent name that is not
configured lists the configured ones and the config file's path; a program that cannot be
started is the turn's error (the command that was tried), status 1.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

from agent_tui.cli.status import (
    EXIT_CORRUPT,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    fail,
    fail_os,
    fresh_dir,
    project_logs,
    say,
    sessions_dir_error,
    silence_stdout,
)


def cmd_schema(args: argparse.Namespace) -> int:
    import orjson

    from agent_tui.events import log_line_json_schema

    sys.stdout.buffer.write(orjson.dumps(log_line_json_schema(), option=orjson.OPT_INDENT_2) + b"\n")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """`agent-tui run`: an ACP agent's turn with --agent, one real-model turn with --prompt, else a
    scenario (here or on a bus)."""
    if args.agent is not None:
        return cmd_run_agent(args)
    if args.prompt is not None or args.cwd is not None:
        return cmd_run_prompt(args)
    if args.scenario is None:
        return fail("run needs a SCENARIO.json, or --prompt TEXT --cwd DIR for a real model", EXIT_USAGE)
    if any(value is not None for value in model_flags(args).values()):
        return fail("--profile, --provider, --model and --base-url go with --prompt", EXIT_USAGE)
    if args.budget is not None or args.budget_tokens is not None:
        return fail("--budget and --budget-tokens go with --prompt", EXIT_USAGE)
    if args.run_sessions_dir is None:
        return fail("a scenario run needs --sessions-dir DIR for its logs", EXIT_USAGE)
    if args.run_bus is None and (args.approve == "ask" or args.ask_timeout is not None):
        return fail("--approve ask and --ask-timeout go with --bus URL|local", EXIT_USAGE)
    questions = questions_for(args)
    if isinstance(questions, int):
        return questions
    play = None
    if args.run_bus is not None or args.run_host is not None:
        from agent_tui.cli.bus_commands import scenario_on_bus

        play = scenario_on_bus(args)
        if isinstance(play, int):
            return play
    return run_scenario(
        args.scenario,
        args.run_sessions_dir,
        questions,
        args.workspace,
        args.quiet,
        trust_project_rules=args.trust_project_rules,
        play=play,
    )


def cmd_demo(args: argparse.Namespace) -> int:
    """`agent-tui demo`: the built-in demo's scenario, headless."""
    from agent_tui.demo import demo_scenario_path
    from agent_tui.engine.questions import Questions, fixed_answer

    questions = Questions(fixed_answer(args.approve, reason=f"--approve {args.approve}"))
    return run_scenario(demo_scenario_path(), args.demo_sessions_dir or fresh_dir(), questions, None, False)


def run_scenario(
    scenario_path: Path,
    sessions_dir: Path,
    questions: Any,
    workspace: Path | None,
    quiet: bool,
    *,
    trust_project_rules: bool = False,
    play: Callable[[Any], Any] | None = None,
) -> int:
    """`agent-tui run SCENARIO`: copy its directories, play it, print its events.

    `questions` answers the permission asks (`--approve`, or with `--bus` the bus's dashboards);
    `play(headless)` plays the run (with its host on the bus) instead of `anyio.run(headless.play)`.

    SIGINT, SIGTERM and SIGHUP stop it the same way, while it copies or while it runs: every
    turn is cancelled (its log ends `turn.completed{cancelled}`, its shell's process group is
    killed), the scratch copies are removed, and the status is 128 + the signal's number.
    """
    from agent_tui.engine.scenario import ScenarioError, load_scenario
    from agent_tui.runtime.headless_scenario import HeadlessScenario

    try:
        scenario = load_scenario(scenario_path)
    except ScenarioError as error:
        return fail(str(error), EXIT_USAGE)
    problem = sessions_dir_error(sessions_dir)
    if problem is not None:
        return fail(problem)
    printers: list[Any] = []
    headless = HeadlessScenario(
        scenario,
        base_dir=scenario_path.resolve().parent,
        sessions_dir=sessions_dir,
        questions=questions,
        workspace_root=workspace,
        listener=partial(_printer_for, printers, quiet),
        trust_project_rules=trust_project_rules,
    )
    return _play_scenario(headless, play, sessions_dir, printers)


def _printer_for(printers: list[Any], quiet: bool, run: Any) -> Any:
    """The printer of a scenario run's events (an `EventPrinter`), once it has said what it skipped."""
    from agent_tui.runtime.console import EventPrinter

    for line in run.workspace.skipped:
        say(f"agent-tui: {line}", sys.stderr)
    notice = run.project_rules_notice()
    if notice is not None:
        say(f"agent-tui: {notice}", sys.stderr)
    printers.append(EventPrinter(sys.stdout, quiet=quiet, names=run.engine.agent_path))
    return printers[0]


def _play_scenario(
    headless: Any, play: Callable[[Any], Any] | None, sessions_dir: Path, printers: list[Any]
) -> int:
    """Play the scenario run, print its summary and what went wrong; the exit status."""
    import anyio

    from agent_tui.engine.errors import EventStoreFailure
    from agent_tui.engine.scenario import ScenarioError
    from agent_tui.runtime.os_errors import store_failure
    from agent_tui.runtime.stop_signals import said_stopped
    from agent_tui.runtime.workspace import CopyStopped

    try:
        result = anyio.run(headless.play) if play is None else play(headless)
    except ScenarioError as error:
        return fail(str(error), EXIT_USAGE)
    except CopyStopped:
        return said_stopped(headless.signal or signal.SIGINT, fail)
    except EventStoreFailure as error:
        return fail(store_failure(error))
    except OSError as error:
        return fail_os(error, sessions_dir)
    finally:
        headless.close()
    (printer,) = printers
    printer.summary(result, sessions_dir)
    if printer.gone is not None and headless.signal is None:  # after a hang-up no one is there
        print(f"agent-tui: stdout: {printer.gone} (the run went on; its logs are complete)", file=sys.stderr)
    for line in result.errors:
        say(f"agent-tui: {line}", sys.stderr)
    if headless.signal is not None:
        return said_stopped(headless.signal, fail)
    return EXIT_OK if result.all_ended else EXIT_FAILED


def cmd_run_prompt(args: argparse.Namespace) -> int:
    """`agent-tui run --prompt`, here or while publishing it on a bus (`--bus`)."""
    from agent_tui.runtime.prompt_run import run_prompt

    if args.scenario is not None:
        return fail("give either a SCENARIO.json or --prompt, not both", EXIT_USAGE)
    if args.prompt is None or args.cwd is None:
        return fail("a real-model run needs both --prompt TEXT and --cwd DIR", EXIT_USAGE)
    if args.workspace is not None:
        return fail("--workspace is for scenarios; --cwd is the directory the agent works in", EXIT_USAGE)
    if args.run_sessions_dir is not None:
        problem = sessions_dir_error(args.run_sessions_dir)
        if problem is not None:
            return fail(problem, EXIT_USAGE)
    questions = questions_for(args)
    if isinstance(questions, int):
        return questions
    play = None
    if args.run_bus is not None or args.run_host is not None:
        from agent_tui.cli.bus_commands import publishing_play

        play = publishing_play(args, args.config)
        if isinstance(play, int):
            return play
    return run_prompt(
        prompt=args.prompt,
        cwd=args.cwd,
        sessions_dir=args.run_sessions_dir,
        approve=args.approve,
        quiet=args.quiet,
        flags=model_flags(args),
        out=sys.stdout,
        err=sys.stderr,
        trust_project_rules=args.trust_project_rules,
        budget=budget_of(args),
        config=args.config,
        questions=questions,
        play=play,
    )


def model_flags(args: argparse.Namespace) -> dict[str, str | None]:
    """`--profile`, `--provider`, `--model` and `--base-url` as given (None: not given)."""
    return {key: getattr(args, key) for key in ("profile", "provider", "model", "base_url")}


def questions_for(args: argparse.Namespace) -> Any:
    """Who answers a run's permission asks (`Questions`): `--approve allow|deny` every one, or
    with `--approve ask` an attached dashboard (over `--bus`), within `--ask-timeout`; the exit
    status when a flag is wrong."""
    if args.approve != "ask" and args.ask_timeout is not None:
        return fail("--ask-timeout goes with --approve ask", EXIT_USAGE)
    if args.approve == "ask" and args.run_bus is None:
        return fail(ASK_NEEDS_BUS, EXIT_USAGE)
    from agent_tui.engine.questions import Questions, fixed_answer

    if args.approve != "ask":
        return Questions(fixed_answer(args.approve, reason=f"--approve {args.approve}"))
    from agent_tui.bus.config import BusConfigError, parse_duration

    timeout = None
    if args.ask_timeout is not None:
        try:
            timeout = parse_duration(args.ask_timeout, "--ask-timeout")
        except BusConfigError as error:
            return fail(str(error), EXIT_USAGE)
    return Questions(None, ask_timeout=timeout)


ASK_NEEDS_BUS = (
    "--approve ask goes with --bus URL|local (an attached dashboard answers); "
    "without a bus, answer with --approve allow or --approve deny"
)


def budget_of(args: argparse.Namespace) -> Any:
    """`--budget`/`--budget-tokens` as a `BudgetLimit` (None: neither was given)."""
    if args.budget is None and args.budget_tokens is None:
        return None
    from agent_tui.costs.budgets import BudgetLimit

    return BudgetLimit(args.budget, args.budget_tokens)


def cmd_models(args: argparse.Namespace) -> int:
    from agent_tui.providers.config import ConfigError, load_config
    from agent_tui.runtime.model_listing import models_report

    try:
        config = args.config or load_config()
        report = models_report(
            config, profile=args.profile, provider=args.provider, model=args.model, base_url=args.base_url
        )
    except ConfigError as error:
        return fail(str(error), EXIT_USAGE)
    from agent_tui.events import visible

    sys.stdout.write(visible(report))
    return EXIT_OK


def cmd_acp(args: argparse.Namespace) -> int:
    from agent_tui.acp.serve import ServerSetupError, run_acp_server
    from agent_tui.runtime.session_dirs import default_sessions_dir

    try:
        return run_acp_server(
            args.acp_sessions_dir or default_sessions_dir(Path.cwd()),
            config=args.config,
            scenario=args.scenario,
            flags=model_flags(args),
            trust_project_rules=args.acp_trust_project_rules,
        )
    except ServerSetupError as error:
        return fail(f"acp: {error}", EXIT_USAGE)


def cmd_replay(args: argparse.Namespace) -> int:
    """`agent-tui replay`: the scrubber on the logs, or a `--dump` of them."""
    from agent_tui.replay.sources import ReplaySourceError, open_replay

    tools: tuple[Literal["claude", "codex"], ...] = ("claude",) * args.claude + ("codex",) * args.codex
    path, dump, follow, from_start = args.path, args.dump, args.follow, args.from_start
    if path is not None and args.replay_sessions_dir is not None:
        return fail("give a PATH or --sessions-dir, not both", EXIT_USAGE)
    if path is None and not tools:  # the project's sessions, as `sessions`, `search` and `export` read
        found = project_logs(args.replay_sessions_dir, args.replay_cwd, waiting=follow)
        if isinstance(found, int):
            return found
        path = found
    if follow and dump is None and not tools and path is not None and awaited_dir(path):
        from agent_tui.tui.replay_app import run_replay

        return run_replay([], follow=True, sessions_dir=path, from_start=from_start)
    try:
        inputs = open_replay(path, follow=follow and dump is None, tools=tools, since=args.since)
    except ReplaySourceError as error:
        return fail(str(error), EXIT_USAGE)
    except OSError as error:
        return fail_os(error, path)
    with inputs:
        if dump is None:  # the scrubber shows the warnings as notices (N lists them)
            from agent_tui.replay.catalog_child import start_listing

            # Many logs: their list is read by a child process from now on, on the other core
            # while this one starts the app (the screen ends it).
            listing = start_listing(inputs.files)
            try:
                from agent_tui.tui.replay_app import run_replay

                return run_replay(
                    inputs.files,
                    follow=follow,
                    sessions_dir=inputs.watch_dir,
                    from_start=from_start,
                    warnings=list(inputs.warnings),
                    listing=listing,
                )
            finally:
                if listing is not None:
                    listing.close()
        for warning in inputs.warnings:
            say(f"agent-tui: {warning}", sys.stderr)
        return _dump(inputs.files, dump, args.strict, path)


def _dump(files: list[Path], dump: str, strict: bool, path: Path | None) -> int:
    """`replay --dump`: write the view of the logs to stdout; a torn last line is said on stderr."""
    from agent_tui.replay.dump import write_dump
    from agent_tui.replay.sources import open_logs, replay_logs
    from agent_tui.store import EventLogDecodeError

    mode = "strict" if strict else "skip-trailing-partial"
    out = sys.stdout.buffer
    try:
        logs = open_logs(files)
        write_dump(dump, replay_logs(logs, mode), out)  # type: ignore[arg-type]
    except EventLogDecodeError as error:
        out.flush()
        return fail(str(error), EXIT_CORRUPT)
    except BrokenPipeError:
        silence_stdout()
        return EXIT_OK
    except OSError as error:
        return fail_os(error, path)
    out.flush()
    if not strict:  # strict mode stopped at a torn line already; otherwise say what was left out
        from agent_tui.replay.torn import left_out, torn_lines

        for tail in torn_lines(logs):
            say(left_out(tail), sys.stderr)
    return EXIT_OK


def awaited_dir(path: Path) -> bool:
    """A sessions directory to wait in: missing (and not named like a log), or holding no logs."""
    if not path.exists():
        return path.suffix != ".jsonl"
    return path.is_dir() and not any(path.rglob("*.jsonl"))


def cmd_import(args: argparse.Namespace) -> int:
    from agent_tui.importers import ImportInputError, import_path
    from agent_tui.replay.sources import check_log
    from agent_tui.store import EventLogDecodeError

    src, out_dir = args.src, args.out
    try:
        report = import_path(src, out_dir, check_own_log=check_log)
    except ImportInputError as error:
        return fail(str(error), EXIT_USAGE)
    except EventLogDecodeError as error:  # a corrupt agent-tui log: nothing was written
        return fail(f"{error} (nothing was imported)", EXIT_CORRUPT)
    except OSError as error:
        return fail_os(error, src)
    for warning in report.warnings:
        say(f"agent-tui: {warning}", sys.stderr)
    say(report.summary(out_dir))
    return EXIT_OK


def cmd_sessions(args: argparse.Namespace) -> int:
    from agent_tui.runtime.session_dirs import (
        closed_sessions,
        default_sessions_dir,
        format_listing,
        list_stored_sessions,
    )
    from agent_tui.search import SearchError, logs_spend

    sessions_dir, cwd = args.list_sessions_dir, args.list_cwd
    project = (cwd or Path.cwd()).expanduser().resolve()
    if sessions_dir is None and not project.is_dir():  # as the dashboard says it for --cwd
        return fail(f"{project}: no such directory", EXIT_USAGE)
    directory = sessions_dir or default_sessions_dir(project)
    if sessions_dir is not None and not directory.is_dir():
        return fail(f"{directory}: no such directory", EXIT_USAGE)
    stored = list_stored_sessions(directory)
    try:  # what each log spent, from the search index of the directory
        found = logs_spend([session.path for session in stored])
        spend = {
            s.session_id: found[s.session_id].spend
            for s in stored
            if s.problem is None and s.session_id in found
        }
    except SearchError as error:
        print(f"agent-tui: what the sessions spent is not shown: {error}", file=sys.stderr)
        spend = None
    listing = format_listing(directory, stored, closed_sessions(directory), spend)
    say(listing.removesuffix("\n"))
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    """`agent-tui mcp list` and `agent-tui mcp import [FILE]`."""
    from agent_tui.events import visible
    from agent_tui.mcp.config import McpConfigError, load_mcp_servers

    try:
        configs = load_mcp_servers(args.config)
    except McpConfigError as error:
        return fail(str(error), EXIT_USAGE)
    if args.action == "import":
        return _import_mcp_json(args.file or Path(".mcp.json"), args.config.path, configs)
    if args.file is not None:
        return fail("mcp list takes no file (did you mean `agent-tui mcp import FILE`?)", EXIT_USAGE)
    cwd = (args.mcp_cwd or Path.cwd()).expanduser().resolve()
    if not cwd.is_dir():
        return fail(f"{cwd}: no such directory", EXIT_USAGE)
    import anyio

    from agent_tui.mcp.listing import servers_report

    report = anyio.run(servers_report, configs, cwd, getattr(args, "profile", None))
    sys.stdout.write(visible(report))
    return EXIT_OK


def _import_mcp_json(source: Path, config: Path, existing: Any) -> int:
    from agent_tui.events import visible
    from agent_tui.mcp.importing import McpImportError, imported_tables

    try:
        tables = imported_tables(source, existing)
    except McpImportError as error:
        return fail(str(error), EXIT_USAGE)
    try:
        config.parent.mkdir(parents=True, exist_ok=True)
        before = config.read_text(encoding="utf-8") if config.exists() else ""
        gap = "" if not before else ("\n" if before.endswith("\n") else "\n\n")
        with config.open("a", encoding="utf-8") as out:
            out.write(gap + tables)
    except OSError as error:
        return fail(f"{config}: {error.strerror or error}", EXIT_FAILED)
    sys.stdout.write(visible(f"Added to {config}:\n\n{tables}"))
    return EXIT_OK


def cmd_run_agent(args: argparse.Namespace) -> int:
    from agent_tui.acp.agent_run import run_agent

    problem = _flag_problem(args)
    if problem is not None:
        return fail(problem, EXIT_USAGE)
    questions = questions_for(args)
    if isinstance(questions, int):
        return questions
    cwd: Path = args.cwd if args.cwd is not None else Path.cwd()
    if not cwd.is_dir():
        return fail(f"{cwd}: {'not a directory' if cwd.exists() else 'no such directory'}", EXIT_USAGE)
    configured = _configured(args, cwd)
    if isinstance(configured, int):
        return configured
    config, agent, mcp_servers, sessions_dir = configured
    play = None
    if args.run_bus is not None or args.run_host is not None:
        from agent_tui.cli.bus_commands import publishing_play

        play = publishing_play(args, config)
        if isinstance(play, int):
            return play
    return run_agent(
        agent,
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


def _configured(args: argparse.Namespace, cwd: Path) -> tuple[Any, Any, Any, Path] | int:
    """What the config file gives the run: itself, the agent `--agent` names, the MCP servers, and
    where the log goes (`--sessions-dir`, else the project's, made here); the exit status when
    one of them is wrong."""
    from agent_tui.acp.config import AcpConfigError, load_acp_agents
    from agent_tui.acp.workbench_agents import unknown_agent_message
    from agent_tui.mcp.config import McpConfigError, load_mcp_servers
    from agent_tui.providers.config import ConfigError, config_path, load_config
    from agent_tui.runtime.session_dirs import SessionsDirError, default_sessions_dir, ensure_writable

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
    return config, agents[args.agent], mcp_servers, sessions_dir


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
