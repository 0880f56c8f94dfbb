"""The session tree: root sessions and their sub-agents, one line each.

A line reads `● lead executing s3 ⚑1`: status glyph (coloured), name, phase badge, model-call
step, and how many approvals wait on that session. Labels are rebuilt only when what they show
changes, and the node structure only when sessions appear, vanish (scrubbing back) or move.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.style import Style
from rich.text import Text
from textual import on
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from agent_tui.reducer import DashboardState, SessionView
from agent_tui.tui.formatting import STATUS_GLYPH
from agent_tui.tui.messages import SessionSelected

_LabelKey = tuple[str, str, str | None, int | None, int]


class SessionTree(Tree[str]):
    """Sessions as a tree; the cursor picks the session the detail panel shows."""

    COMPONENT_CLASSES = {
        "session-tree--idle",
        "session-tree--running",
        "session-tree--completed",
        "session-tree--cancelled",
        "session-tree--failed",
        "session-tree--phase-start",
        "session-tree--phase-executing",
        "session-tree--phase-compress",
        "session-tree--phase-end",
        "session-tree--step",
        "session-tree--pending",
    }

    DEFAULT_CSS = """
    SessionTree {
        & > .session-tree--idle { color: $foreground-muted; }
        & > .session-tree--running { color: $accent; text-style: bold; }
        & > .session-tree--completed { color: $success; }
        & > .session-tree--cancelled { color: $warning; }
        & > .session-tree--failed { color: $error; }
        & > .session-tree--phase-start { color: $text-secondary; }
        & > .session-tree--phase-executing { color: $text-accent; }
        & > .session-tree--phase-compress { color: $text-warning; }
        & > .session-tree--phase-end { color: $foreground-muted; }
        & > .session-tree--step { color: $foreground-muted; }
        & > .session-tree--pending { color: $warning; text-style: bold; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("sessions", id=id)
        self.show_root = False
        self.guide_depth = 3
        self.selected_id: str | None = None
        self._wanted_id: str | None = None
        self._session_nodes: dict[str, TreeNode[str]] = {}
        self._shape: tuple[tuple[str, str | None], ...] = ()
        self._labels: dict[str, _LabelKey] = {}
        self._state: DashboardState | None = None
        self._restoring = False

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._on_theme_changed)

    def _on_theme_changed(self, _theme: object) -> None:
        self._labels.clear()
        if self._state is not None:
            self.call_after_refresh(self.show_state, self._state)

    # -- state → nodes -------------------------------------------------------------------------
    def show_state(self, state: DashboardState) -> None:
        """Bring nodes and labels in line with `state`; keep the user's selection if possible."""
        self._state = state
        order = list(_depth_first(state))
        shape = tuple((sid, state.sessions[sid].parent_session_id) for sid in order)
        if shape != self._shape:
            self._rebuild(state, order)
            self._shape = shape
        for session_id, node in self._session_nodes.items():
            session = state.sessions[session_id]
            key = _label_key(session)
            if self._labels.get(session_id) != key:
                self._labels[session_id] = key
                node.set_label(self._label(session))
        self._settle_selection(state, order)

    def _rebuild(self, state: DashboardState, order: list[str]) -> None:
        self._restoring = True
        collapsed = {
            sid for sid, node in self._session_nodes.items() if node.allow_expand and not node.is_expanded
        }
        self.clear()
        self._session_nodes = {}
        self._labels = {}
        for session_id in order:
            session = state.sessions[session_id]
            parent_id = session.parent_session_id
            parent = self._session_nodes.get(parent_id) if parent_id is not None else None
            under = parent if parent is not None else self.root
            label = self._label(session)
            if state.children(session_id):
                node = under.add(label, data=session_id, expand=session_id not in collapsed)
            else:
                node = under.add_leaf(label, data=session_id)
            self._session_nodes[session_id] = node
            self._labels[session_id] = _label_key(session)
        self.call_after_refresh(self._restore_cursor)

    def _restore_cursor(self) -> None:
        node = self._session_nodes.get(self.selected_id or "")
        if node is not None:
            self.move_cursor(node)
        # Highlight messages queued by the rebuild are handled before this callback.
        self.call_later(self._end_restore)

    def _end_restore(self) -> None:
        self._restoring = False

    def _settle_selection(self, state: DashboardState, order: list[str]) -> None:
        sessions = state.sessions
        if self._wanted_id in sessions:
            target: str | None = self._wanted_id
        elif self.selected_id in sessions:
            target = self.selected_id
        else:
            target = order[0] if order else None
        if target != self.selected_id:
            self.selected_id = target
            if target is not None:
                node = self._session_nodes.get(target)
                if node is not None and not self._restoring:
                    self.move_cursor(node)
                self.post_message(SessionSelected(target))

    def select_session(self, session_id: str) -> bool:
        """Move the cursor to a session (the command palette's "jump to"). False if unknown."""
        node = self._session_nodes.get(session_id)
        if node is None:
            return False
        parent = node.parent
        while parent is not None:
            parent.expand()
            parent = parent.parent
        self._wanted_id = session_id
        if session_id != self.selected_id:
            self.selected_id = session_id
            self.post_message(SessionSelected(session_id))
        self.call_after_refresh(self.move_cursor, node)
        return True

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()
        session_id = event.node.data
        if session_id is None or self._restoring or self._session_nodes.get(session_id) is not event.node:
            return
        self._wanted_id = session_id
        if session_id != self.selected_id:
            self.selected_id = session_id
            self.post_message(SessionSelected(session_id))

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()

    # -- labels --------------------------------------------------------------------------------
    def _label(self, session: SessionView) -> Text:
        style = self.get_component_rich_style
        status = session.status
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(STATUS_GLYPH[status], style(f"session-tree--{status}", partial=True))
        text.append(" ")
        text.append(session.display_name, Style(bold=status == "running"))
        if session.pending:
            text.append(f" ⚑{len(session.pending)}", style("session-tree--pending", partial=True))
        phase = session.phase
        if phase is not None:
            text.append(" ")
            text.append(phase, style(f"session-tree--phase-{phase}", partial=True))
            step = session.turns[-1].step
            if step is not None and phase != "end":
                text.append(f" s{step}", style("session-tree--step", partial=True))
        return text


def _label_key(session: SessionView) -> _LabelKey:
    step = session.turns[-1].step if session.turns else None
    return (session.display_name, session.status, session.phase, step, len(session.pending))


def _depth_first(state: DashboardState) -> Iterator[str]:
    stack = list(reversed(state.roots()))
    seen: set[str] = set()
    while stack:
        session_id = stack.pop()
        if session_id in seen or session_id not in state.sessions:
            continue
        seen.add(session_id)
        yield session_id
        stack.extend(reversed(state.children(session_id)))
