"""Install the third-party agents of the real-agent tests, at the versions `tests/real-agents.toml` pins.

    python3 scripts/real_agents.py            # install (or check) into the cache directory
    python3 scripts/real_agents.py --where    # print the directory

The npm packages go into one prefix (`DIR/npm`), with `--ignore-scripts`: nothing a package
ships runs at install time (each ships its platform binary as a dependency, which needs no
script). The terminal CLIs of the hook tests (`[clis.*]`: Claude Code, Codex) go into a prefix of
their own (`DIR/clis`), also with `--ignore-scripts`: their postinstall only copies the native
binary of the platform's optional dependency, which npm installs anyway, so the tests start that
binary where it lies (`cli_executable`). `mistral-vibe` goes into a Python 3.12 virtual environment (`DIR/vibe`). A stamp
(`DIR/installed.json`) records what was installed, so a second run with the same pins installs
nothing. This is the only step of the real-agent pass that uses the network; the tests
themselves run offline, against a fake model server on 127.0.0.1.

`DIR` is `$AGENT_TUI_REAL_AGENTS`, else `agent-tui-real-agents` in `$XDG_CACHE_HOME` (`~/.cache`).
The tests import this module for `agents_dir`, `pins`, `executable`, `cli_pins` and
`cli_executable`, so the directory and the versions have one owner.
"""

from __future__ import annotations

import glob
import json
import os
import platform
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


def _table() -> dict[str, Any]:
    with PINS.open("rb") as file:
        return tomllib.load(file)


def pins() -> dict[str, dict[str, Any]]:
    """The ACP agents, by name."""
    return {name: pin for name, pin in _table().items() if name != "clis"}


def cli_pins() -> dict[str, dict[str, Any]]:
    """The terminal CLIs (`[clis.<name>]`), by name."""
    return dict(_table().get("clis", {}))


_PLATFORMS = {
    "x86_64": ("linux-x64", "x86_64-unknown-linux-musl"),
    "aarch64": ("linux-arm64", "aarch64-unknown-linux-musl"),
}


def cli_executable(name: str, root: Path | None = None) -> Path:
    """Where terminal CLI `name`'s native binary lies once installed (it may not exist yet)."""
    root = root or agents_dir()
    machine = platform.machine()
    if machine not in _PLATFORMS:
        raise SystemExit(
            f"real_agents.py: the terminal CLIs are pinned for Linux x86_64 and aarch64, not {machine}"
        )
    where, target = _PLATFORMS[machine]
    bin_ = cli_pins()[name]["bin"].format(platform=where, target=target)
    return root / "clis" / "node_modules" / bin_


def executable(name: str, root: Path | None = None) -> Path:
    """Where agent `name`'s program lies once installed (it may not exist yet)."""
    root = root or agents_dir()
    pin = pins()[name]
    if pin["registry"] == "npm":
        return root / "npm" / "node_modules" / ".bin" / pin["bin"]
    return root / name / "bin" / pin["bin"]


def _stamp(root: Path) -> dict[str, Any]:
    try:
        stamp = json.loads((root / "installed.json").read_text())
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def missing(root: Path | None = None) -> list[str]:
    """The agents whose pinned version is not installed (by the stamp and the programs)."""
    root = root or agents_dir()
    stamp = _stamp(root)
    return [
        name
        for name, pin in pins().items()
        if stamp.get(name) != pin["version"] or not executable(name, root).exists()
    ]


def missing_clis(root: Path | None = None) -> list[str]:
    """The terminal CLIs whose pinned version is not installed (stamp key `clis.<name>`)."""
    root = root or agents_dir()
    stamp = _stamp(root)
    return [
        name
        for name, pin in cli_pins().items()
        if stamp.get(f"clis.{name}") != pin["version"] or not cli_executable(name, root).exists()
    ]


def _python(version: str) -> str:
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "--version"], capture_output=True).returncode == 0:
        return found
    pyenv = sorted(glob.glob(str(Path.home() / f".pyenv/versions/{version}*/bin/python{version}")))
    if pyenv:
        return pyenv[-1]
    raise SystemExit(f"real_agents.py: Python {version} is needed for mistral-vibe and was not found")


def _npm_install(prefix: Path, specs: list[str]) -> None:
    command = [
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--prefix",
        str(prefix),
        *specs,
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def install(root: Path) -> None:
    todo = missing(root)
    clis = missing_clis(root)
    if not todo and not clis:
        print(f"real agents: all installed in {root}")
        return
    root.mkdir(parents=True, exist_ok=True)
    if clis:
        table_clis = cli_pins()
        _npm_install(root / "clis", [f"{table_clis[n]['package']}@{table_clis[n]['version']}" for n in clis])
    table = pins()
    npm = [
        f"{table[name]['package']}@{table[name]['version']}"
        for name in todo
        if table[name]["registry"] == "npm"
    ]
    if npm:
        _npm_install(root / "npm", npm)
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
    stamp |= {
        f"clis.{name}": pin["version"]
        for name, pin in cli_pins().items()
        if cli_executable(name, root).exists()
    }
    (root / "installed.json").write_text(json.dumps(stamp, indent=2) + "\n")
    left = missing(root) + missing_clis(root)
    if left:
        raise SystemExit(f"real_agents.py: not installed after all: {', '.join(left)}")
    print(f"real agents: installed {', '.join(todo + clis)} in {root}")


def main(argv: list[str]) -> None:
    if argv[1:] == ["--where"]:
        print(agents_dir())
        return
    install(agents_dir())


if __name__ == "__main__":
    main(sys.argv)
