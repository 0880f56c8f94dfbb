"""What the replay benchmark's child processes do: drive the real app headless, or write logs.

    python bench/replay_drive.py MODE ARGS...   (run by bench_replay.py, one process per figure)

Modes: `first-screen PATHS` (print "painted" once the first content is composed),
`many-first DIR` (print "listed", then "complete", as a history's list is painted from the logs'
heads, then from their heads and tails), `many-spend DIR` (print "complete", then "scanned" once
every log's earlier spend is in the list), `many-walk DIR STEPS` (choose STEPS sessions in turn;
print JSON),
`workbench-first DIR PROJECT` (print "listed" once the dashboard's tree holds every log of DIR
and that frame is composed, then "ready" once its workbench is; then JSON), `workbench-walk DIR
PROJECT STEPS` (choose STEPS sessions in the dashboard in turn; print JSON),
`scrub PATHS` (index, then seek; print JSON), `follow DIR` and `bare-follow DIR` (sample how old the
newest event shown is while a writer appends; print JSON), `write DIR FILES RATE SECONDS` (append
events with the current time; print how many), `project-state PATHS` (the plain reducer's time).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import _session

SEEKS = 200


def _peak_mb() -> float:
    with open("/proc/self/status") as status:
        return int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024


# -- child processes ---------------------------------------------------------------------------


async def _first_screen(paths: list[Path]) -> None:
    from agent_tui.tui.replay_app import ReplayApp

    app = ReplayApp(paths)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        while not (screen.cursor.previewing or screen.loaded):
            await asyncio.sleep(0.002)
        # Compose the frame now (pilot.pause would wait for the indexing thread to go idle).
        await pilot._wait_for_screen()
        screen._on_timer_update()
        print("painted", flush=True)


async def _many_first(directory: Path) -> None:
    """Many logs: print "listed" once their list (from the heads) is painted, "complete" once
    the list from heads and tails is."""
    app = _many_app(directory)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        for word, ready in (
            ("listed", lambda: screen.feed.listed),
            ("complete", lambda: _complete(screen)),
        ):
            while not ready():
                await asyncio.sleep(0.002)
            await pilot._wait_for_screen()
            screen._on_timer_update()
            print(word, flush=True)


async def _many_spend(directory: Path) -> None:
    """Many logs: print "complete" once the list from heads and tails is painted, "scanned" once
    every log's spend is known (from the search index) and the list painted with the whole logs' figures."""
    app = _many_app(directory)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        for word, ready in (
            ("complete", lambda: _complete(screen)),
            ("scanned", lambda: _complete(screen) and not screen.feed.partial),
        ):
            while not ready():
                await asyncio.sleep(0.002)
            await pilot._wait_for_screen()
            print(word, flush=True)


def _many_app(directory: Path) -> Any:
    """The replay app over every log of `directory`, opened as `agent-tui replay DIR` opens it:
    the child reading their list is started before the app is imported."""
    from agent_tui.replay.catalog_child import start_listing

    paths = sorted(directory.glob("*.jsonl"), key=lambda p: p.stem)
    listing = start_listing(paths)
    from agent_tui.tui.replay_app import ReplayApp

    return ReplayApp(paths, listing=listing)


def _complete(screen: Any) -> bool:
    """Whether the list on screen was read from the logs' tails too."""
    catalog = screen.feed.catalog
    return catalog is not None and catalog.complete


async def _many_walk(directory: Path, steps: int) -> dict[str, Any]:
    """Many logs: choose `steps` sessions one after another (down the tree), each until its
    timeline is on screen; the peak memory and the most timelines held."""
    app = _many_app(directory)
    held = 0
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        while not (screen.loaded and _complete(screen)):
            await pilot.pause(0.01)
        walked = time.perf_counter()
        for _ in range(steps):
            await pilot.press("down")
            while not _on_chosen(screen):
                await pilot.pause(0.005)
            held = max(held, len(screen.feed.timelines))
        per_step = (time.perf_counter() - walked) / steps
    return {"peak_mb": _peak_mb(), "held": held, "bound": screen.feed.timelines.bound, "step_s": per_step}


def _on_chosen(screen: Any) -> bool:
    selected = screen.session_tree.selected_id
    entry = screen.feed.catalog.entries.get(selected) if selected else None
    return (
        entry is not None
        and entry.path in screen.source.family
        and screen.loaded
        and not screen.cursor.indexing
    )


def _bench_app(directory: Path, project: Path) -> Any:
    """The dashboard on `project` whose sessions directory is `directory` (a scripted model),
    with `reopened`, set once the workbench is ready (`WorkbenchReady`)."""
    from agent_tui.engine.scenario import AgentScript, Step
    from agent_tui.engine.scripted import ScriptedProvider
    from agent_tui.runtime.model_router import ModelChoice
    from agent_tui.tui.app import AgentTuiApp
    from agent_tui.tui.messages import WorkbenchReady

    class BenchApp(AgentTuiApp):
        """The dashboard, telling the benchmark when the workbench is ready."""

        reopened = asyncio.Event()

        def on_workbench_ready(self, message: WorkbenchReady) -> None:
            self.reopened.set()

    provider = ScriptedProvider(agents={"bench": AgentScript(steps=[Step(text=["done"])])})
    models = [ModelChoice("scripted", "bench", build=lambda: provider)]
    project.mkdir(parents=True, exist_ok=True)
    return BenchApp(sessions_dir=directory, project=project, models=models)


async def _workbench_first(directory: Path, project: Path) -> None:
    """The dashboard on a project whose sessions directory holds many logs: print "listed" once
    the tree holds a line for every one of them (from their first lines) and that frame is
    composed, whether or not their last turns are read yet; "ready" once the workbench is ready
    (every log's end read, the unfinished ones reopened, the finished ones' spend scanned)."""
    app = _bench_app(directory, project)
    expected = len(list(directory.glob("*.jsonl")))
    async with app.run_test(size=(120, 40)) as pilot:
        screen: Any = app.screen
        while len(screen.session_tree.visible_ids) < expected:
            await asyncio.sleep(0.002)
        await pilot._wait_for_screen()
        screen._on_timer_update()
        print("listed", flush=True)
        await app.reopened.wait()
        print("ready", flush=True)
        print(json.dumps({"peak_mb": _peak_mb()}), flush=True)


async def _workbench_walk(directory: Path, project: Path, steps: int) -> dict[str, Any]:
    """The dashboard on many logs: once ready, choose `steps` sessions one after another (down
    the tree), each until the engine has read it; the peak memory and the most sessions the
    workbench held read on demand."""
    app = _bench_app(directory, project)
    held = 0
    async with app.run_test(size=(120, 40)) as pilot:
        await app.reopened.wait()
        workbench = app.live.workbench
        tree = app.screen.session_tree
        walked = time.perf_counter()
        chosen = tree.selected_id
        for _ in range(steps):
            while tree.selected_id in (chosen, None):
                await pilot.press("down")
            chosen = tree.selected_id
            while chosen in workbench.listed or chosen not in workbench.opened:
                await pilot.pause(0.005)
            held = max(held, len(workbench.opened))
        per_step = (time.perf_counter() - walked) / steps
    return {"peak_mb": _peak_mb(), "held": held, "bound": workbench.opened.bound, "step_s": per_step}


async def _painted(pilot: Any, act: Any) -> float:
    """Seconds from `act()` to the frame composed: the screen's messages handled, its layout and
    paint done (twice: the detail scrolls after the first refresh). Textual's own update timer,
    at 60 Hz, would add up to 16 ms in a terminal."""
    began = time.perf_counter()
    act()
    screen = pilot.app.screen
    for _ in range(2):
        await pilot._wait_for_screen()
        screen._on_timer_update()
    return time.perf_counter() - began


async def _scrub(paths: list[Path]) -> dict[str, Any]:
    from agent_tui.tui.replay_app import ReplayApp

    app = ReplayApp(paths)
    started = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        while not screen.loaded:
            await pilot.pause(0.02)
        indexed = time.perf_counter() - started
        assert screen.timeline is not None
        total = screen.timeline.total
        rng = random.Random(11)
        seeks: list[float] = []
        steps: list[float] = []
        await pilot.pause()
        for _ in range(SEEKS):
            position = rng.randrange(total)
            seeks.append(await _painted(pilot, partial(screen.cursor.move_to, position)))
            steps.append(await _painted(pilot, partial(screen.cursor.move_to, position + 1)))
            await pilot.pause(0)
    return {"index_s": indexed, "total": total, "seeks": seeks, "steps": steps, "peak_mb": _peak_mb()}


async def _follow(directory: Path, expected: int, seconds: float) -> dict[str, Any]:
    """Follow `directory` (created by the writer later); every ~20 ms, after the screen has
    painted, note how old the newest event on screen is."""
    from agent_tui.tui.replay_app import ReplayApp

    lags: list[float] = []
    app = ReplayApp([], follow=True, watch_dir=directory)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        while not screen.loaded:
            await pilot.pause(0.01)
        print("ready", flush=True)
        deadline = time.monotonic() + seconds + 20
        while screen.position < _written(directory, expected) and time.monotonic() < deadline:
            await pilot.pause(0.02)
            event = screen.cursor.view.event if screen.cursor.view is not None else None
            if event is not None and not _written(directory, 0):
                lags.append(time.time() - _ts_seconds(event.ts))
        seen = screen.position
    return {"lags": lags, "seen": seen, "peak_mb": _peak_mb()}


def written_note(directory: Path) -> Path:
    """Where the benchmark notes how many events a writer into `directory` wrote, once it is done."""
    return directory.with_name(directory.name + ".written")


def _written(directory: Path, otherwise: int) -> int:
    """How many events the writer wrote, once it has finished; else `otherwise`."""
    note = written_note(directory)
    return int(note.read_text() or otherwise) if note.exists() else otherwise


def _bare_follow(directory: Path, expected: int, seconds: float) -> dict[str, Any]:
    """The floor: poll the same files every 50 ms, read what was appended, note the newest ts."""
    print("ready", flush=True)
    offsets: dict[Path, int] = {}
    lags: list[float] = []
    seen = 0
    deadline = time.monotonic() + seconds + 20
    while seen < _written(directory, expected) and time.monotonic() < deadline:
        newest = ""
        for path in directory.glob("*.jsonl") if directory.is_dir() else ():
            size = path.stat().st_size
            start = offsets.get(path, 0)
            if size > start:
                with open(path, "rb") as handle:
                    handle.seek(start)
                    data = handle.read(size - start)
                end = data.rfind(b"\n") + 1
                offsets[path] = start + end
                seen += data.count(b"\n", 0, end)
                if end:
                    last = data[data.rfind(b"\n", 0, end - 1) + 1 : end]
                    newest = max(newest, json.loads(last)["ts"])
        if newest and not _written(directory, 0):
            lags.append(time.time() - _ts_seconds(newest))
        time.sleep(0.05)
    return {"lags": lags, "seen": seen}


def _ts_seconds(ts: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def write_sessions(
    directory: Path, events: int, files: int, *, seed: int = 1, whole_turns: bool = False
) -> list[Path]:
    """`events` events over `files` session logs written side by side (children among them),
    timestamps shared and often tied, as a busy multi-agent run would leave them. With
    `whole_turns`, each log's last turn is written to its end (a history of finished sessions:
    a little over `events` in all)."""

    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    sessions = [_session(random.Random(seed * 1000 + k)) for k in range(files)]
    ids = [f"sess_bench_{k:03d}" for k in range(files)]
    paths = [directory / f"{sid}.jsonl" for sid in ids]
    buffers: list[list[bytes]] = [[] for _ in range(files)]
    sequences = [0] * files
    base_ms = 1_795_000_000_000
    with contextlib.ExitStack() as stack:
        handles = [stack.enter_context(open(path, "wb")) for path in paths]
        for index in range(events):
            k = rng.randrange(files)
            kind, turn_id, payload = next(sessions[k])
            sequences[k] += 1
            if kind == "session.created":
                payload = {"cwd": "/home/dev/project", "client": "bench", "agentName": f"agent-{k}"}
                if k >= 10:
                    payload["parentSessionId"] = ids[k % 10]
            millis = base_ms + index * 37 // files
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + f".{millis % 1000:03d}Z"
            buffers[k].append(_log_line(ids[k], k, sequences[k], ts, kind, turn_id, payload))
            if len(buffers[k]) >= 500:
                handles[k].write(b"".join(buffers[k]))
                buffers[k].clear()
        for k in range(files) if whole_turns else ():
            kind = ""
            while kind != "turn.completed" and sequences[k]:
                kind, turn_id, payload = next(sessions[k])
                sequences[k] += 1
                buffers[k].append(_log_line(ids[k], k, sequences[k], ts, kind, turn_id, payload))
        for handle, buffer in zip(handles, buffers, strict=True):
            handle.write(b"".join(buffer))
    return paths


def _log_line(
    session_id: str, k: int, sequence: int, ts: str, kind: str, turn_id: str | None, payload: dict
) -> bytes:
    """One event as the bytes of its log line (newline included)."""
    import orjson

    line = {
        "v": 1,
        "id": f"evt_{k}_{sequence}",
        "sessionId": session_id,
        "turnId": turn_id,
        "sequence": sequence,
        "ts": ts,
        "type": kind,
        "payload": payload,
    }
    return orjson.dumps(line) + b"\n"


def _write_live(directory: Path, files: int, rate: int, seconds: float) -> int:
    """Append events to `files` logs at `rate` events/s in all for `seconds`; returns how many."""

    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(3)
    sessions = [_session(random.Random(k)) for k in range(files)]
    ids = [f"sess_live_{k:03d}" for k in range(files)]
    fds = [os.open(directory / f"{sid}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) for sid in ids]
    sequences = [0] * files
    written = 0
    tick = 0.01
    started = time.monotonic()
    try:
        while time.monotonic() - started < seconds:
            due = int((time.monotonic() - started + tick) * rate) - written
            now = time.time()
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
            for _ in range(max(0, due)):
                k = rng.randrange(files)
                kind, turn_id, payload = next(sessions[k])
                sequences[k] += 1
                line = _log_line(ids[k], k, sequences[k], ts, kind, turn_id, payload)
                os.write(fds[k], line)  # one write per event, as the engine
                written += 1
            time.sleep(tick)
    finally:
        for fd in fds:
            os.close(fd)
    return written


def main(argv: list[str]) -> None:
    mode, *rest = argv
    if mode == "first-screen":
        asyncio.run(_first_screen([Path(p) for p in rest]))
    elif mode == "many-first":
        asyncio.run(_many_first(Path(rest[0])))
    elif mode == "many-spend":
        asyncio.run(_many_spend(Path(rest[0])))
    elif mode == "workbench-first":
        asyncio.run(_workbench_first(Path(rest[0]), Path(rest[1])))
    elif mode == "workbench-walk":
        result = asyncio.run(_workbench_walk(Path(rest[0]), Path(rest[1]), int(rest[2])))
        print(json.dumps(result), flush=True)
    elif mode == "many-walk":
        print(json.dumps(asyncio.run(_many_walk(Path(rest[0]), int(rest[1])))), flush=True)
    elif mode == "scrub":
        print(json.dumps(asyncio.run(_scrub([Path(p) for p in rest]))), flush=True)
    elif mode == "follow":
        print(json.dumps(asyncio.run(_follow(Path(rest[0]), int(rest[1]), float(rest[2])))), flush=True)
    elif mode == "bare-follow":
        print(json.dumps(_bare_follow(Path(rest[0]), int(rest[1]), float(rest[2]))), flush=True)
    elif mode == "write":
        print(_write_live(Path(rest[0]), int(rest[1]), int(rest[2]), float(rest[3])), flush=True)
    elif mode == "project-state":
        from agent_tui.reducer import project_state
        from agent_tui.replay.sources import replay_files

        started = time.perf_counter()
        project_state(replay_files([Path(p) for p in rest]))
        print(json.dumps({"seconds": time.perf_counter() - started}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
