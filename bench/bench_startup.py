"""Benchmark of the headless commands' start-up: each a whole process beside `python -c pass`.

Every row is the wall time of one command as the user runs it, a whole process from start to
exit, beside `python -c pass` of the same interpreter measured in the same run:

- `agent-tui --version`, by the console script and by `python -m agent_tui`. Target: at most 2x;
- `agent-tui hook claude-code` with no agent-tui listening (the hook as the command line runs
  it; the installed hook, which skips the entry, is `bench/bench_hook.py`'s). Target: at most 2x;
- `agent-tui sessions` on 10 logs, `export` of a 50-event session, `hooks status`: informational;
- `agent-tui search` a second time over `--sessions` generated logs of 500 events (default 3,000,
  `bench/bench_search.py`'s; the index built by a first search before the timing, nothing changed
  since). Target: at most 10x.

The processes get an environment of their own with no keys in it (a key in the environment makes
agent-tui start itself again without it, which this does not measure), no config file, and an
empty current directory (`python -m` puts it on the module path, where a stray `nt.py` in
`/tmp` would be imported by `pathlib`, the baseline never). The
commands alternate, `REPEATS` times each, and the best of each is kept, so a busy spell of a
shared machine falls on all alike.

    python bench/bench_startup.py [--sessions 3000] [--repeats N]
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import Row, format_table
from bench_search import _vocabulary, make_logs, session_log

REPEATS = 10
TARGET_VERSION = 2.0
TARGET_HOOK = 2.0
TARGET_SEARCH = 10.0
SMALL_EVENTS = 50
HOOK_EVENT = '{"hook_event_name": "PermissionRequest", "session_id": "s", "tool_name": "Bash"}'


def _environment(home: Path) -> dict[str, str]:
    """No keys, no config, agent-tui's folders in `home`."""
    run = home / "run"
    run.mkdir(parents=True, exist_ok=True, mode=0o700)
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_RUNTIME_DIR": str(run),
    }


def _seconds(
    command: list[str], env: dict[str, str], stdin: str, statuses: tuple[int, ...], cwd: Path
) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in statuses:
        raise RuntimeError(f"{command} gave {done.returncode}: {done.stderr[-2000:]!r}")
    return elapsed


def _commands(workdir: Path, sessions: int) -> dict[str, tuple[list[str], str, tuple[int, ...]]]:
    """Each row's command, its standard input and the exit statuses it may give."""
    python = sys.executable
    module = [python, "-m", "agent_tui"]
    script = str(Path(python).parent / "agent-tui")
    small = workdir / "small"
    make_logs(small, 10, SMALL_EVENTS)
    one = workdir / "sess_00000001.jsonl"
    rng = random.Random(5)
    one.write_bytes(session_log(rng, _vocabulary(rng), 1, SMALL_EVENTS))
    many = workdir / "many"
    make_logs(many, sessions)
    return {
        "python -c pass": ([python, "-c", "pass"], "", (0,)),
        "agent-tui --version": ([script, "--version"], "", (0,)),
        "python -m agent_tui --version": ([*module, "--version"], "", (0,)),
        "agent-tui hook, no agent-tui listening": ([script, "hook", "claude-code"], HOOK_EVENT, (0,)),
        "python -m agent_tui hook, no agent-tui listening": (
            [*module, "hook", "claude-code"],
            HOOK_EVENT,
            (0,),
        ),
        "agent-tui sessions (10 logs)": ([script, "sessions", "--sessions-dir", str(small)], "", (0,)),
        f"agent-tui export ({SMALL_EVENTS}-event session)": ([script, "export", str(one)], "", (0,)),
        "agent-tui hooks status": ([script, "hooks", "status", "--project", str(workdir)], "", (0, 1)),
        f"agent-tui search, second time ({sessions:,} logs)": (
            [script, "search", "--sessions-dir", str(many), "deploy"],
            "",
            (0, 1),
        ),
    }


def _target(name: str) -> float | None:
    if "--version" in name:
        return TARGET_VERSION
    if " hook," in name:
        return TARGET_HOOK
    if " search," in name:
        return TARGET_SEARCH
    return None


def bench_startup(sessions: int, repeats: int = REPEATS) -> list[Row]:
    """Each headless command's whole-process wall time against `python -c pass` (in a scratch
    folder, removed after)."""
    workdir = Path(tempfile.mkdtemp(prefix="agent-tui-bench-startup-"))
    try:
        return _rows(sessions, workdir, repeats)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _rows(sessions: int, workdir: Path, repeats: int) -> list[Row]:
    env = _environment(workdir / "home")
    commands = _commands(workdir, sessions)
    search = next(command for name, (command, _, _) in commands.items() if " search," in name)
    cwd = workdir / "home"  # `python -m` puts it on the module path: a folder of nothing else
    subprocess.run(search, env=env, cwd=cwd, capture_output=True, check=False)  # the first builds the index
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(repeats):
        for name, (command, stdin, statuses) in commands.items():
            best[name] = min(best[name], _seconds(command, env, stdin, statuses, cwd))
    base = best.pop("python -c pass")
    rows = []
    for name, seconds in best.items():
        target = _target(name)
        ratio = seconds / base
        rows.append(
            Row(
                name=f"start-up: {name}",
                measured=seconds * 1e3,
                baseline=base * 1e3,
                ratio=ratio,
                target="informational" if target is None else f"<= {target:g}x python -c pass",
                passed=target is None or ratio <= target,
                unit="ms",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3_000, help="generated logs of 500 events, search")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args(argv)
    rows = bench_startup(args.sessions, args.repeats)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
