"""A tree line is repainted when what it shows changes, and only then: a host's line whose total
moves repaints itself, not the sessions under it; a change the line has no room to show repaints
nothing, yet shows once the line has the room.

Read as painted, from the fixture dashboard grouped under one host line (as an attached
dashboard groups its sessions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support_workbench import recorded_app, settle
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import Tree

from agent_tui.events import Event, payload_from
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.widgets.session_tree import SessionTree

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("home_in_tmp")]
HOST = "build-box-named-at-length"


def _under_one_host(state: DashboardState, roots: list[str]) -> list[tuple[str, list[str]]]:
    return [(HOST, roots)]


async def _grouped(pilot: Pilot) -> SessionTree:
    app = pilot.app
    assert isinstance(app, AgentTuiApp)
    tree = app.dashboard.session_tree
    tree.grouping = _under_one_host
    app.dashboard.show_state(app.dashboard.state)
    await settle(pilot)
    return tree


def _spend_more(app: AgentTuiApp, name: str, cost: float) -> None:
    """One more model call of session `name`, costing `cost`, shown."""
    screen = app.dashboard
    session = next(s for s in screen.state.sessions.values() if s.display_name == name)
    usage = {"step": 2, "promptTokens": 1_000, "completionTokens": 100, "costUsd": cost}
    sequence = session.last_sequence + 1
    event = Event(
        id=f"evt_x{sequence}",
        session_id=session.session_id,
        turn_id="turn_n1",
        sequence=sequence,
        ts="2026-11-30T14:20:01.000Z",
        type="model.usage",
        payload=payload_from("model.usage", usage),
    )
    apply_event(screen.state, event)
    screen.show_state(screen.state)


def _drawn_lines(tree: SessionTree) -> list[int]:
    """Watch which tree lines are built from their labels (not taken from the line cache)."""
    drawn: list[int] = []
    render_label = tree.render_label

    def watched(node: Any, base_style: Any, style: Any) -> Any:
        drawn.append(node.line)
        return render_label(node, base_style, style)

    tree.render_label = watched  # type: ignore[method-assign]
    return drawn


async def test_a_host_total_that_moves_repaints_its_line_not_the_sessions_under_it(tmp_path: Path) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        tree = await _grouped(pilot)
        host_line = tree.root.children[0]
        lint = next(n for n in tree._session_nodes.values() if "lint" in str(n.label))
        before = str(host_line.label)
        drawn = _drawn_lines(tree)
        _spend_more(app, "lint", 0.5)  # lint's own line and its host's total change
        await settle(pilot)
        assert str(host_line.label) != before
        assert sorted(set(drawn)) == sorted({host_line.line, lint.line}), drawn
        assert "$0.51" in tree.render_line(lint.line).text


async def test_a_change_the_line_has_no_room_for_repaints_nothing_and_shows_when_it_has(
    tmp_path: Path,
) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        tree = await _grouped(pilot)
        host_line = tree.root.children[0]
        _spend_more(app, "lint", 0.25)  # the first change once the tree is laid out (its scrollbar in)
        await settle(pilot)
        painted = tree.render_line(host_line.line).text.rstrip()
        assert painted.endswith("…") and "$" not in painted  # the host's total is cut away
        drawn = _drawn_lines(tree)
        _spend_more(app, "lint", 0.25)
        await settle(pilot)
        assert host_line.line not in drawn
        assert tree.render_line(host_line.line).text.rstrip() == painted
        await pilot.resize_terminal(240, 24)
        await settle(pilot)
        assert tree.render_line(host_line.line).text.rstrip().endswith(f"{HOST} · $0.98")


def _painted(tree: SessionTree, render_lines: Any) -> list[Strip]:
    """The tree's lines in view, drawn afresh by `render_lines`."""
    tree._line_cache.clear()
    tree._styles_cache.clear()
    return list(render_lines(tree, Region(0, 0, tree.size.width, tree.size.height)))


async def test_the_tree_paints_its_lines_as_textual_tree_does_line_by_line(tmp_path: Path) -> None:
    # The tree looks its style and room up once per paint: what it paints must be what Textual's
    # own per-line lookups paint, cut lines (the host's) and a scrolled tree included.
    app = recorded_app(tmp_path)
    async with app.run_test(size=(80, 10)) as pilot:
        tree = await _grouped(pilot)
        assert tree.max_scroll_y > 0  # the fixture's sessions overflow the short tree
        cut = False
        for scrolled in (0, 1):
            tree.scroll_to(y=scrolled, animate=False, immediate=True)
            await settle(pilot)
            assert tree.scroll_offset.y == scrolled
            ours = _painted(tree, SessionTree.render_lines)
            theirs = _painted(tree, Tree.render_lines)
            assert [s.text for s in ours] == [s.text for s in theirs]
            assert [list(s) for s in ours] == [list(s) for s in theirs]  # styles too
            cut = cut or any(s.text.rstrip().endswith("…") for s in ours)
        assert cut  # a line cut to its room was among them
