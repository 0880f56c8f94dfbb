"""Regenerate screenshots/*.svg from the same app states the snapshot tests check.

    .venv/bin/python scripts/screenshots.py [--out screenshots]

The states come from `SCENES` in tests/test_tui.py (fixture logs in tests/sample-logs/) and in
tests/test_workbench_looks.py, tests/test_acp_looks.py and tests/test_terminal_looks.py (a project in a fake home, fixed
times), so a picture in the README is exactly what `tests/snapshots/` holds for that state. Local
time is UTC here, as in the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent

PICTURES = {
    "dashboard.svg": ("test_tui.py", "dashboard_120x40"),
    "approval.svg": ("test_tui.py", "approval"),
    "replay.svg": ("test_tui.py", "replay_middle"),
    "help.svg": ("test_tui.py", "help"),
    "workbench.svg": ("test_workbench_looks.py", "workbench_120x40"),
    "new-agent.svg": ("test_workbench_looks.py", "new_agent_form"),
    "diff-approval.svg": ("test_workbench_looks.py", "diff_approval"),
    "composer.svg": ("test_workbench_looks.py", "composer"),
    "filter.svg": ("test_workbench_looks.py", "filter"),
    "budget.svg": ("test_workbench_looks.py", "near_budget_120x40"),
    "acp-agents.svg": ("test_acp_looks.py", "acp_tree_100x30"),
    "acp-approval.svg": ("test_acp_looks.py", "acp_approval"),
    "terminal-agents.svg": ("test_terminal_looks.py", "terminal_tree_120x40"),
    "terminal-approval.svg": ("test_terminal_looks.py", "terminal_edit_120x40"),
}
"""Screenshot file → (test module, scene name)."""


def _module(filename: str) -> ModuleType:
    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location(f"agent_tui_{filename[:-3]}", ROOT / "tests" / filename)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def _shoot(scene, path: Path) -> None:  # type: ignore[no-untyped-def]
    from support_tui import steady_cursors  # tests/, on the path since the scene's module loaded

    app = scene.app()
    async with app.run_test(size=scene.size) as pilot:
        await scene.run_before(pilot)
        steady_cursors(app)
        await pilot.pause()
        app.save_screenshot(filename=path.name, path=str(path.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["TZ"] = "UTC"
    time.tzset()
    modules: dict[str, ModuleType] = {}
    home = os.environ.get("HOME")
    with tempfile.TemporaryDirectory(prefix="agent-tui-scenes-") as scratch:
        for filename, (module_name, scene) in PICTURES.items():
            module = modules.get(module_name) or modules.setdefault(module_name, _module(module_name))
            if hasattr(module, "SCENE_BASE"):
                module.SCENE_BASE = Path(scratch)
            path = args.out / filename
            asyncio.run(_shoot(module.SCENES[scene], path))
            print(f"wrote {path}")
    if home is not None:
        os.environ["HOME"] = home
    return 0


if __name__ == "__main__":
    sys.exit(main())
