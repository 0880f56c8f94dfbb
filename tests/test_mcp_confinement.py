"""Where a stdio MCP server starts and how its tree ends: never in the session's directory (a
private empty folder, unless the user's config names a `cwd`), so a cloned repository's `.npmrc`,
`uv.toml` or `pyproject.toml` never chooses a registry (real npm and uv against two loopback
registries), and its whole process tree, a `setsid` child included, ends with it, for our own
sessions and for the launcher command we hand to ACP agents (real processes)."""

from __future__ import annotations

import http.server
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from acp.schema import McpServerStdio
from support_engine import workspace
from support_mcp import alive, assert_gone, pids_written, raw_config, stdio_config

from agent_tui.acp.mcp_servers import acp_mcp_servers
from agent_tui.engine.tools.base import ToolError
from agent_tui.mcp.config import McpConfigError, McpServerConfig, check_server
from agent_tui.mcp.connection import McpServer
from agent_tui.mcp.launch import launch_command, server_dirs
from agent_tui.mcp.servers import McpServers

pytestmark = pytest.mark.anyio

DEADLINE = 30.0
"""Seconds a test waits for a process to write its pids or exit before it fails."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def home(home_in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home (and so the cache folder the servers' folders are made in) in tmp_path."""
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home_in_tmp


@pytest.fixture
def pidfile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "pids"
    monkeypatch.setenv("MCP_TEST_PIDS", str(path))
    return path


def hostile_project(tmp_path: Path, registry: str = "http://127.0.0.1:9/") -> Path:
    """A cloned repository that brings package config pointing at `registry`, a package binary
    `npx` would run from it, and a Python package of our name that would run if the launcher
    imported from its working directory (either leaves `repository-code-ran` in tmp_path)."""
    project = tmp_path / "repo"
    (project / "agent_tui" / "mcp").mkdir(parents=True, exist_ok=True)
    (project / "package.json").write_text('{"name": "repo", "version": "1.0.0"}\n')
    (project / ".npmrc").write_text(f"registry={registry}\n")
    (project / "uv.toml").write_text(f'index-url = "{registry}simple"\n')
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "repo"\nversion = "1"\n[tool.uv]\nindex-url = "{registry}simple"\n'
    )
    marker = tmp_path / "repository-code-ran"
    # `npx NAME` in a project runs the project's own `node_modules/.bin/NAME`, asking no registry.
    (project / "node_modules" / ".bin").mkdir(parents=True, exist_ok=True)
    local_bin = project / "node_modules" / ".bin" / "npx-mcp-pkg"
    local_bin.write_text(f"#!/bin/sh\necho ran > {marker}\n")
    local_bin.chmod(0o755)
    for module in ("agent_tui/__init__.py", "agent_tui/mcp/__init__.py", "agent_tui/mcp/launch.py"):
        (project / module).write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    return project


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def where(server: McpServer, variable: str) -> tuple[Path, str]:
    """The server's working directory and the value of one of its variables (`where` tool)."""
    result = await server.call("where", {"variable": variable}, _no_progress)
    text = result.content[0].text  # type: ignore[union-attr]
    cwd, value = text.split(f" {variable}=")
    return Path(cwd.removeprefix("cwd=")), value


def wait_for_pids(path: Path) -> list[int]:
    """The pids a process wrote to `path` (its only signal); fails rather than hangs."""
    deadline = time.monotonic() + DEADLINE
    while not path.exists():
        assert time.monotonic() < deadline, f"nothing was written to {path}"
        time.sleep(0.02)
    return [int(pid) for pid in path.read_text().split()]


class TestWhereAServerStarts:
    async def test_a_stdio_server_starts_in_a_private_empty_folder_removed_when_it_stops(
        self, tmp_path: Path, home: Path
    ) -> None:
        project = hostile_project(tmp_path)
        servers = McpServers({"test": stdio_config()})
        umask = os.umask(0o002)  # a loose umask: what we make is 0700 all the same
        try:
            async with anyio.create_task_group() as group:
                await servers.open("root", project, group)
                (server,) = servers.started("root")
                folder, pwd = await where(server, "PWD")
                mode = folder.stat()
                inside = os.listdir(folder)
                servers.close("root")
        finally:
            os.umask(umask)
        assert folder.parent == server_dirs() and folder.is_relative_to(home / ".cache")
        assert not folder.is_relative_to(project) and pwd == str(folder)
        assert stat.S_IMODE(mode.st_mode) == 0o700 and mode.st_uid == os.getuid()
        assert stat.S_IMODE(server_dirs().stat().st_mode) == stat.S_IMODE(server_dirs().parent.stat().st_mode)
        assert stat.S_IMODE(server_dirs().stat().st_mode) == 0o700
        assert inside == []
        assert not folder.exists()
        assert not (tmp_path / "repository-code-ran").exists()

    async def test_each_start_gets_a_folder_of_its_own(self, tmp_path: Path, home: Path) -> None:
        servers = McpServers({"a": stdio_config("a"), "b": stdio_config("b")})
        async with anyio.create_task_group() as group:
            await servers.open("root", workspace(tmp_path), group)
            first, second = servers.started("root")
            folders = {(await where(first, "PWD"))[0], (await where(second, "PWD"))[0]}
            servers.close("root")
        assert len(folders) == 2

    async def test_the_cwd_the_users_config_names_is_where_it_starts_and_is_kept(
        self, tmp_path: Path, home: Path
    ) -> None:
        chosen = tmp_path / "chosen"
        chosen.mkdir()
        servers = McpServers({"test": stdio_config(cwd=chosen)})
        async with anyio.create_task_group() as group:
            await servers.open("root", workspace(tmp_path), group)
            (server,) = servers.started("root")
            folder, pwd = await where(server, "PWD")
            servers.close("root")
        assert folder == chosen and pwd == str(chosen)
        assert chosen.is_dir()

    def test_cwd_in_the_config_is_an_absolute_folder_of_a_stdio_server(self, home: Path) -> None:
        def where_in(*keys: str) -> str:
            return "config.toml:3"

        assert check_server("x", {"command": "x", "cwd": "~/servers/x"}, where_in).cwd == home / "servers/x"
        with pytest.raises(McpConfigError, match=r"config.toml:3: mcp.x.cwd: expected an absolute folder"):
            check_server("x", {"command": "x", "cwd": "servers/x"}, where_in)
        with pytest.raises(McpConfigError, match=r"mcp.x.cwd: only a stdio server"):
            check_server("x", {"url": "https://example.com/mcp", "cwd": "/srv"}, where_in)

    async def test_a_program_that_cannot_be_run_or_a_cwd_that_is_missing_is_said_in_one_line(
        self, tmp_path: Path, home: Path
    ) -> None:
        missing = str(tmp_path / "missing")
        servers = McpServers({"gone": McpServerConfig("gone", command=missing)})
        async with anyio.create_task_group() as group:
            assert await servers.open("root", workspace(tmp_path), group) == []
            (server,) = servers.started("root")
            servers.close("root")
        assert server.reason == f"cannot run {missing}: no such program"

        elsewhere = McpServerConfig("elsewhere", command=sys.executable, cwd=tmp_path / "missing")
        servers = McpServers({"elsewhere": elsewhere})
        async with anyio.create_task_group() as group:
            assert await servers.open("root", workspace(tmp_path), group) == []
            (started,) = servers.started("root")
            servers.close("root")
        assert started.reason == (
            f"exited while starting: cannot start {sys.executable} in {tmp_path / 'missing'}: "
            "No such file or directory"
        )


class TestTheWholeTreeEnds:
    async def test_a_child_that_left_by_setsid_ends_with_the_session(
        self, tmp_path: Path, home: Path, pidfile: Path
    ) -> None:
        servers = McpServers({"detach": raw_config("detach", env=("MCP_TEST_PIDS",))})
        async with anyio.create_task_group() as group:
            await servers.open("root", workspace(tmp_path), group)
            (server,) = servers.started("root")
            assert server.status == "running"
            pids = await pids_written(pidfile)
            server_pid, child = pids
            assert os.getsid(child) == child != os.getsid(server_pid)  # out of the group and session
            servers.close("root")
        assert_gone(pids)

    async def test_a_setsid_child_ends_when_its_server_exits_by_itself(
        self, tmp_path: Path, home: Path, pidfile: Path
    ) -> None:
        servers = McpServers({"detach": raw_config("detach", env=("MCP_TEST_PIDS",))})
        async with anyio.create_task_group() as group:
            await servers.open("root", workspace(tmp_path), group)
            (server,) = servers.started("root")
            pids = await pids_written(pidfile)
            with pytest.raises(ToolError):
                await server.call("crash", {}, _no_progress)
            assert_gone(pids)  # while the session still runs
            servers.close("root")

    def test_the_tree_ends_when_the_process_that_started_the_launcher_is_killed(
        self, tmp_path: Path, home: Path, pidfile: Path
    ) -> None:
        # agent-tui (or an ACP agent) killed outright: the launcher is told by the kernel.
        command = launch_command(sys.executable, [str(raw_config("detach").args[0]), "detach"])
        starter_code = (
            "import subprocess, sys, time; "
            f"subprocess.Popen({command!r}, stdin=subprocess.PIPE, stdout=subprocess.PIPE); "
            "time.sleep(3600)"
        )
        starter = subprocess.Popen([sys.executable, "-c", starter_code], start_new_session=True)
        try:
            pids = wait_for_pids(pidfile)
            assert all(alive(pid) for pid in pids)
        finally:
            starter.kill()
            starter.wait(timeout=DEADLINE)
        assert_gone(pids)


class TestWhatIsHandedToAnAcpAgent:
    def handed(self, tmp_path: Path, project: Path) -> tuple[list[str], dict[str, str]]:
        config = raw_config("detach", env=("MCP_TEST_PIDS",))
        (server,) = acp_mcp_servers({"detach": config}, project, None)
        assert isinstance(server, McpServerStdio) and server.command == sys.executable
        command = [server.command, *server.args]
        return command, {**os.environ, **{v.name: v.value for v in server.env}}

    @pytest.mark.parametrize("ending", ["stdin closed", "SIGTERM"])
    def test_the_launcher_an_agent_starts_in_its_project_confines_the_server_and_ends_its_tree(
        self, tmp_path: Path, home: Path, pidfile: Path, ending: str
    ) -> None:
        project = hostile_project(tmp_path)
        command, env = self.handed(tmp_path, project)
        # What an agent does with a stdio server it was given: start it in its project.
        agent_side = subprocess.Popen(
            command,
            cwd=project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            pids = wait_for_pids(pidfile)
            server_cwd = Path(os.readlink(f"/proc/{pids[0]}/cwd"))
            assert server_cwd.parent == server_dirs() and not server_cwd.is_relative_to(project)
            assert os.getsid(pids[1]) == pids[1]
            if ending == "stdin closed":
                assert agent_side.stdin is not None
                agent_side.stdin.close()
            else:
                agent_side.send_signal(signal.SIGTERM)
            agent_side.wait(timeout=DEADLINE)
        finally:
            if agent_side.poll() is None:
                os.killpg(agent_side.pid, signal.SIGKILL)
        assert_gone(pids)
        assert not server_cwd.exists()
        assert not (tmp_path / "repository-code-ran").exists()  # the project's `agent_tui` never ran


class _Registry(http.server.ThreadingHTTPServer):
    """A package registry on loopback that knows no package and notes what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        super().__init__(("127.0.0.1", 0), _NotFound)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"


class _NotFound(http.server.BaseHTTPRequestHandler):
    server: _Registry

    def do_GET(self) -> None:
        self.server.asked.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def registries() -> Iterator[tuple[_Registry, _Registry]]:
    """(the repository's registry, the user's registry), both on loopback and serving."""
    pair = (_Registry(), _Registry())
    threads = [threading.Thread(target=registry.serve_forever, daemon=True) for registry in pair]
    for thread in threads:
        thread.start()
    try:
        yield pair
    finally:
        for registry, thread in zip(pair, threads, strict=True):
            registry.shutdown()
            registry.server_close()
            thread.join(timeout=DEADLINE)


def _program(name: str) -> str:
    beside = Path(sys.executable).parent / name  # uv comes with the test extra, into this venv
    found = str(beside) if beside.is_file() else shutil.which(name)
    assert found is not None, f"{name} is needed by this test (npm: the system's; uv: the test extra)"
    return found


class TestAHostileProjectsPackageConfig:
    async def test_npx_uvx_and_uv_run_servers_never_ask_the_registry_a_repository_names(
        self,
        tmp_path: Path,
        home: Path,
        registries: tuple[_Registry, _Registry],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        theirs, users = registries
        project = hostile_project(tmp_path, theirs.url)
        # The user's own config names the user's registry (still loopback: nothing leaves the
        # machine whatever the tools do); only the user's environment and files count.
        home.mkdir(parents=True, exist_ok=True)
        (home / ".npmrc").write_text(
            f"registry={users.url}\nfetch-retries=0\nupdate-notifier=false\naudit=false\nfund=false\n"
        )
        (home / ".config" / "uv").mkdir(parents=True)
        (home / ".config" / "uv" / "uv.toml").write_text(f'index-url = "{users.url}simple"\n')
        for name in list(os.environ):
            if name.lower().startswith(("npm_config_", "uv_", "pip_")):
                monkeypatch.delenv(name)
        monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
        uv = _program("uv")
        configs = {
            "npx": McpServerConfig(
                "npx", command=_program("npx"), args=("-y", "npx-mcp-pkg"), startup_timeout=60.0
            ),
            "uvx": McpServerConfig(
                "uvx", command=_program("uvx"), args=("uvx-mcp-pkg",), startup_timeout=60.0
            ),
            "uv-run": McpServerConfig(
                "uv-run",
                command=uv,
                args=("run", "--no-project", "--with", "uv-run-mcp-pkg", "uv-run-mcp-pkg"),
                startup_timeout=60.0,
            ),
        }
        servers = McpServers(configs)
        async with anyio.create_task_group() as group:
            assert await servers.open("root", project, group) == []  # no registry has them
            servers.close("root")
        assert theirs.asked == []
        assert not (tmp_path / "repository-code-ran").exists()
        for package in ("npx-mcp-pkg", "uvx-mcp-pkg", "uv-run-mcp-pkg"):
            assert any(package in path for path in users.asked), (package, users.asked)
