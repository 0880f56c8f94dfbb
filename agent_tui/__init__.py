"""agent-tui: a terminal dashboard for many coding agents, and the engine it embeds.

The public names load lazily, so `agent-tui --help` does not import the engine or Textual, and
`__version__` is read from the installed distribution only when asked for (the hook that runs
once per tool call in a user's agent imports this package and nothing more).
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports this package once per tool call: `typing` costs its start-up
    from typing import Any

DISTRIBUTION = "agent-tui-dashboard"
"""The name agent-tui is installed under (`pip install agent-tui-dashboard`); the command is `agent-tui`."""


def _installed_version() -> str:
    """The version the installed distribution declares (pyproject.toml is its one source): the
    `Version:` of its `.dist-info` on `sys.path`, found as `importlib.metadata` finds it (the first
    folder that holds one) without importing that package (~20 ms, twice `agent-tui --version`)."""
    import os
    import sys

    prefix = DISTRIBUTION.replace("-", "_") + "-"
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(".dist-info"):
                found = _metadata_version(os.path.join(folder, name, "METADATA"))
                if found is not None:
                    return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


def _metadata_version(path: str) -> str | None:
    """The `Version:` header of a distribution's METADATA file, or None."""
    try:
        with open(path, encoding="utf-8") as metadata:
            for line in metadata:
                if line.startswith("Version:"):
                    return line.removeprefix("Version:").strip() or None
                if not line.strip():  # the headers end at the first blank line
                    return None
    except (OSError, UnicodeDecodeError):
        return None
    return None


_EXPORTS: dict[str, str] = {
    "SessionEngine": "agent_tui.engine.engine",
    "TurnHandle": "agent_tui.engine.engine",
    "TurnFsm": "agent_tui.turns.turn_fsm",
    "IllegalTransition": "agent_tui.turns.turn_fsm",
    "TurnConflict": "agent_tui.engine.errors",
    "EventStoreFailure": "agent_tui.engine.errors",
    "JsonlFileEventStore": "agent_tui.store.jsonl",
    "JsonlEventLog": "agent_tui.store.jsonl",
    "EventLogDecodeError": "agent_tui.store.errors",
    "EventLogSequenceError": "agent_tui.store.errors",
    "ScriptedProvider": "agent_tui.engine.scripted",
    "TurnRegistry": "agent_tui.turns.registry",
    "EventSink": "agent_tui.turns.sink",
    "PermissionEngine": "agent_tui.engine.permissions",
    "ToolRouter": "agent_tui.engine.tools.router",
    "project_state": "agent_tui.reducer",
    "apply_event": "agent_tui.reducer",
    "frames_from_log": "agent_tui.turns.projection",
    "Event": "agent_tui.events.model",
    "SubAgents": "agent_tui.runtime.subagents",
    "ScenarioRun": "agent_tui.runtime.runner",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read on first use: a directory listing and a file at start
        globals()[name] = version = _installed_version()
        return version
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_tui' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
