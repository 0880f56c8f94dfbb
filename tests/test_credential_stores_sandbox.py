"""Every credential store of the table is empty in the real sandbox (bwrap), one test per entry.

A marker is written into each store of a home of its own (outside /tmp, which the sandbox
replaces anyway), the XDG variables pointing elsewhere than their defaults so both places are
tried; `cat` and `ls` run through the sandboxed shell tool must never print it. These tests need
bubblewrap (`bwrap`, Debian package `bubblewrap`); without it they fail.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tui.engine.tools.base import ToolContext, ToolResult
from agent_tui.engine.tools.sandbox import sandbox_status
from agent_tui.engine.tools.shell_setup import ShellSetup
from agent_tui.engine.tools.shell_tool import ShellTool
from agent_tui.providers.config import load_config
from agent_tui.runtime.shell_settings import shell_setup_for
from agent_tui.safety.credential_stores import CREDENTIAL_STORES, CredentialStore, StorePath, store_paths

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _bwrap_works() -> None:
    status = sandbox_status()
    assert status.available, f"these tests need a working bwrap (Debian package bubblewrap): {status.problem}"


async def _noop(stream: str, text: str) -> None:
    return None


async def shell(cmd: str, cwd: Path) -> ToolResult:
    tool = ShellTool(ShellSetup(sandbox=True))
    context = ToolContext(
        cwd=cwd, session_id="s", turn_id="t", tool_call_id="c", on_output=_noop, output_budget=200_000
    )
    return await tool.run(tool.Args(cmd=cmd, timeoutMs=60_000), context)


@pytest.fixture
def place(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home and XDG directories outside /tmp; `HOME`, `XDG_*` and `TMPDIR` point there."""
    root = Path(tempfile.mkdtemp(prefix="agent-tui-test-stores-", dir="/var/tmp"))
    for name, variable in [
        ("home", "HOME"),
        ("xdg-config", "XDG_CONFIG_HOME"),
        ("xdg-data", "XDG_DATA_HOME"),
        ("xdg-cache", "XDG_CACHE_HOME"),
        ("run", "XDG_RUNTIME_DIR"),
        ("tmp", "TMPDIR"),
    ]:
        (root / name).mkdir()
        monkeypatch.setenv(variable, str(root / name))
    for store in CREDENTIAL_STORES:  # the stores a variable moved: kept apart from the home
        if store.base == "variable":
            monkeypatch.setenv(store.path.rstrip("/"), str(root / "moved" / store.path.rstrip("/")))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def plant(found: StorePath, marker: str) -> tuple[str, str]:
    """Write `marker` into the store; the paths to `cat` and to `ls` (empty: nothing to list)."""
    path = Path(found.path)
    if found.store.directory:
        (path / "sub").mkdir(parents=True, exist_ok=True)
        (path / "secret").write_text(marker + "\n")
        (path / "sub" / f"{marker}.key").write_text(marker + "\n")
        return f"{path}/secret", f"{path} {path}/sub"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(marker + "\n")
    return str(path), ""


@pytest.mark.parametrize("store", CREDENTIAL_STORES, ids=lambda store: store.shown)
async def test_a_store_is_empty_in_the_sandbox(store: CredentialStore, place: Path) -> None:
    marker = f"secret-{uuid.uuid4().hex}"
    wanted = [found for found in store_paths() if found.store == store]
    assert wanted, f"{store.shown} has no place for this user"
    work = place / "work"
    work.mkdir()
    for found in wanted:
        cat, listed = plant(found, marker)
        looked = await shell(f"cat {cat}; ls -AR {listed or cat}; echo done", work)
        assert looked.ok and "done" in looked.text, looked.text
        assert marker not in looked.text, looked.text
        assert Path(cat).read_text() == marker + "\n"  # untouched outside the sandbox


async def test_stores_inside_the_sessions_directory_are_empty_too(place: Path) -> None:
    """A session started in `$HOME` itself: its directory is bound over the stores, which must
    then be hidden again on top of it, for a read (nothing writable) and for a write."""
    marker = f"secret-{uuid.uuid4().hex}"
    home = place / "home"
    inside = [found for found in store_paths() if Path(found.path).is_relative_to(home)]
    cats = [plant(found, marker)[0] for found in inside]
    for cmd in (
        f"cat {' '.join(cats)}; grep -r {marker} .; echo done",
        f"cat {cats[0]} > /dev/null; mkdir -p made",
    ):
        looked = await shell(cmd, home)
        assert marker not in looked.text, (cmd, looked.text)
    assert (home / "made").is_dir()  # the write went through: the session's directory is writable


async def test_a_network_call_sees_login_stores_but_never_histories_or_agent_tuis_own(place: Path) -> None:
    marker = f"secret-{uuid.uuid4().hex}"
    work = place / "work"
    work.mkdir()
    seen: dict[bool, list[str]] = {True: [], False: []}
    for found in store_paths():
        seen[found.store.login].append(plant(found, marker)[0])
    for login, paths in seen.items():
        urls = " ".join(f"file://{path}" for path in paths)
        fetched = await shell(f"curl -s {urls}; echo done", work)  # `curl`: a `network` call
        assert "done" in fetched.text, fetched.text
        assert (marker in fetched.text) is login, (login, fetched.text)


async def test_the_bus_creds_file_the_config_names_is_hidden_from_every_call(
    place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[bus] creds_file` may be anywhere: the config's own path is hidden like a store, from
    a read, a write and a `network` call alike."""
    marker = f"secret-{uuid.uuid4().hex}"
    creds = place / "elsewhere" / "bus.creds"
    creds.parent.mkdir()
    creds.write_text(marker + "\n")
    config = place / "config.toml"
    config.write_text(f'[bus]\ncreds_file = "{creds}"\n')
    setup = shell_setup_for(load_config(config), {})
    assert setup.secret_files == {str(creds)}
    work = place / "work"
    work.mkdir()
    tool = ShellTool(setup)
    context = ToolContext(
        cwd=work, session_id="s", turn_id="t", tool_call_id="c", on_output=_noop, output_budget=200_000
    )
    for cmd in (
        f"cat {creds}; echo done",
        f"cat {creds}; mkdir -p made; echo done",
        f"curl -s file://{creds}; echo done",
    ):
        looked = await tool.run(tool.Args(cmd=cmd, timeoutMs=60_000), context)
        assert "done" in looked.text and marker not in looked.text, (cmd, looked.text)
    assert ShellTool(setup).assess(tool.Args(cmd=f"cat {creds}"), work).risk == "execute"
