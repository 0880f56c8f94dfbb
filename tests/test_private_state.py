"""agent-tui's own files and folders, for one user: what holds session content is 0600 in folders
made 0700 whatever the umask, a folder the user made keeps its mode, a file left looser by an
earlier version is tightened when written, and the runtime dir and the private bus's file are
used only when they are this user's and nobody else can write them.

(Another user of the machine, for real, is in test_multiuser.py: it needs root.)
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support_private_state import make_session_content

from agent_tui.bus.local_server import LocalServerError, read_local_server
from agent_tui.private_files import (
    UntrustedStateError,
    make_private_dirs,
    open_private,
    own_folder,
    private_sqlite_file,
    read_trusted,
    write_private,
)
from agent_tui.store import JsonlFileEventStore


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture(params=[0o022, 0o000], ids=["umask-022", "umask-000"])
def loose_umask(request: pytest.FixtureRequest) -> Iterator[int]:
    before = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(before)


class TestPrivateFiles:
    def test_each_folder_made_is_0700_and_one_already_there_keeps_its_mode(
        self, tmp_path: Path, loose_umask: int
    ) -> None:
        chosen = tmp_path / "chosen"
        chosen.mkdir()
        chosen.chmod(0o755)
        make_private_dirs(chosen / "a" / "b" / "c")
        assert [mode(chosen / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3
        assert mode(chosen) == 0o755
        make_private_dirs(chosen)
        assert mode(chosen) == 0o755

    def test_a_file_in_the_way_is_the_os_error(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("x")
        with pytest.raises(NotADirectoryError):
            make_private_dirs(tmp_path / "file" / "below")

    def test_files_are_made_0600_and_an_own_looser_one_is_tightened_when_written(
        self, tmp_path: Path, loose_umask: int
    ) -> None:
        os.close(open_private(tmp_path / "new", os.O_WRONLY | os.O_CREAT))
        write_private(tmp_path / "deep" / "whole", b"x")
        private_sqlite_file(tmp_path / "db" / "index.sqlite3")
        assert [mode(tmp_path / p) for p in ("new", "deep/whole", "db/index.sqlite3")] == [0o600] * 3
        assert [mode(tmp_path / p) for p in ("deep", "db")] == [0o700] * 2
        old = tmp_path / "old.jsonl"
        old.write_text("earlier\n")
        old.chmod(0o644)
        os.close(open_private(old, os.O_RDONLY))
        assert mode(old) == 0o644  # only read: left as it is
        os.close(open_private(old, os.O_WRONLY | os.O_APPEND))
        assert mode(old) == 0o600

    def test_a_link_at_a_files_name_is_not_followed(self, tmp_path: Path) -> None:
        target = tmp_path / "elsewhere"
        target.write_text("not agent-tui's")
        (tmp_path / "link").symlink_to(target)
        with pytest.raises(OSError, match="Too many levels of symbolic links"):
            open_private(tmp_path / "link", os.O_WRONLY | os.O_CREAT)
        assert target.read_text() == "not agent-tui's"

    def test_state_is_read_only_from_a_plain_file_nobody_else_can_write(self, tmp_path: Path) -> None:
        state = tmp_path / "marks.json"
        state.write_bytes(b"{}")
        state.chmod(0o644)
        assert read_trusted(state) == b"{}"
        state.chmod(0o666)
        with pytest.raises(UntrustedStateError, match=r"can be written by others \(mode 0666\)"):
            read_trusted(state)
        (tmp_path / "link").symlink_to(state)
        with pytest.raises(UntrustedStateError, match="is a symbolic link"):
            read_trusted(tmp_path / "link")
        os.mkfifo(tmp_path / "fifo")
        with pytest.raises(UntrustedStateError, match="is not a plain file"):  # and does not block
            read_trusted(tmp_path / "fifo")

    def test_own_folder_makes_0700_tightens_an_own_readable_one_and_refuses_the_rest(
        self, tmp_path: Path, loose_umask: int
    ) -> None:
        assert mode(own_folder(tmp_path / "fresh")) == 0o700
        readable = tmp_path / "readable"
        readable.mkdir()
        readable.chmod(0o755)
        assert mode(own_folder(readable)) == 0o700
        writable = tmp_path / "writable"
        writable.mkdir()
        writable.chmod(0o777)
        with pytest.raises(UntrustedStateError) as refused:
            own_folder(writable)
        assert str(refused.value) == (
            f"{writable} can be written by others (mode 0777): agent-tui does not use it "
            "(remove it, or set XDG_RUNTIME_DIR to a folder of your own)"
        )
        assert mode(writable) == 0o777
        (tmp_path / "link").symlink_to(tmp_path / "fresh")
        with pytest.raises(UntrustedStateError, match="is a symbolic link"):
            own_folder(tmp_path / "link")
        (tmp_path / "file").write_text("")
        with pytest.raises(UntrustedStateError, match="is not a folder"):
            own_folder(tmp_path / "file")

    def test_own_folder_is_refused_in_a_folder_others_can_write_unless_it_is_sticky(
        self, tmp_path: Path
    ) -> None:
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o777)  # anyone could rename our folder away and put theirs in its place
        with pytest.raises(UntrustedStateError, match=f"^{shared} can be written by others"):
            own_folder(shared / "agent-tui")
        assert not (shared / "agent-tui").exists()
        shared.chmod(0o1777)  # as /tmp: nobody renames another's entry
        assert mode(own_folder(shared / "agent-tui")) == 0o700


class TestSessionContent:
    @pytest.mark.anyio
    async def test_everything_kept_of_a_session_is_0600_in_folders_made_0700(
        self, tmp_path: Path, loose_umask: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "base" / "cache"))
        project = tmp_path / "project"
        project.mkdir()
        content = await make_session_content(tmp_path / "base", project)
        try:
            loose = {name: oct(mode(path)) for name, path in content.files.items() if mode(path) != 0o600}
        finally:
            assert content.index is not None
            content.index.close()
        assert loose == {}
        assert len(content.files) == 10
        assert {str(path): oct(mode(path)) for path in content.folders if mode(path) != 0o700} == {}
        assert any(path.name == "blobs" for path in content.folders)

    def test_a_sessions_dir_the_user_chose_keeps_its_mode_and_an_old_log_is_tightened(
        self, tmp_path: Path, loose_umask: int, make_session: object
    ) -> None:
        chosen = tmp_path / "shared-sessions"
        chosen.mkdir()
        chosen.chmod(0o775)
        events = make_session(2)  # type: ignore[operator]
        log = chosen / f"{events[0].session_id}.jsonl"
        log.write_bytes(events[0].to_json() + b"\n")
        log.chmod(0o644)  # as an earlier version left it
        store = JsonlFileEventStore(chosen)
        store.log(events[0].session_id).append(events[1])
        store.close()
        assert mode(chosen) == 0o775
        assert mode(log) == 0o600


def fallback_env(tmp_path: Path) -> dict[str, str]:
    """No `$XDG_RUNTIME_DIR`: the runtime dir is `agent-tui-<uid>` in `$TMPDIR` (`tmp_path/tmp`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_TUI", "XDG_", "NATS"))}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    (tmp_path / "data").mkdir(exist_ok=True)
    config = tmp_path / "config.toml"
    config.write_text("[sandbox]\nenabled = false\n")
    env.update(
        TMPDIR=str(tmp_path / "tmp"), XDG_DATA_HOME=str(tmp_path / "data"), AGENT_TUI_CONFIG=str(config)
    )
    return env


def agent_tui(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def test_each_command_makes_the_folders_an_earlier_version_left_open_0700(tmp_path: Path) -> None:
    env = {**fallback_env(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    data = tmp_path / "data" / "agent-tui"
    old_sessions = data / "projects" / "shop-5d41402abc4b"
    cache = tmp_path / "cache" / "agent-tui" / "imports"
    for folder in (old_sessions, cache):
        folder.mkdir(parents=True)
        folder.chmod(0o755)
    (data).chmod(0o755)
    (cache.parent).chmod(0o755)
    (old_sessions / "sess_old.jsonl").write_text("{}\n")
    (tmp_path / "elsewhere").mkdir()
    said = agent_tui(["sessions", "--sessions-dir", str(tmp_path / "elsewhere")], env)
    assert said.returncode == 0, said.stderr
    assert mode(data) == 0o700 and mode(cache.parent) == 0o700
    assert mode(old_sessions) == 0o755  # below, nothing is changed: the top folder closes it all


class TestRuntimeDir:
    def test_a_planted_link_a_loose_folder_or_a_loose_bus_file_is_refused_with_a_sentence(
        self, tmp_path: Path
    ) -> None:
        env = fallback_env(tmp_path)
        runtime = tmp_path / "tmp" / f"agent-tui-{os.getuid()}"
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "bus.json").write_text(
            json.dumps(
                {
                    "url": "nats://127.0.0.1:4999",
                    "seedFile": "/x/bus.nk",
                    "pid": os.getpid(),
                    "store": "/x",
                    "startedAt": "t",
                }
            )
        )
        runtime.symlink_to(elsewhere)
        said = agent_tui(["attach", "--bus", "local"], env)
        assert said.returncode == 2
        assert said.stderr == (
            f"agent-tui: {runtime} is a symbolic link: agent-tui does not use it "
            "(remove it, or set XDG_RUNTIME_DIR to a folder of your own)\n"
        )
        serve = agent_tui(["serve", "--sessions-dir", str(tmp_path / "s"), "--cwd", str(tmp_path)], env)
        assert serve.returncode == 2
        assert serve.stderr.startswith(f"agent-tui: {runtime} is a symbolic link: agent-tui does not use it")
        runtime.unlink()
        runtime.mkdir()
        runtime.chmod(0o777)
        said = agent_tui(["attach", "--bus", "local"], env)
        assert said.returncode == 2 and f"{runtime} can be written by others (mode 0777)" in said.stderr
        runtime.chmod(0o700)
        record = runtime / "bus.json"
        record.write_text((elsewhere / "bus.json").read_text())
        record.chmod(0o666)
        said = agent_tui(["attach", "--bus", "local"], env)
        assert said.returncode == 2 and f"{record} can be written by others (mode 0666)" in said.stderr
        record.unlink()
        record.symlink_to(elsewhere / "bus.json")
        said = agent_tui(["attach", "--bus", "local"], env)
        assert said.returncode == 2 and f"{record} is a symbolic link" in said.stderr

    def test_reading_the_record_checks_the_file_it_opened(self, tmp_path: Path) -> None:
        folder = tmp_path / "run"
        folder.mkdir(mode=0o700)
        assert read_local_server(folder / "bus.json") is None  # none recorded
        (folder / "bus.json").mkdir()
        with pytest.raises(LocalServerError, match="is not a plain file"):
            read_local_server(folder / "bus.json")


def test_a_folder_swapped_for_a_link_right_after_it_was_made_is_not_chmodded_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a parent others can write (not sticky), another user may rename the folder agent-tui just
    made and put a link in its place before the folder is made 0700: the link's target (here
    the victim's own 0755 folder; for root, any file) keeps its mode, and the link is refused."""
    import agent_tui.private_files as private_files

    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    made = tmp_path / "shared" / "new"
    made.parent.mkdir()
    real_mkdir = os.mkdir

    def mkdir_then_swapped(path: object, mode: int = 0o777) -> None:
        real_mkdir(path, mode)  # type: ignore[arg-type]
        if Path(str(path)) == made:
            os.rename(made, tmp_path / "moved-away")
            os.symlink(target, made)

    monkeypatch.setattr(private_files.os, "mkdir", mkdir_then_swapped)
    with pytest.raises(OSError) as refused:
        try:
            make_private_dirs(made)
        finally:
            assert mode(target) == 0o755  # (before: made 0700 through the link)
    assert refused.value.errno in (errno.ELOOP, errno.ENOTDIR)  # a link, opened without following it
