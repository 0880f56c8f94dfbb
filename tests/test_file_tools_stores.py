"""The file tools never read a credential store inside the session's directory (a session in
`$HOME`), however the store got there: planted before the first call, or linked in, swapped or
moved between two calls, while the stores' real paths are kept between calls
(`safety.resolution`)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_tui.engine.tools.base import ToolContext, ToolResult
from agent_tui.engine.tools.builtin import builtin_tools
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.safety import resolution
from agent_tui.safety.credential_stores import current_index

LONG_AGO = 1_000_000_000 * 1_000_000_000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home that is the session's directory, with keys that are no store (yet), and the
    clock an hour ahead so the stores' resolution is kept between calls (only a change on disk
    can make it stale); the home's times set far back, so any change in it moves them."""
    home = tmp_path / "home"
    (home / "keys").mkdir(parents=True)
    (home / "keys" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / "other").mkdir()
    (home / "other" / "id_rsa").write_text("OTHER KEY\n")
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(resolution, "_clock", lambda: time.time_ns() + 3_600 * 1_000_000_000)
    os.utime(home, ns=(LONG_AGO, LONG_AGO))
    return home


async def read(home: Path, path: str) -> ToolResult:
    router = ToolRouter(builtin_tools())
    tool, parsed = router.parse("read_file", {"path": path})

    async def ignore(stream: str, text: str) -> None:
        pass

    ctx = ToolContext(home, "sess_1", "turn_1", "call_1", ignore, 32_000)
    return await router.run(tool, parsed, ctx)


def refused(result: ToolResult) -> bool:
    return not result.ok and result.error_code == "path_unsafe" and "credential store" in result.text


@pytest.mark.anyio
async def test_a_store_in_the_sessions_home_is_never_read(home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("SSH KEY\n")
    assert refused(await read(home, ".ssh/id_ed25519"))
    assert refused(await read(home, "keys/../.ssh/id_ed25519"))
    assert (await read(home, "keys/id_rsa")).ok


@pytest.mark.anyio
async def test_a_store_linked_in_between_two_reads_is_seen(home: Path) -> None:
    first = await read(home, "keys/id_rsa")
    assert first.ok and "PRIVATE KEY" in first.text
    index = current_index()
    assert current_index() is index  # kept between calls: the next read tests the re-check
    (home / ".ssh").symlink_to(home / "keys")  # ~/.ssh is now the keys directory
    assert refused(await read(home, "keys/id_rsa"))


@pytest.mark.anyio
async def test_a_store_link_swapped_to_another_directory_is_seen(home: Path) -> None:
    (home / ".ssh").symlink_to(home / "keys")
    os.utime(home, ns=(LONG_AGO, LONG_AGO))
    assert refused(await read(home, "keys/id_rsa"))
    assert (await read(home, "other/id_rsa")).ok
    (home / "swap").symlink_to(home / "other")
    os.replace(home / "swap", home / ".ssh")
    assert refused(await read(home, "other/id_rsa"))
    assert (await read(home, "keys/id_rsa")).ok


@pytest.mark.anyio
async def test_a_store_directory_moved_away_and_replaced_is_seen(home: Path) -> None:
    """`~/.config/gh` (a store one level down) becomes a link to the keys: only `~/.config`
    changes, not the home."""
    config = home / ".config"
    config.mkdir()
    (config / "gh").mkdir()
    os.utime(home, ns=(LONG_AGO, LONG_AGO))
    os.utime(config, ns=(LONG_AGO, LONG_AGO))
    assert (await read(home, "keys/id_rsa")).ok
    os.rename(config / "gh", home / "old-gh")
    (config / "gh").symlink_to(home / "keys")
    assert refused(await read(home, "keys/id_rsa"))


def test_the_kept_index_follows_the_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GNUPGHOME", str(home / "keys"))
    assert any(found.path == str(home / "keys") for found in current_index().stores)
    monkeypatch.delenv("GNUPGHOME")
    assert not any(found.path == str(home / "keys") for found in current_index().stores)
    assert any(
        found.path == "/elsewhere/bus.creds" for found in current_index(["/elsewhere/bus.creds"]).stores
    )


@pytest.mark.anyio
async def test_a_store_made_inside_a_directory_that_was_not_there_is_seen(home: Path) -> None:
    """`~/.config` is missing at the first read (nothing inside it is watched, only the home
    that would hold it); then it is made, with `gh` a link to the keys."""
    assert (await read(home, "keys/id_rsa")).ok
    assert current_index() is current_index()
    (home / ".config").mkdir()
    (home / ".config" / "gh").symlink_to(home / "keys")
    assert refused(await read(home, "keys/id_rsa"))
