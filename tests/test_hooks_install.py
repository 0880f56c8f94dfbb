"""agent-tui's entries in Claude Code's and Codex's hook files: real files in a scratch home.

The user's own hooks must come out of an install exactly as they went in (Codex trusts a hook by
its position and content), an uninstall must give back the very bytes the file had, and a file
that is not plainly the user's own (a link planted by a repository, another user's, one others can
write) must be left alone. The installed command is run by a real shell, as the CLIs run it.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.terminal import cli_versions
from agent_tui.terminal.cli_versions import events_for, find_cli, minimum_version
from agent_tui.terminal.install import (
    EVENT_TIMEOUT,
    PERMISSION_TIMEOUT,
    SESSION_END_TIMEOUT,
    InstallError,
    Target,
    hook_command,
    install,
    installed_state,
    is_our_handler,
    project_target,
    uninstall,
    user_target,
)
from agent_tui.terminal.install_record import backup_path

CLAUDE_EVENTS = events_for("claude-code", None)
CODEX_EVENTS = events_for("codex", None)
COMMAND = {cli: hook_command(cli, "/opt/agent tui/bin/python3") for cli in ("claude-code", "codex")}

USER_SETTINGS = b"""{
    "model": "opus",
    "permissions": {"allow": ["Bash(ls)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}
        ],
        "PermissionRequest": [
            {"hooks": [{"type": "command", "command": "notify.sh"}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "bell.sh"}]}]
    },
    "statusLine": {"type": "command", "command": "line.sh"}
}
"""


@pytest.fixture(autouse=True)
def scratch_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home, a data dir (where the install keeps the original bytes) and no CLI on PATH."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


def write(path: Path, data: bytes, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)
    return path


def hooks_of(path: Path) -> dict[str, Any]:
    hooks: dict[str, Any] = json.loads(path.read_bytes())["hooks"]
    return hooks


def ours(cli: str, event: str) -> dict[str, Any]:
    timeout = {"PermissionRequest": PERMISSION_TIMEOUT, "SessionEnd": SESSION_END_TIMEOUT}.get(
        event, EVENT_TIMEOUT
    )
    assert SESSION_END_TIMEOUT <= 3  # Codex's most for SessionEnd
    return {"hooks": [{"type": "command", "command": COMMAND[cli], "timeout": timeout}]}


class TestWhere:
    def test_user_files_honour_the_cli_homes(
        self, scratch_home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        assert user_target("claude-code").path == scratch_home / ".claude" / "settings.json"
        assert user_target("codex").path == scratch_home / ".codex" / "hooks.json"
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/x/claude config")
        monkeypatch.setenv("CODEX_HOME", "/y/codex")
        assert user_target("claude-code").path == Path("/x/claude config/settings.json")
        assert user_target("codex").path == Path("/y/codex/hooks.json")

    def test_project_files_are_the_local_ones(self, tmp_path: Path) -> None:
        assert project_target("claude-code", tmp_path).path == tmp_path / ".claude" / "settings.local.json"
        assert project_target("codex", tmp_path).path == tmp_path / ".codex" / "hooks.json"


class TestInstall:
    def test_the_users_hooks_stay_as_they_were_and_ours_come_after(self, scratch_home: Path) -> None:
        path = write(scratch_home / ".claude" / "settings.json", USER_SETTINGS)
        before = json.loads(USER_SETTINGS)
        outcome = install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert outcome.changed
        after = json.loads(path.read_bytes())
        assert list(after) == list(before)  # the keys, in their order
        assert {key: after[key] for key in after if key != "hooks"} == {
            key: before[key] for key in before if key != "hooks"
        }
        for event, groups in before["hooks"].items():
            assert after["hooks"][event][: len(groups)] == groups  # same groups, same positions
        assert list(after["hooks"])[:3] == ["PreToolUse", "PermissionRequest", "Notification"]
        for event in CLAUDE_EVENTS:
            assert after["hooks"][event][-1] == ours("claude-code", event)
        assert after["hooks"]["Notification"] == before["hooks"]["Notification"]

    def test_codex_positions_of_the_users_hooks_do_not_move(self, scratch_home: Path) -> None:
        theirs: dict[str, Any] = {
            "hooks": {
                "PermissionRequest": [
                    {
                        "matcher": "^Bash$",
                        "hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}],
                    },
                    {"hooks": [{"type": "command", "command": "c", "timeout": 9}]},
                ],
                "Stop": [{"hooks": [{"type": "command", "command": "d"}]}],
            }
        }
        path = write(scratch_home / ".codex" / "hooks.json", json.dumps(theirs).encode())
        install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        hooks = hooks_of(path)
        assert hooks["PermissionRequest"][:2] == theirs["hooks"]["PermissionRequest"]
        assert hooks["PermissionRequest"][2] == ours("codex", "PermissionRequest")
        assert hooks["Stop"] == [theirs["hooks"]["Stop"][0], ours("codex", "Stop")]
        assert set(json.loads(path.read_bytes())) == {"hooks"}  # Codex refuses any other top-level key

    def test_installing_twice_changes_nothing(self, scratch_home: Path) -> None:
        path = write(scratch_home / ".claude" / "settings.json", USER_SETTINGS)
        install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        once = path.read_bytes()
        inode = path.stat().st_ino
        outcome = install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert not outcome.changed
        assert path.read_bytes() == once
        assert path.stat().st_ino == inode  # not even written again

    def test_another_installs_entry_is_replaced_where_it_stands(self, scratch_home: Path) -> None:
        path = write(scratch_home / ".codex" / "hooks.json", b"{}")
        old = hook_command("codex", "/old/venv/bin/python")
        install(user_target("codex"), old, CODEX_EVENTS)
        hooks = hooks_of(path)
        hooks["Stop"].append({"hooks": [{"type": "command", "command": "mine"}]})
        path.write_text(json.dumps({"hooks": hooks}))
        outcome = install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        assert any("replaced" in note for note in outcome.notes)
        assert hooks_of(path)["Stop"] == [
            ours("codex", "Stop"),
            {"hooks": [{"type": "command", "command": "mine"}]},
        ]

    def test_only_the_events_the_version_has(self) -> None:
        assert events_for("codex", (0, 125, 0)) == (
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PermissionRequest",
            "Stop",
        )
        assert "SubagentStart" in events_for("codex", (0, 169, 0))
        assert "SessionEnd" in events_for("codex", (0, 169, 0))
        assert events_for("claude-code", (2, 1, 328)) == CLAUDE_EVENTS
        assert minimum_version("claude-code") == (2, 0, 45)
        assert minimum_version("codex") == (0, 122, 0)

    def test_a_new_file_is_private_and_a_users_file_keeps_its_mode(self, scratch_home: Path) -> None:
        install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        made = scratch_home / ".codex" / "hooks.json"
        assert stat.S_IMODE(made.stat().st_mode) == 0o600
        assert stat.S_IMODE(made.parent.stat().st_mode) == 0o700
        kept = write(scratch_home / ".claude" / "settings.json", USER_SETTINGS, 0o640)
        install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
        record = backup_path(kept)
        assert stat.S_IMODE(record.stat().st_mode) == 0o600
        assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
        assert not [name for name in os.listdir(kept.parent) if name.endswith(".tmp")]

    def test_the_project_target_never_touches_the_shared_files(self, tmp_path: Path) -> None:
        project = tmp_path / "proj"
        shared = write(project / ".claude" / "settings.json", USER_SETTINGS, 0o644)
        config = write(project / ".codex" / "config.toml", b'model = "o3"\n', 0o644)
        install(project_target("claude-code", project), COMMAND["claude-code"], CLAUDE_EVENTS)
        install(project_target("codex", project), COMMAND["codex"], CODEX_EVENTS)
        assert shared.read_bytes() == USER_SETTINGS
        assert config.read_bytes() == b'model = "o3"\n'
        assert "PermissionRequest" in hooks_of(project / ".claude" / "settings.local.json")
        assert "PermissionRequest" in hooks_of(project / ".codex" / "hooks.json")

    def test_a_config_dir_with_spaces_and_quotes(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        config = tmp_path / "my claude's $HOME; `x`"
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
        install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert (config / "settings.json").is_file()
        assert not (tmp_path / "x").exists()
        uninstall(user_target("claude-code"))
        assert not config.exists()  # the install made it, the uninstall took it away again


class TestUninstall:
    def test_restores_the_file_byte_for_byte(self, scratch_home: Path) -> None:
        odd = b'{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"caf\\u00e9"}]}]},"n":1.50}'
        for cli, path in (
            ("claude-code", scratch_home / ".claude" / "settings.json"),
            ("codex", scratch_home / ".codex" / "hooks.json"),
        ):
            write(path, odd, 0o644)
            target = user_target(cli)  # type: ignore[arg-type]
            install(target, COMMAND[cli], events_for(cli, None))  # type: ignore[arg-type]
            assert path.read_bytes() != odd
            outcome = uninstall(target)
            assert "restored" in outcome.summary
            assert path.read_bytes() == odd
            assert stat.S_IMODE(path.stat().st_mode) == 0o644
            assert not backup_path(path).exists()

    def test_a_file_the_install_made_goes_away(self, scratch_home: Path) -> None:
        install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        assert (scratch_home / ".codex" / "hooks.json").exists()
        uninstall(user_target("codex"))
        assert not (scratch_home / ".codex").exists()

    def test_what_the_user_changed_since_stays(self, scratch_home: Path) -> None:
        path = write(scratch_home / ".claude" / "settings.json", USER_SETTINGS)
        install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        changed = json.loads(path.read_bytes())
        changed["model"] = "sonnet"
        changed["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "after.sh"}]})
        path.write_text(json.dumps(changed, indent=4))
        uninstall(user_target("claude-code"))
        after = json.loads(path.read_bytes())
        expected = json.loads(USER_SETTINGS)
        expected["model"] = "sonnet"
        expected["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "after.sh"}]}]
        assert after == expected

    def test_codex_says_when_the_users_later_hooks_move_up(self, scratch_home: Path) -> None:
        path = write(scratch_home / ".codex" / "hooks.json", b"{}")
        install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        hooks = hooks_of(path)
        hooks["Stop"].append({"hooks": [{"type": "command", "command": "later"}]})
        path.write_text(json.dumps({"hooks": hooks}))
        outcome = uninstall(user_target("codex"))
        assert any("Stop" in note and "trust" in note for note in outcome.notes)
        assert hooks_of(path) == {"Stop": [{"hooks": [{"type": "command", "command": "later"}]}]}

    def test_nothing_of_ours_is_no_change(self, scratch_home: Path) -> None:
        path = write(scratch_home / ".claude" / "settings.json", USER_SETTINGS)
        outcome = uninstall(user_target("claude-code"))
        assert not outcome.changed
        assert path.read_bytes() == USER_SETTINGS
        assert not uninstall(user_target("codex")).changed


LAYOUTS = st.sampled_from([None, 0, 1, 2, 4, "\t"])
NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
HANDLER = st.fixed_dictionaries(
    {"type": st.just("command"), "command": NAMES},
    optional={"timeout": st.integers(1, 600), "statusMessage": NAMES},
)
GROUP = st.fixed_dictionaries({"hooks": st.lists(HANDLER, max_size=3)}, optional={"matcher": NAMES})
EVENT = st.sampled_from(
    ["PreToolUse", "PermissionRequest", "Stop", "SessionStart", "Notification", "PostToolUse"]
)
HOOKS = st.dictionaries(EVENT, st.lists(GROUP, max_size=3), max_size=4)
OTHER = st.dictionaries(
    st.sampled_from(["model", "env", "permissions", "x"]),
    st.recursive(
        st.none() | st.booleans() | st.integers() | NAMES,
        lambda inner: st.lists(inner, max_size=3),
        max_leaves=5,
    ),
    max_size=3,
)


class TestProperties:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        other=OTHER,
        hooks=st.none() | HOOKS,
        indent=LAYOUTS,
        newline=st.booleans(),
        ascii=st.booleans(),
        cli=st.sampled_from(["claude-code", "codex"]),
    )
    def test_install_keeps_theirs_and_uninstall_restores_every_byte(
        self,
        scratch_home: Path,
        other: dict[str, Any],
        hooks: dict[str, Any] | None,
        indent: int | str | None,
        newline: bool,
        ascii: bool,
        cli: str,
    ) -> None:
        document = dict(other)
        if hooks is not None:
            document["hooks"] = hooks
        data = (json.dumps(document, indent=indent, ensure_ascii=ascii) + ("\n" if newline else "")).encode()
        target = user_target(cli)  # type: ignore[arg-type]
        write(target.path, data)
        install(target, COMMAND[cli], events_for(cli, None))  # type: ignore[arg-type]
        after = json.loads(target.path.read_bytes())
        for event, groups in (hooks or {}).items():
            assert after["hooks"][event][: len(groups)] == groups
        assert {key: value for key, value in after.items() if key != "hooks"} == other
        assert not install(target, COMMAND[cli], events_for(cli, None)).changed  # type: ignore[arg-type]
        uninstall(target)
        assert target.path.read_bytes() == data

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(hooks=HOOKS, added=GROUP, event=EVENT, cli=st.sampled_from(["claude-code", "codex"]))
    def test_what_the_user_adds_after_the_install_outlives_the_uninstall(
        self, scratch_home: Path, hooks: dict[str, Any], added: dict[str, Any], event: str, cli: str
    ) -> None:
        target = user_target(cli)  # type: ignore[arg-type]
        write(target.path, json.dumps({"hooks": hooks}).encode())
        install(target, COMMAND[cli], events_for(cli, None))  # type: ignore[arg-type]
        installed = json.loads(target.path.read_bytes())
        installed["hooks"].setdefault(event, []).append(added)
        target.path.write_text(json.dumps(installed))
        uninstall(target)
        expected = {event: list(groups) for event, groups in hooks.items()}
        expected.setdefault(event, []).append(added)
        assert hooks_of(target.path) == expected


class TestRefusals:
    def test_a_file_changed_while_it_is_written_is_left_as_changed(
        self, scratch_home: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from agent_tui.terminal import install as installer

        path = write(scratch_home / ".claude" / "settings.json", USER_SETTINGS)
        reads = installer._read
        calls = []

        def read_then_the_cli_writes(where: Path) -> tuple[bytes, int] | None:
            calls.append(where)
            if len(calls) == 2:  # between the install's read and its rename, Claude Code saves
                where.write_bytes(b'{"model": "sonnet"}')
            return reads(where)

        monkeypatch.setattr(installer, "_read", read_then_the_cli_writes)
        with pytest.raises(InstallError, match="changed while agent-tui was writing it; nothing was changed"):
            install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert path.read_bytes() == b'{"model": "sonnet"}'
        assert not [name for name in os.listdir(path.parent) if name != "settings.json"]

    def test_bad_json_names_the_line_and_nothing_is_written(self, scratch_home: Path) -> None:
        bad = b'{\n  "hooks": {\n    "Stop": [,]\n  }\n}\n'
        path = write(scratch_home / ".claude" / "settings.json", bad)
        with pytest.raises(InstallError, match=rf"^{path}:3: Expecting value"):
            install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert path.read_bytes() == bad
        assert not backup_path(path).exists()

    @pytest.mark.parametrize(
        "data, words",
        [
            (b'{"hooks": {}, "hooks": {}}', "twice"),
            (b"[1, 2]", "does not hold a JSON object"),
            (b'{"hooks": []}', '"hooks" is not an object'),
            (b'{"hooks": {"Stop": {}}}', "are not a list"),
            (b'{"a": "\xff"}', ":1: not UTF-8"),
        ],
    )
    def test_files_it_cannot_rewrite_faithfully(self, scratch_home: Path, data: bytes, words: str) -> None:
        path = write(scratch_home / ".codex" / "hooks.json", data)
        with pytest.raises(InstallError, match=words):
            install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        assert path.read_bytes() == data

    def test_a_link_is_refused_not_followed(self, scratch_home: Path) -> None:
        real = write(scratch_home / "dotfiles" / "settings.json", b"{}")
        (scratch_home / ".claude").mkdir()
        (scratch_home / ".claude" / "settings.json").symlink_to(real)
        with pytest.raises(InstallError, match="is a symbolic link"):
            install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        with pytest.raises(InstallError, match="is a symbolic link"):
            uninstall(user_target("claude-code"))
        assert real.read_bytes() == b"{}"

    def test_a_hostile_repository_cannot_point_us_at_the_users_files(
        self, scratch_home: Path, tmp_path: Path
    ) -> None:
        bashrc = write(scratch_home / ".bashrc", b"# mine\n", 0o644)
        repo = tmp_path / "repo"
        (repo / ".claude").mkdir(parents=True)
        (repo / ".claude" / "settings.local.json").symlink_to(bashrc)
        with pytest.raises(InstallError, match=r"settings\.local\.json is a symbolic link"):
            install(project_target("claude-code", repo), COMMAND["claude-code"], CLAUDE_EVENTS)
        other = tmp_path / "other-repo"
        (other / ".codex").mkdir(parents=True)
        (other / ".codex" / "hooks.json").symlink_to(bashrc)
        with pytest.raises(InstallError, match="is a symbolic link"):
            install(project_target("codex", other), COMMAND["codex"], CODEX_EVENTS)
        linked = tmp_path / "linked-repo"
        linked.mkdir()
        (linked / ".claude").symlink_to(scratch_home)
        with pytest.raises(InstallError, match=r"\.claude is a symbolic link"):
            install(project_target("claude-code", linked), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert bashrc.read_bytes() == b"# mine\n"
        assert sorted(os.listdir(scratch_home)) == [".bashrc"]

    def test_another_users_file_is_refused(self, scratch_home: Path) -> None:
        path = write(scratch_home / ".claude" / "settings.json", b"{}", 0o644)
        os.chown(path, 54321, 54321)  # the tests run as root: a file of another uid
        with pytest.raises(InstallError, match="belongs to another user"):
            install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        os.chown(path, os.geteuid(), os.getegid())
        os.chown(path.parent, 54321, 54321)
        with pytest.raises(InstallError, match=r"\.claude belongs to another user"):
            install(user_target("claude-code"), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert path.read_bytes() == b"{}"

    @pytest.mark.parametrize("mode", [0o664, 0o646, 0o666])
    def test_a_file_others_can_write_is_refused(self, scratch_home: Path, mode: int) -> None:
        path = write(scratch_home / ".codex" / "hooks.json", b"{}", mode)
        with pytest.raises(InstallError, match=f"can be written by others \\(mode 0{mode:o}\\)"):
            install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        assert path.read_bytes() == b"{}"

    def test_a_folder_anyone_can_write_is_refused(self, scratch_home: Path) -> None:
        folder = scratch_home / ".codex"
        folder.mkdir(mode=0o777)
        folder.chmod(0o777)
        with pytest.raises(InstallError, match="can be written by others"):
            install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        assert os.listdir(folder) == []

    def test_a_project_folder_others_can_write_is_refused(self, tmp_path: Path) -> None:
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o777)  # another user could swap its .claude for a link between check and write
        with pytest.raises(InstallError, match=r"shared can be written by others \(mode 0777\)"):
            install(project_target("claude-code", shared), COMMAND["claude-code"], CLAUDE_EVENTS)
        assert os.listdir(shared) == []
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o755)
        os.chown(theirs, 54321, 54321)  # another user's project: its owner may rename what is in it
        with pytest.raises(InstallError, match="theirs can be written by others"):
            install(project_target("codex", theirs), COMMAND["codex"], CODEX_EVENTS)

    def test_a_huge_file_is_not_read(self, scratch_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from agent_tui.terminal import install as installer

        monkeypatch.setattr(installer, "MAX_FILE", 1000)
        path = write(scratch_home / ".codex" / "hooks.json", b'{"hooks": {}, "x": "' + b"a" * 1000 + b'"}')
        with pytest.raises(InstallError, match="is larger than"):
            install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)
        assert path.stat().st_size > 1000

    def test_a_fifo_is_not_waited_on(self, scratch_home: Path) -> None:
        (scratch_home / ".codex").mkdir()
        os.mkfifo(scratch_home / ".codex" / "hooks.json", 0o600)
        with pytest.raises(InstallError, match="is not a plain file"):
            install(user_target("codex"), COMMAND["codex"], CODEX_EVENTS)


class TestCommand:
    def fake_python(self, folder: Path) -> Path:
        """An 'interpreter' that writes down its arguments and its standard input."""
        folder.mkdir(parents=True)
        python = folder / "python3"
        python.write_text(
            '#!/bin/sh\nd=$(dirname "$0")\nprintf "%s\\n" "$@" > "$d/argv"\ncat > "$d/stdin"\necho ran\n'
        )
        python.chmod(0o755)
        return python

    @pytest.mark.parametrize("shell", ["/bin/sh", "/usr/bin/bash", "/usr/bin/dash"])
    def test_runs_the_hook_entry_whatever_the_paths_hold(self, tmp_path: Path, shell: str) -> None:
        folder = tmp_path / "an env $(touch pwned) & `id` ; | *"
        python = self.fake_python(folder)
        module = folder / "hook_client.py"
        module.write_text("")
        command = hook_command("codex", str(python), module)
        run = subprocess.run(
            [shell, "-c", command], input=b'{"x": 1}', capture_output=True, cwd=tmp_path, timeout=30
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout == b"ran\n"
        assert (folder / "argv").read_text().splitlines() == [
            "-I",
            "-c",
            "from agent_tui.terminal.hook_client import run; run()",
            "codex",
        ]
        assert (folder / "stdin").read_bytes() == b'{"x": 1}'
        assert not (tmp_path / "pwned").exists()

    def test_does_nothing_once_agent_tui_is_gone(self, tmp_path: Path) -> None:
        python = self.fake_python(tmp_path / "venv")
        command = hook_command("claude-code", str(python), tmp_path / "venv" / "gone.py")
        run = subprocess.run(["/bin/sh", "-c", command], input=b"{}", capture_output=True, timeout=30)
        assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")
        assert not (tmp_path / "venv" / "argv").exists()
        python.unlink()
        (tmp_path / "venv" / "gone.py").write_text("")
        run = subprocess.run(["/bin/sh", "-c", command], input=b"{}", capture_output=True, timeout=30)
        assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")

    def test_a_path_that_cannot_be_quoted_safely_is_refused(self) -> None:
        for path in ("/a'b/python", "/a\\b/python", "/a\nb/python"):
            with pytest.raises(InstallError, match="cannot be put in a hook command"):
                hook_command("codex", path)

    def test_the_real_install_names_this_interpreter_and_module(self) -> None:
        command = hook_command("claude-code")
        assert "agent_tui/terminal/hook_client.py" in command
        assert '-I -c "from agent_tui.terminal.hook_client import run; run()" claude-code' in command
        assert is_our_handler({"type": "command", "command": command}, "claude-code")
        assert not is_our_handler({"type": "command", "command": command}, "codex")


class TestVersions:
    def npm_cli(self, root: Path, cli: str, version: str) -> Path:
        """A CLI as `npm install -g` lays it out: a bin link to a script inside its package."""
        package = root / "lib" / "node_modules" / cli_versions.PACKAGES[cli]
        (package / "bin").mkdir(parents=True)
        (package / "package.json").write_text(
            json.dumps({"name": cli_versions.PACKAGES[cli], "version": version})
        )
        script = package / "bin" / "cli.js"
        script.write_text("#!/usr/bin/env node\n")
        script.chmod(0o755)
        (root / "bin").mkdir(exist_ok=True)
        link = root / "bin" / cli_versions.COMMANDS[cli]
        link.symlink_to(script)
        return root / "bin"

    def test_reads_the_version_from_the_npm_package(self, tmp_path: Path) -> None:
        bin_dir = self.npm_cli(tmp_path, "codex", "0.169.0")
        found = find_cli("codex", str(bin_dir))
        assert found.version == (0, 169, 0)
        assert found.command == bin_dir / "codex"
        assert find_cli("claude-code", str(bin_dir)).command is None

    def test_claude_codes_own_installer(self, tmp_path: Path) -> None:
        versions = tmp_path / "share" / "claude" / "versions"
        versions.mkdir(parents=True)
        binary = versions / "2.1.328"
        binary.write_text("")
        binary.chmod(0o755)
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "claude").symlink_to(binary)
        assert find_cli("claude-code", str(tmp_path / "bin")).version == (2, 1, 328)

    def test_the_platform_package_holding_the_native_binary(self, tmp_path: Path) -> None:
        package = tmp_path / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64"
        package.mkdir(parents=True)
        (package / "package.json").write_text(
            '{"name": "@anthropic-ai/claude-code-linux-x64", "version": "2.1.332"}'
        )
        (package / "claude").write_text("")
        (package / "claude").chmod(0o755)
        assert find_cli("claude-code", str(package)).version == (2, 1, 332)
        (package / "package.json").write_text(
            '{"name": "@anthropic-ai/claude-code-router", "version": "9.0.0"}'
        )
        assert find_cli("claude-code", str(package)).version is None

    def test_never_the_current_directory(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        planted = self.npm_cli(tmp_path / "repo", "claude-code", "9.9.9")
        monkeypatch.chdir(planted)
        for search in ("", ".", os.pathsep, f".{os.pathsep}", "bin", f"{os.pathsep}/nonexistent"):
            assert find_cli("claude-code", search).command is None

    def test_a_package_that_is_not_the_clis_says_nothing(self, tmp_path: Path) -> None:
        bin_dir = self.npm_cli(tmp_path, "codex", "0.169.0")
        manifest = tmp_path / "lib" / "node_modules" / "@openai" / "codex" / "package.json"
        manifest.write_text(json.dumps({"name": "evil", "version": "0.200.0"}))
        assert find_cli("codex", str(bin_dir)).version is None
        manifest.write_text("not json")
        assert find_cli("codex", str(bin_dir)).version is None
        manifest.unlink()
        os.mkfifo(manifest)
        assert find_cli("codex", str(bin_dir)).version is None  # a FIFO: not waited on

    def test_versions_with_suffixes(self) -> None:
        assert cli_versions.parse_version("0.169.0-alpha.2") == (0, 169, 0)
        assert cli_versions.parse_version("v2.1.328") == (2, 1, 328)
        assert cli_versions.parse_version("latest") is None


class TestState:
    def test_says_what_is_installed(self, scratch_home: Path) -> None:
        target = user_target("codex")
        assert installed_state(target, COMMAND["codex"], CODEX_EVENTS).state == "missing"
        install(target, COMMAND["codex"], CODEX_EVENTS[:3])
        partly = installed_state(target, COMMAND["codex"], CODEX_EVENTS)
        assert partly.state == "partly"
        assert "PermissionRequest" in partly.words()
        install(target, COMMAND["codex"], CODEX_EVENTS)
        assert installed_state(target, COMMAND["codex"], CODEX_EVENTS).state == "installed"
        assert installed_state(target, hook_command("codex", "/else/python"), CODEX_EVENTS).state == "other"
        target.path.write_text("{")
        state = installed_state(target, COMMAND["codex"], CODEX_EVENTS)
        assert state.state == "unreadable"
        assert f"{target.path}:1:" in state.words()

    def test_a_target_of_another_cli_is_not_ours(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "hooks.json", json.dumps({"hooks": {"Stop": [ours("claude-code", "Stop")]}}).encode()
        )
        target = Target("codex", "user", path)
        assert installed_state(target, COMMAND["codex"], ("Stop",)).state == "missing"
        assert not uninstall(target).changed
