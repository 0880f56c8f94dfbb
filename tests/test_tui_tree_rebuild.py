"""The session tree's nodes, built again when sessions appear or a filter changes: a parent keeps
its toggle and whether the user folded it, a session without sub-agents has no toggle, and the
lines follow (a folded parent's sub-agents are not drawn)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support_workbench import recorded_app, settle

from agent_tui.tui.widgets.session_tree import SessionTree

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("home_in_tmp")]


def _drawn(tree: SessionTree) -> list[str]:
    """The sessions on the tree's lines, top to bottom."""
    found = []
    for y in range(tree.last_line + 1):
        node = tree.get_node_at_line(y)
        if node is not None and node.data in tree.visible_ids:
            found.append(node.data)
    return found


async def test_a_folded_parent_stays_folded_when_the_tree_is_built_again(tmp_path: Path) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tree = app.dashboard.session_tree
        state = app.dashboard.state
        parents = [sid for sid in tree.visible_ids if state.children(sid)]
        assert parents
        parent = parents[0]
        children = state.children(parent)
        nodes = tree._session_nodes
        assert nodes[parent].allow_expand and nodes[parent].is_expanded
        leaves = [sid for sid in tree.visible_ids if not state.children(sid)]
        assert leaves and not any(nodes[sid].allow_expand for sid in leaves)
        assert set(children) <= set(_drawn(tree))

        nodes[parent].collapse()
        await settle(pilot)
        assert not set(children) & set(_drawn(tree))

        others = [sid for sid in leaves if sid not in children]
        assert others
        kept = set(tree.visible_ids) - {others[0]}
        tree.show_state(state, shown=(kept, set()))  # another shape: the nodes are built again
        assert others[0] not in tree.visible_ids
        assert not tree._session_nodes[parent].is_expanded
        assert not set(children) & set(_drawn(tree))
        tree.show_state(state)
        await settle(pilot)
        assert tree._session_nodes[parent].allow_expand and not tree._session_nodes[parent].is_expanded
        assert not set(children) & set(_drawn(tree))
        assert set(_drawn(tree)) == set(tree.visible_ids) - set(children)
