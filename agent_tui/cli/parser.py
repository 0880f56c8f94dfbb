"""The `agent-tui` argument parser: every command, option and its help text.

Invariants:
- an option that belongs to several commands (`--cwd`, `--sessions-dir`, `--prompt`, `--agent`,
  `--profile`, `--provider`, `--model`, `--base-url`) means the same before and after the command's name:
  `agent-tui --cwd DIR sessions` is `agent-tui sessions --cwd DIR`; given in both places, the one
  after the command wins;
- such an option given before a command that does not take it is a usage error naming both,
  never silently ignored;
- a long option no parser knows is named as the error, with the nearest known one
  (`unrecognized option --sesions-dir; did you mean --sessions-dir?`), never mistaken for the
  command or an argument.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_tui.cli.option_parser import Parser, SubcommandParser

SHARED_OPTIONS = (
    "--cwd",
    "--sessions-dir",
    "--prompt",
    "--agent",
    "--profile",
    "--provider",
    "--model",
    "--base-url",
)
"""The options every command that has them shares with the top level (a command may keep its
own copy's value under a name of its own: `sessions --cwd` is `list_cwd`)."""


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse a command line, reading a shared option given before the command as if after it."""
    parser = build_parser(lazy=True)
    args = parser.parse_args(argv)
    if args.command is None:
        return args
    (subparsers,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    own = {
        option: action.dest
        for action in subparsers.choices[args.command]._actions
        for option in action.option_strings
    }
    for flag in SHARED_OPTIONS:
        given_before = getattr(args, flag.removeprefix("--").replace("-", "_"))
        if flag not in own:
            if given_before is not None:
                parser.error(f"{flag} does not go with `{args.command}`")
        elif getattr(args, own[flag], None) is None:
            setattr(args, own[flag], given_before)
    return args


TRUST_HELP = (
    "accept the project's own rules file (.agent-tui/permissions.json) as it is now; a file "
    "changed later must be accepted again (default: it is ignored until accepted)"
)


def build_parser(*, lazy: bool = False) -> argparse.ArgumentParser:
    """The whole parser; with `lazy`, each command's arguments are added only when a command line
    naming it is parsed (what `parse_arguments` does: one command's, not all 19, built)."""
    parser = Parser(
        prog="agent-tui",
        description=(
            "Watch many coding agents at once: a live session tree, one approval queue, stop "
            "controls, and a replay scrubber over their JSONL logs. With no command, opens the "
            "dashboard on the current directory with the configured model (with none configured: on "
            "the project's Claude Code and Codex sessions when it has some, else the built-in demo)."
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
    parser.add_argument(
        "--all-projects",
        action="store_true",
        help="list every project's Claude Code and Codex sessions, not only this project's",
    )
    parser.add_argument("--prompt", default=None, help="start an agent with this prompt at launch")
    parser.add_argument(
        "--agent",
        default=None,
        metavar="NAME",
        help="start the ACP agent [acp.NAME] of the config file at launch (with --prompt, if given)",
    )
    model_flags(parser, default=None)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=SubcommandParser)
    for name, help, arguments in COMMANDS:
        described(subparsers, name, help).take(arguments, lazy=lazy)
    return parser


def described(
    subparsers: argparse._SubParsersAction[SubcommandParser], name: str, help: str
) -> SubcommandParser:
    """A subcommand whose `--help` opens with the line its parent's `--help` lists it by."""
    return subparsers.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".")


def demo_arguments(demo: argparse.ArgumentParser) -> None:
    """`agent-tui demo`: where the logs go, and how asks are answered."""
    sessions_dir_flag(demo, "demo_sessions_dir", "where the logs go (default: a fresh temporary directory)")
    demo.add_argument(
        "--approve",
        choices=("allow", "deny"),
        default="allow",
        help="how the user answers every permission ask (default: allow)",
    )


def serve_arguments(serve: argparse.ArgumentParser) -> None:
    """`agent-tui serve`: the bus, the project and the model."""
    bus_flags(serve, "bus", "host")
    project_flags(serve, "serve", "where the logs go (default: the project's)")
    model_flags(serve)
    serve.add_argument(
        "--relay-hooks",
        action="store_true",
        help="answer the hooks of Claude Code and Codex run on this machine: attached dashboards "
        "see their sessions and answer their permission prompts (off by default)",
    )


def import_arguments(imports: argparse.ArgumentParser) -> None:
    """`agent-tui import SRC --out DIR`."""
    imports.add_argument("src", type=Path, help="a log file or a directory of logs")
    imports.add_argument("--out", type=Path, required=True, help="directory for the converted logs")


def run_arguments(run: argparse.ArgumentParser) -> None:
    """`agent-tui run`: a scenario, or one turn of a real model with `--prompt`."""
    run.add_argument(
        "scenario",
        type=Path,
        nargs="?",
        help="scenario JSON file (see README, 'Running scenarios headlessly'); not with --prompt",
    )
    prompt_flags(run)
    model_flags(run)
    sessions_dir_flag(
        run,
        "run_sessions_dir",
        "directory for the session logs (needed for a scenario; with --prompt the default is "
        "the project's own, where the dashboard and `agent-tui sessions` find them)",
    )
    ask_flags(run)
    budget_flags(run)
    run.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="where the scenario's directories are copied and kept (default: a temporary copy, removed after)",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="print only the summary")


def prompt_flags(run: argparse.ArgumentParser) -> None:
    """What `run --prompt` asks of: `--prompt`, `--agent` and `--cwd`, left unset when absent
    (`parse_arguments`)."""
    run.add_argument(
        "--prompt",
        default=argparse.SUPPRESS,
        help="run one turn of a real model (or of the --agent) on this prompt",
    )
    run.add_argument(
        "--agent",
        default=argparse.SUPPRESS,
        metavar="NAME",
        help="with --prompt: run the ACP agent [acp.NAME] of the config file instead of our own "
        "(its own model; --approve answers its questions)",
    )
    run.add_argument(
        "--cwd",
        type=Path,
        default=argparse.SUPPRESS,
        help="with --prompt: the directory the agent works in (the real one; with --agent, default: .)",
    )


def ask_flags(run: argparse.ArgumentParser) -> None:
    """Who answers a scenario run's permission asks: `--approve`, a dashboard over the bus, in time."""
    run.add_argument(
        "--approve",
        choices=("allow", "deny", "ask"),
        default="deny",
        help="how the user answers every permission ask (default: deny); ask: an attached "
        "dashboard answers, with --bus, for any run (a scenario, --prompt or --agent)",
    )
    bus_flags(run, "run_bus", "run_host")
    run.add_argument(
        "--ask-timeout",
        default=None,
        metavar="DURATION",
        help="with --approve ask: deny (as `system`) a request nobody answers within it, e.g. 10m",
    )
    run.add_argument("--trust-project-rules", action="store_true", help=TRUST_HELP)


def budget_flags(run: argparse.ArgumentParser) -> None:
    """`--budget USD` and `--budget-tokens N` of a real-model run."""
    run.add_argument(
        "--budget",
        type=budget_usd,
        default=None,
        metavar="USD",
        help="with --prompt: stop the agent and its sub-agents once they spent this many dollars",
    )
    run.add_argument(
        "--budget-tokens",
        type=budget_tokens,
        default=None,
        metavar="N",
        help="with --prompt: stop them once they used this many tokens (prompt plus output)",
    )


def replay_arguments(replay: argparse.ArgumentParser) -> None:
    """`agent-tui replay`: which logs, and the UI or a dump."""
    replay.add_argument(
        "path",
        type=Path,
        nargs="?",
        help="a session log (.jsonl) or a directory of them: ours, Claude Code's or Codex's "
        "(default: the project's sessions, unless --claude or --codex)",
    )
    project_flags(
        replay, "replay", "the directory of logs to replay instead of PATH (default: the project's)"
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


def attach_arguments(attach: argparse.ArgumentParser) -> None:
    """`agent-tui attach`: the bus, and where in its stream to start."""
    attach.add_argument(
        "--bus",
        default=None,
        metavar="URL|local",
        help="the NATS server (default: $AGENT_TUI_BUS, else the local one agent-tui serve started)",
    )
    attach.add_argument(
        "--from-sequence",
        type=int,
        default=None,
        metavar="N",
        help="read the events stream from this stream sequence (default: from its start)",
    )


def web_arguments(web: argparse.ArgumentParser) -> None:
    """`agent-tui web`: the bus, the address served, the token and the tabs."""
    web.add_argument(
        "--bus",
        default=None,
        dest="web_bus",
        metavar="URL",
        help="the NATS server (default: $AGENT_TUI_BUS, then [bus] url, then this machine's private "
        "bus and host, started as `agent-tui serve` when none runs)",
    )
    web.add_argument(
        "--bind",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="the address to listen on (default: 127.0.0.1, this machine only)",
    )
    web.add_argument("--port", type=int, default=8765, help="the port to listen on (default: 8765; 0: any)")
    web.add_argument(
        "--new-token",
        action="store_true",
        help="replace the access token (kept in agent-tui's data directory) with a new one",
    )
    web.add_argument(
        "--max-tabs",
        type=int,
        default=None,
        metavar="N",
        help="the most browser tabs open at once, each an agent-tui attach process (default: 8); "
        "a tab beyond them says so",
    )


def mcp_arguments(mcp: argparse.ArgumentParser) -> None:
    """`agent-tui mcp list|import`."""
    mcp.add_argument(
        "action",
        choices=("list", "import"),
        help="list: start each server enabled here and show whether it started and its tools; "
        "import: add the servers of a .mcp.json file to the config file",
    )
    mcp.add_argument(
        "file", nargs="?", type=Path, default=None, help="import: the file (default: ./.mcp.json)"
    )
    cwd_flag(mcp, "mcp_cwd")
    mcp.add_argument(
        "--profile", default=argparse.SUPPRESS, help="the model profile in use (servers with profiles =)"
    )


def acp_arguments(acp: argparse.ArgumentParser) -> None:
    """`agent-tui acp`: the model (or a scenario's), the logs and the rules."""
    acp.add_argument(
        "--scenario",
        type=Path,
        default=None,
        metavar="FILE",
        help="use a scenario's scripted model (no network)",
    )
    sessions_dir_flag(
        acp,
        "acp_sessions_dir",
        "where session logs are written and loaded from (default: the project's, for the directory it runs in)",
    )
    acp.add_argument(
        "--trust-project-rules", action="store_true", dest="acp_trust_project_rules", help=TRUST_HELP
    )
    model_flags(acp)


def export_arguments(export: argparse.ArgumentParser) -> None:
    """`agent-tui export`: which session, in which format, to where."""
    export.add_argument(
        "target", metavar="LOG|SESSION_ID", help="a session log, or a session's id (or its start)"
    )
    export.add_argument(
        "--format",
        choices=("md", "html", "json"),
        default="md",
        dest="export_format",
        help="md (the default), html (one self-contained file that works offline) or json",
    )
    export.add_argument(
        "--out", type=Path, default=None, metavar="FILE", help="write here instead of to stdout"
    )
    project_flags(export, "export", "where to look a session id up (default: the project's)")


def search_arguments(search: argparse.ArgumentParser) -> None:
    """`agent-tui search`: the words, where, and how the hits are shown."""
    search.add_argument(
        "words",
        nargs="+",
        metavar="TEXT",
        help='words (all must occur), prefix* and "a phrase": whole words, not arbitrary substrings '
        "(see README, 'Searching across sessions')",
    )
    project_flags(
        search, "search", "a directory of logs: ours, Claude Code's or Codex's (default: the project's)"
    )
    search.add_argument(
        "--limit", type=int, default=100, metavar="N", help="show at most N hits (default: 100)"
    )
    search.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="mark the matching words (default: on a terminal)",
    )


def hooks_arguments(hooks: argparse.ArgumentParser) -> None:
    """`agent-tui hooks install|uninstall [CLI ...] [--user | --project DIR]`, `hooks status`."""
    actions = hooks.add_subparsers(
        dest="hooks_action", metavar="ACTION", required=True, parser_class=SubcommandParser
    )
    for action, help in (
        (
            "install",
            "add agent-tui's hook after your own hooks (both CLIs unless named; for you, unless --project)",
        ),
        ("uninstall", "remove exactly agent-tui's hook (the file as it was, when nothing else changed)"),
    ):
        hooks_file_arguments(described(actions, action, help))
    state = "say what is installed where, and whether a running agent-tui answers the hooks"
    hooks_project(described(actions, "status", state), "the project whose hook files are shown (default: .)")


def hooks_file_arguments(chosen: argparse.ArgumentParser) -> None:
    """`[CLI ...] [--user | --project DIR]`: which hook files `hooks install|uninstall` changes."""
    chosen.add_argument(
        "hooks_clis",
        nargs="*",
        type=hooks_cli,
        metavar="CLI",
        help="claude-code, codex (default: both)",
    )
    where = chosen.add_mutually_exclusive_group()
    where.add_argument(
        "--user",
        action="store_true",
        help="your own hook files: $CLAUDE_CONFIG_DIR or ~/.claude, $CODEX_HOME or ~/.codex (the default)",
    )
    hooks_project(where, "the project in DIR: .claude/settings.local.json, .codex/hooks.json")


def hooks_project(parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup, help: str) -> None:
    """`hooks ... --project DIR`: the project whose hook files are meant."""
    parser.add_argument("--project", type=Path, default=None, dest="hooks_project", metavar="DIR", help=help)


def hooks_cli(text: str) -> str:
    """A CLI named after `hooks install|uninstall`."""
    if text not in ("claude-code", "codex"):
        raise argparse.ArgumentTypeError(f"expected claude-code or codex, got {text!r}")
    return text


def budget_usd(text: str) -> float:
    """`--budget USD`: a positive number of dollars (`2.50`, `$2.50`)."""
    from agent_tui.costs.budgets import usd_problem  # only when the option is given

    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        value = math.nan
    problem = usd_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"expected {problem}, like 2.50, got {text!r}")
    return value


def budget_tokens(text: str) -> int:
    """`--budget-tokens N`: a whole number of tokens from 1 to `MAX_TOKENS` (`500000`, `500_000`)."""
    from agent_tui.costs.budgets import tokens_problem

    try:
        value = int(text.strip()) if len(text) <= 40 else 0  # int() of a huge text is slow
    except ValueError:
        value = 0
    problem = tokens_problem(value)
    if problem is not None:
        shown = text if len(text) <= 40 else text[:39] + "…"
        example = ", like 500000" if value <= 0 else ""
        raise argparse.ArgumentTypeError(f"expected {problem}{example}, got {shown!r}")
    return value


def project_flags(parser: argparse.ArgumentParser, prefix: str, sessions_help: str) -> None:
    """A command's `--sessions-dir DIR` and `--cwd DIR`, kept as `PREFIX_sessions_dir` and
    `PREFIX_cwd`; left unset when absent, so the top level's count (`parse_arguments`)."""
    sessions_dir_flag(parser, f"{prefix}_sessions_dir", sessions_help)
    cwd_flag(parser, f"{prefix}_cwd")


def sessions_dir_flag(parser: argparse.ArgumentParser, dest: str, help: str) -> None:
    """A command's `--sessions-dir DIR`, left unset when absent (`parse_arguments`)."""
    parser.add_argument(
        "--sessions-dir", type=Path, default=argparse.SUPPRESS, dest=dest, metavar="DIR", help=help
    )


def cwd_flag(parser: argparse.ArgumentParser, dest: str) -> None:
    """A command's `--cwd DIR` (the project), left unset when absent (`parse_arguments`)."""
    parser.add_argument(
        "--cwd",
        type=Path,
        default=argparse.SUPPRESS,
        dest=dest,
        metavar="DIR",
        help="the project (default: .)",
    )


def bus_flags(parser: argparse.ArgumentParser, bus_dest: str, host_dest: str) -> None:
    """`--bus URL|local` and `--host NAME` (see docs/remote.md)."""
    parser.add_argument(
        "--bus",
        default=None,
        dest=bus_dest,
        metavar="URL",
        help="the NATS server (nats://, tls://; `local`: this machine's private one); default: "
        "$AGENT_TUI_BUS, then [bus] url of the config file",
    )
    parser.add_argument(
        "--host",
        default=None,
        dest=host_dest,
        metavar="NAME",
        help="this host's name on the bus (default: the machine's name)",
    )


def model_flags(parser: argparse.ArgumentParser, default: object = argparse.SUPPRESS) -> None:
    """The model options; a command's copies leave an absent one unset (`parse_arguments`)."""
    parser.add_argument("--profile", default=default, help="a profile of the config file")
    parser.add_argument(
        "--provider",
        choices=("openai", "anthropic"),
        default=default,
        help="the vendor's API: openai (any OpenAI-compatible server) or anthropic",
    )
    parser.add_argument("--model", default=default, help="the model's name, as the provider knows it")
    parser.add_argument("--base-url", default=default, help="an OpenAI-compatible (or Anthropic) endpoint")


COMMANDS: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None]], ...] = (
    ("run", "run a scenario headlessly, or one real agent turn with --prompt (--agent NAME: an ACP agent's), writing one log per session",
     run_arguments),
    ("replay", "scrub through recorded sessions, or dump them", replay_arguments),
    ("attach", "open the dashboard on every host of a bus (agent-tui serve); quitting stops nothing",
     attach_arguments),
    ("demo", "run the built-in demo headlessly (no UI)", demo_arguments),
    ("web", "serve the attached dashboard to browsers; each tab sees every host of the bus", web_arguments),
    ("serve", "run agents headlessly for dashboards attached over the bus", serve_arguments),
    ("schema", "print the JSON Schema of one event-log line", lambda schema: None),
    ("import", "convert Claude Code / Codex logs into agent-tui logs", import_arguments),
    ("models", "list the model profiles and where each setting comes from", model_flags),
    ("mcp", "list the MCP servers of the config file and their tools, or import a .mcp.json", mcp_arguments),
    ("acp", "serve our engine as an ACP agent over stdio (for Zed, Toad, ...)", acp_arguments),
    ("sessions", "list a project's stored sessions, newest first",
     lambda sessions: project_flags(sessions, "list", "a sessions directory (default: the project's)")),
    ("export", "write a session and its sub-agents as Markdown, HTML or JSON", export_arguments),
    ("search", "find sessions by what was said in them: prompts, answers, commands, output", search_arguments),
    ("hooks", "install, remove or check the hook that brings Claude Code's and Codex's prompts to agent-tui",
     hooks_arguments),
)  # fmt: skip
"""Every command in the order `agent-tui --help` lists them: its name, its one-line help, and
what adds its arguments."""
