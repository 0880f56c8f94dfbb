"""The session tree: root sessions and their sub-agents, one line each.

A line reads `● lead ⚑ 42s executing 1m12s $0.42 (tree $1.87) ▲ 82%`: status glyph (coloured),
name (`⎇` when it works in its own worktree), the approvals waiting on it (`⚑`, `⚑2` for two)
and how long the oldest has waited, phase badge, how long its current (or last) turn has taken,
what it spent and (when its sub-agents spent too) what its whole tree spent, and its tree's
budget mark when near or over its budget (see `spend_text`); once the turn has
ended, the message it ended with, if any (the turn's `end_message`: an agent's exit and stderr
tail, a provider's error), in the status's colour, cut to the line. With `group_by_day`, roots are listed
newest first under a line per day (with what the trees under it spent); with `grouping` (an attached dashboard's hosts), under the
lines it gives, and `marks` adds a word after a session (its host is unreachable). A filter (`shown`) keeps the matching sessions and, dimmed,
their ancestors. Labels are rebuilt only when what they show changes, and the node structure
only when sessions appear, vanish (scrubbing back), move, or the filter changes. A new label
repaints its own line alone (Textual's `set_label` repaints every line under the node: under a
host's line, whose total moves with every event, all its sessions'), and none at all when what
the line shows in its room is the same (a cost the line has no room for moved on).

Thousands of sessions cost what is on screen: a session's line is built when it is drawn (and at
each state for the lines in view), never for the whole tree; a line
scrolled away forgets its label and builds it again when it comes back. A line's width for
the tree's layout is the room it has (every line is cut to it), so nothing is built to measure it.
The nodes are appended and the tree invalidated once for all of them (Textual's `add` redoes its
layout work for each node). A paint looks the tree's style and room up once for all the lines it
draws (Textual's tree looks its style up at each line, walking the widget's ancestors).

A line too long for the tree is cut with `…` when it is drawn, its parts giving way in the order
`tree_line` sets out: the status, approvals, phase word and budget mark stay in view.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from agent_tui.events import visible
from agent_tui.reducer import DashboardState, SessionView, Spend, collector_paused
from agent_tui.tui.formatting import STATUS_GLYPH, tree_name
from agent_tui.tui.messages import SessionSelected
from agent_tui.tui.session_filter import group_roots_by_day
from agent_tui.tui.spend_text import TreeCost, budget_mark, cost_brief, spent, tree_cost
from agent_tui.tui.timing import elapsed_ms, format_duration, oldest_wait
from agent_tui.tui.tree_line import PHASE_SHORT, LinePiece, LinePieces, cut_text, fit_line

_LabelKey = tuple[object, ...]
_Shown = tuple[set[str], set[str]] | None
Grouping = Callable[[DashboardState, list[str]], list[tuple[str, list[str]]]]
"""Root sessions (in tree order) → `(line, roots under it)`, the lines in order."""
_GROUP = "\x00group:"  # node data prefix of a day line (never a session id)


def _fold_key(data: str) -> str:
    """A group line's name, without what it says after it (`finished · 2 hosts gone`): a line
    keeps its folding as its count or state changes."""
    return data.split(" · ", 1)[0]


LABELLED_LINES = 100
"""Before the tree is laid out (it has no height yet), the labels of this many lines from the top
are brought up to date at each state; once it has a height, those of the lines in view (a line
scrolled into view builds its label as it is drawn)."""


class SessionTree(Tree[str]):
    """Sessions as a tree; the cursor picks the session the detail panel shows."""

    _LOOKS = {
        "idle": "color: $foreground-muted;",
        "running": "color: $accent; text-style: bold;",
        "completed": "color: $success;",
        "cancelled": "color: $warning;",
        "failed": "color: $error;",
        "phase-start": "color: $text-secondary;",
        "phase-executing": "color: $text-accent;",
        "phase-compress": "color: $text-warning;",
        "phase-end": "color: $foreground-muted;",
        "step": "color: $foreground-muted;",
        "pending": "color: $warning; text-style: bold;",
        "time": "color: $foreground-muted;",
        "day": "color: $text-muted; text-style: bold;",
        "context": "color: $foreground-muted; text-style: dim;",
        "cost": "color: $text-secondary;",
        "budget-near": "color: $text-warning; text-style: bold;",
        "budget-over": "color: $text-error; text-style: bold;",
    }
    """Each component class (`session-tree--<name>`) and its default look."""
    COMPONENT_CLASSES = {f"session-tree--{name}" for name in _LOOKS}
    DEFAULT_CSS = (
        "SessionTree {\n"
        + "\n".join(f"& > .session-tree--{n} {{ {look} }}" for n, look in _LOOKS.items())
        + "\n}"
    )

    def __init__(self, *, id: str | None = None, group_by_day: bool = False) -> None:
        super().__init__("sessions", id=id)
        self.show_root = False
        self.guide_depth = 3
        self.group_by_day = group_by_day
        self.grouping: Grouping | None = None
        self.marks: Callable[[str], str | None] | None = None
        self.folded: Callable[[str], bool] | None = None
        """Whether a group line (by its words) starts folded; the user's unfolding is kept."""
        self._hidden: set[str] = set()  # sessions under a folded group line, when last laid out
        self.selected_id: str | None = None
        self._wanted_id: str | None = None
        self._session_nodes: dict[str, TreeNode[str]] = {}
        self._shape: tuple[object, ...] = ()
        self._labels: dict[str, _LabelKey] = {}
        self._pieces: dict[str, list[LinePiece]] = {}  # each label's parts (how they give way)
        self._drawn: dict[str, tuple[int, Text]] = {}  # node data → (room, what its line shows)
        self._group_nodes: dict[str, TreeNode[str]] = {}  # day (or host) lines by node data
        self._group_roots: dict[str, list[str]] = {}  # the roots under each of them
        self._state: DashboardState | None = None
        self._now_ms: int | None = None
        self._shown: _Shown = None
        self._dimmed: set[str] = set()  # a filter's dimmed ancestors
        self._restoring = False
        self._painting: tuple[Style, int] | None = None  # (style, width) while `render_lines` draws
        self._styles: dict[str, Style] = {}  # component styles, looked up once per theme
        self.partial_spend: set[str] = set()
        """Sessions whose spend counts part of their log so far (a replay's list before its
        scan): their figures, and their trees' and days', read `≥$0.42`."""
        self._build_room: tuple[int, int] | None = None  # (width, guide depth) while lines are built
        self._built_room: tuple[int, int] | None = None  # (width, guide depth) the lines were built with
        self.end_marks: dict[str, str] = {}
        """Session id → a mark shown after its line in the error colour (a replay's `✗ torn
        tail`), in place of its last turn's message."""
        """Session id → the message its last turn ended with (a live run keeps them)."""

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._on_theme_changed)

    def _on_theme_changed(self, _theme: object) -> None:
        self._styles.clear()
        self._labels.clear()
        self._drawn.clear()
        self._shape = ()
        if self._state is not None:
            self.call_after_refresh(self.show_state, self._state, now_ms=self._now_ms, shown=self._shown)

    @property
    def visible_ids(self) -> list[str]:
        """The sessions the tree shows, top to bottom (a filter's dimmed ancestors included)."""
        return list(self._session_nodes)

    # -- state → nodes -------------------------------------------------------------------------
    def show_state(self, state: DashboardState, *, now_ms: int | None = None, shown: _Shown = None) -> None:
        """Bring nodes and labels in line with `state`; keep the user's selection if possible.

        Args:
            state: what to show.
            now_ms: the time running turns and waiting approvals are measured to (None: no
                live durations).
            shown: `(matches, their ancestors)` of a filter, or None for every session.
        """
        self._state = state
        self._now_ms = now_ms
        self._shown = shown
        layout = self._layout(state, now_ms, shown)
        shape = tuple(layout)
        if shape != self._shape:
            self._rebuild(layout)
            self._shape = shape
        self._dimmed = shown[1] if shown is not None else set()
        self._relabel_in_view()
        for data, group_node in self._group_nodes.items():
            day_key = (data, self._group_cost(data))
            if self._labels.get(data) != day_key:
                self._labels[data] = day_key
                self._put_label(group_node, self._group_label(data))
        self._settle_selection(state, [sid for sid in self._session_nodes if sid not in self._hidden])

    def _relabel_in_view(self) -> None:
        """Bring the labels of the lines in view up to date; forget those of the others (see
        the module docstring)."""
        top = self.scroll_offset.y
        in_view: set[str] = set()
        for line in range(top, top + (self.size.height or LABELLED_LINES)):
            node = self.get_node_at_line(line)
            if node is None:
                break
            if node.data is not None and self._session_nodes.get(node.data) is node:
                in_view.add(node.data)
                self._relabel(node.data, node)
        for session_id in [sid for sid in self._labels if sid in self._session_nodes and sid not in in_view]:
            del self._labels[session_id]
            self._pieces.pop(session_id, None)
            self._drawn.pop(session_id, None)
            self._session_nodes[session_id].refresh()  # a line drawn earlier is drawn again

    def _relabel(self, session_id: str, node: TreeNode[str]) -> None:
        """Set a session's label if what it shows changed since it was set."""
        state = self._state
        if state is None:
            return
        session = state.sessions[session_id]
        dim = session_id in self._dimmed
        now_ms = self._now_ms
        key = (
            tree_name(session),
            session.status,
            session.phase,
            len(session.pending),
            oldest_wait(session, now_ms) if session.pending else "",
            _duration(session, now_ms),
            session.worktree_branch,
            dim,
            self._note(session),
            self._mark(session_id),
            _tree_spend(state, session),
            session.spend,
            session.budget_usd,
            session.budget_tokens,
            self._partial(state, session.session_id),
        )
        if self._labels.get(session_id) != key:
            self._labels[session_id] = key
            self._put_label(node, self._label(session, now_ms, dim))

    def _put_label(self, node: TreeNode[str], label: Text) -> None:
        """Give a line its new label, repainting that line alone and only when what it shows
        changed (see the module docstring)."""
        room = self._label_room(node)
        data = node.data or ""
        if room is None:
            self._drawn.pop(data, None)
        else:
            shown = self._in_room(node, label, room)
            if self._drawn.get(data) == (room, shown):
                node._label = label  # drawn the same: the line on screen stays as it is
                return
            self._drawn[data] = (room, shown)
        node._updates += 1
        node._label = label
        if self._tree_lines_cached is not None and node._line >= 0:
            self._refresh_line(node._line)  # else every line is drawn anew

    def _label_room(self, node: TreeNode[str]) -> int | None:
        """The cells a node's label has on its line (None: not laid out yet)."""
        width = self._room()[0]
        if not width:
            return None
        icon = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE) if node.allow_expand else ""
        return width - self._depth(node) * self.guide_depth - cell_len(icon)

    def _in_room(self, node: TreeNode[str], label: Text, room: int) -> Text:
        """What of `label` its line shows in `room` cells (as `render_label` draws it)."""
        if room <= 0 or label.cell_len <= room:
            return label
        data = node.data or ""
        pieces = self._pieces.get(data) if self._session_nodes.get(data) is node else None
        return fit_line(pieces, room) if pieces is not None else cut_text(label, room)

    def _group_cost(self, data: str) -> str | None:
        """What the trees under a day (or host) line spent, `$3.21`; None if nothing."""
        state = self._state
        if state is None:
            return None
        total = Spend()
        partial = False
        for root in self._group_roots.get(data, ()):
            if root in state.sessions:
                total = total.plus(_tree_spend(state, state.sessions[root]))
                partial = partial or self._partial(state, root)[1]
        return cost_brief(total, partial=partial) if spent(total) else None

    def _group_label(self, data: str) -> Text:
        label = Text(visible(data[len(_GROUP) :]), self._style("session-tree--day"))
        cost = self._group_cost(data)
        if cost is not None:
            label.append(f" · {cost}", self._style("session-tree--cost"))
        return label

    def _layout(
        self, state: DashboardState, now_ms: int | None, shown: _Shown
    ) -> list[tuple[str, str | None]]:
        """Depth-first `(node data, parent data)`: day lines (when grouping) and sessions."""
        allowed = None if shown is None else shown[0] | shown[1]
        roots = [sid for sid in state.roots() if allowed is None or sid in allowed]
        layout: list[tuple[str, str | None]] = []
        if self.grouping is not None or self.group_by_day:
            groups = (
                self.grouping(state, roots)
                if self.grouping is not None
                else group_roots_by_day(state, roots, now_ms)
            )
            self._group_roots = {}
            for label, day_roots in groups:
                group = _GROUP + label
                layout.append((group, None))
                self._group_roots[group] = day_roots
                for root in day_roots:
                    layout += _subtree(state, root, group, allowed)
        else:
            for root in roots:
                layout += _subtree(state, root, None, allowed)
        return layout

    def _rebuild(self, layout: list[tuple[str, str | None]]) -> None:
        """The nodes of `layout`, their labels left to be built when drawn."""
        self._restoring = True
        collapsed = {
            sid for sid, node in self._session_nodes.items() if node.allow_expand and not node.is_expanded
        }
        opened = {_fold_key(data): node.is_expanded for data, node in self._group_nodes.items()}
        self.clear()
        self._session_nodes = {}
        self._labels = {}
        self._drawn = {}
        self._group_nodes = groups = {}
        self._hidden = hidden = set()
        parents = {parent for _, parent in layout if parent is not None}
        for data, parent_data in layout:
            if data.startswith(_GROUP):
                folds = self.folded is not None and self.folded(data[len(_GROUP) :])
                expand = opened.get(_fold_key(data), not folds)
                groups[data] = self.root.add(self._group_label(data), data=data, expand=expand)
                if not expand:
                    hidden.add(data)
                continue
            under: TreeNode[str] = self.root
            if parent_data is not None:
                under = groups.get(parent_data) or self._session_nodes.get(parent_data) or self.root
                if parent_data in hidden:
                    hidden.add(data)
            self._session_nodes[data] = self._append(
                under, data, parent=data in parents, expand=data not in collapsed
            )
        self._invalidate()  # once, for every node added
        self.call_after_refresh(self._restore_cursor)

    def _append(self, under: TreeNode[str], data: str, *, parent: bool, expand: bool) -> TreeNode[str]:
        """A node for `data` (label left empty) appended under `under`, without the layout work
        `TreeNode.add` redoes for each node: `_rebuild` invalidates the tree once for all."""
        node = self._add_node(under, Text(), data)
        node._expanded = parent and expand
        node._allow_expand = parent
        under._children.append(node)
        under._updates += 1
        return node

    def _restore_cursor(self) -> None:
        node = self._session_nodes.get(self.selected_id or "")
        if node is not None:
            self.move_cursor(node)
        # Highlight messages queued by the rebuild are handled before this callback.
        self.call_later(self._end_restore)

    def _end_restore(self) -> None:
        self._restoring = False

    def _settle_selection(self, state: DashboardState, order: list[str]) -> None:
        if self._wanted_id in self._session_nodes:
            target: str | None = self._wanted_id
        elif self.selected_id in order:  # not when folded away: the first line shown instead
            target = self.selected_id
        else:
            target = order[0] if order else None
        if target is not None and self._select(target) and not self._restoring:
            self.move_cursor(self._session_nodes[target])
        elif target is None:
            self.selected_id = None

    def select_session(self, session_id: str) -> bool:
        """Move the cursor to a session (the command palette's "jump to"). False if not shown."""
        node = self._session_nodes.get(session_id)
        if node is None:
            return False
        parent = node.parent
        while parent is not None:
            parent.expand()
            parent = parent.parent
        self._wanted_id = session_id
        self._select(session_id)
        self.call_after_refresh(self.move_cursor, node)
        return True

    def _select(self, session_id: str) -> bool:
        """Make `session_id` the selected one, telling the screen; False if it already was."""
        if session_id == self.selected_id:
            return False
        self.selected_id = session_id
        self.post_message(SessionSelected(session_id))
        return True

    def want(self, session_id: str) -> None:
        """Select `session_id` as soon as a state shows it."""
        self._wanted_id = session_id

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()
        session_id = event.node.data
        if session_id is None or self._restoring or self._session_nodes.get(session_id) is not event.node:
            return
        self._wanted_id = session_id
        self._select(session_id)

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()

    # -- labels --------------------------------------------------------------------------------
    def _label(self, session: SessionView, now_ms: int | None, dim: bool) -> Text:
        style = self._style
        status = session.status
        line = LinePieces(style("session-tree--context") if dim else None)
        add = line.add
        add("fixed", STATUS_GLYPH[status], style(f"session-tree--{status}"))
        add("fixed", " ", "")
        add("name", visible(tree_name(session)), Style(bold=session.running))
        if session.worktree_branch:
            add("worktree", " ⎇", style("session-tree--time"))
        if session.pending:
            count = len(session.pending)
            add("fixed", " ⚑" if count == 1 else f" ⚑{count}", style("session-tree--pending"))
            add("wait", oldest_wait(session, now_ms), style("session-tree--pending"))
        phase = session.phase
        if phase is not None:
            add("phase", phase, style(f"session-tree--phase-{phase}"), PHASE_SHORT.get(phase), gap=True)
        duration = _duration(session, now_ms)
        if duration:
            add("time", f" {duration}", style("session-tree--time"))
        cost, budget = self._spend(session)
        if cost is not None:
            add("cost", f" {cost.full}", style("session-tree--cost"), f" {cost.short}")
        if budget is not None:
            kind = "over" if budget.endswith("over") else "near"
            add("budget", f" {budget}", style(f"session-tree--budget-{kind}"))
        mark = self._mark(session.session_id)
        if mark:
            add("fixed", f" {mark}", style("session-tree--pending"))
        note = self._note(session)
        if note:
            kind = "failed" if status == "failed" or session.session_id in self.end_marks else "time"
            add("note", visible(f" {note}"), style(f"session-tree--{kind}"))
        self._pieces[session.session_id] = line.pieces
        return Text.assemble(*(piece.text for piece in line.pieces), no_wrap=True, overflow="ellipsis")

    def _style(self, name: str, *, partial: bool = True) -> Style:
        """A component class's style (thousands of labels share a dozen: looked up once)."""
        found = self._styles.get(name)
        if found is None:
            found = self._styles[name] = self.get_component_rich_style(name, partial=partial)
        return found

    def process_label(self, label: str | Text) -> Text:
        """A label as the node keeps it (ours are built as one line: taken as they are)."""
        if isinstance(label, Text) and "\n" not in label.plain:
            return label
        return super().process_label(label)

    def get_label_width(self, node: TreeNode[str]) -> int:
        """The room the node's line has (its label is cut to it): nothing is built to measure.
        Before the tree is laid out, 0 (its lines are measured again once it has a size)."""
        width, guide = self._build_room or self._room()
        if not width:
            return 0
        room = width - self._depth(node) * guide
        return room if room > 0 else super().get_label_width(node)

    def _build(self) -> None:
        """Textual's line building, the tree's width and guide looked up once for all its lines."""
        self._build_room = self._built_room = self._room()
        try:
            # A line per session, thousands of them: the lines hold no cycles, and the
            # collector's passes as they pile up cost more than building them.
            with collector_paused():
                super()._build()
        finally:
            self._build_room = None

    def _room(self) -> tuple[int, int]:
        return (self.scrollable_content_region.width if self.is_mounted else 0, self.guide_depth)

    def notify_style_update(self) -> None:
        """A style change (focus, hover, a theme) redraws the lines; it lays every line out again
        only when the room the lines are cut to changed (Textual's tree does at each one, which
        costs a pass over thousands of sessions). So does a resize."""
        if self._tree_lines_cached is None or self._room() != self._built_room:
            super().notify_style_update()
            return
        super(Tree, self).notify_style_update()
        self._redraw_lines()

    def _on_resize(self, event: events.Resize) -> None:
        if self._tree_lines_cached is None or self._room() != self._built_room:
            super()._on_resize(event)
            return
        self._line_cache.grow(event.size.height)
        self._redraw_lines()

    def _redraw_lines(self) -> None:
        """Forget the drawn lines (not the laid out ones) and draw them again."""
        self._line_cache.clear()
        self._updates += 1
        self.refresh()

    def _depth(self, node: TreeNode[str]) -> int:
        """How many lines (days, sessions) the node is under."""
        depth = 0
        parent = node.parent
        while parent is not None and parent is not self.root:
            depth += 1
            parent = parent.parent
        return depth

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines in `crop`, the tree's style and room looked up once for all of them (Textual's
        tree walks the widget's ancestors for its style at each line, cached or not)."""
        self._painting = (self.rich_style, self.scrollable_content_region.width)
        try:
            return super().render_lines(crop)
        finally:
            self._painting = None

    def render_line(self, y: int) -> Strip:
        painting = self._painting
        if painting is None:
            return super().render_line(y)
        scroll_x, scroll_y = self.scroll_offset
        return self._render_line(y + scroll_y, scroll_x, scroll_x + self.size.width, painting[0])

    def render_label(self, node: TreeNode[str], base_style: Style, style: Style) -> Text:
        """The label, cut with `…` to the room its line has (see the module docstring)."""
        if node.data is not None and self._session_nodes.get(node.data) is node:
            self._relabel(node.data, node)
        text = super().render_label(node, base_style, style)
        width = self._painting[1] if self._painting is not None else self.scrollable_content_region.width
        room = width - self._depth(node) * self.guide_depth
        if room <= 0 or text.cell_len <= room:
            return text
        pieces = self._pieces.get(node.data or "")
        if pieces is None:
            return cut_text(text, room)
        prefix = text[: len(text) - len(node.label)]  # the expand/collapse icon
        drawn = self._drawn.get(node.data or "")
        if drawn is not None and drawn[0] == room - prefix.cell_len > 0:
            fitted = drawn[1].copy()  # fitted when the label was put
        else:
            fitted = fit_line(pieces, room - prefix.cell_len)
        fitted.stylize(style)
        return Text.assemble(prefix, fitted)

    def _spend(self, session: SessionView) -> tuple[TreeCost | None, str | None]:
        """The session's cost on its line and its tree's budget mark (see `spend_text`)."""
        state = self._state
        if state is None:
            return None, None
        tree = _tree_spend(state, session)
        own, whole = self._partial(state, session.session_id)
        cost = tree_cost(session.spend, tree, partial=own, tree_partial=whole)
        return cost, budget_mark(tree, session.budget_usd, session.budget_tokens)

    def _partial(self, state: DashboardState, session_id: str) -> tuple[bool, bool]:
        """Whether the session's own figure, and its tree's, count part of a log (`partial_spend`)."""
        partial = self.partial_spend
        if not partial:
            return False, False
        own = session_id in partial
        if own or not state.children(session_id):
            return own, own
        return False, any(sid in partial for sid in state.descendants(session_id))

    def _mark(self, session_id: str) -> str | None:
        return self.marks(session_id) if self.marks is not None else None

    def _note(self, session: SessionView) -> str | None:
        mark = self.end_marks.get(session.session_id)
        if mark is not None:
            return mark
        if session.running:
            return None
        note = session.turns[-1].end_message if session.turns else None
        # "gemini exited with status 1" on gemini's own line: the name is there already.
        return note.removeprefix(f"{session.display_name} ") if note else None


def _duration(session: SessionView, now_ms: int | None) -> str:
    if not session.turns:
        return ""
    elapsed = elapsed_ms(session.turns[-1], now_ms)
    return format_duration(elapsed) if elapsed is not None else ""


def _tree_spend(state: DashboardState, session: SessionView) -> Spend:
    """What the session's tree spent (its own spend when it has no sub-agents: no walk)."""
    if not state.children(session.session_id):
        return session.spend
    return state.tree_spend(session.session_id)


def _subtree(
    state: DashboardState, root: str, parent: str | None, allowed: set[str] | None
) -> list[tuple[str, str | None]]:
    """`root` and its shown descendants, depth first, as `(session id, parent data)`."""
    out: list[tuple[str, str | None]] = []
    stack: list[tuple[str, str | None]] = [(root, parent)]
    seen: set[str] = set()
    while stack:
        session_id, under = stack.pop()
        if session_id in seen or session_id not in state.sessions:
            continue
        seen.add(session_id)
        out.append((session_id, under))
        children = [c for c in state.children(session_id) if allowed is None or c in allowed]
        stack.extend((child, session_id) for child in reversed(children))
    return out
