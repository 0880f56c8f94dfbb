"""Spend over time for the selected session's tree: one row of bars per agent that spent.

    Spend · fix-login's tree · 14:10–14:17
    fix-login ▁▁▁▂▂▂▂▅▅▅▅▅████ $0.31
    explorer      ▁▁▁▁▂▂▂▂▂▂▂▂ $0.05

Each row is what that agent had spent by then (so it only climbs), all rows on one scale (the
biggest spender's total is a full bar), the time from the tree's first turn that spent to the
end of its last (or "now") split into as many columns as fit. A turn's spend (a running turn's:
the sum of its model calls so far) is spread evenly over the turn's time, from its start to its
end or to "now". In dollars when anything in the tree had a price,
else in tokens ("price unknown"). The biggest `MAX_ROWS` spenders get a row; the rest are
counted on the title line.

`spend_rows` is the pure part (a `DashboardState` in, rows out); `SpendChart` draws them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from math import ceil
from typing import NamedTuple

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from agent_tui.events import counted
from agent_tui.reducer import DashboardState, SessionView, epoch_ms
from agent_tui.tui.marked import marked
from agent_tui.tui.session_filter import root_of
from agent_tui.tui.spend_text import tokens_text, usd_text
from agent_tui.tui.timing import format_clock

BARS = "▁▂▃▄▅▆▇█"
MAX_ROWS = 5
NAME_CELLS = 12
MUTED = "$text-muted"


class SpendRow(NamedTuple):
    """One agent's line: its name, what it had spent by the end of each column, its total."""

    session_id: str
    name: str
    columns: list[float]
    total: float


class SpendChartData(NamedTuple):
    rows: list[SpendRow]
    in_usd: bool
    first_ts: str
    last_ts: str
    left_out: int


def _spans(session: SessionView, now_ms: int | None, in_usd: bool) -> list[tuple[int, int, float]]:
    """`(from, to, amount)` of each of the session's turns that spent: from its start to its end
    (a running one's: to `now_ms`, or its start when there is no "now")."""
    spans = []
    for turn in session.turns:
        usage = turn.usage
        if usage is None:
            continue
        amount = usage.cost_usd if in_usd else float(usage.tokens)
        start = epoch_ms(turn.started_ts)
        if amount <= 0 or start is None:
            continue
        end = epoch_ms(turn.ended_ts) if turn.ended_ts is not None else now_ms
        spans.append((start, max(start, end if end is not None else start), amount))
    return spans


def _spent_by(spans: list[tuple[int, int, float]], moment: float) -> float:
    """What the turns had spent by `moment`, each turn's spend spread evenly over its time."""
    total = 0.0
    for start, end, amount in spans:
        if moment >= end:
            total += amount
        elif moment > start:
            total += amount * (moment - start) / (end - start)
    return total


def spend_rows(
    state: DashboardState, root_id: str, now_ms: int | None, columns: int
) -> SpendChartData | None:
    """The chart of `root_id`'s tree in `columns` columns; None when nothing in it spent."""
    family = [root_id, *state.descendants(root_id)]
    sessions = [state.sessions[sid] for sid in family if sid in state.sessions]
    if not sessions or columns < 1:
        return None
    in_usd = any(s.spend.cost_usd > 0 for s in sessions)
    series = {s.session_id: _spans(s, now_ms, in_usd) for s in sessions}
    spans = [span for found in series.values() for span in found]
    if not spans:
        return None
    first = min(start for start, _, _ in spans)
    last = max(end for _, end, _ in spans)
    span = max(last - first, 1)
    rows = []
    for session in sessions:
        found = series[session.session_id]
        if not found:
            continue
        values = [_spent_by(found, first + span * (column + 1) / columns) for column in range(columns)]
        rows.append(SpendRow(session.session_id, session.display_name, values, values[-1]))
    rows.sort(key=lambda row: -row.total)
    kept = rows[:MAX_ROWS]
    return SpendChartData(kept, in_usd, _ts_of(first), _ts_of(last), len(rows) - len(kept))


def _ts_of(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat()


def bars(values: list[float], top: float) -> str:
    """Values as bar glyphs on a scale where `top` is a full bar (nothing yet: a blank)."""
    if top <= 0:
        return " " * len(values)
    out = []
    for value in values:
        if value <= 0:
            out.append(" ")
        else:
            out.append(BARS[min(len(BARS), max(1, ceil(value / top * len(BARS)))) - 1])
    return "".join(out)


def chart_content(state: DashboardState, root_id: str, now_ms: int | None, width: int) -> Content | None:
    """The chart's lines for a panel `width` cells wide, or None when the tree spent nothing."""
    root = state.sessions.get(root_id)
    if root is None:
        return None
    total_cells = 9  # ` $1,234.5` at most, and the space before it
    columns = width - NAME_CELLS - 1 - total_cells
    data = spend_rows(state, root_id, now_ms, max(columns, 4))
    if data is None:
        return None
    top = max(row.total for row in data.rows)
    unit = "" if data.in_usd else " · tokens, price unknown"
    more = f" · {counted(data.left_out, 'more agent')}" if data.left_out else ""
    when = f"{format_clock(data.first_ts, now_ms)}–{format_clock(data.last_ts, now_ms)}"
    title = Content.assemble(
        ("Spend · ", "bold"),
        marked(f"{root.display_name}'s tree", "bold"),
        (f" · {when}{unit}{more}", MUTED),
    )
    lines = [title]
    for row in data.rows:
        name = row.name if len(row.name) <= NAME_CELLS else row.name[: NAME_CELLS - 1] + "…"
        amount = usd_text(row.total) if data.in_usd else tokens_text(int(row.total))
        lines.append(
            Content.assemble(
                marked(name.ljust(NAME_CELLS)),
                " ",
                (bars(row.columns, top), "$text-accent"),
                " ",
                (amount, "$text-secondary"),
            )
        )
    return Content("\n").join(lines)


class SpendChart(Static):
    """The chart of the selected session's tree (hidden when it spent nothing)."""

    DEFAULT_CSS = """
    SpendChart { height: auto; padding: 0 1; border-top: hkey $foreground 10%; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.wanted = True
        """Whether the user wants the chart (`$` toggles it)."""
        self._key: object = None
        self._last: tuple[DashboardState, str | None, int | None] | None = None

    def show(self, state: DashboardState, session_id: str | None, now_ms: int | None) -> None:
        """Chart the tree of `session_id`'s root (only when what it shows changed)."""
        self._last = (state, session_id, now_ms)
        root_id = root_of(state, session_id)
        # Hidden, it has no width of its own: it will have its panel's (less its padding).
        room = self.size.width if self.display and self.size.width else self._panel_width() - 2
        width = max(room, 20)
        tree = [root_id, *state.descendants(root_id)] if root_id is not None else []
        spends = tuple(state.sessions[sid].spend for sid in tree if sid in state.sessions)
        key = (root_id, spends, width, self.wanted, now_ms // 60_000 if now_ms is not None else None)
        if key == self._key:
            return
        self._key = key
        content = (
            chart_content(state, root_id, now_ms, width) if root_id is not None and self.wanted else None
        )
        self.display = content is not None
        if content is not None:
            self.update(content)

    def _panel_width(self) -> int:
        parent = self.parent
        return parent.size.width if isinstance(parent, Widget) else 0

    def on_resize(self) -> None:
        if self._last is not None:
            self.show(*self._last)
