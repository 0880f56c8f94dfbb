"""The import cache is bounded: past its size, the least recently used entries are dropped first,
never one a replay still reads (in this process or another), and a replay that died leaves
nothing held. Real folders, real locks, real processes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_tui.importers import replay_inputs
from agent_tui.importers.import_cache import (
    BOUND_VARIABLE,
    DEFAULT_BOUND_MB,
    CacheUse,
    bound_bytes,
    cache_lock,
    in_use,
    prune,
    use,
)

FIXTURES = Path(__file__).parent / "fixtures"
KB = 1024


def _entry(root: Path, key: str, size: int, age: float) -> Path:
    """An entry of `size` bytes last used `age` seconds ago."""
    folder = root / key
    folder.mkdir(parents=True)
    (folder / "sess_x.jsonl").write_bytes(b"x" * size)
    (folder / "warnings.txt").write_bytes(b"")
    when = time.time() - age
    os.utime(folder, (when, when))
    return folder


def _entries(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if not p.name.startswith("."))


class TestTheBound:
    @pytest.mark.parametrize(
        ("value", "megabytes"),
        [
            (None, DEFAULT_BOUND_MB),
            ("2", 2),
            ("0.5", 0.5),
            ("abc", DEFAULT_BOUND_MB),
            ("-1", DEFAULT_BOUND_MB),
        ]
        + [("0", DEFAULT_BOUND_MB), ("nan", DEFAULT_BOUND_MB), ("inf", DEFAULT_BOUND_MB)],
    )
    def test_the_bound_comes_from_the_environment_and_a_bad_value_is_the_default(
        self, value: str | None, megabytes: float
    ) -> None:
        env = {} if value is None else {BOUND_VARIABLE: value}
        assert bound_bytes(env) == int(megabytes * 1024 * 1024)

    def test_the_oldest_are_dropped_until_the_rest_fits(self, tmp_path: Path) -> None:
        for key, age in (("a", 400), ("b", 300), ("c", 200), ("d", 100)):
            _entry(tmp_path, key, 10 * KB, age)
        assert prune(tmp_path, 25 * KB) == ["a", "b"]
        assert _entries(tmp_path) == ["c", "d"]
        assert prune(tmp_path, 25 * KB) == []  # within the bound: nothing more

    def test_an_entry_used_again_is_the_newest(self, tmp_path: Path) -> None:
        for key, age in (("a", 400), ("b", 300), ("c", 200)):
            _entry(tmp_path, key, 10 * KB, age)
        use(tmp_path / "a")
        assert prune(tmp_path, 25 * KB) == ["b"]
        assert _entries(tmp_path) == ["a", "c"]

    def test_an_entry_in_use_is_never_dropped_even_the_oldest(self, tmp_path: Path) -> None:
        for key, age in (("a", 400), ("b", 300), ("c", 200)):
            _entry(tmp_path, key, 10 * KB, age)
        reading = CacheUse(tmp_path)
        with cache_lock(tmp_path, exclusive=False):
            reading.add("a")
        assert prune(tmp_path, 15 * KB) == ["b", "c"]
        assert _entries(tmp_path) == ["a"]  # over the bound while it is read
        reading.close()
        assert prune(tmp_path, 5 * KB) == ["a"]

    def test_an_entry_held_by_another_process_is_kept_and_a_dead_ones_is_let_go(self, tmp_path: Path) -> None:
        for key, age in (("a", 400), ("b", 300)):
            _entry(tmp_path, key, 10 * KB, age)
        script = (
            "import sys\n"
            "from pathlib import Path\n"
            "from agent_tui.importers.import_cache import CacheUse, cache_lock\n"
            "use = CacheUse(Path(sys.argv[1]))\n"
            "with cache_lock(use.root, exclusive=False):\n"
            "    use.add('a')\n"
            "print('held', flush=True)\n"
            "sys.stdin.readline()\n"  # hold it until told, then exit without closing
        )
        holder = subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
            assert in_use(tmp_path) == {"a"}
            assert prune(tmp_path, 5 * KB) == ["b"]
            assert _entries(tmp_path) == ["a"]
        finally:
            assert holder.stdin is not None
            holder.stdin.write(b"\n")
            holder.stdin.close()
            holder.wait(timeout=30)
        assert in_use(tmp_path) == set()  # its file is removed: its replay is gone
        assert list((tmp_path / ".users").iterdir()) == []
        assert prune(tmp_path, 5 * KB) == ["a"]

    def test_leftovers_of_crashed_conversions_and_prunes_go(self, tmp_path: Path) -> None:
        _entry(tmp_path, "a", KB, 10)
        fresh = _entry(tmp_path, "b.x1", KB, 60)  # a conversion being written
        stale = _entry(tmp_path, "c.x2", KB, 3 * 24 * 3600)  # one that crashed days ago
        half = _entry(tmp_path, ".dropping-d.1234", KB, 10)  # a prune killed mid-delete
        prune(tmp_path, 100 * KB)
        assert fresh.exists() and not stale.exists() and not half.exists()
        assert _entries(tmp_path) == ["a", "b.x1"]

    def test_its_lock_and_users_files_are_the_users_alone(self, tmp_path: Path) -> None:
        reading = CacheUse(tmp_path / "cache")
        with cache_lock(reading.root, exclusive=False):
            reading.add("a")
        users = tmp_path / "cache" / ".users"
        [held] = list(users.iterdir())
        for path, mode in ((tmp_path / "cache", 0o700), (users, 0o700), (held, 0o600)):
            assert stat.S_IMODE(path.stat().st_mode) == mode, path
        assert stat.S_IMODE((tmp_path / "cache" / ".lock").stat().st_mode) == 0o600
        reading.close()
        assert not held.exists()


class TestReplays:
    def test_replays_keep_the_cache_bounded_and_never_lose_what_an_open_one_reads(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        logs = []
        for folder in sorted((FIXTURES / "codex").iterdir()) + sorted((FIXTURES / "claude_code").iterdir()):
            copy = tmp_path / "logs" / folder.name
            shutil.copytree(folder, copy)
            logs.append(copy)
        root = tmp_path / "cache" / "agent-tui" / "imports"
        monkeypatch.setenv(BOUND_VARIABLE, str(1 / 1024))  # 1 KiB: less than any one entry
        first = replay_inputs([logs[0]])
        try:
            held = set(first.files)
            last: set[str] = set()
            for log in logs[1:]:
                with replay_inputs([log]) as later:
                    assert later.files and all(path.exists() for path in later.files)
                    last = {path.parent.name for path in later.files}
                assert all(path.exists() for path in held)  # the open replay's entries stay
            # Each replay's prune dropped the entries nobody read: the open replay's stay, and
            # the last replay's (its prune ran while it held them).
            assert set(_entries(root)) == {path.parent.name for path in held} | last
            assert len(_entries(root)) < len(logs)
        finally:
            first.close()
        with replay_inputs([logs[1]]) as again:  # dropped before: converted again; the rest is free
            assert again.files
            assert _entries(root) == sorted({path.parent.name for path in again.files})

    def test_a_replay_of_a_cached_log_reads_the_cache_and_marks_it_used(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        log = tmp_path / "log"
        shutil.copytree(FIXTURES / "codex" / "mid-0.39", log)
        with replay_inputs([log]) as first:
            files = first.files
        [entry] = {path.parent for path in files}
        os.utime(entry, (1, 1))
        with replay_inputs([log]) as second:
            assert second.files == files
        assert entry.stat().st_mtime > 1
