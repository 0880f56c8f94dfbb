"""The house rules of STYLE.md that code can check: layers look only down, the CLI starts fast."""

from __future__ import annotations

import subprocess
import sys

import pytest

import agent_tui

BELOW_TUI = [
    "agent_tui.events",
    "agent_tui.events.chains",
    "agent_tui.store",
    "agent_tui.engine.engine",
    "agent_tui.engine.permissions",
    "agent_tui.engine.tools.router",
    "agent_tui.turns",
    "agent_tui.turns.projection",
    "agent_tui.runtime.runner",
    "agent_tui.runtime.subagents",
    "agent_tui.reducer",
    "agent_tui.replay.dump",
]


@pytest.mark.parametrize("module", BELOW_TUI)
def test_nothing_below_tui_imports_textual(module: str) -> None:
    code = f"import sys, {module}; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_floors_do_not_import_upward() -> None:
    code = (
        "import sys, agent_tui.events, agent_tui.store, agent_tui.turns;"
        "print(sorted(m for m in sys.modules if m.startswith('agent_tui.') and "
        "m.split('.')[1] not in ('events', 'store', 'turns')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names_resolve_lazily() -> None:
    code = "import sys, agent_tui; print('agent_tui.engine.engine' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    for name in agent_tui.__all__:
        assert getattr(agent_tui, name) is not None


def test_help_does_not_import_the_engine_or_textual() -> None:
    code = (
        "import sys\nfrom agent_tui.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\n"
        "print(any(m.startswith(('textual', 'agent_tui.engine', 'pydantic')) for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
