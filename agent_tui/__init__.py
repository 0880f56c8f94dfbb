"""agent-tui: a terminal dashboard for many coding agents, and the engine it embeds.

The public names load lazily, so `agent-tui --help` does not import the engine or Textual, and
`__version__` is read from the installed distribution only when asked for (the hook that runs
once per tool call in a user's agent imports this package and nothing more).
"""

from __future__ import annotations

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


_MODULES = {
    "agent_tui.engine.engine": ("SessionEngine", "TurnHandle"),
    "agent_tui.turns.turn_fsm": ("TurnFsm", "IllegalTransition"),
    "agent_tui.engine.errors": ("TurnConflict", "EventStoreFailure"),
    "agent_tui.store.jsonl": ("JsonlFileEventStore", "JsonlEventLog"),
    "agent_tui.store.errors": ("EventLogDecodeError", "EventLogSequenceError"),
    "agent_tui.engine.scripted": ("ScriptedProvider",),
    "agent_tui.turns.registry": ("TurnRegistry",),
    "agent_tui.turns.sink": ("EventSink",),
    "agent_tui.engine.permissions": ("PermissionEngine",),
    "agent_tui.engine.tools.router": ("ToolRouter",),
    "agent_tui.reducer": ("project_state", "apply_event"),
    "agent_tui.turns.projection": ("frames_from_log",),
    "agent_tui.events.model": ("Event",),
    "agent_tui.runtime.subagents": ("SubAgents",),
    "agent_tui.runtime.runner": ("ScenarioRun",),
}
_HOMES = {name: module for module, names in _MODULES.items() for name in names}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    # The packages' loader (`events.lazy_names`) is not used here: importing it loads the
    # `events` package, which the hook and `agent-tui hooks` never need.
    if name == "__version__":  # read on first use: a directory listing and a file at start
        globals()[name] = version = _installed_version()
        return version
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_tui' has no attribute {name!r}")
    from importlib import import_module  # (and `warnings`) only here: the hook never asks for a name

    value = globals()[name] = getattr(import_module(module), name)
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
