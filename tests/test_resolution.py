"""Real paths kept while a few `stat`s say nothing they were read from changed
(`safety.resolution`): the same answers as `os.path.realpath`, and a link made, swapped or
removed between two look-ups is seen at the second."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_tui.safety import resolution
from agent_tui.safety.resolution import Resolution, cached_resolution

LONG_AGO = 1_000_000_000 * 1_000_000_000  # 2001, in nanoseconds


@pytest.fixture
def trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock an hour ahead: nothing made by the test counts as racily changed, so a
    resolution is kept and only its signature can say it is stale."""
    monkeypatch.setattr(resolution, "_clock", lambda: time.time_ns() + 3_600 * 1_000_000_000)


def backdate(*directories: Path) -> None:
    """Set the directories' modification time far back, so a change now moves it for sure."""
    for directory in directories:
        os.utime(directory, ns=(LONG_AGO, LONG_AGO))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "real" / "deep" / "file").write_text("x")
    (tmp_path / "other").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "relative").symlink_to("real/deep")
    (tmp_path / "chain").symlink_to("link")
    (tmp_path / "loop_a").symlink_to("loop_b")
    (tmp_path / "loop_b").symlink_to("loop_a")
    (tmp_path / "dangling").symlink_to("nowhere/at/all")
    return tmp_path


SPELLINGS = [
    "real/deep/file",
    "link/deep/file",
    "link/../other",  # `..` after a link climbs from where the link leads, not lexically
    "relative/file",
    "relative/../..",
    "chain/deep/./file",
    "loop_a/x",
    "dangling/more",
    "missing/../link",
    "real/deep/file/..",
    "",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_real_paths_are_what_realpath_says(tree: Path, spelling: str) -> None:
    path = os.path.join(str(tree), spelling)
    assert Resolution([path]).realpaths == (os.path.realpath(path),)


def test_a_name_no_file_can_have_resolves_to_itself_and_is_never_kept(tmp_path: Path) -> None:
    bad = f"{tmp_path}/a\x00b"
    first = cached_resolution([bad])
    assert first.realpaths == (bad,)
    assert not first.valid()
    assert cached_resolution([bad]) is not first


def test_an_unchanged_resolution_is_kept(tree: Path, trusted: None) -> None:
    paths = [str(tree / "link" / "deep"), str(tree / "chain")]
    first = cached_resolution(paths)
    assert first.valid()
    assert cached_resolution(paths) is first  # the cache is used: the tests below mean something


def test_a_link_swapped_between_two_look_ups_is_seen(tree: Path, trusted: None) -> None:
    path = str(tree / "link" / "deep")
    backdate(tree)
    assert cached_resolution([path]).realpaths == (str(tree / "real" / "deep"),)
    (tree / "other" / "deep").mkdir()
    (tree / "swap").symlink_to(tree / "other")
    os.replace(tree / "swap", tree / "link")  # atomically: the name never disappears
    assert cached_resolution([path]).realpaths == (str(tree / "other" / "deep"),)


def test_a_link_made_where_a_directory_was_is_seen(tree: Path, trusted: None) -> None:
    path = str(tree / "real" / "deep" / "file")
    backdate(tree / "real")
    assert cached_resolution([path]).realpaths == (path,)
    os.rename(tree / "real" / "deep", tree / "moved")
    (tree / "real" / "deep").symlink_to(tree / "moved")
    assert cached_resolution([path]).realpaths == (str(tree / "moved" / "file"),)


def test_a_swap_deep_inside_a_links_target_is_seen(tree: Path, trusted: None) -> None:
    """`chain` -> `link` -> `real`: the last hop's directory changes, not the spelled one's."""
    path = str(tree / "chain" / "deep")
    backdate(tree, tree / "real")
    assert cached_resolution([path]).realpaths == (str(tree / "real" / "deep"),)
    os.rename(tree / "real" / "deep", tree / "real" / "gone")
    (tree / "real" / "deep").symlink_to(tree / "other")
    assert cached_resolution([path]).realpaths == (str(tree / "other"),)


def test_a_watched_file_rewritten_in_place_is_seen(tree: Path, trusted: None) -> None:
    watched = tree / "real" / "deep" / "file"
    os.utime(watched, ns=(LONG_AGO, LONG_AGO))
    first = cached_resolution([str(tree)], [str(watched)])
    assert cached_resolution([str(tree)], [str(watched)]) is first
    watched.write_text("y")
    assert cached_resolution([str(tree)], [str(watched)]) is not first


def test_a_directory_changed_just_before_resolving_is_not_trusted(tree: Path) -> None:
    """With the real clock, the tree was made a moment ago: a change in the same clock tick
    could leave its times as they are, so the resolution is made again every time."""
    path = str(tree / "link" / "deep")
    first = cached_resolution([path])
    assert not first.valid()
    assert cached_resolution([path]) is not first


def test_a_check_answers_only_for_calls_begun_before_it(tree: Path, trusted: None) -> None:
    """A call that began after a swap never takes an earlier check's word for it."""
    backdate(tree)
    kept = Resolution([str(tree / "link" / "deep")])
    before = time.monotonic_ns()
    assert kept.valid(since=before)
    (tree / "swap").symlink_to(tree / "other")
    os.replace(tree / "swap", tree / "link")
    assert not kept.valid(since=time.monotonic_ns())
