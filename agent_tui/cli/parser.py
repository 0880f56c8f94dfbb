"""The `agent-tui` argument parser: every command, option and its help text."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path


class SubcommandParser(argparse.ArgumentParser):
    """A subcommand's parser: an argument it does not know is its own error, said with its own
    usage. (Plain argparse hands such arguments up to the top-level parser, which answered
    `agent-tui replay --frob` with the usage of `agent-tui`.)"""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


TRUST_HELP = (
    "accept the project's own rules file (.agent-tui/permissions.json) as it is now; a file "
    "changed later must be accepted again (default: it is ignored until accepted)"
)


def build_parser() -> argparse.ArgumentParser:
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
    model_flags(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=SubcommandParser)

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
    model_flags(run)
    run.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        dest="run_sessions_dir",
        metavar="DIR",
        help="directory for the session logs (needed for a scenario; with --prompt the default is "
        "the project's own, where the dashboard and `agent-tui sessions` find them)",
    )
    run.add_argument(
        "--approve",
        choices=("allow", "deny"),
        default="deny",
        help="how the user answers every permission ask (default: deny)",
    )
    run.add_argument("--trust-project-rules", action="store_true", help=TRUST_HELP)
    run.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="where the scenario's directories are copied and kept (default: a temporary copy, removed after)",
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
    demo.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        dest="demo_sessions_dir",
        metavar="DIR",
        help="where the logs go (default: a fresh temporary directory)",
    )
    demo.add_argument("--approve", choices=("allow", "deny"), default="allow")

    commands.add_parser("schema", help="print the JSON Schema of one event-log line")

    imports = commands.add_parser("import", help="convert Claude Code / Codex logs into agent-tui logs")
    imports.add_argument("src", type=Path, help="a log file or a directory of logs")
    imports.add_argument("--out", type=Path, required=True, help="directory for the converted logs")

    models = commands.add_parser("models", help="list the model profiles and where each setting comes from")
    model_flags(models)

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
    acp.add_argument(
        "--trust-project-rules", action="store_true", dest="acp_trust_project_rules", help=TRUST_HELP
    )
    model_flags(acp)

    sessions = commands.add_parser("sessions", help="list a project's stored sessions, newest first")
    sessions.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        dest="list_sessions_dir",
        metavar="DIR",
        help="a sessions directory (default: the project's)",
    )
    sessions.add_argument(
        "--cwd", type=Path, default=None, dest="list_cwd", metavar="DIR", help="the project (default: .)"
    )
    return parser


def model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default=None, help="a profile of the config file")
    parser.add_argument("--provider", choices=("openai", "anthropic"), default=None)
    parser.add_argument("--model", default=None, help="the model's name, as the provider knows it")
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible (or Anthropic) endpoint")
