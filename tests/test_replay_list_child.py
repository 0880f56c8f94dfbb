"""The list of many logs read by a child process (`CatalogChild`): the same list, problems and
state as read in the app's own process; our package and its dependencies only, whatever the
working directory holds; never outliving its owner; and a list all the same when the child
cannot give one.

Real logs on disk (some torn, corrupt, headless, unreadable, a file name with a newline), real
child processes.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_logs import SessionLog, turn_events
from support_workbench import wait_for

import agent_tui
from agent_tui.replay import LIST_FROM, Catalog, CatalogChild, read_catalog, start_listing
from agent_tui.replay.catalog_child import _CHILD_CODE
from agent_tui.tui.replay_app import ReplayApp

LOGS = LIST_FROM + 8
SHAPES = ("tool", "plain", "failed", "denied", "compress")


def _history(directory: Path) -> list[Path]:
    """`LOGS` logs of a few turns (sub-agents among them, some cut mid-turn), and one each torn,
    corrupt near its end, headless, empty, unreadable, and named with a newline."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(LOGS):
        sid = f"sess_{k:04d}" if k != 5 else "sess_odd\nname"
        log = SessionLog(sid)
        log.created(k * 10, parent="sess_0000" if k in (1, 2) else None, name=f"agent-{k}")
        turns = 1 + k % 3
        for turn in range(1, turns + 1):
            events = turn_events(turn, SHAPES[(k + turn) % len(SHAPES)])
            if k % 7 == 0 and turn == turns:
                events = events[:4]  # cut mid-turn: still running at its log's end
            for kind, payload in events:
                log.add(kind, f"turn_{turn}", payload, k * 10 + turn)
        paths.append(log.write(directory))
    with open(paths[10], "ab") as handle:
        handle.write(b'{"v":1,"id":"evt_torn","seq')
    lines = paths[11].read_bytes().splitlines(keepends=True)
    lines.insert(len(lines) - 1, b"this is not json\n")
    paths[11].write_bytes(b"".join(lines))
    paths[12].write_bytes(b"garbage\n")
    paths[13].write_bytes(b"")
    os.chmod(paths[14], 0)
    return sorted(paths, key=lambda p: p.stem)


@pytest.fixture
def history(tmp_path: Path) -> Iterator[list[Path]]:
    paths = _history(tmp_path / "sessions")
    yield paths
    for path in paths:
        os.chmod(path, 0o600)


def _same_list(got: Catalog, expected: Catalog) -> None:
    """The same list; from the child, without its turns' texts until each session is made
    whole (`Catalog.whole`), then the same state."""
    assert got.complete and expected.complete
    assert got.entries == expected.entries
    if got.light:
        assert got.light == {sid for sid, view in expected.state.sessions.items() if view.turns}
        assert got.state == pickle.loads(pickle.dumps(expected)).lightened().state
        assert got.state != expected.state  # (the texts are left out indeed)
        for sid in sorted(got.light):
            got.whole(sid)
        assert not got.light
    assert got.state == expected.state
    assert got.problems() == expected.problems()
    assert got.marks() == expected.marks()
    assert (
        got.state.children("sess_0000") == expected.state.children("sess_0000") == ["sess_0001", "sess_0002"]
    )
    assert got.state._pending.keys() == expected.state._pending.keys()


def test_the_child_lists_the_logs_as_this_process_reads_them(history: list[Path]) -> None:
    with CatalogChild(history) as child:
        got = child.result()
    assert got is not None
    expected = read_catalog(history)
    _same_list(got, expected)
    marks = got.marks()
    assert {marks["sess_0010"], marks["sess_0011"]} == {"✗ torn tail", "✗ corrupt tail"}
    assert "sess_odd\nname" in got.state.sessions  # the paths reach the child whole
    if os.geteuid() != 0:  # root reads a file whatever its mode
        assert got.entries["sess_0014"].problem == f"{history[14]}: unreadable: Permission denied"


def test_the_child_never_imports_from_the_working_directory(
    history: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hostile repository the replay is started in: modules named as the child's imports.
    hostile = tmp_path / "repo"
    hostile.mkdir()
    marker = tmp_path / "pwned"
    for name in ("orjson", "pydantic", "agent_tui"):
        (hostile / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(hostile)
    with CatalogChild(history) as child:
        got = child.result()
    assert not marker.exists()
    assert got is not None
    _same_list(got, read_catalog(history))


def test_an_installed_package_s_directory_is_not_put_before_the_standard_library(
    history: list[Path], tmp_path: Path
) -> None:
    # Installed, the package's directory (site-packages) is on the path after the standard
    # library's; a stray module there named as a standard one must not shadow it in the child.
    site = tmp_path / "site"
    site.mkdir()
    (site / "agent_tui").symlink_to(Path(agent_tui.__file__).parent)
    marker = tmp_path / "pwned"
    (site / "pickle.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    code = f"import sys; sys.path.append({str(site)!r}); exec({_CHILD_CODE!r})"
    names = b"\0".join(os.fsencode(path) for path in history)
    done = subprocess.run(
        [sys.executable, "-P", "-c", code, str(site)], input=names, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert not marker.exists()
    _same_list(pickle.loads(done.stdout), read_catalog(history))


def test_closing_a_running_child_kills_and_reaps_it(history: list[Path]) -> None:
    child = CatalogChild(history)
    # Just started: its interpreter cannot have read, listed and written the logs yet.
    assert child.running
    child.close()
    assert not child.running
    process = child._process
    assert process is not None and process.returncode == -signal.SIGKILL
    assert child.result() is None  # closed: the caller reads the tails itself
    child.close()  # twice is harmless


def test_a_few_logs_start_no_child(history: list[Path]) -> None:
    assert start_listing(history[:LIST_FROM]) is None
    listing = start_listing(history)
    assert listing is not None
    listing.close()


@pytest.mark.anyio
@pytest.mark.parametrize("killed_first", [False, True], ids=["the child's list", "read here"])
async def test_the_screen_lists_the_logs_from_the_child_or_by_itself(
    history: list[Path], killed_first: bool
) -> None:
    # The child's list is taken and the child ended; a child killed before it wrote anything
    # (as one that could not start or failed) leaves the screen to read the tails itself.
    listing = CatalogChild(history)
    if killed_first:
        listing.close()
    app = ReplayApp(history, listing=listing)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await wait_for(
            pilot, lambda: screen.feed.catalog is not None and screen.feed.catalog.complete, "the list", 30
        )
        catalog = screen.feed.catalog
        assert catalog is not None
        assert bool(catalog.light) is not killed_first  # the child's leaves the texts out
        _same_list(catalog, read_catalog(history))
        assert screen.session_tree.end_marks.keys() >= {"sess_0010", "sess_0011"}
    assert not listing.running


@pytest.mark.anyio
async def test_a_session_shown_from_the_child_s_list_is_shown_whole(history: list[Path]) -> None:
    # The family's timeline held at its start: the detail shows the selected session from the
    # list, its turns' texts (which the child left out) read again from its log.
    expected = read_catalog(history)
    app = ReplayApp(history, listing=CatalogChild(history), pause_indexing_after=1)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await wait_for(
            pilot, lambda: screen.feed.catalog is not None and screen.feed.catalog.complete, "the list", 30
        )
        catalog = screen.feed.catalog
        assert catalog is not None and catalog.light
        for _ in range(3):
            await pilot.press("down")
            await pilot.pause()
            selected = screen.session_tree.selected_id
            assert selected is not None and selected not in catalog.light
            assert screen.state.sessions[selected] is catalog.state.sessions[selected]
            assert catalog.state.sessions[selected] == expected.state.sessions[selected]
        assert len(catalog.light) > len(history) // 2  # the others are left as they came


@pytest.mark.anyio
async def test_the_screen_ends_a_child_still_reading_when_it_closes(tmp_path: Path) -> None:
    # Many logs, and the app left as soon as their heads are listed: their child is still
    # reading (a fresh interpreter, thousands of tails) and is ended with the screen.
    directory = tmp_path / "many"
    directory.mkdir()
    paths = []
    for k in range(3_000):
        log = SessionLog(f"sess_{k:04d}")
        log.created(k, name=f"agent-{k}")
        for kind, payload in turn_events(1, "tool"):
            log.add(kind, "turn_1", payload, k + 1)
        paths.append(log.write(directory))
    app = ReplayApp(paths)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await wait_for(pilot, lambda: screen.feed.listed, "the heads", 30)
        listing = screen.feed._listing
        assert listing is not None and listing.paths == tuple(paths)
        was_running = listing.running
    assert not listing.running
    process = listing._process
    assert process is not None and process.returncode is not None
    if was_running:
        assert process.returncode == -signal.SIGKILL
