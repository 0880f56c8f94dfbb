"""Regenerate screenshots/*.svg from the same app states the snapshot tests check.

    /tmp/venv/bin/python scripts/screenshots.py [--out screenshots]

The states come from `SCENES` in tests/test_tui.py (fixture logs in tests/sample-logs/), so a
picture in the README is exactly what `tests/snapshots/` holds for that state.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PICTURES = {
    "dashboard.svg": "dashboard_120x40",
    "approval.svg": "approval",
    "replay.svg": "replay_middle",
    "help.svg": "help",
}
"""Screenshot file → scene name in tests/test_tui.py."""


def _scenes():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("agent_tui_test_tui", ROOT / "tests" / "test_tui.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.SCENES


async def _shoot(scene, path: Path) -> None:  # type: ignore[no-untyped-def]
    app = scene.app()
    async with app.run_test(size=scene.size) as pilot:
        await scene.run_before(pilot)
        await pilot.pause()
        app.save_screenshot(filename=path.name, path=str(path.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    scenes = _scenes()
    for filename, scene in PICTURES.items():
        path = args.out / filename
        asyncio.run(_shoot(scenes[scene], path))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
