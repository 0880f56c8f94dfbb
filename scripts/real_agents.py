"""Install the third-party ACP agents of the real-agent tests, at the versions `tests/real-agents.toml` pins.

    python3 scripts/real_agents.py            # install (or check) into the cache directory
    python3 scripts/real_agents.py --where    # print the directory

The npm packages go into one prefix (`DIR/npm`), with `--ignore-scripts`: nothing a package
ships runs at install time (each ships its platform binary as a dependency, which needs no
script). `mistral-vibe` goes into a Python 3.12 virtual environment (`DIR/vibe`). A stamp
(`DIR/installed.json`) records what was installed, so a second run with the same pins installs
nothing. This is the only step of the real-agent pass that uses the network; the tests
themselves run offline, against a fake model server on 127.0.0.1.

`DIR` is `$AGENT_TUI_REAL_AGENTS`, else `agent-tui-real-agents` in `$XDG_CACHE_HOME` (`~/.cache`).
The tests import this module for `agents_dir`, `pins` and `executable`, so the directory and the
versions have one owner.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

PINS = Path(__file__).resolve().parent.parent / "tests" / "real-agents.toml"
INSTALL_COMMAND = "python3 scripts/real_agents.py"


def agents_dir() -> Path:
    explicit = os.environ.get("AGENT_TUI_REAL_AGENTS")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agent-tui-real-agents"


def pins() -> dict[str, dict[str, Any]]:
    with PINS.open("rb") as file:
        return tomllib.load(file)


def executable(name: str, root: Path | None = None) -> Path:
    """Where agent `name`'s program lies once installed (it may not exist yet)."""
    root = root or agents_dir()
    pin = pins()[name]
    if pin["registry"] == "npm":
        return root / "npm" / "node_modules" / ".bin" / pin["bin"]
    return root / name / "bin" / pin["bin"]


def missing(root: Path | None = None) -> list[str]:
    """The agents whose pinned version is not installed (by the stamp and the programs)."""
    root = root or agents_dir()
    try:
        stamp = json.loads((root / "installed.json").read_text())
    except (OSError, ValueError):
        stamp = {}
    return [
        name
        for name, pin in pins().items()
        if stamp.get(name) != pin["version"] or not executable(name, root).exists()
    ]


def _python(version: str) -> str:
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "--version"], capture_output=True).returncode == 0:
        return found
    pyenv = sorted(glob.glob(str(Path.home() / f".pyenv/versions/{version}*/bin/python{version}")))
    if pyenv:
        return pyenv[-1]
    raise SystemExit(f"real_agents.py: Python {version} is needed for mistral-vibe and was not found")


def install(root: Path) -> None:
    todo = missing(root)
    if not todo:
        print(f"real agents: all installed in {root}")
        return
    root.mkdir(parents=True, exist_ok=True)
    table = pins()
    npm = [
        f"{table[name]['package']}@{table[name]['version']}"
        for name in todo
        if table[name]["registry"] == "npm"
    ]
    if npm:
        command = [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--prefix",
            str(root / "npm"),
            *npm,
        ]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    for name in todo:
        pin = table[name]
        if pin["registry"] != "pypi":
            continue
        venv = root / name
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([_python(pin["python"]), "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, f"{pin['package']}=={pin['version']}"], check=True)
    stamp = {name: pin["version"] for name, pin in table.items() if executable(name, root).exists()}
    (root / "installed.json").write_text(json.dumps(stamp, indent=2) + "\n")
    left = missing(root)
    if left:
        raise SystemExit(f"real_agents.py: not installed after all: {', '.join(left)}")
    print(f"real agents: installed {', '.join(todo)} in {root}")


def main(argv: list[str]) -> None:
    if argv[1:] == ["--where"]:
        print(agents_dir())
        return
    install(agents_dir())


if __name__ == "__main__":
    main(sys.argv)
