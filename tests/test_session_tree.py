"""The session tree (`events/session_tree.py`) and the one label rule, and the layers that use them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.engine.session_info import SessionInfo
from agent_tui.events.session_tree import SessionTree, session_label
from agent_tui.reducer.views import SessionView
from agent_tui.runtime.session_dirs import StoredSession


def _tree(links: list[tuple[str, str | None]]) -> SessionTree:
    """A tree of `(session id, parent id or None)` pairs, children in the pairs' order."""
    tree = SessionTree()
    for session_id, parent in links:
        tree.link(session_id, parent)
    return tree


def test_children_keep_the_order_they_were_linked_in() -> None:
    tree = _tree([("a", None), ("b", "a"), ("c", "a"), ("d", "b")])
    assert tree.children("a") == ["b", "c"]
    assert tree.children("b") == ["d"]
    assert tree.children("d") == []
    assert tree.parent_of("d") == "b"
    assert tree.parent_of("a") is None


def test_linking_again_where_it_is_keeps_its_place_and_elsewhere_moves_it() -> None:
    tree = _tree([("b", "a"), ("c", "a")])
    tree.link("b", "a")
    assert tree.children("a") == ["b", "c"]
    tree.link("b", "c")
    assert tree.children("a") == ["c"]
    assert tree.children("c") == ["b"]
    tree.link("b", None)
    assert tree.parent_of("b") is None
    assert tree.children("c") == []


def test_children_linked_with_an_order_key_stay_sorted_by_it() -> None:
    tree = SessionTree()
    tree.link("late", "p", ("2026-01-03", "late"))
    tree.link("early", "p", ("2026-01-01", "early"))
    tree.link("middle", "p", ("2026-01-02", "middle"))
    assert tree.children("p") == ["early", "middle", "late"]
    tree.link("late", "p", ("2026-01-00", "late"))  # its key changed: it moves
    assert tree.children("p") == ["late", "early", "middle"]


def test_a_session_linked_under_itself_is_a_root() -> None:
    tree = _tree([("a", "a")])
    assert tree.parent_of("a") is None
    assert tree.children("a") == []
    assert tree.descendants("a") == []


def test_descendants_are_breadth_first_each_once_and_stop_at_a_cycle() -> None:
    tree = _tree([("b", "a"), ("c", "a"), ("d", "b"), ("e", "c"), ("a", "e")])
    assert tree.descendants("a") == ["b", "c", "d", "e"]
    assert tree.descendants("d") == []


def test_path_is_root_first_and_a_cycle_stops_it() -> None:
    tree = _tree([("b", "a"), ("c", "b")])
    assert tree.path("c", str.upper) == ("A", "B", "C")
    tree.link("a", "c")  # a corrupt log: a → c → b → a
    assert tree.path("c", str) == ("a", "b", "c")
    assert tree.path("unknown", str) == ("unknown",)


def test_roots_are_those_without_a_known_parent_in_the_given_order() -> None:
    tree = _tree([("b", "a"), ("x", "missing"), ("a", None)])
    assert tree.roots(["b", "x", "a"]) == ["x", "a"]
    assert tree.roots({"b": 1, "a": 2}) == ["a"]


def test_a_copy_is_independent() -> None:
    tree = _tree([("b", "a")])
    copy = tree.copy()
    copy.link("c", "a")
    copy.link("b", None)
    assert tree.children("a") == ["b"]
    assert copy.children("a") == ["c"]
    assert len(tree) == 1


@pytest.mark.parametrize(
    ("agent_name", "title", "expected"),
    [
        ("explorer", "Find it", "explorer"),
        (None, "Find it", "Find it"),
        (None, None, "sess_1"),
        ("", "", "sess_1"),
    ],
)
def test_every_layer_names_a_session_by_the_one_rule(
    agent_name: str | None, title: str | None, expected: str
) -> None:
    assert session_label(agent_name, title, "sess_1") == expected
    info = SessionInfo("sess_1", Path("."), "agent-tui", agent_name=agent_name, title=title)
    view = SessionView("sess_1", agent_name=agent_name, title=title)
    stored = StoredSession("sess_1", Path("x"), "", "", agent_name, title, None, None, None, "idle")
    assert info.label == view.display_name == stored.name == expected
