"""The built-in demo: a scenario with several agents, sub-agents, tool calls and approvals."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def demo_scenario_path() -> Path:
    """The demo scenario file (its `workspace/` is copied before every run)."""
    return _HERE / "demo.json"
