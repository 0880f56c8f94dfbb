"""Another user of the same machine, for real: a second Unix user (`atui-mallory`, made here with
useradd) who gets to the temporary directory first, runs a nats-server of their own, and tries
to read what agent-tui keeps. These tests need root (to make the user and run processes as it);
run them with `-m multiuser` (a pass of its own in CI). Not run as root, they fail and say so.

The victim is the user running the tests (root in CI). Root reads every file whatever its mode,
so root is the hardest victim for the trust checks (only ownership protects it: a file of
mallory's that root could read must still not be used); the modes are checked by mallory, who
is not root, trying to open what the victim's agent-tui made.
"""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import orjson
import pytest
from support_private_state import make_session_content

from agent_tui.runtime.session_dirs import mark_closed

pytestmark = pytest.mark.multiuser

MALLORY = "atui-mallory"
NEEDS_ROOT = (
    "the multiuser tests need root (they add the user atui-mallory and run processes as it): "
    "run `.venv/bin/python -m pytest -m multiuser` as root"
)


@dataclass(frozen=True)
class Mallory:
    """The other user: runs programs as itself, with nothing of the victim's environment."""

    uid: int
    gid: int

    def run(self, args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # type: ignore[call-overload]
            args,
            user=self.uid,
            group=self.gid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin", "HOME": "/"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            **kwargs,
        )

    def python(self, code: str, *args: str) -> subprocess.CompletedProcess[str]:
        """The system's Python as mallory (the victim's checkout may be in a folder mallory cannot enter)."""
        return self.run(["/usr/bin/python3", "-I", "-c", code, *args])

    def cannot_open(self, paths: list[Path]) -> dict[str, str]:
        """What mallory got for opening each file (reading) or listing each folder: the class of
        the exception, or `opened`."""
        code = (
            "import json, os, sys\n"
            "got = {}\n"
            "for p in sys.argv[1:]:\n"
            "    try:\n"
            "        os.listdir(p) if os.path.isdir(p) else open(p, 'rb').close()\n"
            "        got[p] = 'opened'\n"
            "    except OSError as e:\n"
            "        got[p] = type(e).__name__\n"
            "print(json.dumps(got))\n"
        )
        said = self.python(code, *map(str, paths))
        assert said.returncode == 0, said.stderr
        return dict(json.loads(said.stdout))


def _user(name: str) -> Mallory:
    """The user `name`, made once (test processes running side by side take turns: a lock)."""
    fd = os.open(
        Path(tempfile.gettempdir()) / "atui-multiuser-useradd.lock",
        os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW,
        0o600,
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            found = pwd.getpwnam(name)
        except KeyError:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                check=True,
                capture_output=True,
            )
            found = pwd.getpwnam(name)
    finally:
        os.close(fd)
    return Mallory(found.pw_uid, found.pw_gid)


def other_user() -> Mallory:
    """Mallory, made when missing; the test fails (in its own body, so it counts as failed, not as
    an error of a fixture) when it does not run as root."""
    if os.geteuid() != 0:
        pytest.fail(NEEDS_ROOT, pytrace=False)
    return _user(MALLORY)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A temporary directory as /tmp is: everyone may create in it, sticky."""
    folder = Path(tempfile.mkdtemp(prefix="atui-shared-", dir="/tmp"))
    folder.chmod(0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def victim_env(home: Path, shared: Path) -> dict[str, str]:
    """The victim's environment: no `$XDG_RUNTIME_DIR` (su, cron, a container), `$TMPDIR` the shared one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_TUI", "XDG_", "NATS"))}
    (home / "data").mkdir(parents=True, exist_ok=True, mode=0o700)
    config = home / "config.toml"
    config.write_text("[sandbox]\nenabled = false\n")
    env.update(
        TMPDIR=str(shared), XDG_DATA_HOME=str(home / "data"), AGENT_TUI_CONFIG=str(config), HOME=str(home)
    )
    return env


def agent_tui(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=90,
        check=False,
    )


class MalloryServer:
    """A nats-server that mallory runs as mallory, with a token of theirs and a monitoring port
    (which counts every connection it ever took)."""

    def __init__(self, mallory: Mallory, home: Path) -> None:
        binary = Path(sys.executable).parent / "nats-server"
        if not binary.is_file():
            binary = Path(shutil.which("nats-server") or "nats-server")
        home.mkdir(mode=0o755)
        shutil.copy(binary, home / "nats-server")
        (home / "nats-server").chmod(0o755)
        ports = home / "ports"
        ports.mkdir()
        os.chown(ports, mallory.uid, mallory.gid)
        config = home / "nats.conf"
        config.write_text(
            'listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\nauthorization { token: "mallory-token" }\n'
            f"ports_file_dir: {json.dumps(str(ports))}\n"
        )
        config.chmod(0o644)
        self.process = subprocess.Popen(
            [str(home / "nats-server"), "-c", str(config)],
            user=mallory.uid,
            group=mallory.gid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            urls = self._ports(ports)
        except BaseException:
            self.__exit__()
            raise
        self.url = urls["nats"][0]
        self.monitor = urls["monitoring"][0]

    def _ports(self, ports: Path) -> dict[str, list[str]]:
        deadline = time.monotonic() + 20
        urls: dict[str, list[str]] = {}
        while not urls.get("nats") or not urls.get("monitoring"):
            assert self.process.poll() is None and time.monotonic() < deadline, (
                "mallory's nats-server did not start"
            )
            for found in ports.glob("*.ports"):
                try:
                    urls = json.loads(found.read_text())
                except ValueError:
                    continue
            time.sleep(0.02)  # a starting server: nothing to wait on but its ports file
        return urls

    def record(self) -> bytes:
        """A `bus.json` as agent-tui writes it, pointing at this server."""
        return orjson.dumps(
            {
                "url": self.url,
                "seedFile": "/x/bus.nk",
                "pid": self.process.pid,
                "store": "/x",
                "startedAt": "now",
            }
        )

    def connections_taken(self) -> int:
        with urllib.request.urlopen(f"{self.monitor}/varz", timeout=10) as answer:
            return int(json.load(answer)["total_connections"])

    def __enter__(self) -> MalloryServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


def plant(mallory: Mallory, shared: Path, how: str, record: bytes) -> Path:
    """Mallory makes the victim's runtime-dir fallback first, `how`: as a folder of theirs (0755 or
    0777) holding a bus.json, or as a link to such a folder."""
    fallback = shared / f"agent-tui-{os.getuid()}"
    code = (
        "import os, sys\n"
        "fallback, how, record = sys.argv[1], sys.argv[2], sys.argv[3].encode()\n"
        "folder = fallback if how != 'link' else fallback + '.theirs'\n"
        "os.mkdir(folder)\n"
        "os.chmod(folder, 0o777 if how == 'open-folder' else 0o755)\n"
        "fd = os.open(os.path.join(folder, 'bus.json'), os.O_WRONLY | os.O_CREAT, 0o644)\n"
        "os.write(fd, record); os.close(fd)\n"
        "if how == 'link': os.symlink(folder, fallback)\n"
    )
    said = mallory.python(code, str(fallback), how, record.decode())
    assert said.returncode == 0, said.stderr
    assert os.lstat(fallback).st_uid == mallory.uid
    return fallback


REASONS = {
    "folder": "belongs to another user",
    "open-folder": "belongs to another user",
    "link": "is a symbolic link",
}


@pytest.mark.parametrize("how", sorted(REASONS))
def test_a_runtime_dir_fallback_another_user_made_first_is_refused_and_their_server_never_reached(
    shared_tmp: Path, tmp_path: Path, how: str
) -> None:
    mallory = other_user()
    with MalloryServer(mallory, shared_tmp / "mallory-home") as mallory_server:
        refused_everywhere(mallory, mallory_server, shared_tmp, tmp_path, how)


def refused_everywhere(
    mallory: Mallory, mallory_server: MalloryServer, shared_tmp: Path, tmp_path: Path, how: str
) -> None:
    fallback = plant(mallory, shared_tmp, how, mallory_server.record())
    env = victim_env(tmp_path / "victim", shared_tmp)
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"sessions": [{"prompt": "-", "steps": [{"text": ["Hi."]}]}]}))
    sessions = tmp_path / "sessions"
    runs = {
        "attach": agent_tui(["attach", "--bus", "local"], env),
        "serve": agent_tui(["serve", "--sessions-dir", str(sessions), "--cwd", str(tmp_path)], env),
        "run --bus local": agent_tui(
            ["run", str(scenario), "--sessions-dir", str(sessions), "--bus", "local"], env
        ),
        "web": agent_tui(["web", "--port", "0"], env),
    }
    for name, said in runs.items():
        assert said.returncode == 2, (name, said.stderr)
        assert said.stderr.startswith(f"agent-tui: {fallback} {REASONS[how]}"), (name, said.stderr)
        assert said.stderr.rstrip().endswith(
            "agent-tui does not use it (remove it, or set XDG_RUNTIME_DIR to a folder of your own)"
        ), (name, said.stderr)
        assert "mallory-token" not in said.stderr
    assert mallory_server.connections_taken() == 0
    assert not (
        tmp_path / "victim" / "data" / "agent-tui" / "bus"
    ).exists()  # no server of ours was started either
    if how == "link":  # nothing of the victim's went into mallory's folder
        assert sorted(os.listdir(f"{fallback}.theirs")) == ["bus.json"]


def test_a_runtime_dir_in_another_users_xdg_runtime_dir_is_refused(shared_tmp: Path, tmp_path: Path) -> None:
    """`su` keeps the first user's `$XDG_RUNTIME_DIR`: agent-tui's folder there is not ours."""
    mallory = other_user()
    with MalloryServer(mallory, shared_tmp / "mallory-home") as mallory_server:
        refused_in_their_runtime_dir(mallory, mallory_server, shared_tmp, tmp_path)


def refused_in_their_runtime_dir(
    mallory: Mallory, mallory_server: MalloryServer, shared_tmp: Path, tmp_path: Path
) -> None:
    theirs = shared_tmp / "run-user-mallory"
    said = mallory.python(
        "import os, sys\nos.makedirs(sys.argv[1] + '/agent-tui', 0o700)\n"
        "open(sys.argv[1] + '/agent-tui/bus.json', 'wb').write(sys.argv[2].encode())\n",
        str(theirs),
        mallory_server.record().decode(),
    )
    assert said.returncode == 0, said.stderr
    env = {**victim_env(tmp_path / "victim", shared_tmp), "XDG_RUNTIME_DIR": str(theirs)}
    said = agent_tui(["attach", "--bus", "local"], env)
    assert said.returncode == 2
    assert said.stderr.startswith(
        f"agent-tui: {theirs / 'agent-tui'} belongs to another user (uid {mallory.uid})"
    )
    assert mallory_server.connections_taken() == 0
    # With no agent-tui folder there yet, the folder that would hold it is refused: its owner
    # could swap ours for theirs after the check.
    shutil.rmtree(theirs / "agent-tui")
    said = agent_tui(["serve", "--sessions-dir", str(tmp_path / "s"), "--cwd", str(tmp_path)], env)
    assert said.returncode == 2
    assert said.stderr.startswith(f"agent-tui: {theirs} belongs to another user (uid {mallory.uid})")
    assert not (theirs / "agent-tui").exists()


def test_a_free_fallback_is_made_0700_and_nothing_in_it_opens_for_another_user(
    shared_tmp: Path, tmp_path: Path
) -> None:
    mallory = other_user()
    env = victim_env(tmp_path / "victim", shared_tmp)
    fallback = shared_tmp / f"agent-tui-{os.getuid()}"
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_tui",
            "serve",
            "--sessions-dir",
            str(tmp_path / "s"),
            "--cwd",
            str(tmp_path),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stderr is not None
        seen = []
        for line in serve.stderr:
            seen.append(line)
            if " serves " in line:
                break
        else:
            raise AssertionError(f"serve ended ({serve.wait()}): {seen}")
        info = os.lstat(fallback)
        assert (info.st_uid, stat.S_IMODE(info.st_mode), stat.S_ISDIR(info.st_mode)) == (
            os.getuid(),
            0o700,
            True,
        )
        inside = sorted(fallback.iterdir())
        names = {path.name for path in inside}
        assert {"bus.json", "bus.nk", "nats-server.conf", "nats-server.log"} <= names
        files = [path for path in inside if path.is_file()]
        assert {path.name: oct(stat.S_IMODE(path.stat().st_mode)) for path in files} == {
            path.name: "0o600" for path in files
        }
        store = tmp_path / "victim" / "data" / "agent-tui" / "bus"
        assert stat.S_IMODE(store.stat().st_mode) == 0o700
        got = mallory.cannot_open([fallback, *files, store])
        assert got == {str(path): "PermissionError" for path in [fallback, *files, store]}
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
        if (fallback / "bus.json").exists():  # the private server outlives serve: ended here
            os.kill(json.loads((fallback / "bus.json").read_text())["pid"], signal.SIGTERM)


@pytest.mark.anyio
async def test_another_user_cannot_open_anything_agent_tui_keeps_of_a_session(
    shared_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mallory = other_user()
    base = shared_tmp / "victim-home"  # mallory may enter it: only agent-tui's own modes protect
    base.mkdir(mode=0o755)
    project = shared_tmp / "project"
    project.mkdir(mode=0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
    before = os.umask(0o022)
    try:
        content = await make_session_content(base, project)
    finally:
        os.umask(before)
    try:
        paths = [*content.files.values(), *content.folders]
        got = mallory.cannot_open(paths)
    finally:
        assert content.index is not None
        content.index.close()
    assert got == {str(path): "PermissionError" for path in paths}
    assert len(content.files) == 10


def test_a_sessions_dir_the_user_chose_keeps_its_mode_and_its_logs_are_theirs_alone(
    shared_tmp: Path, tmp_path: Path
) -> None:
    mallory = other_user()
    chosen = shared_tmp / "team-sessions"
    chosen.mkdir()
    chosen.chmod(0o755)
    scenario = tmp_path / "scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "sessions": [{"prompt": "-", "steps": [{"text": ["Done."]}]}],
                "policy": {"default": "allow"},
            }
        )
    )
    env = victim_env(tmp_path / "victim", shared_tmp)
    said = subprocess.run(
        [sys.executable, "-m", "agent_tui", "run", str(scenario), "--sessions-dir", str(chosen), "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
        umask=0o022,
    )
    assert said.returncode == 0, said.stderr
    logs = sorted(chosen.glob("*.jsonl"))
    assert logs
    assert stat.S_IMODE(chosen.stat().st_mode) == 0o755
    got = mallory.cannot_open([chosen, *logs])
    assert got == {str(chosen): "opened", **{str(log): "PermissionError" for log in logs}}


def test_a_file_another_user_planted_in_a_shared_sessions_dir_is_not_written(
    shared_tmp: Path, tmp_path: Path
) -> None:
    """A sessions dir others can write (the user's choice): a `closed.txt` mallory put there
    first, readable by mallory, gets none of the victim's session ids."""
    mallory = other_user()
    chosen = shared_tmp / "open-sessions"
    chosen.mkdir()
    chosen.chmod(0o1777)
    planted = chosen / "closed.txt"
    said = mallory.python(
        "import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o666)\nos.fchmod(fd, 0o666)\n",
        str(planted),
    )
    assert said.returncode == 0, said.stderr
    with pytest.raises(PermissionError, match=rf"it belongs to another user \(uid {mallory.uid}\)"):
        mark_closed(chosen, ["sess_secret1234"])
    assert planted.read_text() == ""
    assert stat.S_IMODE(chosen.stat().st_mode) == 0o1777


@pytest.mark.parametrize("reading", [True, False], ids=["read", "unread"])
def test_a_fifo_another_user_planted_in_a_shared_sessions_dir_is_not_written_nor_waited_on(
    shared_tmp: Path, reading: bool
) -> None:
    """A FIFO of mallory's at `closed.txt` in a shared sessions dir: read by mallory, it gets none of
    the victim's session ids (only a plain file of another user's was refused); read by nobody,
    the victim is told at once instead of waiting for a reader forever."""
    mallory = other_user()
    chosen = shared_tmp / "open-sessions"
    chosen.mkdir()
    chosen.chmod(0o1777)
    planted = chosen / "closed.txt"
    said = mallory.python("import os, sys\nos.mkfifo(sys.argv[1], 0o666)\n", str(planted))
    assert said.returncode == 0, said.stderr
    if not reading:
        code = (
            "import errno, sys\nfrom pathlib import Path\nfrom agent_tui.runtime.session_dirs import mark_closed\n"
            "try:\n    mark_closed(Path(sys.argv[1]), ['sess_secret1234'])\nexcept OSError as e:\n"
            "    print(errno.errorcode[e.errno])\n"
        )
        told = subprocess.run(
            [sys.executable, "-c", code, str(chosen)], capture_output=True, text=True, timeout=60, check=False
        )
        assert (told.returncode, told.stdout) == (0, "ENXIO\n"), told.stderr  # no reader: said at once
        return
    reader = subprocess.Popen(
        [
            "/usr/bin/python3",
            "-I",
            "-c",
            "import os, sys\nfd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)\nprint('ready', flush=True)\n"
            "sys.stdin.read()\nprint(repr(os.read(fd, 4096)))\n",
            str(planted),
        ],
        user=mallory.uid,
        group=mallory.gid,
        extra_groups=[],
        env={"PATH": "/usr/bin:/bin"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None
        assert reader.stdout.readline() == "ready\n"
        with pytest.raises(PermissionError, match=rf"it belongs to another user \(uid {mallory.uid}\)"):
            mark_closed(chosen, ["sess_secret1234"])
    finally:
        got, _ = reader.communicate("", timeout=60)
    assert got == "b''\n"


def test_fifos_another_user_planted_in_a_shared_sessions_dir_do_not_hang_the_listing(
    shared_tmp: Path, tmp_path: Path
) -> None:
    """FIFOs of mallory's at `closed.txt` and at a log's name in a shared sessions dir, which no one
    ever writes: the listing reads neither (it waited for a writer forever before) and says what
    the planted log is."""
    mallory = other_user()
    chosen = shared_tmp / "open-sessions"
    chosen.mkdir()
    chosen.chmod(0o1777)
    said = mallory.python(
        "import os, sys\nfor name in sys.argv[2:]: os.mkfifo(os.path.join(sys.argv[1], name), 0o666)\n",
        str(chosen),
        "closed.txt",
        "sess_planted.jsonl",
    )
    assert said.returncode == 0, said.stderr
    listed = agent_tui(
        ["sessions", "--sessions-dir", str(chosen)], victim_env(tmp_path / "victim", shared_tmp)
    )
    assert listed.returncode == 0, listed.stderr
    assert "sess_planted" in listed.stdout and "not a plain file" in listed.stdout


def test_a_recorded_server_whose_pid_another_user_now_has_is_not_ours(
    shared_tmp: Path, tmp_path: Path
) -> None:
    """The victim's private server died; its pid and its port are now mallory's (a nats-server of
    theirs). The record is the victim's own, yet it does not count as running: nothing connects
    to mallory's server with the victim's token, and stopping the private bus does not signal
    mallory's process (root may signal anyone)."""
    mallory = other_user()
    with MalloryServer(mallory, shared_tmp / "mallory-home") as mallory_server:
        record = orjson.loads(mallory_server.record())
        record["token"] = "victim-token"
        code = (
            "import sys\nfrom agent_tui.bus import local_server as s\n"
            "from agent_tui.private_files import write_private\n"
            "s.private_runtime_dir()\nwrite_private(s.local_server_file(), sys.argv[1].encode())\n"
            "print(s.running_local_server(), s.stop_local_server())\n"
        )
        said = subprocess.run(
            [sys.executable, "-c", code, orjson.dumps(record).decode()],
            env=victim_env(tmp_path / "victim", shared_tmp),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (said.returncode, said.stdout) == (0, "None False\n"), said.stderr
        assert mallory_server.process.poll() is None
        assert mallory_server.connections_taken() == 0


def test_a_log_swapped_for_a_fifo_after_it_was_listed_does_not_hang_the_spend(
    shared_tmp: Path, tmp_path: Path
) -> None:
    """Mallory's log in a shared sessions dir, listed as a plain file, is a FIFO by the time the
    spend is read (mallory may rename their own entries in a sticky folder): it is left out."""
    mallory = other_user()
    chosen = shared_tmp / "open-sessions"
    chosen.mkdir()
    chosen.chmod(0o1777)
    log = chosen / "sess_swapped.jsonl"
    said = mallory.python("import os, sys\nos.mkfifo(sys.argv[1], 0o666)\n", str(log))
    assert said.returncode == 0, said.stderr
    code = (
        "import sys\nfrom pathlib import Path\nfrom agent_tui.search import logs_spend\n"
        "print(logs_spend([Path(sys.argv[1])], Path(sys.argv[2])))\n"
    )
    told = subprocess.run(
        [sys.executable, "-c", code, str(log), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (told.returncode, told.stdout) == (0, "{}\n"), told.stderr


def test_a_runtime_dir_in_a_sticky_folder_another_user_owns_is_refused(
    shared_tmp: Path, tmp_path: Path
) -> None:
    """`$XDG_RUNTIME_DIR` (or `$TMPDIR`) naming a folder of mallory's that is sticky and open to all,
    as /tmp is: unlike /tmp's owner, mallory may rename the victim's folder in it and put theirs
    there after the check, so it is refused as mallory's 0700 folder is."""
    mallory = other_user()
    theirs = shared_tmp / "mallory-sticky"
    said = mallory.python(
        "import os, sys\nos.mkdir(sys.argv[1])\nos.chmod(sys.argv[1], 0o1777)\n", str(theirs)
    )
    assert said.returncode == 0, said.stderr
    env = {**victim_env(tmp_path / "victim", shared_tmp), "XDG_RUNTIME_DIR": str(theirs)}
    said = agent_tui(["serve", "--sessions-dir", str(tmp_path / "s"), "--cwd", str(tmp_path)], env)
    assert said.returncode == 2
    assert said.stderr.startswith(f"agent-tui: {theirs} belongs to another user (uid {mallory.uid})")
    assert not (theirs / "agent-tui").exists()


def test_a_log_swapped_for_a_fifo_before_it_is_reopened_is_not_waited_on(shared_tmp: Path) -> None:
    """Mallory's log in a shared sessions dir is a FIFO by the time the dashboard reads its head
    and last turn, indexes it or replays its lines: each says the log is not a plain file
    instead of waiting for a writer forever."""
    mallory = other_user()
    chosen = shared_tmp / "open-sessions"
    chosen.mkdir()
    chosen.chmod(0o1777)
    log = chosen / "sess_swapped.jsonl"
    said = mallory.python("import os, sys\nos.mkfifo(sys.argv[1], 0o666)\n", str(log))
    assert said.returncode == 0, said.stderr
    code = (
        "import sys\nfrom pathlib import Path\nfrom agent_tui.replay.catalog import read_entry\n"
        "from agent_tui.store.index import LineIndex\nfrom agent_tui.store.jsonl import iter_lines\n"
        "log = Path(sys.argv[1])\nprint(read_entry(log)[0].problem)\n"
        "for read in (lambda: LineIndex(log).extend(), lambda: list(iter_lines(log))):\n"
        "    try:\n        read()\n    except OSError as error:\n        print(error.strerror)\n"
    )
    told = subprocess.run(
        [sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=60, check=False
    )
    assert told.returncode == 0, told.stderr
    assert told.stdout == f"{log}: unreadable: not a plain file\nnot a plain file\nnot a plain file\n"


# -- the hooks' socket -------------------------------------------------------------------------------

_MALLORY_HOOK = (
    "import json, socket, sys\n"
    "sock = socket.socket(socket.AF_UNIX)\n"
    "try:\n"
    "    sock.connect(sys.argv[1])\n"
    "except OSError as error:\n"
    "    print(json.dumps({'connect': type(error).__name__})); sys.exit()\n"
    "got = b''\n"
    "try:\n"
    "    sock.sendall(sys.argv[2].encode() + b'\\n')\n"
    "    while True:\n"
    "        chunk = sock.recv(65536)\n"
    "        if not chunk: break\n"
    "        got += chunk\n"
    "except OSError:\n"
    "    pass  # closed on them: nothing answered\n"
    "print(json.dumps({'connect': 'connected', 'reply': got.decode()}))\n"
)


@pytest.mark.anyio
@pytest.mark.parametrize("folder_mode", [0o700, 0o711], ids=["as-made", "opened-by-mistake"])
async def test_another_user_can_neither_ask_nor_tell_our_hooks_socket(
    shared_tmp: Path, monkeypatch: pytest.MonkeyPatch, folder_mode: int
) -> None:
    """Mallory connects to the victim's hooks socket and sends a hook event and a ping: as made
    (0700 folder) they cannot even connect; with the folder and socket opened to others by mistake
    they connect, and the server (SO_PEERCRED) reads nothing of theirs and answers nothing."""
    from support_terminal import event_line

    from agent_tui.terminal.hook_socket import HookSocket, Reply
    from agent_tui.terminal.hook_wire import PING_LINE

    mallory = other_user()
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(shared_tmp))
    tempfile.tempdir = None  # `gettempdir` reads $TMPDIR again
    asked: list[object] = []

    async def handler(cli: str, event: dict[str, object]) -> Reply:
        asked.append(event)
        return Reply("allow")

    try:
        async with HookSocket(handler, lambda: True) as served:
            assert served.path.parent == shared_tmp / f"agent-tui-{os.getuid()}"
            served.path.parent.chmod(folder_mode)
            served.path.chmod(0o666 if folder_mode != 0o700 else 0o600)
            event = event_line("codex", {"hook_event_name": "PermissionRequest"}).decode().strip()
            ping = PING_LINE.decode().strip()
            said = [
                await anyio.to_thread.run_sync(mallory.python, _MALLORY_HOOK, str(served.path), line)
                for line in (event, ping)
            ]
            served.path.parent.chmod(0o700)
    finally:
        tempfile.tempdir = None
    for one in said:
        assert one.returncode == 0, one.stderr
    got = [json.loads(one.stdout) for one in said]
    if folder_mode == 0o700:
        assert got == [{"connect": "PermissionError"}] * 2
    else:
        assert got == [{"connect": "connected", "reply": ""}] * 2  # closed at once, not a byte answered
    assert asked == []


_MALLORY_SERVER = (
    "import os, socket, sys\n"
    "path = sys.argv[1]\n"
    "server = socket.socket(socket.AF_UNIX)\n"
    "server.bind(path)\n"
    "os.chmod(path, 0o777)\n"
    "server.listen()\n"
    "print('ready', flush=True)\n"
    "connection, _ = server.accept()\n"
    "got = b''\n"
    "while b'\\n' not in got:\n"
    "    chunk = connection.recv(65536)\n"
    "    if not chunk: break\n"
    "    got += chunk\n"
    "print(len(got), flush=True)\n"
    "try:\n"
    "    connection.sendall(sys.argv[2].encode())\n"
    "except OSError:\n"
    "    pass\n"
)


_ALLOW_OUTPUT = (
    '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}\n'
)
"""What mallory answers: an allow our hook would print, were it to listen to them."""


@pytest.mark.parametrize("where", ["their-folder", "their-socket-in-our-folder"])
def test_our_hook_does_not_talk_to_a_socket_another_user_serves(shared_tmp: Path, where: str) -> None:
    """Mallory serves the hooks' socket where the victim's hook looks for it: in a fallback folder
    of theirs made first (refused before connecting), or (a folder of the victim's opened to
    others for a moment) as a socket of theirs in the victim's own folder (refused once connected:
    its peer is mallory, and the hook sends nothing)."""
    mallory = other_user()
    folder = shared_tmp / f"agent-tui-{os.getuid()}"
    if where == "their-folder":
        said = mallory.python("import os, sys\nos.mkdir(sys.argv[1], 0o711)\n", str(folder))
        assert said.returncode == 0, said.stderr
    else:
        folder.mkdir(mode=0o777)
        folder.chmod(0o777)
    server = subprocess.Popen(
        ["/usr/bin/python3", "-I", "-c", _MALLORY_SERVER, str(folder / "hooks.sock"), _ALLOW_OUTPUT],
        user=mallory.uid,
        group=mallory.gid,
        extra_groups=[],
        env={"PATH": "/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline() == "ready\n"
        if where != "their-folder":
            folder.chmod(0o700)  # the victim's own folder again: only the peer check is left
        hook = subprocess.run(
            [sys.executable, "-I", "-m", "agent_tui.terminal.hook_client", "claude-code"],
            input=b'{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "ls"}}',
            env={"PATH": os.environ["PATH"], "TMPDIR": str(shared_tmp)},
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert (hook.returncode, hook.stdout, hook.stderr) == (0, b"", b"")
        if where == "their-folder":
            assert server.poll() is None  # nobody ever connected
        else:
            rest, _ = server.communicate(timeout=30)
            assert rest == "0\n"  # connected, then left without a byte
    finally:
        server.kill()
        server.wait(timeout=10)
