"""A headless scenario run (and `agent-tui demo`) works on scratch copies of the scenario's
directories: copies it made in a temporary directory are removed when it ends, as the dashboard's
demo removes its own; copies under `--workspace DIR` are the user's and stay.

Real subprocesses, each with its own TMPDIR, so what a run leaves behind is all there is in it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
from support_providers import agent_tui, clean_env

from agent_tui.runtime.workspace import CopyStopped, Workspace


def scenario(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("x\n")
    write = {"tool": "write_file", "args": {"path": "b.txt", "content": "y"}}
    steps = [{"text": ["w"], "toolCalls": [write]}, {"text": ["done"]}]
    path = tmp_path / "s.json"
    path.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": "ws", "steps": steps}]}))
    return path


def private_tmp(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp, clean_env(TMPDIR=str(tmp))


def test_a_run_removes_the_scratch_copies_it_made(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    out = tmp_path / "out"
    result = agent_tui(
        "run", str(scenario(tmp_path)), "--sessions-dir", str(out), "--approve", "allow", env=env
    )
    assert result.returncode == 0, result.stderr
    assert any(out.glob("*.jsonl"))
    assert list(tmp.iterdir()) == []


def test_copies_under_workspace_stay_for_the_user(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    keep = tmp_path / "keep"
    result = agent_tui(
        "run",
        str(scenario(tmp_path)),
        "--sessions-dir",
        str(tmp_path / "out"),
        "--approve",
        "allow",
        "--workspace",
        str(keep),
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert (keep / "ws" / "b.txt").read_text() == "y"  # what the agent wrote, kept
    assert not (tmp_path / "ws" / "b.txt").exists()  # the scenario's own files untouched
    assert list(tmp.iterdir()) == []


def test_the_sessions_directory_and_the_copies_inside_the_scenario_are_not_copied(tmp_path: Path) -> None:
    """A run whose logs and copies go inside the scenario's own directory copies neither: the
    copy would hold the logs being written (and earlier runs' logs), and itself."""
    tmp, env = private_tmp(tmp_path)
    path = scenario(tmp_path)
    for run in (1, 2):  # the second run finds the first one's logs and copies inside `ws`
        result = agent_tui(
            "run",
            str(path),
            "--approve",
            "allow",
            "--sessions-dir",
            str(tmp_path / "ws" / "logs"),
            "--workspace",
            str(tmp_path / "ws" / "copies" / str(run)),
            env=env,
        )
        assert result.returncode == 0, result.stderr
    copy = tmp_path / "ws" / "copies" / "2" / "ws"
    assert sorted(p.name for p in copy.iterdir()) == ["a.txt", "b.txt", "copies"]  # no logs
    assert [p.name for p in (copy / "copies").iterdir()] == ["1"]  # the first run's: the user's now
    assert len(list((tmp_path / "ws" / "logs").glob("*.jsonl"))) == 2
    assert list(tmp.iterdir()) == []


def test_the_headless_demo_leaves_no_scratch_copy(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    result = agent_tui("demo", "--sessions-dir", str(tmp_path / "out"), env=env)
    assert result.returncode == 0, result.stderr
    assert list(tmp.iterdir()) == []


def test_a_scenario_refused_while_its_copies_are_made_leaves_none(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": "nope", "steps": [{"text": ["x"]}]}]}))
    result = agent_tui("run", str(bad), "--sessions-dir", str(tmp_path / "out"), env=env)
    assert result.returncode == 2
    assert result.stderr == (
        f"agent-tui: {tmp_path}: sessions[0].cwd: 'nope': no such directory ({tmp_path / 'nope'})\n"
    )
    assert list(tmp.iterdir()) == []


def test_a_broken_rules_file_is_named_where_it_is_and_leaves_no_copy(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    path = scenario(tmp_path)
    rules = tmp_path / "ws" / ".agent-tui" / "permissions.json"
    rules.parent.mkdir()
    rules.write_text("not json\n")
    out = str(tmp_path / "out")
    result = agent_tui("run", str(path), "--sessions-dir", out, "--trust-project-rules", env=env)
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"agent-tui: {rules}: not JSON at column "
    )  # the user's file, not the copy
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert list(tmp.iterdir()) == []


def test_a_broken_rules_file_nobody_trusted_is_ignored_and_named(tmp_path: Path) -> None:
    tmp, env = private_tmp(tmp_path)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    path = scenario(tmp_path)
    rules = tmp_path / "ws" / ".agent-tui" / "permissions.json"
    rules.parent.mkdir()
    rules.write_text("not json\n")
    result = agent_tui("run", str(path), "--sessions-dir", str(tmp_path / "out"), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(f"agent-tui: {rules}: ignored: not JSON at column ")
    assert list(tmp.iterdir()) == []


def run_in(tmp_path: Path, cwd: str, **env_extra: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A scenario of one session working in `cwd`, run with a private TMPDIR."""
    tmp, env = private_tmp(tmp_path)
    env.update(env_extra)
    path = tmp_path / "in.json"
    path.write_bytes(orjson.dumps({"sessions": [{"prompt": "p", "cwd": cwd, "steps": [{"text": ["ok"]}]}]}))
    result = agent_tui("run", str(path), "--sessions-dir", str(tmp_path / "out"), env=env)
    return tmp, result


@pytest.mark.parametrize(
    ("cwd", "why"),
    [
        ("/", "the filesystem's root is not a project directory"),
        ("/proc", "/proc is the kernel's, not a project directory"),
        ("/proc/sys", "/proc is the kernel's, not a project directory"),
        ("/dev", "/dev is the kernel's, not a project directory"),
        ("/sys/kernel", "/sys is the kernel's, not a project directory"),
    ],
)
def test_the_root_and_the_kernels_directories_are_refused_before_any_copy(
    tmp_path: Path, cwd: str, why: str
) -> None:
    tmp, result = run_in(tmp_path, cwd)  # the real default limit
    assert result.returncode == 2
    resolved = Path(cwd).resolve()
    assert result.stderr == f"agent-tui: {tmp_path}: sessions[0].cwd: {cwd!r}: {why} ({resolved})\n"
    assert list(tmp.iterdir()) == []
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_directory_over_the_size_limit_is_refused_before_any_copy(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    with open(big / "blob", "wb") as blob:
        blob.truncate(3 * 1024 * 1024)  # sparse: 3 MB in its size, nothing on disk
    tmp, result = run_in(tmp_path, "big", AGENT_TUI_SCRATCH_LIMIT_MB="2")
    assert result.returncode == 2
    assert result.stderr == (
        f"agent-tui: {tmp_path}: sessions[0].cwd: 'big': more than 2 MB or 100,000 files to copy "
        "(a scenario's directory is copied whole; AGENT_TUI_SCRATCH_LIMIT_MB and "
        f"AGENT_TUI_SCRATCH_LIMIT_FILES raise the limit) ({big})\n"
    )
    assert list(tmp.iterdir()) == []


def test_a_directory_over_the_file_limit_is_refused_and_a_raised_limit_copies_it(tmp_path: Path) -> None:
    many = tmp_path / "many"
    (many / "sub").mkdir(parents=True)
    for n in range(30):
        (many / "sub" / f"f{n}.txt").write_text("x")
    tmp, result = run_in(tmp_path, "many", AGENT_TUI_SCRATCH_LIMIT_FILES="20")
    assert result.returncode == 2
    assert "more than 1,024 MB or 20 files to copy" in result.stderr
    assert list(tmp.iterdir()) == []
    (tmp_path / "again").mkdir()
    _, result = run_in(tmp_path / "again", "../many", AGENT_TUI_SCRATCH_LIMIT_FILES="40")
    assert result.returncode == 0, result.stderr


def test_special_files_and_links_out_are_skipped_and_said(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("print(1)\n")
    os.mkfifo(project / "pipe")  # opened, it would block the copy for ever
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(project / "sock"))
    (tmp_path / "secret").write_text("outside")
    (project / "out").symlink_to(tmp_path / "secret")
    (project / "up").symlink_to("../secret")
    (project / "loop").symlink_to(".")
    (project / "sneaky").symlink_to("loop/../secret")  # lexically inside, really outside
    (project / "in").symlink_to("src/a.py")
    _, env = private_tmp(tmp_path)
    keep = tmp_path / "keep"
    path = tmp_path / "s.json"
    path.write_bytes(
        orjson.dumps({"sessions": [{"prompt": "p", "cwd": "proj", "steps": [{"text": ["ok"]}]}]})
    )
    try:
        result = agent_tui(
            "run", str(path), "--sessions-dir", str(tmp_path / "o"), "--workspace", str(keep), env=env
        )
    finally:
        listener.close()
    assert result.returncode == 0, result.stderr
    said = result.stderr.splitlines()
    assert f"agent-tui: {project / 'pipe'}: a fifo, not copied" in said
    assert f"agent-tui: {project / 'sock'}: a socket, not copied" in said
    for name, target in [
        ("out", str(tmp_path / "secret")),
        ("up", "../secret"),
        ("sneaky", "loop/../secret"),
    ]:
        assert f"agent-tui: {project / name}: a link out of {project} ({target}), not copied" in said
    copy = keep / "proj"
    assert sorted(p.name for p in copy.iterdir()) == ["in", "loop", "src"]
    assert (copy / "in").is_symlink() and (copy / "in").read_text() == "print(1)\n"
    assert (copy / "loop").is_symlink()


def test_a_stopped_copy_leaves_nothing(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for n in range(5):
        (source / f"f{n}").write_bytes(b"x" * 10)

    class StopDuringCopy(threading.Event):
        """Set once the copy has made its directories and written a file (as a signal would)."""

        def is_set(self) -> bool:
            written = list((root / "src").glob("f*")) if (root / "src").exists() else []
            return any(path.stat().st_size for path in written)

    root = tmp_path / "root"
    workspace = Workspace(tmp_path, root, stop=StopDuringCopy())
    with pytest.raises(CopyStopped):
        workspace.prepare("src")
    assert list(root.iterdir()) == []  # the partial copy is gone; the given root stays


def test_a_signal_during_the_copy_removes_it_and_exits_with_the_signal(tmp_path: Path) -> None:
    many = tmp_path / "many"
    many.mkdir()
    for n in range(3000):
        (many / f"f{n}").write_bytes(b"x" * 100)
    tmp, env = private_tmp(tmp_path)
    path = tmp_path / "s.json"
    path.write_bytes(
        orjson.dumps({"sessions": [{"prompt": "p", "cwd": "many", "steps": [{"text": ["ok"]}]}]})
    )
    command = [sys.executable, "-m", "agent_tui", "run", str(path), "--sessions-dir", str(tmp_path / "o")]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp.glob("agent-tui-*")):  # the copy's root: copying starts now
            assert time.monotonic() < deadline and process.poll() is None, "no copy was started"
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 143, out + err
    assert err.splitlines()[-1] == "agent-tui: stopped by SIGTERM" and "Traceback" not in err
    assert list(tmp.iterdir()) == []


def test_a_cwd_that_a_link_takes_out_of_the_scenarios_directory_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("secret")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "work").symlink_to(home)  # what a hostile repository could ship
    tmp, result = run_in(repo, "work")
    assert result.returncode == 2
    assert result.stderr == (
        f"agent-tui: {repo}: sessions[0].cwd: 'work': a link out of {repo} (to {home}), "
        f"not a directory in it ({repo / 'work'})\n"
    )
    assert list(tmp.iterdir()) == []
