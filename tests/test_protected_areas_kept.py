"""The protected areas of a session directory are kept between calls (`protected_paths._areas`)
only while nothing they were read from changes: each attack below changes the disk between two
calls, with the clock an hour ahead so the first call's areas are kept and only their re-check
can see the change (each test first proves the areas were kept)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_tui.engine import protected_paths
from agent_tui.engine.protected_paths import protected_change
from agent_tui.safety import resolution

LONG_AGO = 1_000_000_000 * 1_000_000_000


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(resolution, "_clock", lambda: time.time_ns() + 3_600 * 1_000_000_000)
    (tmp_path / "work").mkdir()
    (tmp_path / "elsewhere" / "gitdir" / "hooks").mkdir(parents=True)
    (tmp_path / "other" / "gitdir" / "hooks").mkdir(parents=True)
    (tmp_path / "rules").mkdir()
    (tmp_path / "plain").mkdir()
    return tmp_path


def backdate(*directories: Path) -> None:
    for directory in directories:
        os.utime(directory, ns=(LONG_AGO, LONG_AGO))


def kind(path: Path | str, cwd: Path, extra: tuple[Path, ...] = ()) -> str | None:
    change = protected_change("write_file", {"path": str(path)}, "write", cwd, extra_roots=extra)
    return change.kind if change is not None else None


def kept(cwd: Path, extra: tuple[Path, ...] = ()) -> bool:
    """Whether the areas of `cwd` are kept now (the next call uses them if they still hold)."""
    entry = protected_paths._kept.get((cwd, extra))
    return entry is not None and entry[1].valid()


def test_a_git_file_made_between_two_calls_protects_where_it_points(place: Path) -> None:
    work, hook = place / "work", place / "elsewhere" / "gitdir" / "hooks" / "pre-commit"
    backdate(work, place)
    assert kind(hook, work) is None
    assert kept(work)
    (work / ".git").write_text(f"gitdir: {place / 'elsewhere' / 'gitdir'}\n")
    assert kind(hook, work) == "repository"


def test_a_git_file_rewritten_in_place_protects_its_new_target(place: Path) -> None:
    work = place / "work"
    (work / ".git").write_text(f"gitdir: {place / 'elsewhere' / 'gitdir'}\n")
    os.utime(work / ".git", ns=(LONG_AGO, LONG_AGO))
    backdate(work, place)
    other = place / "other" / "gitdir" / "hooks" / "pre-commit"
    assert kind(other, work) is None
    assert kept(work)
    with open(work / ".git", "r+") as file:  # the same inode, the directory untouched
        file.write(f"gitdir: {place / 'other' / 'gitdir'}\n")
        file.truncate()
    assert kind(other, work) == "repository"
    assert kind(place / "elsewhere" / "gitdir" / "hooks" / "x", work) is None


def test_the_gitdir_link_swapped_to_another_directory_is_seen(place: Path) -> None:
    """The `.git` file names a link; the link, not the file, changes."""
    work = place / "work"
    (place / "via").symlink_to(place / "elsewhere" / "gitdir")
    (work / ".git").write_text(f"gitdir: {place / 'via'}\n")
    os.utime(work / ".git", ns=(LONG_AGO, LONG_AGO))
    backdate(work, place)
    other = place / "other" / "gitdir" / "hooks" / "x"
    assert kind(other, work) is None
    assert kept(work)
    (place / "swap").symlink_to(place / "other" / "gitdir")
    os.replace(place / "swap", place / "via")
    assert kind(other, work) == "repository"


def test_an_agent_tui_link_made_between_two_calls_is_seen(place: Path) -> None:
    """A repository whose `.agent-tui` becomes a link to a plain directory: writing there is
    changing agent-tui's permissions."""
    work = place / "work"
    (work / ".git").mkdir()
    backdate(work, place)
    target = place / "plain" / "permissions.toml"
    assert kind(target, work) is None
    assert kept(work)
    (work / ".agent-tui").symlink_to(place / "plain")
    assert kind(target, work) == "permissions"


def test_a_rules_directory_link_swapped_is_seen(place: Path) -> None:
    work, rules = place / "work", place / "rules-link"
    rules.symlink_to(place / "rules")
    backdate(work, place)
    extra = (rules,)
    assert kind(place / "rules" / "x.toml", work, extra) == "permissions"
    assert kind(place / "plain" / "x.toml", work, extra) is None
    assert kept(work, extra)
    (place / "swap").symlink_to(place / "plain")
    os.replace(place / "swap", rules)
    assert kind(place / "plain" / "x.toml", work, extra) == "permissions"
    assert kind(place / "rules" / "x.toml", work, extra) is None


def test_a_rules_directory_named_through_dot_dot_after_a_link(place: Path) -> None:
    """`lnk/../rules` is the `rules` beside where `lnk` leads, not beside `lnk`: swapping the
    link moves it."""
    work = place / "work"
    (place / "a" / "deep").mkdir(parents=True)
    (place / "a" / "rules").mkdir()
    (place / "b" / "deep").mkdir(parents=True)
    (place / "b" / "rules").mkdir()
    (place / "lnk").symlink_to(place / "a" / "deep")
    backdate(work, place)
    extra = (place / "lnk" / ".." / "rules",)
    assert kind(place / "a" / "rules" / "x", work, extra) == "permissions"
    assert kind(place / "rules" / "x", work, extra) is None  # not the lexical spelling
    assert kept(work, extra)
    (place / "swap").symlink_to(place / "b" / "deep")
    os.replace(place / "swap", place / "lnk")
    assert kind(place / "b" / "rules" / "x", work, extra) == "permissions"
    assert kind(place / "a" / "rules" / "x", work, extra) is None


def test_the_session_directory_swapped_under_its_name_is_seen(place: Path) -> None:
    """The session's directory is a link; the repository it leads to changes."""
    (place / "plain" / ".git").mkdir()
    cwd = place / "session"
    cwd.symlink_to(place / "work")
    backdate(place)
    assert kind(place / "plain" / ".git" / "config", cwd) == "repository"  # by its name
    assert kind(place / "plain" / "x", cwd) is None
    assert kept(cwd)
    (place / "swap").symlink_to(place / "plain")
    os.replace(place / "swap", cwd)
    (place / "plain" / ".agent-tui").symlink_to(place / "rules")
    assert kind(place / "rules" / "x", cwd) == "permissions"
