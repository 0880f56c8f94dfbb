"""Finding a project's Claude Code and Codex sessions in the CLIs' own transcript folders.

Real files in a temporary `CLAUDE_CONFIG_DIR` and `CODEX_HOME` (the fixtures of the importer
tests, laid out as the CLIs lay them out); the 5,000-transcript timing is a bench row, not a test.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest
from support_importers import FIXTURES

from agent_tui.terminal.discovery import HEAD_BYTES, claude_folder_name, discover

SHOP = "/home/dev/shop-api"
CLAUDE_SESSION = "c4d5e6f7-8a9b-4c0d-9e1f-2a3b4c5d6e23"
CODEX_PARENT = "019c0d1e-2f3a-7b4c-8d5e-6f7a8b9c0d73"
CODEX_CHILD = "019c0d1e-5a6b-7c8d-9e0f-1a2b3c4d5e84"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """`CLAUDE_CONFIG_DIR` and `CODEX_HOME` in tmp_path, holding the fixtures' sessions of SHOP."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    project = claude / "projects" / claude_folder_name(SHOP)
    shutil.copytree(FIXTURES / "claude_code" / "v2.1-subagents-dir", project)
    shutil.copytree(FIXTURES / "codex" / "multi-agent-0.58", codex / "sessions")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    return claude, codex


def _touch(path: Path, seconds: int) -> None:
    os.utime(path, ns=(seconds * 10**9, seconds * 10**9))


def _claude_log(claude: Path, cwd: str, session: str, prompt: str = "fix the tests") -> Path:
    folder = claude / "projects" / claude_folder_name(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "parentUuid": None,
        "cwd": cwd,
        "sessionId": session,
        "type": "user",
        "message": {"role": "user", "content": prompt},
        "uuid": "u1",
        "timestamp": "2026-01-01T10:00:00.000Z",
    }
    path = folder / f"{session}.jsonl"
    path.write_bytes(orjson.dumps(record) + b"\n")
    return path


def _codex_log(codex: Path, cwd: str, thread: str, **extra: object) -> Path:
    day = codex / "sessions" / "2026" / "02" / "01"
    day.mkdir(parents=True, exist_ok=True)
    meta = {
        "timestamp": "2026-02-01T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": thread, "cwd": cwd, **extra},
    }
    path = day / f"rollout-2026-02-01T10-00-00-{thread}.jsonl"
    path.write_bytes(orjson.dumps(meta) + b"\n")
    return path


class TestAProjectsSessions:
    def test_both_clis_sessions_of_the_project_are_found_with_ids_titles_and_parents(
        self, homes: tuple[Path, Path]
    ) -> None:
        found = {t.cli_id: t for t in discover(Path(SHOP))}
        assert set(found) == {CLAUDE_SESSION, CODEX_PARENT, CODEX_CHILD}
        claude = found[CLAUDE_SESSION]
        assert (claude.cli, claude.session_id, claude.cwd) == ("claude-code", f"sess_{CLAUDE_SESSION}", SHOP)
        assert claude.title == "Changelog entry for order cancellation"  # its ai-title record
        assert claude.started == "2025-10-23T14:20:03.137Z"
        parent, child = found[CODEX_PARENT], found[CODEX_CHILD]
        assert parent.title == "Which module computes refunds? Use an explorer agent."
        assert (parent.parent_cli_id, child.parent_cli_id) == (None, CODEX_PARENT)
        assert child.parent_session_id == f"sess_{CODEX_PARENT}" and child.agent_name == "explorer"
        assert all(t.path.name != "agent-a7f3c2.jsonl" for t in found.values())  # read with its session

    def test_newest_first_by_modification_time(self, homes: tuple[Path, Path]) -> None:
        claude, codex = homes
        for n, path in enumerate(sorted(claude.rglob("*.jsonl")) + sorted(codex.rglob("*.jsonl"))):
            _touch(path, 1_700_000_000 + n)
        _touch(claude / "projects" / claude_folder_name(SHOP) / f"{CLAUDE_SESSION}.jsonl", 1_800_000_000)
        assert [t.cli_id for t in discover(Path(SHOP))] == [CLAUDE_SESSION, CODEX_CHILD, CODEX_PARENT]

    def test_another_projects_sessions_are_left_out_even_when_its_folder_name_is_the_same(
        self, homes: tuple[Path, Path]
    ) -> None:
        claude, codex = homes
        _claude_log(claude, "/home/dev/shop.api", "other-dot")  # the same folder name as SHOP's
        _claude_log(claude, "/home/dev/elsewhere", "other-claude")
        _codex_log(codex, "/home/dev/elsewhere", "other-codex")
        ids = {t.cli_id for t in discover(Path(SHOP))}
        assert ids == {CLAUDE_SESSION, CODEX_PARENT, CODEX_CHILD}

    def test_sessions_run_in_a_directory_under_the_project_belong_to_it(
        self, homes: tuple[Path, Path]
    ) -> None:
        claude, codex = homes
        _claude_log(claude, SHOP + "/web", "under-claude")
        _codex_log(codex, SHOP + "/web", "under-codex")
        _claude_log(claude, SHOP + "-old", "beside-claude")  # a sibling whose name starts alike
        ids = {t.cli_id for t in discover(Path(SHOP))}
        assert {"under-claude", "under-codex"} <= ids and "beside-claude" not in ids

    def test_all_projects_lists_every_projects_sessions(self, homes: tuple[Path, Path]) -> None:
        claude, codex = homes
        _claude_log(claude, "/home/dev/elsewhere", "other-claude")
        _codex_log(codex, "/srv/other", "other-codex")
        ids = {t.cli_id for t in discover(None, all_projects=True)}
        assert ids == {CLAUDE_SESSION, CODEX_PARENT, CODEX_CHILD, "other-claude", "other-codex"}

    def test_the_environment_names_the_folders(
        self, homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(homes[0].parent / "nowhere"))
        assert {t.cli for t in discover(Path(SHOP))} == {"codex"}
        monkeypatch.setenv("CODEX_HOME", str(homes[0].parent / "nowhere"))
        assert discover(Path(SHOP)) == []  # missing folders: no sessions, no warning

    def test_without_the_variables_the_home_directory_is_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        monkeypatch.delenv("CODEX_HOME", raising=False)
        monkeypatch.setenv("HOME", str(tmp_path))
        _claude_log(tmp_path / ".claude", "/p", "home-claude")
        _codex_log(tmp_path / ".codex", "/p", "home-codex")
        assert {t.cli_id for t in discover(Path("/p"))} == {"home-claude", "home-codex"}


class TestOddFiles:
    def test_each_odd_file_is_skipped_with_one_warning_line_and_the_rest_listed(
        self, homes: tuple[Path, Path]
    ) -> None:
        claude, codex = homes
        folder = claude / "projects" / claude_folder_name(SHOP)
        (folder / "garbage.jsonl").write_bytes(b"this is not json\n")
        (folder / "empty.jsonl").write_bytes(b"")  # a session just starting: nothing to say yet
        (folder / "titles-only.jsonl").write_bytes(b'{"type":"summary","summary":"old","leafUuid":"x"}\n')
        (folder / "unknown.jsonl").write_bytes(b'{"hello":"world"}\n')
        day = codex / "sessions" / "2026" / "01" / "15"
        (day / "rollout-bad.jsonl").write_bytes(b'{"type":"response_item","payload":{}}\n')
        (day / "rollout-binary.jsonl").write_bytes(b"\x00\xff\xfe\n")
        warnings: list[str] = []
        found = discover(Path(SHOP), warn=warnings.append)
        assert {t.cli_id for t in found} == {CLAUDE_SESSION, CODEX_PARENT, CODEX_CHILD}
        named = sorted(Path(line.split(": ")[0]).name for line in warnings)
        assert named == ["garbage.jsonl", "rollout-bad.jsonl", "rollout-binary.jsonl", "unknown.jsonl"]
        assert all(line.endswith("(skipped)") and "\n" not in line for line in warnings)

    def test_an_unreadable_file_is_named_once_and_never_raises(
        self, homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        claude, _ = homes
        locked = _claude_log(claude, SHOP, "locked")
        real_open = open

        def refusing(file: object, *args: object, **kwargs: object) -> object:
            if str(file) == str(locked):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr("builtins.open", refusing)
        warnings: list[str] = []
        found = discover(Path(SHOP), warn=warnings.append)
        assert "locked" not in {t.cli_id for t in found} and len(found) == 3
        assert warnings == [f"{locked}: Permission denied (skipped)"]

    def test_links_fifos_and_folders_named_like_logs_are_never_opened(self, homes: tuple[Path, Path]) -> None:
        claude, codex = homes
        folder = claude / "projects" / claude_folder_name(SHOP)
        outside = _claude_log(claude, SHOP + "/x", "outside")  # a real session, elsewhere
        (folder / "linked.jsonl").symlink_to(outside)
        os.mkfifo(folder / "fifo.jsonl")  # opening it would block: it is never opened
        os.mkfifo(codex / "sessions" / "rollout-fifo.jsonl")
        (folder / "dir.jsonl").mkdir()
        found = discover(Path(SHOP))
        assert [t.path.name for t in found if t.cli_id == "outside"] == ["outside.jsonl"]
        assert not any(t.path.name in {"linked.jsonl", "fifo.jsonl", "rollout-fifo.jsonl"} for t in found)

    def test_only_the_head_is_read_and_a_long_first_line_still_tells_its_fields(
        self, homes: tuple[Path, Path]
    ) -> None:
        _, codex = homes
        huge = _codex_log(codex, SHOP, "huge-first-line", instructions="x" * (2 * HEAD_BYTES))
        found = {t.cli_id: t for t in discover(Path(SHOP))}
        assert found["huge-first-line"].path == huge and found["huge-first-line"].cwd == SHOP

    def test_control_characters_in_a_file_name_are_shown_as_markers_in_the_warning(
        self, homes: tuple[Path, Path]
    ) -> None:
        claude, _ = homes
        folder = claude / "projects" / claude_folder_name(SHOP)
        (folder / "evil\x1b[2J.jsonl").write_bytes(b"not json\n")
        warnings: list[str] = []
        discover(Path(SHOP), warn=warnings.append)
        assert len(warnings) == 1 and "\x1b" not in warnings[0]

    def test_a_project_directory_or_all_projects_is_needed(self) -> None:
        with pytest.raises(ValueError):
            discover(None)
